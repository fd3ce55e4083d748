"""The autograd graph as plain data: what ``GraphView`` and ``BackwardStepper`` send to the browser.

Two steps, both pure Python and unit-tested without a browser:

* :func:`build_graph` walks ``grad_fn`` -> ``next_functions`` (iteratively: no recursion limit) and returns a
  :class:`GraphModel`: every op node, leaf tensor and the output as a :class:`GNode` with a stable index, the
  edges between them, and a hierarchy of groups by module path (``blocks`` -> ``blocks.3`` ->
  ``blocks.3.fc1``). A node's module comes from the scope the core recorded when it was created
  (``node.origin``, see ``tinygrad_like.sites.record_origins``), else from the parameters it consumes.
  A module called more than once in the graph gets a group per call (``layer1.0.relu (call 2)``), so every
  edge runs down; a recurrent layer's ops go by layer and time step (``rnn.l0.t3``, from the markers
  ``nn.RNN``/``LSTM``/``GRU`` push while scopes are recorded). Runs of identical sibling blocks
  (``blocks.0`` ... ``blocks.39``), time steps or calls become one more group level, drawn as "blocks.0–39 ×40",
  "t = 0–15 ×16" or "cell (calls 1–16) ×16". Children of a ``Sequential`` are named with their parent's path
  ("blocks.5", "downsample.0"), never by a bare index.
* :func:`layout` turns a model and the set of expanded groups into the drawing: one box per visible node or
  collapsed group, edges between boxes as polylines, frames around expanded groups. Only what is visible is
  laid out; where each box and edge goes is ``graph_layout``'s job.

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

import numpy as np

from tinygrad_like import Tensor, events
from tinygrad_like.autograd.function import Function
from tinygrad_like.autograd.torch_nodes import view_label
from tinygrad_like.ops.recurrent import GRULayer, LSTMLayer, RNNLayer
from tinygrad_like.sites import Marker

from .diagnostics import saturation
from .graph_layout import CHAR_W, FRAME_CHAR_W, MARGIN, MAX_W, MIN_W, SUB_CHAR_W, Box, assign_layers, place

NOT_COMPUTED = "not computed yet"
_LAYERS = (LSTMLayer, GRULayer, RNNLayer)  # fused recurrent layer nodes: drawn as a group that opens into time steps
_OPS = ("op", "step")  # the node kinds a group's op count counts (a fused layer's time steps among them)
#: the default view of a large graph shows at most about this many boxes
MAX_BOXES = 60


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
    short: str = ""  # its name inside its parent's frame: "relu (call 2)", "downsample.0", "t = 3"
    marker: str = ""  # a recurrent layer's part ("layer", "step"; see sites.Marker), "" for a module or a run

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
    root_type: str = ""  # the model's class name: a top-level Sequential's children read "Sequential[0]"
    fused: dict[int, tuple[int, int]] = field(default_factory=dict)  # a fused layer's node -> its first, last step
    # worked out once per model (its hierarchy does not change): see op_counts, foldable
    _op_counts: dict | None = field(default=None, init=False, repr=False, compare=False)
    _foldable: frozenset | None = field(default=None, init=False, repr=False, compare=False)
    # box id -> hover rows: a node's or group's tip does not change with the folding, so each is built once
    _tips: dict = field(default_factory=dict, init=False, repr=False, compare=False)

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
    with _gc_paused():  # (many small objects, no cycles: see _gc_paused)
        return _build_graph(root, model, names, timings)


def _build_graph(root, model, names, timings) -> GraphModel:
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
    roots = {id(s[0]): s[0] for s in scopes if s and type(s[0]) is not Marker}
    mod_names, pnames, types = _module_names(model, list(roots.values()))
    paths, markers = _call_paths(fns, scopes, mod_names, types)
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

    for fn, module in zip(fns, paths):
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
    _place_params(nodes, edges)
    fused = _time_steps(nodes, edges, markers, types)
    root_type = type(model).__name__ if model is not None else (
        type(next(iter(roots.values()))).__name__ if len(roots) == 1 else "")
    groups, top, chains = _hierarchy(nodes, types, edges, markers, root_type)
    device = str(tensor.device) if tensor is not None else (nodes[-1].device if nodes else "cpu")
    return GraphModel(nodes, edges, groups, top, chains, root_index, index, device, root_type, fused)


_CELL = {"LSTM": "LSTM cell", "GRU": "GRU cell", "RNN_TANH": "RNN cell (tanh)", "RNN_RELU": "RNN cell (relu)"}


def _time_steps(nodes: list[GNode], edges: list, markers: dict, types: dict) -> dict[int, tuple[int, int]]:
    """Give each fused recurrent layer node (``LSTMLayer``, ``GRULayer``, ``RNNLayer``: one node runs every time
    step) a group of its own holding it and one ``step`` node per time step, so the drawing can open the layer
    into its steps: ``rnn.l0.LSTMLayer`` -> ``rnn.l0.LSTMLayer.t3``, folded into "t = 0–31 ×32" like the steps of
    a layer run cell by cell. The steps are no graph nodes (backward runs the layer node once); they show what
    the node saved for each step (``step_values``). Their edges: each step's state into the next, in the order
    they run. Drawn open, the layer's inputs enter its first step and its outputs leave its last, so the steps
    stand in one column (an edge from the input projection and each weight into every step made a 7,000 px
    zigzag of a 16-step layer). Returns each layer node's index -> (its first step's index, its last step's)."""
    fused: dict[int, tuple[int, int]] = {}
    paths: Counter = Counter()
    for f in [n for n in nodes if n.kind == "op" and isinstance(n.obj, _LAYERS)]:
        fn = f.obj
        n_steps, batch = f.shape[0], f.shape[1]
        sizes = list(fn.batch_sizes) if fn.batch_sizes is not None else [batch] * n_steps
        stem = f"{f.module}.{f.label}" if f.module else f.label
        paths[stem] += 1
        path = stem if paths[stem] == 1 else f"{stem} (call {paths[stem]})"
        markers[path], types[path] = Marker(f.label, f.label, "fused", ""), ""
        f.module = path
        cell = _CELL.get(fn.mode, "cell")
        hidden = _state_width(f, nodes, edges)
        first = prev = None
        for t in (range(n_steps - 1, -1, -1) if fn.reverse else range(n_steps)):
            step = f"{path}.t{t}"
            kind = cell.split(" (")[0]  # a run of steps reads "LSTM cell · 16 time steps"
            markers[step], types[step] = Marker(f"t{t}", f"t = {t}", "step", kind), kind
            s = GNode(len(nodes), f"n{len(nodes)}", "step", cell, (sizes[t], hidden), f.dtype, f.device, fn, step,
                      inputs=f.inputs)
            nodes.append(s)
            if prev is not None:
                edges.append((prev, s.index, 1, _fmt_shape((sizes[t], hidden))))
            first, prev = s.index if first is None else first, s.index
        fused[f.index] = (first, prev)
    return fused


