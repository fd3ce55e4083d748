"""A fused recurrent layer (``LSTMLayer``, ``GRULayer``, ``RNNLayer``: one graph node runs every time step) in the
graph views: drawn as the one op it is, it opens into its time steps, and each step shows the gates and state the
node saved for it.

The expected gates and states are computed here by hand, in float64 NumPy from the layer's weights (PyTorch's
formulas), not read from the code under test."""

from __future__ import annotations

import re

import learner_models
import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like import nn
from tinygrad_like.widgets import BackwardStepper, GraphView, graph_checks
from tinygrad_like.widgets import graph_model as gm


class _One(nn.Module):
    def __init__(self, kind: str, **kw):
        super().__init__()
        self.rnn = getattr(nn, kind)(3, 4, **kw)

    def forward(self, x):
        return self.rnn(x)[0].sum()


def _graph(kind: str = "LSTM", steps: int = 5, **kw):
    tl.manual_seed(0)
    model = _One(kind, **kw)
    x = tl.randn(steps, 2, 3)
    loss = model(x)
    return model, x, loss, gm.build_graph(loss, model)


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _lstm_by_hand(model, x):
    """Every step's gates (after their nonlinearities), h and c, in float64."""
    p = {k: v.detach().numpy().astype(np.float64) for k, v in model.rnn.named_parameters()}
    h = np.zeros((x.shape[1], 4))
    c = np.zeros_like(h)
    out = {k: [] for k in ("input gate", "forget gate", "cell gate", "output gate", "h", "c")}
    for xt in x.numpy().astype(np.float64):
        z = xt @ p["weight_ih_l0"].T + p["bias_ih_l0"] + h @ p["weight_hh_l0"].T + p["bias_hh_l0"]
        i, f, g, o = _sigmoid(z[:, :4]), _sigmoid(z[:, 4:8]), np.tanh(z[:, 8:12]), _sigmoid(z[:, 12:])
        c = f * c + i * g
        h = o * np.tanh(c)
        for k, v in zip(out, (i, f, g, o, h, c)):
            out[k].append(v)
    return {k: np.stack(v) for k, v in out.items()}


def _layer_node(g, kind="LSTM"):
    (node,) = [n for n in g.nodes if n.kind == "op" and n.label == f"{kind}Layer"]
    return node


def _fused_group(g, node) -> str:
    (gid,) = [c for c in g.chains[node.index] if g.groups[c].marker == "fused"]
    return gid


def _steps(g) -> list:
    return [n for n in g.nodes if n.kind == "step"]


# ---- the model ------------------------------------------------------------------------------------------------
def test_a_layer_node_gets_one_step_per_time_step_chained_in_run_order():
    _, _, _, g = _graph()
    node = _layer_node(g)
    steps = _steps(g)
    assert [gm.step_time(s) for s in steps] == [0, 1, 2, 3, 4]
    assert all(s.label == "LSTM cell" and s.shape == (2, 4) and s.obj is node.obj for s in steps)
    chain = [(gm.step_time(g.nodes[s]), gm.step_time(g.nodes[d])) for s, d, _, _ in g.edges
             if g.nodes[s].kind == "step" and g.nodes[d].kind == "step"]
    assert sorted(chain) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    into_steps = [g.nodes[s].kind for s, d, _, _ in g.edges if g.nodes[d].kind == "step"]
    assert into_steps == ["step"] * 4  # (the layer's own inputs enter its first step when it is drawn open)
    assert g.fused == {node.index: (steps[0].index, steps[-1].index)}  # first and last step run
    assert node.module == "rnn.l0.LSTMLayer"
    assert g.groups["group:rnn.l0.LSTMLayer"].type_name == "one node · 5 time steps"


def test_a_reverse_direction_runs_its_steps_last_to_first():
    _, _, _, g = _graph(bidirectional=True)
    (rev,) = [n for n in g.nodes if n.kind == "op" and n.label == "LSTMLayer" and n.obj.reverse]
    first, last = (g.nodes[i] for i in g.fused[rev.index])
    assert (gm.step_time(first), gm.step_time(last)) == (4, 0)
    chain = [(gm.step_time(g.nodes[s]), gm.step_time(g.nodes[d])) for s, d, _, _ in g.edges
             if g.nodes[s].kind == "step" and g.nodes[d].kind == "step" and g.nodes[d].obj is rev.obj]
    assert sorted(chain) == [(1, 0), (2, 1), (3, 2), (4, 3)]


