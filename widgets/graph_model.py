"""The autograd graph as plain data: what ``GraphView`` and ``BackwardStepper`` draw.

``build_graph(tensor)`` walks ``grad_fn`` -> ``next_functions`` iteratively (no recursion limit)
and returns a :class:`GraphModel`: one :class:`GNode` per op node, leaf tensor and the output,
edges from inputs to the ops that consume them (labelled with shapes), and a layering computed
with networkx (inputs on top, the output at the bottom). Large graphs fold by module: the ops that
consume a module's parameters, and those parameters, become one node per module until expanded.
Nothing here imports ipywidgets or matplotlib.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import networkx as nx

from tinygrad_like import Tensor, events
from tinygrad_like.autograd.function import FREED, Function

NOT_COMPUTED = "not computed yet"


@dataclass
class GNode:
    """One box in the drawing."""

    id: str
    kind: str  # "leaf", "param", "op", "output" or "module" (a folded module)
    label: str
    shape: tuple = ()
    dtype: str = ""
    device: str = "cpu"
    obj: object = None  # the Function node or the leaf Tensor
    saved: list = field(default_factory=list)  # saved tensors: shape, dtype, saved_version, current_version, stale
    stale: bool = False  # a saved tensor moved since it was saved
    grad: str = NOT_COMPUTED  # for leaves: the state of .grad
    forward_s: float | None = None
    backward_s: float | None = None
    module: str | None = None
    folded: int = 0  # for kind "module": how many nodes it stands for


@dataclass
class GraphModel:
    nodes: dict[str, GNode]
    edges: list[tuple[str, str, str]]  # (src, dst, shape label)
    layers: dict[str, int]
    order: dict[str, int]  # position within the layer
    folded: dict[str, list[str]] = field(default_factory=dict)  # module -> the node ids folded into it
    root: str | None = None

    def node_for(self, obj) -> str | None:
        """The id of the node drawn for a Function or leaf Tensor (its module's id when folded)."""
        nid = _obj_id(obj)
        if nid in self.nodes:
            return nid
        for mod, ids in self.folded.items():
            if nid in ids:
                return f"module:{mod}"
        return None

    @property
    def stale_nodes(self) -> list[str]:
        return [n.id for n in self.nodes.values() if n.stale]


def _obj_id(obj) -> str:
    return f"{'op' if isinstance(obj, Function) else 'leaf'}:{id(obj)}"


def parameter_names(model) -> dict[int, str]:
    """id(tensor) -> dotted name for every parameter and buffer of a module."""
    names: dict[int, str] = {}
    if model is None:
        return names
    for name, p in model.named_parameters():
        names[id(p)] = name
    for name, b in model.named_buffers():
        names.setdefault(id(b), name)
    return names


def _fmt_shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")" if len(shape) != 1 else f"({shape[0]},)"


def _grad_state(t: Tensor) -> str:
    if t.grad is None:
        return NOT_COMPUTED
    g = t.grad
    return f"{_fmt_shape(g.shape)} |g|max={float(abs(g.detach().numpy()).max()) if g.numel() else 0:.3g}"


def build_graph(tensor: Tensor, model=None, names: dict | None = None, timings: Timings | None = None,
                max_nodes: int = 300, expanded: tuple = ()) -> GraphModel:
    """The graph reachable from ``tensor``; parameters named by their module path when ``model`` is given."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"GraphView expects a Tensor, got {type(tensor).__name__}")
    pnames = parameter_names(model)
    if names:
        pnames.update({id(t): n for n, t in names.items()} if isinstance(next(iter(names), None), str) else names)
    nodes: dict[str, GNode] = {}
    edges: list[tuple[str, str, str]] = []
    root = tensor.grad_fn
    if root is None:  # a leaf (or a tensor without history): one node
        nid = _obj_id(tensor)
        nodes[nid] = GNode(nid, "output", pnames.get(id(tensor), "tensor"), tensor.shape, tensor.dtype.name,
                           str(tensor.device), tensor, grad=_grad_state(tensor))
        return GraphModel(nodes, edges, {nid: 0}, {nid: 0}, root=nid)
    stack, seen = [root], {id(root)}
    while stack:  # iterative: a 10,000-op chain is fine
        fn = stack.pop()
        fid = _obj_id(fn)
        nodes[fid] = _op_node(fn, fid, timings)
        for inp in fn.next_functions or ():
            if inp is None:
                continue
            if isinstance(inp, Function):
                iid = _obj_id(inp)
                edges.append((iid, fid, _fmt_shape(inp.out_shape)))
                if id(inp) not in seen:
                    seen.add(id(inp))
                    stack.append(inp)
            else:  # a leaf tensor that accumulates .grad
                lid = _obj_id(inp)
                if lid not in nodes:
                    name = pnames.get(id(inp))
                    nodes[lid] = GNode(lid, "param" if name else "leaf", name or "leaf", inp.shape, inp.dtype.name,
                                       str(inp.device), inp, grad=_grad_state(inp),
                                       module=name.rsplit(".", 1)[0] if name and "." in name else None)
                edges.append((lid, fid, _fmt_shape(inp.shape)))
    out_id = "output"
    nodes[out_id] = GNode(out_id, "output", "output", tensor.shape, tensor.dtype.name, str(tensor.device), tensor,
                          grad=_grad_state(tensor) if tensor.retains_grad else "")
    edges.append((_obj_id(root), out_id, _fmt_shape(tensor.shape)))
    _assign_modules(nodes, edges)
    folded: dict[str, list[str]] = {}
    if len(nodes) > max_nodes:
        nodes, edges, folded = _fold_modules(nodes, edges, expanded)
    layers, order = _layout(nodes, edges)
    return GraphModel(nodes, edges, layers, order, folded, root=out_id)


def _op_node(fn: Function, fid: str, timings) -> GNode:
    saved = [] if fn.saved is None else fn.saved_info()
    if saved and saved[0].get("freed"):
        saved_rows, stale = [{"freed": True}], False
    else:
        saved_rows = [{k: r[k] for k in ("shape", "dtype", "saved_version", "current_version", "stale")}
                      | {"writes": [f"{b.op} at {b.site}" for b in r["bumps"]]} for r in saved]
        stale = any(r["stale"] for r in saved)
    n = GNode(fid, "op", fn.name, tuple(fn.out_shape), fn.out_dtype.name, "", fn, saved_rows, stale)
    if timings is not None:
        n.forward_s = timings.forward.get(id(fn))
        n.backward_s = timings.backward.get(id(fn))
    return n


def _assign_modules(nodes: dict, edges: list) -> None:
    """An op that consumes a module's parameter belongs to that module (how folding groups ops)."""
    for src, dst, _ in edges:
        s, d = nodes[src], nodes.get(dst)
        if s.kind == "param" and s.module and d is not None and d.kind == "op" and d.module is None:
            d.module = s.module


def _fold_modules(nodes, edges, expanded):
    folded: dict[str, list[str]] = {}
    for n in nodes.values():
        if n.module and n.module not in expanded:
            folded.setdefault(n.module, []).append(n.id)
    if not folded:
        return nodes, edges, folded
    where = {nid: f"module:{mod}" for mod, ids in folded.items() for nid in ids}
    new_nodes = {nid: n for nid, n in nodes.items() if nid not in where}
    for mod, ids in folded.items():
        new_nodes[f"module:{mod}"] = GNode(f"module:{mod}", "module", f"{mod} [{len(ids)} folded]", module=mod,
                                           folded=len(ids), stale=any(nodes[i].stale for i in ids))
    new_edges, seen = [], set()
    for src, dst, lab in edges:
        s, d = where.get(src, src), where.get(dst, dst)
        if s != d and (s, d) not in seen:
            seen.add((s, d))
            new_edges.append((s, d, lab))
    return new_nodes, new_edges, folded


def _layout(nodes, edges) -> tuple[dict[str, int], dict[str, int]]:
    """Layers by longest path from the inputs (networkx), so every edge points downwards."""
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from((s, d) for s, d, _ in edges)
    layer: dict[str, int] = {}
    for nid in nx.topological_sort(g):
        preds = list(g.predecessors(nid))
        layer[nid] = 1 + max(layer[p] for p in preds) if preds else 0
    # leaves sit just above their first consumer rather than all on the top row
    for nid in nodes:
        succ = list(g.successors(nid))
        if not list(g.predecessors(nid)) and succ:
            layer[nid] = max(0, min(layer[s] for s in succ) - 1)
    order: dict[str, int] = {}
    by_layer: dict[int, list[str]] = {}
    for nid, lay in layer.items():
        by_layer.setdefault(lay, []).append(nid)
    for ids in by_layer.values():
        ids.sort(key=lambda i: (nodes[i].kind != "op", nodes[i].label))
        for k, nid in enumerate(ids):
            order[nid] = k
    return layer, order


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


def is_freed(fn: Function) -> bool:
    return fn.saved is FREED
