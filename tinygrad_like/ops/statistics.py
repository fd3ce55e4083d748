"""Counting and statistics: ``bincount``, ``histc``, ``histogram`` (PyTorch's named tuple ``(hist, bin_edges)``),
the nan-aware reductions ``nansum`` and ``nanmean``, ``count_nonzero``, and ``std_mean``/``var_mean``.

The counts are not differentiable: where torch marks such an output as requiring grad (weights that require grad,
``histogram``'s outputs), it is the output of a :class:`NoDerivative` node whose backward raises, as torch's does.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..tensor_base import TensorBase
from ._util import check_same_device, free_functions
from .elementwise import Where
from .sorting import _dim, _keep

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = ["nansum", "nanmean", "count_nonzero", "std_mean", "var_mean", "bincount", "histc", "histogram"]


class NoDerivative(Function):
    """An output PyTorch marks as requiring grad but whose derivative it does not implement: ``bincount`` with
    weights that require grad, ``histogram``'s two outputs. The node carries the result (computed by the caller,
    ``native``) so the graph shows where it came from; its backward raises, naming the op, as torch's does.
    ``others``: further tensor inputs (``histogram``'s weight), so the node has an edge to each."""

    __slots__ = ("op",)

    def forward(self, x, native, op, *others):
        self.op = op
        return native

    def backward(self, g):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented (as in torch): detach its inputs "
                           f"(`.detach()`) before calling {self.op}, or compute what you need with differentiable "
                           f"ops (e.g. a one_hot(...).sum(0) for counts)")


#: ``histogram``'s result, as ``torch.return_types.histogram``: ``(hist, bin_edges)``
histogram_result = namedtuple("histogram", ["hist", "bin_edges"])
histogram_result.__doc__ = "``histogram``'s result, as ``torch.return_types.histogram``: ``(hist, bin_edges)``."

_TORCH_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool", "int8": "Char", "uint8": "Byte", "int16": "Short"}
_TORCH_FLOAT_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}


def _torch_name(dt) -> str:
    """A dtype as torch's messages name it ('Long', 'Float', ...)."""
    return _TORCH_NAMES.get(dt.name) or _TORCH_FLOAT_NAMES.get(dt.name, dt.name)


def _histogram_edges(x, bins, range):  # noqa: A002 - torch's name
    """``histogram``'s bin edges (a native 1-D array of ``x``'s dtype), checked as torch checks them: ``bins`` a
    tensor of edges (copied), or a number of equal bins over ``range``, the data's range, or [0, 1] for no data;
    an empty range is widened by 0.5 each way (NumPy's rule, which torch follows)."""
    be = x._dev.backend
    if isinstance(bins, TensorBase):
        if range is not None:
            raise TypeError("histogram(): range= is only accepted with an int number of bins, not with a tensor of "
                            "bin edges (torch's two overloads)")
        if bins.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {bins.ndim} "
                               f"dimensions in the bins tensor for dimension 0")
        if bins.numel() == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in "
                               "the bins tensor for dimension 0")
        if bins.dtype is not x.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_torch_name(x.dtype).lower()} and bins for dimension 0 with dtype "
                               f"{_torch_name(bins.dtype).lower()}")
        if bins.numel() == 1:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got 0 for dimension 0")
        if bins._dev is not x._dev:
            check_same_device(x, bins, "histogram")
        return be.copy(bins._x)
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool):
        raise TypeError(f"histogram(): argument 'bins' must be int or Tensor, not {type(bins).__name__}")
    bins = int(bins)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if range is not None:
        r = tuple(range)
        if len(r) != 2:
            raise RuntimeError(f"torch.histogramdd: for a 1-dimensional histogram range should have 2 elements, but "
                               f"got {len(r)}")
        lo, hi = float(r[0]), float(r[1])
    elif x.numel():  # (the data's range: one host read)
        lo, hi = float(x.detach().min()), float(x.detach().max())
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite")
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                           f"dimension 0")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return be.linspace(lo, hi, bins + 1, x.dtype)


