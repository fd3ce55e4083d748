"""Counting and statistics: ``bincount``, ``histc``, ``histogram`` (PyTorch's named tuple ``(hist, bin_edges)``),
the nan-aware reductions ``nansum`` and ``nanmean``, ``count_nonzero``, and ``std_mean``/``var_mean``.

The counts are not differentiable: where torch marks such an output as requiring grad (weights that require grad,
``histogram``'s outputs), it is the output of a :class:`NoDerivative` node whose backward raises, as torch's does.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..layout import normalize_dim
from ..tensor_base import TensorBase
from ._util import check_same_device, free_functions
from .elementwise import Where
from .movement import cat
from .sorting import _dim, _keep

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = ["nansum", "nanmean", "count_nonzero", "std_mean", "var_mean", "bincount", "histc", "histogram", "cov",
           "corrcoef", "quantile", "nanquantile", "nonzero_static", "renorm", "isin", "trapezoid", "trapz",
           "cumulative_trapezoid", "gradient", "histogramdd", "hash_tensor"]


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


    # ---- covariance, correlation, quantiles ---------------------------------------------------------------------
    def cov(self, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
        """The covariance matrix of the variables in the rows (observations in the columns), as ``numpy.cov``;
        ``fweights`` (integer frequencies) and ``aweights`` (observation weights) weight the columns."""
        if self.ndim > 2:
            raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                               f"{self.ndim} dimensions")
        x = self.reshape(1, -1) if self.ndim < 2 else self
        if not x.dtype.is_floating_point:
            x = x.to(dtypes.default_float)
        n = x.shape[1]
        w = None
        for name, wt in (("fweights", fweights), ("aweights", aweights)):
            if wt is None:
                continue
            if not isinstance(wt, TensorBase) or wt.ndim > 1 or wt.numel() != n:
                raise RuntimeError(f"cov(): expected {name} to have one dimension and the same number of elements "
                                   f"as the observations ({n})")
            if name == "fweights" and wt.dtype.category != 1:
                raise RuntimeError("cov(): expected fweights to have integral dtype")
            if name == "aweights" and not wt.dtype.is_floating_point:
                raise RuntimeError("cov(): expected aweights to have floating point dtype")
            if bool((wt < 0).any().item()):
                raise RuntimeError(f"cov(): {name} cannot be negative")
            wt = wt.to(x.dtype)
            w = wt if w is None else w * wt
        if w is None:
            avg = x.mean(1, keepdim=True)
            norm = n - correction
        else:
            w_sum = w.sum()
            avg = (x * w).sum(1, keepdim=True) / w_sum
            norm = w_sum - correction if aweights is None else (
                w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum)
        if not isinstance(norm, TensorBase) and norm <= 0:
            warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number "
                          "of observations.", UserWarning, stacklevel=2)
            norm = 0
        elif isinstance(norm, TensorBase):
            norm = norm.clamp(min=0)
        xc = x - avg
        c = xc @ (xc if w is None else xc * w).t()
        c = c / norm
        return c.reshape(()) if self.ndim < 2 else c

    def corrcoef(self) -> Tensor:
        """Pearson's correlation coefficients of the rows (``numpy.corrcoef``), clipped to [-1, 1]."""
        c = self.cov()
        if c.ndim == 0:
            return c / c
        d = c.diagonal()
        std = d.sqrt()
        c = c / std.reshape(-1, 1) / std.reshape(1, -1)
        return c.clamp(-1, 1)

    def quantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
        """The ``q``-th quantiles (a number or a 1-d tensor in [0, 1]) along ``dim`` (of all elements when None);
        a NaN in a lane makes its quantiles NaN. ``interpolation``: linear, lower, higher, midpoint or nearest."""
        return _quantile(self, q, dim, keepdim, interpolation, False, "quantile")

    def nanquantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
        """``quantile`` ignoring NaNs (NaN only where a lane holds nothing else)."""
        return _quantile(self, q, dim, keepdim, interpolation, True, "nanquantile")

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Tensor:
        """``nonzero()``'s rows, cut or padded with ``fill_value`` to exactly ``size`` rows."""
        if size < 0:
            raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, got {size}")
        nz = self.nonzero()
        k = nz.shape[0]
        if k >= size:
            return nz[:size]
        pad = nz.new_full((size - k, self.ndim), fill_value)
        return cat([nz, pad], 0)

    def renorm(self, p, dim: int, maxnorm) -> Tensor:
        """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``."""
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"renorm: expected a floating point tensor, got {self.dtype.name}")
        if p <= 0:
            raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
        if maxnorm < 0:
            raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
        d = normalize_dim(dim, self.ndim)
        others = tuple(i for i in range(self.ndim) if i != d)
        a = self.abs()
        norms = (a.amax(others, keepdim=True) if p == math.inf else
                 a.pow(p).sum(others, keepdim=True).pow(1.0 / p)) if others else a
        factor = Where.apply(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
        return self * factor

    def hash_tensor(self, dim=None, *, keepdim: bool = False, mode: int = 0) -> Tensor:
        """torch's hash of the values (mode 0: the XOR of each element's 64-bit pattern: an int64 element as it is,
        a float as its float64 bits) over ``dim`` (all dims when None). torch returns uint64, which tinygrad_like
        has no dtype for: the result is int64 with the same 64 bits."""
        if mode != 0:
            raise RuntimeError(f"hash_tensor: only mode=0 (xor_sum) is supported, got mode={mode}")
        a = np.asarray(self._host())
        bits = (a.astype(np.float64) if self.dtype.is_floating_point else a.astype(np.int64)).view(np.int64)
        dims = tuple(range(a.ndim)) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(normalize_dim(d, max(a.ndim, 1)) for d in dims) if a.ndim else ()
        out = np.bitwise_xor.reduce(bits, axis=dims, keepdims=keepdim) if dims else bits
        from ..creation import tensor  # (creation sits above the ops)
        return tensor(np.asarray(out, dtype=np.int64), device=self.device)

    def stft(self, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window=None,
             center: bool = True, pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
             return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
        """The short-time Fourier transform (see :func:`tinygrad_like.ops.spectral.stft`)."""
        from .spectral import stft  # (spectral composes this family's siblings; it imports statistics' module)
        return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                    return_complex, align_to_window)

    def istft(self, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window=None,
              center: bool = True, normalized: bool = False, onesided: bool | None = None, length: int | None = None,
              return_complex: bool = False) -> Tensor:
        from .spectral import istft  # (as stft)
        return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                     return_complex)

    def renorm_(self, p, dim: int, maxnorm) -> Tensor:
        return self._inplace("renorm_", lambda x, _: x.renorm(p, dim, maxnorm), None)

