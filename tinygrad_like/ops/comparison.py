"""Tests with bool answers, never differentiable: finiteness (``isfinite``, ``isinf``, ``isposinf``, ``isneginf``),
closeness and equality (``isclose``, ``allclose``, ``equal``), the dtype tests (``is_floating_point``, ``is_complex``),
with their free functions; and the other details a tensor tells about itself (``nelement``, ``ndimension``, ``format``)
and ``new_empty``.

>>> import tinygrad_like as tl
>>> x = tl.tensor([1.0, float("inf"), float("nan")])
>>> x.isfinite().tolist(), x.isposinf().tolist(), tl.isclose(x[::2], x[::2], equal_nan=True).tolist()
([True, False, False], [False, True, False], [True, True])
>>> x.equal(x), tl.allclose(tl.tensor([1.0]), tl.tensor([1.0 + 1e-9])), f"{x[0]:.2f}"
(False, True, '1.00')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import dtypes
from ._math_util import need_tensor
from ._util import check_same_device, free_functions
from .elementwise import _broadcast_error

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = ["isfinite", "isinf", "isposinf", "isneginf", "isclose", "allclose", "equal", "is_floating_point",
           "is_complex"]


def _isinf_signed(x, positive: bool):
    if not x.dtype.is_floating_point:
        return x._full_like(False, dtypes.bool_)
    be = x._dev.backend
    side = be.gt(x._x, 0) if positive else be.lt(x._x, 0)
    return x._wrap(be.logical_and(be.isinf(x._x), side), x._dev)


def _torch_type_name(dt) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
            "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "bfloat16": "BFloat16"}.get(dt.name,
                                                                                                       dt.name)


class ComparisonMixin:
    """Tensor methods: finiteness tests, isclose/allclose/equal, and a tensor's details (dtype tests, sizes)."""

    __slots__ = ()

    # ---- tests: finite, inf, close, equal (bool results, never differentiable) -------------------------
    def isfinite(self) -> Tensor:
        """Bool tensor: True where ``self`` is neither inf nor NaN (always, for integers and bools)."""
        if not self.dtype.is_floating_point:
            return self._full_like(True, dtypes.bool_)
        return self._wrap(self._dev.backend.isfinite(self._x), self._dev)

    def isinf(self) -> Tensor:
        if not self.dtype.is_floating_point:
            return self._full_like(False, dtypes.bool_)
        return self._wrap(self._dev.backend.isinf(self._x), self._dev)

    def isposinf(self) -> Tensor:
        return _isinf_signed(self, True)

    def isneginf(self) -> Tensor:
        return _isinf_signed(self, False)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
        """Elementwise ``|self - other| <= atol + rtol * |other|`` (a bool tensor), or ``self == other``; NaNs equal
        when ``equal_nan``. As torch: both tensors of one dtype, tolerances non-negative, integers compared in the
        default float."""
        need_tensor(other, "isclose")
        if self.dtype is not other.dtype:
            raise RuntimeError(f"isclose: {_torch_type_name(self.dtype)} did not match {_torch_type_name(other.dtype)} "
                               f"(the two tensors must have one dtype, as in torch; convert one with .to(other.dtype))")
        if rtol < 0:
            raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
        if atol < 0:
            raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
        if self._dev is not other._dev:
            check_same_device(self, other, "isclose")
        be = self._dev.backend
        xa, xb = self._x, other._x
        try:
            close = be.eq(xa, xb)
        except ValueError:
            raise _broadcast_error(self, other, "isclose") from None
        fp = self.dtype.is_floating_point
        if equal_nan and fp:
            close = be.logical_or(close, be.logical_and(be.isnan(xa), be.isnan(xb)))
        if rtol == 0 and atol == 0:
            return self._wrap(close, self._dev)
        if self.dtype is dtypes.bool_:
            xa, xb = be.cast(xa, dtypes.default_float), be.cast(xb, dtypes.default_float)
            fp = True
        ft = self.dtype if fp else dtypes.default_float
        allowed = be.add(be.abs(be.mul(xb if fp else be.cast(xb, ft), rtol)), atol)
        actual = be.abs(be.sub(xa, xb))
        if not fp:
            actual = be.cast(actual, ft)
        ok = be.logical_and(be.isfinite(actual), be.le(actual, allowed))
        return self._wrap(be.logical_or(close, ok), self._dev)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        """Whether ``isclose`` holds everywhere: a Python bool."""
        return bool(self.isclose(other, rtol, atol, equal_nan).all().item())

    def equal(self, other) -> bool:
        """Same shape and same values (after type promotion; NaN is unequal to itself): a Python bool."""
        need_tensor(other, "equal")
        if self.shape != other.shape:
            return False
        return bool(self._cmp(other, "eq").all().item())

    # ---- tensor details ------------------------------------------------------------------------------------
    def nelement(self) -> int:
        """The number of elements (``numel``)."""
        return self.numel()

    def ndimension(self) -> int:
        """The number of dims (``dim``)."""
        return self.ndim

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        """Always False: tinygrad_like has no complex dtypes."""
        return False

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        """A new tensor of ``size`` with this one's dtype and device unless given. Zero-filled here (torch leaves it
        uninitialized), so that results never depend on stale memory."""
        from ..creation import empty  # (creation sits above the ops: a module-level import would be a cycle)
        return empty(*size, dtype=self.dtype if dtype is None else dtype,
                     device=self._dev if device is None else device, requires_grad=requires_grad)

    def __format__(self, format_spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats as its Python number, any other as ``str`` (torch's rule, which a
        format spec then refuses with TypeError)."""
        from ..tensor import Tensor  # (tensor sits above the ops: a module-level import would be a cycle)
        if self.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)


(isfinite, isinf, isposinf, isneginf, isclose, allclose, equal, is_floating_point, is_complex) = free_functions(
    ComparisonMixin, "isfinite", "isinf", "isposinf", "isneginf", "isclose", "allclose", "equal", "is_floating_point",
    "is_complex")
