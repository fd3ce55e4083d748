"""BackwardStepper follows its node into folds, without a browser: at every step of the learners' models the current
node has its own box (``state.current_box``) inside its open module, the groups the stepper opened fold again when it
leaves them while the learner's stay open, a group of one op is never a box, Fit folds back to the overview
(``fold_to_fit``), and a tensor with no graph says why.

The models are ``learner_models``' (nanoGPT, ResNet-18, the LSTM language model). Group ids are not written here:
the hierarchy they come from changes (one group per call, recurrent layers by time step), so the tests ask the
model which groups hold a node and check behaviour."""

from __future__ import annotations

import learner_models
import pytest

import tinygrad_like as tl
from tinygrad_like.widgets import BackwardStepper, GraphView, _base
from tinygrad_like.widgets import graph_model as gm
from tinygrad_like.widgets import graph_view as gv


def _ops_of(model, gid: str) -> int:
    """Ops anywhere inside a group, counted from the nodes' chains (not from the code under test); a fused recurrent
    layer's time steps count, as boxes it opens into."""
    return sum(1 for n, chain in zip(model.nodes, model.chains) if n.kind in ("op", "step") and gid in chain)


def _no_one_op_group_box(view) -> None:
    for b in view.widget.graph["boxes"]:
        if b["kind"] == "group":
            ops = sum(1 for i in b["nodes"] if view.model.nodes[i].kind == "op")
            steps = sum(1 for i in b["nodes"] if view.model.nodes[i].kind == "step")
            # (a fused recurrent layer's box is one op and the time steps it opens into)
            assert ops >= 2 or ops == 1 and steps, f"group box {b['label']!r} ({b['sub']}) stands for {ops} op"


def _current(s) -> int:
    return s.model.node_for(s.current.node)


def _check_followed(s) -> str:
    """The current node's own box is ``state.current_box``, every group holding it is open, and the innermost group
    of two ops or more around it is drawn as a frame (its module's other boxes around it). Returns the box id."""
    g, idx = s.widget.graph, _current(s)
    box = s.widget.state["current_box"]
    assert box is not None, f"step {s.cursor}: no current box for {s.current_name}"
    b = g["boxes"][box]
    fused = s.model.groups.get(b["id"])  # a fused recurrent layer's node: its own box, with its time steps folded
    if fused is not None:
        assert fused.marker == "fused" and b["label"] == s.current_name and idx in fused.members
    assert b["kind"] == "op" and (fused is not None or b["nodes"] == [idx]) and g["owner"][idx] == box
    chain = [gid for gid in s.model.chains[idx] if gid != b["id"]]
    assert set(chain) <= s.expanded
    outer = [gid for gid in chain if _ops_of(s.model, gid) >= 2]
    if outer:
        assert outer[-1] in {f["id"] for f in g["frames"]}, f"{outer[-1]} holds the current node but has no frame"
    return b["id"]


# ---- following the current node -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gpt", "resnet", "lstm"])
def test_every_step_shows_its_own_node_in_its_open_module(name):
    """nanoGPT: 192 presses of Step, 192 different nodes, each with its own box; most of them inside the run of six
    identical blocks, folded into one box in the overview, which opens while the stepper is inside."""
    model, loss = learner_models.make(name)
    s = BackwardStepper(loss, model)
    assert s.widget.state["current_box"] is None  # before the first step
    _no_one_op_group_box(s)
    runs = {gid for gid, g in s.model.groups.items() if g.kind == "run"}
    assert not runs & s.expanded  # the overview folds runs of identical blocks
    seen, in_run = [], 0
    while not s.done:
        s.step()
        seen.append(_check_followed(s))
        _no_one_op_group_box(s)
        in_run += bool(runs & set(s.model.chains[_current(s)]))
    ops = sum(1 for n in s.model.nodes if n.kind == "op")
    assert len(seen) == ops and len(set(seen)) == ops  # each step a different node, none hidden in a fold
    if name == "gpt":
        assert ops == 192 and in_run >= 150  # (each of those steps opened the run)
    s.close()


