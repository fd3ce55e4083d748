"""Comparisons and the ops that choose by them: ``==``, ``<``..., logic, ``sign``, ``maximum``/``minimum``,
``clamp`` and ``masked_fill``.

Comparisons and logic are not differentiable: they return bool tensors straight from the backend, with no node.
The others are nodes whose gradients route ``g`` to the input that was chosen (``where``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import dtypes
from ..autograd.function import Function
from ..dtypes import result_type
from ..layout import broadcast_shapes
from ..tensor_base import TensorBase
from ._util import broadcast_error, check_same_device, free_functions, operands
from .elementwise import _Binary, where
from .math import ClampMax, ClampMin, ClampTensors

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_BF16 = dtypes.bfloat16


def _pick(g, a_wins, tie):
    """maximum/minimum's gradients: all of g to the winner, half each on a tie (as PyTorch), 0 to the loser;
    with where, so an infinite gradient gives 0 to the loser rather than inf * 0 = nan."""
    half = g * 0.5
    return where(a_wins, g, where(tie, half, 0.0)), where(a_wins, 0.0, where(tie, half, g))


class Maximum(_Binary):
    __slots__ = ()

    def forward(self, a, b):
        xa, xb, _ = operands(a, b, "maximum")
        self.save_for_backward(a, b)
        try:
            return a._dev.backend.maximum(xa, xb)
        except ValueError:
            raise broadcast_error(a, b, "maximum") from None

    def backward(self, g):
        a, b = self.saved_tensors
        return _pick(g, a > b, a == b)


class Minimum(_Binary):
    __slots__ = ()

    def forward(self, a, b):
        xa, xb, _ = operands(a, b, "minimum")
        self.save_for_backward(a, b)
        try:
            return a._dev.backend.minimum(xa, xb)
        except ValueError:
            raise broadcast_error(a, b, "minimum") from None

    def backward(self, g):
        a, b = self.saved_tensors
        return _pick(g, a < b, a == b)


class Sign(Function):
    """``sign(x)``: differentiable with a zero gradient everywhere (as in PyTorch); the sign of a bool is the bool
    itself (a copy, as torch's)."""

    __slots__ = ()

    def forward(self, x):
        if x.dtype.name == "bool":
            return x._dev.backend.copy(x._x)
        return x._dev.backend.sign(x._x)

    def backward(self, g):
        return (g.new_zeros(g.shape),)


class Clamp(Function):
    """Clamp to Python-number bounds (either may be None)."""

    __slots__ = ("min", "max")

    def forward(self, x, lo, hi):
        if lo is None and hi is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
        self.min, self.max = lo, hi
        self.save_for_backward(x)
        be, xx = x._dev.backend, x._x
        dt = result_type(x, *(v for v in (lo, hi) if v is not None))  # int tensor, float bound -> float32
        if dt.category == 1:  # (an int bound beyond the dtype is an error, as in torch; NumPy would not clamp)
            lo, hi = (None if v is None else dtypes.fill_value(v, dt) for v in (lo, hi))
        if dt is not x.dtype:
            xx = be.cast(xx, dt)
        elif dt is _BF16:  # (NumPy's clip has no bfloat16 loop: float32, rounded back; the same as rounding the bounds)
            return be.cast(be.clip(be.cast(xx, dtypes.float32), lo, hi), _BF16)
        return be.clip(xx, lo, hi)

    def backward(self, g):
        (x,) = self.saved_tensors
        keep = None
        if self.min is not None:
            keep = x >= self.min
        if self.max is not None:
            k2 = x <= self.max
            keep = k2 if keep is None else keep & k2
        return where(keep, g, 0.0), None, None  # (where: an infinite gradient gives 0 where clamped, not nan)


class MaskedFill(Function):
    """Out of place, as in PyTorch, the result has the broadcast shape of ``x`` and ``mask``."""

    __slots__ = ("value",)

    def forward(self, x, mask, value):
        if mask.dtype.name != "bool":
            raise TypeError(f"masked_fill expects a bool mask, got {mask.dtype.name}")
        if x._dev is not mask._dev:
            check_same_device(x, mask, "masked_fill")
        try:
            broadcast_shapes(x.shape, mask.shape)
        except ValueError:
            raise RuntimeError(f"masked_fill: mask of shape {mask.shape} cannot be broadcast with the "
                               f"tensor's shape {x.shape}") from None
        if isinstance(value, TensorBase):
            if value.ndim:
                raise RuntimeError(f"masked_fill only supports a 0-dimensional value tensor, but got "
                                   f"tensor with {value.ndim} dimension(s)")
            value = value.item()
        if not x.dtype.is_floating_point and isinstance(value, float) and not math.isfinite(value):
            raise RuntimeError(f"masked_fill: value {value} cannot be converted to type {x.dtype.name} without "
                               f"overflow (as torch; fill a floating point tensor, or use a finite value)")
        self.value = value = dtypes.fill_value(value, x.dtype)
        self.save_for_backward(mask)
        be = x._dev.backend
        return be.cast(be.where(mask._x, value, x._x), x.dtype)

    def backward(self, g):
        (mask,) = self.saved_tensors
        return where(mask, g.new_zeros(()), g), None, None


class ComparisonMixin:
    """Tensor methods that compare and choose: operators ``== != < <= > >=``, logic, ``sign``, ``isnan``,
    ``clamp``, ``maximum`` and ``minimum``."""

    __slots__ = ()

    # comparisons and logic: not differentiable, return bool tensors
    def _cmp(self, other, prim: str) -> Tensor:
        xa, xb, _ = operands(self, other, prim)
        try:
            return self._wrap(getattr(self._dev.backend, prim)(xa, xb), self._dev)
        except ValueError:
            raise broadcast_error(self, other, prim) from None

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
        return Sign.apply(self)

    def isnan(self) -> Tensor:
        return self._wrap(self._dev.backend.isnan(self._x), self._dev)

    def clamp(self, min=None, max=None):
        if isinstance(min, TensorBase) or isinstance(max, TensorBase):  # (torch's gradients: ops/math.py)
            if max is None:
                return ClampMin.apply(self, min)
            if min is None:
                return ClampMax.apply(self, max)
            lo = min if isinstance(min, TensorBase) else self._left_number(min)
            hi = max if isinstance(max, TensorBase) else self._left_number(max)
            return ClampTensors.apply(self, lo, hi)
        return Clamp.apply(self, min, max)

    clip = clamp

    def maximum(self, other: Tensor):
        if not isinstance(other, TensorBase):
            raise TypeError(f"maximum(): argument 'other' must be Tensor, not {type(other).__name__}")
        return Maximum.apply(self, other)

    def minimum(self, other: Tensor):
        if not isinstance(other, TensorBase):
            raise TypeError(f"minimum(): argument 'other' must be Tensor, not {type(other).__name__}")
        return Minimum.apply(self, other)


# ---- free functions ---------------------------------------------------------------------------------
__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and", "logical_or", "logical_xor", "sign",
           "isnan", "clamp", "clip", "maximum", "minimum"]

(eq, ne, lt, le, gt, ge, logical_not, logical_and, logical_or, logical_xor, sign, isnan, clamp, clip, maximum,
 minimum) = free_functions(ComparisonMixin, *__all__)
