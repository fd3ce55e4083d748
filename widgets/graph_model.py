"""The autograd graph as plain data: what ``GraphView`` and ``BackwardStepper`` send to the browser.

Two steps, both pure Python and unit-tested without a browser:

* :func:`build_graph` walks ``grad_fn`` -> ``next_functions`` (iteratively: no recursion limit) and returns a
  :class:`GraphModel`: every op node, leaf tensor and the output as a :class:`GNode` with a stable index, the
  edges between them, and a hierarchy of groups by module path (``blocks`` -> ``blocks.3`` ->
  ``blocks.3.fc1``). A node's module comes from the scope the core recorded when it was created
  (``node.origin``, see ``tinygrad_like.sites.record_origins``), else from the parameters it consumes.
  Runs of identical sibling blocks (``blocks.0`` ... ``blocks.39``) become one more group level, drawn as
  "blocks.0–39 ×40".
* :func:`layout` turns a model and the set of expanded groups into the drawing: one box per visible node or
  collapsed group, edges between boxes as polylines, frames around expanded groups. Only what is visible is
  laid out. Layering and crossing reduction come from python-igraph's Sugiyama layout; boxes are then spaced
  by their real widths, so no two boxes overlap.

Nothing here imports ipywidgets, matplotlib or IPython.
"""

from __future__ import annotations

import gc
import inspect
import itertools
import re
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

from tinygrad_like import Tensor, events
from tinygrad_like.autograd.function import Function

NOT_COMPUTED = "not computed yet"
#: the default view of a large graph shows at most about this many boxes
MAX_BOXES = 60
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


@dataclass(slots=True)
class GNode:
    """One node of the autograd graph: an op, a leaf tensor (``param`` when it has a name) or the output."""

    index: int
    id: str
    kind: str  # "op", "param", "leaf" or "output"
    label: str
    shape: tuple = ()
    dtype: str = ""
    device: str = "cpu"
    obj: object = None  # the Function node or the Tensor
    module: str | None = None  # module path ("blocks.3.fc1"); None outside any named module
    saved: list = field(default_factory=list)  # per saved tensor: shape, dtype, versions, stale, writes
    stale: bool = False  # a saved tensor moved since it was saved
    stale_by_optimizer: bool = False  # ... and every write that moved it was an optimizer step
    grad: str = NOT_COMPUTED  # leaves: the state of .grad
    site: str | None = None  # the user's line that created it (ops, when origins were recorded)
    inputs: tuple = ()  # ops: a name per input slot ("input", "weight", "bias", "a", ...)
    forward_s: float | None = None
    backward_s: float | None = None


@dataclass(slots=True)
class Group:
    """A module (``kind="module"``) or a run of identical sibling modules (``kind="run"``)."""

    id: str
    kind: str
    path: str  # module path, or the run's "blocks.0-39"
    label: str
    parent: str | None
    type_name: str = ""
    children: list = field(default_factory=list)  # child group ids
    members: list = field(default_factory=list)  # node indices directly inside
    size: int = 0  # node indices anywhere inside

    @property
    def module(self) -> str:
        """The module path, as a node's ``module``: the module's own ("blocks.3"), or for a run of identical
        blocks the container holding them ("blocks" for blocks.0-39; "" at the top level)."""
        if self.kind == "module":
            return self.path
        first = self.path.rsplit("-", 1)[0]  # "blocks.0-39" -> "blocks.0"
        return first.rsplit(".", 1)[0] if "." in first else ""


@dataclass
class GraphModel:
    nodes: list[GNode]
    edges: list[tuple[int, int, int, str]]  # (src, dst, input slot of dst, shape carried)
    groups: dict[str, Group]
    top: list[str]  # top-level group ids
    chains: list[tuple[str, ...]]  # per node: its groups, outermost first
    root: int  # the output node
    index: dict[int, int]  # id(Function or Tensor) -> node index
    device: str = "cpu"  # the output's device (what the ops ran on)

    def node_for(self, obj) -> int | None:
        """The index of the node drawn for a Function or a leaf Tensor (None when it is not in the graph)."""
        return self.index.get(id(obj))

    def by_id(self, nid: str) -> GNode:
        return self.nodes[int(nid[1:])]

    @property
    def stale_nodes(self) -> list[int]:
        return [n.index for n in self.nodes if n.stale]

    @property
    def ops(self) -> list[GNode]:
        return [n for n in self.nodes if n.kind == "op"]


