"""Free functions (``tl.<name>``) of the Tensor API's math family (see ``mixin/math.py``).

Each is ``input.<name>(...)`` with torch's signature and keyword names (``input=``, ``other=``, ``end=``, ``weight=``,
``decimals=``...). Where torch accepts a Python number as the first operand (``remainder``, ``floor_divide``,
``xlogy``, the bitwise ops), it becomes a 0-d tensor of the dtype the op computes in, as torch's does.
``tl.floor_(x)`` and the other in-place functions torch has are ``x.floor_()``.
"""

from __future__ import annotations

from .ops import elementwise as E
from .ops import math as M
from .tensor import Tensor

__all__ = [
    "floor", "ceil", "round", "trunc", "fix", "frac", "sgn",
    "acos", "asin", "atan", "atan2", "tan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "arccos", "arcsin", "arctan", "arctan2", "arcsinh", "arccosh", "arctanh",
    "log2", "log10", "log1p", "expm1", "exp2", "logaddexp", "logaddexp2", "reciprocal", "square",
    "fmod", "remainder", "floor_divide", "true_divide", "divide", "lerp", "copysign", "hypot", "xlogy",
    "nan_to_num", "clamp_min", "clamp_max",
    "isfinite", "isinf", "isposinf", "isneginf", "isclose", "allclose", "equal",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift",
    "is_floating_point", "is_complex",
]