def test_groups_the_stepper_opened_fold_again_the_learners_stay_open():
    model, loss = learner_models.make("gpt")
    s = BackwardStepper(loss, model)
    initial = set(s.expanded)

    def block(idx):  # the outermost group that is not open in the overview: a block of the run
        return next(g for g in s.model.chains[idx] if g not in initial and s.model.groups[g].kind == "module")

    s.step()
    while block_of_current(s, initial) is None:
        s.step()
    first_block = block(_current(s))
    opened_for_first = set(s.expanded) - initial
    # the learner opens a group of another block (as a click on its box does): its deepest group of 2+ ops
    other = next(i for i, n in enumerate(s.model.nodes) if n.kind == "op" and s.model.chains[i]
                 and first_block not in s.model.chains[i] and block_of(s, initial, i) is not None
                 and any(_ops_of(s.model, g) >= 2 and g not in s.expanded for g in s.model.chains[i]))
    learner_group = [g for g in s.model.chains[other] if _ops_of(s.model, g) >= 2][-1]
    s.expand(learner_group)
    chain = s.model.chains[other]
    learner_chain = set(chain[: chain.index(learner_group) + 1])
    assert learner_chain <= s.expanded
    # step on until the stepper has left the first block
    while first_block in s.model.chains[_current(s)]:
        s.step()
    _check_followed(s)
    left = opened_for_first - set(s.model.chains[_current(s)]) - learner_chain
    assert left and not left & s.expanded  # what the stepper opened for the first block folded again
    assert first_block in {b["id"] for b in s.widget.graph["boxes"]}  # drawn folded, as one box
    # ... and the learner's group stays open all the way to the end, through the block it belongs to and past it
    while not s.done:
        s.step()
        _check_followed(s)
        assert learner_chain <= s.expanded
    s.close()


def block_of_current(s, initial):
    return block_of(s, initial, _current(s))


def block_of(s, initial, idx):
    return next((g for g in s.model.chains[idx] if g not in initial and s.model.groups[g].kind == "module"), None)


def test_a_group_the_learner_folds_over_the_current_node_reopens_on_the_next_step():
    model, loss = learner_models.make("resnet")
    s = BackwardStepper(loss, model)
    s.step(40)
    idx = _current(s)
    outer = [g for g in s.model.chains[idx] if _ops_of(s.model, g) >= 2]
    assert outer
    s.on_message({"type": "toggle", "id": outer[0]})  # the learner folds the outermost group around it
    assert outer[0] not in s.expanded and s.widget.state["current_box"] is None  # hidden: no box to centre on
    assert s.widget.graph["boxes"][s.widget.graph["owner"][idx]]["id"] == outer[0]
    s.step()
    _check_followed(s)
    s.back()
    _check_followed(s)
    assert _current(s) == idx
    s.close()


def test_back_and_reset_follow_and_layouts_are_reused(monkeypatch):
    model, loss = learner_models.make("gpt")
    s = BackwardStepper(loss, model)
    overview = set(s.expanded)
    calls = []
    real = gv.graph_payload
    monkeypatch.setattr(gv, "graph_payload", lambda *a, **k: calls.append(1) or real(*a, **k))
    s.step(40)
    _check_followed(s)
    s.back(40)
    s.step(40)
    n_first = len(calls)
    for _ in range(3):  # back and forth over the same nodes: every drawing was made once already
        s.back(40)
        s.step(40)
    assert len(calls) == n_first
    # (a step of several nodes follows its last one only)
    s.back(25)
    _check_followed(s)
    s.reset()
    assert s.expanded == overview and s.widget.state["current_box"] is None
    s.close()


