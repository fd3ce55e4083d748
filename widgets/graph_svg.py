"""The graph as a static SVG: what a saved notebook shows where no kernel runs the widget (nbconvert, GitHub,
a notebook opened before its kernel starts).

It draws the same payload the browser draws (``graph_model.graph_payload``) with the same coordinates, in fixed
colours that read on light and dark pages (the SVG carries its own background). No plotting library needed.
"""

from __future__ import annotations

import math
import textwrap
from html import escape

from .graph_layout import ARROW

#: fills and strokes per box kind: (fill, stroke)
COLOURS = {"op": ("#e8f0fe", "#4a6fa5"), "param": ("#fff4d6", "#b58900"), "leaf": ("#eeeeee", "#777777"),
           "output": ("#e6f4ea", "#2e7d32"), "group": ("#f3e8fd", "#7b4fa0"),
           "step": ("#f4f7fc", "#7d93b5")}  # a fused recurrent layer's time step: lighter than a node of its own
STALE = "#d32f2f"
VISITED, CURRENT, FILLED, FAILED = "#c8e6c9", "#ef6c00", "#ffd54f", "#ffcdd2"
NOTE_FILL = {"info": "#e3f2fd", "warn": "#fff3e0", "error": "#fdecea"}
NOTE_EDGE = {"info": "#1976d2", "warn": "#ef6c00", "error": "#d32f2f"}
NOTE_LINE, NOTE_CHAR_W = 14.0, 6.2  # a banner line's height and an 11 px character's width


def edge_points(points: list, cut: float = ARROW) -> list[tuple[float, float]]:
    """An edge's polyline as the browser draws it (graph.js ``edgePath``): the routed points, straight segments,
    the last one stopping ``cut`` px short of the target where it is long enough, for the arrowhead to fill."""
    p = [(float(x), float(y)) for x, y in points]
    if len(p) >= 2 and cut > 0:
        (ax, ay), (bx, by) = p[-2], p[-1]
        length = math.hypot(bx - ax, by - ay)
        if length > cut * 1.5:
            p[-1] = (bx - (bx - ax) * cut / length, by - (by - ay) * cut / length)
    return p


def _wrap(text: str, width: int, max_lines: int = 10) -> list[str]:
    rows = textwrap.wrap(text, width)
    return rows if len(rows) <= max_lines else rows[: max_lines - 1] + [rows[max_lines - 1][: width - 1] + "…"]


def graph_svg(graph: dict, state: dict | None = None, max_width: float = 900.0) -> str:
    """An SVG document of ``graph`` (the ``graph`` traitlet), with the stepper's ``state`` if given."""
    boxes, edges, frames = graph["boxes"], graph["edges"], graph["frames"]
    width, height = max(graph["width"], 10.0), max(graph["height"], 10.0)
    visited, current, filled = set(), None, set()
    if state and state.get("cursor"):
        owner = graph["owner"]
        steps = state["steps"][: state["cursor"]]
        visited = {owner[s[0]] for s in steps}
        current = owner[steps[-1][0]]
        filled = {owner[i] for i in state.get("filled", ())}
    failed = None
    if state and state.get("error") and state["error"].get("node") is not None:
        failed = graph["owner"][state["error"]["node"]]
    # the banners the live view shows above its drawing (notes, a stepping error), as wrapped lines on top
    banners = [(n.get("level", "info"), n["text"]) for n in graph.get("notes") or ()]
    if state and state.get("error"):
        banners.append(("error", str(state["error"].get("text", "error"))))
    width = max(width, 480.0) if banners else width
    per_line = max(40, int((width - 24) / NOTE_CHAR_W))
    wrapped = [(lvl, _wrap(text, per_line)) for lvl, text in banners]
    lines = [row for _, rows in wrapped for row in rows]
    top = (len(lines) * NOTE_LINE + 8 * len(banners) + 6) if lines else 0.0
    total_h = height + top
    scale = min(1.0, max_width / width)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * scale:.0f}" height="{total_h * scale:.0f}" '
           f'viewBox="0 0 {width:.1f} {total_h:.1f}" font-family="sans-serif">',
           f'<rect width="{width:.1f}" height="{total_h:.1f}" fill="#ffffff"/>',
           f'<defs><marker id="a" viewBox="0 0 10 10" refX="0" refY="5" markerUnits="userSpaceOnUse" '
           f'markerWidth="{ARROW:g}" markerHeight="{ARROW:g}" orient="auto" preserveAspectRatio="none">'
           '<path d="M0 0 L10 5 L0 10 z" fill="#888"/></marker></defs>']
    y = 6.0
    for lvl, rows in wrapped:
        h = len(rows) * NOTE_LINE + 4
        out.append(f'<rect x="6" y="{y:.1f}" width="{width - 12:.1f}" height="{h:.1f}" fill="{NOTE_FILL[lvl]}"/>'
                   f'<rect x="6" y="{y:.1f}" width="3" height="{h:.1f}" fill="{NOTE_EDGE[lvl]}"/>')
        for k, row in enumerate(rows):
            out.append(f'<text x="14" y="{y + 2 + (k + 0.75) * NOTE_LINE:.1f}" font-size="11" fill="#222">'
                       f'{escape(row)}</text>')
        y += h + 8
    if top:
        out.append(f'<g transform="translate(0 {top:.1f})">')
    for f in frames:
        out.append(f'<rect x="{f["x"]}" y="{f["y"]}" width="{f["w"]}" height="{f["h"]}" rx="8" fill="#7b4fa0" '
                   f'fill-opacity="0.04" stroke="#b39ddb" stroke-dasharray="4 3"/>'
                   f'<text x="{f["x"] + 6}" y="{f["y"] + 11}" font-size="10" fill="#5e35b1">'
                   f'{escape(f["label"])}</text>')
    for e in edges:
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in edge_points(e["points"]))
        out.append(f'<polyline points="{pts}" fill="none" stroke="#999" stroke-width="1.2" stroke-linejoin="round" '
                   f'marker-end="url(#a)"/>')
    for i, b in enumerate(boxes):
        fill, stroke = COLOURS.get(b["kind"], COLOURS["op"])
        if i == failed:
            fill = FAILED
        elif i in filled:
            fill = FILLED
        elif i in visited:
            fill = VISITED
        if b["stale"]:
            stroke = STALE
        sw = 3 if i == current else 2 if b["stale"] else 1
        if i == current:
            stroke = CURRENT
        x0, y0 = b["x"] - b["w"] / 2, b["y"] - b["h"] / 2
        rx = b["h"] / 2 if b["kind"] in ("param", "leaf") else 5
        out.append(f'<g><title>{escape(chr(10).join(f"{k}: {v}" for k, v in b["tip"]))}</title>'
                   f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{b["w"]}" height="{b["h"]}" rx="{rx}" fill="{fill}" '
                   f'stroke="{stroke}" stroke-width="{sw}"/>'
                   f'<text x="{b["x"]}" y="{b["y"] - 2:.1f}" font-size="12" font-weight="600" text-anchor="middle" '
                   f'fill="#222">{escape(b["label"])}</text>'
                   f'<text x="{b["x"]}" y="{b["y"] + 12:.1f}" font-size="10" text-anchor="middle" '
                   f'fill="#555">{escape(b["sub"])}</text></g>')
    if top:
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)