# ---- free functions (tl.<name>) ---------------------------------------------------------------------
bincount, histc, nansum, nanmean, count_nonzero = free_functions(
    StatisticsMixin, "bincount", "histc", "nansum", "nanmean", "count_nonzero")
cov, corrcoef, quantile, nanquantile, nonzero_static, renorm, hash_tensor = free_functions(
    StatisticsMixin, "cov", "corrcoef", "quantile", "nanquantile", "nonzero_static", "renorm", "hash_tensor")


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


# ---- quantiles ----------------------------------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(x, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool, op: str):
    from ..creation import tensor  # (creation sits above the ops)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got "
                           f"{interpolation}")
    scalar_q = not isinstance(q, TensorBase) or q.ndim == 0
    if isinstance(q, TensorBase):
        if q.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor")
        if q.dtype is not x.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor")
        qs = np.atleast_1d(np.asarray(q._host(), dtype=np.float64))
    else:
        qs = np.atleast_1d(np.asarray(float(q), dtype=np.float64))
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if x.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty")
    nd = x.ndim
    if dim is None:
        lanes, d = x.reshape(-1), 0
    else:
        d = normalize_dim(dim, max(nd, 1))
        lanes = (x.reshape(1) if nd == 0 else x).movedim(d, -1)
    vals = lanes.sort(-1).values  # NaN sorts last
    n = vals.shape[-1]
    nan_count = np.isnan(np.asarray(lanes._host(), dtype=np.float64)).sum(-1)
    m = (n - nan_count) if ignore_nan else np.full(nan_count.shape, n)
    rank = qs.reshape((-1,) + (1,) * nan_count.ndim) * np.maximum(m - 1, 0)
    lo = np.floor(rank).astype(np.int64)
    hi = np.minimum(np.ceil(rank).astype(np.int64), np.maximum(m - 1, 0))
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "nearest":
        lo = hi = np.round(rank).astype(np.int64)
    shape = (len(qs),) + tuple(vals.shape)
    big = vals.unsqueeze(0).expand(shape)
    v_lo = big.gather(-1, tensor(lo[..., None], device=x.device).expand(shape[:-1] + (1,))).squeeze(-1)
    v_hi = big.gather(-1, tensor(hi[..., None], device=x.device).expand(shape[:-1] + (1,))).squeeze(-1)
    if interpolation == "linear":
        w = tensor(rank - lo, dtype=x.dtype, device=x.device)
        out = v_lo + w * (v_hi - v_lo)
    elif interpolation == "midpoint":
        out = v_lo + 0.5 * (v_hi - v_lo)
    else:
        out = v_lo
    bad = (nan_count == n) if ignore_nan else (nan_count > 0)
    if bad.any():
        out = Where.apply(tensor(np.broadcast_to(bad, out.shape).copy(), device=x.device), math.nan, out)
    if keepdim:
        out = out.reshape((len(qs),) + (1,) * nd) if dim is None else out.unsqueeze(d + 1) if nd else out
    return out.squeeze(0) if scalar_q else out