class StatisticsMixin:
    """Tensor methods: counting (bincount, histograms), nan-aware reductions, count_nonzero."""

    __slots__ = ()

    # ---- counting: bincount, histograms --------------------------------------------------------------
    def bincount(self, weights=None, minlength: int = 0) -> Tensor:
        """How often each value occurs in this 1-D tensor of non-negative integers (bin ``i`` counts the value
        ``i``; int64), or with ``weights`` (one per element) the sum of the weights at each value: float32 weights
        give float32, any other dtype float64 (torch's rule). At least ``minlength`` bins; an empty input gives
        ``minlength`` int64 zeros, with weights too (as torch). Not differentiable: torch does not implement the
        weights' derivative, so backward through a result of weights that require grad raises.

        >>> import tinygrad_like as tl
        >>> tl.tensor([0, 1, 1, 3]).bincount().tolist()
        [1, 2, 0, 1]
        >>> tl.tensor([0, 1, 1, 3]).bincount(tl.tensor([0.5, 1.0, 2.0, 4.0]), minlength=5).tolist()
        [0.5, 3.0, 0.0, 4.0, 0.0]
        """
        if self.dtype.is_floating_point or self.dtype is dtypes.bool_:
            raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_torch_name(self.dtype)}' (as in "
                                      f"torch): bincount counts integers; convert with .long() first")
        if not isinstance(minlength, (int, np.integer)) or isinstance(minlength, bool):
            raise TypeError(f"bincount(): argument 'minlength' must be int, not {type(minlength).__name__}")
        minlength = int(minlength)
        if minlength < 0:
            raise RuntimeError("minlength should be >= 0")
        be, dev = self._dev.backend, self._dev
        if self.ndim == 1 and self.numel() == 0:
            return self._wrap(be.full((minlength,), 0, dtypes.int64), dev)
        if self.ndim != 1 or int(self.min()) < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        if weights is None:
            return self._wrap(be.bincount(self._x, None, minlength), dev)
        if not isinstance(weights, TensorBase):
            raise TypeError(f"bincount(): argument 'weights' must be Tensor, not {type(weights).__name__}")
        if weights.ndim != 1 or weights.shape[0] != self.shape[0]:
            raise RuntimeError("weights should be 1-d and have the same length as input")
        if weights._dev is not dev:
            check_same_device(self, weights, "bincount")
        dt = dtypes.float32 if weights.dtype is dtypes.float32 else dtypes.float64
        native = be.bincount(self._x, weights._x if weights.dtype is dt else be.cast(weights._x, dt), minlength)
        if _grad_mode.enabled and weights.requires_grad:
            return NoDerivative.apply(weights, native, "bincount")
        return self._wrap(native, dev)

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002 - torch's names
        """Counts of the elements in ``bins`` equal bins over ``[min, max]`` (both 0, or equal: the data's own
        range), in this tensor's (floating) dtype; elements outside, and NaN, are not counted. Not differentiable
        (the result does not require grad, as torch's).

        >>> import tinygrad_like as tl
        >>> tl.tensor([1.0, 2.0, 1.0, 2.5, 4.0]).histc(bins=4, min=0, max=3).tolist()
        [0.0, 2.0, 1.0, 1.0]
        """
        if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool):
            raise TypeError(f"histc(): argument 'bins' (position 2) must be int, not {type(bins).__name__}")
        if not self.dtype.is_floating_point:
            raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_torch_name(self.dtype)}' (as in "
                                      f"torch): histc takes floating point input; convert with .float() first")
        bins = int(bins)
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        lo, hi = float(min), float(max)
        if lo == hi and self.numel():  # (the data's range: one host read)
            lo, hi = float(self.detach().min()), float(self.detach().max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
        if not lo < hi:
            raise RuntimeError("torch.histc: max must be larger than min")
        return self._wrap(self._dev.backend.histc(self._x, bins, lo, hi), self._dev)

    def histogram(self, bins=100, *, range=None, weight=None, density: bool = False):  # noqa: A002
        """``(hist, bin_edges)``: counts of the elements (or sums of ``weight``, one per element) in the bins
        between consecutive ``bin_edges``, each bin ``[e_i, e_i+1)`` and the last one closed. ``bins`` an int: that
        many equal bins over ``range`` (default: the data's min and max); a 1-D tensor: the edges themselves.
        ``density``: each count divided by the total and by its bin's width (the histogram integrates to 1).
        float32 or float64 only. Not differentiable: with an input or weight that requires grad the outputs do too
        (as torch's), and backward through them raises.

        >>> import tinygrad_like as tl
        >>> r = tl.tensor([1.0, 2.0, 1.0, 4.0]).histogram(3)
        >>> r.hist.tolist(), r.bin_edges.tolist()
        ([2.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0])
        """
        if self.dtype not in (dtypes.float32, dtypes.float64):
            raise NotImplementedError(f"\"histogramdd\" not implemented for '{_torch_name(self.dtype)}' (as in "
                                      f"torch): histogram takes float32 or float64 input")
        be, dev = self._dev.backend, self._dev
        if weight is not None:
            if not isinstance(weight, TensorBase):
                raise TypeError(f"histogram(): argument 'weight' must be Tensor, not {type(weight).__name__}")
            if weight.shape != self.shape:
                raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as "
                                   f"the input tensor excluding its innermost dimension, but got input with shape "
                                   f"{[self.numel(), 1]} and weight with shape {list(weight.shape)}")
            if weight.dtype is not self.dtype:
                raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                                   f"should have the same dtype, but got input({_torch_name(self.dtype).lower()}), "
                                   f"and weight({_torch_name(weight.dtype).lower()})")
            if weight._dev is not dev:
                check_same_device(self, weight, "histogram")
        edges = _histogram_edges(self, bins, range)
        hist = be.histogram(self._x, edges, None if weight is None else weight._x)
        if density:  # as torch: divided by the total, then by each bin's width
            with grad_mode.no_grad():
                h, e = self._wrap(hist, dev), self._wrap(edges, dev)
                hist = (h / h.sum() / (e[1:] - e[:-1]))._x
        if _grad_mode.enabled and (self.requires_grad or (weight is not None and weight.requires_grad)):
            return histogram_result(NoDerivative.apply(self, hist, "histogram", weight),
                                    NoDerivative.apply(self, edges, "histogram", weight))
        return histogram_result(self._wrap(hist, dev), self._wrap(edges, dev))

    # ---- nan-aware reductions, counting --------------------------------------------------------------
    def nansum(self, dim=None, keepdim: bool = False, *, dtype=None, keepdims=None, axis=None) -> Tensor:
        """``sum`` treating NaN as zero (their gradient is 0)."""
        x = Where.apply(self.isnan(), 0.0, self) if self.dtype.is_floating_point else self
        return x.sum(_dim(dim, axis), _keep(keepdim, keepdims), dtype)

    def nanmean(self, dim=None, keepdim: bool = False, *, dtype=None, keepdims=None, axis=None) -> Tensor:
        """The mean of the non-NaN elements (NaN where there is none)."""
        dim = _dim(dim, axis)
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                               f"{_TORCH_NAMES.get(self.dtype.name, self.dtype.name)}")
        x = self if dtype is None else self.to(dtypes.to_dtype(dtype))
        kd = _keep(keepdim, keepdims)
        nan = x.isnan()
        return Where.apply(nan, 0.0, x).sum(dim, kd) / nan.logical_not().sum(dim, kd)

    def count_nonzero(self, dim=None) -> Tensor:
        """How many elements are not zero (NaN counts), over all dims or ``dim`` (an int or a tuple); int64."""
        return (self != 0).sum(dim)


