"""Tensor methods for reductions: sum, mean, var/std, max/min, arg-max/min, softmax, cumsum."""

from __future__ import annotations

from collections import namedtuple

from .. import dtypes
from ..layout import normalize_dim, normalize_dims
from ..ops import reduce as R
from ..tensor_base import TensorBase

ReturnTypes = namedtuple("ReturnTypes", ["values", "indices"])
# max(dim)/min(dim)'s results, named as torch.return_types.max/min
_MAX_RESULT, _MIN_RESULT = namedtuple("max", ["values", "indices"]), namedtuple("min", ["values", "indices"])
_AMINMAX_RESULT = namedtuple("aminmax", ["min", "max"])


class ReduceMixin:
    """Tensor methods for reductions: sum, mean, var/std, max/min, arg-max/min, softmax, cumsum."""

    __slots__ = ()

    # ---- reductions ----------------------------------------------------------------------------
    # (``keepdims=`` and ``axis=``: the NumPy spellings PyTorch also accepts for ``keepdim=`` and ``dim=``)
    def sum(self, dim=None, keepdim: bool = False, dtype=None, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return R.Sum.apply(self, dim, keepdim, None if dtype is None else dtypes.to_dtype(dtype))

    def mean(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return R.Mean.apply(self, dim, keepdim)

    def var(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None, keepdims=None,
            axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return R.Var.apply(self, dim, _correction(unbiased, correction), keepdim, "var")

    def std(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None, keepdims=None,
            axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return R.StdFromVar.apply(R.Var.apply(self, dim, _correction(unbiased, correction), keepdim, "std"))

    def _maxmin(self, dim, keepdim, is_max):
        if isinstance(dim, TensorBase):
            return self.maximum(dim) if is_max else self.minimum(dim)
        if dim is None:
            return R.MaxMinAll.apply(self, None, keepdim, is_max)
        d = normalize_dim(dim, max(self.ndim, 1)) if self.ndim else normalize_dim(dim, 0)
        if self.ndim == 0:
            return (_MAX_RESULT if is_max else _MIN_RESULT)(self.clone(), self._full_like(0, dtypes.int64))
        if self.shape[d] == 0:
            raise IndexError(f"{'max' if is_max else 'min'}(): Expected reduction dim {d} to have non-zero size "
                             f"(shape {self.shape})")
        be = self._dev.backend
        idx = self._wrap((be.argmax if is_max else be.argmin)(self._x, d, keepdim), self._dev)
        return (_MAX_RESULT if is_max else _MIN_RESULT)(R.MaxMinDim.apply(self, d, keepdim, is_max, idx), idx)

    def max(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return self._maxmin(dim, keepdim, True)

    def min(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return self._maxmin(dim, keepdim, False)

    def amax(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return R.MaxMin.apply(self, dim, keepdim, True)

    def amin(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return R.MaxMin.apply(self, dim, keepdim, False)

    def _arg(self, dim, keepdim, is_max):
        if self.numel() == 0 and (dim is None or self.shape[normalize_dim(dim, self.ndim)] == 0):
            raise RuntimeError(f"{'argmax' if is_max else 'argmin'}(): Expected reduction dim to be specified "
                               f"for input.numel() == 0 (shape {self.shape})")
        be = self._dev.backend
        fn = be.argmax if is_max else be.argmin
        if dim is None:
            r = fn(self._x.reshape(-1) if self._dev.is_host else self.reshape(-1)._x, 0, False)
            out = self._wrap(r, self._dev)
            return out.reshape((1,) * self.ndim) if keepdim else out
        d = normalize_dim(dim, max(self.ndim, 1))
        if self.ndim == 0:
            return self._full_like(0, dtypes.int64)
        return self._wrap(fn(self._x, d, keepdim), self._dev)

    def argmax(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return self._arg(dim, keepdim, True)

    def argmin(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return self._arg(dim, keepdim, False)

    def logsumexp(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        if dim is None:
            raise TypeError("logsumexp() missing required argument 'dim' (an int or a tuple of ints)")
        return R.LogSumExp.apply(self, dim, keepdim)

    def cumsum(self, dim: int, *, dtype=None):
        """Running sums along ``dim``; with ``dtype`` the input is cast first, as torch's."""
        return R.Cumsum.apply(self if dtype is None else self.to(dtype), dim)

    def aminmax(self, *, dim=None, keepdim: bool = False):
        """``(min, max)`` over ``dim`` (every element when None), as ``torch.aminmax``; each gradient goes to the
        extreme elements (split evenly among ties), as ``amin``'s and ``amax``'s."""
        if self.numel() == 0:
            if dim is None:
                raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                                   "no identity.")
            d = normalize_dim(dim, max(self.ndim, 1))
            if self.ndim and self.shape[d] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        return _AMINMAX_RESULT(self.amin(dim, keepdim), self.amax(dim, keepdim))

    def any(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return _uint8_stays(self, self._dev.backend.any(self._x, _axes(dim, self.ndim), keepdim))

    def all(self, dim=None, keepdim: bool = False, *, keepdims=None, axis=None):
        if keepdims is not None or axis is not None:
            dim, keepdim = _aliases(dim, keepdim, axis, keepdims)
        return _uint8_stays(self, self._dev.backend.all(self._x, _axes(dim, self.ndim), keepdim))


def _uint8_stays(x, r):
    """``any``/``all``'s bool result, as uint8 for a uint8 input (torch's rule for that dtype alone)."""
    if x.dtype is dtypes.uint8:
        r = x._dev.backend.cast(r, dtypes.uint8)
    return x._wrap(r, x._dev)


def _aliases(dim, keepdim, axis, keepdims):
    """``dim``/``keepdim`` from their NumPy spellings ``axis``/``keepdims`` (PyTorch accepts both; not both of
    one pair)."""
    if axis is not None:
        if dim is not None:
            raise TypeError("got both 'dim' and its alias 'axis'; give one")
        dim = axis
    if keepdims is not None:
        if keepdim:
            raise TypeError("got both 'keepdim' and its alias 'keepdims'; give one")
        keepdim = keepdims
    return dim, keepdim


def _correction(unbiased, correction) -> float:
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _axes(dim, ndim):
    if dim is None:
        return None
    if dim == ():  # torch's any/all(dim=()) reduce nothing (unlike sum/amax/...)
        return ()
    return normalize_dims(dim, ndim)
