"""The backward engine: one pass over the graph, one node at a time.

The stepping widget pulls one :class:`Step` at a time from the generator :func:`backward_steps`;
``Tensor.backward()`` and ``tl.autograd.grad`` run the same pass to the end with :func:`run_backward`. Both
run each node with the same code (``_Pass.run``), in the same order: a node runs once every consumer of its
output has sent its gradient (Kahn's algorithm), ties broken by latest-created first, as PyTorch does. The
traversal is iterative, so a 10,000-op chain does not touch Python's recursion limit.
"""

from __future__ import annotations

import time

from .. import events
from ..sites import context as _context
from . import grad_mode
from .anomaly_mode import run_node as _anomaly_run_node
from .anomaly_mode import state as _anomaly
from .function import Function
from .node_api import _running, run_leaf_post_hooks, run_post_hooks
from .pruning import prune

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

_perf = time.perf_counter



def sum_to(g, shape: tuple):
    """Reduce a broadcast gradient back to ``shape`` (the inverse of broadcasting)."""
    gs = g._x.shape
    if gs == shape:
        return g
    lead = len(gs) - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape) if n == 1 and gs[i + lead] != 1)
    if axes:
        g = g.sum(axes, keepdim=True)
    return g.reshape(shape) if g._x.shape != shape else g


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
    gs = g._x.shape
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


def _plan(roots) -> tuple[list, dict]:
    """The nodes reachable from ``roots``, in the order they run, and how many contributions each leaf will get.

    The order is Kahn's algorithm with the latest-created ready node first (as PyTorch does), which is simply
    descending creation order: a node is always created after every node its inputs came from (``seq`` is a
    global counter stamped when a node is recorded), so when the newest unvisited node comes up, every consumer
    of its output has run. One sort instead of a heap push and pop per node."""
    leaf_deps: dict = {}
    nodes = [r for r in roots if isinstance(r, Function)]
    seen = set(nodes)
    stack = list(nodes)
    while stack:
        for p in stack.pop().next:
            if p is None:
                continue
            if isinstance(p, Function):
                if p not in seen:
                    seen.add(p)
                    nodes.append(p)
                    stack.append(p)
            else:
                leaf_deps[p] = leaf_deps.get(p, 0) + 1
    nodes.sort(key=_by_seq, reverse=True)
    return nodes, leaf_deps


def _by_seq(node: Function) -> int:
    return node.seq


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
    recording = _grad_mode.enabled
    if not recording and (g.grad_fn is not None or g.requires_grad):
        g = g.detach()
    if leaf._grad is None:
        # a fresh tensor of its own, as torch's AccumulateGrad: not a storage another leaf or the caller holds, not a
        # view (a formula may return an expanded, strided or narrowed view of a gradient)
        st = g._storage
        if g._base is not None or id(st) in owned:
            g = g.clone()
            st = g._storage
        owned.add(id(st))
        if hooks:
            leaf.grad = g  # (the setter's checks: a hook may have returned another shape or device)
        else:
            leaf._grad = g
    else:
        leaf.grad = leaf._grad + g if recording or hooks else _sum(leaf._grad, g)
    if hooks:  # (register_post_accumulate_grad_hook, AccumulateGrad.register_hook: after .grad was updated)
        run_leaf_post_hooks(leaf, hooks, g)


def _sum(a, b):
    """``a + b`` of two gradients of one shape and dtype, outside any graph: the backend's add, with no node made
    (the engine's own accumulation, not an op of the model; its kernel is timed like any other)."""
    dev = a._dev
    return a._wrap(dev.backend.add(a._x, b._x), dev)