def test_packed_sequences_give_each_step_its_running_rows():
    tl.manual_seed(0)
    rnn = nn.GRU(3, 4)
    packed = nn.utils.rnn.pack_padded_sequence(tl.randn(4, 3, 3), [4, 2, 1])
    out, _ = rnn(packed)
    g = gm.build_graph(out.data.sum(), rnn)
    assert [(gm.step_time(s), s.shape) for s in _steps(g)] == [(0, (3, 4)), (1, (2, 4)), (2, (1, 4)), (3, (1, 4))]


def test_steps_of_packed_sequences_fold_into_one_run_whatever_rows_ran():
    tl.manual_seed(0)
    rnn = nn.GRU(3, 4)
    lengths = list(range(40, 0, -1))  # 40 sequences of 40 lengths: every step runs a different number of rows
    packed = nn.utils.rnn.pack_padded_sequence(tl.randn(40, 40, 3), lengths)
    g = gm.build_graph(rnn(packed)[0].data.sum(), rnn)
    (gid,) = [gid for gid in g.groups if gm.is_fused(g, gid)]
    (run,) = g.groups[gid].children
    assert g.groups[run].label == "t = 0–39 ×40"


def test_an_empty_batch_says_no_sequence_ran():
    tl.manual_seed(0)
    model = _One("LSTM")
    g = gm.build_graph(model(tl.randn(5, 0, 3)), model)
    rows = dict(gm.node_tip(g, _steps(g)[0]))
    assert rows["values"] == "no sequence ran at this step (an empty batch)"


def test_a_projected_lstm_with_frozen_weights_shows_h_and_c_widths():
    tl.manual_seed(0)
    lstm = nn.LSTM(3, 6, proj_size=2)
    lstm.weight_hh_l0.requires_grad_(False)  # (no edge from w_hh: the widths come from the saved state)
    x = tl.randn(4, 2, 3, requires_grad=True)
    g = gm.build_graph(lstm(x)[0].sum(), lstm)
    assert {s.shape for s in _steps(g)} == {(2, 2)}
    layer = _layer_node(g)
    assert dict(gm.node_tip(g, layer))["output holds"] == "[h | c] after every step: h 2 wide, c 6"


def test_the_fold_note_and_the_stepper_line_count_nodes_not_steps():
    model, _, loss, g = _graph("GRU")
    n_nodes = sum(1 for n in g.nodes if n.kind != "step")
    assert not any("nodes shown as" in note["text"] for note in gm.graph_notes(g, n_nodes))
    s = BackwardStepper(loss, model)
    while s.current_name != "GRULayer":
        s.step()
    assert s.widget.status.endswith("µs") and "GRULayer (rnn.l0)," in s.widget.status
    s.close()


def test_cell_by_cell_layers_get_no_steps():
    tl.manual_seed(0)
    model = _One("LSTM")
    with nn.recurrent_by_steps():
        loss = model(tl.randn(5, 2, 3))
    g = gm.build_graph(loss, model)
    assert _steps(g) == [] and g.fused == {}