def _state_width(layer: GNode, nodes: list[GNode], edges: list) -> int:
    """The width of a layer's ``h``: its states' (an LSTM's hold ``[h | c]``: then its saved ``h0``'s, or after
    backward freed that, its ``w_hh``'s second dim, or half the states' without either)."""
    fn = layer.obj
    if fn.mode != "LSTM":
        return layer.shape[-1]
    if isinstance(fn.saved, tuple) and getattr(fn.saved[1], "shape", None):  # (xp, h0, c0, w_hh, ...)
        return fn.saved[1].shape[-1]
    w_hh = next((nodes[s].shape for s, d, slot, _ in edges if d == layer.index and slot == 3), None)
    return w_hh[1] if w_hh else layer.shape[-1] // 2


def _levels(scope) -> list[tuple[object, object]]:
    """A scope's entries (modules and markers), outermost first, each with the call it ran in: the identity of
    that level's ``sites.Scope`` (one per call). A plain tuple (not made by a call) counts as one call per entry."""
    out: list[tuple[object, object]] = []
    s = scope
    while s:
        up = getattr(s, "up", None)
        if up is None:
            out.extend((e, ("entry", id(e))) for e in reversed(s))
            break
        out.append((s[-1], id(s)))
        s = up
    out.reverse()
    return out


@dataclass(slots=True)
class _Call:
    """One call of a module (or one recurrent marker) while the graph was recorded."""

    raw: str  # its module path ("" for the model itself), or its marker's under its module ("rnn.l0.t3")
    rel: str | None  # ".name" below its caller's path; None where it is not below it (the model, a module elsewhere)
    caller: object | None  # the caller's call (the identity of its Scope) when ``rel`` is set
    entry: object  # the Module, or the Marker
    first: int | None = None  # the forward sequence number of its first op: calls are numbered in that order


