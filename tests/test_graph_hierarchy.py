"""The graph's module hierarchy: one group per call of a module, Sequential children named by their parent's
path, recurrent layers grouped by layer (one layer node each) and, run cell by cell (``recurrent_by_steps``), by
time step (``widgets/graph_model.py``, ``nn/rnn.py``'s markers)."""

from __future__ import annotations

import re

import learner_models
import pytest

import tinygrad_like as tl
from tinygrad_like import sites
from tinygrad_like.nn.utils.rnn import pack_sequence
from tinygrad_like.widgets import build_graph, graph_checks
from tinygrad_like.widgets import graph_model as gm

nn, F = tl.nn, tl.nn.functional


@pytest.fixture(autouse=True)
def scopes():
    """Scopes recorded (as importing the widgets does), lines not; restored afterwards."""
    prev, prev_scopes = sites.record_origins(False), sites.record_scopes(True)
    yield
    sites.record_origins(prev)
    sites.record_scopes(prev_scopes)


@pytest.fixture(scope="module")
def learner():
    """The four learner models, each with its graph (built while scopes are recorded)."""
    prev = sites.record_scopes(True)
    try:
        out = {}
        for name in learner_models.NAMES:
            model, loss = learner_models.make(name)
            out[name] = (model, loss, build_graph(loss, model))
        return out
    finally:
        sites.record_scopes(prev)


@pytest.fixture(scope="module")
def lstm_by_steps():
    """The learner's LSTM language model run cell by cell, with its graph."""
    prev = sites.record_scopes(True)
    try:
        with nn.recurrent_by_steps():
            model, loss = learner_models.make("lstm")
        return model, loss, build_graph(loss, model)
    finally:
        sites.record_scopes(prev)


def ops_in(g, path: str) -> list:
    """The op nodes directly in the group ``path``."""
    return [g.nodes[i] for i in g.groups[f"group:{path}"].members if g.nodes[i].kind == "op"]


def producers(g, node) -> list:
    return [g.nodes[s] for s, d, _, _ in g.edges if d == node.index]


# ---- one group per call -------------------------------------------------------------------------------------------
def test_resnet_blocks_relu_called_twice_is_two_groups_named_by_call(learner):
    _, _, g = learner["resnet"]
    assert "group:layer1.0.relu" not in g.groups, "one box spanning both calls"
    first, second = ops_in(g, "layer1.0.relu (call 1)"), ops_in(g, "layer1.0.relu (call 2)")
    # (ReLU(inplace=True) records one Relu, as torch does: no Clone of its input)
    assert [n.label for n in first] == ["Relu"] == [n.label for n in second]
    # BasicBlock: relu(bn1(conv1(x))) first, relu(out + identity) second
    assert [(p.label, p.module) for p in producers(g, first[0])] == [("Add", "layer1.0.bn1")]
    (add,) = producers(g, second[0])
    assert add.label == "Add" and add.module == "layer1.0"
    assert first[0].obj.seq < second[0].obj.seq, "calls are numbered in forward order"
    assert g.groups["group:layer1.0.relu (call 2)"].short == "relu (call 2)"
    assert g.groups["group:relu"].type_name.startswith("ReLU"), "the stem's relu, called once, keeps its path"


def test_lstm_lm_drop_called_twice_is_two_groups(learner):
    _, _, g = learner["lstm"]
    (d1,), (d2,) = ops_in(g, "drop (call 1)"), ops_in(g, "drop (call 2)")
    assert producers(g, d1)[0].module == "encoder"  # drop(encoder(input))
    assert producers(g, d2)[0].module.startswith("rnn")  # drop(output of the LSTM)


@pytest.mark.parametrize("name", learner_models.NAMES)
def test_no_edge_runs_up_on_the_learner_models(learner, name):
    _, _, g = learner[name]
    for expanded in (gm.default_expanded(g), set(g.groups)):
        assert graph_checks.upward_edges(gm.graph_payload(g, expanded)) == []


