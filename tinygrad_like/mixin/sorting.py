"""Tensor methods: sampling, sorting, order statistics, products, scans, nan-aware reductions.

The ops that return values and indices return PyTorch's named tuples (``.values``, ``.indices``), each named like
``torch.return_types``' (``topk``, ``sort``, ``median``...). Random draws come from the seedable generator
(``tl.manual_seed``, or the ``generator=`` given) on the host, as every random op here does, and the result moves to
the tensor's device.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..device import CPU
from ..layout import normalize_dim
from ..ops import elementwise as E
from ..ops import sorting as O
from ..tensor_base import TensorBase

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


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
cummax_result = _return_type("cummax")
cummin_result = _return_type("cummin")

#: the named tuples by op name (``return_types.topk`` ... as ``torch.return_types``)
RETURN_TYPES = {rt.__name__: rt for rt in (topk_result, sort_result, kthvalue_result, median_result,
                                           nanmedian_result, mode_result, cummax_result, cummin_result)}

#: ``histogram``'s result, as ``torch.return_types.histogram``: ``(hist, bin_edges)``
histogram_result = namedtuple("histogram", ["hist", "bin_edges"])
histogram_result.__doc__ = "``histogram``'s result, as ``torch.return_types.histogram``: ``(hist, bin_edges)``."
RETURN_TYPES["histogram"] = histogram_result

_TORCH_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool", "int8": "Char", "uint8": "Byte", "int16": "Short"}
_TORCH_FLOAT_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}


def _torch_name(dt) -> str:
    """A dtype as torch's messages name it ('Long', 'Float', ...)."""
    return _TORCH_NAMES.get(dt.name) or _TORCH_FLOAT_NAMES.get(dt.name, dt.name)


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


