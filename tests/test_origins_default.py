"""Where each graph node was made, in the order a learner works: forward pass first, then the view.

Importing ``tinygrad_like.widgets`` records each node's line of user code (``sites.request_lines``) until an
optimizer first steps: the stack walk per op (``sites.origin``) costs more than a training loop should pay
(benchmarks/RESULTS.md). After that, a view that shows lines asks for them again: a graph built meanwhile says
"re-run the cell to record lines", and the forward pass run again records them, even once that view is gone, until
the next optimizer step. The line found is the learner's own, in ``tests/learner_models.py`` for the four learner
models.
"""

from __future__ import annotations

import gc
import linecache
import os
import sys
import threading

import learner_models as lm
import pytest

import tinygrad_like as tl
from tinygrad_like import sites
from tinygrad_like.widgets import BackwardStepper, GraphView, graph_model
from tinygrad_like.widgets.graph_model import NO_LINE

MODELS_FILE = os.path.basename(lm.__file__)
THIS_FILE = os.path.basename(__file__)

# an op the learner wrote in their own forward -> text its line holds (the method they called)
WROTE = {"Transpose": "transpose", "Split": ".split(", "MaskedFill": "masked_fill", "Softmax": "softmax",
         "View": ("view", "flatten"), "Clone": "contiguous", "Add": "+"}


@pytest.fixture(autouse=True)
def _fresh():
    """Each test starts as a session does once the widgets are imported (lines requested, no view open)."""
    gc.collect()  # (views of earlier tests that are gone stop listening)
    sites.request_lines()
    yield
    sites.request_lines()


def _tip(model, node) -> str:
    return dict(map(tuple, graph_model.node_tip(model, node)))["created at"]


def _check_lines(model) -> int:
    """Every op's "created at" names a line of the learner's own code, and that line wrote the op."""
    checked = 0
    for n in model.ops:
        site = n.obj.origin.site
        assert site is not None and os.path.basename(site.filename) == MODELS_FILE, (n.label, site)
        assert _tip(model, n) == str(site) and site.label.startswith(f"{MODELS_FILE}:{site.lineno}")
        text = linecache.getline(site.filename, site.lineno)
        assert text.strip(), (n.label, site)
        scope = n.obj.origin.scope
        if scope and type(scope[-1]).__module__ != lm.__name__:  # inside a library module: the line calls it
            assert "self." in text or "block(" in text, (n.label, text)
        elif n.label in WROTE:  # written in the learner's own forward: the line says what it is
            assert any(w in text for w in WROTE[n.label]) if isinstance(WROTE[n.label], tuple) else (
                WROTE[n.label] in text), (n.label, text)
            checked += 1
    return checked


@pytest.mark.parametrize("name", lm.NAMES)
def test_forward_first_then_the_view(name):
    model, loss = lm.make(name)  # the forward pass, before any view
    view = GraphView(loss, model)
    try:
        assert _check_lines(view.model) >= {"gpt": 30, "resnet": 8}.get(name, 1)
    finally:
        view.close()


def test_after_a_training_step_the_view_asks_and_the_forward_again_has_lines():
    model, loss = lm.make("gpt")
    loss.backward()
    tl.optim.SGD(model.parameters(), lr=0.01).step()  # a training loop began: lines stop
    assert not sites.lines_requested()
    model, loss = lm.make("gpt")
    view = GraphView(loss, model)
    g = view.model
    assert all(_tip(g, n) == NO_LINE for n in g.ops) and all(n.site is None for n in g.ops)
    assert "re-run the cell to record lines" in NO_LINE
    view.close()  # (or dropped: the request outlives the view)
    del view
    gc.collect()
    model, loss = lm.make("gpt")  # the learner re-runs the cell
    view = GraphView(loss, model)
    try:
        assert _check_lines(view.model) >= 30
    finally:
        view.close()