# ---- what a step shows --------------------------------------------------------------------------------------------
def test_step_values_are_the_gates_and_states_of_every_step():
    model, x, _, g = _graph()
    values = _layer_node(g).obj.step_values()
    want = _lstm_by_hand(model, x)
    assert list(values) == list(want)
    for k in want:
        np.testing.assert_allclose(values[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)


def _numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+\.\d+", text)]


def test_a_steps_tip_reports_its_gates_and_state():
    model, x, _, g = _graph()
    want = _lstm_by_hand(model, x)
    step = next(s for s in _steps(g) if gm.step_time(s) == 2)
    rows = dict(gm.node_tip(g, step))
    assert rows["time step"] == "t = 2 of 0–4 (run first to last)"
    assert rows["node"].startswith("LSTMLayer: one node runs every step")
    for gate in ("input gate", "forget gate", "cell gate", "output gate"):
        (mean,) = _numbers(rows[gate].split(",")[0])
        assert abs(mean - want[gate][2].mean()) <= 6e-4, gate
        assert rows[gate].endswith("% saturated")
    mean_h, max_h = _numbers(rows["h"])
    assert abs(mean_h - np.abs(want["h"][2]).mean()) <= 6e-4 and abs(max_h - np.abs(want["h"][2]).max()) <= 6e-4


def test_saturated_gates_are_counted():
    tl.manual_seed(0)
    model = _One("LSTM")
    with tl.no_grad():
        model.rnn.bias_ih_l0[4:8] = 50.0  # the forget gate pinned at 1
    x = tl.randn(5, 2, 3)
    g = gm.build_graph(model(x), model)
    rows = dict(gm.node_tip(g, _steps(g)[0]))
    assert rows["forget gate"] == "mean 1.000, 100% saturated"
    gates = _lstm_by_hand(model, x)
    for gate in ("input gate", "output gate"):  # a sigmoid is saturated within 0.015 of 0 or 1 (diagnostics)
        share = np.mean(np.abs(2 * gates[gate][0] - 1) > 0.97)
        assert rows[gate].endswith(f", {share:.0%} saturated")
    cell = np.mean(np.abs(gates["cell gate"][0]) > 0.97)  # tanh: within 0.03 of -1 or 1
    assert rows["cell gate"].endswith(f", {cell:.0%} saturated")


@pytest.mark.parametrize("kind,names", [("GRU", ["reset gate", "update gate", "new gate", "h"]), ("RNN", ["h"])])
def test_gru_and_rnn_steps_show_their_own_gates(kind, names):
    _, _, _, g = _graph(kind)
    rows = [k for k, _ in gm.node_tip(g, _steps(g)[0])]
    assert rows == ["time step", "node", "state", *names]
    assert _steps(g)[0].label == {"GRU": "GRU cell", "RNN": "RNN cell (tanh)"}[kind]


def test_after_backward_a_step_says_its_values_were_freed():
    _, _, loss, _ = _graph()
    loss.backward()
    g = gm.build_graph(loss)
    rows = dict(gm.node_tip(g, _steps(g)[0]))
    assert rows["values"].startswith("not kept: freed after backward")
    assert _layer_node(g).obj.step_values() is None


# ---- the drawing ---------------------------------------------------------------------------------------------------
def _boxes(view) -> dict:
    return {b["id"]: b for b in view.widget.graph["boxes"]}


def test_the_overview_draws_a_layer_as_its_one_op_and_it_opens_into_steps():
    model, _, loss, _ = _graph(num_layers=2)
    view = GraphView(loss, model)
    g = view.model
    fused = [gid for gid in g.groups if gm.is_fused(g, gid)]
    assert len(fused) == 2
    boxes = _boxes(view)
    for gid in fused:
        b = boxes[gid]
        assert (b["kind"], b["label"], b["expandable"]) == ("op", "LSTMLayer", True)
        assert b["sub"].endswith("5 time steps") and dict(b["tip"])["steps"] == "5 time steps: click to open them"
    assert not any(b["kind"] == "step" for b in boxes.values())
    view.expand(fused[0])  # (5 steps: few enough to open at once)
    boxes = _boxes(view)
    assert fused[0] not in boxes
    steps = [b for b in boxes.values() if b["kind"] == "step"]
    assert sorted(b["sub"] for b in steps) == [f"t = {t} · (2, 4)" for t in range(5)]
    assert graph_checks.upward_edges(view.widget.graph) == []
    (run,) = view.model.groups[fused[0]].children
    view.collapse(run)  # the steps, folded as a run
    run_box = _boxes(view)[run]
    assert (run_box["label"], run_box["sub"]) == ("t = 0–4 ×5", "LSTM cell · 5 time steps")
    view.expand(run)
    for b in steps:  # each step's box has its own tip, the last one's too (it also shows the layer node)
        assert dict(_boxes(view)[b["id"]]["tip"])["time step"].startswith("t = ")
    assert view.details(steps[0]["id"])["rows"][0][0] == "time step"
    view.collapse(fused[0])
    assert fused[0] in _boxes(view)
    view.close()


def test_an_open_layer_is_one_column_of_steps_between_its_input_and_its_output():
    """The layer's inputs enter its first step, its outputs leave its last, each step's state feeds the next: the
    steps stand in one column, in the order they run, inside their run's frame (a learner's 16-step LSTM)."""
    tl.manual_seed(0)
    model = _One("LSTM", num_layers=2)
    loss = model(tl.randn(16, 4, 3))
    view = GraphView(loss, model)
    g = view.model
    for gid in [gid for gid in g.groups if gm.is_fused(g, gid)]:
        view.expand(gid)
    graph = view.widget.graph
    boxes = graph["boxes"]
    def step_of(b):  # (the last step's box also shows the layer node: the node its outputs leave from)
        return next(g.nodes[i] for i in b["nodes"] if g.nodes[i].kind == "step")

    for layer in g.fused:
        steps = sorted((b for b in boxes if b["kind"] == "step" and step_of(b).obj is g.nodes[layer].obj),
                       key=lambda b: b["y"])
        assert [gm.step_time(step_of(b)) for b in steps] == list(range(16))
        assert layer in steps[-1]["nodes"]
        xs = [b["x"] for b in steps]
        assert max(xs) - min(xs) < min(b["w"] for b in steps) / 4, f"one column: centres at {xs}"
        into = {boxes[e["s"]]["label"] for e in graph["edges"] if boxes[e["t"]] is steps[0]}
        assert "Linear" in into  # the input projection enters the first step ...
        for b in steps[1:]:  # ... and every other step only takes the state of the one before
            assert [boxes[e["s"]] for e in graph["edges"] if boxes[e["t"]] is b] == [steps[steps.index(b) - 1]]
        run_frame = next(f for f in graph["frames"] if f["label"] == "t = 0–15 ×16"
                         and f["x"] <= steps[0]["x"] <= f["x"] + f["w"])
        assert all(run_frame["y"] <= b["y"] <= run_frame["y"] + run_frame["h"] for b in steps), "inside its frame"
    assert graph_checks.upward_edges(graph) == [] and graph["width"] < 1500
    view.close()


def test_the_details_of_a_layer_box_are_its_nodes_with_expand():
    model, _, loss, _ = _graph()
    view = GraphView(loss, model)
    (gid,) = [gid for gid in view.model.groups if gm.is_fused(view.model, gid)]
    d = view.details(gid)
    assert d["title"].startswith("LSTMLayer") and d["actions"] == ["expand"]
    assert ["op", "LSTMLayer"] in d["rows"]
    tip = dict(next(b for b in view.widget.graph["boxes"] if b["id"] == gid)["tip"])
    assert tip["output holds"] == "[h | c] after every step: h 4 wide, c 4"
    view.expand(gid)
    run = view.model.groups[gid].children[0]
    assert ["time steps", "5, inside one layer node"] in view.details(run)["rows"]
    view.close()


def test_the_stepper_keeps_a_layer_folded_and_outlines_its_box():
    model, loss = learner_models.make("lstm")
    s = BackwardStepper(loss, model)
    layer_boxes = []
    while not s.done:
        s.step()
        if s.current_name == "LSTMLayer":
            box = s.widget.graph["boxes"][s.widget.state["current_box"]]
            assert box["kind"] == "op" and box["label"] == "LSTMLayer" and box["expandable"]
            layer_boxes.append(box["id"])
    assert len(set(layer_boxes)) == 3  # three layers, each its own box, none opened by the stepper
    s.close()


def test_the_stepper_outlines_the_last_step_when_the_learner_opened_a_layer():
    model, _, loss, _ = _graph()
    s = BackwardStepper(loss, model)
    (gid,) = [gid for gid in s.model.groups if gm.is_fused(s.model, gid)]
    s.expand(gid)
    while s.current_name != "LSTMLayer":
        s.step()
    node = s.model.node_for(s.current.node)
    last = s.model.nodes[s.model.fused[node][1]]
    assert s.highlighted == gm.box_of(s.model, last.index, s.expanded)
    assert gid in s.expanded
    s.close()


def test_the_static_picture_draws_steps():
    model, _, loss, _ = _graph()
    view = GraphView(loss, model)
    (gid,) = [gid for gid in view.model.groups if gm.is_fused(view.model, gid)]
    run = next(c for c in view.model.groups[gid].children)
    view.expand(run)
    svg = view.to_svg()
    assert svg.count(">LSTM cell<") == 5
    view.close()
