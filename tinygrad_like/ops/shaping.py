"""Shaping and indexing ops of issue 17: roll, unfold (a strided view), scatter and scatter_reduce.

The others of the family (rot90, tile, repeat_interleave, diff, take, index_add/copy/fill/put, masked_select,
masked_scatter...) are compositions of these and of the existing view, gather and indexing ops: see
``mixin/shaping.py``.
"""

from __future__ import annotations

from ..autograd.function import Function
from ..layout import Layout, normalize_dim
from ..tensor_base import TensorBase
from .indexing import _check_bounds, _check_index
from .movement import EmbedSlice, ViewFunction


class Roll(Function):
    """Elements shifted circularly by ``shifts`` along ``dims`` (``dims`` None: over the flattened tensor)."""

    __slots__ = ("shifts", "dims")

    def forward(self, x, shifts, dims):
        self.shifts, self.dims = shifts, dims
        return x._dev.backend.roll(x._x, shifts, dims)

    def backward(self, g):
        back = -self.shifts if isinstance(self.shifts, int) else tuple(-s for s in self.shifts)
        return Roll.apply(g, back, self.dims), None, None


class Unfold(ViewFunction):
    """``x.unfold(dim, size, step)``: every window of ``size`` elements along ``dim``, ``step`` apart, as a new last
    dim. A view: windows that overlap share elements (the strides say so), as in torch."""

    __slots__ = ("dim", "size", "step")

    def layout(self, x, dim, size, step):
        n = x.shape[dim]
        self.dim, self.size, self.step = dim, size, step
        lay = x._layout
        shape, strides = list(lay.shape), list(lay.strides)
        shape[dim], st = (n - size) // step + 1, strides[dim]
        strides[dim] = st * step
        return Layout(tuple(shape) + (size,), tuple(strides) + (st,), lay.offset)

    def backward(self, g):
        # each input element gets the sum of the gradients of every window position that reads it
        from ..creation import arange
        d, size, step = self.dim, self.size, self.step
        nwin = g.shape[d]
        starts = arange(nwin, device=g.device) * step
        index = (starts.unsqueeze(1) + arange(size, device=g.device).unsqueeze(0)).reshape(-1)
        gw = g.movedim(-1, d + 1).flatten(d, d + 1)
        return g.new_zeros(self.in_shape).index_add(d, index, gw), None, None, None


def check_scatter(op: str, x, dim: int, index, src) -> int:
    """torch's checks of scatter-like ops (``src`` a tensor or None for a number); returns ``dim`` made non-negative.
    A 0-d tensor counts as 1-d, and an empty index skips the shape checks, as in torch."""
    _check_index(index, op)
    nd = max(x.ndim, 1)
    dim = normalize_dim(dim, nd)
    is_t = isinstance(src, TensorBase)
    if is_t and src.dtype is not x.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype (got {x.dtype.name} and "
                           f"{src.dtype.name})")
    if is_t and src._dev is not x._dev or index._dev is not x._dev:
        raise RuntimeError(f"{op}(): expected self, index and src to be on the same device, got {x._dev}, "
                           f"{index._dev}" + (f" and {src._dev}" if is_t else ""))
    if index.numel() == 0:
        return dim
    ishape, xshape = index.shape or (1,), x.shape or (1,)
    if len(ishape) != nd:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as self tensor (index "
                           f"shape {list(index.shape)}, self shape {list(x.shape)})")
    sshape = (src.shape or (1,)) if is_t else None
    if is_t and len(sshape) != nd:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as src tensor (index "
                           f"shape {list(index.shape)}, src shape {list(src.shape)})")
    for d in range(nd):
        if (d != dim and ishape[d] > xshape[d]) or (is_t and ishape[d] > sshape[d]):
            raise RuntimeError(f"{op}(): Expected index {list(index.shape)} to be no larger than self "
                               f"{list(x.shape)} apart from dimension {dim}"
                               + (f" and to be no larger size than src {list(src.shape)}" if is_t else ""))
    _check_bounds(index, xshape[dim], op, dim, RuntimeError)
    return dim


def _natives(x, index, src):
    """The native operands, 0-d ones as 1-d (the primitives index along a dim), and the output's shape."""
    be = x._dev.backend
    xs, i = x._x, index._x
    s = src._x if isinstance(src, TensorBase) else src
    if x.ndim and index.ndim and (not isinstance(src, TensorBase) or src.ndim):
        return xs, i, s
    one = (1,)
    xs = be.reshape(xs, one) if not x.ndim else xs
    i = be.reshape(i, one) if not index.ndim else i
    if isinstance(src, TensorBase) and not src.ndim:
        s = be.reshape(s, one)
    return xs, i, s


def _src_grad(g, index, src_shape):
    """``g.gather(dim, index)`` made the shape of ``src`` (zeros where ``src`` is larger than ``index``)."""
    if g.shape == src_shape:
        return g
    return EmbedSlice.apply(g, src_shape, tuple(slice(0, n) for n in g.shape))