def _call_paths(fns: list[Function], scopes: list, mod_names: dict[int, str], types: dict[str, str]):
    """Each op's group path, from the scope it ran in: the innermost named module's path (or a recurrent layer's
    marker under it, ``rnn.l0.t3``), with the calls of a module called more than once in this graph numbered in
    forward order, ``layer1.0.relu (call 2)``, and a child's path under the call it ran in (``block (call 2).fc``).
    The model itself (path "") is no group, unless it is called more than once: ``LSTMCell (call 3)``.
    Fills ``types`` for the numbered paths; returns (paths, {marker path: Marker})."""
    calls: dict[object, _Call] = {}  # per call, by the identity of its Scope
    innermost: dict[int, object] = {}  # id(scope) -> the innermost named call (None: no named module)
    chain_of: dict[object, list] = {}  # a call -> it and the calls around it, innermost first
    out_calls: list = []
    for fn, scope in zip(fns, scopes):
        key = id(scope)
        if key in innermost:
            tok = innermost[key]
        else:
            tok = parent_raw = parent_tok = None
            for entry, token in _levels(scope):
                if type(entry) is Marker:
                    if parent_raw is None:
                        continue  # a marker outside any named module has nothing to hang from
                    raw, rel = f"{parent_raw}.{entry.name}".lstrip("."), "." + entry.name
                else:
                    raw = mod_names.get(id(entry))
                    if raw is None:
                        continue  # a module neither the model's nor a recorded outermost one
                    if raw == "":
                        rel = None  # the model itself
                    elif parent_raw == "" or parent_raw is not None and raw.startswith(parent_raw + "."):
                        rel = "." + raw if parent_raw == "" else raw[len(parent_raw):]
                    else:
                        rel = None  # a module registered elsewhere: its own path
                if token not in calls:
                    calls[token] = _Call(raw, rel, parent_tok if rel is not None else None, entry)
                    chain_of[token] = [token] + (chain_of[parent_tok] if parent_tok is not None else [])
                parent_raw, parent_tok = raw, token
            tok = innermost[key] = parent_tok
        out_calls.append(tok)
        if tok is not None:
            seq = getattr(fn, "seq", 0)
            for t in chain_of[tok]:
                c = calls[t]
                if c.first is None or seq < c.first:
                    c.first = seq
    # resolve outermost first: a call's path is its caller's (already numbered) plus its own name
    depth = {t: len(chain_of[t]) for t in calls}
    resolved: dict[object, str] = {}
    markers: dict[str, Marker] = {}
    for d in sorted(set(depth.values())):
        slots: dict[object, list] = {}
        for t, c in calls.items():
            if depth[t] != d:
                continue
            if c.raw == "":  # the model: called once it is no group; called again, "GPT (call 2)"
                slot = ("model", id(c.entry))
            elif c.caller is not None:
                up = resolved[c.caller]
                slot = up + c.rel if up else c.rel[1:]
            else:
                slot = c.raw
            slots.setdefault(slot, []).append((c.first, t))
        for slot, same in slots.items():
            same.sort(key=lambda st: st[0])
            for i, (_, t) in enumerate(same, 1):
                entry = calls[t].entry
                if isinstance(slot, tuple):
                    path = "" if len(same) == 1 else f"{type(entry).__name__} (call {i})"
                else:
                    path = slot if len(same) == 1 else f"{slot} (call {i})"
                resolved[t] = path
                if type(entry) is Marker:
                    markers[path] = entry
                    types[path] = entry.type_name
                elif path:
                    types.setdefault(path, type(entry).__name__)
    return [resolved[t] or None if t is not None else None for t in out_calls], markers


