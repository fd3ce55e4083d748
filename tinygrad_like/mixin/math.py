"""Tensor methods: rounding, trigonometry, logs, remainders, finite/inf/nan tests, bitwise ops."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..autograd import grad_mode
from ..ops import elementwise as E
from ..ops import math as M
from ..ops._util import is_number
from ..ops.comparison import Clamp
from ..tensor_base import TensorBase

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

_ROUNDING_MODES = (None, "trunc", "floor")


# what the in-place variants run on (their ``_inplace`` calls ``fn(x, other)``); plain functions, no closures
def _call(x, name: str):
    return getattr(x, name)()


def _bitwise_and(x, other):
    return M.bitwise(x, other, "bitwise_and")


def _bitwise_or(x, other):
    return M.bitwise(x, other, "bitwise_or")


def _bitwise_xor(x, other):
    return M.bitwise(x, other, "bitwise_xor")


def _left_shift(x, other):
    return M.bitwise(x, other, "bitwise_left_shift")


def _right_shift(x, other):
    return M.bitwise(x, other, "bitwise_right_shift")


def _floor_divide(x, other):
    return x.floor_divide(other)


def _pow(x, exponent):
    return x.pow(exponent)


def _grad_operand(t1, t2):
    """Of two operands, the one ``_inplace`` should look at to decide whether grad flows (one that requires it)."""
    return t2 if isinstance(t2, TensorBase) and t2.requires_grad else t1


def _clamp_min(x, bound):
    return x.clamp_min(bound)


def _clamp_max(x, bound):
    return x.clamp_max(bound)


def _not_operand(other) -> bool:
    """Neither a tensor nor a number: the operator returns NotImplemented (Python then tries the other side)."""
    return not isinstance(other, TensorBase) and not is_number(other)


class MathMixin:
    """Tensor methods: rounding, trigonometry, logs, remainders, finite/inf/nan tests, bitwise ops."""

    __slots__ = ()

    # ---- rounding (zero gradient; integers unchanged) ---------------------------------------------
    def floor(self) -> Tensor:
        return M.Floor.apply(self)

    def ceil(self) -> Tensor:
        return M.Ceil.apply(self)

    def trunc(self) -> Tensor:
        return M.Trunc.apply(self)

    fix = trunc

    def round(self, *, decimals: int = 0) -> Tensor:
        """Round half to even (``round(2.5) == 2``), to ``decimals`` places, as torch's."""
        return M.Round.apply(self, decimals)

    def frac(self) -> Tensor:
        """``x - trunc(x)``: the fractional part, with the sign of ``x``."""
        return M.Frac.apply(self)

    def sgn(self) -> Tensor:
        """``sign`` (they differ only for complex numbers, which tinygrad_like has none of)."""
        return self.sign()

    # ---- trigonometric and hyperbolic ------------------------------------------------------------
    def acos(self) -> Tensor:
        return M.Acos.apply(self)

    def asin(self) -> Tensor:
        return M.Asin.apply(self)

    def atan(self) -> Tensor:
        return M.Atan.apply(self)

    def tan(self) -> Tensor:
        return M.Tan.apply(self)

    def sinh(self) -> Tensor:
        return M.Sinh.apply(self)

    def cosh(self) -> Tensor:
        return M.Cosh.apply(self)

    def asinh(self) -> Tensor:
        return M.Asinh.apply(self)

    def acosh(self) -> Tensor:
        return M.Acosh.apply(self)

    def atanh(self) -> Tensor:
        return M.Atanh.apply(self)

    def atan2(self, other) -> Tensor:
        """The angle of the point ``(other, self)``, in ``[-pi, pi]``."""
        return M.Atan2.apply(self, other)

    arccos, arcsin, arctan, arcsinh, arccosh, arctanh, arctan2 = acos, asin, atan, asinh, acosh, atanh, atan2

    # ---- logs and exps ---------------------------------------------------------------------------
    def log2(self) -> Tensor:
        return M.Log2.apply(self)

    def log10(self) -> Tensor:
        return M.Log10.apply(self)

    def log1p(self) -> Tensor:
        """``log(1 + x)``, accurate for small ``x``."""
        return M.Log1p.apply(self)

    def expm1(self) -> Tensor:
        """``exp(x) - 1``, accurate for small ``x``."""
        return M.Expm1.apply(self)

    def exp2(self) -> Tensor:
        return M.Exp2.apply(self)

    def logaddexp(self, other) -> Tensor:
        """``log(exp(self) + exp(other))`` without overflow."""
        return M.Logaddexp.apply(self, other)

    def logaddexp2(self, other) -> Tensor:
        return M.Logaddexp2.apply(self, other)

    def square(self) -> Tensor:
        """``self ** 2`` (as torch: a Pow node; bool gives int64)."""
        return E.Pow.apply(self, 2)

    # ---- division, remainders, interpolation ---------------------------------------------------------
    def div(self, other, *, rounding_mode: str | None = None) -> Tensor:
        """True division, or the quotient rounded toward zero (``'trunc'``) or minus infinity (``'floor'``), whose
        gradient is zero (torch's). Integer division by zero with a rounding mode raises, as in torch."""
        if rounding_mode is None:
            return E.Div.apply(self, other)
        if rounding_mode not in _ROUNDING_MODES:
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                               f"{rounding_mode!r}")
        return M.DivRounded.apply(self, other, rounding_mode)

    divide = div

    def true_divide(self, other) -> Tensor:
        return E.Div.apply(self, other)

    def floor_divide(self, other) -> Tensor:
        """``self // other`` (rounded toward minus infinity). As in torch, its derivative is not implemented: use
        ``div(other, rounding_mode='floor')`` in a graph."""
        return M.FloorDivide.apply(self, other)

    def fmod(self, other) -> Tensor:
        """C's remainder: ``self - trunc(self / other) * other``, with the sign of ``self``."""
        return M.Fmod.apply(self, other)

    def remainder(self, other) -> Tensor:
        """Python's ``%``: ``self - floor(self / other) * other``, with the sign of ``other``."""
        return M.Remainder.apply(self, other)

    def __floordiv__(self, other):
        return NotImplemented if _not_operand(other) else M.FloorDivide.apply(self, other)

    def __rfloordiv__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else M.FloorDivide.apply(left, self)

    def __mod__(self, other):
        return NotImplemented if _not_operand(other) else M.Remainder.apply(self, other)

    def __rmod__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else M.Remainder.apply(left, self)

    def lerp(self, end, weight) -> Tensor:
        """``self + weight * (end - self)``; ``weight`` a number or a tensor (all three broadcast)."""
        return M.Lerp.apply(self, end, weight)

    def copysign(self, other) -> Tensor:
        """``|self|`` with the sign of ``other`` (a tensor or a number; -0.0 is negative)."""
        return M.Copysign.apply(self, other)

    def hypot(self, other) -> Tensor:
        """``sqrt(self**2 + other**2)`` without overflow."""
        return M.Hypot.apply(self, other)

    def xlogy(self, other) -> Tensor:
        """``self * log(other)``, 0 where ``self == 0``."""
        return M.Xlogy.apply(self, other)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        """NaN, +inf, -inf replaced by ``nan``, ``posinf``, ``neginf`` (None: the dtype's extreme finite values)."""
        return M.NanToNum.apply(self, nan, posinf, neginf)

    def clamp_min(self, min) -> Tensor:
        """``clamp(min=min)``; ``min`` a number or a tensor (broadcast)."""
        if isinstance(min, TensorBase):
            return M.ClampMin.apply(self, min)
        return Clamp.apply(self, min, None)

    def clamp_max(self, max) -> Tensor:
        if isinstance(max, TensorBase):
            return M.ClampMax.apply(self, max)
        return Clamp.apply(self, None, max)

    # ---- tests: finite, inf, close, equal (bool results, never differentiable) -------------------------
    def isfinite(self) -> Tensor:
        return M.isfinite(self)

    def isinf(self) -> Tensor:
        return M.isinf(self)

    def isposinf(self) -> Tensor:
        return M.isposinf(self)

    def isneginf(self) -> Tensor:
        return M.isneginf(self)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
        """Elementwise ``|self - other| <= atol + rtol * |other|`` (a bool tensor)."""
        return M.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        """Whether ``isclose`` holds everywhere: a Python bool."""
        return bool(M.isclose(self, other, rtol, atol, equal_nan).all().item())

    def equal(self, other) -> bool:
        """Same shape and same values (after type promotion; NaN is unequal to itself): a Python bool."""
        M._need_tensor(other, "equal")
        if self.shape != other.shape:
            return False
        return bool(self._cmp(other, "eq").all().item())

    # ---- integer bits ------------------------------------------------------------------------------------
    def bitwise_and(self, other) -> Tensor:
        return M.bitwise(self, other, "bitwise_and")

    def bitwise_or(self, other) -> Tensor:
        return M.bitwise(self, other, "bitwise_or")

    def bitwise_xor(self, other) -> Tensor:
        return M.bitwise(self, other, "bitwise_xor")

    def bitwise_left_shift(self, other) -> Tensor:
        """``self << other``; shifting by the width or more, or by a negative amount, gives 0 (as torch)."""
        return M.bitwise(self, other, "bitwise_left_shift")

    def bitwise_right_shift(self, other) -> Tensor:
        """``self >> other`` (arithmetic: the sign fills in); by the width or more: 0 or -1 (as torch)."""
        return M.bitwise(self, other, "bitwise_right_shift")

    def bitwise_not(self) -> Tensor:
        return M.bitwise_not(self)

    def __and__(self, other):
        return NotImplemented if _not_operand(other) else M.bitwise(self, other, "bitwise_and")

    def __or__(self, other):
        return NotImplemented if _not_operand(other) else M.bitwise(self, other, "bitwise_or")

    def __xor__(self, other):
        return NotImplemented if _not_operand(other) else M.bitwise(self, other, "bitwise_xor")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __lshift__(self, other):
        return NotImplemented if _not_operand(other) else M.bitwise(self, other, "bitwise_left_shift")

    def __rshift__(self, other):
        return NotImplemented if _not_operand(other) else M.bitwise(self, other, "bitwise_right_shift")

    def __rlshift__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else M.bitwise(left, self, "bitwise_left_shift")

    def __rrshift__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else M.bitwise(left, self, "bitwise_right_shift")

    def __invert__(self) -> Tensor:
        if self.dtype.is_floating_point:
            raise TypeError(f"~ (operator.invert) is only implemented on integer and Boolean-type tensors, got "
                            f"{self.dtype.name} (as in torch); for a mask, compare first (x > 0)")
        return M.bitwise_not(self)

    # ---- in place (same versioning and checks as add_, mul_: see ops/inplace.py) ------------------------
    def floor_(self) -> Tensor:
        return self._inplace("floor_", _call, "floor")

    def ceil_(self) -> Tensor:
        return self._inplace("ceil_", _call, "ceil")

    def trunc_(self) -> Tensor:
        return self._inplace("trunc_", _call, "trunc")

    fix_ = trunc_

    def round_(self, *, decimals: int = 0) -> Tensor:
        return self._inplace("round_", lambda x, _: M.Round.apply(x, decimals), None)

    def frac_(self) -> Tensor:
        return self._inplace("frac_", _call, "frac")

    def sign_(self) -> Tensor:
        return self._inplace("sign_", _call, "sign")

    sgn_ = sign_

    def acos_(self) -> Tensor:
        return self._inplace("acos_", _call, "acos")

    def asin_(self) -> Tensor:
        return self._inplace("asin_", _call, "asin")

    def atan_(self) -> Tensor:
        return self._inplace("atan_", _call, "atan")

    def tan_(self) -> Tensor:
        return self._inplace("tan_", _call, "tan")

    def sinh_(self) -> Tensor:
        return self._inplace("sinh_", _call, "sinh")

    def cosh_(self) -> Tensor:
        return self._inplace("cosh_", _call, "cosh")

    def asinh_(self) -> Tensor:
        return self._inplace("asinh_", _call, "asinh")

    def acosh_(self) -> Tensor:
        return self._inplace("acosh_", _call, "acosh")

    def atanh_(self) -> Tensor:
        return self._inplace("atanh_", _call, "atanh")

    def atan2_(self, other) -> Tensor:
        return self._inplace("atan2_", M.Atan2.apply, other)

    arccos_, arcsin_, arctan_, arcsinh_, arccosh_, arctanh_, arctan2_ = (acos_, asin_, atan_, asinh_, acosh_,
                                                                           atanh_, atan2_)

    def log2_(self) -> Tensor:
        return self._inplace("log2_", _call, "log2")

    def log10_(self) -> Tensor:
        return self._inplace("log10_", _call, "log10")

    def log1p_(self) -> Tensor:
        return self._inplace("log1p_", _call, "log1p")

    def expm1_(self) -> Tensor:
        return self._inplace("expm1_", _call, "expm1")

    def exp2_(self) -> Tensor:
        return self._inplace("exp2_", _call, "exp2")

    def reciprocal_(self) -> Tensor:
        return self._inplace("reciprocal_", _call, "reciprocal")

    def square_(self) -> Tensor:
        return self._inplace("square_", _call, "square")

    def fmod_(self, other) -> Tensor:
        return self._inplace("fmod_", M.Fmod.apply, other)

    def remainder_(self, other) -> Tensor:
        return self._inplace("remainder_", M.Remainder.apply, other)

    def floor_divide_(self, other) -> Tensor:
        return self._inplace("floor_divide_", _floor_divide, other)

    def true_divide_(self, other) -> Tensor:
        return self.div_(other)

    def divide_(self, other, *, rounding_mode: str | None = None) -> Tensor:
        return self.div_(other, rounding_mode=rounding_mode)

    def __ifloordiv__(self, other):
        return self.floor_divide_(other)

    def __imod__(self, other):
        return self.remainder_(other)

    def lerp_(self, end, weight) -> Tensor:
        if isinstance(weight, TensorBase) and weight.requires_grad and _grad_mode.enabled:
            # (the weight is the operand that makes this a graph op: _inplace decides on its `other`)
            return self._inplace("lerp_", lambda x, w: M.Lerp.apply(x, end, w), weight)
        return self._inplace("lerp_", lambda x, e: M.Lerp.apply(x, e, weight), end)

    def copysign_(self, other) -> Tensor:
        return self._inplace("copysign_", M.Copysign.apply, other)

    def hypot_(self, other) -> Tensor:
        return self._inplace("hypot_", M.Hypot.apply, other)

    def xlogy_(self, other) -> Tensor:
        return self._inplace("xlogy_", M.Xlogy.apply, other)

    def nan_to_num_(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        return self._inplace("nan_to_num_", lambda x, _: M.NanToNum.apply(x, nan, posinf, neginf), None)

    def clamp_min_(self, min) -> Tensor:
        return self._inplace("clamp_min_", _clamp_min, min)

    def clamp_max_(self, max) -> Tensor:
        return self._inplace("clamp_max_", _clamp_max, max)

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
        return self._inplace("bitwise_not_", _call, "bitwise_not")

    __iand__, __ior__, __ixor__ = bitwise_and_, bitwise_or_, bitwise_xor_
    __ilshift__, __irshift__ = bitwise_left_shift_, bitwise_right_shift_

    # ---- the rest of torch's in-place unary functions (exp_, relu_, ...: see _INPLACE_UNARY below) -------------
    def pow_(self, exponent) -> Tensor:
        return self._inplace("pow_", _pow, exponent)

    # ---- fused-looking arithmetic that optimizers and learners write ---------------------------------------
    def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
        """``self + value * tensor1 * tensor2`` (broadcast, the three promoted together), as ``torch.addcmul``:
        ``value`` takes the result's dtype (0.5 is 0 for an integer result). See ``ops.math._AddC``."""
        return M.Addcmul.apply(self, tensor1, tensor2, value)

    def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
        """``self + value * tensor1 / tensor2``; integer ``tensor1`` and ``tensor2`` are refused, as torch does."""
        return M.Addcdiv.apply(self, tensor1, tensor2, value)

    def addcmul_(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
        return self._inplace("addcmul_", lambda x, _: x.addcmul(tensor1, tensor2, value=value),
                             _grad_operand(tensor1, tensor2))

    def addcdiv_(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
        return self._inplace("addcdiv_", lambda x, _: x.addcdiv(tensor1, tensor2, value=value),
                             _grad_operand(tensor1, tensor2))

    def heaviside(self, values: Tensor) -> Tensor:
        """0 where ``self < 0``, ``values`` where ``self == 0``, 1 where ``self > 0``. Not differentiable (torch's
        result requires grad and its backward raises; so does ours)."""
        if not isinstance(values, TensorBase):
            raise TypeError(f"heaviside(): argument 'values' must be Tensor, not {type(values).__name__}")
        if values.dtype is not self.dtype:
            raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes "
                               f"({self.dtype.name} and {values.dtype.name}).")
        from ..ops.statistics import NoDerivative
        with grad_mode.no_grad():
            out = E.where(self == 0, values, (self > 0).to(self.dtype))
        if _grad_mode.enabled and (self.requires_grad or values.requires_grad):
            return NoDerivative.apply(self, out._x, "heaviside", values)
        return out

    def heaviside_(self, values: Tensor) -> Tensor:
        return self._inplace("heaviside_", lambda x, v: x.heaviside(v), values)

    def logit(self, eps: float | None = None) -> Tensor:
        """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given (its gradient is then
        0 outside that range, as torch's)."""
        return M.Logit.apply(self, eps)

    def logit_(self, eps: float | None = None) -> Tensor:
        return self._inplace("logit_", lambda x, _: x.logit(eps), None)

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
        from ..creation import empty
        return empty(*size, dtype=self.dtype if dtype is None else dtype,
                     device=self._dev if device is None else device, requires_grad=requires_grad)

    def __format__(self, format_spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats as its Python number, any other as ``str`` (torch's rule, which a
        format spec then refuses with TypeError)."""
        from ..tensor import Tensor
        if self.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)


# exp_, log_, relu_, ...: each writes its out-of-place op's result into the tensor, with _inplace's checks, version bump
# and autograd history (as floor_, acos_ and the rest above)
_INPLACE_UNARY = ("exp", "log", "sqrt", "rsqrt", "relu", "sigmoid", "tanh", "abs", "neg", "sin", "cos", "erf")


def _inplace_unary(name: str):
    def method(self) -> Tensor:
        return self._inplace(name + "_", _call, name)
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"``{name}`` written into this tensor (a version bump; recorded for autograd)."
    return method


for _name in _INPLACE_UNARY:
    setattr(MathMixin, _name + "_", _inplace_unary(_name))
MathMixin.absolute_, MathMixin.negative_ = MathMixin.abs_, MathMixin.neg_
del _name