# ---- membership, integration, differences -------------------------------------------------------------------------
def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number); a bool tensor."""
    from ..creation import tensor  # (creation sits above the ops)
    if not isinstance(elements, TensorBase) and not isinstance(test_elements, TensorBase):
        raise TypeError("isin(): at least one of 'elements' and 'test_elements' must be a Tensor")
    ref = elements if isinstance(elements, TensorBase) else test_elements
    e = np.asarray(elements._host() if isinstance(elements, TensorBase) else elements)
    t = np.asarray(test_elements._host() if isinstance(test_elements, TensorBase) else test_elements)
    return tensor(np.isin(e, t, invert=invert), device=ref.device)


def _trapezoid_parts(y, x, dx, dim: int, op: str):
    if not isinstance(y, TensorBase):
        raise TypeError(f"{op}(): argument 'y' must be Tensor, not {type(y).__name__}")
    d = normalize_dim(dim, y.ndim)
    n = y.shape[d]
    yl, yr = y.narrow(d, 0, max(n - 1, 0)), y.narrow(d, min(1, n), max(n - 1, 0))
    if x is not None:
        if not isinstance(x, TensorBase):
            raise TypeError(f"{op}(): argument 'x' must be Tensor, not {type(x).__name__}")
        if x.ndim == 1:
            if x.shape[0] != n:
                raise RuntimeError(f"{op}: There must be one `x` value for each sample point")
            step = x[1:] - x[:-1]
            step = step.reshape((-1,) + (1,) * (y.ndim - d - 1))
        else:
            xd = normalize_dim(dim, x.ndim)
            step = x.narrow(xd, 1, max(x.shape[xd] - 1, 0)) - x.narrow(xd, 0, max(x.shape[xd] - 1, 0))
        return step, yl, yr, d
    return (1 if dx is None else dx), yl, yr, d


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: samples at ``x`` (a tensor), or ``dx`` apart (default 1)."""
    step, yl, yr, d = _trapezoid_parts(y, x, dx, dim, "trapezoid")
    if y.shape[d] == 0:
        return y.sum(d) * 0
    return ((yl + yr) * step).sum(d) / 2


