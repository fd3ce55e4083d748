"""``Function``: one subclass per differentiable op, and its instance *is* the graph node.

A subclass implements ``forward(self, *inputs)`` on native arrays (via the inputs' backend) and
``backward(self, grad)`` with Tensor ops, returning one gradient (or ``None``) per forward input.
``forward`` returns the backend's native array (a NumPy array on the CPU), or a Tensor it made itself
without recording (for example the output a ``tl.cuda.Kernel`` wrote); ``Op.apply(x, ...)`` runs it.
Because backward is written with Tensor ops, ``create_graph=True`` gives higher derivatives.

>>> import tinygrad_like as tl
>>> x = tl.tensor([1.0, 2.0], requires_grad=True)
>>> y = x * x
>>> y.grad_fn.name, [t.shape for t in y.grad_fn.saved_tensors]
('Mul', [tl.Size([2]), tl.Size([2])])

Each node also answers PyTorch's questions the way PyTorch's does: its class is named as torch's
(``MulBackward0``: :mod:`.torch_nodes`), ``name()`` gives that name, ``next_functions`` the ``(node,
input_nr)`` pairs with an :class:`AccumulateGrad` per leaf, ``_saved_self``/``_saved_other``/... the saved
values, and ``register_hook``/``register_prehook`` take torch's node hooks. ``next`` (the edges as the engine
walks them: parent nodes, leaf tensors or None), ``name`` as a string (``'Mul'``), ``saved_tensors``,
``attributes()`` and ``saved_info()`` are the richer API the views read.

>>> type(y.grad_fn).__name__, y.grad_fn.name(), y.grad_fn.next_functions[0][0].variable is x
('MulBackward0', 'MulBackward0', True)
"""

from __future__ import annotations

import itertools

from .. import events
from ..compat import Size
from ..sites import context as _context
from ..sites import origin
from ..storage import summarize_writes
from ..tensor_base import TensorBase
from . import grad_mode, node_api, torch_nodes
from .node_api import TorchNodeAPI, _Name, _Packed, _Packing, _saved_hooks, name_node_class

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


_seq = itertools.count().__next__
_new = object.__new__

FREED = object()


class SavedTensorsFreedError(RuntimeError):
    pass


class VersionMismatchError(RuntimeError):
    """A tensor saved for backward was modified in place afterwards.

    Attributes: ``node`` (the op), ``index`` (which saved tensor), ``shape``, ``dtype``,
    ``saved_version``, ``current_version``, ``bumps`` (the recorded write runs since the save, as
    :class:`~tinygrad_like.storage.Bump` copies), ``writes`` (each distinct write once:
    :class:`~tinygrad_like.storage.Write` ``(op, site, count, optimizer)``), ``unrecorded`` (writes
    older than the kept records) and ``from_optimizer`` (every recorded write came from an optimizer's
    ``step()``: the graph was built from weights that have since been updated).
    """

    def __init__(self, node, index, tensor, saved_version, current_version, bumps):
        self.node, self.index = node, index
        self.shape, self.dtype = tensor._x.shape, tensor.dtype.name
        self.saved_version, self.current_version, self.bumps = saved_version, current_version, bumps
        self.writes = summarize_writes(bumps)
        self.unrecorded = max(0, current_version - saved_version - sum(w.count for w in self.writes))
        self.from_optimizer = bool(self.writes) and all(w.optimizer for w in self.writes)
        super().__init__(
            f"one of the tensors needed for gradient computation was modified by an in-place operation: "
            f"the {tensor.dtype.name} tensor of shape {list(tensor.shape)} saved by {node.name} "
            f"(saved tensor {index}) is at version {current_version}; expected version {saved_version} "
            f"instead. It was modified by {self._where()}. Fix: {self._advice()}")

    def _where(self) -> str:
        parts = [str(w) for w in self.writes]
        where = "; ".join(parts) if parts else "writes at an unrecorded place"
        n = self.unrecorded
        return where + (f" and {n} earlier write{'s' if n > 1 else ''}" if n and parts else "")

    def _advice(self) -> str:
        if self.from_optimizer:
            opt = self.writes[-1].optimizer
            return (f"the graph was built from the weights before `{opt}.step()` updated them in place. Run the "
                    f"forward pass again after `optimizer.step()`, or call `backward()` before `step()` (the "
                    f"usual order: zero_grad(), forward, backward(), step()).")
        return ("use the out-of-place op (e.g. `x = x * 2` instead of `x.mul_(2)`) or `.clone()` the tensor "
                "before writing to it.")