# ---- groups of one op, the overview, Fit ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["gpt", "resnet", "lstm"])
def test_no_group_of_one_op_is_ever_a_box(name):
    model, loss = learner_models.make(name)
    view = GraphView(loss, model)
    _no_one_op_group_box(view)
    m = view.model
    ones = [gid for gid in m.groups if _ops_of(m, gid) < 2]
    assert ones  # (LayerNorm, Linear, Dropout, ReLU: each module called once is a group of one op)
    assert set(ones) <= gm.default_expanded(m)
    own = set(gm.owners(m, set()))  # every group folded: still none of one op
    assert not own & set(ones)
    for gid in ones:  # folding a group of one op changes nothing drawn
        view.collapse(gid)
    _no_one_op_group_box(view)
    view.close()


def test_fold_to_fit_returns_to_the_overview_with_the_current_nodes_groups():
    model, loss = learner_models.make("gpt")
    s = BackwardStepper(loss, model)
    overview = gm.default_expanded(s.model)
    s.step(30)
    idx = _current(s)
    for gid in s.model.groups:  # the learner opened everything: thousands of px wide
        s.expanded.add(gid)
    s.expand(next(iter(s.model.groups)))
    assert len(s.widget.graph["boxes"]) == len(s.model.nodes)
    s.on_message({"type": "fold_to_fit"})
    assert s.expanded == overview | set(s.model.chains[idx])
    _check_followed(s)
    n_boxes = len(s.widget.graph["boxes"])
    assert n_boxes < len(s.model.nodes)
    texts = [n["text"] for n in s.widget.graph["notes"]]
    assert f"Folded to fit: {len(s.model.nodes)} nodes shown as {n_boxes} boxes; open a group to read its ops." in texts
    assert not any(t.startswith(f"{len(s.model.nodes)} nodes shown as") for t in texts)  # (said once)
    # the stepper folds what it opened when it leaves (the learner's opening was folded away)
    while any(g in s.model.chains[_current(s)] for g in s.model.chains[idx] if g not in overview):
        s.step()
    assert s.expanded == overview | set(s.model.chains[_current(s)])
    s.close()
    # a plain view folds to its overview; opening a group again drops the note
    view = GraphView(loss, model)
    view.expand(next(g for g in view.model.groups if g not in view.expanded))
    view.on_message({"type": "fold_to_fit"})
    assert view.expanded == gm.default_expanded(view.model)
    assert any(n["text"].startswith("Folded to fit") for n in view.widget.graph["notes"])
    view.expand(next(g for g in view.model.groups if g not in view.expanded))
    assert not any(n["text"].startswith("Folded to fit") for n in view.widget.graph["notes"])
    view.close()
    # a graph small enough to show whole has nothing to fold: no note (the browser says "zoom in" itself)
    x = tl.randn(3, requires_grad=True)
    view = GraphView((x * 2).sum(), names={"x": x})
    view.on_message({"type": "fold_to_fit"})
    assert len(view.widget.graph["boxes"]) == len(view.model.nodes) and not view.widget.graph["notes"]
    view.close()


# ---- a tensor with no graph -----------------------------------------------------------------------------------
def _warn(view) -> str:
    notes = [n for n in view.widget.graph["notes"] if n["level"] == "warn"]
    assert len(notes) == 1, view.widget.graph["notes"]
    return notes[0]["text"]