def _input(x, op: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


def _first(input, other, op: str):
    """The first operand as a tensor: a Python number there becomes a 0-d tensor (of ``input op other``'s dtype)."""
    if isinstance(input, Tensor):
        return input
    if isinstance(other, Tensor):
        left = other._left_number(input)
        if left is not None:
            return left
    raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor or Number, not {type(input).__name__}")


# ---- rounding -----------------------------------------------------------------------------------
def floor(input: Tensor) -> Tensor:
    _input(input, "floor")
    return M.Floor.apply(input)


def ceil(input: Tensor) -> Tensor:
    _input(input, "ceil")
    return M.Ceil.apply(input)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001 - torch's name
    _input(input, "round")
    return M.Round.apply(input, decimals)


def trunc(input: Tensor) -> Tensor:
    _input(input, "trunc")
    return M.Trunc.apply(input)


fix = trunc


def frac(input: Tensor) -> Tensor:
    _input(input, "frac")
    return M.Frac.apply(input)


def sgn(input: Tensor) -> Tensor:
    _input(input, "sgn")
    return input.sign()


# ---- trigonometric and hyperbolic, logs and exps ----------------------------------------------------
def acos(input: Tensor) -> Tensor:
    _input(input, "acos")
    return M.Acos.apply(input)


def asin(input: Tensor) -> Tensor:
    _input(input, "asin")
    return M.Asin.apply(input)


def atan(input: Tensor) -> Tensor:
    _input(input, "atan")
    return M.Atan.apply(input)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    _input(input, "atan2")
    return M.Atan2.apply(input, other)


def tan(input: Tensor) -> Tensor:
    _input(input, "tan")
    return M.Tan.apply(input)


def sinh(input: Tensor) -> Tensor:
    _input(input, "sinh")
    return M.Sinh.apply(input)


def cosh(input: Tensor) -> Tensor:
    _input(input, "cosh")
    return M.Cosh.apply(input)


def asinh(input: Tensor) -> Tensor:
    _input(input, "asinh")
    return M.Asinh.apply(input)


def acosh(input: Tensor) -> Tensor:
    _input(input, "acosh")
    return M.Acosh.apply(input)


def atanh(input: Tensor) -> Tensor:
    _input(input, "atanh")
    return M.Atanh.apply(input)


arccos, arcsin, arctan, arctan2, arcsinh, arccosh, arctanh = acos, asin, atan, atan2, asinh, acosh, atanh


def log2(input: Tensor) -> Tensor:
    _input(input, "log2")
    return M.Log2.apply(input)


def log10(input: Tensor) -> Tensor:
    _input(input, "log10")
    return M.Log10.apply(input)


def log1p(input: Tensor) -> Tensor:
    _input(input, "log1p")
    return M.Log1p.apply(input)


def expm1(input: Tensor) -> Tensor:
    _input(input, "expm1")
    return M.Expm1.apply(input)


def exp2(input: Tensor) -> Tensor:
    _input(input, "exp2")
    return M.Exp2.apply(input)


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    _input(input, "logaddexp")
    return M.Logaddexp.apply(input, other)


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    _input(input, "logaddexp2")
    return M.Logaddexp2.apply(input, other)


def reciprocal(input: Tensor) -> Tensor:
    _input(input, "reciprocal")
    return E.Reciprocal.apply(input)


def square(input: Tensor) -> Tensor:
    _input(input, "square")
    return E.Pow.apply(input, 2)


# ---- division, remainders, interpolation --------------------------------------------------------------
def fmod(input: Tensor, other) -> Tensor:
    _input(input, "fmod")
    return M.Fmod.apply(input, other)


def remainder(input, other) -> Tensor:
    return M.Remainder.apply(_first(input, other, "remainder"), other)


def floor_divide(input, other) -> Tensor:
    return M.FloorDivide.apply(_first(input, other, "floor_divide"), other)


def true_divide(input: Tensor, other) -> Tensor:
    _input(input, "true_divide")
    return E.Div.apply(input, other)


def divide(input: Tensor, other, *, rounding_mode: str | None = None) -> Tensor:
    _input(input, "divide")
    return input.div(other, rounding_mode=rounding_mode)


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    _input(input, "lerp")
    return M.Lerp.apply(input, end, weight)


def copysign(input: Tensor, other) -> Tensor:
    _input(input, "copysign")
    return M.Copysign.apply(input, other)


def hypot(input: Tensor, other: Tensor) -> Tensor:
    _input(input, "hypot")
    return M.Hypot.apply(input, other)


def xlogy(input, other) -> Tensor:
    return M.Xlogy.apply(_first(input, other, "xlogy"), other)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    _input(input, "nan_to_num")
    return M.NanToNum.apply(input, nan, posinf, neginf)


def clamp_min(input: Tensor, min) -> Tensor:
    _input(input, "clamp_min")
    return input.clamp_min(min)


def clamp_max(input: Tensor, max) -> Tensor:
    _input(input, "clamp_max")
    return input.clamp_max(max)


# ---- tests ------------------------------------------------------------------------------------------------
def isfinite(input: Tensor) -> Tensor:
    _input(input, "isfinite")
    return M.isfinite(input)


def isinf(input: Tensor) -> Tensor:
    _input(input, "isinf")
    return M.isinf(input)


def isposinf(input: Tensor) -> Tensor:
    _input(input, "isposinf")
    return M.isposinf(input)


def isneginf(input: Tensor) -> Tensor:
    _input(input, "isneginf")
    return M.isneginf(input)


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    _input(input, "isclose")
    return M.isclose(input, other, rtol, atol, equal_nan)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    _input(input, "allclose")
    return input.allclose(other, rtol, atol, equal_nan)


def equal(input: Tensor, other: Tensor) -> bool:
    _input(input, "equal")
    return input.equal(other)


def is_floating_point(input: Tensor) -> bool:
    _input(input, "is_floating_point")
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    _input(input, "is_complex")
    return False


# ---- integer bits ------------------------------------------------------------------------------------------
def bitwise_and(input, other) -> Tensor:
    return M.bitwise(_first(input, other, "bitwise_and"), other, "bitwise_and")


def bitwise_or(input, other) -> Tensor:
    return M.bitwise(_first(input, other, "bitwise_or"), other, "bitwise_or")


def bitwise_xor(input, other) -> Tensor:
    return M.bitwise(_first(input, other, "bitwise_xor"), other, "bitwise_xor")


def bitwise_left_shift(input, other) -> Tensor:
    return M.bitwise(_first(input, other, "bitwise_left_shift"), other, "bitwise_left_shift")


def bitwise_right_shift(input, other) -> Tensor:
    return M.bitwise(_first(input, other, "bitwise_right_shift"), other, "bitwise_right_shift")


def bitwise_not(input: Tensor) -> Tensor:
    _input(input, "bitwise_not")
    return M.bitwise_not(input)


# ---- the in-place functions torch has (``torch.floor_(x)`` is ``x.floor_()``) --------------------------------
def _inplace_function(name: str):
    def fn(input: Tensor, *args, **kwargs) -> Tensor:
        _input(input, name)
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``tl.{name}(t, ...)`` is ``t.{name}(...)``."
    return fn


_INPLACE = ("floor_ ceil_ round_ trunc_ fix_ frac_ acos_ asin_ atan_ arccos_ arcsin_ arctan_ sinh_ cosh_ tan_ asinh_ "
            "acosh_ atanh_ arcsinh_ arccosh_ arctanh_ log2_ log10_ log1p_ expm1_ exp2_ reciprocal_ square_ "
            "nan_to_num_ clamp_min_ clamp_max_ xlogy_").split()
for _n in _INPLACE:
    globals()[_n] = _inplace_function(_n)
__all__ += _INPLACE
del _n