# ---- building the model -----------------------------------------------------------------------------------
def _fmt_shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")" if len(shape) != 1 else f"({shape[0]},)"


def _grad_state(t: Tensor) -> str:
    g = t.grad
    if g is None:
        return NOT_COMPUTED
    a = g.detach().numpy()
    return f"{_fmt_shape(g.shape)} |g| {float((a.astype('float64') ** 2).sum()) ** 0.5:.3g}" if a.size else "()"


_INPUT_NAMES: dict[type, tuple] = {}


def input_names(fn: Function) -> tuple:
    """The names of an op's inputs, from its ``forward`` signature (``x`` reads as "input")."""
    cls = type(fn)
    names = _INPUT_NAMES.get(cls)
    if names is None:
        try:
            params = list(inspect.signature(cls.forward).parameters)[1:]
        except (TypeError, ValueError):
            params = []
        names = tuple("input" if p in ("x", "input") else p for p in params if not p.startswith("*"))
        _INPUT_NAMES[cls] = names
    return names


def _module_names(model, roots) -> tuple[dict[int, str], dict[int, str], dict[str, str]]:
    """id(module) -> path, id(parameter) -> dotted name, path -> module type name (from ``model`` and from
    the outermost modules recorded in the nodes' scopes)."""
    mods: dict[int, str] = {}
    params: dict[int, str] = {}
    types: dict[str, str] = {}
    for m in ([model] if model is not None else []) + [r for r in roots if r is not model]:
        if id(m) in mods and m is not model:
            continue  # a submodule of a model already named
        for name, sub in m.named_modules():
            mods.setdefault(id(sub), name)
            types.setdefault(name, type(sub).__name__)
        for name, p in m.named_parameters():
            params.setdefault(id(p), name)
        for name, b in m.named_buffers():
            params.setdefault(id(b), name)
    return mods, params, types


def build_graph(root, model=None, names: dict | None = None, timings: Timings | None = None) -> GraphModel:
    """The graph reachable from ``root`` (a Tensor, or a graph node): parameters named by their module path
    (through ``model``, or through the modules recorded when the graph was built), other tensors through
    ``names`` ({"x": x} or {id(x): "x"})."""
    if isinstance(root, Function):
        tensor, root_fn = None, root
    elif isinstance(root, Tensor):
        tensor, root_fn = root, root.grad_fn
    else:
        raise TypeError(f"a graph view expects a Tensor (or a graph node), got {type(root).__name__}")
    # walk the graph once: ops in a deterministic order (so indices survive a rebuild), leaves as met
    fns: list[Function] = []
    if root_fn is not None:
        stack, seen = [root_fn], {id(root_fn)}
        while stack:
            fn = stack.pop()
            fns.append(fn)
            for inp in fn.next or ():
                if isinstance(inp, Function) and id(inp) not in seen:
                    seen.add(id(inp))
                    stack.append(inp)
    scopes = [getattr(getattr(fn, "origin", None), "scope", ()) or () for fn in fns]
    roots = {id(s[0]): s[0] for s in scopes if s}
    mod_names, pnames, types = _module_names(model, list(roots.values()))
    named: dict[int, str] = {}  # the caller's own names (names=): leaf tensors, not the model's parameters
    if names:
        named = {id(t): n for n, t in names.items()} if isinstance(next(iter(names), None), str) else dict(names)

    nodes: list[GNode] = []
    index: dict[int, int] = {}
    edges: list[tuple[int, int, int, str]] = []

    def add(n: GNode, obj) -> int:
        n.index, n.id = len(nodes), f"n{len(nodes)}"
        nodes.append(n)
        index[id(obj)] = n.index
        return n.index

    for fn, scope in zip(fns, scopes):
        module = next((mod_names[id(m)] for m in reversed(scope) if id(m) in mod_names), None) or None
        add(_op_node(fn, timings, module), fn)
    for fn in fns:
        dst = index[id(fn)]
        for slot, inp in enumerate(fn.next or ()):
            if inp is None:
                continue
            if isinstance(inp, Function):
                edges.append((index[id(inp)], dst, slot, _fmt_shape(inp.out_shape)))
                continue
            src = index.get(id(inp))
            if src is None:
                name = pnames.get(id(inp))
                if name is None:
                    src = add(GNode(0, "", "leaf", named.get(id(inp), "leaf"), tuple(inp.shape), inp.dtype.name,
                                    str(inp.device), inp, grad=_grad_state(inp)), inp)
                else:
                    src = add(GNode(0, "", "param", name, tuple(inp.shape), inp.dtype.name, str(inp.device), inp,
                                    module=name.rsplit(".", 1)[0] if "." in name else None,
                                    grad=_grad_state(inp)), inp)
            edges.append((src, dst, slot, _fmt_shape(inp.shape)))
    if tensor is not None:
        label = "output" if root_fn is not None else pnames.get(id(tensor)) or named.get(id(tensor), "tensor")
        out = add(GNode(0, "", "output", label, tuple(tensor.shape), tensor.dtype.name, str(tensor.device), tensor,
                        grad=_grad_state(tensor) if (tensor.retains_grad or root_fn is None) else ""), tensor)
        if root_fn is not None:
            edges.append((index[id(root_fn)], out, 0, _fmt_shape(tensor.shape)))
        root_index = out
    else:
        root_index = 0
    _infer_modules(nodes, edges)
    groups, top, chains = _hierarchy(nodes, types)
    device = str(tensor.device) if tensor is not None else (nodes[-1].device if nodes else "cpu")
    return GraphModel(nodes, edges, groups, top, chains, root_index, index, device)