def trapz(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one element fewer than ``y`` there)."""
    step, yl, yr, d = _trapezoid_parts(y, x, dx, dim, "cumulative_trapezoid")
    return (((yl + yr) * step) / 2).cumsum(d)


def gradient(input, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """The derivative estimated by central differences inside and one-sided differences (first or second order) at
    the edges, along each dim of ``dim`` (all dims when None); ``spacing``: a number, numbers per dim, or the
    coordinates (1-d tensors) per dim. As ``numpy.gradient``."""
    if not isinstance(input, TensorBase):
        raise TypeError(f"gradient(): argument 'input' must be Tensor, not {type(input).__name__}")
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2, got {edge_order}")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(d, input.ndim) for d in dims]
    if isinstance(spacing, (int, float)) or (isinstance(spacing, TensorBase) and spacing.ndim == 0):
        spacings = [spacing] * len(dims)
    else:
        spacings = list(spacing)
        if len(spacings) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or a list of length "
                               f"equal to 'self.dim() = {input.ndim}', since dim argument was not given, but got "
                               f"a list of length {len(spacings)}")
    f = input if input.dtype.is_floating_point else input.to(dtypes.default_float)
    out = []
    for d, h in zip(dims, spacings):
        n = f.shape[d]
        if n < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1, got "
                               f"size {n} along dim {d}")

        def sl(a, b, _d=d):
            return f.narrow(_d, a, b - a)

        if isinstance(h, TensorBase) and h.ndim == 1:
            c = np.asarray(h._host(), dtype=np.float64)
            dx = np.diff(c)
            dx1, dx2 = dx[:-1], dx[1:]
            shape = (-1,) + (1,) * (f.ndim - d - 1)

            def coef(v, _shape=shape):
                from ..creation import tensor  # (creation sits above the ops)
                return tensor(v, dtype=f.dtype, device=f.device).reshape(_shape)

            a, b, cc = -dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2), dx1 / (dx2 * (dx1 + dx2))
            mid = coef(a) * sl(0, n - 2) + coef(b) * sl(1, n - 1) + coef(cc) * sl(2, n)
            if edge_order == 1:
                first = (sl(1, 2) - sl(0, 1)) / float(dx[0])
                last = (sl(n - 1, n) - sl(n - 2, n - 1)) / float(dx[-1])
            else:
                d1, d2 = dx[0], dx[1]
                first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * sl(0, 1) + (d1 + d2) / (d1 * d2) * sl(1, 2)
                         - d1 / (d2 * (d1 + d2)) * sl(2, 3))
                d1, d2 = dx[-2], dx[-1]
                last = (d2 / (d1 * (d1 + d2)) * sl(n - 3, n - 2) - (d2 + d1) / (d1 * d2) * sl(n - 2, n - 1)
                        + (2 * d2 + d1) / (d2 * (d1 + d2)) * sl(n - 1, n))
        else:
            h = float(h.item()) if isinstance(h, TensorBase) else float(h)
            mid = (sl(2, n) - sl(0, n - 2)) / (2 * h)
            if edge_order == 1:
                first = (sl(1, 2) - sl(0, 1)) / h
                last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
            else:
                first = (-1.5 * sl(0, 1) + 2 * sl(1, 2) - 0.5 * sl(2, 3)) / h
                last = (0.5 * sl(n - 3, n - 2) - 2 * sl(n - 2, n - 1) + 1.5 * sl(n - 1, n)) / h
        out.append(cat([first, mid, last], d))
    return tuple(out)


histogramdd_result = namedtuple("histogramdd", ["hist", "bin_edges"])


def histogramdd(input, bins, *, range=None, weight=None, density: bool = False, out=None):  # noqa: A002
    """The histogram of points (the last dim holds their coordinates): ``(hist, bin_edges)``, as
    ``numpy.histogramdd``; no gradient."""
    from ..creation import tensor  # (creation sits above the ops)
    if out is not None:
        raise NotImplementedError("histogramdd: out= is not supported; assign the result instead")
    if not isinstance(input, TensorBase):
        raise TypeError(f"histogramdd(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                           f"input {input.dtype.name}: expected a floating point input")
    pts = np.asarray(input._host()).reshape(-1, input.shape[-1])
    k = pts.shape[1]
    if isinstance(bins, int):
        b = bins
    elif isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], TensorBase):
        b = [np.asarray(e._host()) for e in bins]
    else:
        b = list(bins)
    rng = None if range is None else [(range[2 * i], range[2 * i + 1]) for i in builtins.range(k)]
    w = None if weight is None else np.asarray(weight._host()).reshape(-1)
    hist, edges = np.histogramdd(pts, bins=b, range=rng, weights=w, density=density)
    dt = input.dtype
    return histogramdd_result(tensor(hist, dtype=dt, device=input.device),
                              [tensor(e, dtype=dt, device=input.device) for e in edges])

