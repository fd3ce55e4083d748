"""Edges routed around boxes and frame labels, and long skip connections on a lane of their own.

Measured with ``graph_checks`` on the payload the browser draws: the learners' models (nanoGPT, ResNet-18, the
LSTM language model, the 200-block residual MLP) at their default expansion, fully expanded and with each top-
or second-level group expanded alone, tutorial-sized models, and small hand-made graphs laid out by
``graph_layout`` directly (a skip edge around a frame, a wide row an edge must pass, random DAGs with frames).
"""

from __future__ import annotations

import random

import learner_models
import pytest

import tinygrad_like as tl
from tinygrad_like.widgets import build_graph
from tinygrad_like.widgets import graph_checks as checks
from tinygrad_like.widgets import graph_layout as gl
from tinygrad_like.widgets import graph_model as gm

nn, F = tl.nn, tl.nn.functional

#: the browser's arrowhead is this long and sits on the last segment of an edge (graph.js ARROW)
ARROW = 7.0


@pytest.fixture(scope="module")
def learner_graph():
    """``learner_graph(name)``: the graph of a learner's model, built once per module."""
    cache: dict[str, object] = {}

    def get(name: str):
        if name not in cache:
            model, loss = learner_models.make(name)
            cache[name] = build_graph(loss, model)
        return cache[name]

    return get


def expansions(g, which: str) -> dict[str, set[str]]:
    if which == "default":
        return {"default": gm.default_expanded(g)}
    if which == "full":
        return {"full": set(g.groups)}
    out = {}
    for top in g.top:  # each top-level group alone, and each of its children with it
        out[top] = {top}
        for child in g.groups[top].children:
            out[child] = {top, child}
    return out


def assert_routed(p: dict, where: str = "") -> None:
    """No edge through a box or a frame label, no overlapping boxes, and every edge leaves its source's bottom and
    enters its target's top (an edge drawn upwards, against a cycle, the other way round) on a segment long
    enough for the arrowhead."""
    assert checks.edge_box_crossings(p) == [], f"{where}: edges through boxes"
    assert checks.edge_label_crossings(p) == [], f"{where}: edges through frame labels"
    assert checks.box_overlaps(p) == [], f"{where}: overlapping boxes"
    assert checks.detached_edges(p) == [], f"{where}: edges off their boxes' bottom/top, or too short an arrow"
    for e in p["edges"]:  # (the same, spelled out for the message; and the arrowhead sits inside the top's width)
        s, t = p["boxes"][e["s"]], p["boxes"][e["t"]]
        pts = e["points"]
        sign = 1 if t["y"] > s["y"] else -1
        assert pts[0][1] == pytest.approx(s["y"] + sign * s["h"] / 2), f"{where}: {e} leaves {s['label']} mid-box"
        assert pts[-1][1] == pytest.approx(t["y"] - sign * t["h"] / 2), f"{where}: {e} enters {t['label']} mid-box"
        assert abs(pts[-1][0] - t["x"]) <= t["w"] / 2 - 5


@pytest.mark.parametrize("which", ["default", "full", "each group"])
@pytest.mark.parametrize("name", learner_models.NAMES)
def test_no_edge_crosses_a_box_or_a_frame_label_on_a_learners_model(learner_graph, name, which):
    g = learner_graph(name)
    for label, expanded in expansions(g, which).items():
        assert_routed(gm.graph_payload(g, expanded), f"{name} {label}")


def _tiny_gpt():
    tl.manual_seed(0)
    m = learner_models.GPT(vocab_size=20, block_size=8, n_layer=2, n_head=2, n_embd=16)
    idx = tl.randint(0, 20, (2, 8))
    return m, m(idx, tl.randint(0, 20, (2, 8)))[1]


def _cnn():  # the tutorials' digits CNN (07)
    tl.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1),
                      nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 10))
    return m, F.cross_entropy(m(tl.randn(2, 1, 8, 8)), tl.randint(0, 10, (2,)))


def _mlp():  # the tutorials' MLP (06)
    tl.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    return m, F.cross_entropy(m(tl.randn(5, 64)), tl.randint(0, 10, (5,)))


def _small_resnet():
    tl.manual_seed(0)
    m = learner_models.ResNet(layers=(1, 1, 1, 1), width=4)
    return m, F.cross_entropy(m(tl.randn(2, 3, 16, 16)), tl.randint(0, 10, (2,)))


def _resmlp():
    tl.manual_seed(0)
    m = learner_models.ResMLP(n_blocks=5, d=4)
    return m, (m(tl.randn(3, 4)) ** 2).mean()


@pytest.mark.parametrize("make", [_tiny_gpt, _cnn, _mlp, _small_resnet, _resmlp])
def test_no_edge_crosses_a_box_or_a_frame_label_on_tutorial_sized_models(make):
    model, loss = make()
    g = build_graph(loss, model)
    for label, expanded in {"default": gm.default_expanded(g), "full": set(g.groups), "none": set()}.items():
        assert_routed(gm.graph_payload(g, expanded), f"{make.__name__} {label}")


