"""Integer bits: ``bitwise_and``/``or``/``xor`` (``&``, ``|``, ``^``, logical on bools), the shifts (``<<``, ``>>``)
and ``bitwise_not`` (``~``), with their in-place forms and free functions. Never differentiable; floats are refused
with torch's error. The free functions also take a Python number as their first operand, as torch's do.

>>> import tinygrad_like as tl
>>> a = tl.tensor([12, 10, 7])
>>> (a & 6).tolist(), (a | 1).tolist(), (a ^ a).tolist(), (~a).tolist(), (a << 1).tolist()
([4, 2, 6], [13, 11, 7], [0, 0, 0], [-13, -11, -8], [24, 20, 14])
>>> tl.bitwise_and(3, a).tolist()
[0, 2, 3]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import dtypes
from ..dtypes import result_type
from ..tensor_base import TensorBase
from ._math_util import call_method, first_operand, not_implemented, not_operand, run_binary
from ._util import free_functions, operands

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift"]


def _fits(value, dt) -> bool:
    """A Python bool, or an int inside ``dt``'s range: passed to the primitive as it is (no kernel to make it a
    tensor first)."""
    c = value.__class__
    if c is bool:
        return True
    if c is not int:
        return False
    if dt is dtypes.int64:
        return -(1 << 63) <= value < (1 << 63)
    if dt is dtypes.int32:
        return -(1 << 31) <= value < (1 << 31)
    return False


_BITWISE_BOOL = {"bitwise_and": "logical_and", "bitwise_or": "logical_or", "bitwise_xor": "logical_xor"}


def bitwise(a, b, op: str):
    """``a op b`` for integer and bool tensors (``op``: bitwise_and/or/xor, bitwise_left_shift/right_shift); ``b`` a
    tensor or a Python int/bool (an int too large for the dtype wraps into it, as in torch). Floats are refused with
    torch's error; shifts of bools too."""
    if not isinstance(b, TensorBase):
        if isinstance(b, float):
            raise not_implemented(op, dtypes.default_float)
        if not _fits(b, result_type(a, b)):  # (an int beyond the dtype wraps into it, through a 0-d tensor)
            left = a._left_number(b)
            if left is None:
                raise TypeError(f"{op}(): argument 'other' must be Tensor or int, not {type(b).__name__}")
            b = left
    xa, xb, dt = operands(a, b, op)
    if dt.is_floating_point or (dt is dtypes.bool_ and op not in _BITWISE_BOOL):
        raise not_implemented(op, dt)
    be = a._dev.backend
    if dt is dtypes.bool_:  # (and, or, xor of bools: the logical primitives, which have kernels everywhere)
        fn = be.logical_and if op == "bitwise_and" else be.logical_or if op == "bitwise_or" else be.logical_xor
    elif op == "bitwise_and":
        fn = be.bitwise_and
    elif op == "bitwise_or":
        fn = be.bitwise_or
    elif op == "bitwise_xor":
        fn = be.bitwise_xor
    elif op == "bitwise_left_shift":
        fn = be.bitwise_left_shift
    else:
        fn = be.bitwise_right_shift
    return a._wrap(run_binary(a, b, op, fn, xa, xb), a._dev)


def _bitwise_and(x, other):
    return bitwise(x, other, "bitwise_and")


def _bitwise_or(x, other):
    return bitwise(x, other, "bitwise_or")


def _bitwise_xor(x, other):
    return bitwise(x, other, "bitwise_xor")


def _left_shift(x, other):
    return bitwise(x, other, "bitwise_left_shift")


def _right_shift(x, other):
    return bitwise(x, other, "bitwise_right_shift")


