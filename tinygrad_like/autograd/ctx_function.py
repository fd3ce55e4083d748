"""PyTorch's context-style custom Function, beside our own style.

A subclass of :class:`~tinygrad_like.autograd.Function` whose ``forward`` is a ``@staticmethod`` (or that
defines ``setup_context``) is a PyTorch-style Function::

    class MulK(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.k, None

    y = MulK.apply(x, 3)

``ctx`` is the graph node itself (as in PyTorch, where ``ctx`` is ``y.grad_fn``): an instance of a class made
once per Function, named ``<Name>Backward``, whose ``name`` is the Function's name. So the node shows in the
graph views and the backward stepper like any built-in op, with its saved tensors (version-checked: an
in-place write after the save is a :class:`~tinygrad_like.autograd.VersionMismatchError` naming the Function)
and its plain attributes (``ctx.k``) as the node's attributes.

Supported: non-tensor arguments (their gradient must be None), keyword arguments to ``forward``, several
outputs (tensors and non-tensors; each differentiable output gets a small ``<Name>[i]`` node that hands its
gradient to the Function's node, which calls ``backward`` once with one gradient per output),
``ctx.needs_input_grad``, ``ctx.mark_non_differentiable``, ``ctx.set_materialize_grads`` (gradients of
outputs that received none are zeros, or None after ``set_materialize_grads(False)``), ``ctx.mark_dirty``
(an input modified in place and returned), ``setup_context`` (forward without ``ctx``), trailing extra
``None`` gradients, and :func:`once_differentiable`. ``forward`` runs without recording, as in PyTorch;
``backward`` is written with Tensor ops, so ``create_graph=True`` differentiates it again.

Errors are PyTorch's: the wrong number of gradients, a gradient for a non-tensor input, a gradient that is
not a Tensor, ``save_for_backward`` of a non-tensor, and reading saved tensors after they were freed.
"""

from __future__ import annotations

import functools

from .._format import STYLE as _STYLE
from ..tensor_base import TensorBase
from . import grad_mode
from .function import Function, _alias, _attach, _edge, _new, _seq
from .node_api import _Name

_grad_mode = grad_mode.state

__all__ = ["FunctionCtx", "once_differentiable"]

_PLAIN = (int, float, str, bool, type(None))


