"""GraphView and BackwardStepper without a browser: the graph model, its hierarchy and folding, the layout's
coordinates, the payload the browser draws, the static SVG, and the views' Python API (selection, expanding,
stepping, replay, errors)."""

from __future__ import annotations

import gc
import importlib.util
import json
import weakref
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like import events
from tinygrad_like.widgets import BackwardStepper, Dashboard, GraphView, build_graph, record_timings
from tinygrad_like.widgets import graph_model as gm
from tinygrad_like.widgets.graph_model import NO_LINE, NOT_COMPUTED

nn, F = tl.nn, tl.nn.functional


def mlp_loss(seed=0):
    tl.manual_seed(seed)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    return m, F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))


def _load_resmlp():
    """The residual MLP the graph benchmarks draw (``benchmarks/_resmlp.py``): one model for both."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "_resmlp.py"
    spec = importlib.util.spec_from_file_location("tl_bench_resmlp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


resmlp_loss = _load_resmlp().make  # (n_blocks, seed=0) -> (model, loss): fc1, relu, fc2, residual add a block


def node(g, label):
    return next(n for n in g.nodes if n.label == label)


def overlaps(boxes, pad=0.0):
    """Pairs of boxes whose rectangles intersect (centre coordinates, as in the payload)."""
    out = []
    rects = sorted((b["x"] - b["w"] / 2, b["y"] - b["h"] / 2, b["x"] + b["w"] / 2, b["y"] + b["h"] / 2, b["id"])
                    for b in boxes)
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            if b[0] >= a[2] + pad:
                break
            if a[1] < b[3] + pad and b[1] < a[3] + pad:
                out.append((a[4], b[4]))
    return out


# ---- the model --------------------------------------------------------------------------------------------
def test_graph_model_names_shapes_inputs_and_edges():
    m, loss = mlp_loss()
    g = build_graph(loss, m)
    assert sorted(n.label for n in g.nodes) == sorted(["0.weight", "0.bias", "2.weight", "2.bias", "Linear", "Linear",
                                                       "Relu", "CrossEntropy", "Sum", "Div", "output"])
    kinds = {n.label: n.kind for n in g.nodes}
    assert kinds["0.weight"] == "param" and kinds["output"] == "output" and kinds["Relu"] == "op"
    shapes = {(g.nodes[s].label, g.nodes[d].label): lab for s, d, _, lab in g.edges}
    assert shapes[("0.weight", "Linear")] == "(8, 4)" and shapes[("Relu", "Linear")] == "(5, 8)"
    # each input slot is named from the op's forward signature
    lin = next(n for n in g.nodes if n.label == "Linear" and any(g.nodes[s].label == "2.weight"
                                                                  for s, d, _, _ in g.edges if d == n.index))
    slots = {g.nodes[s].label: lin.inputs[slot] for s, d, slot, _ in g.edges if d == lin.index}
    assert slots == {"Relu": "input", "2.weight": "weight", "2.bias": "bias"}
    assert all(n.grad == NOT_COMPUTED for n in g.nodes if n.kind == "param")
    loss.backward()
    assert all(n.grad.startswith("(") for n in build_graph(loss, m).nodes if n.kind == "param")
    # the same graph gives the same indices (ids survive a rebuild)
    assert [n.label for n in build_graph(loss, m).nodes] == [n.label for n in g.nodes]


def test_stale_saved_tensor_with_versions_and_the_write_site():
    x = tl.randn(3, requires_grad=True)
    h = x * 1.0
    y = (h * h).sum()
    with tl.no_grad():
        h.add_(1)  # moves the version of a tensor the Mul saved
    g = build_graph(y)
    stale = [g.nodes[i] for i in g.stale_nodes]
    assert [n.label for n in stale] == ["Mul"]
    row = stale[0].saved[0]
    assert (row["saved_version"], row["current_version"], row["stale"]) == (0, 1, True)
    assert "add_ at" in row["writes"][0] and "test_widgets_graph.py" in row["writes"][0]
    assert not stale[0].stale_by_optimizer
    notes = gm.graph_notes(g, len(g.nodes))
    assert notes[0]["level"] == "error" and "modified in place" in notes[0]["text"]


def test_optimizer_made_graph_stale_is_said_in_those_words():
    m, loss = mlp_loss()
    opt = tl.optim.SGD(m.parameters(), lr=0.1)
    F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,))).backward()
    opt.step()  # updates the weights the old loss's Linear nodes saved
    g = build_graph(loss, m)
    assert g.stale_nodes and all(g.nodes[i].stale_by_optimizer for i in g.stale_nodes)
    text = gm.graph_notes(g, len(g.nodes))[0]["text"]
    assert "stale" in text and "optimizer step" in text and "Run the forward pass again" in text


def test_hierarchy_by_module_path_and_runs_of_identical_blocks():
    m, loss = resmlp_loss(6)
    g = build_graph(loss, m)
    assert {"group:blocks", "group:blocks.3", "group:blocks.3.fc1", "group:inp", "group:head"} <= set(g.groups)
    run = g.groups["run:blocks.0-5"]
    assert run.kind == "run" and run.label == "blocks.0–5 ×6" and run.parent == "group:blocks"
    assert run.children == [f"group:blocks.{i}" for i in range(6)]
    assert g.groups["group:blocks.3"].parent == run.id
    w = node(g, "blocks.3.fc1.weight")
    assert w.module == "blocks.3.fc1" and g.chains[w.index] == ("group:blocks", run.id, "group:blocks.3",
                                                                 "group:blocks.3.fc1")
    # ops between two modules' ops belong to the module holding both (inferred when no scope was recorded)
    relus = [n for n in g.nodes if n.label == "Relu"]
    assert sorted(n.module for n in relus) == [f"blocks.{i}" for i in range(6)]


def test_blocks_that_differ_do_not_fold_into_a_run():
    tl.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 8), nn.Linear(8, 3))  # 1 is like neither 0 nor 2
    loss = m(tl.randn(2, 4)).sum()
    g = build_graph(loss, m)
    assert not any(gid.startswith("run:") for gid in g.groups)
    m2 = nn.Sequential(*[nn.Linear(8, 8) for _ in range(4)], nn.Linear(8, 2))
    g2 = build_graph(m2(tl.randn(2, 8)).sum(), m2)
    assert [gid for gid in g2.groups if gid.startswith("run:")] == ["run:0-3"]


def test_default_view_of_a_2000_op_graph_is_folded_to_at_most_60_boxes():
    m, loss = resmlp_loss(500)  # 500 blocks x 4 ops + the rest: over 2,000 ops
    g = build_graph(loss, m)
    assert len(g.ops) > 2000
    expanded = gm.default_expanded(g)
    boxes, _ = gm.boxes_for(g, expanded)
    assert 3 <= len(boxes) <= 60
    assert any(b.label == "blocks.0–499 ×500" for b in boxes)
    # a small graph is shown whole
    m2, loss2 = mlp_loss()
    g2 = build_graph(loss2, m2)
    assert len(gm.boxes_for(g2, gm.default_expanded(g2))[0]) == len(g2.nodes)


@pytest.mark.parametrize("n_blocks,expand", [(3, "all"), (6, "default"), (40, "default"), (40, "run"),
                                             (40, "all"), (500, "default")])
def test_layout_has_no_overlapping_boxes_and_edges_run_downwards(n_blocks, expand):
    m, loss = resmlp_loss(n_blocks)
    g = build_graph(loss, m)
    ex = {"all": set(g.groups), "default": gm.default_expanded(g),
          "run": gm.default_expanded(g) | {"run:blocks.0-39", "group:blocks.7", "group:blocks.7.fc2"}}[expand]
    p = gm.graph_payload(g, ex)
    assert not overlaps(p["boxes"])
    for e in p["edges"]:
        s, t = p["boxes"][e["s"]], p["boxes"][e["t"]]
        assert s["y"] < t["y"]  # inputs above, the loss below
        assert e["points"][0][1] == pytest.approx(s["y"] + s["h"] / 2)
        assert e["points"][-1][1] == pytest.approx(t["y"] - t["h"] / 2)
        assert all(a[1] <= b[1] for a, b in zip(e["points"], e["points"][1:]))
    # every node is shown by exactly one box, and a box lists the nodes it stands for
    assert sorted(i for b in p["boxes"] for i in b["nodes"]) == list(range(len(g.nodes)))
    assert all(i in p["boxes"][p["owner"][i]]["nodes"] for i in range(len(g.nodes)))
    # a frame holds every box whose nodes all sit inside its group
    for f in p["frames"]:
        for b in p["boxes"]:
            if b["id"] != f["id"] and all(f["id"] in g.chains[i] for i in b["nodes"]):
                assert f["x"] <= b["x"] - b["w"] / 2 and b["x"] + b["w"] / 2 <= f["x"] + f["w"], (f, b)
                assert f["y"] <= b["y"] - b["h"] / 2 and b["y"] + b["h"] / 2 <= f["y"] + f["h"], (f, b)
    json.dumps(p)  # the payload is plain JSON
    assert_frames_are_clean(g, p)


def _rect(d: dict, centred: bool) -> tuple:
    if centred:
        return d["x"] - d["w"] / 2, d["y"] - d["h"] / 2, d["x"] + d["w"] / 2, d["y"] + d["h"] / 2
    return d["x"], d["y"], d["x"] + d["w"], d["y"] + d["h"]


def _meet(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def assert_frames_are_clean(g, p) -> None:
    """A frame holds no box from outside its group; two frames either nest or stay apart; a frame's label
    row fits (the frame is at least as wide as its label)."""
    frames = {f["id"]: f for f in p["frames"]}
    for f in p["frames"]:
        fr = _rect(f, False)
        for b in p["boxes"]:
            outside = not any(f["id"] in g.chains[i] for i in b["nodes"])
            if outside:
                assert not _meet(fr, _rect(b, True)), f"{b['label']} ({b['id']}) intrudes into frame {f['id']}"
        assert f["w"] >= len(f["label"]) * 6.0, f"the label of {f['id']} does not fit"
        for h in p["frames"]:
            if h is f:
                continue
            hr = _rect(h, False)
            nested = g.groups[h["id"]].parent is not None and _is_inside(g, h["id"], f["id"])
            if nested:
                assert fr[0] < hr[0] and hr[2] < fr[2] and fr[1] < hr[1] and hr[3] < fr[3], (h["id"], f["id"])
                assert hr[1] >= fr[1] + 14, f"{h['id']} covers the label row of {f['id']}"
            elif not _is_inside(g, f["id"], h["id"]):
                assert not _meet(fr, hr), f"frames {f['id']} and {h['id']} overlap"
    assert set(frames) <= set(g.groups)


def _is_inside(g, inner: str, outer: str) -> bool:
    parent = g.groups[inner].parent
    while parent is not None:
        if parent == outer:
            return True
        parent = g.groups[parent].parent
    return False


def test_frames_stay_clean_on_a_model_with_nested_modules_and_shared_layers():
    """Nested modules (a block holding an MLP), a head beside the blocks, and an unframed module between."""
    class MLP(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.up, self.act, self.down = nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d)

        def forward(self, x):
            return self.down(self.act(self.up(x)))

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.norm, self.mlp = nn.LayerNorm(d), MLP(d)

        def forward(self, x):
            return x + self.mlp(self.norm(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem, self.blocks = nn.Linear(4, 8), nn.Sequential(*[Block(8) for _ in range(3)])
            self.head, self.aux = nn.Linear(8, 3), nn.Linear(8, 3)

        def forward(self, x):
            h = self.blocks(self.stem(x))
            return self.head(h) + self.aux(h.tanh())

    tl.manual_seed(0)
    m = Net()
    loss = F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))
    g = build_graph(loss, m)
    for ex in (set(g.groups), gm.default_expanded(g), {"group:blocks", "group:blocks.1"},
               {"group:blocks", "group:blocks.1", "group:blocks.1.mlp"}):
        p = gm.graph_payload(g, ex)
        assert not overlaps(p["boxes"])
        assert_frames_are_clean(g, p)
    assert any(f["id"] == "group:blocks.1.mlp" for f in gm.graph_payload(g, set(g.groups))["frames"])


def test_a_module_used_twice_folds_into_a_cycle_that_still_lays_out():
    tl.manual_seed(0)
    shared = nn.Linear(4, 4)
    m = nn.Sequential(shared, nn.Tanh(), shared)  # the same module twice: its group feeds itself through Tanh
    g = build_graph(m(tl.randn(2, 4)).sum(), m)
    p = gm.graph_payload(g, set())
    assert not overlaps(p["boxes"]) and len(p["edges"]) >= 2
    up = [e for e in p["edges"] if p["boxes"][e["s"]]["y"] > p["boxes"][e["t"]]["y"]]
    assert len(up) <= 1  # the edge that closes the cycle is drawn upwards; every other edge runs down


def test_origins_give_every_op_its_module_and_line():
    """With the widgets imported every op knows its module; after an optimizer step its line is recorded again once
    a graph view asks."""
    tl.sites.end_requested_lines()  # (what an optimizer's step does: the views of earlier tests asked for lines)
    m, loss = resmlp_loss(3)
    before = build_graph(loss, m)
    assert sorted(n.module for n in before.nodes if n.label == "Add") == ["blocks.0", "blocks.1", "blocks.2"]
    assert all(n.site is None for n in before.ops), "no view listened: no stack walk per op"
    view = GraphView(loss, m)
    assert view.details("n0")["rows"][4] == ["created at", NO_LINE]
    m, loss = resmlp_loss(3)  # the forward pass again, while the view is open
    g = build_graph(loss, m)
    view.close()
    adds = [n for n in g.nodes if n.label == "Add"]
    assert sorted(n.module for n in adds) == ["blocks.0", "blocks.1", "blocks.2"]
    # (the model and its loss are built in benchmarks/_resmlp.py: the user's lines are there)
    assert all(n.site and "_resmlp.py" in n.site for n in g.ops)
    rows = dict(map(tuple, gm.node_tip(g, adds[0])))
    assert rows["created at"].startswith("_resmlp.py:") and "in forward" in rows["created at"]
    m, loss = resmlp_loss(3)
    assert all(n.site for n in build_graph(loss, m).ops), "the view's request outlives it (until an optimizer steps)"
    tl.sites.end_requested_lines()
    m, loss = resmlp_loss(3)
    assert all(n.site is None for n in build_graph(loss, m).ops), "closed views and no request: no recording"


def test_text_fits_its_box():
    m, loss = resmlp_loss(3)
    g = build_graph(loss, m)
    for b in gm.graph_payload(g, set(g.groups))["boxes"]:
        assert gm.text_width(b["label"]) <= b["w"] - 8 and gm.text_width(b["sub"], gm.SUB_CHAR_W) <= b["w"] - 8


def test_long_chain_builds_without_recursion():
    x = tl.randn(2, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0
    g = build_graph(y.sum())
    assert len(g.nodes) == 10_003


def test_timings_from_a_profiled_run():
    m, _ = mlp_loss()
    with record_timings() as t:
        loss = F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))
        loss.backward()
    g = build_graph(loss, m, timings=t)
    ops = g.ops
    assert all(n.forward_s is not None and n.forward_s > 0 for n in ops if n.label == "Linear")
    assert all(n.backward_s is not None for n in ops)
    assert any(r[0] == "backward" for r in gm.node_tip(g, ops[0]))
    assert not events.ACTIVE


# ---- the static picture ------------------------------------------------------------------------------------
def test_static_svg_is_well_formed_and_shows_every_box():
    m, loss = resmlp_loss(6)
    view = GraphView(loss, m)
    svg = view.to_svg()
    root = ET.fromstring(svg)
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {b["label"] for b in view.widget.graph["boxes"]} <= texts
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == view.summary() == f"<GraphView: {len(view.model.nodes)} nodes, 0 stale>"
    assert "application/vnd.jupyter.widget-view+json" in bundle and bundle["image/svg+xml"] == svg
    view.close()


def _svg_text(svg: str) -> str:
    return " ".join(t.text or "" for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text"))


def test_static_svg_carries_the_notes_and_a_stepping_error():
    """What the live view says above its drawing is in the saved picture too."""
    m, loss = mlp_loss()
    opt = tl.optim.SGD(m.parameters(), lr=0.1)
    s = BackwardStepper(loss, m)
    F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,))).backward()
    opt.step()
    s.after_cell()
    s.run()
    text = _svg_text(s.to_svg())
    assert "This graph is stale" in text and "VersionMismatchError" in text
    s.close()


def test_dashboard_saves_a_static_picture_of_its_graph():
    m, loss = mlp_loss()
    dash = Dashboard(loss, m)
    bundle = dash._repr_mimebundle_()
    assert bundle["text/plain"].startswith("<Dashboard:")
    assert bundle["image/svg+xml"] == dash.views["Graph"].to_svg()
    assert {b["label"] for b in dash.views["Graph"].widget.graph["boxes"]} <= set(_svg_text(bundle["image/svg+xml"])
                                                                                   .split())
    dash.close()


# ---- GraphView ---------------------------------------------------------------------------------------------
def test_graph_view_select_reveal_details_and_toggle():
    m, loss = resmlp_loss(40)
    view = GraphView(loss, m)
    assert "tl-graph-view" in view.widget._dom_classes and "tl-view" in view.widget._dom_classes
    assert len(view.widget.graph["boxes"]) <= 60
    # select a parameter folded away inside blocks.0-39: its groups expand and it is selected
    view.select("blocks.17.fc2.weight")
    sel = view.selected_node
    assert sel.label == "blocks.17.fc2.weight" and view.selected == sel.id
    assert sel.id in {b["id"] for b in view.widget.graph["boxes"]}
    d = view.widget.details
    assert d["title"] == "blocks.17.fc2.weight" and ["shape", "(8, 8) float32"] in d["rows"]
    assert [".grad", NOT_COMPUTED] in d["rows"] and d["actions"] == ["collapse"]
    # a browser click on a box sets `selected`; Python answers with its details
    lin = next(b for b in view.widget.graph["boxes"] if b["label"] == "Linear" and "fc2" in b["sub"])
    view.widget.selected = lin["id"]
    rows = dict(map(tuple, view.widget.details["rows"]))
    assert rows["op"] == "Linear" and rows["module"] == "blocks.17.fc2" and rows["in: weight"].startswith(
        "blocks.17.fc2.weight")
    # the collapse action (a toggle message on a node) folds its innermost group of two ops or more (fc2, a group
    # of one op, never folds: its box would only hide the Linear)
    view.on_message({"type": "toggle", "id": lin["id"]})
    assert "group:blocks.17" not in view.expanded and view.selected == "group:blocks.17"
    assert "group:blocks.17" in {b["id"] for b in view.widget.graph["boxes"]}
    n_before = len(view.widget.graph["boxes"])
    view.on_message({"type": "toggle", "id": "group:blocks.17"})
    inside = [n for n in view.model.nodes if (n.module or "").startswith("blocks.17")]  # fc1, fc2: op, weight, bias
    assert len(inside) == 8 and len(view.widget.graph["boxes"]) == n_before - 1 + len(inside)
    view.collapse("blocks")
    assert not any(g.startswith(("group:blocks.", "run:")) for g in view.expanded)
    view.on_message({"type": "reveal", "node": lin["nodes"][0]})
    assert view.selected == lin["id"]
    with pytest.raises(KeyError, match="no group 'nope'"):
        view.expand("nope")
    with pytest.raises(KeyError, match="no node or group named"):
        view.select("nope")
    view.close()


def test_graph_view_redraws_after_an_inplace_write_and_after_backward():
    from tinygrad_like.widgets import _base

    x = tl.randn(3, requires_grad=True)
    h = x * 1.0
    y = (h * h).sum()
    view = GraphView(y, names={"x": x})
    assert not view.widget.graph["notes"] and not any(b["stale"] for b in view.widget.graph["boxes"])
    view._last_draw, _base._BUDGET.next_allowed = 0.0, 0.0
    with tl.no_grad():
        h.add_(1)  # a VersionBump event
    view.after_cell()
    assert any(b["stale"] for b in view.widget.graph["boxes"] if b["label"] == "Mul")
    assert view.widget.graph["notes"][0]["level"] == "error"
    view.close()
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    loss = (a * a).sum()
    view = GraphView(loss, names={"a": a})
    box = next(b for b in view.widget.graph["boxes"] if b["label"] == "a")
    tip = dict(map(tuple, box["tip"]))
    assert tip[".grad"] == NOT_COMPUTED
    assert box["kind"] == "leaf" and dict(map(tuple, view.details(box["id"])["rows"]))["kind"] == "leaf tensor"
    loss.backward()  # BackwardStep events: the view notices without being told
    view.after_cell()
    tip = dict(map(tuple, next(b for b in view.widget.graph["boxes"] if b["label"] == "a")["tip"]))
    assert tip[".grad"].startswith("(2,)")
    assert any("freed" in n["text"] for n in view.widget.graph["notes"])
    view.close()
    assert not events.ACTIVE


def test_unchanged_graph_view_does_no_work_after_a_cell():
    m, loss = mlp_loss()
    view = GraphView(loss, m)
    before = view.redraws
    tl.ones(3) + 1  # a cell that touches nothing the view shows
    view.after_cell()
    assert view.redraws == before
    view.close()


# ---- BackwardStepper ------------------------------------------------------------------------------------------
def test_stepper_steps_back_replays_and_names_gradients():
    m, loss = mlp_loss()
    s = BackwardStepper(loss, m)
    assert s.widget.stepper and "tl-backward-stepper" in s.widget._dom_classes
    assert "press Step" in s.widget.status and s.widget.state["total"] == 6
    names = []
    for _ in range(4):
        s.on_message({"type": "step", "n": 1})
        names.append(s.current_name)
    assert names == ["Div", "Sum", "CrossEntropy", "Linear"]
    st = s.widget.state
    assert st["cursor"] == 4 and len(st["steps"]) == 4
    boxes = s.widget.graph["boxes"]
    assert boxes[s.widget.graph["owner"][st["steps"][-1][0]]]["id"] == s.highlighted == s.selected
    # the Linear step sent gradients to its input, weight and bias: named, with their norms
    grads = dict(map(tuple, s.widget.details["grads"]))
    w2 = m[2].weight
    assert set(grads) == {"incoming", "input", "weight: 2.weight", "bias: 2.bias"}
    norm = float(np.linalg.norm(w2.grad.numpy().astype(np.float64)))
    assert grads["weight: 2.weight"] == f"(3, 8) |g| {norm:.4g}"
    edge_norms = dict((src, nrm) for src, nrm in st["steps"][-1][1])
    assert edge_norms[s.model.node_for(w2)] == pytest.approx(norm, rel=1e-5)
    filled = {s.model.nodes[i].label for i in st["filled"]}
    assert filled == {"2.weight", "2.bias"}
    # back: the drawing goes back one step; stepping again replays the recorded step (no new engine call)
    s.on_message({"type": "back"})
    assert s.widget.state["cursor"] == 3 and s.current_name == "CrossEntropy" and not s.widget.state["filled"]
    rec = s.records[3]
    s.on_message({"type": "step", "n": 1})
    assert s.records[3] is rec and len(s.records) == 4 and s.current_name == "Linear"
    s.on_message({"type": "run"})
    assert s.done and s.widget.state["done"] and s.widget.status.startswith("done: step 6 of 6")
    ref = {n: p.grad.numpy().copy() for n, p in m.named_parameters()}
    s.on_message({"type": "reset"})
    assert s.current is None and all(state == NOT_COMPUTED for _, state in s.leaf_grads())
    s.on_message({"type": "step", "n": 10})
    assert s.done
    for n, p in m.named_parameters():
        np.testing.assert_array_equal(p.grad.numpy(), ref[n])
    s.close()


def test_stepper_on_a_folded_graph_opens_its_node_and_reports_the_module():
    m, loss = resmlp_loss(40)
    s = BackwardStepper(loss, m)
    s.step(12)
    cur = s.model.node_for(s.current.node)
    assert s.model.nodes[cur].module.startswith("blocks.")
    assert s.highlighted == s.model.nodes[cur].id  # its own box: the run and the block around it opened
    assert f"({s.model.nodes[cur].module})" in s.widget.status
    s.close()


def test_stepper_shows_a_version_error_with_its_node_instead_of_raising():
    x = tl.randn(3, requires_grad=True)
    h = x * 1.0
    y = (h * h).sum()
    with tl.no_grad():
        h.add_(1)
    s = BackwardStepper(y)
    s.run()
    assert s.error is not None and not s.done
    err = s.widget.state["error"]
    assert "modified by an in-place operation" in err["text"] and s.model.nodes[err["node"]].label == "Mul"
    assert "stopped at step" in s.widget.status
    # the details show the node that failed (not the last good one), with its stale saved tensor
    assert s.widget.selected == s.model.nodes[err["node"]].id
    assert s.widget.details["title"].startswith("Mul") and any(r["stale"] for r in s.widget.details["saved"])
    with pytest.raises(ValueError, match="needs a tensor with a graph"):
        BackwardStepper(tl.ones(2))


def test_a_stepper_made_before_an_optimizer_step_turns_stale():
    m, loss = mlp_loss()
    s = BackwardStepper(loss, m)
    assert not s.model.stale_nodes
    opt = tl.optim.SGD(m.parameters(), lr=0.1)
    F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,))).backward()
    opt.step()
    s.after_cell()  # what the post-cell hook does
    assert s.model.stale_nodes and any("optimizer step" in n["text"] for n in s.widget.graph["notes"])
    assert any(b["stale"] for b in s.widget.graph["boxes"])
    s.run()
    assert s.error is not None and "VersionMismatchError" in s.widget.state["error"]["text"]
    s.close()


def test_stepper_from_a_graph_node_and_a_freed_graph():
    m, loss = mlp_loss()
    s = BackwardStepper(loss.grad_fn, m)  # what a following dashboard hands it
    s.run()
    assert s.done and all(p.grad is not None for p in m.parameters())
    m2, loss2 = mlp_loss()
    loss2.backward()
    s2 = BackwardStepper(loss2, m2)
    assert "freed its saved tensors" in s2.widget.status and s2.widget.state["freed"]
    grads = [p.grad.numpy().copy() for p in m2.parameters()]
    s2.step(3)  # refused: nothing runs, no gradient changes, the status still says why
    assert s2.cursor == 0 and s2.records == [] and s2.error is None
    assert all(np.array_equal(g, p.grad.numpy()) for g, p in zip(grads, m2.parameters()))
    assert "freed its saved tensors" in s2.widget.status
    s.close()
    s2.close()


# ---- the dashboard follows training ----------------------------------------------------------------------------
def test_refreshing_open_views_skips_the_views_a_following_dashboard_closed(capsys, monkeypatch):
    """The extension's end-of-cell refresh walks the open views; a following Dashboard met first replaces its tabs'
    views (closing them), and the walk must not then refresh the closed ones ("failed to refresh: ... is closed")."""
    from tinygrad_like.widgets import _base

    class Ordered(list):  # (a WeakSet's order is arbitrary: walk the dashboard first, as the failing order was)
        def add(self, v):
            self.append(v)

        def discard(self, v):
            if v in self:
                self.remove(v)

    m, loss = mlp_loss()
    dash = Dashboard(loss, m, follow=True)
    old = dash.views["Graph"]
    loss.backward(retain_graph=True)
    tl.optim.SGD(m.parameters(), lr=0.1).step()  # (the old graph is stale now: refreshing it would redraw it)
    newer = F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))
    monkeypatch.setattr(_base, "_OPEN", Ordered(sorted(_base._OPEN, key=lambda v: v is not dash)))
    _base.refresh_open_views()
    assert dash.views["Graph"] is not old and dash.views["Graph"].tensor is newer.grad_fn
    assert "failed to refresh" not in capsys.readouterr().err
    dash.close()


def test_dashboard_follow_shows_the_newest_graph_after_each_cell():
    m, loss = mlp_loss()
    dash = Dashboard(loss, m, follow=True)
    opt = tl.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(3):
        last = F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))
        opt.zero_grad()
        last.backward()
        opt.step()
    dash.after_cell()
    graph = dash.views["Graph"]
    assert graph.tensor is last.grad_fn and not graph.model.stale_nodes
    fresh = F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))
    dash.after_cell()
    stepper = dash.views["Backward"]
    assert stepper.loss is fresh.grad_fn
    stepper.run()
    assert stepper.done and stepper.error is None

    seen: list = []

    def train_step() -> None:  # the loss lives only inside the function: the last backward's graph is shown
        loss = F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        seen.append(loss.grad_fn)

    del fresh
    train_step()
    dash.after_cell()
    assert dash.views["Graph"].tensor is seen[-1]
    # (a graph whose backward ran cannot be stepped: the Backward tab says so and how to get one that can)
    assert dash.views["Backward"] is None and "cannot be stepped" in dash.tab.children[1].value
    dash.close()
    seen.clear()
    del dash, graph, stepper
    gc.collect()
    tl.zeros(1).add_(1)
    assert not events.ACTIVE


def test_views_do_not_keep_themselves_or_the_graph_alive():
    from tinygrad_like.widgets import KernelTimeline, StorageView

    w = tl.randn(3, requires_grad=True)
    loss = (w * w).sum()
    alive = weakref.ref(loss)
    views = [GraphView(loss), StorageView(), KernelTimeline(), BackwardStepper(loss)]
    views[-1].on_message({"type": "step", "n": 1})
    assert events.ACTIVE
    del views, loss
    gc.collect()
    tl.zeros(1).add_(1)  # an event: dead views' subscriptions remove themselves
    assert alive() is None and not events.ACTIVE


def test_only_writes_that_turn_a_saved_tensor_stale_redraw_the_graph_live(monkeypatch):
    """A training loop bumps every parameter at each step: the graph of an old loss redraws once, when its saved
    weights first move (the red borders appear), not at every later step; writes to tensors it did not save are
    ignored. The later steps' version numbers are caught up after the cell."""
    from tinygrad_like.widgets import _base

    monkeypatch.setattr(_base, "MAX_REFRESH_HZ", 1e9)  # no throttle: every live redraw the view asks for happens
    monkeypatch.setattr(_base, "LIVE_BUDGET", 1e9)  # (and no shared budget to wait for)
    monkeypatch.setattr(_base._BUDGET, "next_allowed", 0.0)
    model = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.ReLU(), tl.nn.Linear(4, 2))
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    loss = model(tl.randn(5, 3)).sum()
    view = GraphView(loss, model)
    n = view.redraws
    other = tl.zeros(3)
    other.add_(1)  # not saved by this graph
    assert view.redraws == n and not view._stale
    loss.backward()
    n = view.redraws  # (the backward redraws it: gradients filled, saved tensors freed)
    fresh = model(tl.randn(5, 3)).sum()
    fresh.backward(retain_graph=True)  # gradients for the steps; the graph keeps its saved tensors
    view2 = GraphView(fresh, model)
    m = view2.redraws
    opt.step()  # the first step: the saved weights move, the drawing turns stale at once
    assert view2.redraws == m + 1 and view2.model.stale_nodes
    for _ in range(3):
        opt.step()  # already drawn stale: no live redraw
    assert view2.redraws == m + 1 and view2._stale
    view2.after_cell()
    assert view2.redraws == m + 2 and not view2._stale
    view.close()
    view2.close()