def test_calls_are_numbered_within_the_graph_drawn():
    class Net(nn.Module):
        def __init__(self, twice: bool):
            super().__init__()
            self.lin, self.act, self.twice = nn.Linear(3, 3), nn.ReLU(), twice

        def forward(self, x):
            x = self.act(self.lin(x))
            return self.act(x * 2) if self.twice else x

    tl.manual_seed(0)
    model = Net(twice=True)
    for _ in range(3):  # earlier forwards: their calls are not this graph's
        model(tl.randn(2, 3))
    g = build_graph(model(tl.randn(2, 3)).sum(), model)
    assert {gid for gid in g.groups if "act" in gid} == {"group:act (call 1)", "group:act (call 2)"}
    model.twice = False
    g = build_graph(model(tl.randn(2, 3)).sum(), model)
    assert {gid for gid in g.groups if "act" in gid} == {"group:act"}, "called once in this graph: its plain path"


def test_a_shared_block_called_twice_numbers_its_calls_and_its_children_follow():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x).tanh() + x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block, self.mid = Block(), nn.Linear(4, 4)

        def forward(self, x):
            return self.block(self.mid(self.block(x)))

    tl.manual_seed(0)
    model = Net()
    g = build_graph(model(tl.randn(2, 4)).sum(), model)
    assert [n.label for n in ops_in(g, "block (call 1).fc")] == ["Linear"]
    assert [n.label for n in ops_in(g, "block (call 2).fc")] == ["Linear"]
    assert sorted(n.label for n in ops_in(g, "block (call 2)")) == ["Add", "Tanh"]
    # the shared weight sits beside the calls (it feeds both), not in a group of its own
    w = next(n for n in g.nodes if n.label == "block.fc.weight")
    assert w.module is None and "group:block" not in g.groups and "group:block.fc" not in g.groups
    p = gm.graph_payload(g, set(g.groups))
    box = next(b for b in p["boxes"] if b["nodes"] == [w.index])
    assert (box["label"], box["sub"]) == ("weight", "fc · (4, 4)")
    for expanded in (set(), set(g.groups)):
        assert graph_checks.upward_edges(gm.graph_payload(g, expanded)) == []


def test_a_module_called_twice_around_another_no_longer_draws_a_cycle():
    tl.manual_seed(0)
    shared = nn.Linear(4, 4)
    model = nn.Sequential(shared, nn.Tanh(), shared)
    g = build_graph(model(tl.randn(2, 4)).sum(), model)
    assert {"group:0 (call 1)", "group:0 (call 2)"} <= set(g.groups)
    assert "run:0 (call 1-2)" not in g.groups, "a run around the Tanh between the calls would feed itself"
    assert graph_checks.upward_edges(gm.graph_payload(g, set())) == []
    # (a one-op group is never folded: each call's Linear box names its call on its second line)
    subs = {b["sub"].split(" · ")[0] for b in gm.graph_payload(g, set())["boxes"] if b["label"] == "Linear"}
    assert subs == {"Sequential[0] (call 1)", "Sequential[0] (call 2)"}


# ---- names: never a bare index ------------------------------------------------------------------------------------
_TYPE_COUNT = re.compile(r"\d+ (ops?|time steps?)")


def bare_index_texts(payload: dict) -> list[str]:
    """Every label, second line, frame label and tip text that shows a bare index for a module: "5", "1 BatchNorm2d",
    "0 · (5, 3)", "Add 5" (a count of ops, "12 ops", is not one)."""
    texts = []
    for b in payload["boxes"]:
        texts += [b["label"], b["sub"]]
        texts += [v for k, v in b["tip"] if k in ("group", "module")]
    texts += [f["label"] for f in payload["frames"]]
    bad = []
    for text in texts:
        for part in text.split(" · "):
            index_first = re.match(r"\d", part) and not _TYPE_COUNT.fullmatch(part)  # "1 BatchNorm2d", "0"
            if index_first or re.fullmatch(r"[A-Z][A-Za-z0-9]* \d+", part):  # "Add 5", "Linear 0"
                bad.append(text)
    return bad


@pytest.mark.parametrize("name", learner_models.NAMES)
def test_no_bare_index_on_the_learner_models(learner, name):
    _, _, g = learner[name]
    for expanded in (gm.default_expanded(g), set(g.groups), set()):
        assert bare_index_texts(gm.graph_payload(g, expanded)) == []