def _place_params(nodes: list[GNode], edges) -> None:
    """A parameter sits in the deepest group holding every op that reads it, below its own module (a recurrent
    layer's ``weight_hh_l0`` in ``rnn.l0``, beside its time steps); the parameter of a module called more than
    once sits beside the calls (``fc (call 1)``, ``fc (call 2)``), not in a group of its own."""
    readers: dict[int, list] = {}
    for src, dst, _, _ in edges:
        if nodes[src].kind == "param" and nodes[dst].kind == "op":
            readers.setdefault(src, []).append(nodes[dst].module)
    op_paths = {n.module for n in nodes if n.kind == "op" and n.module}
    for i, mods in readers.items():
        n = nodes[i]
        own = n.module
        if own is None or None in mods:
            continue
        common = _common_prefix(list(mods))
        if common and common.startswith(own + ".") and " (call " not in common[len(own):]:
            n.module = common
        elif own not in op_paths and not any(m.startswith(own + ".") for m in mods):
            n.module = common  # its module's ops are all in numbered calls: the group around them


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
    n = GNode(0, "", "op", view_label(fn), tuple(fn.out_shape), fn.out_dtype.name, "", fn, module, rows, stale, by_opt,
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


_INDEX = re.compile(r"^((?:.*\.)?)(\d+)$")  # a numbered child: "blocks.3", or "3" at the top
_STEP = re.compile(r"^(.*\.t)(\d+)$")  # a recurrent layer's time step: "rnn.l0.t3"
_CALL = re.compile(r"^(.*) \(call (\d+)\)$")  # one call of a module called more than once: "relu (call 2)"
_BARE = re.compile(r"^(\d+)((?: \(call \d+\))?)$")  # a path component that is only an index


def full_name(path: str, root_type: str = "") -> str:
    """A group's path as a learner reads it: the path, except that a top-level ``Sequential``'s child, whose path
    is a bare index ("0"), is named by the model's class: "Sequential[0]" ("Sequential[0].fc")."""
    first, dot, rest = path.partition(".")
    m = _BARE.match(first)
    if m:
        first = f"{root_type or 'model'}[{m.group(1)}]{m.group(2)}"
    return first + dot + rest


def short_name(path: str, root_type: str = "") -> str:
    """The end of a path that names it inside its parent's frame: "fc1", "relu (call 2)", and for a child of a
    ``Sequential``/``ModuleList`` its parent's name too ("blocks.5", "downsample.0"), never a bare index."""
    parts = path.split(".")
    i = len(parts) - 1
    while i > 0 and _BARE.match(parts[i]):
        i -= 1
    return full_name(".".join(parts[i:]), root_type) if i == 0 else ".".join(parts[i:])


def _run_key(g: Group) -> tuple | None:
    """(kind, stem, number) of a group that can fold with its numbered siblings into a run, else None."""
    if g.marker == "step":
        m = _STEP.match(g.path)
        return None if m is None else ("step", m.group(1), int(m.group(2)))
    if g.marker:
        return None
    m = _CALL.match(g.path)
    if m:
        return "call", m.group(1), int(m.group(2))
    m = _INDEX.match(g.path)
    return None if m is None else ("index", m.group(1), int(m.group(2)))


def _run_names(kind: str, stem: str, a: int, b: int, root_type: str) -> tuple[str, str]:
    """The path (the run's id) and the label of a run of numbered siblings a..b."""
    k = b - a + 1
    if kind == "call":
        return f"{stem} (call {a}-{b})", f"{short_name(stem, root_type)} (calls {a}–{b}) ×{k}"
    if kind == "step":
        return f"{stem}{a}-{b}", f"t = {a}–{b} ×{k}"
    label = f"{root_type or 'model'}[{a}–{b}] ×{k}" if stem == "" else f"{full_name(stem, root_type)}{a}–{b} ×{k}"
    return f"{stem}{a}-{b}", label


def _hierarchy(nodes: list[GNode], types: dict[str, str], edges=(), markers: dict | None = None,
               root_type: str = ""):
    """Groups by module path (a call of a module called more than once, a recurrent layer's layer and time step
    each one more group), with runs of identical numbered siblings (blocks, time steps, calls) folded into one
    more level."""
    markers = markers or {}
    groups: dict[str, Group] = {}

    def ensure(path: str) -> str:
        gid = f"group:{path}"
        if gid not in groups:
            parent = ensure(path.rsplit(".", 1)[0]) if "." in path else None
            mk = markers.get(path)
            groups[gid] = Group(gid, "module", path, path, parent, types.get(path, ""),
                                marker=mk.kind if mk is not None else "")
            if parent is not None:
                groups[parent].children.append(gid)
        return gid

    for n in nodes:
        if n.module:
            groups[ensure(n.module)].members.append(n.index)
    top = [g.id for g in groups.values() if g.parent is None]

    # forward order (ops by creation; leaves first, the output last) and consumers, to keep runs convex
    order = [getattr(n.obj, "seq", 0) if n.kind == "op" else (float("inf") if n.kind == "output" else -1)
             for n in nodes]
    consumers: list[list[int]] = [[] for _ in nodes]
    for src, dst, _, _ in edges:
        consumers[src].append(dst)

    def convex(members: set[int]) -> bool:
        """Whether no path leaves ``members`` and comes back: folded into one box, they keep every edge
        running down (two calls of ResNet's ``relu`` with a conv between them do not fold)."""
        hi = max((order[i] for i in members), default=-1)
        stack = [d for i in members for d in consumers[i] if d not in members and order[d] < hi]
        seen = set(stack)
        while stack:
            for d in consumers[stack.pop()]:
                if d in members:
                    return False
                if d not in seen and order[d] < hi:
                    seen.add(d)
                    stack.append(d)
        return True

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
                shape = n.shape[1:] if n.kind == "step" else n.shape  # (steps fold whatever rows ran: packed)
                items[(h.path[base:], n.kind, label, shape)] += 1
        return g.type_name, tuple(sorted(items.items()))

    def fold_runs(child_ids: list[str], parent: str | None) -> list[str]:
        numbered: dict[tuple, list] = {}
        for c in child_ids:
            key = _run_key(groups[c])
            if key is not None:
                numbered.setdefault(key[:2], []).append((key[2], c))
        in_runs = {c for same in numbered.values() for _, c in same}
        out = [c for c in child_ids if c not in in_runs]
        for (kind, stem), same in numbered.items():
            same.sort()
            i = 0
            while i < len(same):
                j, sig = i + 1, signature(same[i][1])
                while j < len(same) and same[j][0] == same[j - 1][0] + 1 and signature(same[j][1]) == sig:
                    j += 1
                if j - i >= 2 and not convex({k for _, c in same[i:j] for k in _all_nodes(groups, c)}):
                    j = i + 1  # not convex as a whole: grow it one sibling at a time while it stays so
                    inside = set(_all_nodes(groups, same[i][1]))
                    while j < len(same) and same[j][0] == same[j - 1][0] + 1 and signature(same[j][1]) == sig:
                        grown = inside | set(_all_nodes(groups, same[j][1]))
                        if not convex(grown):
                            break
                        inside, j = grown, j + 1
                run = [c for _, c in same[i:j]]
                if len(run) >= 2:
                    path, label = _run_names(kind, stem, same[i][0], same[j - 1][0], root_type)
                    rid = f"run:{path}"
                    groups[rid] = Group(rid, "run", path, label, parent, groups[run[0]].type_name, children=run,
                                        short=label, marker=groups[run[0]].marker)
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

    def title(g: Group) -> str:  # (parents first: a group's parent is made before it)
        mk = markers.get(g.path) if g.kind == "module" else None
        if mk is None:
            return g.label if g.kind == "run" else full_name(g.path, root_type)
        if "." not in g.path:  # a layer of the model itself (a bare nn.LSTM): "LSTM · layer 0"
            return f"{root_type} · {mk.label}" if root_type else mk.label
        return f"{groups['group:' + g.path.rsplit('.', 1)[0]].label} · {mk.label}"

    for g in sorted(groups.values(), key=lambda g: g.path.count(".")):
        kind = g.type_name
        inside = [nodes[i].kind for i in _all_nodes(groups, g.id)]
        n_ops, n_steps = inside.count("op"), inside.count("step")
        g.label = title(g)
        if g.kind == "module":
            mk = markers.get(g.path)
            g.short = mk.label if mk is not None else short_name(g.path, root_type)
        ops = f"{n_ops} op" if n_ops == 1 else f"{n_ops} ops"
        if n_steps and n_ops <= 1:  # a fused layer's node and its steps, or a run of its steps
            ops = f"{n_steps} time steps" if n_steps > 1 else "1 time step"
            kind = "one node" if g.marker == "fused" else kind
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
def op_counts(model: GraphModel) -> dict[str, int]:
    """Group id -> number of ops anywhere inside it (computed once per model: its hierarchy does not change)."""
    counts = model._op_counts
    if counts is None:
        counts = dict.fromkeys(model.groups, 0)
        for n, chain in zip(model.nodes, model.chains):
            if n.kind == "op":
                for gid in chain:
                    counts[gid] += 1
            elif n.kind == "step":  # a step counts inside its layer's group only: it folds with the layer
                for gid in chain[next(i for i, g in enumerate(chain) if model.groups[g].marker == "fused"):]:
                    counts[gid] += 1
        model._op_counts = counts
    return counts


def foldable(model: GraphModel) -> frozenset[str]:
    """The groups that may be drawn folded into one box: those of two ops or more. A box "LayerNorm · 1 op" would
    hide one op behind a click and show nothing the op's own box does not (its second line names the module)."""
    fold = model._foldable
    if fold is None:
        fold = model._foldable = frozenset(gid for gid, n in op_counts(model).items() if n >= 2)
    return fold


def owners(model: GraphModel, expanded: set[str]) -> list[str]:
    """For each node, the id of the box that shows it: its outermost collapsed group, or the node itself. A group
    of one op never stands for its nodes, expanded or not."""
    fold = foldable(model)
    out = []
    for n, chain in zip(model.nodes, model.chains):
        out.append(next((g for g in chain if g not in expanded and g in fold), n.id))
    for layer, (_, last) in model.fused.items():  # a fused layer drawn open is its steps: shown by its last one
        if out[layer] == model.nodes[layer].id:
            out[layer] = out[last]
    return out


def _entries(model: GraphModel, own: list[str]) -> list[str]:
    """Each node's box as the target of an edge: its box (``owners``), but a fused layer drawn open takes its
    inputs in its first step (its outputs leave from its last)."""
    entry = list(own)
    for layer, (first, _) in model.fused.items():
        if own[layer] not in model.groups:  # (folded, the layer's box is its group's: inputs enter that)
            entry[layer] = own[first]
    return entry


def box_of(model: GraphModel, idx: int, expanded: set[str]) -> str:
    """The id of the box that shows node ``idx`` (one entry of :func:`owners`)."""
    chain, fold = model.chains[idx], foldable(model)
    box = next((g for g in chain if g not in expanded and g in fold), model.nodes[idx].id)
    steps = model.fused.get(idx)
    return box_of(model, steps[1], expanded) if steps is not None and box == model.nodes[idx].id else box


def is_fused(model: GraphModel, gid: str) -> bool:
    """Whether a group is a fused recurrent layer's (its node and time steps), which opens only on request."""
    return model.groups[gid].marker == "fused"


def default_expanded(model: GraphModel, max_boxes: int = MAX_BOXES) -> set[str]:
    """Expand groups breadth-first while the drawing stays within ``max_boxes`` boxes; runs of identical
    blocks stay folded, groups of one op are always open. A graph that fits is shown whole."""
    # a fused layer shows as the one node it is; opened, its run of time steps shows folded
    closed = {g for g in model.groups if is_fused(model, g)}
    closed |= {r for r, g in model.groups.items() if g.kind == "run" and g.parent in closed}
    if len(model.nodes) - sum(1 for n in model.nodes if n.kind == "step") <= max_boxes:  # show every node
        return set(model.groups) - closed
    fold = foldable(model)
    expanded = set(model.groups) - fold

    def opened(gid: str) -> int:  # boxes a group shows when opened (its one-op subgroups open with it)
        g = model.groups[gid]
        return len(g.members) + sum(1 if c in fold else opened(c) for c in g.children)

    n_boxes = len(set(owners(model, expanded)))
    queue = [g for g in model.top if g in fold]
    while queue:
        gid = queue.pop(0)
        g = model.groups[gid]
        if g.kind == "run" or gid in closed:
            continue
        grows = opened(gid) - 1
        if n_boxes + grows <= max_boxes:
            expanded.add(gid)
            n_boxes += grows
            queue.extend(c for c in g.children if c in fold)
    return expanded


# ---- layout -------------------------------------------------------------------------------------------------
def text_width(text: str, char_w: float = CHAR_W) -> float:
    return len(text) * char_w


def _clip(text: str, width: float, char_w: float) -> str:
    room = int((width - 16) / char_w + 1e-6)
    return text if len(text) <= room else ("…" + text[-(room - 1):] if room > 1 else "…")


def boxes_for(model: GraphModel, expanded: set[str]) -> tuple[list[Box], list[str]]:
    """The boxes to draw (one per visible node or collapsed group) and each node's box id."""
    own = owners(model, expanded)
    boxes: dict[str, Box] = {}
    for n, bid in zip(model.nodes, own):
        b = boxes.get(bid)
        if b is None:
            if bid not in model.groups:  # a node's own box (a fused layer drawn open: its last step's)
                shown = n if bid == n.id else model.nodes[int(bid[1:])]
                b = Box(bid, shown.kind, _node_label(shown), _node_sub(shown, model), [])
            else:
                g = model.groups[bid]
                label = g.label
                up = model.groups.get(g.parent) if g.parent in expanded else None
                if g.marker == "fused":  # the op it is ("LSTMLayer", "layer 0 · 16 time steps"), that opens
                    sub = f"{up.short} · {g.type_name.split(' · ')[-1]}" if up is not None else g.type_name
                    b = Box(bid, "op", g.short, sub, [], expandable=True)
                elif g.kind == "module" and up is not None and (g.marker or up.kind == "module" and len(
                        up.children) + len(up.members) >= 2):
                    label = g.short  # the parent's frame names the rest: "norm" (not "blocks.1.norm"), "t = 3"
                if b is None:
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
    return n.label.rsplit(".", 1)[-1] if n.kind == "param" else n.label


def _node_sub(n: GNode, model: GraphModel | None = None) -> str:
    """The second line: the module that made an op, or owns a parameter (as its frame names it: "fc1",
    "relu (call 2)", "downsample.0", "t = 3"), and the shape."""
    shape = _fmt_shape(n.shape) if n.shape or n.kind != "op" else "()"
    root_type = model.root_type if model is not None else ""
    if n.kind == "param" and "." in n.label:  # (its own module: it may sit in a group around that module's calls)
        return f"{short_name(n.label.rsplit('.', 1)[0], root_type)} · {shape}"
    if n.module and n.kind in _OPS:
        g = model.groups.get(f"group:{n.module}") if model is not None else None
        return f"{g.short if g is not None else short_name(n.module, root_type)} · {shape}"
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
    entry = _entries(model, own) if model.fused else own
    bedges: dict[tuple[int, int], list] = {}
    for s, d, _, shape in model.edges:
        bs, bd = pos[own[s]], pos[entry[d]]
        if bs != bd:
            e = bedges.setdefault((bs, bd), [shape, []])
            e[1].append((s, d))
    framed, box_chain = _framed_groups(model, boxes, own, expanded)
    chain_of = [box_chain[b.id] for b in boxes]
    layers = assign_layers(len(boxes), list(bedges), chain_of, {i for i, b in enumerate(boxes) if b.kind == "param"})
    points, rects = place(boxes, layers, list(bedges), chain_of,
                           {g: text_width(_frame_label(model, g), FRAME_CHAR_W) for g in framed})
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
    return g.label if g.kind == "run" else f"{g.label} · {g.type_name}"


def _framed_groups(model: GraphModel, boxes: list[Box], own: list[str], expanded: set[str]):
    """The expanded groups drawn as frames (those holding two or more boxes and two or more ops: a lone Linear
    and its parameters need none, the op's second line names its module), and for each box the framed
    groups around it, outermost first."""
    inside: dict[str, set[str]] = {}
    open_chain: dict[str, tuple[str, ...]] = {}
    for n, chain in zip(model.nodes, model.chains):
        if own[n.index] != n.id and own[n.index] not in model.groups:
            continue  # a fused layer drawn open: its last step's box, in that step's frames
        opened = tuple(itertools.takewhile(expanded.__contains__, chain))
        open_chain.setdefault(own[n.index], opened)
        for gid in opened:
            inside.setdefault(gid, set()).add(own[n.index])
    framed = {g for g, bs in inside.items() if len(bs) >= 2
              and sum(1 for i in _all_nodes(model.groups, g) if model.nodes[i].kind in _OPS) >= 2}
    return framed, {b.id: tuple(g for g in open_chain[b.id] if g in framed) for b in boxes}


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


#: "created at" of a node made before any view asked for lines (sites.request_lines: from then on they are recorded);
#: the one text for it (tooltips and the graph view's details)
NO_LINE = "not recorded: the graph was built before a view asked for lines (re-run the cell to record lines)"


# ---- the payload the browser draws (see static/CONTRACT.md) --------------------------------------------------
def _us(s: float | None) -> str | None:
    return None if s is None else f"{s * 1e6:.1f} µs"


def node_tip(model: GraphModel, n: GNode) -> list[list[str]]:
    """The hover rows of a node: what it is, its output, where it was made, its saved tensors and times."""
    rows: list[list[str]] = []
    if n.kind == "step":
        return step_rows(n)
    if n.kind == "op":
        module = full_name(_own_module(model, n), model.root_type) if n.module else "—"
        rows += [["op", n.label], ["module", module], ["output", f"{_fmt_shape(n.shape)} {n.dtype}"],
                 ["device", model.device], ["created at", n.site or NO_LINE]]
        if n.saved and n.saved[0].get("freed"):
            rows.append(["saved", "freed after backward"])
        if n.index in model.fused:  # a fused recurrent layer: what its one output holds
            h = _state_width(n, model.nodes, model.edges)
            rows.append(["output holds", f"[h | c] after every step: h {h} wide, c {n.shape[-1] - h}"
                         if n.obj.mode == "LSTM" else "h after every step"])
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


#: how each of a fused layer's saved values saturates (see diagnostics.saturation)
_NONLINEARITY = {"input gate": "sigmoid", "forget gate": "sigmoid", "output gate": "sigmoid", "reset gate": "sigmoid",
                 "update gate": "sigmoid", "cell gate": "tanh", "new gate": "tanh"}


def step_time(n: GNode) -> int:
    """The time step a ``step`` node stands for (its group's path ends in ``.t3``)."""
    return int(n.module.rsplit(".t", 1)[1])


def step_rows(n: GNode) -> list[list[str]]:
    """A fused recurrent layer's time step: which step, and what its gates and state were, from the values the
    layer node saved for backward (``step_values``): each gate's mean and saturated share, the state's size."""
    fn, t = n.obj, step_time(n)
    order = "run last to first" if fn.reverse else "run first to last"
    rows = [["time step", f"t = {t} of 0–{fn.out_shape[0] - 1} ({order})"],
            ["node", f"{view_label(fn)}: one node runs every step; its backward runs them all"],
            ["state", f"{_fmt_shape(n.shape)} {n.dtype}"]]
    values = fn.step_values()
    if values is None:
        return rows + [["values", "not kept: freed after backward (pass retain_graph=True to keep them), or packed "
                                  "by a saved-tensors hook"]]
    if not n.shape[0]:
        return rows + [["values", "no sequence ran at this step (an empty batch)"]]
    for name, a in values.items():
        v = np.asarray(a[t, :n.shape[0]], dtype=np.float64)
        kind = _NONLINEARITY.get(name)
        if kind is not None:
            rows.append([name, f"mean {v.mean():.3f}, {saturation(kind, v):.0%} saturated"])
        else:
            rows.append([name, f"mean |{name}| {np.abs(v).mean():.3f}, max |{name}| {np.abs(v).max():.3f}"])
    return rows


def _own_module(model: GraphModel, n: GNode) -> str:
    """The module path that made an op: a fused layer node's is its layer's (``rnn.l0``), not its own group's."""
    g = model.groups.get(f"group:{n.module}")
    return g.path.rsplit(".", 1)[0] if g is not None and g.marker == "fused" and "." in g.path else n.module


def group_tip(model: GraphModel, gid: str) -> list[list[str]]:
    g = model.groups[gid]
    ids = _all_nodes(model.groups, gid)
    n_ops = sum(1 for i in ids if model.nodes[i].kind == "op")
    steps = sum(1 for i in ids if model.nodes[i].kind == "step")
    if g.marker == "fused":  # the layer node's own rows, and how to see its steps
        layer = next(i for i in g.members if model.nodes[i].kind == "op")
        return node_tip(model, model.nodes[layer]) + [["steps", f"{steps} time steps: click to open them"]]
    rows = [["group", g.label], ["contains", f"{len(ids)} nodes, {n_ops} ops" if n_ops or not steps else
                                 f"{steps} time steps of one layer node"]]
    if g.kind == "run" and g.marker == "step":
        rows.append(["steps", f"{len(g.children)} identical time steps"])
    elif g.kind == "run" and g.path.endswith(")"):
        rows.append(["calls", f"{len(g.children)} identical calls of the same module"])
    elif g.kind == "run":
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
    n_nodes = sum(1 for n in model.nodes if n.kind != "step")  # (a fused layer's steps are drawn, not nodes)
    if n_boxes < n_nodes:
        notes.append({"level": "info", "text": f"{n_nodes} nodes shown as {n_boxes} boxes, grouped by "
                                               f"module: click a group to expand it, or search by name."})
    return notes


def graph_payload(model: GraphModel, expanded: set[str], notes: list[dict] | None = None) -> dict:
    """The ``graph`` traitlet: everything the browser draws, as plain JSON-able data."""
    lay = layout(model, expanded)
    boxes = lay["boxes"]
    pos = {b.id: i for i, b in enumerate(boxes)}
    out_boxes = []
    tips = model._tips
    for b in boxes:
        tip = tips.get(b.id)
        if tip is None:
            tip = tips[b.id] = (group_tip(model, b.id) if b.id in model.groups  # (a node box: its own node's tip)
                                else node_tip(model, model.nodes[int(b.id[1:])]))
        out_boxes.append({"id": b.id, "kind": b.kind, "label": b.label, "sub": b.sub, "x": b.x, "y": b.y,
                          "w": b.w, "h": b.h, "stale": b.stale, "expandable": b.expandable, "nodes": b.nodes,
                          "tip": tip})
    return {"width": round(lay["width"], 1), "height": round(lay["height"], 1), "boxes": out_boxes,
            "edges": lay["edges"], "frames": lay["frames"],
            "nodes": [[n.label, n.module or ""] for n in model.nodes],
            "owner": [pos[o] for o in lay["own"]],
            "notes": (notes if notes is not None else graph_notes(model, len(boxes)))}
