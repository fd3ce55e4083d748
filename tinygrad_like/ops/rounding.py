"""Rounding: ``floor``, ``ceil``, ``trunc`` (``fix``), ``round`` (half to even, to ``decimals`` places), ``frac`` and
``sgn``, with their in-place forms and free functions. Their gradient is zero (``frac``'s is 1); integers come back
unchanged (a copy) and bools are refused, as in torch.

>>> import tinygrad_like as tl
>>> x = tl.tensor([-1.5, 0.5, 2.5])
>>> x.floor().tolist(), x.round().tolist(), tl.trunc(x).tolist(), x.frac().tolist()
([-2.0, 0.0, 2.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 2.0], [-0.5, 0.5, 0.5])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import dtypes
from ..autograd.function import Function
from ._math_util import call_method, not_implemented, zero_grad
from ._util import free_functions

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = ["floor", "ceil", "round", "trunc", "fix", "frac", "sgn", "floor_", "ceil_", "round_", "trunc_", "fix_",
           "frac_"]


def _float_only(x, op: str) -> None:
    if not x.dtype.is_floating_point:
        raise not_implemented(op, x.dtype)


# ---- rounding: zero gradient (torch's), integers unchanged ------------------------------------------
class _Rounding(Function):
    """floor, ceil, trunc: integers come back unchanged (a copy), bool is refused, the gradient is zero."""

    __slots__ = ()

    def _integer(self, x, op: str):
        if x.dtype is dtypes.bool_:
            raise not_implemented(op, x.dtype)
        return x._dev.backend.copy(x._x)

    def backward(self, g):
        return (zero_grad(g),)


class Floor(_Rounding):
    __slots__ = ()

    def forward(self, x):
        if not x.dtype.is_floating_point:
            return self._integer(x, "floor")
        return x._dev.backend.floor(x._x)


class Ceil(_Rounding):
    __slots__ = ()

    def forward(self, x):
        if not x.dtype.is_floating_point:
            return self._integer(x, "ceil")
        return x._dev.backend.ceil(x._x)


class Trunc(_Rounding):
    __slots__ = ()

    def forward(self, x):
        if not x.dtype.is_floating_point:
            return self._integer(x, "trunc")
        return x._dev.backend.trunc(x._x)


class Round(_Rounding):
    """Round half to even (torch's and NumPy's), to ``decimals`` places (negative: tens, hundreds...)."""

    __slots__ = ("decimals",)

    def forward(self, x, decimals):
        if not isinstance(decimals, int) or isinstance(decimals, bool):
            raise TypeError(f"round(): argument 'decimals' must be int, not {type(decimals).__name__}")
        self.decimals = decimals
        if not x.dtype.is_floating_point:
            if decimals != 0 and x.dtype is not dtypes.bool_:
                raise not_implemented("round with decimals", x.dtype)
            return self._integer(x, "round")
        return x._dev.backend.round(x._x, decimals)

    def backward(self, g):
        return zero_grad(g), None


class Frac(Function):
    """``x - trunc(x)`` (torch's formula: frac(inf) is nan); gradient 1."""

    __slots__ = ()

    def forward(self, x):
        _float_only(x, "frac")
        be = x._dev.backend
        return be.sub(x._x, be.trunc(x._x))

    def backward(self, g):
        return (g,)


class RoundingMixin:
    """Tensor methods: floor, ceil, trunc, round, frac, sgn and their in-place forms."""

    __slots__ = ()

    # ---- rounding (zero gradient; integers unchanged) ---------------------------------------------
    def floor(self) -> Tensor:
        return Floor.apply(self)

    def ceil(self) -> Tensor:
        return Ceil.apply(self)

    def trunc(self) -> Tensor:
        return Trunc.apply(self)

    fix = trunc

    def round(self, *, decimals: int = 0) -> Tensor:
        """Round half to even (``round(2.5) == 2``), to ``decimals`` places, as torch's."""
        return Round.apply(self, decimals)

    def frac(self) -> Tensor:
        """``x - trunc(x)``: the fractional part, with the sign of ``x``."""
        return Frac.apply(self)

    def sgn(self) -> Tensor:
        """``sign`` (they differ only for complex numbers, which tinygrad_like has none of)."""
        return self.sign()

    # ---- in place (same versioning and checks as add_, mul_: see ops/inplace.py) ------------------------
    def floor_(self) -> Tensor:
        return self._inplace("floor_", call_method, "floor")

    def ceil_(self) -> Tensor:
        return self._inplace("ceil_", call_method, "ceil")

    def trunc_(self) -> Tensor:
        return self._inplace("trunc_", call_method, "trunc")

    fix_ = trunc_

    def round_(self, *, decimals: int = 0) -> Tensor:
        return self._inplace("round_", lambda x, _: Round.apply(x, decimals), None)

    def frac_(self) -> Tensor:
        return self._inplace("frac_", call_method, "frac")

    def sign_(self) -> Tensor:
        return self._inplace("sign_", call_method, "sign")

    sgn_ = sign_


floor, ceil, round, trunc, frac, sgn = free_functions(RoundingMixin, "floor", "ceil", "round", "trunc", "frac", "sgn")
fix = trunc
floor_, ceil_, round_, trunc_, fix_, frac_ = free_functions(RoundingMixin, "floor_", "ceil_", "round_", "trunc_",
                                                            "fix_", "frac_")