def _op_node(fn: Function, timings, module: str | None) -> GNode:
    saved = [] if fn.saved is None else fn.saved_info()
    rows, stale, by_opt = [], False, False
    if saved and saved[0].get("freed"):
        rows = [{"freed": True}]
    else:
        for r in saved:
            writes = r["writes"]  # each distinct write once, with its count (as the version error lists them)
            rows.append({k: r[k] for k in ("shape", "dtype", "saved_version", "current_version", "stale", "storage_id")}
                        | {"writes": [str(w) for w in writes],
                           "optimizer": bool(writes) and all(w.optimizer for w in writes)})
        stale = any(r["stale"] for r in rows)
        by_opt = stale and all(r["optimizer"] for r in rows if r["stale"])
    origin = getattr(fn, "origin", None)
    site = getattr(origin, "site", None)
    n = GNode(0, "", "op", fn.name, tuple(fn.out_shape), fn.out_dtype.name, "", fn, module, rows, stale, by_opt,
              site=None if site is None else str(site), inputs=input_names(fn))
    if timings is not None:
        n.forward_s = timings.forward.get(id(fn))
        n.backward_s = timings.backward.get(id(fn))
    return n


def _infer_modules(nodes: list[GNode], edges) -> None:
    """For graphs built while no scope was recorded: an op that consumes a module's parameter belongs to that
    module, and an op between two modules' ops belongs to the deepest module holding both (the ReLU between
    ``blocks.3.fc1`` and ``blocks.3.fc2`` belongs to ``blocks.3``)."""
    if any(n.kind == "op" and hasattr(n.obj, "origin") for n in nodes):
        return  # origins were recorded: each op already has the scope it ran in
    for src, dst, _, _ in edges:
        s, d = nodes[src], nodes[dst]
        if s.kind == "param" and s.module and d.kind == "op" and d.module is None:
            d.module = s.module
    producers: dict[int, list[int]] = {}
    consumers: dict[int, list[int]] = {}
    for src, dst, _, _ in edges:
        producers.setdefault(dst, []).append(src)
        consumers.setdefault(src, []).append(dst)
    for _ in range(2):  # a second pass places ops whose neighbours were placed by the first
        for n in nodes:
            if n.kind != "op" or n.module is not None:
                continue
            ins = [m for i in producers.get(n.index, ()) if (m := nodes[i].module) and nodes[i].kind == "op"]
            outs = [m for i in consumers.get(n.index, ()) if (m := nodes[i].module) and nodes[i].kind == "op"]
            if ins and outs:
                n.module = _common_prefix(ins + outs)


def _common_prefix(paths: list[str]) -> str | None:
    parts = [p.split(".") for p in paths]
    common = []
    for level in zip(*parts):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return ".".join(common) or None