# ---- free functions (tl.<name>) ---------------------------------------------------------------------
bincount, histc, nansum, nanmean, count_nonzero = free_functions(
    StatisticsMixin, "bincount", "histc", "nansum", "nanmean", "count_nonzero")


def histogram(input, bins=100, *, range=None, weight=None, density: bool = False, out=None):  # noqa: A002
    if out is not None:
        raise NotImplementedError("histogram: out= is not supported; assign the result instead")
    if not isinstance(input, TensorBase):
        raise TypeError(f"histogram(): argument 'input' must be Tensor, not {type(input).__name__}")
    return input.histogram(bins, range=range, weight=weight, density=density)


def _stat_mean(input, dim, unbiased, keepdim, correction, keepdims, op: str, std: bool):
    if not isinstance(input, TensorBase):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    x = input
    if isinstance(dim, bool):  # the (input, unbiased) overload
        dim, unbiased = None, dim
    kd = keepdim if keepdims is None else keepdims
    spread = (x.std if std else x.var)(dim, unbiased, kd, correction=correction)
    return spread, x.mean(dim, kd)


def std_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None,
             keepdims=None) -> tuple:
    """``(std, mean)`` over ``dim`` (all dims by default), with ``correction`` (or ``unbiased``) as ``std``."""
    return _stat_mean(input, dim, unbiased, keepdim, correction, keepdims, "std_mean", True)


def var_mean(input, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None,
             keepdims=None) -> tuple:
    """``(var, mean)`` over ``dim`` (all dims by default), with ``correction`` (or ``unbiased``) as ``var``."""
    return _stat_mean(input, dim, unbiased, keepdim, correction, keepdims, "var_mean", False)