class FunctionCtx(Function):
    """The node (``ctx``) of a context-style Function; one subclass ``<Name>Backward`` is made per Function.

    Instances have a ``__dict__``, so ``ctx.anything = value`` works as in PyTorch."""

    _forward_cls = None  # the user's Function class (as torch's ``grad_fn._forward_cls``)

    # ---- what forward calls --------------------------------------------------------------------
    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (inputs, outputs, or None) for backward; their versions are checked when read."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, TensorBase):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """These outputs get no gradient (their ``requires_grad`` is False); backward still receives a slot
        for them (zeros, or None without materialized grads)."""
        self._non_diff = self._non_diff + tuple(tensors)

    def mark_dirty(self, *tensors) -> None:
        """These inputs were modified in place by forward and are returned as outputs."""
        self._dirty = self._dirty + tuple(tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward receives None (not zeros) for outputs that got no gradient."""
        self._materialize = bool(value)

    def save_for_forward(self, *tensors) -> None:
        """Accepted for compatibility (forward-mode AD is not implemented)."""
        self._for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if getattr(self, "_to_save", None) is not None and self.saved is None:
            return tuple(self._to_save)  # (read inside forward itself, before the save was made final)
        saved = self._read_saved()
        outs = self._saved_outputs
        if outs and _grad_mode.enabled:  # a saved output comes back with its history while backward is recorded
            saved = list(saved)
            for i, node in outs:
                t = saved[i].detach()
                t._requires_grad, t.grad_fn = True, node
                saved[i] = t
            saved = tuple(saved)
        return saved

    @property
    def saved_variables(self) -> tuple:
        return self.saved_tensors

    # ---- inspection ----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The Function's name (``'MulPow'``); called, torch's node name (``'MulPowBackward'``)."""
        n = self._forward_cls.__name__
        return _Name(n, f"{n}Backward")

    def attributes(self) -> dict:
        """The plain values forward stored on ``ctx`` (numbers, strings, tuples of them), for the views."""
        out = {}
        for k, v in self.__dict__.items():
            if k.startswith("_") or k in ("needs_input_grad",):
                continue
            if isinstance(v, _PLAIN) or (isinstance(v, tuple) and all(isinstance(e, _PLAIN) for e in v)):
                out[k] = v
        return out

    def __repr__(self) -> str:  # (torch's: the node class lives in torch.autograd.function)
        return f"<{_STYLE.package}.autograd.function.{type(self).__name__} object at {id(self):#x}>"

    # ---- the engine's side ---------------------------------------------------------------------
    def backward(self, *grads):  # noqa: D401 - the engine calls node.backward(g)
        (g,) = grads
        metas = self._out_meta
        if self._direct is not None:
            gs = [None] * len(metas)
            gs[self._direct] = g
        else:
            gs = self._stash
            self._stash = [None] * len(metas)
        if self._materialize:
            from ..creation import zeros  # (creation is a higher layer: a module-level import would be a cycle)

            for i, m in enumerate(metas):
                if gs[i] is None and m is not None:
                    gs[i] = zeros(m[0], dtype=m[1], device=m[2])
        cls = self._forward_cls
        r = cls.backward(self, *gs)
        if type(r) is not tuple:
            r = r if isinstance(r, tuple) else (r,)
        n = len(self.next)
        if len(r) != n:
            if len(r) > n and all(e is None for e in r[n:]):
                r = r[:n]
            else:
                raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                                   f"(expected {n}, got {len(r)})")
        kinds = self._arg_is_tensor
        for i, gi in enumerate(r):
            if gi is None:
                continue
            if not isinstance(gi, TensorBase):
                raise RuntimeError(f"expected Variable or None (got {type(gi).__name__})")
            if not kinds[i]:
                raise RuntimeError(f"function {cls.__name__}Backward returned a gradient different than None at "
                                   f"position {i + 1}, but the corresponding forward input was not a Variable")
        return r


class _CtxOutput(Function):
    """Output ``index`` of a context-style Function with several differentiable outputs: hands the gradient it
    receives to the Function's node (``owner``), which calls the user's backward once with all of them."""

    __slots__ = ("owner", "index")

    def backward(self, g):
        owner = self.owner
        stash = owner._stash
        stash[self.index] = g if stash[self.index] is None else stash[self.index] + g
        from ..creation import zeros  # (creation is a higher layer: a module-level import would be a cycle)

        return zeros((), dtype=owner.out_dtype, device=g.device)  # (wakes the owner; the gradients ride along)

    @property
    def name(self) -> str:
        n = f"{self.owner.name}[{self.index}]"
        return _Name(n, self.owner.name())


def _node_class(cls) -> type:
    node_cls = cls.__dict__.get("_backward_cls")
    if node_cls is None:
        node_cls = type(f"{cls.__name__}Backward", (FunctionCtx,), {"_forward_cls": cls,
                                                                      "__module__": cls.__module__})
        node_cls.__qualname__ = f"{cls.__qualname__}Backward"
        cls._backward_cls = node_cls
    return node_cls


def _uses_setup_context(cls) -> bool:
    for k in cls.__mro__:
        if "setup_context" in k.__dict__:
            return k is not Function
    return False