class Scatter(Function):
    """``out = x.clone(); out[.., index[i, j], ..] = src[i, j]`` along ``dim`` (``src`` a tensor or a number)."""

    __slots__ = ("dim", "src_shape")

    def forward(self, x, dim, index, src):
        dim = check_scatter("scatter", x, dim, index, src)
        self.dim = dim
        self.src_shape = src.shape if isinstance(src, TensorBase) else None
        self.save_for_backward(index)
        xs, i, s = _natives(x, index, src)
        out = x._dev.backend.scatter(xs, dim, i, s)
        return out if x.ndim else x._dev.backend.reshape(out, ())

    def backward(self, g):
        (index,) = self.saved_tensors
        nxt = self.next
        gx = Scatter.apply(g, self.dim, index, 0.0) if nxt[0] is not None else None
        gs = None
        if nxt[3] is not None:
            gs = _src_grad(_gather(g, self.dim, index), index, self.src_shape)
        return gx, None, None, gs


def _gather(g, dim, index):
    if g.ndim and index.ndim:
        return g.gather(dim, index)
    return g.reshape(-1).gather(0, index.reshape(-1)).reshape(index.shape)


REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


class ScatterReduce(Function):
    """``x.scatter_reduce(dim, index, src, reduce, include_self)`` for ``reduce`` sum or mean (their gradients read
    only the index). Gradients are torch's (``scatter_reduce_backward`` in its ``FunctionsManual.cpp``)."""

    __slots__ = ("dim", "reduce", "include_self", "src_shape")

    def forward(self, x, dim, index, src, reduce, include_self):
        if not isinstance(src, TensorBase):
            raise TypeError(f"scatter_reduce(): argument 'src' must be Tensor, not {type(src).__name__}")
        dim = check_scatter("scatter_reduce", x, dim, index, src)
        self.dim, self.reduce, self.include_self, self.src_shape = dim, reduce, bool(include_self), src.shape
        self._save(x, index, src)
        xs, i, s = _natives(x, index, src)
        out = x._dev.backend.scatter_reduce(xs, dim, i, s, reduce, bool(include_self))
        return out if x.ndim else x._dev.backend.reshape(out, ())

    def _save(self, x, index, src):
        self.save_for_backward(index)

    def backward(self, g):
        (index,) = self.saved_tensors
        dim, inc = self.dim, self.include_self
        if self.reduce == "sum":
            gx, gs = g, _gather(g, dim, index)
        else:  # mean: each position's gradient divided by the number of values averaged there
            n = (g.new_ones(g.shape) if inc else g.new_zeros(g.shape)).scatter_add(dim, index,
                                                                                g.new_ones(index.shape))
            n = n.masked_fill(n == 0, 1)
            gx, gs = g / n, _gather(g, dim, index) / _gather(n, dim, index)
        return self._finish(g, gx, gs, index)

    def _finish(self, g, gx, gs, index):
        nxt = self.next
        if nxt[0] is None:
            gx = None
        elif not self.include_self:
            gx = Scatter.apply(gx, self.dim, index, 0.0)
        gs = _src_grad(gs, index, self.src_shape) if nxt[3] is not None else None
        return gx, None, None, gs, None, None


class ScatterReduceByResult(ScatterReduce):
    """``scatter_reduce`` for ``reduce`` prod, amax or amin, whose gradients read ``x``, ``src`` and the result."""

    __slots__ = ()
    save_output = True

    def _save(self, x, index, src):
        self.save_for_backward(x, index, src)

    def backward(self, g):
        x, index, src, result = self.saved_tensors
        dim, inc = self.dim, self.include_self
        if self.reduce == "prod":
            # products without the element itself, computed explicitly where an element is 0
            masked_self = x.masked_fill(x == 0, 1)
            gx = g * masked_self.scatter_reduce(dim, index, src, "prod", include_self=inc) / masked_self
            src_zero = src == 0
            zeros = src_zero.to(x.dtype)
            n_zeros = _gather(x.new_zeros(x.shape).scatter_add(dim, index, zeros), dim, index)
            single_zero = src_zero.logical_and(n_zeros == 1)
            masked_src_result = x.scatter_reduce(dim, index, src.masked_fill(single_zero, 1), "prod",
                                                 include_self=inc)
            from .elementwise import where
            gs = where(single_zero, _gather(g * masked_src_result, dim, index),
                       _gather(g * result, dim, index) / src.masked_fill(src_zero, 1))
        else:  # amax, amin: the gradient shared evenly among the values equal to the result
            value = _gather(result, dim, index)
            self_is = (x == result).to(x.dtype)
            src_is = (src == value).to(x.dtype)
            shared = g / self_is.scatter_add(dim, index, src_is)
            gx, gs = self_is * shared, src_is * _gather(shared, dim, index)
        return self._finish(g, gx, gs, index)


def scatter_reduce(x, dim, index, src, reduce: str, include_self: bool = True):
    if reduce == "max" or reduce == "min":  # (torch accepts these spellings too)
        reduce = "a" + reduce
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    cls = ScatterReduce if reduce in ("sum", "mean") else ScatterReduceByResult
    return cls.apply(x, dim, index, src, reduce, include_self)


def full_src(x, index, value):
    """A number ``value`` as a tensor of ``index``'s shape and ``x``'s dtype (scatter with a reduction)."""
    return x._wrap(x._dev.backend.full(index.shape, value, x.dtype), x._dev)


__all__ = ["Roll", "Unfold", "Scatter", "ScatterReduce", "ScatterReduceByResult", "scatter_reduce", "full_src",
           "check_scatter", "REDUCTIONS"]