def test_a_tensor_with_no_grad_fn_says_why_there_is_no_graph():
    leaf = tl.randn(3, requires_grad=True)
    view = GraphView(leaf, names={"w": leaf})
    text = _warn(view)
    assert "leaf" in text and "requires_grad=True" in text and "GraphView(loss" in text
    assert len(view.widget.graph["boxes"]) == 1
    view.close()
    with tl.no_grad():
        y = leaf * 2
        view = GraphView(y)
        assert "inside no_grad()" in _warn(view)  # made here, now, with gradients off
    view.close()
    view = GraphView(y)
    text = _warn(view)
    assert "requires_grad=False" in text and "no_grad()" in text and "requires_grad=True" in text
    view.close()
    view = GraphView(tl.ones(3) * 2)
    assert "requires_grad=False" in _warn(view)
    view.close()
    x = tl.randn(3, requires_grad=True)
    view = GraphView((x * 2).sum())
    assert not [n for n in view.widget.graph["notes"] if n["level"] == "warn"]
    view.close()
    with pytest.raises(ValueError, match="needs a tensor with a graph .grad_fn is None"):
        BackwardStepper(leaf)
    with pytest.raises(ValueError, match="requires_grad=True, outside no_grad"):
        BackwardStepper(y)


# ---- the first Step costs what later Steps cost ---------------------------------------------------------------
def test_a_stepper_click_does_not_redraw_the_other_views_of_its_graph():
    """The first click used to redraw a GraphView of the same loss (the shared live budget lets the first redraw
    through): it now waits for the end of the next cell, and the stepper's own steps are not held up."""
    model, loss = learner_models.make("resnet")
    view = GraphView(loss, model)
    s = BackwardStepper(loss, model)
    view._last_draw, _base._BUDGET.next_allowed = 0.0, 0.0  # (as long after the last cell as a learner clicks)
    before = view.redraws
    s.step()
    s.step(5)
    assert view.redraws == before and view._stale
    view.after_cell()
    assert view.redraws == before + 1
    # a backward of the same graph outside a stepper still redraws the view live
    view._last_draw, _base._BUDGET.next_allowed = 0.0, 0.0
    model2, loss2 = learner_models.make("gpt")
    view2 = GraphView(loss2, model2)
    view2._last_draw, _base._BUDGET.next_allowed = 0.0, 0.0
    loss2.backward()
    assert view2.redraws >= 2  # (the first draw, and live redraws: how many depends on how long backward takes)
    for v in (view, s, view2):
        v.close()


def test_a_step_that_opens_groups_sends_the_drawing_and_current_box_in_one_message(monkeypatch):
    """``state.current_box`` indexes ``graph.boxes``: a browser that got one without the other would centre on the
    wrong box, so a step that changes the folding (or a click that does) sends both together."""
    model, loss = learner_models.make("gpt")
    s = BackwardStepper(loss, model)
    sent = []
    real = s.widget.send_state
    monkeypatch.setattr(s.widget, "send_state", lambda key=None: sent.append(
        {key} if isinstance(key, str) else set(key or ())) or real(key))  # (hold_sync clears its set afterwards)
    overview = gm.default_expanded(s.model)
    s.step()
    while not set(s.model.chains[_current(s)]) - overview:  # until a step opens a folded group
        s.step()
    assert any({"graph", "state"} <= k for k in sent) and not any("graph" in k and "state" not in k for k in sent)
    sent.clear()
    idx = _current(s)
    outer = next(g for g in s.model.chains[idx] if g in s.expanded and g not in gm.default_expanded(s.model))
    s.on_message({"type": "toggle", "id": outer})  # the learner folds it: the box indices change
    assert any({"graph", "state"} <= k for k in sent) and s.widget.state["current_box"] is None
    s.close()


def test_the_layout_cache_is_bounded_by_boxes(monkeypatch):
    """A view keeps earlier drawings for a stepper's back and forth, but never more than LAYOUT_CACHE_BOXES boxes of
    them (the drawing on screen aside): a huge graph is not kept in several copies."""
    monkeypatch.setattr(gv, "LAYOUT_CACHE_BOXES", 100)
    model, loss = learner_models.make("gpt")
    s = BackwardStepper(loss, model)
    for _ in range(60):
        s.step()
        kept = sum(len(p["boxes"]) for p in s._payloads.values())
        assert kept <= max(100, len(s.widget.graph["boxes"]))
    assert len(s._payloads) >= 1 and frozenset(s.expanded) in s._payloads
    s.close()