class Function(TorchNodeAPI):
    """Base class of graph nodes. Subclasses add ``__slots__`` for their attributes (shapes, dims)."""

    __slots__ = ("next", "saved", "saved_versions", "seq", "out_shape", "out_dtype", "hooks", "retained",
                 "origin", "_nf", "_meta", "__weakref__")  # origin: set only while sites.record_origins is on
    # (_nf, _meta: torch's next_functions and metadata, made on first access only)
    save_output = False  # class flag: append the output tensor to saved_tensors after forward
    returns_fresh = False  # class flag: forward returns a Tensor it just made (a view...): it becomes the output

    def __init_subclass__(cls, **kwargs):
        """A subclass whose ``forward`` is a ``@staticmethod`` (or that defines ``setup_context``) is PyTorch's
        context style: its ``apply`` becomes ``ctx_function.ctx_apply`` (class creation only: ``Function.apply``,
        the ops' hot path, is untouched)."""
        super().__init_subclass__(**kwargs)
        if isinstance(cls.__dict__.get("forward"), staticmethod) or "setup_context" in cls.__dict__:
            # (ctx_function subclasses Function: a module-level import would be a cycle)
            from .ctx_function import ctx_apply

            if "apply" not in cls.__dict__:
                cls.apply = classmethod(ctx_apply)
            return
        if "_variant_of" in cls.__dict__ or hasattr(cls, "_forward_cls"):
            return  # (a variant made by torch_nodes, or a context-style node class: named where made)
        name_node_class(cls)

    # ---- the op ------------------------------------------------------------------------
    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, grad):
        raise NotImplementedError(f"{type(self).__name__}.backward")

    @classmethod
    def apply(cls, x, *args):
        """Run forward and, when recording, make this op's node the output's ``grad_fn``.

        The one place a node is recorded (ops, views, device copies and the nodes of in-place history alike).
        ``forward`` returns a native array, or a Tensor it made itself (a view, a copy on another device, a
        user kernel's output). This is every op's hot path: it is written out flat, with no per-op dict, list or
        closure, and no work for observers that are not listening."""
        # perf: written out flat, not through _edge/_attach: a * b with grad costs 1.3-1.6x as much through them
        # (benchmarks/core_speedups.py, 2026-11-29)
        node = _new(cls)
        node.saved = None
        if events.ACTIVE:  # the kernels it launches are reported with this node (the outermost op's, when nested)
            r = _forward_watched(node, x, args)
        else:
            r = node.forward(x, *args)  # (pending host writes upload when forward looks up dev.backend)
        if isinstance(r, TensorBase):  # a view, a copy on another device, or a tensor a user's forward made
            out = r if cls.returns_fresh else _own(r)
        else:
            out = x._wrap(r, x._dev)
        if not _grad_mode.enabled:
            return out
        # one edge per input: its node, the leaf itself (which accumulates .grad), or None (no gradient)
        e = x.grad_fn
        if e is None and x._requires_grad:
            e = x
        req = e is not None
        if args:
            edges = [e]
            for a in args:
                if isinstance(a, TensorBase):
                    e = a.grad_fn
                    if e is None and a._requires_grad:
                        e = a
                    if e is not None:
                        req = True
                    edges.append(e)
                else:
                    edges.append(None)
            if not req:
                return out
            edges = tuple(edges)
        elif not req:
            return out
        else:
            edges = (e,)
        dt = out.dtype
        if not dt.is_floating_point:
            return out
        if cls.save_output:
            # Kept as a detached alias (same storage, so the same version counter; no grad_fn), never as ``out``
            # itself: out -> node -> out would be a reference cycle, and every graph through relu, tanh, exp...
            # would wait for the cyclic garbage collector to free its activations. ``saved_tensors`` hands the
            # alias back with this node as its history when a graph of the backward is being recorded.
            alias = _alias(out)
            v = alias._st.version  # (a fresh output is at version 0; one a user kernel wrote may be further on)
            if _saved_hooks:
                (alias,) = node_api._pack((alias,))
            if node.saved:
                node.saved, node.saved_versions = (*node.saved, alias), (*node.saved_versions, v)
            else:
                node.saved, node.saved_versions = (alias,), (v,)
        node.next = edges
        node.seq = _seq()
        node.out_shape = out._x.shape
        node.out_dtype = dt
        node.hooks = node.retained = None
        if cls._pick is not None:  # (Sum, Matmul...: the node takes its torch class, SumBackward1, MmBackward0...)
            cls._pick(node, x, args)
        out._requires_grad = True  # (the slot behind the checked property: a float result, on the hot path)
        out.grad_fn = node
        if events.WATCH_NODES:  # (one flag for both watchers: nothing added to the path when neither is on)
            _watched(node, out, x, args)
        return out

    # ---- saved tensors -------------------------------------------------------------------
    def save_for_backward(self, *tensors) -> None:
        """Keep tensors for backward, remembering each one's version to detect later in-place writes.

        An entry may be None: a tensor this node's backward will not read (ops save only what the gradients
        of the inputs that need one read, as PyTorch does, so a later in-place write to the rest is legal).
        """
        self.saved = tensors
        if _saved_hooks:  # (torch.autograd.graph.saved_tensors_hooks: versions are taken before packing)
            return node_api.pack_saved(self, tensors)
        if len(tensors) == 2:  # perf: most nodes save two; a * b costs 1.1-1.4x without this path (core_speedups.py)
            a, b = tensors
            self.saved_versions = (-1 if a is None else 0 if a._st is None else a._st.version,
                                   -1 if b is None else 0 if b._st is None else b._st.version)
        else:
            self.saved_versions = tuple([-1 if t is None else t._version for t in tensors])

    def _read_saved(self) -> tuple:
        """What ``saved_tensors`` gives (node_api.py): the saved tensors, after checking none was freed or modified in
        place since (in the order saved; None where an op did not keep a tensor its backward will not read, as with
        torch's ``ctx.saved_tensors``)."""
        saved = self.saved
        if saved is FREED:
            raise SavedTensorsFreedError(f"{torch_nodes.FREED_MESSAGE} (the saved tensors of {self.name()})")
        if saved is None:
            return ()
        if _Packing.ever and any(type(t) is _Packed for t in saved):  # (saved under saved_tensors_hooks)
            saved = node_api.unpack_all(saved)
        else:
            for i, t in enumerate(saved):
                if t is not None:
                    st = t._st  # (None: a fresh result nothing has written, at version 0)
                    if (0 if st is None else st.version) != self.saved_versions[i]:
                        v = self.saved_versions[i]
                        raise VersionMismatchError(self, i, t, v, t._version, t._storage.bumps_since(v))
        if type(self).save_output and _grad_mode.enabled:
            return (*saved[:-1], self.kept_output(saved[-1]))
        return saved

    def kept_output(self, alias):
        """This node's own output, kept for backward as a detached alias (see :meth:`apply`), as backward should
        read it: the alias itself in a plain backward; while a backward is recorded (``create_graph``), an alias
        whose history is this node, so that higher derivatives flow through the output as through the op."""
        if not _grad_mode.enabled:
            return alias
        out = alias.detach()
        out._requires_grad, out.grad_fn = True, self
        return out

    def release(self) -> None:
        """Free saved tensors (after a backward without ``retain_graph``)."""
        if self.saved is not None:
            self.saved = FREED

    # ---- inspection -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Our op's name (``'Mul'``), as the views show it; ``name()`` gives torch's (``'MulBackward0'``)."""
        return _Name(type(self).__name__, type(self).__name__)

    @property
    def inputs(self) -> tuple:
        """One entry per forward input: its node, the leaf tensor itself, or None (no gradient)."""
        return self.next

    def input_meta(self) -> tuple:
        """Per input, the ``(shape, dtype)`` its gradient is summed and cast to by the engine: a parent node's
        output, a leaf's own; None for an input that gets no gradient (a number, a tensor not requiring grad)."""
        return tuple(None if p is None else (p.out_shape, p.out_dtype) if isinstance(p, Function) else
                     (p._x.shape, p.dtype) for p in self.next)

    def attributes(self) -> dict:
        """The op's own attributes (dims, shapes, scalars) for graph views and debugging."""
        out = {}
        for klass in type(self).__mro__:
            if klass is Function:
                break
            for s in getattr(klass, "__slots__", ()):
                if hasattr(self, s):
                    v = getattr(self, s)
                    out[s] = tuple(v) if type(v) is Size else v  # shown as the shape it is, "(3, 4)"
        return out

    def saved_info(self) -> list[dict]:
        """Each saved tensor's shape, dtype, version at save time and now, and the writes since.

        ``bumps`` are the recorded runs (trimmed to the part after the save), ``writes`` the same
        merged per distinct write (``storage.Write``), as the version-mismatch error lists them.
        """
        if self.saved is FREED:
            return [{"freed": True}]
        rows = []
        if not self.saved:
            return []
        for t, v in zip(self.saved, self.saved_versions):
            if t is None or type(t) is _Packed:
                continue  # (not kept: backward does not read it; or packed by a saved-tensors hook)
            st = t._storage
            bumps = st.bumps_since(v)
            rows.append({"shape": t._x.shape, "dtype": t.dtype.name, "saved_version": v,
                         "current_version": st.version, "stale": st.version != v,
                         "storage_id": st.id, "bumps": bumps, "writes": summarize_writes(bumps)})
        return rows