def test_sequential_children_are_named_by_their_parents_path(learner):
    model, _, g = learner["resnet"]
    ex = gm.default_expanded(g) | {"group:layer2", "group:layer2.0", "group:layer2.0.downsample"}
    p = gm.graph_payload(g, ex)
    labels = {b["label"] for b in p["boxes"]}
    subs = {b["sub"].split(" · ")[0] for b in p["boxes"]}
    assert {"downsample.0", "downsample.1"} <= labels | subs
    assert not {"0", "1"} & (labels | subs)
    _, _, g = learner["resmlp"]
    p = gm.graph_payload(g, {"group:blocks", "run:blocks.0-199", "group:blocks.7"})
    assert "blocks.5" in {b["label"] for b in p["boxes"]}
    add = next(b for b in p["boxes"] if b["label"] == "Add")
    assert add["sub"] == "blocks.7 · (4, 8)"


def test_a_tutorials_sequential_mlp_names_its_layers_by_the_model():
    """Tutorials 00 and 02 build ``nn.Sequential(nn.Linear, nn.ReLU, nn.Linear)``: no "Linear" over "0 · ..."."""
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    loss = F.cross_entropy(model(tl.randn(5, 4)), tl.tensor([0, 1, 1, 0, 1]))
    g = build_graph(loss, model)
    for expanded in (gm.default_expanded(g), set(g.groups), set()):
        p = gm.graph_payload(g, expanded)
        assert bare_index_texts(p) == []
    p = gm.graph_payload(g, set(g.groups))
    subs = {b["sub"] for b in p["boxes"] if b["label"] in ("Linear", "weight")}
    assert subs == {"Sequential[0] · (5, 3)", "Sequential[2] · (5, 2)", "Sequential[0] · (3, 4)",
                    "Sequential[2] · (2, 3)"}
    lin = next(n for n in g.nodes if n.label == "Linear" and n.shape == (5, 3))
    assert dict(map(tuple, gm.node_tip(g, lin)))["module"] == "Sequential[0]"
    # nothing folded: each layer is one op, and a group of one op is never folded, so its op box names the layer
    folded = {b["sub"].split(" · ")[0] for b in gm.graph_payload(g, set())["boxes"] if b["kind"] == "op"}
    assert {"Sequential[0]", "Sequential[1]", "Sequential[2]"} <= folded


def test_a_top_level_sequential_of_identical_blocks_folds_with_a_named_label():
    tl.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(3)])
    g = build_graph(model(tl.randn(2, 4)).sum(), model)
    run = g.groups["run:0-2"]
    assert run.label == "Sequential[0–2] ×3"
    assert [g.groups[c].short for c in run.children] == ["Sequential[0]", "Sequential[1]", "Sequential[2]"]
    assert g.groups["group:1.0"].short == "Sequential[1].0"


# ---- recurrent layers by layer and time step ----------------------------------------------------------------------
def test_lstm_lm_is_one_layer_node_per_layer_with_its_gates_saved(learner):
    _, _, g = learner["lstm"]
    layers = [c for c in g.groups["group:rnn"].children if g.groups[c].marker == "layer"]
    assert layers == ["group:rnn.l0", "group:rnn.l1", "group:rnn.l2"]
    for lid in layers:
        layer = g.groups[lid]
        fused = f"{lid}.LSTMLayer"
        assert layer.children == [fused], "no time steps of its own: one layer node runs them, in a group of its own"
        assert g.groups[fused].marker == "fused" and len(g.groups[g.groups[fused].children[0]].children) == 16
        ops = [g.nodes[i] for i in layer.members + g.groups[fused].members if g.nodes[i].kind == "op"]
        (node,) = [n for n in ops if n.label == "LSTMLayer"]
        assert any(n.label == "Linear" and n.shape == (16, 4, 512) for n in ops)  # the input projection
        assert node.shape == (16, 4, 256)  # [h | c] after each of the 16 steps
        assert (16, 4, 512) in [tuple(r["shape"]) for r in node.saved], "the gates of every step, for the views"
    n_ops = sum(1 for n in g.nodes if n.kind == "op" and (n.module or "").startswith("rnn"))
    assert n_ops < 30, "an LSTM of 3 layers x 16 steps is a handful of nodes, not 800"