def ctx_apply(cls, *args, **kwargs):
    """``MyFn.apply(*args, **kwargs)`` for a context-style Function (see the module docstring)."""
    node_cls = _node_class(cls)
    ctx = _new(node_cls)
    ctx.saved = None
    ctx._to_save = None
    ctx._non_diff = ctx._dirty = ()
    ctx._materialize = True
    ctx._saved_outputs = ()
    ctx._direct = None
    is_t = tuple(isinstance(a, TensorBase) for a in args)
    edges = tuple(_edge(a) if t else None for a, t in zip(args, is_t))
    ctx.needs_input_grad = tuple(e is not None for e in edges)
    recording = _grad_mode.enabled and any(ctx.needs_input_grad)
    prev = _grad_mode.enabled
    _grad_mode.enabled = False  # forward runs without recording, as in torch
    try:
        if _uses_setup_context(cls):
            raw = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, raw)
        else:
            raw = cls.forward(ctx, *args, **kwargs)
    finally:
        _grad_mode.enabled = prev
    single = not isinstance(raw, tuple)
    outs = [raw] if single else list(raw)
    inputs = {id(a) for a, t in zip(args, is_t) if t}
    dirty = {id(t) for t in ctx._dirty}
    final = []
    for o in outs:
        if isinstance(o, TensorBase) and id(o) not in dirty and (id(o) in inputs or o.requires_grad
                                                                  or o.grad_fn is not None):
            o = o.detach()  # an input returned as-is, or a tensor already in a graph: a new tensor on its storage
        final.append(o)
    if not recording:
        return final[0] if single else tuple(final)
    non_diff = {id(t) for t in ctx._non_diff}
    diff = [i for i, (o, r) in enumerate(zip(final, outs)) if isinstance(o, TensorBase)
            and o.dtype.is_floating_point and id(r) not in non_diff]
    first = next(a for a, t in zip(args, is_t) if t)
    ctx._arg_is_tensor = is_t
    ctx._out_meta = tuple((o._x.shape, o.dtype, o.device) if isinstance(o, TensorBase) else None for o in final)
    for o in final:
        if id(o) in dirty and o.grad_fn is None and o.requires_grad:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
    out_nodes = {}
    if len(diff) == 1:
        ctx._direct = diff[0]
        _attach(ctx, edges, final[diff[0]], first, args)
        out_nodes[diff[0]] = ctx
    elif diff:
        ctx.next, ctx.seq = edges, _seq()
        ctx.out_shape, ctx.out_dtype = (), final[diff[0]].dtype
        ctx.hooks = ctx.retained = None
        ctx._stash = [None] * len(final)
        for i in diff:
            node = _new(_CtxOutput)
            node.saved = None
            node.owner, node.index = ctx, i
            _attach(node, (ctx,), final[i], final[i], ())
            out_nodes[i] = node
    else:
        ctx.next, ctx.seq, ctx.out_shape, ctx.out_dtype = edges, _seq(), (), None
        ctx.hooks = ctx.retained = None
    _finish_save(ctx, outs, final, out_nodes)
    return final[0] if single else tuple(final)


def _finish_save(ctx, outs: list, final: list, out_nodes: dict) -> None:
    """Make the saved tensors final, recording their versions now (after forward, as torch does). A saved output
    is kept as a detached alias (no reference cycle output -> node -> output)."""
    to_save = ctx._to_save
    ctx._to_save = None
    if not to_save:
        return
    by_id = {id(r): i for i, r in enumerate(outs)}
    by_id.update({id(f): i for i, f in enumerate(final)})
    saved, outputs = [], []
    for k, t in enumerate(to_save):
        j = None if t is None else by_id.get(id(t))
        if j is not None:
            t = _alias(final[j])
            if j in out_nodes:
                outputs.append((k, out_nodes[j]))
        saved.append(t)
    ctx._saved_outputs = tuple(outputs)
    Function.save_for_backward(ctx, *saved)


def once_differentiable(fn):
    """Decorate a context-style ``backward`` that is not itself differentiable: it runs without recording, so
    ``create_graph=True`` gives no graph through it (as torch's decorator)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _grad_mode.enabled
        _grad_mode.enabled = False
        try:
            return fn(ctx, *args)
        finally:
            _grad_mode.enabled = prev

    return wrapper
