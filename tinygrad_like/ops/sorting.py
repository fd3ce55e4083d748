"""Sorts and order statistics: ``sort``, ``argsort``, ``msort``, ``topk``, ``kthvalue``, ``median``, ``nanmedian``,
``mode``; distinct values (``unique``, ``unique_consecutive``) and binary search (``searchsorted``, ``bucketize``).

An op that picks values (a sort, an order statistic; a running maximum in :mod:`.scans`) returns them as its output
and the indices it picked them at through a :class:`Picked` box the caller passes in: the indices are computed by the
same primitive, once. Its gradient goes back to the picked positions (a scatter-add of the incoming gradient), as in
PyTorch. The ops that return values and indices return PyTorch's named tuples (``.values``, ``.indices``), each named
like ``torch.return_types``' (``topk``, ``sort``, ``median``...).
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..dtypes import result_type
from ..layout import normalize_dim
from ..tensor_base import TensorBase
from ._util import free_functions
from .elementwise import where

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique",
           "unique_consecutive", "searchsorted", "bucketize"]


class Picked:
    """Where a value-picking op leaves its second output, the indices (an int64 tensor)."""

    __slots__ = ("indices",)


class _PickAlong(Function):
    """Values picked along ``dim`` at ``indices``; the gradient is scattered back to those positions (summed where
    one position was picked several times, as by a running maximum). ``keepdim``: the indices keep the picked dim
    (a sort's, a scan's); else it was reduced away."""

    __slots__ = ("dim", "keepdim", "in_shape")

    def _picked(self, x, dim: int, keepdim: bool, native_indices, box: Picked) -> None:
        box.indices = idx = x._wrap(native_indices, x._dev)
        self.dim, self.keepdim, self.in_shape = dim, keepdim, x._x.shape
        if _grad_mode.enabled and x.requires_grad:  # the indices are all backward reads (a write into them is refused)
            self.save_for_backward(idx)

    def _scatter(self, g):
        (idx,) = self.saved_tensors
        d = self.dim
        if not self.keepdim:
            idx, g = idx.unsqueeze(d), g.unsqueeze(d)
        return g.new_zeros(self.in_shape).scatter_add(d, idx, g)


class Sort(_PickAlong):
    __slots__ = ()

    def forward(self, x, dim, descending, stable, box):
        v, i = x._dev.backend.sort(x._x, dim, descending, stable)
        self._picked(x, dim, True, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None, None


class Topk(_PickAlong):
    __slots__ = ()

    def forward(self, x, k, dim, largest, sorted, box):
        v, i = x._dev.backend.topk(x._x, k, dim, largest, sorted)
        self._picked(x, dim, True, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None, None, None


class Kthvalue(_PickAlong):
    __slots__ = ()

    def forward(self, x, k, dim, keepdim, box):
        v, i = x._dev.backend.kthvalue(x._x, k, dim, keepdim)
        self._picked(x, dim, keepdim, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None, None


class Median(_PickAlong):
    """``median(dim)`` (the lower median) and ``nanmedian(dim)`` (``ignore_nan``)."""

    __slots__ = ()

    def forward(self, x, dim, keepdim, ignore_nan, box):
        v, i = x._dev.backend.median(x._x, dim, keepdim, ignore_nan)
        self._picked(x, dim, keepdim, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None, None


class Mode(_PickAlong):
    __slots__ = ()

    def forward(self, x, dim, keepdim, box):
        v, i = x._dev.backend.mode(x._x, dim, keepdim)
        self._picked(x, dim, keepdim, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None, None


class MedianAll(Function):
    """``median()``/``nanmedian()`` of all elements. As in PyTorch the gradient is shared evenly by every element
    equal to the median (every NaN, when the median is NaN)."""

    __slots__ = ()
    save_output = True

    def forward(self, x, ignore_nan):
        if _grad_mode.enabled and x.requires_grad:
            self.save_for_backward(x)
        v, _ = x._dev.backend.median(x._x, None, False, ignore_nan)
        return v

    def backward(self, g):
        x, y = self.saved_tensors
        hit = (x == y) | (x.isnan() & y.isnan())
        return where(hit, g / hit.sum().to(g.dtype), 0.0), None


# ---- results and arguments --------------------------------------------------------------------------
def _return_type(name: str):
    rt = namedtuple(name, ["values", "indices"])
    rt.__doc__ = f"``{name}``'s result, as ``torch.return_types.{name}``: ``(values, indices)``."
    return rt


topk_result = _return_type("topk")
sort_result = _return_type("sort")
kthvalue_result = _return_type("kthvalue")
median_result = _return_type("median")
nanmedian_result = _return_type("nanmedian")
mode_result = _return_type("mode")


def _lane(t, dim, op: str):
    """``(t, dim)`` for an op along one dim: a 0-d tensor is seen as one element along dim 0 (the result is made 0-d
    again by the caller), as PyTorch lets dim 0 and -1 name the single element of a 0-d tensor."""
    if isinstance(dim, np.integer):
        dim = int(dim)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    if t.ndim == 0:
        normalize_dim(dim, 0)
        return t.reshape(1), 0
    return t, normalize_dim(dim, t.ndim)


def _nonempty(t, d: int, op: str) -> None:
    if t.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size (input shape {t.shape}).")


def _keep(keepdim, keepdims):
    """``keepdim``, or its NumPy spelling ``keepdims`` (PyTorch accepts both)."""
    if keepdims is None:
        return keepdim
    if keepdim:
        raise TypeError("got both 'keepdim' and its alias 'keepdims'; give one")
    return keepdims


def _dim(dim, axis):
    """``dim``, or its NumPy spelling ``axis`` (PyTorch accepts both)."""
    if axis is None:
        return dim
    if dim is not None:
        raise TypeError("got both 'dim' and its alias 'axis'; give one")
    return axis


def _scalar0d(values, indices, zero_d: bool):
    if zero_d:
        return values.reshape(()), indices.reshape(())
    return values, indices


def _distinct(t, v, inv, cnt, return_inverse: bool, return_counts: bool):
    dev = t._dev
    out = t._wrap(v, dev)
    if not (return_inverse or return_counts):
        return out
    res = [out]
    if return_inverse:
        res.append(t._wrap(inv, dev))
    if return_counts:
        res.append(t._wrap(cnt, dev))
    return tuple(res)


class SortingMixin:
    """Tensor methods: sorting, order statistics, distinct values."""

    __slots__ = ()

    # ---- sorting ---------------------------------------------------------------------------------------
    def sort(self, dim: int = -1, descending: bool = False, stable: bool | None = False):
        """``(values, indices)`` along ``dim``. The sort is always stable (equal elements keep their order, which
        ``stable=False`` allows); NaN sorts above every number, as in PyTorch."""
        x, d = _lane(self, dim, "sort")
        box = Picked()
        v = Sort.apply(x, d, bool(descending), True, box)
        return sort_result(*_scalar0d(v, box.indices, self.ndim == 0))

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
        x, d = _lane(self, dim, "argsort")
        _, i = self._dev.backend.sort(x._x, d, bool(descending), True)
        out = self._wrap(i, self._dev)
        return out.reshape(()) if self.ndim == 0 else out

    def msort(self) -> Tensor:
        """``sort(dim=0).values``."""
        return self.sort(0).values

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
        """The ``k`` largest (``largest=False``: smallest) elements along ``dim`` and their indices, best first
        (also with ``sorted=False``, which allows any order). NaN counts as larger than every number."""
        if self.dtype is dtypes.bool_:
            raise RuntimeError("topk does not support bool dtypes (as in torch); convert with .int() first")
        x, d = _lane(self, dim, "topk")
        k = int(k)
        if not 0 <= k <= x.shape[d]:
            raise RuntimeError(f"selected index k out of range: topk(k={k}) along dim {d} of size {x.shape[d]} "
                               f"(input shape {self.shape})")
        box = Picked()
        v = Topk.apply(x, k, d, bool(largest), bool(sorted), box)
        return topk_result(*_scalar0d(v, box.indices, self.ndim == 0))

    # ---- order statistics ------------------------------------------------------------------------------
    def _no_bool(self, op: str) -> None:
        if self.dtype is dtypes.bool_:
            raise NotImplementedError(f"{op}(): not implemented for bool tensors (as in torch); convert with "
                                      f".int() first")

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False, *, keepdims=None):
        """The ``k``-th smallest element (1-based) along ``dim`` and its index."""
        self._no_bool("kthvalue")
        x, d = _lane(self, dim, "kthvalue")
        _nonempty(x, d, "kthvalue")
        k = int(k)
        if not 1 <= k <= x.shape[d]:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}: k={k}, expected 1 "
                               f"<= k <= {x.shape[d]} (input shape {self.shape})")
        box = Picked()
        v = Kthvalue.apply(x, k, d, bool(_keep(keepdim, keepdims)), box)
        return kthvalue_result(*_scalar0d(v, box.indices, self.ndim == 0))

    def _median(self, dim, keepdim, ignore_nan: bool, op: str):
        self._no_bool(op)
        if dim is None:
            if self.numel() == 0:
                if not self.dtype.is_floating_point:
                    raise RuntimeError(f"{op}(): an empty {self.dtype.name} tensor has no median")
                return self._wrap(self._dev.backend.full((), float("nan"), self.dtype), self._dev)
            return MedianAll.apply(self, ignore_nan)
        x, d = _lane(self, dim, op)
        _nonempty(x, d, op)
        box = Picked()
        v = Median.apply(x, d, bool(keepdim), ignore_nan, box)
        rt = nanmedian_result if ignore_nan else median_result
        return rt(*_scalar0d(v, box.indices, self.ndim == 0))

    def median(self, dim: int | None = None, keepdim: bool = False, *, keepdims=None):
        """Without ``dim``: the lower median of all elements (NaN if there is one), a 0-d tensor. With ``dim``:
        ``(values, indices)`` of the lower median along it."""
        return self._median(dim, _keep(keepdim, keepdims), False, "median")

    def nanmedian(self, dim: int | None = None, keepdim: bool = False, *, keepdims=None):
        """As :meth:`median`, ignoring NaNs (NaN only where every element is NaN)."""
        return self._median(dim, _keep(keepdim, keepdims), True, "nanmedian")

    def mode(self, dim: int = -1, keepdim: bool = False, *, keepdims=None):
        """The most frequent value along ``dim`` (the smallest one on a tie) and the index of its last occurrence."""
        x, d = _lane(self, dim, "mode")
        _nonempty(x, d, "mode")
        box = Picked()
        v = Mode.apply(x, d, bool(_keep(keepdim, keepdims)), box)
        return mode_result(*_scalar0d(v, box.indices, self.ndim == 0))

    # ---- distinct values --------------------------------------------------------------------------------
    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim=None):
        """The distinct elements (with ``dim``: distinct slices along it), always sorted (``sorted=False`` allows
        any order); with ``return_inverse`` each element's index into them, with ``return_counts`` how often each
        occurs. NaNs are all distinct, as in PyTorch."""
        axis = None
        if dim is not None:
            if self.ndim == 0:
                raise IndexError(f"unique(): Dimension specified as {dim} but tensor has no dimensions")
            axis = normalize_dim(dim, self.ndim)
        v, inv, cnt = self._dev.backend.unique(self._x, axis, bool(return_inverse), bool(return_counts))
        return _distinct(self, v, inv, cnt, return_inverse, return_counts)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False, dim=None):
        """As :meth:`unique`, collapsing only runs of equal consecutive elements (slices), in their order."""
        axis = None
        if dim is not None:
            if self.ndim == 0:
                raise IndexError(f"unique_consecutive(): Dimension specified as {dim} but tensor has no dimensions")
            axis = normalize_dim(dim, self.ndim)
        v, inv, cnt = self._dev.backend.unique_consecutive(self._x, axis)
        return _distinct(self, v, inv, cnt, return_inverse, return_counts)


# ---- free functions (tl.<name>) ---------------------------------------------------------------------
sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique, unique_consecutive = free_functions(
    SortingMixin, "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode", "unique",
    "unique_consecutive")


def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False, side: str | None = None,
                 sorter=None) -> Tensor:
    """For each element of ``input`` (a tensor or a number), the index where it would be inserted into
    ``sorted_sequence`` to keep it sorted: the first position whose element is >= it (> with ``right=True`` or
    ``side="right"``). ``sorted_sequence`` is 1-D, or its leading dims match ``input``'s (one sorted row per
    row of values); ``sorter`` sorts an unsorted sequence (the indices ``argsort`` gives). int64, or int32 with
    ``out_int32``."""
    if not isinstance(sorted_sequence, TensorBase):
        raise TypeError(f"searchsorted(): argument 'sorted_sequence' must be Tensor, not "
                        f"{type(sorted_sequence).__name__}")
    seq = sorted_sequence
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    scalar = not isinstance(input, TensorBase)
    if scalar:
        if seq.ndim != 1:
            raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                               f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) and input value's "
                               f"dim(0) numel(1)")
        from ..creation import tensor  # (creation sits above the ops: a module-level import would be a cycle)
        input = tensor(input, device=seq.device)
    if seq.ndim == 0 or (seq.ndim > 1 and (input.ndim != seq.ndim or input.shape[:-1] != seq.shape[:-1])):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(seq.shape)} and input value tensor {list(input.shape)}")
    if input._dev is not seq._dev:
        raise RuntimeError(f"searchsorted: expected all tensors to be on the same device, but found tensors on "
                           f"{seq.device} and {input.device}")
    srt = None
    if sorter is not None:
        if not isinstance(sorter, TensorBase) or sorter.dtype not in (dtypes.int64, dtypes.int32):
            raise TypeError("torch.searchsorted(): sorter must be an int64 tensor (the indices that sort the "
                            "sequence, as argsort gives)")
        if sorter.shape != seq.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(seq.shape)} and got sorter tensor {list(sorter.shape)}")
        if sorter.numel() and (int(sorter.min()) < 0 or int(sorter.max()) >= seq.shape[-1]):
            raise RuntimeError(f"torch.searchsorted(): sorter index out of range: expected values in "
                               f"[0, {seq.shape[-1] - 1}]")
        srt = sorter._x
    be = seq._dev.backend
    dt = result_type(seq, input)
    xs = seq._x if seq.dtype is dt else be.cast(seq._x, dt)
    xv = input._x if input.dtype is dt else be.cast(input._x, dt)
    r = be.searchsorted(xs, xv, bool(right), srt)
    if out_int32:
        r = be.cast(r, dtypes.int32)
    return seq._wrap(r, seq._dev)


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each element of ``input`` among the sorted 1-D ``boundaries``: ``searchsorted(boundaries,
    input)`` (``right=False``: ``boundaries[i-1] < x <= boundaries[i]``; ``right=True``: ``boundaries[i-1] <= x <
    boundaries[i]``)."""
    if not isinstance(boundaries, TensorBase):
        raise TypeError(f"bucketize(): argument 'boundaries' must be Tensor, not {type(boundaries).__name__}")
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