def _alias(t):
    """``t.detach()``, written out for the hot path of ops that keep their output: the same storage (made now if
    ``t`` has none yet, so both see one version counter), layout and array, and no history."""
    st = t._st
    if st is None:
        st = t._storage
    a = _new(t.__class__)
    a._st, a._lay, a._x, a._dev, a.dtype = st, t._lay, t._x, t._dev, t.dtype
    a._requires_grad = False
    a._grad = a.grad_fn = a._hooks = a._base = None
    return a


def _own(r):
    """A Tensor that a forward returned becomes the output. One already in a graph would tie two histories to one
    storage (refused); any other is detached first, so that a tensor the caller still holds (an input, a cached
    buffer) gets no history of its own."""
    if r.requires_grad or r.grad_fn is not None:
        raise RuntimeError("a Function's forward returned a tensor that is already part of the autograd graph (an "
                           "input that requires grad, or the result of recorded ops): return a new tensor, e.g. "
                           "one made with tl.empty(...) or computed under tl.no_grad(), or a native array")
    return r.detach()


def _attach(node: Function, edges: tuple, out, x, args) -> None:
    """Make ``node`` (over ``edges``, one per input) the recorded history of ``out``, and tell observers (what
    :meth:`Function.apply` does inline, for :func:`record`)."""
    node.next = edges
    node.seq = _seq()
    node.out_shape = out._x.shape
    node.out_dtype = out.dtype
    node.hooks = node.retained = None
    out._requires_grad = True
    out.grad_fn = node
    if events.WATCH_NODES:
        _watched(node, out, x, args)


