"""The geometry of a graph drawing: layers, x positions, edge polylines and frame rectangles.

``graph_model.layout`` decides *what* is drawn (one :class:`Box` per visible node or folded group, the frames of
expanded groups); this module decides *where*: longest-path layers top to bottom, igraph's Sugiyama crossing
reduction for the order within a layer, then separation constraints so that no two boxes overlap and every
frame holds exactly its members, long skip edges (a residual stream) on straight lanes of their own, and edges
routed clear of every box and frame label: vertical wherever they pass a row of boxes, bending only in the
channels between rows (``graph_checks`` measures it). Pure Python on plain data; nothing here knows about
tensors or modules.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

BOX_H = 36.0
LAYER_GAP = 30.0  # vertical space between layers for the edges (frame label rows get theirs on top)
H_GAP = 18.0
MARGIN = 24.0
CHAR_W = 7.6  # average width of a bold 12 px UI-font character, for box widths (the browser never clips)
SUB_CHAR_W = 6.6
#: graph.js's arrowhead length: an edge's path stops this short of its target and the marker fills the gap
#: (graph_svg draws the same; graph_checks wants an edge's last segment longer than 1.5 of it)
ARROW = 7.0
MIN_W, MAX_W = 64.0, 230.0
DUMMY_W = 10.0  # the width a long edge takes where it passes through a layer
FRAME_PAD, FRAME_HEAD = 8.0, 16.0  # a group frame's padding and the height of its label row
FRAME_GAP = 12.0  # between a frame and a box or frame beside it
FRAME_CHAR_W = 6.4  # a 10.5 px frame label's average character width
FRAME_LABEL_W = 20.0  # a frame is at least its label's text width plus this
# A frame's label row, where graph.js draws the label (10.5 px text from x + 8, baseline y + 13): edges keep out of
# [x + LABEL_X0, x + LABEL_X1 + text width] x [y, y + LABEL_H], with LABEL_CLEAR px to spare on either side
LABEL_X0, LABEL_X1, LABEL_H, LABEL_CLEAR = 4.0, 8.0, 15.0, 3.0
JOG_H, JOG_Y = 14.0, 15.0  # the jog row's extra height under a layer's label rows, and its height above the boxes


@dataclass
class Box:
    id: str
    kind: str
    label: str
    sub: str
    nodes: list[int]
    w: float = 0.0
    h: float = BOX_H
    x: float = 0.0  # centre
    y: float = 0.0
    expandable: bool = False
    stale: bool = False


def assign_layers(n: int, edges: list[tuple[int, int]], chain_of: list[tuple] | None = None,
                  params: set[int] | None = None) -> list[int]:
    """Longest-path layers (inputs on top); a source that feeds something sits just above its first consumer.
    Edges that would close a cycle (a folded group used twice) are ignored for the layering.

    An edge that enters or leaves a frame (``chain_of``: the frames around each box) spans two layers, so the
    frames of consecutive blocks never share a layer: a block's parameters sit below the previous block, not
    beside it (which would push the frames apart sideways into a staircase).

    ``params``: the boxes that are parameters; an op whose inputs are all parameters (or such ops) moves down
    next to its first consumer too."""
    succ: list[list[int]] = [[] for _ in range(n)]
    for s, t in edges:
        succ[s].append(t)
    # drop back edges found by an iterative depth-first search
    state, dag = [0] * n, [[] for _ in range(n)]
    for start in range(n):
        if state[start]:
            continue
        stack = [(start, iter(succ[start]))]
        state[start] = 1
        while stack:
            v, it = stack[-1]
            w = next(it, None)
            if w is None:
                state[v] = 2
                stack.pop()
            elif state[w] == 1:
                continue  # back edge: skipped
            else:
                dag[v].append(w)
                if state[w] == 0:
                    state[w] = 1
                    stack.append((w, iter(succ[w])))
    indeg = [0] * n
    for v in range(n):
        for w in dag[v]:
            indeg[w] += 1
    has_pred = [d > 0 for d in indeg]

    def step(v: int, w: int) -> int:  # (a source moves next to its consumer below: its edges need no extra layer)
        return 2 if chain_of is not None and has_pred[v] and chain_of[v] != chain_of[w] else 1

    layer = [0] * n
    ready = [v for v in range(n) if indeg[v] == 0]
    order = []
    while ready:
        v = ready.pop()
        order.append(v)
        for w in dag[v]:
            layer[w] = max(layer[w], layer[v] + step(v, w))
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    # What depends on sources only (a parameter, and the ops that reshape or transpose it before use) moves down
    # next to its first consumer: left on top, a BatchNorm's weight -> Reshape would open its frame at the top
    # of the graph and stretch it down to the BatchNorm, through every layer between.
    # (Sources move down whatever they are; the ops after them only after a parameter: ops on the data input
    # are the graph itself.)
    pure = [not p for p in has_pred]
    if params is not None:
        preds: list[list[int]] = [[] for _ in range(n)]
        for v in range(n):
            for w in dag[v]:
                preds[w].append(v)
        for v in order:  # (in topological order: an op is pure when all its inputs are parameters or pure)
            if has_pred[v]:
                pure[v] = all((u in params) if not has_pred[u] else pure[u] for u in preds[v])
    for v in reversed(order):
        if pure[v] and dag[v]:
            layer[v] = max(layer[v], min(layer[w] - step(v, w) for w in dag[v]))
    return layer


def _with_dummies(boxes: list[Box], layers: list[int], edges: list[tuple[int, int]], box_chain: list[tuple]):
    """The vertices igraph lays out: the boxes, then one dummy vertex per layer a long edge crosses. Returns each
    vertex's layer, width and frame chain, each edge's chain of vertices from its source to its target (an edge
    against the layering runs upwards), and the edges between vertices, top to bottom."""
    vlayer, widths, vchain = list(layers), [b.w for b in boxes], list(box_chain)
    chains: dict[tuple[int, int], list[int]] = {}
    g_edges = []
    box_span: dict[str, list[int]] = {}
    for i, ch in enumerate(box_chain):
        for g in ch:
            sp = box_span.setdefault(g, [layers[i], layers[i]])
            sp[0], sp[1] = min(sp[0], layers[i]), max(sp[1], layers[i])

    def within(ch: tuple, lay: int) -> tuple:  # the frames of ch that reach down (or up) to layer lay
        return tuple(itertools.takewhile(lambda g: box_span[g][0] <= lay <= box_span[g][1], ch))

    for s, t in edges:
        a, b = (s, t) if layers[s] < layers[t] else (t, s)  # an edge against the layering is drawn upwards
        chain = [a]
        for lay in range(layers[a] + 1, layers[b]):
            vlayer.append(lay)
            widths.append(DUMMY_W)
            # a long edge runs inside the frames of its ends for the layers those frames span
            vchain.append(max(within(box_chain[a], lay), within(box_chain[b], lay), key=len))
            chain.append(len(vlayer) - 1)
        chain.append(b)
        g_edges.extend(zip(chain, chain[1:]))
        chains[(s, t)] = chain if (a, b) == (s, t) else chain[::-1]
    return vlayer, widths, vchain, chains, g_edges


def place(boxes: list[Box], layers: list[int], edges: list[tuple[int, int]], box_chain: list[tuple],
           label_w: dict[str, float]) -> tuple[dict, dict]:
    """Place the boxes; return each edge's polyline and each frame's rectangle (x0, y0, x1, y1). ``label_w``:
    each frame's label text width.

    x: igraph's Sugiyama layout (crossing reduction) on the boxes plus one dummy vertex per layer a long edge
    crosses gives each vertex an ideal position. Each layer is then ordered so that every frame's members sit
    together (siblings by the mean position of their members, the same order in every layer), and placed left
    to right under separation constraints: boxes never overlap, a frame's left and right sides are shared by
    all layers it spans, and a box outside a frame stays outside it. Every constraint runs from an item to one
    later in one global order (the sort key), so one sweep in that order solves them. A second sweep puts each
    lane (a long skip edge, with the stream boxes it joins: ``_lanes``) on one vertical line.
    y: layers top to bottom, with room above a layer for the label rows of the frames that start there (and a
    jog row under them where an edge must turn in under a label).
    Edges: see ``_route``; none crosses a box or a frame's label row, and each ends on a segment long enough
    for the browser's arrowhead.
    """
    import igraph

    n = len(boxes)
    vlayer, widths, vchain, chains, g_edges = _with_dummies(boxes, layers, edges, box_chain)
    total = len(vlayer)
    if total > 1 and g_edges:
        g = igraph.Graph(n=total, edges=g_edges, directed=True)
        ideal = [c[0] for c in g.layout_sugiyama(layers=vlayer, maxiter=100 if total < 400 else 20).coords[:total]]
    else:
        ideal = [float(i) for i in range(total)]
    unit = max((b.w for b in boxes), default=MIN_W) + H_GAP  # igraph spaces a layer's vertices one unit apart

    # frames: their members' mean ideal position (their order among siblings) and the layers they span
    fid = {g: i for i, g in enumerate(sorted(label_w))}
    bary: dict[str, list[float]] = {g: [0.0, 0] for g in fid}
    span: dict[str, list[int]] = {g: [10**9, -1] for g in fid}
    prefix: dict[str, tuple] = {}
    per_chain: dict[tuple, list] = {}  # perf: 6,511 vertices, 501 chains (layout 273 -> 212 ms)
    for v in range(total):
        acc = per_chain.get(vchain[v])
        if acc is None:
            per_chain[vchain[v]] = [ideal[v], 1, vlayer[v], vlayer[v]]
        else:
            acc[0] += ideal[v]
            acc[1] += 1
            acc[2], acc[3] = min(acc[2], vlayer[v]), max(acc[3], vlayer[v])
    for ch, (total_x, count, lo, hi) in per_chain.items():
        for i, g in enumerate(ch):
            bary[g][0] += total_x
            bary[g][1] += count
            span[g] = [min(span[g][0], lo), max(span[g][1], hi)]
            if g not in prefix:
                prefix[g] = ch[: i + 1]
    mean = {g: t / max(c, 1) for g, (t, c) in bary.items()}

    chain_keys: dict[tuple, tuple] = {}  # perf: 6,511 vertices, 501 chains (with pred/succ
    # filled inline: layout 302 -> 273 ms CPU at 4,010 boxes)

    def group_key(ch: tuple) -> tuple:
        k = chain_keys.get(ch)
        if k is None:
            k = chain_keys[ch] = tuple((mean[g], -1 - fid[g]) for g in ch)
        return k

    # items: 0..total-1 are vertices; total + 2i and total + 2i + 1 are the left and right sides of frame i
    n_items = total + 2 * len(fid)
    half = [w / 2 for w in widths] + [0.0] * (2 * len(fid))
    kind = ["v"] * total + ["L", "R"] * len(fid)

    def solve(ideal: list[float], left: dict[int, float]) -> tuple[list[float], list, list]:
        """Order every layer by the sort key and place left to right: x, and each item's constraints."""
        key: list[tuple] = [group_key(vchain[v]) + ((ideal[v], v),) for v in range(total)] + [()] * (2 * len(fid))
        for g, i in fid.items():
            key[total + 2 * i] = group_key(prefix[g]) + ((float("-inf"), 0),)
            key[total + 2 * i + 1] = group_key(prefix[g]) + ((float("inf"), 0),)
        by_layer: dict[int, list[int]] = {}
        for v in range(total):
            by_layer.setdefault(vlayer[v], []).append(v)
        for g, i in fid.items():
            for lay in range(span[g][0], span[g][1] + 1):
                by_layer.setdefault(lay, []).extend((total + 2 * i, total + 2 * i + 1))
        # a constraint x[b] >= x[a] + sep is (a, sep) in pred[b] and (b, sep) in succ[a]
        pred: list[list[tuple[int, float]]] = [[] for _ in range(n_items)]
        succ: list[list[tuple[int, float]]] = [[] for _ in range(n_items)]
        for items in by_layer.values():
            items.sort(key=key.__getitem__)
            for a, b in zip(items, items[1:]):
                ka, kb = kind[a], kind[b]
                if ka == "v" and kb == "v":
                    gap = H_GAP if a < n and b < n else 6.0
                elif (ka, kb) in (("v", "R"), ("L", "v"), ("L", "L"), ("R", "R")):
                    gap = FRAME_PAD
                elif (ka, kb) == ("L", "R"):
                    gap = 0.0  # (the frame's own width constraint is added once below)
                else:  # leaving a frame, or entering one: room between it and its neighbour
                    gap = FRAME_GAP
                sep = half[a] + half[b] + gap
                pred[b].append((a, sep))
                succ[a].append((b, sep))
        for g, i in fid.items():  # as wide as its label
            a, b, sep = total + 2 * i, total + 2 * i + 1, label_w[g] + FRAME_LABEL_W
            pred[b].append((a, sep))
            succ[a].append((b, sep))
        order = sorted(range(n_items), key=key.__getitem__)
        x = [0.0] * n_items
        for it in order:
            lo = max((x[a] + sep for a, sep in pred[it]), default=MARGIN + half[it])
            x[it] = max(lo, ideal[it] * unit + MARGIN + half[it]) if it < total else max(lo, left.get(it, lo))
        for it in reversed(order):  # pull each left side in to what it holds (the sweep left it far left)
            if kind[it] == "L" and succ[it]:
                # (first pass: to its contents only, so that the label's width goes to the right next time)
                x[it] = min((x[b] - sep for b, sep in succ[it] if left or b != it + 1), default=x[it])
        return x, pred, succ

    x, _, _ = solve(ideal, {})
    # Second pass: each vertex wants where the first pass put it, and the bend of an edge that skips one layer
    # wants the middle of its ends (igraph orders such a bend among boxes it does not touch arbitrarily: the
    # edge into a block could cross a parameter box to reach the op beside it).
    ideal = [(x[v] - MARGIN - half[v]) / unit for v in range(total)]
    for chain in chains.values():
        if len(chain) == 3:
            ideal[chain[1]] = ((x[chain[0]] + x[chain[2]]) / 2 - MARGIN - half[chain[1]]) / unit
    lanes = _lanes(chains, n)
    for lane in lanes:  # a long skip edge, and the boxes of a stream it joins, on one vertical line
        lane_x = max(x[v] for v in lane)  # (the sweep only pushes right: the rightmost is where all can go)
        for v in lane:
            ideal[v] = (lane_x - MARGIN - half[v]) / unit
    # A frame's left side starts where the first pass pulled it in to its members, so a frame widened for its
    # label grows to the right (the sweep alone would widen it to the left, away from what it holds).
    left = {it: x[it] for it in range(total, n_items) if kind[it] == "L"}
    x, pred, succ = solve(ideal, left)
    # A lane that runs into a frame under its label (at the frame's left, where the label is) would have to bend
    # round it: the lane moves to the right of what it passes instead, and of the label (a third pass, only
    # where a lane needs it). The blocks then hang to the left of the stream.
    blocked = _label_spans(x, fid, span, label_w, total)
    moved = False
    on_lane = {v for lane in lanes for v in lane}
    row_right: dict[tuple, float] = {}  # (layer, frames) -> the right edge of the rightmost other vertex there
    for v in range(total):
        if v not in on_lane:
            k = (vlayer[v], vchain[v])
            row_right[k] = max(row_right.get(k, -1e18), x[v] + half[v])
    for lane in lanes:
        past = max((b for v in lane for a, b in blocked.get(vlayer[v], ()) if a < x[v] < b), default=None)
        if past is not None:
            moved = True
            right = max(row_right.get((vlayer[v], vchain[v]), -1e18) + H_GAP + half[v] for v in lane)
            for v in lane:
                ideal[v] = (max(past, right) - MARGIN - half[v]) / unit
    if moved:
        x, pred, succ = solve(ideal, left)
    shift = min(x[it] - half[it] for it in range(n_items)) - MARGIN if n_items else 0.0
    x = [v - shift for v in x]
    _straighten(chains, x, n, pred, succ)

    n_layers = max(vlayer, default=-1) + 1
    ends, jog = _edge_ends(chains, x, vlayer, half, n, _label_spans(x, fid, span, label_w, total), n_layers)
    ytop, free = _layer_tops(fid, span, prefix, jog, n_layers)
    y = [ytop[lay] + BOX_H / 2 for lay in vlayer]
    for i, b in enumerate(boxes):
        b.x, b.y = round(x[i], 1), round(y[i], 1)
    rects = _frame_rects(fid, span, prefix, x, ytop, jog, total)
    points = {}
    for (s, t), chain in chains.items():
        down = layers[s] <= layers[t]
        pts = _route(chain if down else chain[::-1], x, vlayer, ytop, free, ends, n)
        points[(s, t)] = [[round(a, 1), round(b, 1)] for a, b in (pts if down else pts[::-1])]
    return points, rects


