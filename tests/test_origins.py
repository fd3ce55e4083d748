"""Creation origins of graph nodes (``sites.record_origins``): the user's line and the module scope."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import tinygrad_like as tl
from tinygrad_like import events, nn, sites
from tinygrad_like.autograd.function import Function

THIS_FILE = os.path.basename(__file__)


def lineno() -> int:
    return sys._getframe(1).f_lineno


@pytest.fixture
def origins():
    """Origins on for the test, and whatever the setting was restored afterwards."""
    prev = sites.record_origins(True)
    try:
        yield
    finally:
        sites.record_origins(prev)


@pytest.fixture
def no_origins():
    """Origins off for the test (importing ``tinygrad_like.widgets`` turns scopes on and requests lines until an
    optimizer steps), restored afterwards."""
    prev, prev_scopes, requested = sites.record_origins(False), sites.record_scopes(False), sites.lines_requested()
    sites.end_requested_lines()
    try:
        yield
    finally:
        sites.record_origins(prev)
        sites.record_scopes(prev_scopes)
        if requested:
            sites.request_lines()


class Block(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d)

    def forward(self, x):
        h = self.fc2(self.act(self.fc1(x)))  # (the line of the fc1/relu/fc2 nodes)
        return x + h  # (the line of the residual add)


FC_LINE = Block.forward.__code__.co_firstlineno + 1


def graph_nodes(root) -> list[Function]:
    """Every op node reachable from ``root`` (each once)."""
    seen, stack, out = set(), [root], []
    while stack:
        n = stack.pop()
        if not isinstance(n, Function) or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(n.next)
    return out


def test_off_by_default():
    code = "import tinygrad_like as tl; print(tl.sites.origins_enabled(), tl.events.WATCH_NODES)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_the_switch_returns_and_restores_the_previous_setting(no_origins):
    assert sites.origins_enabled() is False and events.ORIGINS is False and events.WATCH_NODES is False
    assert sites.record_origins(True) is False
    assert sites.origins_enabled() and events.WATCH_NODES
    assert sites.record_origins(True) is True
    assert sites.record_origins(False) is True
    assert not sites.origins_enabled() and not events.WATCH_NODES
    with sites.recording_origins():
        assert sites.origins_enabled()
        with sites.recording_origins(False):
            assert not sites.origins_enabled()
        assert sites.origins_enabled()
    assert not sites.origins_enabled()


def test_the_node_watch_flag_follows_subscribers_and_origins_together(no_origins):
    un = events.subscribe(lambda e: None)
    try:
        assert events.WATCH_NODES
        with sites.recording_origins():
            assert events.WATCH_NODES
        assert events.WATCH_NODES, "the subscriber still listens"
    finally:
        un()
    assert not events.WATCH_NODES


def test_nothing_is_set_when_off(no_origins):
    model = nn.Sequential(Block(3), Block(3))
    x = tl.randn(2, 3, requires_grad=True)
    y = model(x).sum() * 2
    nodes = graph_nodes(y.grad_fn)
    assert nodes and all(getattr(n, "origin", None) is None for n in nodes)
    assert sites.context.scope == ()


def test_nested_modules_give_every_forward_node_its_scope_and_user_line(origins):
    model = nn.Sequential(Block(3), Block(3))
    x = tl.randn(2, 3, requires_grad=True)
    y = model(x)
    loss_line = lineno() + 1
    loss = (y * y).sum()
    assert sites.context.scope == (), "the scope is popped after the forward"

    by_id = {id(n): n for n in graph_nodes(loss.grad_fn)}
    forward = [n for n in by_id.values() if n.origin.scope]
    outside = [n for n in by_id.values() if not n.origin.scope]
    # 2 blocks x (fc1, relu, fc2, add); each Linear is one node here or more (matmul/add): at least 8.
    assert len(forward) >= 8
    assert {n.name for n in outside} == {"Mul", "Sum"}
    for n in outside:
        assert n.origin.scope == () and n.origin.module is None
        assert n.origin.site.lineno == loss_line and os.path.basename(n.origin.site.filename) == THIS_FILE

    blocks = list(model)
    for n in forward:
        scope = n.origin.scope
        assert scope[0] is model, "outermost first"
        assert len(scope) in (2, 3) and scope[1] in blocks
        block = scope[1]
        site = n.origin.site
        assert os.path.basename(site.filename) == THIS_FILE and site.function == "forward"
        if len(scope) == 3:  # inside fc1 / act / fc2: the site is the block's line that called them
            assert scope[2] in (block.fc1, block.act, block.fc2)
            assert n.origin.module is scope[2]
            assert site.lineno == FC_LINE
        else:  # the residual add, written in Block.forward itself
            assert n.name == "Add" and site.lineno == FC_LINE + 1
            assert n.origin.module is block
    # each block's three layers all made nodes, and the relu's node sits in the ReLU module
    for b in blocks:
        mods = {n.origin.scope[-1] for n in forward if n.origin.scope[1] is b}
        assert {b.fc1, b.act, b.fc2, b} <= mods
    relus = [n for n in forward if n.origin.module is blocks[0].act]
    assert relus and all("Relu" in n.name or "ReLU" in n.name for n in relus)
    assert f"{THIS_FILE}:{FC_LINE} in forward" == str(relus[0].origin.site)
    assert "Sequential/Block/ReLU" in repr(relus[0].origin)


def test_module_hooks_still_run_with_origins_on(origins):
    lin = nn.Linear(2, 2)
    seen = []
    lin.register_forward_hook(lambda m, args, out: seen.append(sites.context.scope))
    lin(tl.randn(1, 2))
    assert seen == [(lin,)]


def test_scope_is_restored_when_forward_raises(origins):
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        nn.Sequential(Boom())(tl.ones(1))
    assert sites.context.scope == ()


def test_scope_is_per_thread(origins):
    inner = []

    class Probe(nn.Module):
        def forward(self, x):
            t = threading.Thread(target=lambda: inner.append(sites.context.scope))
            t.start()
            t.join()
            return x * 2

    probe = Probe()
    y = probe(tl.ones(2, requires_grad=True))
    assert inner == [()], "another thread does not see this thread's modules"
    assert y.grad_fn.origin.scope == (probe,)


def test_view_ops_get_origins(origins):
    x = tl.randn(2, 3, requires_grad=True)
    line = lineno() + 1
    r, t, s = x.reshape(3, 2), x.transpose(0, 1), x[:, 1:]
    for v in (r, t, s):
        o = v.grad_fn.origin
        assert o.scope == () and o.site.lineno == line and os.path.basename(o.site.filename) == THIS_FILE
    names = {r.grad_fn.name, t.grad_fn.name}
    assert len(names) == 2


def test_view_op_inside_a_module_gets_the_module_scope(origins):
    flat = nn.Flatten()
    y = flat(tl.randn(2, 3, 4, requires_grad=True))
    assert y.grad_fn.origin.scope == (flat,)


def test_to_device_copies_get_origins(origins, dev):
    x = tl.randn(2, 2, requires_grad=True)
    line = lineno() + 1
    on_dev = x.to("testdev")
    back = on_dev.to("cpu")
    for t, ln in ((on_dev, line), (back, line + 1)):
        assert t.grad_fn.name == "ToDevice"
        assert t.grad_fn.origin.site.lineno == ln and t.grad_fn.origin.scope == ()


def test_origins_are_lazy_sites_and_immutable(origins):
    line = lineno() + 1
    y = tl.ones(2, requires_grad=True) * 3
    o = y.grad_fn.origin
    assert isinstance(o, sites.Origin) and isinstance(o.site, events.Site)
    assert o.site.label == f"{THIS_FILE}:{line} in test_origins_are_lazy_sites_and_immutable"
    with pytest.raises(AttributeError):
        o.scope = ("x",)


def test_nodes_made_while_off_have_no_origin_after_switching_on(no_origins):
    x = tl.ones(2, requires_grad=True)
    a = x * 2
    line = lineno() + 2
    with sites.recording_origins():
        b = a + 1
    assert getattr(a.grad_fn, "origin", None) is None
    assert b.grad_fn.origin.site.lineno == line


def test_scopes_only_record_the_module_but_not_the_line(no_origins):
    """The cheap level (what importing the widgets turns on): the scope, no stack walk."""
    block = Block(3)
    assert sites.record_scopes(True) is False
    assert sites.origins_enabled() and not sites.LINES
    y = block(tl.randn(2, 3, requires_grad=True))
    nodes = graph_nodes(y.grad_fn)
    assert all(n.origin.code is None and n.origin.site is None for n in nodes)
    assert {type(m).__name__ for n in nodes for m in n.origin.scope} == {"Block", "Linear", "ReLU"}
    assert sites.record_scopes(False) is True
    assert not sites.origins_enabled()


def test_a_listener_records_lines_while_it_lives(no_origins):
    """``sites.listen(owner)``: lines are recorded while an owner lives, and after it (the forward pass the
    learner runs again once the view said "re-run the cell") until an optimizer steps."""
    import gc

    class Owner:
        pass

    a, b = Owner(), Owner()
    stop_a, stop_b = sites.listen(a), sites.listen(b)
    assert sites.LINES and sites.origins_enabled()
    y = tl.ones(2, requires_grad=True) * 2; line = lineno()  # noqa: E702
    assert y.grad_fn.origin.site.lineno == line
    stop_a()
    stop_a()  # a second stop (close() twice) does not count twice
    assert sites.LINES, "b still listens"
    del b
    gc.collect()
    assert sites.LINES and sites.lines_requested(), "the request outlives the views"
    sites.end_requested_lines()  # (what an optimizer's step does)
    assert not sites.LINES and not sites.origins_enabled()
    stop_b()  # after collection: nothing more
    assert not sites.LINES
    assert not hasattr((tl.ones(2, requires_grad=True) * 2).grad_fn, "origin")


def test_the_explicit_switch_outlives_listeners(no_origins):
    class Owner:
        pass

    o = Owner()
    stop = sites.listen(o)
    with sites.recording_origins():
        stop()
        sites.end_requested_lines()
        assert sites.LINES, "record_origins(True) keeps lines on without listeners or a request"
    assert not sites.LINES


def test_sites_in_files_are_made_once_and_cells_are_labelled_with_their_newest_number(monkeypatch):
    import sys
    import types

    first = sites.make_site("/work/train.py", 42, "step")
    assert str(first) == "train.py:42 in step"
    assert sites.make_site("/work/train.py", 42, "step") is first, "a file's line is labelled once"
    cell = "/tmp/ipykernel_1/2718.py"
    shell = types.SimpleNamespace(compile=types.SimpleNamespace(_filename_map={cell: 5}))
    module = types.ModuleType("IPython.core.getipython")
    module.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython.core.getipython", module)
    assert str(sites.make_site(cell, 3, "<module>")) == "cell In[5], line 3"
    shell.compile._filename_map[cell] = 9  # the same code run again as In[9]
    assert str(sites.make_site(cell, 3, "<module>")) == "cell In[9], line 3"
