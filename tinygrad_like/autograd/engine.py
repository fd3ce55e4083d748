"""The backward engine: a generator that runs one graph node per step.

``Tensor.backward()`` drains :func:`backward_steps`; the stepping widget pulls one
:class:`Step` at a time. Order: a node runs once every consumer of its output has sent its
gradient (Kahn's algorithm), ties broken by latest-created first, as PyTorch does. The traversal is
iterative, so a 10,000-op chain does not touch Python's recursion limit.
"""

from __future__ import annotations

import heapq
import time

from .. import events
from ..ops._util import sum_to
from . import grad_mode
from .function import Function

_grad = grad_mode.state  # this thread's grad mode (per thread, as in torch)

_perf = time.perf_counter
heappush, heappop = heapq.heappush, heapq.heappop


class Step:
    """One node's backward: the gradient it received, the gradients it sent, and how long it took.

    ``leaves`` lists the leaf tensors whose ``.grad`` was filled at this step.
    """

    __slots__ = ("index", "node", "grad_in", "grads_out", "seconds", "leaves")

    def __init__(self, index, node, grad_in, grads_out, seconds, leaves):
        self.index, self.node, self.grad_in, self.grads_out = index, node, grad_in, grads_out
        self.seconds, self.leaves = seconds, leaves

    def __repr__(self) -> str:
        return f"Step({self.index}, {self.node.name}, {self.seconds * 1e6:.1f} us)"


def _as_input(g, shape: tuple, dtype, node=None, index: int = 0):
    """``g`` as the gradient of an input of ``shape``/``dtype``: summed over the dims the op broadcast, and cast.

    The engine does this for every op from what the graph recorded (a parent node's ``out_shape``/``out_dtype``,
    a leaf's own), so a backward formula returns the gradient in the shape its arithmetic gives. With
    ``create_graph`` the sum and the cast are recorded like any other op. A gradient the input's shape does not
    broadcast to is a wrong formula (``node``'s ``index``-th gradient): refused, as torch refuses it."""
    gs = g.shape
    if gs != shape:
        extra = len(shape) - len(gs)
        if extra > 0 and all(n == 1 for n in shape[:extra]) and _expands_to(shape[extra:], gs):
            g = g.reshape((1,) * extra + gs)  # (a value of shape (1, 3) written into a (3,) slot: y[0] = v)
        elif not _expands_to(shape, gs):
            who = f"{node.name}.backward returned an invalid gradient at index {index}" if node is not None else \
                "an invalid gradient"
            raise RuntimeError(f"{who}: got shape {list(gs)} but expected shape compatible with {list(shape)} (the "
                               f"input's shape, or one it broadcasts to)")
        g = sum_to(g, shape)
    if g.dtype is not dtype:
        g = g.to(dtype)
    return g


