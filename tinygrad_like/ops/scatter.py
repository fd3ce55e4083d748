"""Writing at indices: scatter, scatter_reduce, index_add/copy/fill/put/reduce and masked_scatter, each a copy
with its in-place spelling (``scatter_``, ``index_add_``, ...); their graph nodes, Tensor methods
(:class:`ScatterMixin`) and free functions. ``scatter_add`` and the ops that read at indices (gather,
index_select, ``t[i]``) are in :mod:`.indexing`.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..layout import normalize_dim
from ..tensor_base import TensorBase
from ._util import check_index_device, check_same_device, free_functions
from .elementwise import where
from .indexing import (
    _INDEX_DTYPES,
    IndexAdd,
    IndexPut,
    _bool_mask,
    _broadcast,
    _check_bounds,
    _check_index,
    _check_masks,
    _index_on,
)
from .movement import EmbedSlice

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = ["scatter", "scatter_reduce", "index_add", "index_copy", "index_fill", "index_put", "masked_scatter",
           "index_reduce", "index_put_", "select_scatter", "slice_scatter", "as_strided_scatter", "put"]


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
            gs = where(single_zero, _gather(g * masked_src_result, dim, index),
                       _gather(g * result, dim, index) / src.masked_fill(src_zero, 1))
        else:  # amax, amin: the gradient shared evenly among the values equal to the result
            value = _gather(result, dim, index)
            self_is = (x == result).to(x.dtype)
            src_is = (src == value).to(x.dtype)
            shared = g / self_is.scatter_add(dim, index, src_is)
            gx, gs = self_is * shared, src_is * _gather(shared, dim, index)
        return self._finish(g, gx, gs, index)


def _scatter_reduce(x, dim, index, src, reduce: str, include_self: bool = True):
    if reduce == "max" or reduce == "min":  # (torch accepts these spellings too)
        reduce = "a" + reduce
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    cls = ScatterReduce if reduce in ("sum", "mean") else ScatterReduceByResult
    return cls.apply(x, dim, index, src, reduce, include_self)


def full_src(x, index, value):
    """A number ``value`` as a tensor of ``index``'s shape and ``x``'s dtype (scatter with a reduction)."""
    return x._wrap(x._dev.backend.full(index.shape, value, x.dtype), x._dev)


class ScatterMixin:
    """Tensor methods that write at indices: scatter, scatter_reduce, index_add/copy/fill/put/reduce, masked_scatter
    (and their in-place spellings)."""

    __slots__ = ()

    # ---- scatter -----------------------------------------------------------------------------
    def scatter(self, dim: int, index: Tensor, src=None, value=None, *, reduce: str | None = None) -> Tensor:
        """A copy with ``out[.., index[i, j], ..] = src[i, j]`` along ``dim`` (or the number ``value``); with
        ``reduce`` ('add' or 'multiply', deprecated in torch for ``scatter_reduce``) combined instead."""
        src = _scatter_src(src, value)
        if reduce is None:
            return Scatter.apply(self, dim, index, src)
        red = {"add": "sum", "multiply": "prod"}.get(reduce)
        if red is None:
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce!r}")
        if isinstance(src, TensorBase):
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in "
                          "a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=2)
        else:
            _check_index(index, "scatter")
            src = full_src(self, index, src)
        return _scatter_reduce(self, dim, index, src, red, True)

    def scatter_(self, dim: int, index: Tensor, src=None, value=None, *, reduce: str | None = None) -> Tensor:
        src = _scatter_src(src, value)
        return self._inplace("scatter_", lambda x, s: x.scatter(dim, index, s, reduce=reduce), src)

    def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return self._inplace("scatter_add_", lambda x, s: x.scatter_add(dim, index, s), src)

    def scatter_reduce(self, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
        """A copy with ``src`` reduced into it at ``index`` along ``dim``: ``reduce`` is 'sum', 'prod', 'mean',
        'amax' or 'amin'; ``include_self=False`` leaves this tensor's values out at the positions written."""
        return _scatter_reduce(self, dim, index, src, reduce, include_self)

    def scatter_reduce_(self, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                        include_self: bool = True) -> Tensor:
        return self._inplace("scatter_reduce_", lambda x, s: _scatter_reduce(x, dim, index, s, reduce,
                                                                             include_self), src)

    # ---- index_* along one dim ---------------------------------------------------------------
    def index_reduce(self, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                     include_self: bool = True) -> Tensor:
        """A copy with the slices of ``source`` reduced into this tensor at the positions ``index`` along ``dim``:
        ``reduce`` is 'prod', 'mean', 'amax' or 'amin' (repeated positions combine); ``include_self=False`` leaves
        this tensor's own values out where it is written. It is :meth:`scatter_reduce` along ``dim`` with ``index``
        broadcast over the other dims, so its gradients are scatter_reduce's (torch's ``index_reduce_backward``:
        the ties of amax/amin share the gradient evenly, products with zeros are exact).

        >>> import tinygrad_like as tl
        >>> tl.ones(3, 2).index_reduce(0, tl.tensor([0, 0, 2]), tl.tensor([[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]),
        ...                            "prod").tolist()
        [[8.0, 15.0], [1.0, 1.0], [6.0, 7.0]]
        """
        x, d, full, src = _index_reduce_args(self, dim, index, source, reduce)
        out = _scatter_reduce(x, d, full, src, reduce, include_self)
        return out if out.shape == self.shape else out.reshape(self.shape)

    def index_reduce_(self, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                      include_self: bool = True) -> Tensor:
        return self._inplace("index_reduce_", lambda x, s: x.index_reduce(dim, index, s, reduce,
                                                                          include_self=include_self), source)

    def index_add(self, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
        """A copy with ``alpha * source`` added at the positions ``index`` along ``dim`` (repeats add up)."""
        x, idx, source = _index_dim("index_add", self, dim, index, source)
        if source.dtype is not self.dtype:
            raise RuntimeError(f"index_add_(): self ({self.dtype.name}) and source ({source.dtype.name}) must have "
                               f"the same scalar type")
        if alpha != 1:
            source = source * alpha
        out = x + IndexAdd.apply(source, x.shape, idx)
        return out if out.shape == self.shape else out.reshape(self.shape)

    def index_add_(self, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
        return self._inplace("index_add_", lambda x, s: x.index_add(dim, index, s, alpha=alpha), source)

    def index_copy(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        """A copy with the slices of ``source`` written at the positions ``index`` along ``dim``."""
        x, idx, source = _index_dim("index_copy", self, dim, index, source)
        if source.dtype is not self.dtype:
            raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                               f"{self.dtype.name} and (source) {source.dtype.name}")
        out = IndexPut.apply(x, idx, source)
        return out if out.shape == self.shape else out.reshape(self.shape)

    def index_copy_(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        return self._inplace("index_copy_", lambda x, s: x.index_copy(dim, index, s), source)

    def index_fill(self, dim: int, index: Tensor, value) -> Tensor:
        """A copy with ``value`` (a number or 0-d tensor) at the positions ``index`` along ``dim``."""
        if isinstance(value, TensorBase):
            if value.ndim:
                raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                                   f"{value.ndim} dimension(s).")
            if value.dtype is not self.dtype:
                value = value.to(self.dtype)
        elif not isinstance(value, (int, float, bool)):
            raise TypeError(f"index_fill(): argument 'value' must be a number or a 0-d Tensor, not "
                            f"{type(value).__name__}")
        x, idx, _ = _index_dim("index_fill", self, dim, index, None)
        if isinstance(value, TensorBase) and value.requires_grad:
            # each position is filled once however often it is named: the value's gradient sums them once (torch)
            from ..creation import tensor  # (creation sits above the ops: a module-level import would be a cycle)
            idx = idx[:-1] + (tensor(np.unique(idx[-1]._host()), device=self._dev),)
        out = IndexPut.apply(x, idx, value)
        return out if out.shape == self.shape else out.reshape(self.shape)

    def index_fill_(self, dim: int, index: Tensor, value) -> Tensor:
        return self._inplace("index_fill_", lambda x, v: x.index_fill(dim, index, v), value)

    def index_put(self, indices, values: Tensor, accumulate: bool = False) -> Tensor:
        """A copy with ``self[indices] = values`` (``indices`` a tuple of index tensors), or ``+=`` with
        ``accumulate`` (repeated positions then add up)."""
        idx = _index_tuple(indices, self)
        if not isinstance(values, TensorBase):
            raise TypeError(f"index_put(): argument 'values' (position 2) must be Tensor, not "
                            f"{type(values).__name__}")
        if values.dtype is not self.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{self.dtype.name} for the destination and {values.dtype.name} for the source.")
        if accumulate:
            return self + IndexAdd.apply(values, self.shape, idx)
        return IndexPut.apply(self, idx, values)

    def index_put_(self, indices, values: Tensor, accumulate: bool = False) -> Tensor:
        return self._inplace("index_put_", lambda x, v: x.index_put(indices, v, accumulate), values)

    # ---- masks -------------------------------------------------------------------------------
    def masked_fill_(self, mask: Tensor, value) -> Tensor:
        return self._inplace("masked_fill_", lambda x, m: x.masked_fill(m, value), mask)

    def masked_scatter(self, mask: Tensor, source: Tensor) -> Tensor:
        """A copy with the positions where ``mask`` is True filled, in row-major order, from the first elements of
        ``source``."""
        mask = _bool_mask(mask, "masked_scatter", None)
        if not isinstance(source, TensorBase):
            raise TypeError(f"masked_scatter(): argument 'source' must be Tensor, not {type(source).__name__}")
        if source.dtype is not self.dtype:
            raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got "
                               f"{self.dtype.name} and {source.dtype.name}")
        shape = _broadcast(self.shape, mask.shape, "masked_scatter")
        x = self if self.shape == shape else self.expand(shape)
        m = mask if mask.shape == shape else mask.expand(shape)
        n = int(m.sum().item())
        if source.numel() < n:
            raise RuntimeError(f"Number of elements of source < number of ones in mask ({source.numel()} < {n})")
        if not shape:
            return IndexPut.apply(x.reshape(1), (m.reshape(1),), source.reshape(-1)[:n]).reshape(())
        return IndexPut.apply(x, (m,), source.reshape(-1)[:n])

    def masked_scatter_(self, mask: Tensor, source: Tensor) -> Tensor:
        return self._inplace("masked_scatter_", lambda x, s: x.masked_scatter(mask, s), source)


    # ---- writing a slice, a selection or a strided view into a copy ------------------------------------------------
    def select_scatter(self, src: Tensor, dim: int, index: int) -> Tensor:
        """A copy with ``src`` written at ``index`` of ``dim`` (``src``: the shape of ``self.select(dim, index)``)."""
        return _scattered(self, src, lambda out: out.select(dim, index), "select_scatter")

    def slice_scatter(self, src: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
        """A copy with ``src`` written over ``self[start:end:step]`` along ``dim``."""
        d = normalize_dim(dim, self.ndim)
        return _scattered(self, src, lambda out: out[(slice(None),) * d + (slice(start, end, step),)],
                          "slice_scatter")

    def as_strided_scatter(self, src: Tensor, size, stride, storage_offset=None) -> Tensor:
        """A copy with ``src`` written over ``self.as_strided(size, stride, storage_offset)``."""
        from .movement import _positions, strided_layout  # (movement's helpers; scatter is imported by it indirectly)
        lay = strided_layout(self.contiguous(), size, stride, 0 if storage_offset is None else storage_offset,
                             "as_strided_scatter")
        if tuple(src.shape) != lay.shape:
            raise RuntimeError(f"as_strided_scatter(): expected src to have the size {list(lay.shape)}, got "
                               f"{list(src.shape)}")
        from ..creation import tensor  # (creation sits above the ops)
        flat = tensor(_positions(lay).reshape(-1), device=self._dev)
        return self.reshape(-1).index_put((flat,), src.reshape(-1)).reshape(self.shape)

    def put(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        """A copy with ``source``'s elements written at ``index`` of the flattened tensor (``+=`` with
        ``accumulate``); negative indices count from the end."""
        if not isinstance(index, TensorBase) or index.dtype is not dtypes.int64:
            raise RuntimeError("put_(): Expected a long tensor for index, but got "
                               f"{getattr(getattr(index, 'dtype', None), 'name', type(index).__name__)}")
        if index.numel() != source.numel():
            raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                               f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
        n = self.numel()
        flat_index = index.reshape(-1)
        if flat_index.numel():
            lo, hi = int(flat_index.min().item()), int(flat_index.max().item())
            if lo < -n or hi >= n:
                raise IndexError(f"out of range: tried to access index {hi if hi >= n else lo} on a tensor of {n} "
                                 f"elements.")
        flat_index = flat_index % max(n, 1)
        return self.reshape(-1).index_put((flat_index,), source.reshape(-1), accumulate).reshape(self.shape)

    def put_(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
        return self._inplace("put_", lambda x, s: x.put(index, s, accumulate), source)

def _scattered(x, src, view, op: str):
    """``x``'s copy with ``src`` written through ``view(copy)`` (autograd: the gradient of the overwritten part goes
    to ``src``, the rest to ``x``)."""
    if not isinstance(src, TensorBase):
        raise TypeError(f"{op}(): argument 'src' must be Tensor, not {type(src).__name__}")
    out = x.clone()
    target = view(out)
    if tuple(target.shape) != tuple(src.shape):
        raise RuntimeError(f"{op}(): expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(target.shape)}")
    target.copy_(src)
    return out


# ---- helpers ---------------------------------------------------------------------------------------
def _scatter_src(src, value):
    if src is None and value is None:
        raise TypeError("scatter() missing required argument: 'src' or 'value'")
    if src is not None and value is not None:
        raise TypeError("scatter() takes either 'src' or 'value', not both")
    s = src if src is not None else value
    if isinstance(s, TensorBase) and value is not None:
        if s.ndim:
            raise TypeError("scatter(): argument 'value' must be a number, not a Tensor")
        s = s.item()
    if not isinstance(s, (TensorBase, int, float, bool)):
        raise TypeError(f"scatter(): argument 'src' must be Tensor or a number, not {type(s).__name__}")
    return s


def _index_dim(op: str, x, dim: int, index, source):
    """Checks of index_add/index_copy/index_fill (torch's messages); returns (x as >= 1-d, the advanced index tuple
    that selects ``index`` along ``dim``, source as >= 1-d)."""
    if not isinstance(index, TensorBase):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{op}_(): Expected dtype int32/int64 for index, got {index.dtype.name}")
    if index.ndim > 1:
        if op == "index_fill":
            raise RuntimeError(f"Index has to be a vector/scalar, got shape {list(index.shape)}")
        raise IndexError(f"{op}_(): Index is supposed to be a vector, but got dim: {index.ndim} with size: "
                         f"{list(index.shape)}")
    check_index_device(x, index, op + "_")
    if x.ndim == 0:
        x = x.reshape(1)
        if source is not None and source.ndim == 0:
            source = source.reshape(1)
    d = normalize_dim(dim, x.ndim)
    index = index.reshape(-1)
    if source is not None:
        if not isinstance(source, TensorBase):
            raise TypeError(f"{op}(): argument 'source' must be Tensor, not {type(source).__name__}")
        if source.ndim == 0:
            source = source.reshape(1)
        if source.ndim != x.ndim or any(a != b for k, (a, b) in enumerate(zip(source.shape, x.shape)) if k != d):
            raise RuntimeError(f"{op}_(): source tensor shape must match self tensor shape, excluding the specified "
                               f"dimension. Got self.shape = {list(x.shape)} source.shape = {list(source.shape)}")
        if source.shape[d] != index.shape[0]:
            raise IndexError(f"{op}_(): Number of indices ({index.shape[0]}) should be equal to source.size(dim) "
                             f"({source.shape[d]})")
    _check_bounds(index, x.shape[d], f"{op}_()", d, RuntimeError if op == "index_add" else IndexError)
    return x, (slice(None),) * d + (index,), source


def _index_reduce_args(x, dim: int, index, source, reduce: str):
    """torch's checks of ``index_reduce`` in its order (``index_func_meta_impl``, with its messages); returns
    ``(x as >= 1-d, dim, index as a scatter index of source's shape, source as >= 1-d)``."""
    from .statistics import _torch_name  # (statistics imports this module's neighbours: kept out of the import cycle)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not isinstance(index, TensorBase):
        raise TypeError(f"index_reduce(): argument 'index' must be Tensor, not {type(index).__name__}")
    if not isinstance(source, TensorBase):
        raise TypeError(f"index_reduce(): argument 'source' must be Tensor, not {type(source).__name__}")
    d = normalize_dim(dim, max(x.ndim, 1))
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_torch_name(index.dtype)} and size: {list(index.shape)}")
    if index.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_torch_name(index.dtype)}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_torch_name(x.dtype)}) and source ({_torch_name(source.dtype)}) "
                           f"must have the same scalar type")
    if not (d == 0 or d < source.ndim):
        raise RuntimeError(f"index_reduce_(): Indexing dim {d} is out of bounds of the source tensor with dim "
                           f"{source.ndim}")
    n, ns = index.numel(), (source.shape[d] if source.ndim else 1)
    if n != ns:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to source.size(dim): ({ns}), "
                           f"for dim: {d}")
    xs, ss = list(x.shape), list(source.shape)
    if xs and ss:
        del xs[d], ss[d]
    if xs != ss:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {list(x.shape)} source.shape = {list(source.shape)}")
    check_index_device(x, index, "index_reduce_")
    if source._dev is not x._dev:
        check_same_device(x, source, "index_reduce_")
    size = x.shape[d] if x.ndim else 1
    if n:
        ix = index._host()
        if int(ix.min()) < 0 or int(ix.max()) >= size:
            raise IndexError("index out of range in self")
    if not x.ndim:
        x, source = x.reshape(1), source.reshape(1)
    shape = [1] * x.ndim
    shape[d] = n
    return x, d, index.long().reshape(shape).expand(source.shape), source