def test_nanogpt_stepper_details_name_the_learners_lines():
    model, loss = lm.make("gpt")
    s = BackwardStepper(loss, model)
    try:
        assert _check_lines(s.model) >= 30
        for _ in range(3):
            s.on_message({"type": "step", "n": 1})
            node = s.model.nodes[s.model.node_for(s.current.node)]
            rows = dict(map(tuple, s.details(node.id)["rows"]))
            assert rows["created at"] == node.site and node.site.startswith(MODELS_FILE)
    finally:
        s.close()


def test_an_optimizer_step_ends_the_request():
    model, loss = lm.make("resmlp")
    sites.end_requested_lines()
    assert not sites.LINES
    GraphView(loss, model).close()  # a view asks
    assert sites.lines_requested() and sites.LINES
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    loss.backward()
    opt.step()
    assert not sites.lines_requested() and not sites.LINES  # the training loop records scopes only
    model, loss = lm.make("resmlp")
    g = graph_model.build_graph(loss, model)
    assert all(n.obj.origin.code is None for n in g.ops) and all(n.module for n in g.ops if n.label == "Linear")


def test_open_views_do_not_keep_a_training_loop_recording_lines():
    """A view asks for the lines of the next forward pass, not for as long as it is open: views left open (displayed
    ones stay alive) must not make every op of a training loop walk the stack. (Open views used to keep lines on.)"""
    from tinygrad_like.widgets.dashboard import Dashboard

    model = tl.nn.Sequential(tl.nn.Linear(8, 8), tl.nn.ReLU(), tl.nn.Linear(8, 2))
    loss = model(tl.randn(4, 8)).sum()
    views = [GraphView(loss, model), BackwardStepper(loss, model), Dashboard(loss, model, follow=True)]
    try:
        assert sites.LINES
        opt = tl.optim.SGD(model.parameters(), lr=0.1)
        loss.backward()
        opt.step()
        assert not sites.LINES and not sites.lines_requested()  # the loop records scopes only
        loss = model(tl.randn(4, 8)).sum()
        assert all(n.obj.origin.code is None for n in graph_model.build_graph(loss, model).ops)
        view = GraphView(loss, model)  # a view of a graph built without lines says how to get them
        views.append(view)
        node = next(n for n in view.model.nodes if n.kind == "op")
        rows = dict(map(tuple, view.details(node.id)["rows"]))
        assert rows["created at"] == NO_LINE and "re-run the cell to record lines" in NO_LINE
        assert sites.LINES  # ... and asks: the cell run again records them
        loss = model(tl.randn(4, 8)).sum()
        assert all(n.obj.origin.code is not None for n in graph_model.build_graph(loss, model).ops)
    finally:
        for v in views:
            v.close()


# ---- the walk itself ----------------------------------------------------------------------------------------
def _helper(x):
    return x.relu()  # HELPER LINE


def test_the_line_is_the_innermost_user_frame_and_its_exact_line():
    with sites.recording_origins():
        a = tl.ones(3, requires_grad=True)
        y = _helper(a * 2)
        z = (a
             * 3)  # CONTINUATION LINE
        w = tl.nn.Linear(3, 2)(a)  # MODULE CALL LINE
    lines = {text.strip().split("# ")[-1]: i for i, text in enumerate(open(__file__), 1) if "LINE" in text}
    assert y.grad_fn.origin.site.lineno == lines["HELPER LINE"] and y.grad_fn.origin.site.function == "_helper"
    assert z.grad_fn.origin.lineno in (lines["CONTINUATION LINE"] - 1, lines["CONTINUATION LINE"])
    assert w.grad_fn.origin.site.lineno == lines["MODULE CALL LINE"]
    assert str(y.grad_fn.origin.site) == f"{THIS_FILE}:{lines['HELPER LINE']} in _helper"


def _where(seen):
    f = sys._getframe(1)
    seen.append((f.f_code, f.f_lasti, f.f_lineno))
    return 1


