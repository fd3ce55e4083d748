"""The geometry of a graph drawing: layers, x positions, edge polylines and frame rectangles.

``graph_model.layout`` decides *what* is drawn (one :class:`Box` per visible node or folded group, the frames of
expanded groups); this module decides *where*: longest-path layers top to bottom, igraph's Sugiyama crossing
reduction for the order within a layer, then separation constraints so that no two boxes overlap and every
frame holds exactly its members. Pure Python on plain data; nothing here knows about tensors or modules.
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
MIN_W, MAX_W = 64.0, 230.0
DUMMY_W = 10.0  # the width a long edge takes where it passes through a layer
FRAME_PAD, FRAME_HEAD = 8.0, 16.0  # a group frame's padding and the height of its label row
FRAME_GAP = 12.0  # between a frame and a box or frame beside it
FRAME_CHAR_W = 6.4  # a 10.5 px frame label's average character width


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


def assign_layers(n: int, edges: list[tuple[int, int]], chain_of: list[tuple] | None = None) -> list[int]:
    """Longest-path layers (inputs on top); a source that feeds something sits just above its first consumer.
    Edges that would close a cycle (a folded group used twice) are ignored for the layering.

    An edge that enters or leaves a frame (``chain_of``: the frames around each box) spans two layers, so the
    frames of consecutive blocks never share a layer: a block's parameters sit below the previous block, not
    beside it (which would push the frames apart sideways into a staircase)."""
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
    layer = [0] * n
    ready = [v for v in range(n) if indeg[v] == 0]
    while ready:
        v = ready.pop()
        for w in dag[v]:
            # (a source moves next to its consumer below, so its edges need no extra layer)
            step = 2 if chain_of is not None and has_pred[v] and chain_of[v] != chain_of[w] else 1
            layer[w] = max(layer[w], layer[v] + step)
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    for v in range(n):
        if not has_pred[v] and dag[v]:
            layer[v] = max(0, min(layer[w] for w in dag[v]) - 1)
    return layer


def place(boxes: list[Box], layers: list[int], edges: list[tuple[int, int]], box_chain: list[tuple],
           label_w: dict[str, float]) -> tuple[dict, dict]:
    """Place the boxes; return each edge's polyline and each frame's rectangle (x0, y0, x1, y1).

    x: igraph's Sugiyama layout (crossing reduction) on the boxes plus one dummy vertex per layer a long edge
    crosses gives each vertex an ideal position. Each layer is then ordered so that every frame's members sit
    together (siblings by the mean position of their members, the same order in every layer), and placed left
    to right under separation constraints: boxes never overlap, a frame's left and right sides are shared by
    all layers it spans, and a box outside a frame stays outside it. Every constraint runs from an item to one
    later in one global order (the sort key), so one sweep in that order solves them.
    y: layers top to bottom, with room above a layer for the label rows of the frames that start there.
    """
    import igraph

    n = len(boxes)
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
    for v in range(total):
        ch = vchain[v]
        for i, g in enumerate(ch):
            bary[g][0] += ideal[v]
            bary[g][1] += 1
            span[g] = [min(span[g][0], vlayer[v]), max(span[g][1], vlayer[v])]
            prefix.setdefault(g, ch[: i + 1])
    mean = {g: t / max(c, 1) for g, (t, c) in bary.items()}

    def group_key(ch: tuple) -> tuple:
        return tuple((mean[g], -1 - fid[g]) for g in ch)

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
        pred: list[list[tuple[int, float]]] = [[] for _ in range(n_items)]
        succ: list[list[tuple[int, float]]] = [[] for _ in range(n_items)]

        def constrain(a: int, b: int, sep: float) -> None:
            pred[b].append((a, sep))
            succ[a].append((b, sep))

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
                constrain(a, b, half[a] + half[b] + gap)
        for g, i in fid.items():
            constrain(total + 2 * i, total + 2 * i + 1, label_w[g])  # the frame is as wide as its label
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
    # A frame's left side starts where the first pass pulled it in to its members, so a frame widened for its
    # label grows to the right (the sweep alone would widen it to the left, away from what it holds).
    x, pred, succ = solve(ideal, {it: x[it] for it in range(total, n_items) if kind[it] == "L"})
    shift = min(x[it] - half[it] for it in range(n_items)) - MARGIN if n_items else 0.0
    x = [v - shift for v in x]
    _straighten(chains, x, n, pred, succ)

    # y: a layer's top leaves room for the label rows (and paddings) of the frames that start or end next to it
    n_layers = max(vlayer, default=-1) + 1
    heads, feet = [0] * (n_layers + 1), [0] * (n_layers + 1)
    for g in fid:
        lo, hi = span[g]
        outer = [h for h in prefix[g][:-1]]
        heads[lo] = max(heads[lo], 1 + sum(1 for h in outer if span[h][0] == lo))
        feet[hi] = max(feet[hi], 1 + sum(1 for h in outer if span[h][1] == hi))
    top, ytop = MARGIN + 16.0, []
    for lay in range(n_layers):
        top += heads[lay] * (FRAME_HEAD + FRAME_PAD)
        ytop.append(top)
        top += BOX_H + LAYER_GAP + feet[lay] * FRAME_PAD
    y = [ytop[lay] + BOX_H / 2 for lay in vlayer]
    for i, b in enumerate(boxes):
        b.x, b.y = round(x[i], 1), round(y[i], 1)
    rects: dict[str, tuple] = {}
    inside: dict[str, list[str]] = {}
    for h in fid:
        if len(prefix[h]) > 1:
            inside.setdefault(prefix[h][-2], []).append(h)
    for g in sorted(fid, key=lambda g: -len(prefix[g])):  # inner frames first: an outer one goes round them
        lo, hi = span[g]
        inner = inside.get(g, ())
        y0 = min([ytop[lo] - FRAME_PAD] + [rects[h][1] - FRAME_PAD for h in inner]) - FRAME_HEAD
        y1 = max([ytop[hi] + BOX_H + FRAME_PAD] + [rects[h][3] + FRAME_PAD for h in inner])
        rects[g] = (x[total + 2 * fid[g]], y0, x[total + 2 * fid[g] + 1], y1)
    points = {}
    for (s, t), chain in chains.items():
        down = layers[s] <= layers[t]
        pts = [[x[s], y[s] + (BOX_H / 2 if down else -BOX_H / 2)]]
        pts += [[x[v], y[v]] for v in chain[1:-1]]
        pts.append([x[t], y[t] - (BOX_H / 2 if down else -BOX_H / 2)])
        points[(s, t)] = [[round(a, 1), round(b, 1)] for a, b in pts]
    return points, rects


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
