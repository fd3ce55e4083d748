"""Rearranging and reading by index: roll, rot90, tile, repeat_interleave, unfold (a strided view), diff, select,
tensor_split, take, take_along_dim, masked_select; the stacking functions (``hstack``, ``vstack``, ``dstack``,
``column_stack``), ``atleast_*d`` and ``meshgrid``, which exist only as functions, as in torch. Their graph nodes
(roll, unfold: the others are compositions of the view, gather and indexing ops), Tensor methods
(:class:`ShapingMixin`) and free functions. Writing at indices (scatter, index_add, index_put...) is in
:mod:`.scatter`; ``logspace`` lives with the other factories in ``creation.py``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..layout import Layout, broadcast_shapes, normalize_dim
from ..tensor_base import TensorBase, _shape_args
from ._util import check_index_device, free_functions
from .elementwise import Where
from .indexing import _INDEX_DTYPES, Index, _bool_mask, _broadcast
from .movement import MovementMixin, ViewFunction, cat

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = [
    "roll", "rot90", "fliplr", "flipud", "tile", "repeat_interleave", "diff", "swapaxes", "swapdims", "moveaxis",
    "movedim", "t", "take", "take_along_dim", "select", "tensor_split", "masked_select", "argwhere", "hstack", "vstack",
    "dstack", "row_stack", "column_stack", "atleast_1d", "atleast_2d", "atleast_3d", "meshgrid",
    "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk",
    "ravel", "narrow_copy", "slice_inverse",
]


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
        from ..creation import arange  # (creation sits above the ops: a module-level import would be a cycle)
        d, size, step = self.dim, self.size, self.step
        nwin = g.shape[d]
        starts = arange(nwin, device=g.device) * step
        index = (starts.unsqueeze(1) + arange(size, device=g.device).unsqueeze(0)).reshape(-1)
        gw = g.movedim(-1, d + 1).flatten(d, d + 1)
        return g.new_zeros(self.in_shape).index_add(d, index, gw), None, None, None


class ShapingMixin:
    """Tensor methods: roll, tile, repeat_interleave, unfold, diff, select, tensor_split, take and masked_select."""

    __slots__ = ()

    # ---- rearranging -------------------------------------------------------------------------
    def roll(self, shifts, dims=None) -> Tensor:
        """Shift elements circularly; ``dims=None`` rolls the flattened tensor and restores the shape."""
        sh = (shifts,) if _is_int(shifts) else tuple(shifts)
        if dims is None:
            if len(sh) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
            return Roll.apply(self, int(sh[0]), None)
        ds = (dims,) if _is_int(dims) else tuple(dims)
        if len(sh) != len(ds):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
        if self.ndim == 0:
            raise IndexError(f"Dimension specified as {ds[0]} but tensor has no dimensions")
        return Roll.apply(self, tuple(int(s) for s in sh), tuple(normalize_dim(d, self.ndim) for d in ds))

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
        return Unfold.apply(self, d, int(size), int(step))

    def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
        """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first); bool: ``!=``."""
        if self.ndim == 0:
            raise RuntimeError("diff expects input to be at least one-dimensional")
        if n < 0:
            raise RuntimeError(f"order must be non-negative but got {n}")
        d = normalize_dim(dim, self.ndim)
        x = self
        if prepend is not None or append is not None:
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
        return Index.apply(self.reshape(-1), (index,))

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
        return Index.apply(x, (m,))

    def argwhere(self) -> Tensor:
        return self.nonzero()

    def where(self, condition: Tensor, other) -> Tensor:
        """``tl.where(condition, self, other)``."""
        return Where.apply(condition, self, other)


    # ---- splitting by direction, sizes, and torch's "unsafe" aliases -------------------------------------------------
    def _split_dir(self, indices_or_sections, dim: int, op: str, min_ndim: int) -> tuple:
        if self.ndim < min_ndim:
            raise RuntimeError(f"torch.{op} requires a tensor with at least {min_ndim} dimension, but got a tensor "
                               f"with {self.ndim} dimensions!")
        if _is_int(indices_or_sections):
            n = self.shape[dim]
            if indices_or_sections == 0 or n % indices_or_sections:
                raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the size of the "
                                   f"dimension {n} is not divisible by the split_size {indices_or_sections}!")
        return self.tensor_split(indices_or_sections, dim)

    def hsplit(self, indices_or_sections) -> tuple:
        """Split along dim 1 (dim 0 for a 1-d tensor); an int must divide the size."""
        return self._split_dir(indices_or_sections, 0 if self.ndim == 1 else 1, "hsplit", 1)

    def vsplit(self, indices_or_sections) -> tuple:
        """Split along dim 0 (a tensor of at least 2 dims); an int must divide the size."""
        return self._split_dir(indices_or_sections, 0, "vsplit", 2)

    def dsplit(self, indices_or_sections) -> tuple:
        """Split along dim 2 (a tensor of at least 3 dims); an int must divide the size."""
        return self._split_dir(indices_or_sections, 2, "dsplit", 3)

    def split_with_sizes(self, split_sizes, dim: int = 0) -> tuple:
        """Views of the given sizes along ``dim``; they must add up to its size."""
        if _is_int(split_sizes):
            raise TypeError("split_with_sizes(): argument 'split_sizes' must be a sequence of ints, not int")
        return self.split(list(split_sizes), dim)

    def unsafe_split(self, split_size: int, dim: int = 0) -> tuple:
        """``split`` (torch's version skips the view bookkeeping; here there is none to skip)."""
        return self.split(split_size, dim)

    def unsafe_split_with_sizes(self, split_sizes, dim: int = 0) -> tuple:
        return self.split_with_sizes(split_sizes, dim)

    def unsafe_chunk(self, chunks: int, dim: int = 0) -> tuple:
        return self.chunk(chunks, dim)

    # ---- shapes as copies, and reshaping by summing -------------------------------------------------------------
    def ravel(self) -> Tensor:
        """The elements as a 1-d tensor (a view when the layout allows, else a copy)."""
        return self.reshape(-1)

    def slice_inverse(self, src: Tensor, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
        """The inverse of slicing, as torch's functionalization uses it: a view of this tensor's storage (this tensor
        being a slice of a base) with ``src``'s sizes, strides and offset, i.e. the base again."""
        return self.as_strided(tuple(src.shape), src.stride(), src.storage_offset())

    def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
        """``narrow``, as a new tensor."""
        return self.narrow(dim, start, length).clone()

    def sum_to_size(self, *size) -> Tensor:
        """Sum over the dims that broadcasting ``size`` to this shape would expand."""
        size = _shape_args(size)
        shape = tuple(self.shape)
        try:
            if broadcast_shapes(size, shape) != shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                               f"{{{', '.join(map(str, shape))}}}.") from None
        lead = len(shape) - len(size)
        out = self.sum(tuple(range(lead))) if lead else self
        dims = tuple(i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1)
        return out.sum(dims, keepdim=True) if dims else out

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
    from ..creation import arange  # (creation sits above the ops: a module-level import would be a cycle)
    be, dev = repeats._dev.backend, repeats._dev
    pos = arange(repeats.shape[0], device=dev)
    reps = repeats._x if repeats.dtype is dtypes.int64 else be.cast(repeats._x, dtypes.int64)
    return pos._wrap(be.repeat_interleave(pos._x, reps, 0), dev)


# ---- free functions ---------------------------------------------------------------------------------------
(roll, rot90, fliplr, flipud, diff, swapdims, moveaxis, take, take_along_dim, select, tensor_split, masked_select,
 argwhere) = free_functions(
    ShapingMixin, "roll", "rot90", "fliplr", "flipud", "diff", "swapdims", "moveaxis", "take", "take_along_dim",
    "select", "tensor_split", "masked_select", "argwhere")
# three methods of the movement family whose free functions tl.__all__ lists with this family's, as it always has
swapaxes, movedim, t = free_functions(MovementMixin, "swapaxes", "movedim", "t")
(hsplit, vsplit, dsplit, split_with_sizes, unsafe_split, unsafe_split_with_sizes, unsafe_chunk, ravel,
 narrow_copy, slice_inverse) = free_functions(ShapingMixin, "hsplit", "vsplit", "dsplit", "split_with_sizes",
                                              "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk", "ravel",
                                              "narrow_copy", "slice_inverse")


def _input(input, op: str) -> Tensor:
    if not isinstance(input, TensorBase):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input


def tile(input: Tensor, dims) -> Tensor:
    return _input(input, "tile").tile(dims)


def repeat_interleave(input: Tensor, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """``input.repeat_interleave(repeats, dim)``; with ``input`` alone (an integer tensor of counts), the positions
    ``0..len-1`` each repeated its count of times."""
    if repeats is None:
        from ..creation import arange  # (creation sits above the ops: a module-level import would be a cycle)
        counts = _input(input, "repeat_interleave")
        if counts.ndim > 1:
            raise RuntimeError(f"repeat_interleave: repeats must be 0-dim or 1-dim tensor, got shape "
                               f"{list(counts.shape)}")
        return arange(counts.numel(), device=counts.device).repeat_interleave(counts.reshape(-1),
                                                                              output_size=output_size)
    return _input(input, "repeat_interleave").repeat_interleave(repeats, dim, output_size=output_size)


# ---- stacking ------------------------------------------------------------------------------------
def _sequence(tensors, op: str) -> tuple:
    if isinstance(tensors, TensorBase) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{op}(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if not isinstance(x, TensorBase):
            raise TypeError(f"{op}(): expected a sequence of Tensors, but element {i} is {type(x).__name__}")
    return tuple(tensors)


def _atleast(tensors: tuple, op: str, fix):
    single = len(tensors) == 1 and isinstance(tensors[0], TensorBase)
    if len(tensors) == 1 and not single:
        tensors = _sequence(tensors[0], op)
    else:
        for i, x in enumerate(tensors):
            if not isinstance(x, TensorBase):
                raise TypeError(f"{op}(): expected Tensors, but argument {i} is {type(x).__name__}")
    out = tuple(fix(x) for x in tensors)
    return out[0] if single else out


def _at1(x: Tensor) -> Tensor:
    return x.reshape(1) if x.ndim == 0 else x


def _at2(x: Tensor) -> Tensor:
    return x.reshape(1, 1) if x.ndim == 0 else x.unsqueeze(0) if x.ndim == 1 else x


def _at3(x: Tensor) -> Tensor:
    if x.ndim == 0:
        return x.reshape(1, 1, 1)
    if x.ndim == 1:
        return x.reshape(1, -1, 1)
    return x.unsqueeze(-1) if x.ndim == 2 else x


def atleast_1d(*tensors):
    """Each tensor with at least one dim (0-d -> shape (1,)); one tensor in, one out, else a tuple."""
    return _atleast(tensors, "atleast_1d", _at1)


def atleast_2d(*tensors):
    """Each tensor with at least two dims (0-d -> (1, 1), (n,) -> (1, n))."""
    return _atleast(tensors, "atleast_2d", _at2)


def atleast_3d(*tensors):
    """Each tensor with at least three dims (0-d -> (1, 1, 1), (n,) -> (1, n, 1), (a, b) -> (a, b, 1))."""
    return _atleast(tensors, "atleast_3d", _at3)


def hstack(tensors) -> Tensor:
    """Join horizontally: along dim 0 for 1-d tensors, else along dim 1."""
    ts = tuple(_at1(x) for x in _sequence(tensors, "hstack"))
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Join vertically: rows, after making each tensor at least 2-d."""
    return cat([_at2(x) for x in _sequence(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors) -> Tensor:
    """Join in depth: along dim 2, after making each tensor at least 3-d."""
    return cat([_at3(x) for x in _sequence(tensors, "dstack")], 2)


def column_stack(tensors) -> Tensor:
    """Join as columns: 0-d and 1-d tensors become columns (n, 1), then ``hstack``."""
    ts = _sequence(tensors, "column_stack")
    return hstack([x.reshape(x.numel(), 1) if x.ndim <= 1 else x for x in ts])


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-d (or 0-d) tensors: with ``indexing='ij'`` output ``i`` varies along dim ``i``; with
    ``'xy'`` the first two dims are swapped (NumPy's and MATLAB's convention). The outputs are expanded views.
    Without ``indexing`` torch warns and uses 'ij'; so does this."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for i, x in enumerate(tensors):
        if not isinstance(x, TensorBase):
            raise TypeError(f"meshgrid(): expected Tensors, but argument {i} is {type(x).__name__}")
        if x.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                               f"shape {list(x.shape)}")
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype (got {tensors[0].dtype.name} "
                               f"and {x.dtype.name})")
        if x.device is not tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    n = len(tensors)
    shape = [x.numel() for x in tensors]
    swap = indexing == "xy" and n >= 2
    if swap:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(tensors):
        pos = (1 - i) if swap and i < 2 else i
        view = [1] * n
        view[pos] = -1
        out.append(x.reshape(view).expand(shape))
    return tuple(out)