def test_the_residual_stream_is_one_straight_line(learner_graph):
    """In the expanded residual MLP, every block's Add sits on one vertical line and the skip edge from one Add to
    the next is that line; the blocks hang beside it. In nanoGPT each block's two Adds share a line too."""
    g = learner_graph("resmlp")
    p = gm.graph_payload(g, set(g.groups))
    adds = [i for i, b in enumerate(p["boxes"]) if b["label"] == "Add"]
    assert len(adds) == 200 and len({p["boxes"][i]["x"] for i in adds}) == 1
    add_set = set(adds)
    skips = [e for e in p["edges"] if e["s"] in add_set and e["t"] in add_set]
    assert len(skips) == 199
    for e in skips:
        assert len({x for x, _ in e["points"]}) == 1, e["points"]  # straight down, no kink
        frames_passed = [f for f in p["frames"] if f["label"].endswith("ResBlock · 4 ops")
                         and f["y"] < e["points"][0][1] < e["points"][-1][1] < f["y"] + f["h"]]
        assert frames_passed == []  # (it enters the next block's frame only at that block's Add)

    g = learner_graph("gpt")
    p = gm.graph_payload(g, set(g.groups))
    block_adds = [b for b in p["boxes"] if b["label"] == "Add" and ".h." in b["sub"] + str(b["tip"])]
    assert len(block_adds) == 12 and len({b["x"] for b in block_adds}) == 1


# ---- small hand-made graphs, laid out by graph_layout directly ----------------------------------------------------
def lay_out(widths: list[float], edges: list[tuple[int, int]], chains: list[tuple] | None = None,
            labels: dict[str, str] | None = None) -> dict:
    """Lay out boxes of the given widths (frames: each box's chain of frame ids, outermost first; ``labels``: each
    frame's label) and return a payload as graph_checks reads it."""
    chains = chains or [()] * len(widths)
    labels = labels or {}
    boxes = [gl.Box(f"b{i}", "op", f"b{i}", "", [i], w=w) for i, w in enumerate(widths)]
    layers = gl.assign_layers(len(boxes), edges, chains)
    frames = {f for ch in chains for f in ch}
    points, rects = gl.place(boxes, layers, edges, chains,
                             {f: len(labels.get(f, f)) * gl.FRAME_CHAR_W for f in frames})
    return {"boxes": [{"x": b.x, "y": b.y, "w": b.w, "h": b.h, "label": b.label} for b in boxes],
            "edges": [{"s": s, "t": t, "points": points[(s, t)]} for s, t in edges],
            "frames": [{"id": f, "label": labels.get(f, f), "x": r[0], "y": r[1], "w": r[2] - r[0], "h": r[3] - r[1]}
                       for f, r in rects.items()]}


def test_a_skip_edge_around_a_frame_runs_beside_it_on_a_straight_line():
    # 0 -> (1 -> 2 -> 3, a block in frame "f") -> 4, and the skip 0 -> 4 around the block
    edges = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]
    chains = [(), ("f",), ("f",), ("f",), ()]
    p = lay_out([90, 120, 120, 120, 90], edges, chains, {"f": "block · Block · 3 ops"})
    assert_routed(p)
    (f,) = p["frames"]
    skip = next(e for e in p["edges"] if (e["s"], e["t"]) == (0, 4))
    inside = [[f["x"], f["y"], f["x"] + f["w"], f["y"] + f["h"]]]
    assert not checks._hits(checks._segments(skip), __import__("numpy").array(inside, float)).any()
    xs = {x for x, _ in skip["points"]}
    assert len(xs) == 1 and p["boxes"][0]["x"] == p["boxes"][4]["x"] == xs.pop()  # the stream: one line


def test_an_edge_that_passes_a_wide_row_goes_through_a_gap_not_a_box():
    # 0 feeds six boxes in the next row and 7 below them; 0 -> 7 must pass the row between two boxes
    edges = [(0, i) for i in range(1, 7)] + [(i, 7) for i in range(1, 7)] + [(0, 7), (8, 7)]
    p = lay_out([80] + [150] * 6 + [80, 200], edges)
    assert_routed(p)
    long = next(e for e in p["edges"] if (e["s"], e["t"]) == (0, 7))
    row_y = p["boxes"][1]["y"]
    # inside the row the edge is vertical, at a gap between two boxes
    crossing = [(a, b) for a, b in zip(long["points"], long["points"][1:]) if a[1] <= row_y <= b[1]]
    assert len(crossing) == 1 and crossing[0][0][0] == crossing[0][1][0]
    x = crossing[0][0][0]
    assert all(abs(x - p["boxes"][i]["x"]) >= p["boxes"][i]["w"] / 2 + 5 for i in range(1, 7))