def test_expanding_a_block_folded_in_a_run_opens_the_run_around_it():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x).relu()

    model = nn.Sequential(Block(), Block())
    view = GraphView(model(tl.randn(2, 4)).sum(), model)
    try:
        view.collapse("run:0-1")
        assert "group:0" not in {b["id"] for b in view.widget.graph["boxes"]}
        view.expand("0")  # the learner names the block, not the run's id
        assert {"run:0-1", "group:0"} <= view.expanded
        ids = {b["id"] for b in view.widget.graph["boxes"]}
        assert "run:0-1" not in ids and "group:1" in ids, ids
    finally:
        view.close()


def test_a_selected_group_names_its_module_as_a_node_does():
    """``view.selected_node.module`` works for a folded box too: a module group gives its path, a run of identical
    blocks the container holding them (found writing tutorial 09, where a click on a folded block had no module)."""
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x).relu()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.h = nn.Sequential(Block(), Block(), Block())
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.h(x))

    model = Net()
    view = GraphView(model(tl.randn(2, 4)).sum(), model)
    try:
        groups = view.model.groups
        assert groups["group:h.1"].module == "h.1" and groups["group:head"].module == "head"
        (run,) = [g for g in groups.values() if g.kind == "run"]
        assert run.path == "h.0-2" and run.module == "h"
        view.select(run.id)
        assert view.selected_node is run and view.selected_node.module == "h"
        node = next(n for n in view.model.nodes if n.module == "h.2.fc")
        view.select(node.index)
        assert view.selected_node.module == "h.2.fc"
    finally:
        view.close()