class _Pass:
    """The state of one backward pass: what is pending for each node and leaf, and how it ends."""

    __slots__ = ("nodes", "pending", "leaf_pending", "leaf_deps", "owned", "capture", "retain_graph", "create_graph",
                 "stop")

    def __init__(self, roots, grads, retain_graph: bool, create_graph: bool, capture):
        self.retain_graph, self.create_graph, self.capture = retain_graph, create_graph, capture
        pending: dict = {}
        leaf_pending: dict = {}
        root_nodes = []
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
        self.pending, self.leaf_pending = pending, leaf_pending
        self.owned = {id(g._storage) for g in grads}
        nodes, self.leaf_deps = _plan(root_nodes)
        # autograd.grad: only the nodes on a path to an input run, and an input with none below stops (pruning.py)
        self.nodes, self.stop = (nodes, ()) if capture is None else prune(nodes, capture)

    def deliver_roots(self) -> None:
        """Gradients given for leaves themselves (``leaf.backward()``)."""
        leaves = [(leaf, g) for leaf, g in self.leaf_pending.items() if leaf not in self.leaf_deps]
        for leaf, g in leaves:
            del self.leaf_pending[leaf]
            self.deliver(leaf, g)

    def deliver(self, leaf, g) -> None:
        capture = self.capture
        if capture is not None:
            if leaf in capture:
                for h in leaf._hooks or ():
                    r = h(g)
                    if r is not None:
                        g = r
                capture[leaf] = g
            return
        _accumulate_leaf(leaf, g, self.owned)

    def run(self, node, filled: list | None) -> tuple:
        """Run ``node``'s backward on its pending gradient and pass each result on: to a parent node's pending
        sum, or into a leaf (delivered once its last contribution arrived; appended to ``filled``)."""
        g = self.pending.pop(node, None)
        grads_out: tuple = ()
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
            capture = self.capture
            if capture is not None and node in capture:
                capture[node] = g
                if node in self.stop:  # (nothing else wanted lies below this input: its backward does not run)
                    return g, ()
            grads_out = node.backward(g) if not _anomaly.enabled else _anomaly_run_node(node, g)
            if type(grads_out) is not tuple:
                grads_out = (grads_out,)
            if len(grads_out) != len(node.next):
                raise RuntimeError(f"{node.name}.backward returned {len(grads_out)} gradients; expected "
                                   f"{len(node.next)} (one per forward input, None where there is none)")
            if node.hooks:  # (torch's node hooks, fn(grad_inputs, grad_outputs), run after backward)
                grads_out = run_post_hooks(node, node.hooks, g, grads_out)
            if not self.retain_graph:
                node.release()
        pending = self.pending
        add = _sum if not self.create_graph else _add_recorded
        i = -1
        for p in node.next:
            i += 1
            if p is None:
                continue
            gi = grads_out[i] if grads_out else None
            if isinstance(p, Function):
                if gi is not None:
                    if gi._x.shape != p.out_shape or gi.dtype is not p.out_dtype:
                        gi = _as_input(gi, p.out_shape, p.out_dtype, node, i)
                    prev = pending.get(p)
                    pending[p] = gi if prev is None else add(prev, gi)
                continue
            leaf_pending = self.leaf_pending
            if gi is not None:
                if gi._x.shape != p._x.shape or gi.dtype is not p.dtype:
                    gi = _as_input(gi, p._x.shape, p.dtype, node, i)
                prev = leaf_pending.get(p)
                leaf_pending[p] = gi if prev is None else add(prev, gi)
            left = self.leaf_deps[p] - 1
            self.leaf_deps[p] = left
            if left == 0 and p in leaf_pending:
                self.deliver(p, leaf_pending.pop(p))
                if filled is not None:
                    filled.append(p)
        return g, grads_out


def _add_recorded(a, b):
    return a + b


def backward_steps(roots, grads, retain_graph: bool = False, create_graph: bool = False,
                   capture: dict | None = None, steps: bool = True):
    """Yield a :class:`Step` per node, from the roots' grad_fns back to the leaves.

    ``roots``/``grads``: output tensors and their incoming gradients. With ``capture`` (a dict
    mapping leaf tensors or nodes to slots) gradients are collected there instead of accumulated
    into ``.grad`` (this is ``tl.autograd.grad``). ``steps=False`` yields None per node instead of a
    record, and times a node only for an observer that listens. Grad mode is the pass's while a node
    runs and the caller's between nodes (a consumer may run its own code there, or stop half-way).
    """
    state = _Pass(roots, grads, retain_graph, create_graph, capture)
    prev = _grad_mode.enabled
    _grad_mode.enabled = create_graph
    ctx = _context
    outer = ctx.backward
    ctx.backward = True  # (the roots' gradients, e.g. the ones of loss.backward(), are the pass's first kernels)
    try:
        state.deliver_roots()
    finally:
        _grad_mode.enabled = prev
        ctx.backward = outer
    for index, node in enumerate(state.nodes):
        watched = events.ACTIVE
        timed = steps or watched
        t0 = _perf() if timed else 0.0
        filled = [] if steps else None
        prev = _grad_mode.enabled
        _grad_mode.enabled = create_graph
        if watched:  # the kernels it launches are reported with this node, as backward
            outer = ctx.node, ctx.backward
            ctx.node, ctx.backward = node, True
        outer_pass, _running.state = _running.state, state
        try:
            g, grads_out = state.run(node, filled)
        finally:
            _running.state = outer_pass
            _grad_mode.enabled = prev
            if watched:
                ctx.node, ctx.backward = outer
        seconds = _perf() - t0 if timed else 0.0
        if events.ACTIVE:
            events.emit(events.BackwardStep(index, node.name, node, seconds, events.now()))
        yield Step(index, node, g, grads_out, seconds, tuple(filled)) if steps else None


def run_backward(roots, grads, retain_graph: bool = False, create_graph: bool = False,
                 capture: dict | None = None) -> None:
    """Run the whole pass at once: what ``Tensor.backward()`` and ``tl.autograd.grad`` do.

    The same nodes in the same order as :func:`backward_steps`, with grad mode switched once for the pass
    rather than around every node, and a node timed only while an observer listens."""
    state = _Pass(roots, grads, retain_graph, create_graph, capture)
    prev = _grad_mode.enabled
    _grad_mode.enabled = create_graph
    ctx = _context
    outer = ctx.node, ctx.backward
    ctx.backward = True  # (the roots' gradients, e.g. the ones of loss.backward(), are the pass's first kernels)
    outer_pass, _running.state = _running.state, state
    try:
        state.deliver_roots()
        run = state.run
        steps = events.wants(events.BackwardStep)
        for index, node in enumerate(state.nodes):
            if events.ACTIVE:  # the kernels each node launches are reported with it
                ctx.node = node
                if steps:
                    t0 = _perf()
                    run(node, None)
                    seconds = _perf() - t0
                    events.emit(events.BackwardStep(index, node.name, node, seconds, events.now()))
                else:
                    run(node, None)
            else:
                run(node, None)
    finally:
        _running.state = outer_pass
        _grad_mode.enabled = prev
        ctx.node, ctx.backward = outer