def test_an_edge_into_a_box_under_a_frame_label_goes_round_the_label():
    # a long label over a narrow first box: the edge from outside comes down right of the label and turns under it
    edges = [(0, 1), (1, 2), (2, 3)]
    chains = [(), ("f",), ("f",), ()]
    p = lay_out([70, 64, 64, 70], edges, chains, {"f": "encoder.layers.0.self_attention · Attention · 12 ops"})
    assert_routed(p)
    e = p["edges"][0]
    (f,) = p["frames"]
    assert len(e["points"]) > 2 and max(x for x, _ in e["points"]) > f["x"] + 4 + len(f["label"]) * 6.4


@pytest.mark.parametrize("seed", range(40))
def test_random_dags_with_frames_route_clear_of_boxes_and_labels(seed):
    rng = random.Random(seed)
    n = rng.randint(4, 18)
    edges = sorted({(a, b) for b in range(1, n) for a in rng.sample(range(b), min(b, rng.randint(1, 3)))})
    options = [(), ("a",), ("a", "a.x"), ("a", "a.y"), ("b",)]
    chains = [rng.choice(options) for _ in range(n)]
    labels = {f: rng.choice(["m", "block · Block · 6 ops", "encoder.layers.0 · TransformerEncoderLayer · 40 ops"])
              for f in ("a", "a.x", "a.y", "b")}
    widths = [rng.choice([64, 90, 150, 230]) for _ in range(n)]
    assert_routed(lay_out(widths, edges, chains, labels), f"seed {seed}")


def test_parameters_and_the_ops_on_them_sit_just_above_their_consumer():
    """A BatchNorm's weight -> Reshape -> Mul: the parameter and its reshape sit in the rows just above the Mul
    (or two above, into a frame), not at the top of the graph (which stretched the BatchNorm's frame down through
    every layer between)."""
    model, loss = _small_resnet()
    g = build_graph(loss, model)
    p = gm.graph_payload(g, set(g.groups))
    rows = sorted({b["y"] for b in p["boxes"]})
    row = {y: i for i, y in enumerate(rows)}
    feeds: dict[int, list[int]] = {}
    for e in p["edges"]:
        feeds.setdefault(e["t"], []).append(e["s"])
    params = {i for i, b in enumerate(p["boxes"]) if b["kind"] == "param"}
    on_params = {i for i, b in enumerate(p["boxes"]) if i in feeds and set(feeds[i]) <= params}
    assert on_params, "the ResNet's BatchNorms reshape their weights"
    for e in p["edges"]:
        if e["s"] in params | on_params:
            s, t = p["boxes"][e["s"]], p["boxes"][e["t"]]
            # (two rows where the edge enters a frame: frames of consecutive blocks never share a row)
            assert row[t["y"]] - row[s["y"]] <= 2, (s["label"], s["sub"], t["label"])
    bn = [f for f in p["frames"] if "BatchNorm2d" in f["label"]]
    assert bn and max(f["h"] for f in bn) < 0.2 * p["height"]


def test_the_static_svg_draws_each_edge_as_the_browser_does():
    """The saved picture's edges are the payload's routed polylines, the last segment stopping an arrowhead
    short of the target (graph.js edgePath), with a marker that starts there."""
    import xml.etree.ElementTree as ET

    from tinygrad_like.widgets.graph_svg import graph_svg

    model, loss = _tiny_gpt()
    g = build_graph(loss, model)
    p = gm.graph_payload(g, set(g.groups))
    root = ET.fromstring(graph_svg(p))
    ns = "{http://www.w3.org/2000/svg}"
    lines = root.iter(f"{ns}polyline")
    marker = next(root.iter(f"{ns}marker"))
    assert marker.get("refX") == "0" and float(marker.get("markerWidth")) == ARROW
    for e, line in zip(p["edges"], lines, strict=True):
        drawn = [tuple(map(float, q.split(","))) for q in line.get("points").split()]
        pts = e["points"]
        assert len(drawn) == len(pts) and all(d == pytest.approx(tuple(q), abs=0.06) for d, q in zip(drawn, pts[:-1]))
        (ax, ay), (bx, by) = pts[-2], pts[-1]
        length = ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5  # (every last segment is long enough for the arrowhead)
        stop = (bx - (bx - ax) * ARROW / length, by - (by - ay) * ARROW / length)
        assert drawn[-1] == pytest.approx(stop, abs=0.06)


def test_detached_edges_finds_edges_off_their_boxes_and_arrows_with_no_room():
    box = {"w": 100.0, "h": 36.0}
    p = {"boxes": [dict(box, x=100.0, y=50.0), dict(box, x=100.0, y=150.0)],
         "edges": [{"s": 0, "t": 1, "points": [[100, 68], [100, 132]]},  # good
                   {"s": 0, "t": 1, "points": [[100, 50], [100, 132]]},  # leaves from the box's middle
                   {"s": 0, "t": 1, "points": [[100, 68], [40, 128], [100, 128], [100, 132]]},  # 4 px last
                   {"s": 0, "t": 1, "points": [[100, 68], [100, 112], [300, 132]]}]}  # ends beside the target
    assert checks.detached_edges(p) == [1, 2, 3]