@pytest.mark.parametrize("cls", [GraphView, BackwardStepper])
def test_the_pause_and_close_buttons_messages_pause_resume_and_close_the_view(cls):
    """The toolbar's Pause / Resume / Close send {"type": "pause" | "resume" | "close"} (static/CONTRACT.md): they
    reach the view through the widget's message handler, the `paused` trait shows the state, a write while paused
    waits for Resume, and Close frees the view and closes its widget."""
    from tinygrad_like.widgets import _base

    x = tl.randn(3, requires_grad=True)
    w = tl.randn(3, requires_grad=True)
    view = cls((x * w).sum(), names={"x": x, "w": w})
    msg = view.widget._handle_custom_msg  # (what ipywidgets calls with a message from the browser)
    assert view.widget.paused is False and not view.paused
    msg({"type": "pause"}, [])
    assert view.widget.paused is True and view.paused
    before = view.redraws
    with tl.no_grad():
        w.mul_(2)  # modifies a tensor the graph saved: the view is stale, but paused it does not redraw
    view.after_cell()
    assert view.redraws == before and view._stale
    msg({"type": "resume"}, [])
    assert view.widget.paused is False and not view.paused
    assert view.redraws == before + 1 and not view._stale  # caught up once on resume
    assert any(b["stale"] for b in view.widget.graph["boxes"])
    widget = view.widget
    assert view in _base._OPEN and widget.comm is not None
    msg({"type": "close"}, [])
    assert view not in _base._OPEN
    assert widget.comm is None  # closed: ipywidgets no longer holds it
    assert "closed" in view._repr_mimebundle_()["text/plain"]


def test_the_graph_goes_to_the_browser_as_one_buffer_of_json():
    """``graph`` is a dict in Python and one binary buffer of UTF-8 JSON on the wire (graph.js decodes it): ipywidgets
    then has no nested state to search for buffers. NumPy numbers in it are sent as numbers."""
    from tinygrad_like.widgets.graph_widget import _graph_to_json

    m, loss = mlp_loss()
    view = GraphView(loss, m)
    try:
        state = view.widget.get_state("graph")["graph"]
        assert isinstance(state, memoryview)
        assert json.loads(bytes(state).decode("utf-8")) == json.loads(json.dumps(view.widget.graph))
        assert isinstance(view.widget.graph, dict)
        assert json.loads(bytes(_graph_to_json({"w": np.float32(1.5), "n": np.int64(3)}, None))) == {"w": 1.5, "n": 3}
        # what JSON has no word for: NaN becomes null (the browser's JSON.parse refuses NaN), keys become text, any
        # other object its text
        odd = {"nan": float("nan"), 2: "two", "dtype": tl.float32}
        assert json.loads(bytes(_graph_to_json(odd, None))) == {"nan": None, "2": "two", "dtype": str(tl.float32)}
    finally:
        view.close()