class BitwiseMixin:
    """Tensor methods: the bitwise operations on integers and bools, their operators and in-place forms."""

    __slots__ = ()

    # ---- integer bits ------------------------------------------------------------------------------------
    def bitwise_and(self, other) -> Tensor:
        return bitwise(self, other, "bitwise_and")

    def bitwise_or(self, other) -> Tensor:
        return bitwise(self, other, "bitwise_or")

    def bitwise_xor(self, other) -> Tensor:
        return bitwise(self, other, "bitwise_xor")

    def bitwise_left_shift(self, other) -> Tensor:
        """``self << other``; shifting by the width or more, or by a negative amount, gives 0 (as torch)."""
        return bitwise(self, other, "bitwise_left_shift")

    def bitwise_right_shift(self, other) -> Tensor:
        """``self >> other`` (arithmetic: the sign fills in); by the width or more: 0 or -1 (as torch)."""
        return bitwise(self, other, "bitwise_right_shift")

    def bitwise_not(self) -> Tensor:
        if self.dtype.is_floating_point:
            raise not_implemented("bitwise_not", self.dtype)
        be = self._dev.backend
        return self._wrap(be.logical_not(self._x) if self.dtype is dtypes.bool_ else be.bitwise_not(self._x), self._dev)

    def __and__(self, other):
        return NotImplemented if not_operand(other) else bitwise(self, other, "bitwise_and")

    def __or__(self, other):
        return NotImplemented if not_operand(other) else bitwise(self, other, "bitwise_or")

    def __xor__(self, other):
        return NotImplemented if not_operand(other) else bitwise(self, other, "bitwise_xor")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __lshift__(self, other):
        return NotImplemented if not_operand(other) else bitwise(self, other, "bitwise_left_shift")

    def __rshift__(self, other):
        return NotImplemented if not_operand(other) else bitwise(self, other, "bitwise_right_shift")

    def __rlshift__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else bitwise(left, self, "bitwise_left_shift")

    def __rrshift__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else bitwise(left, self, "bitwise_right_shift")

    def __invert__(self) -> Tensor:
        if self.dtype.is_floating_point:
            raise TypeError(f"~ (operator.invert) is only implemented on integer and Boolean-type tensors, got "
                            f"{self.dtype.name} (as in torch); for a mask, compare first (x > 0)")
        return self.bitwise_not()

    # ---- in place (same versioning and checks as add_, mul_: see ops/inplace.py) ------------------------
    def bitwise_and_(self, other) -> Tensor:
        return self._inplace("bitwise_and_", _bitwise_and, other)

    def bitwise_or_(self, other) -> Tensor:
        return self._inplace("bitwise_or_", _bitwise_or, other)

    def bitwise_xor_(self, other) -> Tensor:
        return self._inplace("bitwise_xor_", _bitwise_xor, other)

    def bitwise_left_shift_(self, other) -> Tensor:
        return self._inplace("bitwise_left_shift_", _left_shift, other)

    def bitwise_right_shift_(self, other) -> Tensor:
        return self._inplace("bitwise_right_shift_", _right_shift, other)

    def bitwise_not_(self) -> Tensor:
        return self._inplace("bitwise_not_", call_method, "bitwise_not")

    __iand__, __ior__, __ixor__ = bitwise_and_, bitwise_or_, bitwise_xor_
    __ilshift__, __irshift__ = bitwise_left_shift_, bitwise_right_shift_


(bitwise_not,) = free_functions(BitwiseMixin, "bitwise_not")


# (a Python number as the first operand, as torch's: not the methods' signature)
def bitwise_and(input, other) -> Tensor:
    return bitwise(first_operand(input, other, "bitwise_and"), other, "bitwise_and")


def bitwise_or(input, other) -> Tensor:
    return bitwise(first_operand(input, other, "bitwise_or"), other, "bitwise_or")


def bitwise_xor(input, other) -> Tensor:
    return bitwise(first_operand(input, other, "bitwise_xor"), other, "bitwise_xor")


def bitwise_left_shift(input, other) -> Tensor:
    return bitwise(first_operand(input, other, "bitwise_left_shift"), other, "bitwise_left_shift")


def bitwise_right_shift(input, other) -> Tensor:
    return bitwise(first_operand(input, other, "bitwise_right_shift"), other, "bitwise_right_shift")