def _edge_ends(chains, x, vlayer, half, n, blocked, n_layers) -> tuple[dict, list[float]]:
    """Edges run vertically through every layer they pass (at their own box, or at their dummy's slot, which the
    placement keeps clear of boxes) and bend only in the channels between layers, beside the frames' label rows:
    where a label (``blocked``: per layer, the x spans of the label rows starting there) sits over an edge's way
    down, the edge passes just right of it and turns under it, in a jog row that the layer then gets below its
    label rows. Returns {(vertex, vertex above it): (x through the labels, x in)} and each layer's jog height."""
    ends: dict[tuple[int, int], tuple[float, float]] = {}
    jog = [0.0] * (n_layers + 1)
    for chain in chains.values():
        for u, w in zip(chain, chain[1:]):
            if vlayer[u] > vlayer[w]:
                u, w = w, u
            port = end = x[w]
            for lo_x, hi_x in blocked.get(vlayer[w], ()):
                if lo_x < x[w] < hi_x:
                    port = end = hi_x
                    if w >= n or x[w] + half[w] - 6 < hi_x:  # (a box reaching past the label takes it straight)
                        end = x[w]
                        jog[vlayer[w]] = JOG_H
                    break
            ends[(w, u)] = (port, end)
    return ends, jog


def _layer_tops(fid, span, prefix, jog, n_layers) -> tuple[list[float], list[tuple[float, float]]]:
    """y: each layer's top, leaving room for the label rows (and paddings) of the frames that start or end next to
    it; and below each layer the channel's band that nothing is drawn in but edges."""
    heads, feet = [0] * (n_layers + 1), [0] * (n_layers + 1)
    for g in fid:
        lo, hi = span[g]
        outer = prefix[g][:-1]
        heads[lo] = max(heads[lo], 1 + sum(1 for h in outer if span[h][0] == lo))
        feet[hi] = max(feet[hi], 1 + sum(1 for h in outer if span[h][1] == hi))
    top, ytop, free = MARGIN + 16.0, [], []
    for lay in range(n_layers):
        top += heads[lay] * (FRAME_HEAD + FRAME_PAD) + (jog[lay] if heads[lay] else 0.0)
        ytop.append(top)
        top += BOX_H + feet[lay] * FRAME_PAD
        free.append((top, top + LAYER_GAP))
        top += LAYER_GAP
    return ytop, free


