"""Tensor methods for reductions: sum, mean, var/std, max/min, arg-max/min, softmax, cumsum."""

from __future__ import annotations

from collections import namedtuple

from .. import dtypes
from ..layout import normalize_dim, normalize_dims
from ..ops import reduce as R
from ..tensor_base import TensorBase

ReturnTypes = namedtuple("ReturnTypes", ["values", "indices"])


class ReduceMixin:
    """Tensor methods for reductions: sum, mean, var/std, max/min, arg-max/min, softmax, cumsum."""

    __slots__ = ()

    # ---- reductions ----------------------------------------------------------------------------
    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        return R.Sum.apply(self, dim, keepdim, None if dtype is None else dtypes.to_dtype(dtype))

    def mean(self, dim=None, keepdim: bool = False):
        return R.Mean.apply(self, dim, keepdim)

    def var(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None):
        return R.Var.apply(self, dim, _correction(unbiased, correction), keepdim)

    def std(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None):
        return R.StdFromVar.apply(R.Var.apply(self, dim, _correction(unbiased, correction), keepdim))

    def _maxmin(self, dim, keepdim, is_max):
        if isinstance(dim, TensorBase):
            return self.maximum(dim) if is_max else self.minimum(dim)
        if dim is None:
            return R.MaxMinAll.apply(self, None, keepdim, is_max)
        d = normalize_dim(dim, max(self.ndim, 1)) if self.ndim else normalize_dim(dim, 0)
        if self.ndim == 0:
            return ReturnTypes(self.clone(), self._full_like(0, dtypes.int64))
        if self.shape[d] == 0:
            raise IndexError(f"{'max' if is_max else 'min'}(): Expected reduction dim {d} to have non-zero size "
                             f"(shape {self.shape})")
        be = self._dev.backend
        idx = self._wrap((be.argmax if is_max else be.argmin)(self._x, d, keepdim), self._dev)
        return ReturnTypes(R.MaxMinDim.apply(self, d, keepdim, is_max, idx), idx)

    def max(self, dim=None, keepdim: bool = False):
        return self._maxmin(dim, keepdim, True)

    def min(self, dim=None, keepdim: bool = False):
        return self._maxmin(dim, keepdim, False)

    def amax(self, dim=None, keepdim: bool = False):
        return R.MaxMin.apply(self, dim, keepdim, True)

    def amin(self, dim=None, keepdim: bool = False):
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

    def argmax(self, dim=None, keepdim: bool = False):
        return self._arg(dim, keepdim, True)

    def argmin(self, dim=None, keepdim: bool = False):
        return self._arg(dim, keepdim, False)

    def logsumexp(self, dim, keepdim: bool = False):
        return R.LogSumExp.apply(self, dim, keepdim)

    def cumsum(self, dim: int):
        return R.Cumsum.apply(self, dim)

    def any(self, dim=None, keepdim: bool = False):
        return self._wrap(self._dev.backend.any(self._x, _axes(dim, self.ndim), keepdim), self._dev)

    def all(self, dim=None, keepdim: bool = False):
        return self._wrap(self._dev.backend.all(self._x, _axes(dim, self.ndim), keepdim), self._dev)


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
