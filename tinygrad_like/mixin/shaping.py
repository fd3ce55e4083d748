"""Tensor methods: roll, tile, repeat_interleave, unfold, diff, take, scatter and index_* families."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..layout import broadcast_shapes, normalize_dim
from ..ops import elementwise as E
from ..ops import indexing as I
from ..ops import shaping as S
from ..ops._util import check_index_device
from ..tensor_base import TensorBase, _shape_args

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_INDEX_DTYPES = (dtypes.int64, dtypes.int32)


class ShapingMixin:
    """Tensor methods: roll, tile, repeat_interleave, unfold, diff, take, scatter and index_* families."""

    __slots__ = ()

    # ---- rearranging -------------------------------------------------------------------------
    def roll(self, shifts, dims=None) -> Tensor:
        """Shift elements circularly; ``dims=None`` rolls the flattened tensor and restores the shape."""
        sh = (shifts,) if _is_int(shifts) else tuple(shifts)
        if dims is None:
            if len(sh) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
            return S.Roll.apply(self, int(sh[0]), None)
        ds = (dims,) if _is_int(dims) else tuple(dims)
        if len(sh) != len(ds):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
        if self.ndim == 0:
            raise IndexError(f"Dimension specified as {ds[0]} but tensor has no dimensions")
        return S.Roll.apply(self, tuple(int(s) for s in sh), tuple(normalize_dim(d, self.ndim) for d in ds))

    def rot90(self, k: int = 1, dims=(0, 1)) -> Tensor:
        """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first towards the second."""
        dims = tuple(dims)
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        nd = self.ndim
        if nd < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
        d0, d1 = normalize_dim(dims[0], nd), normalize_dim(dims[1], nd)
        if d0 == d1:
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = "
                               f"{dims[1]}")
        k %= 4
        if k == 1:
            return self.flip(d1).transpose(d0, d1)
        if k == 2:
            return self.flip((d0, d1))
        if k == 3:
            return self.flip(d0).transpose(d0, d1)
        return self.clone()

    def fliplr(self) -> Tensor:
        if self.ndim < 2:
            raise RuntimeError(f"Input must be >= 2-d, got a tensor of shape {list(self.shape)}")
        return self.flip(1)

    def flipud(self) -> Tensor:
        if self.ndim < 1:
            raise RuntimeError("Input must be >= 1-d, got a 0-d tensor")
        return self.flip(0)

    def tile(self, *dims) -> Tensor:
        """``repeat`` with missing leading repetitions taken as 1 (NumPy's ``tile``)."""
        reps = _shape_args(dims, what="tile dims")
        if len(reps) < self.ndim:
            reps = (1,) * (self.ndim - len(reps)) + reps
        return self.repeat(reps)

    def repeat_interleave(self, repeats, dim=None, *, output_size=None) -> Tensor:
        """Repeat each element (or each slice along ``dim``) ``repeats`` times in place; ``repeats`` an int or a
        tensor of one count per element. ``dim=None``: over the flattened tensor."""
        if dim is None:
            x, d = self.reshape(-1), 0
        else:
            d = normalize_dim(dim, max(self.ndim, 1))
            x = self if self.ndim else self.reshape(1)
        n = x.shape[d]
        if isinstance(repeats, TensorBase):
            if repeats.dtype not in _INDEX_DTYPES:
                raise NotImplementedError(f"repeat_interleave: repeats must be an integer tensor (int64 or int32), "
                                          f"got {repeats.dtype.name}")
            if repeats.ndim > 1:
                raise RuntimeError(f"repeats must be 0-dim or 1-dim tensor, got shape {list(repeats.shape)}")
            check_index_device(self, repeats, "repeat_interleave", "repeats")
            if repeats.numel() != 1:
                if repeats.shape[0] != n:
                    raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                                       f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {n}")
                index = _repeat_index(repeats)
                _check_output_size(output_size, index.shape[0])
                return x.index_select(d, index)
            repeats = int(repeats.reshape(()).item())
            if repeats < 0:
                raise RuntimeError("repeats can not be negative")
        elif not _is_int(repeats):
            raise TypeError(f"repeat_interleave(): repeats must be an int or an integer Tensor, got "
                            f"{type(repeats).__name__}")
        r = int(repeats)
        if r < 0:
            raise RuntimeError(f"Repeats must be non-negative, got {r}")
        _check_output_size(output_size, n * r)
        if r == 1:
            return x.clone()
        shape = x.shape
        return x.unsqueeze(d + 1).expand(shape[:d + 1] + (r,) + shape[d + 1:]).flatten(d, d + 1).contiguous()

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim: a view
        (overlapping windows share elements; their gradients add up)."""
        if self.ndim == 0:
            normalize_dim(dimension, 0)
            if size > 1:
                raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
            return self.reshape(1).unfold(0, size, step)[0]
        d = normalize_dim(dimension, self.ndim)
        n = self.shape[d]
        if size > n:
            raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
        if size < 0:
            raise RuntimeError(f"size is {size} but must be >= 0")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        return S.Unfold.apply(self, d, int(size), int(step))

    def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
        """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first); bool: ``!=``."""
        if self.ndim == 0:
            raise RuntimeError("diff expects input to be at least one-dimensional")
        if n < 0:
            raise RuntimeError(f"order must be non-negative but got {n}")
        d = normalize_dim(dim, self.ndim)
        x = self
        if prepend is not None or append is not None:
            from ..functions import cat
            parts = []
            for p in (prepend, x, append):
                if p is None:
                    continue
                if not isinstance(p, TensorBase):
                    raise TypeError(f"diff(): prepend and append must be Tensors, got {type(p).__name__}")
                if p.ndim != self.ndim:
                    raise RuntimeError(f"diff expects prepend or append to be the same dimension as input (input "
                                       f"is {self.ndim}-d, got a {p.ndim}-d tensor)")
                parts.append(p)
            x = cat(parts, d)
        for _ in range(min(n, x.shape[d])):
            m = x.shape[d]
            hi, lo = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
            x = hi.ne(lo) if x.dtype is dtypes.bool_ else hi - lo
        return x if x is not self else x.clone()

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        return self.transpose(dim0, dim1)

    def moveaxis(self, source, destination) -> Tensor:
        return self.movedim(source, destination)

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(_tensor_arg(other, "view_as", "other").shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(_tensor_arg(other, "reshape_as", "other").shape)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(_tensor_arg(other, "type_as", "other").dtype)

    def select(self, dim: int, index: int) -> Tensor:
        """The view at ``index`` along ``dim`` (that dim removed): ``x.select(1, i)`` is ``x[:, i]``."""
        if self.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        d = normalize_dim(dim, self.ndim)
        i, n = int(index), self.shape[d]
        if not -n <= i < n:
            raise IndexError(f"select(): index {i} out of range for tensor of size {list(self.shape)} at "
                             f"dimension {d}")
        return self[(slice(None),) * d + (i,)]

    def tensor_split(self, indices_or_sections, dim: int = 0) -> tuple:
        """Split into ``sections`` nearly equal parts (the first ones one longer), or at the given ``indices``."""
        if self.ndim == 0:
            raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
        d = normalize_dim(dim, self.ndim)
        n = self.shape[d]
        ios = indices_or_sections
        if isinstance(ios, TensorBase):
            if ios.dtype not in _INDEX_DTYPES:
                raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have integer dtype, but "
                                   f"got {ios.dtype.name}")
            if ios.ndim > 1:
                raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                                   f"one-dimensional tensor, but got a tensor with {ios.ndim} dims")
            ios = int(ios.item()) if ios.ndim == 0 else [int(v) for v in ios.tolist()]
        if _is_int(ios):
            k = int(ios)
            if k <= 0:
                raise RuntimeError(f"number of sections must be larger than 0, got {k}")
            q, r = divmod(n, k)
            bounds, start = [], 0
            for j in range(k):
                bounds.append(start)
                start += q + (j < r)
            ends = bounds[1:] + [n]
        else:
            bounds = [0] + [int(i) for i in ios]
            ends = bounds[1:] + [n]
        lead = (slice(None),) * d
        return tuple(self[lead + (slice(s, e),)] for s, e in zip(bounds, ends))

    # ---- reading by index --------------------------------------------------------------------
    def take(self, index: Tensor) -> Tensor:
        """Elements at flat (row-major) positions ``index``, in ``index``'s shape; negative positions count from
        the end."""
        if not isinstance(index, TensorBase):
            raise TypeError(f"take(): argument 'index' must be Tensor, not {type(index).__name__}")
        if index.dtype is not dtypes.int64:
            raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype.name}")
        check_index_device(self, index, "take")
        n = self.numel()
        if index.numel():
            ix = index._host()
            bad = ix[(ix < -n) | (ix >= n)]
            if bad.size:
                raise IndexError(f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a tensor of "
                                 f"{n} elements.")
        return I.Index.apply(self.reshape(-1), (index,))

    def take_along_dim(self, indices: Tensor, dim=None) -> Tensor:
        """``gather`` with ``indices`` and this tensor broadcast against each other outside ``dim``; ``dim=None``:
        over the flattened tensor."""
        if not isinstance(indices, TensorBase):
            raise TypeError(f"take_along_dim(): argument 'indices' must be Tensor, not {type(indices).__name__}")
        if indices.dtype is not dtypes.int64:
            raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                               f"{indices.dtype.name}")
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        if self.ndim != indices.ndim:
            raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of "
                               f"dimensions, but got {self.ndim} dimensions for input, and {indices.ndim} "
                               f"dimensions for indices")
        if self.ndim == 0:
            return self.reshape(1).gather(0, indices.reshape(1)).reshape(())
        d = normalize_dim(dim, self.ndim)
        want = list(self.shape)
        want[d] = indices.shape[d]
        try:
            shape = list(broadcast_shapes(tuple(want), indices.shape))
        except ValueError:
            raise RuntimeError(f"take_along_dim(): input {list(self.shape)} and indices {list(indices.shape)} "
                               f"cannot be broadcast outside dim {d}") from None
        ishape, xshape = list(shape), list(shape)
        xshape[d] = self.shape[d]
        x = self if tuple(xshape) == self.shape else self.expand(xshape)
        i = indices if tuple(ishape) == indices.shape else indices.expand(ishape)
        return x.gather(d, i)

    def masked_select(self, mask: Tensor) -> Tensor:
        """The elements where ``mask`` (broadcast with this tensor) is True, as a 1-d tensor."""
        mask = _bool_mask(mask, "masked_select", "masked_select: expected BoolTensor for mask")
        shape = _broadcast(self.shape, mask.shape, "masked_select")
        x = self if self.shape == shape else self.expand(shape)
        m = mask if mask.shape == shape else mask.expand(shape)
        if not shape:
            x, m = x.reshape(1), m.reshape(1)
        return I.Index.apply(x, (m,))

    def nonzero(self, *, as_tuple: bool = False):
        """The indices of the nonzero elements: an (n, ndim) int64 tensor, or (``as_tuple``) one 1-d tensor per
        dim. A 0-d tensor counts as 1-d for the tuple, and as 0-d for the matrix (shape (n, 0)), as in torch."""
        be = self._dev.backend
        x = self._x if self.ndim else be.reshape(self._x, (1,))
        out = self._wrap(be.nonzero(x), self._dev)
        if as_tuple:
            return tuple(out[:, i] for i in range(out.shape[1]))
        return out if self.ndim else out[:, :0]

    def argwhere(self) -> Tensor:
        return self.nonzero()

    def where(self, condition: Tensor, other) -> Tensor:
        """``tl.where(condition, self, other)``."""
        return E.Where.apply(condition, self, other)

    # ---- scatter -----------------------------------------------------------------------------
    def scatter(self, dim: int, index: Tensor, src=None, value=None, *, reduce: str | None = None) -> Tensor:
        """A copy with ``out[.., index[i, j], ..] = src[i, j]`` along ``dim`` (or the number ``value``); with
        ``reduce`` ('add' or 'multiply', deprecated in torch for ``scatter_reduce``) combined instead."""
        src = _scatter_src(src, value)
        if reduce is None:
            return S.Scatter.apply(self, dim, index, src)
        red = {"add": "sum", "multiply": "prod"}.get(reduce)
        if red is None:
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce!r}")
        if isinstance(src, TensorBase):
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in "
                          "a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=2)
        else:
            I._check_index(index, "scatter")
            src = S.full_src(self, index, src)
        return S.scatter_reduce(self, dim, index, src, red, True)

    def scatter_(self, dim: int, index: Tensor, src=None, value=None, *, reduce: str | None = None) -> Tensor:
        src = _scatter_src(src, value)
        return self._inplace("scatter_", lambda x, s: x.scatter(dim, index, s, reduce=reduce), src)

    def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return self._inplace("scatter_add_", lambda x, s: x.scatter_add(dim, index, s), src)

    def scatter_reduce(self, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
        """A copy with ``src`` reduced into it at ``index`` along ``dim``: ``reduce`` is 'sum', 'prod', 'mean',
        'amax' or 'amin'; ``include_self=False`` leaves this tensor's values out at the positions written."""
        return S.scatter_reduce(self, dim, index, src, reduce, include_self)

    def scatter_reduce_(self, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                        include_self: bool = True) -> Tensor:
        return self._inplace("scatter_reduce_", lambda x, s: S.scatter_reduce(x, dim, index, s, reduce,
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
        out = S.scatter_reduce(x, d, full, src, reduce, include_self)
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
        out = x + I.IndexAdd.apply(source, x.shape, idx)
        return out if out.shape == self.shape else out.reshape(self.shape)

    def index_add_(self, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
        return self._inplace("index_add_", lambda x, s: x.index_add(dim, index, s, alpha=alpha), source)

    def index_copy(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        """A copy with the slices of ``source`` written at the positions ``index`` along ``dim``."""
        x, idx, source = _index_dim("index_copy", self, dim, index, source)
        if source.dtype is not self.dtype:
            raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                               f"{self.dtype.name} and (source) {source.dtype.name}")
        out = I.IndexPut.apply(x, idx, source)
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
            from ..creation import tensor
            idx = idx[:-1] + (tensor(np.unique(idx[-1]._host()), device=self._dev),)
        out = I.IndexPut.apply(x, idx, value)
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
            return self + I.IndexAdd.apply(values, self.shape, idx)
        return I.IndexPut.apply(self, idx, values)

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
            return I.IndexPut.apply(x.reshape(1), (m.reshape(1),), source.reshape(-1)[:n]).reshape(())
        return I.IndexPut.apply(x, (m,), source.reshape(-1)[:n])

    def masked_scatter_(self, mask: Tensor, source: Tensor) -> Tensor:
        return self._inplace("masked_scatter_", lambda x, s: x.masked_scatter(mask, s), source)


# ---- helpers ---------------------------------------------------------------------------------------
def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _tensor_arg(t, op: str, name: str):
    if not isinstance(t, TensorBase):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(t).__name__}")
    return t


def _check_output_size(output_size, n: int) -> None:
    if output_size is not None and int(output_size) != n:
        raise RuntimeError(f"allocated size does not match required size (output_size={output_size}, the repeats "
                           f"give {n})")


def _repeat_index(repeats) -> Tensor:
    """``[0]*repeats[0] + [1]*repeats[1] + ...`` as an int64 tensor on ``repeats``' device."""
    r = repeats._host()
    if r.size and int(r.min()) < 0:
        raise RuntimeError("repeats can not be negative")
    from ..creation import arange
    be, dev = repeats._dev.backend, repeats._dev
    pos = arange(repeats.shape[0], device=dev)
    reps = repeats._x if repeats.dtype is dtypes.int64 else be.cast(repeats._x, dtypes.int64)
    return pos._wrap(be.repeat_interleave(pos._x, reps, 0), dev)


def _bool_mask(mask, op: str, message: str | None):
    if not isinstance(mask, TensorBase):
        raise TypeError(f"{op}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(message or f"{op}_ only supports boolean masks, but got mask with dtype {mask.dtype.name}")
    return mask


def _broadcast(a: tuple, b: tuple, op: str) -> tuple:
    try:
        return broadcast_shapes(a, b)
    except ValueError:
        raise RuntimeError(f"{op}: the mask of shape {list(b)} cannot be broadcast with the tensor's shape "
                           f"{list(a)}") from None


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
    I._check_bounds(index, x.shape[d], f"{op}_()", d, RuntimeError if op == "index_add" else IndexError)
    return x, (slice(None),) * d + (index,), source


def _index_reduce_args(x, dim: int, index, source, reduce: str):
    """torch's checks of ``index_reduce`` in its order (``index_func_meta_impl``, with its messages); returns
    ``(x as >= 1-d, dim, index as a scatter index of source's shape, source as >= 1-d)``."""
    from ..ops.statistics import _torch_name
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
        from ..ops._util import check_same_device
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
            from .indexing import _index_on
            i = _index_on(i, x)
        moved.append(i)
        dims += i.ndim if i.dtype is dtypes.bool_ else 1
    if dims > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {dims})")
    from .indexing import _check_masks
    _check_masks(moved, x.shape)
    return tuple(moved)