def _frame_rects(fid, span, prefix, x, ytop, jog, total) -> dict[str, tuple]:
    """Each frame's rectangle (x0, y0, x1, y1): its sides where the placement put them, its top and bottom round
    its layers and the frames inside it."""
    rects: dict[str, tuple] = {}
    inside: dict[str, list[str]] = {}
    for h in fid:
        if len(prefix[h]) > 1:
            inside.setdefault(prefix[h][-2], []).append(h)
    for g in sorted(fid, key=lambda g: -len(prefix[g])):  # inner frames first: an outer one goes round them
        lo, hi = span[g]
        inner = inside.get(g, ())
        y0 = min([ytop[lo] - FRAME_PAD - jog[lo]] + [rects[h][1] - FRAME_PAD for h in inner]) - FRAME_HEAD
        y1 = max([ytop[hi] + BOX_H + FRAME_PAD] + [rects[h][3] + FRAME_PAD for h in inner])
        rects[g] = (x[total + 2 * fid[g]], y0, x[total + 2 * fid[g] + 1], y1)
    return rects


def _label_spans(x, fid, span, label_w, total) -> dict[int, list[tuple[float, float]]]:
    """Per layer, the x spans (merged, sorted) of the label rows of the frames that start there."""
    out: dict[int, list[tuple[float, float]]] = {}
    for g, i in fid.items():
        x0 = x[total + 2 * i]
        out.setdefault(span[g][0], []).append((x0 + LABEL_X0 - LABEL_CLEAR, x0 + LABEL_X1 + label_w[g] + LABEL_CLEAR))
    return {lay: _merge(spans) for lay, spans in out.items()}