def test_lstm_lm_by_steps_is_grouped_by_layer_then_time_step(lstm_by_steps):
    _, _, g = lstm_by_steps
    rnn = g.groups["group:rnn"]
    assert rnn.members == [] or all(g.nodes[i].kind == "op" for i in rnn.members)
    layers = [c for c in rnn.children if g.groups[c].marker == "layer"]
    assert layers == ["group:rnn.l0", "group:rnn.l1", "group:rnn.l2"]
    assert [g.groups[c].short for c in layers] == ["layer 0", "layer 1", "layer 2"]
    for li, lid in enumerate(layers):
        layer = g.groups[lid]
        (run,) = [c for c in layer.children if g.groups[c].kind == "run"]
        assert g.groups[run].label == "t = 0–15 ×16" and len(g.groups[run].children) == 16
        assert layer.children == [run], "every step folds: the 16 steps of an LSTM layer are alike"
        # the layer holds the input projection of the whole sequence (4 gates x 128) and its weights
        direct = [g.nodes[i] for i in layer.members]
        assert any(n.label == "Linear" and n.shape == (16, 4, 512) for n in direct)
        assert {n.label for n in direct if n.kind == "param"} >= {f"rnn.weight_ih_l{li}", f"rnn.weight_hh_l{li}"}
        for t, sid in enumerate(g.groups[run].children):
            step = ops_in(g, f"rnn.l{li}.t{t}")
            assert sid == f"group:rnn.l{li}.t{t}" and g.groups[sid].short == f"t = {t}"
            kinds = [n.label for n in step]  # LSTM: 3 sigmoid gates, tanh of the candidate and of the cell
            assert kinds.count("Sigmoid") == 3 and kinds.count("Tanh") == 2 and kinds.count("Linear") == 1
    # each step reads the state of the step before it, never a later one
    step_of = {n.index: int(n.module.rsplit(".t", 1)[1]) for n in g.nodes if n.module and ".t" in n.module}
    for s, d, _, _ in g.edges:
        if s in step_of and d in step_of and g.nodes[s].module.split(".")[1] == g.nodes[d].module.split(".")[1]:
            assert step_of[d] in (step_of[s], step_of[s] + 1)
    n_lstm_ops = sum(1 for n in g.nodes if n.kind == "op" and (n.module or "").startswith("rnn"))
    in_steps = sum(1 for n in g.nodes if n.kind == "op" and n.index in step_of)
    assert in_steps > 0.9 * n_lstm_ops, "the steps hold the work; not one flat group of 800 ops"


def test_lstm_step_op_labels_name_their_step(lstm_by_steps):
    _, _, g = lstm_by_steps
    p = gm.graph_payload(g, {"group:rnn", "group:rnn.l1", "run:rnn.l1.t0-15", "group:rnn.l1.t4"})
    subs = {b["sub"] for b in p["boxes"] if b["kind"] == "op"}
    assert "t = 4 · (4, 512)" in subs  # the recurrent matmul of step 4, as its frame names the step
    labels = {b["label"] for b in p["boxes"] if b["kind"] == "group"}
    assert {"t = 3", "t = 5", "layer 0", "layer 2"} <= labels
    tip = dict(map(tuple, gm.group_tip(g, "run:rnn.l1.t0-15")))
    assert tip["steps"] == "16 identical time steps"


class _One(nn.Module):
    def __init__(self, kind: str, **kw):
        super().__init__()
        self.rnn = getattr(nn, kind)(3, 4, **kw)

    def forward(self, x):
        return self.rnn(x)[0].sum()


@nn.recurrent_by_steps()
def test_bidirectional_layers_run_their_steps_in_opposite_orders():
    tl.manual_seed(0)
    model = _One("LSTM", num_layers=2, bidirectional=True)
    g = build_graph(model(tl.randn(3, 2, 3)), model)
    layers = [c for c in g.groups["group:rnn"].children if g.groups[c].marker == "layer"]
    assert layers == ["group:rnn.l0", "group:rnn.l0_reverse", "group:rnn.l1", "group:rnn.l1_reverse"]
    assert g.groups["group:rnn.l0_reverse"].short == "layer 0 reverse"
    assert g.groups["run:rnn.l1_reverse.t0-2"].label == "t = 0–2 ×3"
    step = {n.index: (n.module.rsplit(".", 2)[1], int(n.module.rsplit(".t", 1)[1]))
            for n in g.nodes if n.module and ".t" in n.module}
    for s, d, _, _ in g.edges:
        if s in step and d in step and step[s][0] == step[d][0] and step[s][1] != step[d][1]:
            forward = not step[s][0].endswith("_reverse")
            assert step[d][1] == step[s][1] + (1 if forward else -1)
    for expanded in (gm.default_expanded(g), set(g.groups)):
        assert graph_checks.upward_edges(gm.graph_payload(g, expanded)) == []