def test_the_line_worked_out_from_the_offset_is_what_f_lineno_says():
    """Origins keep ``f_lasti`` (``f_lineno`` scans the line table at each op); the line is worked out when shown."""
    seen = []
    x = (_where(seen)
         + _where(seen) + [_where(seen)
                           for _ in range(2)][0]
         + _where(
             seen))
    assert x == 4
    for code, lasti, lineno in seen:
        assert sites._tuple_new(sites.Origin, (code, lasti, ())).lineno == lineno


class _Twice(tl.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def _apply_twice(x):
    return _Twice.apply(x)  # USER FUNCTION LINE


def test_a_users_own_function_names_the_line_that_applied_it():
    with sites.recording_origins():
        y = _apply_twice(tl.ones(2, requires_grad=True))
    line = next(i for i, t in enumerate(open(__file__), 1) if t.rstrip().endswith("# USER FUNCTION LINE"))
    assert y.grad_fn.origin.site.lineno == line and y.grad_fn.origin.site.function == "_apply_twice"


def test_ops_from_another_thread_and_from_package_code_only():
    out = {}

    def work():
        try:
            with sites.recording_origins():
                out["y"] = tl.ones(2, requires_grad=True) * 2
        except BaseException as e:  # (an exception in a thread never reaches the test by itself)
            out["error"] = e

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert out.get("error") is None
    assert out["y"].grad_fn.origin.site.function == "work"

    def ours():  # a thread whose target is our own code: no user frame, no error
        try:
            out["z"] = tl.ones(2, requires_grad=True).mul(3)
        except BaseException as e:
            out["error"] = e

    with sites.recording_origins():
        t = threading.Thread(target=ours)
        t.start()
        t.join()
    assert out.get("error") is None and out["z"].grad_fn.origin.site.function == "ours"


def test_origins_of_one_call_share_one_origin():
    """The ops a module's call makes from one line share one Origin (no allocation per op)."""
    loss_fn = tl.nn.CrossEntropyLoss()  # (several nodes from one call: LayerNorm and Linear now record one each)
    with sites.recording_origins():
        y = loss_fn(tl.ones(2, 4, requires_grad=True) * 1, tl.tensor([0, 1]))
    nodes, stack = [], [y.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None and hasattr(n, "next") and n not in nodes:
            nodes.append(n)
            stack.extend(n.next)
    in_call = [n.origin for n in nodes if n.origin.scope]
    assert len(in_call) > 1 and len({id(o) for o in in_call}) == 1


class _MyPermute(tl.ops.movement.Permute):
    """A learner's subclass of one of our ops (inherits its forward and backward)."""


def _permute_directly(x):
    return tl.ops.movement.Permute.apply(x, (1, 0))  # DIRECT APPLY LINE


def _permute_subclass(x):
    return _MyPermute.apply(x, (1, 0))  # SUBCLASS APPLY LINE


def test_an_ops_apply_called_by_the_learner_names_their_line_not_their_callers():
    """``Permute.apply(x, (1, 0))`` in a learner's function, and their subclass of one of our ops: the line is the
    one that called ``apply`` (the walk started one frame too far up for our ops and named the caller's line)."""
    lines = {t.strip().split("# ")[-1]: i for i, t in enumerate(open(__file__), 1) if "APPLY LINE" in t}
    x = tl.ones(2, 3, requires_grad=True)
    with sites.recording_origins():
        y, z = _permute_directly(x), _permute_subclass(x)
    assert (y.grad_fn.origin.site.function, y.grad_fn.origin.lineno) == ("_permute_directly",
                                                                         lines["DIRECT APPLY LINE"])
    assert (z.grad_fn.origin.site.function, z.grad_fn.origin.lineno) == ("_permute_subclass",
                                                                         lines["SUBCLASS APPLY LINE"])
    assert z.shape == (3, 2) and not _MyPermute._builtin and tl.ops.movement.Permute._builtin