_INDEXED = re.compile(r"^(.*?)(\d+)$")


def _hierarchy(nodes: list[GNode], types: dict[str, str]):
    """Groups by module path, with runs of identical numbered siblings folded into one more level."""
    groups: dict[str, Group] = {}

    def ensure(path: str) -> str:
        gid = f"group:{path}"
        if gid not in groups:
            parent = ensure(path.rsplit(".", 1)[0]) if "." in path else None
            groups[gid] = Group(gid, "module", path, path, parent, types.get(path, ""))
            if parent is not None:
                groups[parent].children.append(gid)
        return gid

    for n in nodes:
        if n.module:
            groups[ensure(n.module)].members.append(n.index)
    top = [g.id for g in groups.values() if g.parent is None]

    def signature(gid: str) -> tuple:
        g, base = groups[gid], len(groups[gid].path) + 1
        items = Counter()
        stack = [gid]
        while stack:
            h = groups[stack.pop()]
            stack.extend(h.children)
            for i in h.members:
                n = nodes[i]
                label = n.label[base:] if n.kind == "param" else n.label
                items[(h.path[base:], n.kind, label, n.shape)] += 1
        return g.type_name, tuple(sorted(items.items()))

    def fold_runs(child_ids: list[str], parent: str | None) -> list[str]:
        numbered = []
        for c in child_ids:
            m = _INDEXED.match(groups[c].path)
            if m and (m.group(1) == "" or m.group(1).endswith(".")):
                numbered.append((int(m.group(2)), c))
        numbered.sort()
        out, i = [c for c in child_ids if c not in {c for _, c in numbered}], 0
        while i < len(numbered):
            j, sig = i + 1, signature(numbered[i][1])
            while j < len(numbered) and numbered[j][0] == numbered[j - 1][0] + 1 and signature(numbered[j][1]) == sig:
                j += 1
            run = [c for _, c in numbered[i:j]]
            if len(run) >= 2:
                first = groups[run[0]].path
                stem = first[: len(first) - len(str(numbered[i][0]))]
                path = f"{stem}{numbered[i][0]}-{numbered[j - 1][0]}"
                rid = f"run:{path}"
                groups[rid] = Group(rid, "run", path, f"{stem}{numbered[i][0]}–{numbered[j - 1][0]} ×{len(run)}",
                                    parent, groups[run[0]].type_name, children=run)
                for c in run:
                    groups[c].parent = rid
                out.append(rid)
            else:
                out.extend(run)
            i = j
        return sorted(out, key=lambda c: _natural(groups[c].path))

    for gid in list(groups):
        g = groups[gid]
        if g.kind == "module" and len(g.children) > 1:
            g.children = fold_runs(g.children, gid)
    top = fold_runs(top, None) if len(top) > 1 else top

    chains: list[tuple[str, ...]] = []
    for n in nodes:
        chain: list[str] = []
        gid = f"group:{n.module}" if n.module else None
        while gid is not None:
            chain.append(gid)
            gid = groups[gid].parent
        chains.append(tuple(reversed(chain)))
        for gid in chain:
            groups[gid].size += 1
    for g in groups.values():
        kind = g.type_name
        n_ops = sum(1 for i in _all_nodes(groups, g.id) if nodes[i].kind == "op")
        g.label = g.label if g.kind == "run" else g.path
        ops = f"{n_ops} op" if n_ops == 1 else f"{n_ops} ops"
        g.type_name = f"{kind} · {ops}" if kind else ops
    return groups, top, chains


def _all_nodes(groups: dict[str, Group], gid: str) -> list[int]:
    out, stack = [], [gid]
    while stack:
        g = groups[stack.pop()]
        out.extend(g.members)
        stack.extend(g.children)
    return out


def _natural(path: str) -> list:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path)]


# ---- what is visible --------------------------------------------------------------------------------------
def owners(model: GraphModel, expanded: set[str]) -> list[str]:
    """For each node, the id of the box that shows it: its outermost collapsed group, or the node itself."""
    out = []
    for n, chain in zip(model.nodes, model.chains):
        out.append(next((g for g in chain if g not in expanded), n.id))
    return out


