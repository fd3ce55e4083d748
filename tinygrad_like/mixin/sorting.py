"""Tensor methods: sampling, sorting, order statistics, products, scans, nan-aware reductions.

The ops that return values and indices return PyTorch's named tuples (``.values``, ``.indices``), each named like
``torch.return_types``' (``topk``, ``sort``, ``median``...). Random draws come from the seedable generator
(``tl.manual_seed``, or the ``generator=`` given) on the host, as every random op here does, and the result moves to
the tensor's device.
"""

from __future__ import annotations

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

_grad = grad_mode.state  # this thread's grad mode (per thread, as in torch)


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

_TORCH_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool", "int8": "Char", "uint8": "Byte", "int16": "Short"}


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
        if _grad.enabled and self.requires_grad:
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
        if _grad.enabled and self.requires_grad:
            self._rebase(I.IndexPut.apply(self._graph_input(), idx, fill_value), "fill_diagonal_")
            return self
        self._dev.backend.setitem(self._x, I.native_index(idx), fill_value)
        self._wrote("fill_diagonal_")
        return self


# ---- helpers ---------------------------------------------------------------------------------------
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
        return 2 ** (np.finfo(dt.np).nmant + 1)
    if dt is dtypes.bool_:
        return 1
    return int(np.iinfo(dt.np).max)
