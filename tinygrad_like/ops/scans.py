"""Products and scans: ``prod``, ``cumprod``, the running extremes ``cummax``/``cummin`` (with where they were
reached, as PyTorch's named tuples) and ``logcumsumexp``.

The running extremes pick values as a sort does (:class:`~.sorting.Picked`): their gradient goes back to the
positions picked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..layout import normalize_dim
from ._util import free_functions
from .elementwise import where
from .movement import Cat
from .reduce import scan
from .sorting import Picked, _dim, _keep, _lane, _PickAlong, _return_type, _scalar0d

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = ["prod", "cumprod", "cummax", "cummin", "logcumsumexp"]


class Cummax(_PickAlong):
    """``cummax``: the running maximum and where it was (last) reached."""

    __slots__ = ()
    is_max = True

    def forward(self, x, dim, box):
        v, i = x._dev.backend.cummax(x._x, dim, self.is_max)
        self._picked(x, dim, True, i, box)
        return v

    def backward(self, g):
        return self._scatter(g), None, None


class Cummin(Cummax):
    """``cummin``: the running minimum and where it was (last) reached."""

    __slots__ = ()
    is_max = False


# ---- products ------------------------------------------------------------------------------------
def _exclusive_products(x, d: int):
    """Per element, the product of the others along ``d`` (no division: exact with zeros), as PyTorch's
    ``prod_safe_zeros_backward``: the products of the elements before it times those of the elements after it."""
    n = x.shape[d]
    if n == 1:
        return x.new_ones(x.shape)
    shape = list(x.shape)
    shape[d] = 1
    one = x.new_ones(tuple(shape))
    before = Cat.apply(one, x.narrow(d, 0, n - 1), d).cumprod(d)
    after = Cat.apply(one, x.flip(d).narrow(d, 0, n - 1), d).cumprod(d).flip(d)
    return before * after


class Prod(Function):
    """``prod()`` of all elements (``dim`` None) or along one dim. The gradient is ``g * out / x`` where no input is
    zero, else the products of the other elements (PyTorch's two formulas: exact with one zero or several)."""

    __slots__ = ("dim", "keepdim")
    save_output = True

    def forward(self, x, dim, keepdim, dtype):
        if x.ndim == 0:  # (a 0-d tensor has its dim 0 and -1 to reduce: nothing)
            dim = None
        self.dim, self.keepdim = dim, keepdim
        if dtype is None and not x.dtype.is_floating_point:
            dtype = dtypes.int64
        if _grad_mode.enabled and x.requires_grad:
            self.save_for_backward(x)
        return x._dev.backend.prod(x._x, dim, keepdim, dtype)

    def backward(self, g):
        x, y = self.saved_tensors
        if x.numel() == 0:
            return g.new_zeros(x.shape), None, None, None
        d = self.dim
        if d is not None and not self.keepdim:
            g, y = g.unsqueeze(d), y.unsqueeze(d)
        if not bool((x == 0).any()):
            return g * (y / x), None, None, None
        if d is None:
            return (g * _exclusive_products(x.reshape(-1), 0).reshape(x.shape)), None, None, None
        return g * _exclusive_products(x, d), None, None, None


class Cumprod(Function):
    """Running products. Without zeros the gradient is ``reverse_cumsum(g * out) / x``; with zeros (PyTorch's
    formula, exact): before a lane's first zero, the same sum over the outputs before it; at the first zero, the
    product of the elements before it times ``sum_j g_j * prod(x after the zero, up to j)``; after it, 0."""

    __slots__ = ("dim",)
    save_output = True

    def forward(self, x, dim, dtype):
        self.dim = dim
        if dtype is None and not x.dtype.is_floating_point:
            dtype = dtypes.int64
        if _grad_mode.enabled and x.requires_grad:
            self.save_for_backward(x)
        be = x._dev.backend
        if x.ndim == 0:
            return be.cast(x._x, dtype or x.dtype)
        dt = dtype or x.dtype
        if not dt.is_floating_point:
            return be.cumprod(x._x, dim, dt)
        xx = x._x if dt is x.dtype else be.cast(x._x, dt)  # (torch casts the input to ``dtype`` first)
        return scan(be, be.cumprod, xx, dt, dim, None)  # (in torch's acc_type: see SCAN_ACC)

    def backward(self, g):
        x, y = self.saved_tensors
        if x.ndim == 0 or x.numel() == 0:
            return g, None, None
        d = self.dim
        zero = x == 0
        if not bool(zero.any()):
            return (g * y).flip(d).cumsum(d).flip(d) / x, None, None
        seen = zero.long().cumsum(d)
        before, first = seen == 0, zero & (seen == 1)
        safe = where(before, x, 1.0)
        lead = where(before, g * y, 0.0).flip(d).cumsum(d).flip(d) / safe
        rest = where(before | first, 1.0, x).cumprod(d)  # prod(x after the first zero, up to j)
        at_zero = safe.prod(d, keepdim=True) * where(before, 0.0, g * rest).sum(d, keepdim=True)
        return where(before, lead, where(first, at_zero, 0.0)), None, None


class LogCumSumExp(Function):
    """``log(cumsum(exp(x)))`` along ``dim``, without overflow. The gradient is PyTorch's stable formula: the
    positive and negative parts of ``g`` each summed in log space by a reverse logcumsumexp."""

    __slots__ = ("dim",)
    save_output = True

    def forward(self, x, dim):
        if not x.dtype.is_floating_point:
            raise NotImplementedError(f"logcumsumexp: not implemented for {x.dtype.name} tensors (as in torch): "
                                      f"expected a floating point input; convert with .float() first")
        self.dim = dim
        if _grad_mode.enabled and x.requires_grad:
            self.save_for_backward(x)
        be = x._dev.backend
        if x.ndim == 0:
            return be.copy(x._x)
        return scan(be, be.logcumsumexp, x._x, x.dtype, dim)  # (in torch's acc_type: see SCAN_ACC)

    def backward(self, g):
        x, y = self.saved_tensors
        if g.ndim == 0 or g.numel() == 0:
            return g, None
        d = self.dim
        lowest = float(dtypes.finfo(g.dtype).min)
        log_abs = g.abs().log()
        pos = where(g > 0, log_abs, lowest) - y
        neg = where(g < 0, log_abs, lowest) - y
        pos = pos.flip(d).logcumsumexp(d).flip(d)
        neg = neg.flip(d).logcumsumexp(d).flip(d)
        return (pos + x).exp() - (neg + x).exp(), None


cummax_result = _return_type("cummax")
cummin_result = _return_type("cummin")


class ScansMixin:
    """Tensor methods: products and scans."""

    __slots__ = ()

    def prod(self, dim: int | None = None, keepdim: bool = False, *, dtype=None, keepdims=None, axis=None) -> Tensor:
        """The product of all elements, or along one ``dim``; integers and bools give int64 (as ``sum``)."""
        dim = _dim(dim, axis)
        if dim is not None:
            if not isinstance(dim, int) or isinstance(dim, bool):
                raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__} (torch's prod "
                                f"reduces one dim or all of them)")
            dim = normalize_dim(dim, self.ndim)
        return Prod.apply(self, dim, bool(_keep(keepdim, keepdims)), None if dtype is None else dtypes.to_dtype(dtype))

    def cumprod(self, dim: int, *, dtype=None) -> Tensor:
        """Running products along ``dim``; integers and bools give int64."""
        return Cumprod.apply(self, normalize_dim(dim, self.ndim), None if dtype is None else dtypes.to_dtype(dtype))

    def cumprod_(self, dim: int, *, dtype=None) -> Tensor:
        return self._inplace("cumprod_", lambda x, _: x.cumprod(dim, dtype=dtype), None)

    def cumsum_(self, dim: int, *, dtype=None) -> Tensor:
        return self._inplace("cumsum_", lambda x, _: x.cumsum(dim, dtype=dtype), None)

    def _cumext(self, dim, is_max: bool):
        x, d = _lane(self, dim, "cummax" if is_max else "cummin")
        box = Picked()
        v = (Cummax if is_max else Cummin).apply(x, d, box)
        return (cummax_result if is_max else cummin_result)(*_scalar0d(v, box.indices, self.ndim == 0))

    def cummax(self, dim: int):
        """``(values, indices)``: the running maximum along ``dim`` and where it was last reached."""
        return self._cumext(dim, True)

    def cummin(self, dim: int):
        """``(values, indices)``: the running minimum along ``dim`` and where it was last reached."""
        return self._cumext(dim, False)

    def logcumsumexp(self, dim: int) -> Tensor:
        """``log(cumsum(exp(x), dim))`` computed without overflow."""
        return LogCumSumExp.apply(self, normalize_dim(dim, self.ndim))


# ---- free functions (tl.<name>) ---------------------------------------------------------------------
prod, cumprod, cummax, cummin, logcumsumexp = free_functions(
    ScansMixin, "prod", "cumprod", "cummax", "cummin", "logcumsumexp")