def default_expanded(model: GraphModel, max_boxes: int = MAX_BOXES) -> set[str]:
    """Expand groups breadth-first while the drawing stays within ``max_boxes`` boxes; runs of identical
    blocks stay folded. A graph that fits is shown whole."""
    n_boxes = len(set(owners(model, set())))
    expanded: set[str] = set()
    queue = list(model.top)
    while queue:
        gid = queue.pop(0)
        g = model.groups[gid]
        if g.kind == "run":
            continue
        grows = len(g.children) + len(g.members) - 1
        if n_boxes + grows <= max_boxes:
            expanded.add(gid)
            n_boxes += grows
            queue.extend(g.children)
    if len(model.nodes) <= max_boxes:  # small enough to show every node, runs included
        expanded = set(model.groups)
    return expanded


# ---- layout -------------------------------------------------------------------------------------------------
def text_width(text: str, char_w: float = CHAR_W) -> float:
    return len(text) * char_w


def _clip(text: str, width: float, char_w: float) -> str:
    room = int((width - 16) / char_w + 1e-6)
    return text if len(text) <= room else ("…" + text[-(room - 1):] if room > 1 else "…")


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


def boxes_for(model: GraphModel, expanded: set[str]) -> tuple[list[Box], list[str]]:
    """The boxes to draw (one per visible node or collapsed group) and each node's box id."""
    own = owners(model, expanded)
    boxes: dict[str, Box] = {}
    for n, bid in zip(model.nodes, own):
        b = boxes.get(bid)
        if b is None:
            if bid == n.id:
                b = Box(bid, n.kind, _node_label(n), _node_sub(n), [])
            else:
                g = model.groups[bid]
                label = g.label if g.kind == "run" else g.path
                up = model.groups.get(g.parent) if g.parent in expanded else None
                if g.kind == "module" and up is not None and up.kind == "module" and len(up.children) + len(
                        up.members) >= 2:  # the parent's frame names the rest of the path: "norm", not "blocks.1.norm"
                    label = g.path[len(up.path) + 1:]
                b = Box(bid, "group", label, g.type_name, [], expandable=True)
            boxes[bid] = b
        b.nodes.append(n.index)
        b.stale = b.stale or n.stale
    for b in boxes.values():
        w = max(text_width(b.label) + 22, text_width(b.sub, SUB_CHAR_W) + 16, MIN_W)
        b.w = min(w, MAX_W)
        b.label, b.sub = _clip(b.label, b.w, CHAR_W), _clip(b.sub, b.w, SUB_CHAR_W)
    return list(boxes.values()), own


def _node_label(n: GNode) -> str:
    """A parameter shows its own name ("weight"); its module is on the second line and in its frame."""
    return n.label.rsplit(".", 1)[-1] if n.kind == "param" and n.module else n.label


def _node_sub(n: GNode) -> str:
    shape = _fmt_shape(n.shape) if n.shape or n.kind != "op" else "()"
    if n.module and n.kind in ("op", "param"):
        return f"{n.module.rsplit('.', 1)[-1]} · {shape}"
    return shape


def layout(model: GraphModel, expanded: set[str]) -> dict:
    """Boxes, edges (polylines through the layers they cross) and frames for the visible part."""
    with _gc_paused():
        return _layout(model, expanded)