def _expands_to(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (torch's ``is_expandable_to``)."""
    lead = len(target) - len(shape)
    if lead < 0:
        return False
    return all(n == 1 or n == target[lead + i] for i, n in enumerate(shape))


def _count_dependencies(roots) -> dict:
    """How many gradient contributions each node and each leaf will receive (iterative DFS)."""
    deps: dict = {}
    stack = [r for r in roots if isinstance(r, Function)]
    seen = set(stack)
    while stack:
        node = stack.pop()
        for p in node.next:
            if p is None:
                continue
            deps[p] = deps.get(p, 0) + 1
            if p not in seen and isinstance(p, Function):
                seen.add(p)
                stack.append(p)
    return deps


def _accumulate_leaf(leaf, g, owned: set) -> None:
    """Add ``g`` into ``leaf.grad``, never aliasing a gradient another leaf or the caller holds."""
    hooks = leaf._hooks
    if hooks:
        for h in hooks:
            r = h(g)
            if r is not None:
                g = r
    if g.dtype is not leaf.dtype:  # a leaf's gradient has the leaf's dtype (as in torch), whatever the op gave
        g = g.to(leaf.dtype)
    if leaf._grad is None:
        # a fresh tensor of its own, as torch's AccumulateGrad: not a storage another leaf or the caller holds, not a
        # view (a formula may return an expanded, strided or narrowed view of a gradient)
        if g._base is not None or id(g._storage) in owned:
            g = g.clone() if _grad.enabled else g.detach().clone()
        owned.add(id(g._storage))
        leaf.grad = g if _grad.enabled else g.detach()
    else:
        leaf.grad = leaf._grad + g


def backward_steps(roots, grads, retain_graph: bool = False, create_graph: bool = False,
                   capture: dict | None = None, steps: bool = True):
    """Yield a :class:`Step` per node, from the roots' grad_fns back to the leaves.

    ``roots``/``grads``: output tensors and their incoming gradients. With ``capture`` (a dict
    mapping leaf tensors or nodes to slots) gradients are collected there instead of accumulated
    into ``.grad`` (this is ``tl.autograd.grad``). ``steps=False`` yields None per node instead of a
    record, and times a node only for an observer that listens (``Tensor.backward()`` drains it so).
    """
    root_nodes, pending = [], {}
    leaf_pending: dict = {}
    for t, g in zip(roots, grads):
        n = t.grad_fn  # (a root is read for grad_fn and requires_grad only: the stepper passes stand-ins)
        want = n.out_dtype if n is not None else t.dtype
        if g.dtype is not want:  # an incoming gradient of another dtype is cast to the output's (as torch does)
            g = g.to(want)
        if n is not None:
            pending[n] = pending[n] + g if n in pending else g
            if n not in root_nodes:
                root_nodes.append(n)
        elif t.requires_grad:  # backward() on a leaf itself
            leaf_pending[t] = g
    deps = _count_dependencies(root_nodes)
    owned = {id(g._storage) for g in grads}
    heap = [(-n.seq, n) for n in root_nodes if deps.get(n, 0) == 0]
    heapq.heapify(heap)
    for leaf, g in leaf_pending.items():
        with grad_mode.set_grad_enabled(create_graph):
            _deliver_leaf(leaf, g, capture, owned)
    index = 0
    while heap:
        _, node = heappop(heap)
        g = pending.pop(node, None)
        timed = steps or events.ACTIVE
        if timed:
            t0 = _perf()
        grads_out: tuple = ()
        filled = [] if steps else None
        # grad mode is the pass's while a node runs and the caller's between nodes (a consumer may run its own code
        # there, or stop iterating half-way)
        prev = _grad.enabled
        _grad.enabled = create_graph
        try:
            if g is not None:
                if node.hooks:
                    for h in node.hooks:
                        r = h(g)
                        if r is not None:
                            g = r
                if node.retained:
                    for ref in node.retained:
                        t = ref()
                        if t is not None and t.grad_fn is node:
                            t.grad = g.detach() if t.grad is None else t.grad + g.detach()
                if capture is not None and node in capture:
                    capture[node] = g
                grads_out = node.backward(g)
                if type(grads_out) is not tuple:
                    grads_out = (grads_out,)
                if len(grads_out) != len(node.next):
                    raise RuntimeError(f"{node.name}.backward returned {len(grads_out)} gradients; expected "
                                       f"{len(node.next)} (one per forward input, None where there is none)")
                if not retain_graph:
                    node.release()
            for i, p in enumerate(node.next):
                if p is None:
                    continue
                gi = grads_out[i] if grads_out else None
                left = deps[p] - 1
                deps[p] = left
                if isinstance(p, Function):
                    if gi is not None:
                        if gi._x.shape != p.out_shape or gi.dtype is not p.out_dtype:
                            gi = _as_input(gi, p.out_shape, p.out_dtype, node, i)
                        pending[p] = pending[p] + gi if p in pending else gi
                    if left == 0:
                        heappush(heap, (-p.seq, p))
                else:
                    if gi is not None:
                        if gi._x.shape != p._x.shape or gi.dtype is not p.dtype:
                            gi = _as_input(gi, p.shape, p.dtype, node, i)
                        leaf_pending[p] = leaf_pending[p] + gi if p in leaf_pending else gi
                    if left == 0 and p in leaf_pending:
                        _deliver_leaf(p, leaf_pending.pop(p), capture, owned)
                        if steps:
                            filled.append(p)
        finally:
            _grad.enabled = prev
        seconds = _perf() - t0 if timed else 0.0
        if events.ACTIVE:
            events.emit(events.BackwardStep(index, node.name, node, seconds, events.now()))
        yield Step(index, node, g, grads_out, seconds, tuple(filled)) if steps else None
        index += 1


def _deliver_leaf(leaf, g, capture, owned) -> None:
    if capture is not None:
        if leaf in capture:
            hooks = leaf._hooks
            for h in hooks or ():
                r = h(g)
                if r is not None:
                    g = r
            capture[leaf] = g
        return
    _accumulate_leaf(leaf, g, owned)
