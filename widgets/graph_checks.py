"""Geometric checks of a graph drawing (the ``graph`` payload of ``static/CONTRACT.md``), for tests and benchmarks.

A learner reads a drawing wrong when an edge runs through a box it does not touch (a skip connection drawn
through a LayerNorm looks like it feeds it) or through a frame's label. These functions count such cases on
the payload the browser draws, so unit tests, browser tests and ``benchmarks/graph_browser.py`` measure the same
thing.
"""

from __future__ import annotations

import numpy as np

from .graph_layout import ARROW

#: a box's rectangle shrinks by this much (px) before testing: an edge that grazes a corner is not "through" it
INSET = 1.0
FRAME_LABEL_H = 14.0  # the clickable label row at a frame's top-left (graph.js draws 10.5 px text there)
FRAME_LABEL_CHAR_W = 6.4


def _segments(edge: dict) -> np.ndarray:
    p = np.asarray(edge["points"], dtype=float)
    return np.concatenate([p[:-1], p[1:]], axis=1) if len(p) >= 2 else np.zeros((0, 4))


def _hits(seg: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """For segments (k, 4: x0 y0 x1 y1) and rectangles (m, 4: x0 y0 x1 y1): a (k, m) mask of the segments that
    pass through a rectangle's interior (Liang-Barsky clipping)."""
    if not len(seg) or not len(rects):
        return np.zeros((len(seg), len(rects)), bool)
    x0, y0 = seg[:, 0:1], seg[:, 1:2]
    dx, dy = seg[:, 2:3] - x0, seg[:, 3:4] - y0
    lo, hi = np.zeros((len(seg), len(rects))), np.ones((len(seg), len(rects)))
    ok = np.ones_like(lo, bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, x0 - rects[:, 0]), (dx, rects[:, 2] - x0), (-dy, y0 - rects[:, 1]), (dy, rects[:, 3] - y0)):
            p = np.broadcast_to(p, lo.shape)
            r = q / p
            parallel = p == 0
            ok &= ~(parallel & (q < 0))
            lo = np.where(~parallel & (p < 0), np.maximum(lo, r), lo)
            hi = np.where(~parallel & (p > 0), np.minimum(hi, r), hi)
    return ok & (lo < hi - 1e-9)


def box_rects(graph: dict) -> np.ndarray:
    b = graph["boxes"]
    if not b:
        return np.zeros((0, 4))
    a = np.array([[x["x"], x["y"], x["w"], x["h"]] for x in b], dtype=float)
    return np.stack([a[:, 0] - a[:, 2] / 2 + INSET, a[:, 1] - a[:, 3] / 2 + INSET,
                     a[:, 0] + a[:, 2] / 2 - INSET, a[:, 1] + a[:, 3] / 2 - INSET], axis=1)


def edge_box_crossings(graph: dict) -> list[tuple[int, int]]:
    """``(edge index, box index)`` for every edge that passes through a box other than its own two ends."""
    rects = box_rects(graph)
    out = []
    for i, e in enumerate(graph["edges"]):
        hit = _hits(_segments(e), rects).any(axis=0)
        hit[[e["s"], e["t"]]] = False
        out.extend((i, int(j)) for j in np.flatnonzero(hit))
    return out


def frame_label_rects(graph: dict) -> np.ndarray:
    f = graph.get("frames", [])
    if not f:
        return np.zeros((0, 4))
    return np.array([[x["x"] + 4 + INSET, x["y"] + INSET, x["x"] + 4 + len(x["label"]) * FRAME_LABEL_CHAR_W - INSET,
                      x["y"] + FRAME_LABEL_H - INSET] for x in f], dtype=float)


def edge_label_crossings(graph: dict) -> list[tuple[int, int]]:
    """``(edge index, frame index)`` for every edge that passes through a frame's label."""
    rects = frame_label_rects(graph)
    out = []
    for i, e in enumerate(graph["edges"]):
        hit = _hits(_segments(e), rects).any(axis=0)
        out.extend((i, int(j)) for j in np.flatnonzero(hit))
    return out


def upward_edges(graph: dict) -> list[int]:
    """Edges whose target box sits above its source box (a drawing that reads as a cycle)."""
    b = graph["boxes"]
    return [i for i, e in enumerate(graph["edges"]) if b[e["t"]]["y"] < b[e["s"]]["y"] - 1e-6]


def box_overlaps(graph: dict) -> list[tuple[int, int]]:
    """Pairs of boxes whose rectangles overlap."""
    r = box_rects(graph)
    out = []
    for i in range(len(r)):
        o = (r[i + 1:, 0] < r[i, 2]) & (r[i + 1:, 2] > r[i, 0]) & (r[i + 1:, 1] < r[i, 3]) & (r[i + 1:, 3] > r[i, 1])
        out.extend((i, i + 1 + int(j)) for j in np.flatnonzero(o))
    return out


def detached_edges(graph: dict) -> list[int]:
    """Edges that do not leave their source's bottom (top, for an edge drawn upwards) or enter their target's top
    (bottom) within the box's width, or whose last segment is too short to hold the arrowhead."""
    b = graph["boxes"]
    out = []
    for i, e in enumerate(graph["edges"]):
        s, t, p = b[e["s"]], b[e["t"]], e["points"]
        sign = 1.0 if t["y"] > s["y"] else -1.0
        ok = (len(p) >= 2 and abs(p[0][1] - (s["y"] + sign * s["h"] / 2)) < 0.06 and abs(p[0][0] - s["x"]) <= s["w"] / 2
              and abs(p[-1][1] - (t["y"] - sign * t["h"] / 2)) < 0.06 and abs(p[-1][0] - t["x"]) <= t["w"] / 2
              and sign * (p[-1][1] - p[-2][1]) > 0
              and np.hypot(p[-1][0] - p[-2][0], p[-1][1] - p[-2][1]) > 1.5 * ARROW)
        if not ok:
            out.append(i)
    return out