@contextmanager
def _gc_paused():
    """The layout makes tens of thousands of small lists and tuples, which set off the garbage collector over
    and over, and each run walks the whole heap (the model's tensors and graph too): 40% of the time of a
    4,000-box layout. Nothing it makes holds a cycle, so pausing the collector frees nothing late."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _layout(model: GraphModel, expanded: set[str]) -> dict:
    boxes, own = boxes_for(model, expanded)
    pos = {b.id: i for i, b in enumerate(boxes)}
    bedges: dict[tuple[int, int], list] = {}
    for s, d, _, shape in model.edges:
        bs, bd = pos[own[s]], pos[own[d]]
        if bs != bd:
            e = bedges.setdefault((bs, bd), [shape, []])
            e[1].append((s, d))
    framed, box_chain = _framed_groups(model, boxes, own, expanded)
    chain_of = [box_chain[b.id] for b in boxes]
    layers = _layers(len(boxes), list(bedges), chain_of)
    points, rects = _place(boxes, layers, list(bedges), chain_of,
                           {g: text_width(_frame_label(model, g), FRAME_CHAR_W) + 20 for g in framed})
    edges = [{"s": s, "t": t, "points": points[(s, t)], "label": lab, "pairs": [list(p) for p in pairs]}
             for (s, t), (lab, pairs) in bedges.items()]
    frames = sorted(({"id": g, "label": _frame_label(model, g), "depth": _depth(model, g), "x": round(x0, 1),
                      "y": round(y0, 1), "w": round(x1 - x0, 1), "h": round(y1 - y0, 1)}
                     for g, (x0, y0, x1, y1) in rects.items()), key=lambda f: f["depth"])
    xs = [b.x + b.w / 2 for b in boxes] + [f["x"] + f["w"] for f in frames]
    ys = [b.y + b.h / 2 for b in boxes] + [f["y"] + f["h"] for f in frames]
    return {"boxes": boxes, "edges": edges, "frames": frames, "own": own,
            "width": (max(xs) if xs else 0) + MARGIN, "height": (max(ys) if ys else 0) + MARGIN}


def _frame_label(model: GraphModel, gid: str) -> str:
    g = model.groups[gid]
    return g.label if g.kind == "run" else f"{g.path} · {g.type_name}"


def _framed_groups(model: GraphModel, boxes: list[Box], own: list[str], expanded: set[str]):
    """The expanded groups drawn as frames (those holding two or more boxes and two or more ops: a lone Linear
    and its parameters need none, the op's second line names its module), and for each box the framed
    groups around it, outermost first."""
    inside: dict[str, set[str]] = {}
    open_chain: dict[str, tuple[str, ...]] = {}
    for n, chain in zip(model.nodes, model.chains):
        opened = tuple(itertools.takewhile(expanded.__contains__, chain))
        open_chain.setdefault(own[n.index], opened)
        for gid in opened:
            inside.setdefault(gid, set()).add(own[n.index])
    framed = {g for g, bs in inside.items() if len(bs) >= 2
              and sum(1 for i in _all_nodes(model.groups, g) if model.nodes[i].kind == "op") >= 2}
    return framed, {b.id: tuple(g for g in open_chain[b.id] if g in framed) for b in boxes}

def _layers(n: int, edges: list[tuple[int, int]], chain_of: list[tuple] | None = None) -> list[int]:
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


def _place(boxes: list[Box], layers: list[int], edges: list[tuple[int, int]], box_chain: list[tuple],
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


def _depth(model: GraphModel, gid: str) -> int:
    d, g = 0, model.groups[gid].parent
    while g is not None:
        d, g = d + 1, model.groups[g].parent
    return d


# ---- timings ------------------------------------------------------------------------------------------------
class Timings:
    """Forward kernel time and backward time per graph node, from events.

    Use ``with record_timings() as t:`` around a forward and backward, then pass ``timings=t``.
    Forward: the kernels timed between one op's record and the next belong to the latter (ops
    emit ``OpRecorded`` right after their forward). Backward: each ``BackwardStep``'s seconds.
    """

    def __init__(self) -> None:
        self.forward: dict[int, float] = {}
        self.backward: dict[int, float] = {}
        self._pending = 0.0
        self._keep: list = []  # keep nodes alive so ids stay unique while recording

    def __call__(self, e) -> None:
        if isinstance(e, events.KernelTimed):
            self._pending += e.seconds
        elif isinstance(e, events.OpRecorded):
            self.forward[id(e.node)] = self._pending
            self._keep.append(e.node)
            self._pending = 0.0
        elif isinstance(e, events.BackwardStep):
            self.backward[id(e.node)] = e.seconds


@contextmanager
def record_timings():
    t = Timings()
    unsubscribe = events.subscribe(t)
    try:
        yield t
    finally:
        unsubscribe()
        t._keep.clear()  # ids stay valid while the graph itself keeps its nodes alive


# ---- the payload the browser draws (see static/CONTRACT.md) --------------------------------------------------
def _us(s: float | None) -> str | None:
    return None if s is None else f"{s * 1e6:.1f} µs"


def node_tip(model: GraphModel, n: GNode) -> list[list[str]]:
    """The hover rows of a node: what it is, its output, where it was made, its saved tensors and times."""
    rows: list[list[str]] = []
    if n.kind == "op":
        rows += [["op", n.label], ["module", n.module or "—"], ["output", f"{_fmt_shape(n.shape)} {n.dtype}"],
                 ["device", model.device], ["created at", n.site or "not recorded"]]
        if n.saved and n.saved[0].get("freed"):
            rows.append(["saved", "freed after backward"])
        for i, r in enumerate(n.saved if not (n.saved and n.saved[0].get("freed")) else ()):
            mark = " ← modified in place" if r["stale"] else ""
            rows.append([f"saved {i}", f"{_fmt_shape(r['shape'])} {r['dtype']}, version {r['saved_version']} "
                                      f"at save, {r['current_version']} now{mark}"])
    else:
        rows += [["tensor", n.label], ["shape", f"{_fmt_shape(n.shape)} {n.dtype}"], ["device", n.device]]
        if n.kind in ("param", "leaf"):
            rows.append([".grad", n.grad])
    for key, val in (("forward", _us(n.forward_s)), ("backward", _us(n.backward_s))):
        if val is not None:
            rows.append([key, val])
    return rows


def group_tip(model: GraphModel, gid: str) -> list[list[str]]:
    g = model.groups[gid]
    ids = _all_nodes(model.groups, gid)
    n_ops = sum(1 for i in ids if model.nodes[i].kind == "op")
    rows = [["group", g.label], ["contains", f"{len(ids)} nodes, {n_ops} ops"]]
    if g.kind == "run":
        rows.append(["blocks", f"{len(g.children)} identical {g.type_name.split(' · ')[0] or 'blocks'}"])
    rows.append(["click", "to expand"])
    return rows


def graph_notes(model: GraphModel, n_boxes: int) -> list[dict]:
    """Plain-text banners: why nodes are red, whether backward already ran, how the graph is folded."""
    notes = []
    stale = [n for n in model.nodes if n.stale]
    if stale and all(n.stale_by_optimizer for n in stale):
        writes = sorted({w for n in stale for r in n.saved if r.get("stale") for w in r["writes"]})
        notes.append({"level": "warn", "text": (
            f"This graph is stale: the optimizer step updated the parameters in place after this forward pass "
            f"— {'; '.join(writes[:3])}. {len(stale)} node(s) saved the old weights (red borders), so backward "
            f"through this graph would fail. Run the forward pass again to see a fresh graph.")})
    elif stale:
        notes.append({"level": "error", "text": (
            f"{len(stale)} node(s) hold a saved tensor that was modified in place after it was saved (red "
            f"borders): backward through them will fail. Hover or click one to see which write moved it.")})
    if any(n.saved and n.saved[0].get("freed") for n in model.nodes):
        notes.append({"level": "info", "text": "Backward has run through this graph and freed its saved tensors "
                                               "(pass retain_graph=True to keep them)."})
    if n_boxes < len(model.nodes):
        notes.append({"level": "info", "text": f"{len(model.nodes)} nodes shown as {n_boxes} boxes, grouped by "
                                               f"module: click a group to expand it, or search by name."})
    return notes


def graph_payload(model: GraphModel, expanded: set[str], notes: list[dict] | None = None) -> dict:
    """The ``graph`` traitlet: everything the browser draws, as plain JSON-able data."""
    lay = layout(model, expanded)
    boxes = lay["boxes"]
    pos = {b.id: i for i, b in enumerate(boxes)}
    out_boxes = []
    for b in boxes:
        if b.kind == "group":
            tip = group_tip(model, b.id)
        else:
            tip = node_tip(model, model.nodes[b.nodes[0]])
        out_boxes.append({"id": b.id, "kind": b.kind, "label": b.label, "sub": b.sub, "x": b.x, "y": b.y,
                          "w": b.w, "h": b.h, "stale": b.stale, "expandable": b.expandable, "nodes": b.nodes,
                          "tip": tip})
    return {"width": round(lay["width"], 1), "height": round(lay["height"], 1), "boxes": out_boxes,
            "edges": lay["edges"], "frames": lay["frames"],
            "nodes": [[n.label, n.module or ""] for n in model.nodes],
            "owner": [pos[o] for o in lay["own"]],
            "notes": (notes if notes is not None else graph_notes(model, len(boxes)))}
