"""Tensor methods for elementwise ops: operators, comparisons, logic, math and activations."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..dtypes import result_type
from ..ops import _util
from ..ops import elementwise as E
from ..ops import reduce as R
from ..ops.arithmetic import ClampMax, ClampMin, ClampTensors
from ..tensor_base import TensorBase

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor



class ElementwiseMixin:
    """Tensor methods for elementwise ops: operators, comparisons, logic, math and activations."""

    __slots__ = ()

    # ---- arithmetic --------------------------------------------------------------------------
    def __add__(self, other):
        return E.Add.apply(self, other)

    def __radd__(self, other):
        return E.Add.apply(self, other)

    def __sub__(self, other):
        return E.Sub.apply(self, other)

    def _left_number(self, value):
        """``value`` from the left of an operator (``2 - x``, ``2 ** x``) as a 0-d tensor of the dtype ``x op value``
        has, so the op itself runs (Sub, Pow: one node type per op) with the number as its first operand. An integer
        too large for that dtype wraps into it, as torch's does. None when ``value`` is not a number (the operator
        then returns NotImplemented, as Python expects)."""
        if not E._num(value):
            return None
        if isinstance(value, np.generic):
            value = value.item()
        dt = dtypes.bool_ if isinstance(value, bool) else result_type(self, value)
        if isinstance(value, int) and not dt.is_floating_point and dt.name != "bool":
            info = np.iinfo(dt.np)
            if not info.min <= value <= info.max:  # too large for x's integer dtype: wrapped into it, as torch does
                value = (value - info.min) % (int(info.max) - int(info.min) + 1) + int(info.min)
        with np.errstate(over="ignore"):  # (2**40 as float16 is inf, as in torch: no NumPy warning for the user)
            return self._wrap(self._dev.backend.full((), value, dt), self._dev)

    def __rsub__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else E.Sub.apply(left, self)

    def __mul__(self, other):
        return E.Mul.apply(self, other)

    def __rmul__(self, other):
        return E.Mul.apply(self, other)

    def __truediv__(self, other):
        return E.Div.apply(self, other)

    def __rtruediv__(self, other):
        """``number / x`` is ``reciprocal(x) * number``, as in torch (so neither ``x`` nor the result is kept)."""
        if not E._num(other):
            return NotImplemented
        return E.Mul.apply(E.Reciprocal.apply(self), other)

    def reciprocal(self):
        return E.Reciprocal.apply(self)

    def __pow__(self, other):
        return E.Pow.apply(self, other)

    def __rpow__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else E.Pow.apply(left, self)

    def __matmul__(self, other):
        return R.Matmul.apply(self, other)

    def __rmatmul__(self, other):
        return R.Matmul.apply(self._from_value(other), self)

    def __neg__(self):
        return E.Neg.apply(self)

    def __abs__(self):
        return E.Abs.apply(self)

    def __pos__(self):
        return self

    add = __add__
    sub = __sub__
    mul = __mul__
    pow = __pow__  # (div, with its rounding_mode, and the bitwise operators live in ops/division.py, ops/bitwise.py)
    matmul = __matmul__
    neg = __neg__
    abs = __abs__

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    # comparisons and logic: not differentiable, return bool tensors
    def _cmp(self, other, prim: str) -> Tensor:
        xa, xb, _ = _util.operands(self, other, prim)
        try:
            return self._wrap(getattr(self._dev.backend, prim)(xa, xb), self._dev)
        except ValueError:
            raise E._broadcast_error(self, other, prim) from None

    def __eq__(self, other):  # type: ignore[override]
        if not isinstance(other, (TensorBase, int, float)):
            return NotImplemented
        return self._cmp(other, "eq")

    def __ne__(self, other):  # type: ignore[override]
        if not isinstance(other, (TensorBase, int, float)):
            return NotImplemented
        return self._cmp(other, "ne")

    def __lt__(self, other):
        return self._cmp(other, "lt")

    def __le__(self, other):
        return self._cmp(other, "le")

    def __gt__(self, other):
        return self._cmp(other, "gt")

    def __ge__(self, other):
        return self._cmp(other, "ge")

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def logical_not(self) -> Tensor:
        return self._wrap(self._dev.backend.logical_not(self._x), self._dev)

    def logical_and(self, other) -> Tensor:
        return self.bool()._cmp(other.bool() if isinstance(other, TensorBase) else bool(other), "logical_and")

    def logical_or(self, other) -> Tensor:
        return self.bool()._cmp(other.bool() if isinstance(other, TensorBase) else bool(other), "logical_or")

    def logical_xor(self, other) -> Tensor:
        return self.bool()._cmp(other.bool() if isinstance(other, TensorBase) else bool(other), "logical_xor")

    def sign(self) -> Tensor:
        return E.Sign.apply(self)

    def isnan(self) -> Tensor:
        return self._wrap(self._dev.backend.isnan(self._x), self._dev)

    # ---- unary math and activations --------------------------------------------------------
    def exp(self):
        return E.Exp.apply(self)

    def log(self):
        return E.Log.apply(self)

    def sqrt(self):
        return E.Sqrt.apply(self)

    def rsqrt(self):
        return E.Rsqrt.apply(self)

    def sin(self):
        return E.Sin.apply(self)

    def cos(self):
        return E.Cos.apply(self)

    def tanh(self):
        return E.Tanh.apply(self)

    def sigmoid(self):
        return E.Sigmoid.apply(self)

    def erf(self):
        return E.Erf.apply(self)

    def relu(self):
        return E.Relu.apply(self)

    def leaky_relu(self, negative_slope: float = 0.01):
        return E.LeakyRelu.apply(self, negative_slope)

    def gelu(self, approximate: str = "none"):
        return E.Gelu.apply(self, approximate)

    def silu(self):
        return E.Silu.apply(self)

    def softplus(self, beta: float = 1.0, threshold: float = 20.0):
        return E.Softplus.apply(self, beta, threshold)

    def elu(self, alpha: float = 1.0):
        return E.Elu.apply(self, alpha)

    def clamp(self, min=None, max=None):
        if isinstance(min, TensorBase) or isinstance(max, TensorBase):  # (torch's gradients: ops/arithmetic.py)
            if max is None:
                return ClampMin.apply(self, min)
            if min is None:
                return ClampMax.apply(self, max)
            lo = min if isinstance(min, TensorBase) else self._left_number(min)
            hi = max if isinstance(max, TensorBase) else self._left_number(max)
            return ClampTensors.apply(self, lo, hi)
        return E.Clamp.apply(self, min, max)

    clip = clamp

    def maximum(self, other: Tensor):
        if not isinstance(other, TensorBase):
            raise TypeError(f"maximum(): argument 'other' must be Tensor, not {type(other).__name__}")
        return E.Maximum.apply(self, other)

    def minimum(self, other: Tensor):
        if not isinstance(other, TensorBase):
            raise TypeError(f"minimum(): argument 'other' must be Tensor, not {type(other).__name__}")
        return E.Minimum.apply(self, other)

    def softmax(self, dim: int):
        return R.Softmax.apply(self, dim)

    def log_softmax(self, dim: int):
        return R.LogSoftmax.apply(self, dim)