class SortingMixin:
    """Tensor methods: sampling, sorting, order statistics, products, scans, nan-aware reductions."""

    __slots__ = ()

    # ---- sorting ---------------------------------------------------------------------------------------
    def sort(self, dim: int = -1, descending: bool = False, stable: bool | None = False):
        """``(values, indices)`` along ``dim``. The sort is always stable (equal elements keep their order, which
        ``stable=False`` allows); NaN sorts above every number, as in PyTorch."""
        x, d = _lane(self, dim, "sort")
        box = O.Picked()
        v = O.Sort.apply(x, d, bool(descending), True, box)
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
        box = O.Picked()
        v = O.Topk.apply(x, k, d, bool(largest), bool(sorted), box)
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
        box = O.Picked()
        v = O.Kthvalue.apply(x, k, d, bool(_keep(keepdim, keepdims)), box)
        return kthvalue_result(*_scalar0d(v, box.indices, self.ndim == 0))

    def _median(self, dim, keepdim, ignore_nan: bool, op: str):
        self._no_bool(op)
        if dim is None:
            if self.numel() == 0:
                if not self.dtype.is_floating_point:
                    raise RuntimeError(f"{op}(): an empty {self.dtype.name} tensor has no median")
                return self._wrap(self._dev.backend.full((), float("nan"), self.dtype), self._dev)
            return O.MedianAll.apply(self, ignore_nan)
        x, d = _lane(self, dim, op)
        _nonempty(x, d, op)
        box = O.Picked()
        v = O.Median.apply(x, d, bool(keepdim), ignore_nan, box)
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
        box = O.Picked()
        v = O.Mode.apply(x, d, bool(_keep(keepdim, keepdims)), box)
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
            from ..ops._util import check_same_device
            check_same_device(self, weights, "bincount")
        dt = dtypes.float32 if weights.dtype is dtypes.float32 else dtypes.float64
        native = be.bincount(self._x, weights._x if weights.dtype is dt else be.cast(weights._x, dt), minlength)
        if _grad_mode.enabled and weights.requires_grad:
            return O.NoDerivative.apply(weights, native, "bincount")
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
                from ..ops._util import check_same_device
                check_same_device(self, weight, "histogram")
        edges = _histogram_edges(self, bins, range)
        hist = be.histogram(self._x, edges, None if weight is None else weight._x)
        if density:  # as torch: divided by the total, then by each bin's width
            from ..autograd.grad_mode import no_grad
            with no_grad():
                h, e = self._wrap(hist, dev), self._wrap(edges, dev)
                hist = (h / h.sum() / (e[1:] - e[:-1]))._x
        if _grad_mode.enabled and (self.requires_grad or (weight is not None and weight.requires_grad)):
            return histogram_result(O.NoDerivative.apply(self, hist, "histogram", weight),
                                    O.NoDerivative.apply(self, edges, "histogram", weight))
        return histogram_result(self._wrap(hist, dev), self._wrap(edges, dev))

    # ---- products and scans -----------------------------------------------------------------------------
    def prod(self, dim: int | None = None, keepdim: bool = False, *, dtype=None, keepdims=None, axis=None) -> Tensor:
        """The product of all elements, or along one ``dim``; integers and bools give int64 (as ``sum``)."""
        dim = _dim(dim, axis)
        if dim is not None:
            if not isinstance(dim, int) or isinstance(dim, bool):
                raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__} (torch's prod "
                                f"reduces one dim or all of them)")
            dim = normalize_dim(dim, self.ndim)
        return O.Prod.apply(self, dim, bool(_keep(keepdim, keepdims)),
                            None if dtype is None else dtypes.to_dtype(dtype))

    def cumprod(self, dim: int, *, dtype=None) -> Tensor:
        """Running products along ``dim``; integers and bools give int64."""
        return O.Cumprod.apply(self, normalize_dim(dim, self.ndim), None if dtype is None else dtypes.to_dtype(dtype))

    def _cumext(self, dim, is_max: bool):
        x, d = _lane(self, dim, "cummax" if is_max else "cummin")
        box = O.Picked()
        v = (O.Cummax if is_max else O.Cummin).apply(x, d, box)
        return (cummax_result if is_max else cummin_result)(*_scalar0d(v, box.indices, self.ndim == 0))

    def cummax(self, dim: int):
        """``(values, indices)``: the running maximum along ``dim`` and where it was last reached."""
        return self._cumext(dim, True)

    def cummin(self, dim: int):
        """``(values, indices)``: the running minimum along ``dim`` and where it was last reached."""
        return self._cumext(dim, False)

    def logcumsumexp(self, dim: int) -> Tensor:
        """``log(cumsum(exp(x), dim))`` computed without overflow."""
        return O.LogCumSumExp.apply(self, normalize_dim(dim, self.ndim))

    # ---- nan-aware reductions, counting --------------------------------------------------------------
    def nansum(self, dim=None, keepdim: bool = False, *, dtype=None, keepdims=None, axis=None) -> Tensor:
        """``sum`` treating NaN as zero (their gradient is 0)."""
        x = E.Where.apply(self.isnan(), 0.0, self) if self.dtype.is_floating_point else self
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
        return E.Where.apply(nan, 0.0, x).sum(dim, kd) / nan.logical_not().sum(dim, kd)

    def count_nonzero(self, dim=None) -> Tensor:
        """How many elements are not zero (NaN counts), over all dims or ``dim`` (an int or a tuple); int64."""
        return (self != 0).sum(dim)

    # ---- sampling ------------------------------------------------------------------------------------
    def _on_device(self, host) -> Tensor:
        """A host array drawn from the generator, as a tensor on this tensor's device."""
        dev = self._dev
        return self._wrap(host if dev is CPU else dev.backend.from_numpy(host), dev)

    def _uniform01(self, generator) -> Tensor:
        from ..random import default_generator
        return self._on_device(CPU.backend.uniform(generator or default_generator, self.shape, 0.0, 1.0,
                                                   dtypes.float64))

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
        """``num_samples`` category indices drawn per row of this 1-D or 2-D tensor of non-negative weights (they
        need not sum to 1); int64, shape ``(num_samples,)`` or ``(rows, num_samples)``. Without ``replacement``
        each category is drawn at most once (categories of weight 0 only once the others are used up)."""
        if self.ndim not in (1, 2):
            raise RuntimeError(f"prob_dist must be 1 or 2 dim (multinomial got a {self.ndim}-D tensor of shape "
                               f"{self.shape})")
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                               f"{_TORCH_NAMES.get(self.dtype.name, self.dtype.name)}")
        if not isinstance(num_samples, (int, np.integer)) or isinstance(num_samples, bool):
            raise TypeError(f"multinomial(): argument 'num_samples' must be int, not {type(num_samples).__name__}")
        n, k = int(num_samples), self.shape[-1]
        if n <= 0:
            raise RuntimeError(f"cannot sample n_sample <= 0 samples (num_samples={n})")
        if not replacement and n > k:
            raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                               f"({n} > {k})")
        p = np.asarray(self._host(), dtype=np.float64).reshape(-1, k)
        if p.shape[0]:
            if not np.isfinite(p).all() or (p < 0).any():
                raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
            if (p.sum(axis=1) <= 0).any():
                raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        from ..random import default_generator
        host = CPU.backend.multinomial(generator or default_generator, p if self.ndim == 2 else p.reshape(-1), n,
                                       bool(replacement))
        return self._on_device(host)

    def bernoulli(self, p: float | None = None, *, generator=None) -> Tensor:
        """0s and 1s (in this tensor's dtype) drawn with probability ``p``, or, without ``p``, with the
        probabilities this tensor holds (each in [0, 1])."""
        if p is None:
            if not self.dtype.is_floating_point:
                raise NotImplementedError(f"bernoulli(): expected a floating point tensor of probabilities, got "
                                          f"{self.dtype.name}")
            _check_probabilities(self, "bernoulli")
            with grad_mode.no_grad():
                return (self._uniform01(generator) < self.detach()).to(self.dtype)
        p = _probability(p, "bernoulli")
        with grad_mode.no_grad():
            return (self._uniform01(generator) < p).to(self.dtype)

    def _fill_from(self, op: str, values: Tensor) -> Tensor:
        """Write ``values`` (this tensor's shape and dtype, same device) into this tensor: an in-place op named
        ``op`` (checked, versioned; a history that requires grad gets a zero gradient for what was overwritten)."""
        self._check_inplace(op)
        if _grad_mode.enabled and self.requires_grad:
            self._rebase(self._overwritten(self._graph_input(), values), op)
            return self
        self._dev.backend.assign(self._x, values._x)
        self._wrote(op)
        return self

    def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
        """Fill in place with 0s and 1s drawn with probability ``p`` (a number, or a tensor broadcast to this one's
        shape)."""
        if isinstance(p, TensorBase):
            if not p.dtype.is_floating_point:
                p = p.to(dtypes.default_float)
            _check_probabilities(p, "bernoulli_")
            if p._dev is not self._dev:
                p = p.to(self._dev)
            try:
                p = p.detach().expand(self.shape)
            except RuntimeError as e:
                raise RuntimeError(f"bernoulli_: the probabilities of shape {p.shape} cannot be broadcast to the "
                                   f"tensor's shape {self.shape}: {e}") from None
        else:
            p = _probability(p, "bernoulli_")
        with grad_mode.no_grad():
            values = (self._uniform01(generator) < p).to(self.dtype)
        return self._fill_from("bernoulli_", values)

    def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place from the exponential distribution of rate ``lambd`` (mean ``1/lambd``)."""
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"Exponential distribution is a continuous probability distribution. dtype must be a "
                               f"floating point but you specified {_TORCH_NAMES.get(self.dtype.name, self.dtype.name)}")
        if not lambd > 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        from ..random import default_generator
        host = CPU.backend.exponential(generator or default_generator, self.shape, float(lambd), self.dtype)
        return self._fill_from("exponential_", self._on_device(host))

    def random_(self, *args, generator=None, **kwargs) -> Tensor:
        """Fill in place with integers drawn uniformly from ``[from, to - 1]``: ``random_(from, to)``,
        ``random_(to)`` (from 0), or ``random_()`` (from 0 to the largest integer the dtype holds exactly:
        ``2**24`` for float32, ``2**53`` for float64, the maximum for integer dtypes, 1 for bool)."""
        unknown = set(kwargs) - {"from", "to"}
        if unknown or len(args) > 2:
            raise TypeError(f"random_() takes (from, to), (to) or no arguments, got {len(args)} positional and "
                            f"keywords {sorted(kwargs)}")
        if len(args) == 2:
            lo, hi = args
        elif len(args) == 1:
            lo, hi = (args[0], kwargs["to"]) if "to" in kwargs else (kwargs.get("from", 0), args[0])
        else:
            lo, hi = kwargs.get("from", 0), kwargs.get("to")
        top = _random_top(self.dtype)
        if hi is None:
            hi = top + 1
        lo, hi = int(lo), int(hi)
        if lo >= hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
        if not self.dtype.is_floating_point:
            info = (0, 1) if self.dtype is dtypes.bool_ else (int(np.iinfo(self.dtype.np).min), top)
            if lo < info[0] or hi - 1 > info[1]:
                raise RuntimeError(f"random_: the range [from, to - 1] = [{lo}, {hi - 1}] is out of bounds for "
                                   f"{self.dtype.name} (which holds [{info[0]}, {info[1]}])")
        from ..random import default_generator
        host = CPU.backend.randint(generator or default_generator, self.shape, lo, hi, self.dtype)
        return self._fill_from("random_", self._on_device(host))

    def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
        """Fill the main diagonal (elements ``[i, i, ...]``) in place. With ``wrap``, a tall matrix's diagonal
        starts again ``N + 1`` rows down after every ``N`` columns (NumPy's and PyTorch's ``wrap``)."""
        if self.ndim < 2:
            raise RuntimeError(f"dimensions must larger than 1 (fill_diagonal_ needs a tensor of at least 2 dims, "
                               f"got shape {self.shape})")
        if self.ndim > 2 and len(set(self.shape)) != 1:
            raise RuntimeError(f"all dimensions of input must be of equal length (fill_diagonal_ of a tensor with "
                               f"more than 2 dims; got shape {self.shape})")
        if isinstance(fill_value, TensorBase):
            if fill_value.numel() != 1:
                raise RuntimeError(f"fill_diagonal_: fill_value must be a number or a one-element tensor, got "
                                   f"shape {fill_value.shape}")
            fill_value = fill_value.item()
        n, m = self.shape[0], self.shape[1]
        if self.ndim == 2 and wrap and n > m + 1:
            flat = np.arange(0, n * m, m + 1)
            where = [flat // m, flat % m]
        else:
            diag = np.arange(min(self.shape))
            where = [diag] * self.ndim
        from ..creation import tensor
        from ..ops import indexing as I
        idx = tuple(tensor(w.astype(np.int64), device=self._dev) for w in where)
        self._check_inplace("fill_diagonal_")
        if _grad_mode.enabled and self.requires_grad:
            self._rebase(I.IndexPut.apply(self._graph_input(), idx, fill_value), "fill_diagonal_")
            return self
        self._dev.backend.setitem(self._x, I.native_index(idx), fill_value)
        self._wrote("fill_diagonal_")
        return self


# ---- helpers ---------------------------------------------------------------------------------------
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
            from ..ops._util import check_same_device
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


def _probability(p, op: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}(): argument 'p' must be a number in [0, 1] or a Tensor, not {type(p).__name__}")
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"{op} expects p to be in [0, 1], but got p={p}")
    return p


def _check_probabilities(p, op: str) -> None:
    """Every probability in [0, 1] (NaN is not), as PyTorch checks; one host read."""
    if p.numel() and not bool(((p >= 0) & (p <= 1)).all()):
        raise RuntimeError(f"{op}: expected every probability in [0, 1] (p_in >= 0 && p_in <= 1), but some are "
                           f"not (min {float(p.detach().min())}, max {float(p.detach().max())}, or NaN)")


def _random_top(dt) -> int:
    """The largest value ``random_()`` draws for a dtype: the largest integer it holds exactly (floats) or its
    maximum (integers)."""
    if dt.is_floating_point:
        return 2 ** (dtypes.finfo(dt).nmant + 1)
    if dt is dtypes.bool_:
        return 1
    return int(np.iinfo(dt.np).max)