def _index_tuple(indices, x) -> tuple:
    """``index_put``'s indices: a tuple or list of integer or bool tensors, checked as torch checks them."""
    if isinstance(indices, TensorBase) or not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be a tuple of Tensors, not {type(indices).__name__}")
    dims, moved = 0, []
    for k, i in enumerate(indices):
        if not isinstance(i, TensorBase):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(i).__name__}")
        if i.dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if i._dev is not x._dev:
            i = _index_on(i, x)
        moved.append(i)
        dims += i.ndim if i.dtype is dtypes.bool_ else 1
    if dims > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {dims})")
    _check_masks(moved, x.shape)
    return tuple(moved)


# ---- free functions ---------------------------------------------------------------------------------------
scatter, scatter_reduce, index_add, index_copy, index_fill, index_put, masked_scatter = free_functions(
    ScatterMixin, "scatter", "scatter_reduce", "index_add", "index_copy", "index_fill", "index_put", "masked_scatter")


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True,
                 out=None) -> Tensor:
    if out is not None:
        raise NotImplementedError("index_reduce: out= is not supported; assign the result instead")
    if not isinstance(input, TensorBase):
        raise TypeError(f"index_reduce(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.index_reduce(dim, index, source, reduce, include_self=include_self)


index_put_, select_scatter, slice_scatter, as_strided_scatter, put = free_functions(
    ScatterMixin, "index_put_", "select_scatter", "slice_scatter", "as_strided_scatter", "put")
