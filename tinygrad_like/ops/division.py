"""Division that rounds, and remainders: ``div``/``divide`` with a ``rounding_mode`` ('trunc' or 'floor'),
``true_divide``, ``floor_divide`` (``//``), ``fmod`` and ``remainder`` (``%``), with their in-place forms and free
functions. Integer division by zero raises, as in torch; ``tl.remainder`` and ``tl.floor_divide`` also take a Python
number as their first operand (``tl.remainder(7, x)``), as torch's do.

>>> import tinygrad_like as tl
>>> x = tl.tensor([-7, 7])
>>> (x // 2).tolist(), (x % 3).tolist(), x.fmod(3).tolist(), x.div(2, rounding_mode="trunc").tolist()
([-4, 3], [2, 1], [-1, 1], [-3, 3])
>>> tl.remainder(7, tl.tensor([4, -4])).tolist()
[3, -1]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..tensor_base import TensorBase
from ._math_util import first_operand, need_tensor, not_implemented, not_operand, run_binary, zero_grad
from ._util import free_functions, operands
from .elementwise import Div

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = ["fmod", "remainder", "floor_divide", "true_divide", "divide", "gcd", "gcd_", "lcm", "lcm_"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

_ROUNDING_MODES = (None, "trunc", "floor")


def _any_zero(t, native) -> bool:
    """Whether the native integer operand has a zero (a host read: integer division by zero raises, as torch)."""
    be = t._dev.backend
    return bool(t._wrap(be.any(be.eq(native, 0), None, False), t._dev).item())


def _check_divisor(a, b, xb, dt) -> None:
    if dt.is_floating_point:
        return
    if isinstance(b, TensorBase):
        if _any_zero(a, xb):
            raise RuntimeError("ZeroDivisionError: integer division by zero (as in torch); divide floating point "
                               "tensors to get inf/nan instead")
    elif xb == 0:
        raise RuntimeError("ZeroDivisionError: integer division by zero (as in torch); divide floating point "
                           "tensors to get inf/nan instead")


# ---- remainders and rounded division ----------------------------------------------------------------
class _Remainder(Function):
    """fmod and remainder: ``a - q * b`` with ``q`` a rounded quotient; gradient ``g`` for ``a``, ``-g * q`` for
    ``b`` (torch's). ``b`` may be a Python number; integer division by zero raises, as in torch."""

    __slots__ = ("value",)
    mode = ""

    def _forward(self, a, b, op: str):
        xa, xb, dt = operands(a, b, op)
        if dt is dtypes.bool_:
            raise not_implemented(op, dt)
        _check_divisor(a, b, xb, dt)
        if isinstance(b, TensorBase):
            self.value = None
            if _grad_mode.enabled and b.requires_grad:  # (only b's gradient reads the inputs)
                self.save_for_backward(a, b)
        else:
            self.value = b
        return run_binary(a, b, op, getattr(a._dev.backend, op), xa, xb)

    def backward(self, g):
        if self.value is not None or self.next[1] is None:
            return g, None
        a, b = self.saved_tensors
        return g, -g * a.div(b, rounding_mode=self.mode)


class Fmod(_Remainder):
    """C's ``fmod``: the result has the sign of the dividend."""

    __slots__ = ()
    mode = "trunc"

    def forward(self, a, b):
        return self._forward(a, b, "fmod")


class Remainder(_Remainder):
    """Python's ``%``: the result has the sign of the divisor."""

    __slots__ = ()
    mode = "floor"

    def forward(self, a, b):
        return self._forward(a, b, "remainder")


def _rounded_quotient(a, b, mode: str):
    """The native ``a / b`` rounded toward zero ('trunc') or minus infinity ('floor'), torch's way for each dtype."""
    op = "floor_divide" if mode == "floor" else "trunc_divide"
    xa, xb, dt = operands(a, b, op)  # (not "div": the number is used as an integer or bfloat16 quotient uses it)
    if dt is dtypes.bool_:
        raise not_implemented(f"div with rounding_mode={mode!r}", dt)
    _check_divisor(a, b, xb, dt)
    be = a._dev.backend
    return run_binary(a, b, "div", be.floor_divide if op == "floor_divide" else be.trunc_divide, xa, xb)


class DivRounded(Function):
    """``div(a, b, rounding_mode='trunc' | 'floor')``: the quotient rounded; its gradient is zero for both inputs
    (torch's, which differentiates the rounding as a step function)."""

    __slots__ = ("rounding_mode",)

    def forward(self, a, b, rounding_mode):
        self.rounding_mode = rounding_mode
        return _rounded_quotient(a, b, rounding_mode)

    def backward(self, g):
        return zero_grad(g), (zero_grad(g) if self.next[1] is not None else None), None


class FloorDivide(Function):
    """``a // b`` (torch's ``floor_divide``). Its output requires grad as torch's does, and, as in torch, its
    derivative is not implemented: backward through it raises. Use ``div(a, b, rounding_mode='floor')`` (zero
    gradient) in a graph."""

    __slots__ = ()

    def forward(self, a, b):
        return _rounded_quotient(a, b, "floor")

    def backward(self, g):
        raise RuntimeError("the derivative for 'floor_divide' is not implemented (as in torch): use "
                           "div(a, b, rounding_mode='floor'), whose gradient is zero, or detach the result")


def _integer_binary(a, b, op: str, fn):
    """gcd, lcm: integer tensors only (torch has no float or bool kernel), no gradient, NumPy's function."""
    need_tensor(b, op)
    xa, xb, dt = operands(a, b, op)
    if dt.is_floating_point or dt is dtypes.bool_:
        raise not_implemented(op, dt)
    be = a._dev.backend
    if not a._dev.is_host:
        xa, xb = be.to_numpy(xa), be.to_numpy(xb)
    out = np.ascontiguousarray(run_binary(a, b, op, fn, xa, xb).astype(dt.np, copy=False))
    return a._wrap(out if a._dev.is_host else be.from_numpy(out), a._dev)


def _floor_divide(x, other):
    return x.floor_divide(other)


class DivisionMixin:
    """Tensor methods: division with a rounding mode, floor division, fmod, remainder, and their in-place forms."""

    __slots__ = ()

    def div(self, other, *, rounding_mode: str | None = None) -> Tensor:
        """True division, or the quotient rounded toward zero (``'trunc'``) or minus infinity (``'floor'``), whose
        gradient is zero (torch's). Integer division by zero with a rounding mode raises, as in torch."""
        if rounding_mode is None:
            return Div.apply(self, other)
        if rounding_mode not in _ROUNDING_MODES:
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                               f"{rounding_mode!r}")
        return DivRounded.apply(self, other, rounding_mode)

    divide = div

    def true_divide(self, other) -> Tensor:
        return Div.apply(self, other)

    def floor_divide(self, other) -> Tensor:
        """``self // other`` (rounded toward minus infinity). As in torch, its derivative is not implemented: use
        ``div(other, rounding_mode='floor')`` in a graph."""
        return FloorDivide.apply(self, other)

    def fmod(self, other) -> Tensor:
        """C's remainder: ``self - trunc(self / other) * other``, with the sign of ``self``."""
        return Fmod.apply(self, other)

    def remainder(self, other) -> Tensor:
        """Python's ``%``: ``self - floor(self / other) * other``, with the sign of ``other``."""
        return Remainder.apply(self, other)

    def __floordiv__(self, other):
        return NotImplemented if not_operand(other) else FloorDivide.apply(self, other)

    def __rfloordiv__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else FloorDivide.apply(left, self)

    def __mod__(self, other):
        return NotImplemented if not_operand(other) else Remainder.apply(self, other)

    def __rmod__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else Remainder.apply(left, self)

    # ---- in place (same versioning and checks as add_, mul_: see ops/inplace.py) ------------------------
    def fmod_(self, other) -> Tensor:
        return self._inplace("fmod_", Fmod.apply, other)

    def remainder_(self, other) -> Tensor:
        return self._inplace("remainder_", Remainder.apply, other)

    def floor_divide_(self, other) -> Tensor:
        return self._inplace("floor_divide_", _floor_divide, other)

    def true_divide_(self, other) -> Tensor:
        return self.div_(other)

    def divide_(self, other, *, rounding_mode: str | None = None) -> Tensor:
        return self.div_(other, rounding_mode=rounding_mode)

    def gcd(self, other) -> Tensor:
        """The greatest common divisor, elementwise (integer tensors only; never negative)."""
        return _integer_binary(self, other, "gcd", np.gcd)

    def lcm(self, other) -> Tensor:
        """The least common multiple, elementwise (integer tensors only; never negative)."""
        return _integer_binary(self, other, "lcm", np.lcm)

    def gcd_(self, other) -> Tensor:
        return self._inplace("gcd_", lambda x, o: x.gcd(o), other)

    def lcm_(self, other) -> Tensor:
        return self._inplace("lcm_", lambda x, o: x.lcm(o), other)

    def __ifloordiv__(self, other):
        return self.floor_divide_(other)

    def __imod__(self, other):
        return self.remainder_(other)


div, divide, true_divide, fmod = free_functions(DivisionMixin, "div", "divide", "true_divide", "fmod")


# (a Python number as the first operand, as torch's: not the method's signature)
def remainder(input, other) -> Tensor:
    return Remainder.apply(first_operand(input, other, "remainder"), other)


def floor_divide(input, other) -> Tensor:
    return FloorDivide.apply(first_operand(input, other, "floor_divide"), other)


gcd, gcd_, lcm, lcm_ = free_functions(DivisionMixin, "gcd", "gcd_", "lcm", "lcm_")