def _merge(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Overlapping intervals merged, sorted."""
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _route(chain, x, vlayer, ytop, free, ends, n) -> list[tuple[float, float]]:
    """The polyline of one edge, top to bottom, through its chain (upper end, dummies, lower end).

    Inside a layer's row (the band of its boxes) the edge is vertical, so it can cross no box. Between two rows
    it goes from the upper vertex's bottom across the channel's free band (which holds nothing) to where it
    passes the label rows of the frames starting below (``ends``: straight above its slot, or just right of a
    label that sits over it), then down; past the labels it turns to its slot in the jog row, and runs down to
    the lower vertex's top (the arrowhead comes in vertically, on a segment long enough to hold it).
    """
    u = chain[0]
    pts = [(x[u], ytop[vlayer[u]] + BOX_H)]
    for w in chain[1:]:
        lw = vlayer[w]
        if lw != vlayer[u] + 1:  # (no chain skips a layer; an edge within a layer just joins its ends)
            pts.append((x[w], ytop[lw]))
            u = w
            continue
        port, end = ends[(w, u)]
        pts.append((port, free[vlayer[u]][1]))
        if port != end:
            pts.append((port, ytop[lw] - JOG_Y))
            pts.append((end, ytop[lw] - JOG_Y))
        pts.append((end, ytop[lw]))
        if w >= n:
            pts.append((end, ytop[lw] + BOX_H))
        u = w
    out = [pts[0]]
    for p in pts[1:]:  # drop repeated points and the middle of three on one vertical line
        if p == out[-1]:
            continue
        if len(out) >= 2 and out[-2][0] == out[-1][0] == p[0]:
            out[-1] = p
        else:
            out.append(p)
    return out


def _lanes(chains: dict, n: int) -> list[list[int]]:
    """The side lanes: each long edge (one passing two layers or more) with its dummies, joined with the long
    edges it shares an end with when that end has no other long edge in or out (the Adds of a residual stream:
    one skip edge in, one out), and with lanes that a lone edge continues. Each lane's vertices go on one vertical
    line, so the stream reads as a straight line with the blocks beside it."""
    longs = [c for c in chains.values() if len(c) >= 4]
    ins: dict[int, int] = {}
    outs: dict[int, int] = {}
    for c in longs:
        outs[c[0]] = outs.get(c[0], 0) + 1
        ins[c[-1]] = ins.get(c[-1], 0) + 1
    parent: dict[int, int] = {}

    def find(v: int) -> int:
        while parent.setdefault(v, v) != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for c in longs:
        members = list(c[1:-1])
        if outs[c[0]] == 1 and ins.get(c[0], 0) <= 1:
            members.append(c[0])
        if ins[c[-1]] == 1 and outs.get(c[-1], 0) <= 1:
            members.append(c[-1])
        root = find(members[0])
        for v in members[1:]:
            parent[find(v)] = root
    # two lanes joined by the only edge out of one's end into the other's start, the only edge in there, are one
    # stream (a residual Add, then the ReLU that opens the next block)
    deg_out: dict[int, int] = {}
    deg_in: dict[int, int] = {}
    for c in chains.values():
        deg_out[c[0]] = deg_out.get(c[0], 0) + 1
        deg_in[c[-1]] = deg_in.get(c[-1], 0) + 1
    for c in chains.values():
        a, b = c[0], c[-1]
        if len(c) == 2 and a in parent and b in parent and deg_out[a] == 1 and deg_in[b] == 1:
            parent[find(b)] = find(a)
    lanes: dict[int, list[int]] = {}
    for v in parent:
        lanes.setdefault(find(v), []).append(v)
    return list(lanes.values())


def _straighten(chains, x, n, pred, succ) -> None:
    """Run each long edge down one vertical line where its constraints allow (igraph's dummies otherwise
    zig-zag between the boxes of the layers they pass): a dummy may move only between its neighbours."""
    for chain in chains.values():
        dummies = [v for v in chain if v >= n]
        if len(dummies) < 2:
            continue
        lo = max(max((x[a] + sep for a, sep in pred[v]), default=-1e18) for v in dummies)
        hi = min(min((x[b] - sep for b, sep in succ[v]), default=1e18) for v in dummies)
        if lo <= hi:
            xs = sorted(x[v] for v in dummies)
            cx = min(max(xs[len(xs) // 2], lo), hi)
            for v in dummies:
                x[v] = cx