def _forward_watched(node: Function, x, args):
    """``node.forward`` with ``node`` as the running op of this thread's context, for the kernels it launches."""
    ctx = _context
    if ctx.node is not None:  # (an op inside another's forward or backward: the outer one launched it)
        return node.forward(x, *args)
    ctx.node = node
    try:
        return node.forward(x, *args)
    finally:
        ctx.node = None


def _watched(node: Function, out, x, args) -> None:
    """A node was recorded while someone watches: stamp its origin (the user's line) and/or tell observers."""
    if events.ORIGINS:
        node.origin = origin(node)
    if events.ACTIVE and events.wants(events.OpRecorded):
        st = out._st
        events.emit(events.OpRecorded(node.name, node, tuple(getattr(a, "shape", ()) for a in (x, *args)),
                                      out._x.shape, out.dtype.name, str(out._dev), events.now(),
                                      None if st is None else st.id))


def _edge(t):
    """What a node's ``next`` entry is for input ``t``: its node, the leaf itself, or None."""
    if t is None:
        return None
    g = t.grad_fn
    return g if g is not None else (t if t.requires_grad else None)


def record(node: Function, inputs: tuple, out) -> Function:
    """Make ``node`` the history of the existing tensor ``out``, over ``inputs`` (tensors or None).

    For the nodes of in-place history (a view re-read from its base, a write through a view), which
    re-point a tensor that already exists instead of making one; the recording is :meth:`Function.apply`'s."""
    node.saved = None
    present = tuple(t for t in inputs if t is not None)
    _attach(node, tuple(_edge(t) for t in inputs), out, present[0], present[1:])
    return node


def __getattr__(name: str):
    """``torch.autograd.function``'s other names (``once_differentiable``, ``FunctionCtx``), from the ctx style."""
    if name in ("once_differentiable", "FunctionCtx"):
        from . import ctx_function  # (ctx_function subclasses Function: a module-level import would be a cycle)

        return getattr(ctx_function, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