@nn.recurrent_by_steps()
def test_packed_sequences_step_groups_split_where_the_batch_shrinks():
    tl.manual_seed(0)
    model = _One("LSTM")
    out, (h, _) = model.rnn(pack_sequence([tl.randn(4, 3), tl.randn(2, 3), tl.randn(1, 3)]))
    g = build_graph(out.data.sum() + h.sum(), model)
    steps = [c for c in g.groups["group:rnn.l0"].children]
    # batch sizes 3, 2, 1, 1: steps 1 and 2 drop finished sequences, so only steps of one batch size are alike
    assert steps == [f"group:rnn.l0.t{t}" for t in range(4)]
    shapes = [{n.shape for n in ops_in(g, f"rnn.l0.t{t}") if n.label == "Tanh"} for t in range(4)]
    assert shapes == [{(3, 4)}, {(2, 4)}, {(1, 4)}, {(1, 4)}]
    for expanded in (gm.default_expanded(g), set(g.groups)):
        assert graph_checks.upward_edges(gm.graph_payload(g, expanded)) == []


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_layer_nodes_one_per_layer_and_direction(kind, bidirectional):
    tl.manual_seed(0)
    model = _One(kind, num_layers=2, bidirectional=bidirectional)
    g = build_graph(model(tl.randn(4, 2, 3)), model)
    dirs = ["", "_reverse"] if bidirectional else [""]
    for layer in range(2):
        for d in dirs:
            ops = ops_in(g, f"rnn.l{layer}{d}") + ops_in(g, f"rnn.l{layer}{d}.{kind}Layer")
            assert [n.label for n in ops].count(f"{kind}Layer") == 1, [n.label for n in ops]
    for expanded in (gm.default_expanded(g), set(g.groups)):
        assert graph_checks.upward_edges(gm.graph_payload(g, expanded)) == []


@nn.recurrent_by_steps()
@pytest.mark.parametrize("kind,sigmoids,tanhs", [("GRU", 2, 1), ("RNN", 0, 1)])
def test_gru_and_rnn_steps(kind, sigmoids, tanhs):
    tl.manual_seed(0)
    model = _One(kind)
    g = build_graph(model(tl.randn(4, 2, 3)), model)
    run = g.groups["run:rnn.l0.t0-3"]
    assert run.label == "t = 0–3 ×4" and run.parent == "group:rnn.l0"
    assert g.groups["group:rnn.l0"].type_name.startswith(f"{kind} layer")
    for t in range(4):
        labels = [n.label for n in ops_in(g, f"rnn.l0.t{t}")]
        assert labels.count("Sigmoid") == sigmoids and labels.count("Tanh") == tanhs


def test_a_learners_loop_over_an_lstm_cell_is_one_group_per_call_folded_into_a_run():
    class Loop(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell, self.head = nn.LSTMCell(3, 4), nn.Linear(4, 1)

        def forward(self, x):
            hc = None
            for t in range(x.shape[0]):
                hc = self.cell(x[t], hc)
            return self.head(hc[0]).sum()

    tl.manual_seed(0)
    model = Loop()
    g = build_graph(model(tl.randn(5, 2, 3)), model)
    run = g.groups["run:cell (call 1-5)"]
    assert run.label == "cell (calls 1–5) ×5"
    assert run.children == [f"group:cell (call {i})" for i in range(1, 6)]
    for i in range(1, 6):
        assert [n.label for n in ops_in(g, f"cell (call {i})")].count("Sigmoid") == 3
    assert dict(map(tuple, gm.group_tip(g, run.id)))["calls"] == "5 identical calls of the same module"
    p = gm.graph_payload(g, set())
    assert "cell (calls 1–5) ×5" in {b["label"] for b in p["boxes"]}
    for expanded in (set(), set(g.groups)):
        assert graph_checks.upward_edges(gm.graph_payload(g, expanded)) == []
    boxes = gm.graph_payload(g, set(g.groups))["boxes"]
    assert ("weight_hh", "cell · (16, 4)") in {(b["label"], b["sub"]) for b in boxes}


# ---- the core's side: markers only while recorded, and always popped ----------------------------------------------
def test_markers_are_pushed_only_while_scopes_are_recorded_and_always_popped(monkeypatch):
    lstm = nn.LSTM(3, 4)
    requested = sites.lines_requested()
    sites.end_requested_lines()  # (importing the widgets asks for lines until an optimizer steps: nothing records now)
    sites.record_scopes(False)
    y, _ = lstm(tl.randn(2, 1, 3))
    assert not hasattr(y.grad_fn, "origin")
    if requested:
        sites.request_lines()
    sites.record_scopes(True)
    with nn.recurrent_by_steps():
        y, _ = lstm(tl.randn(2, 1, 3))
    assert sites.context.scope == ()
    step_ops = [n for n in _walk(y.grad_fn) if any(isinstance(e, sites.Marker) for e in n.origin.scope)]
    assert step_ops and all(n.origin.module is lstm for n in step_ops), "a marker is not a module"
    from tinygrad_like.ops import recurrent

    calls = 0
    cell = recurrent.lstm_cell

    def failing(*args):
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("boom")
        return cell(*args)

    monkeypatch.setattr(recurrent, "lstm_cell", failing)
    with nn.recurrent_by_steps(), pytest.raises(RuntimeError, match="boom"):
        lstm.forward(tl.randn(3, 1, 3))  # (not through Module.__call__: the layer's and the step's scopes restored)
    assert sites.context.scope == ()

    def layer_fails(self, *args):
        raise RuntimeError("boom in the layer node")

    monkeypatch.setattr(recurrent.LSTMLayer, "forward", layer_fails)
    with pytest.raises(RuntimeError, match="boom in the layer node"):
        lstm.forward(tl.randn(3, 1, 3))
    assert sites.context.scope == ()


def _walk(fn):
    seen, stack, out = set(), [fn], []
    while stack:
        f = stack.pop()
        if id(f) in seen or not isinstance(f, tl.autograd.Function):
            continue
        seen.add(id(f))
        out.append(f)
        stack.extend(f.next or ())
    return out


def test_a_bare_lstm_as_the_model_still_groups_by_layer_and_step():
    tl.manual_seed(0)
    lstm = nn.LSTM(3, 4, 2)
    with nn.recurrent_by_steps():
        out, _ = lstm(tl.randn(5, 2, 3))
    for model in (None, lstm):  # (without a model: the outermost module recorded)
        g = build_graph(out.sum(), model)
        assert g.groups["group:l1"].label == "LSTM · layer 1" and g.groups["group:l1"].short == "layer 1"
        assert g.groups["run:l0.t0-4"].label == "t = 0–4 ×5"
        assert g.groups["group:l0.t2"].label == "LSTM · layer 0 · t = 2"


def test_a_loop_over_a_cell_outside_any_module_is_one_group_per_call():
    """A learner's notebook loop: the cell is the outermost module, called once per step."""
    tl.manual_seed(0)
    cell = nn.GRUCell(3, 4)
    h, x = None, tl.randn(4, 2, 3)
    for t in range(4):
        h = cell(x[t], h)
    for model in (None, cell):
        g = build_graph(h.sum(), model)
        run = g.groups["run:GRUCell (call 1-4)"]
        assert run.label == "GRUCell (calls 1–4) ×4" and len(run.children) == 4
        assert [n.label for n in ops_in(g, "GRUCell (call 3)")].count("Sigmoid") == 2
        for expanded in (set(), set(g.groups)):
            assert graph_checks.upward_edges(gm.graph_payload(g, expanded)) == []
    g = build_graph(cell(x[0]).sum(), cell)
    assert g.groups == {}, "called once, the model itself is no group"


def test_a_model_called_twice_in_one_graph_is_two_groups():
    """A siamese loss: ``model(a)`` and ``model(b)`` in one graph are two boxes, their layers inside each."""
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh())
    loss = (model(tl.randn(2, 3)) - model(tl.randn(2, 3))).pow(2).sum()
    g = build_graph(loss, model)
    assert {"group:Sequential (call 1)", "group:Sequential (call 2)", "group:Sequential (call 2).0"} <= set(g.groups)
    assert g.groups["group:Sequential (call 2).0"].short == "Sequential (call 2).0"
    for expanded in (set(), set(g.groups)):
        p = gm.graph_payload(g, expanded)
        assert graph_checks.upward_edges(p) == [] and bare_index_texts(p) == []
