"""Comparisons and the ops that choose by them: ``==``, ``<``..., logic, ``sign``, ``maximum``/``minimum``,
``clamp`` and ``masked_fill``; and the tests with bool answers: finiteness (``isfinite``, ``isinf``...), closeness
and equality (``isclose``, ``allclose``, ``equal``).

Comparisons, logic and tests are not differentiable: they return bool tensors straight from the backend, with no
node. The others are nodes whose gradients route ``g`` to the input that was chosen (``where``).

>>> import tinygrad_like as tl
>>> x = tl.tensor([1.0, float("inf"), float("nan")])
>>> x.isfinite().tolist(), x.isposinf().tolist(), tl.isclose(x[::2], x[::2], equal_nan=True).tolist()
([True, False, False], [False, True, False], [True, True])
>>> x.equal(x), tl.allclose(tl.tensor([1.0]), tl.tensor([1.0 + 1e-9]))
(False, True)
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import dtypes
from ..autograd.function import Function
from ..dtypes import result_type
from ..layout import broadcast_shapes
from ..tensor_base import TensorBase
from ._math_util import need_tensor, not_implemented, run_binary
from ._util import broadcast_error, check_same_device, free_functions, operands
from .conversion import ConversionMixin
from .elementwise import _Binary, where

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


def _clamp_operands(x, bounds, op: str):
    """The native operands of a clamp with tensor (or number) bounds, promoted to one dtype as torch does."""
    dt = result_type(x, *(b for b in bounds if b is not None))
    if dt is dtypes.bool_:
        raise not_implemented(op, dt)
    be = x._dev.backend
    out = []
    for t in (x, *bounds):
        if t is None:
            out.append(None)
        elif isinstance(t, TensorBase):
            if t._dev is not x._dev:
                check_same_device(x, t, op)
            out.append(t._x if t.dtype is dt else be.cast(t._x, dt))
        else:
            out.append(t)
    return out


class ClampMin(Function):
    """``max(x, min)`` for a tensor ``min``. Gradients: ``x`` where ``x >= min``, ``min`` where ``x < min`` (torch's:
    a tie goes to ``x``)."""

    __slots__ = ()

    def forward(self, x, lo):
        xx, xl = _clamp_operands(x, (lo,), "clamp_min")
        self.save_for_backward(x, lo)
        return run_binary(x, lo, "clamp_min", x._dev.backend.maximum, xx, xl)

    def backward(self, g):
        x, lo = self.saved_tensors
        keep = x >= lo
        nxt = self.next
        return (where(keep, g, 0.0) if nxt[0] is not None else None,
                where(keep, 0.0, g) if nxt[1] is not None else None)


class ClampMax(Function):
    """``min(x, max)`` for a tensor ``max``. Gradients: ``x`` where ``x <= max``, ``max`` where ``x > max``."""

    __slots__ = ()

    def forward(self, x, hi):
        xx, xh = _clamp_operands(x, (hi,), "clamp_max")
        self.save_for_backward(x, hi)
        return run_binary(x, hi, "clamp_max", x._dev.backend.minimum, xx, xh)

    def backward(self, g):
        x, hi = self.saved_tensors
        keep = x <= hi
        nxt = self.next
        return (where(keep, g, 0.0) if nxt[0] is not None else None,
                where(keep, 0.0, g) if nxt[1] is not None else None)


class ClampTensors(Function):
    """``min(max(x, lo), hi)`` with tensor bounds (a number bound comes as a 0-d tensor). Gradients as torch's:
    ``x`` where ``lo <= x <= hi``; ``lo`` where ``x < lo`` and ``lo < hi``; ``hi`` where ``x > hi`` or ``hi < lo``
    (when the bounds cross, the result is ``hi``)."""

    __slots__ = ()

    def forward(self, x, lo, hi):
        xx, xl, xh = _clamp_operands(x, (lo, hi), "clamp")
        self.save_for_backward(x, lo, hi)
        be = x._dev.backend
        try:
            return be.minimum(be.maximum(xx, xl), xh)
        except ValueError:
            try:
                broadcast_shapes(x.shape, lo.shape, hi.shape)
            except ValueError as e:
                raise RuntimeError(f"clamp: {e}") from None
            raise

    def backward(self, g):
        x, lo, hi = self.saved_tensors
        nxt = self.next
        ge, le = x >= lo, x <= hi
        return ((where(ge & le, g, 0.0) if nxt[0] is not None else None),
                (where(~ge & (lo < hi), g, 0.0) if nxt[1] is not None else None),
                (where(~le | (hi < lo), g, 0.0) if nxt[2] is not None else None))


class CompareInto(Function):
    """An in-place comparison or logic op (``x.eq_(y)``, ``x.logical_and_(y)``): the bool answer in ``x``'s dtype.
    Its gradient is zero (torch's: ``EqBackward0`` and kin give zeros)."""

    __slots__ = ()

    def forward(self, x, other, prim):
        if prim.startswith("logical_"):
            xa = x._dev.backend.cast(x._x, dtypes.bool_)
            xb = (x._dev.backend.cast(other._x, dtypes.bool_) if isinstance(other, TensorBase) else bool(other))
        else:
            xa, xb, _ = operands(x, other, prim)
        try:
            r = getattr(x._dev.backend, prim)(xa, xb)
        except ValueError:
            raise broadcast_error(x, other, prim) from None
        return x._dev.backend.cast(r, x.dtype)

    def backward(self, g):
        nxt = self.next
        return (g.new_zeros(g.shape), g.new_zeros(g.shape) if nxt[1] is not None else None, None)


# one node class per op, named as torch's (``x.le_(1)``'s grad_fn is ``LeBackward0``)
_INTO = {prim: type("".join(w.capitalize() for w in prim.split("_")), (CompareInto,), {"__slots__": ()})
         for prim in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")}
for _cls in _INTO.values():
    _cls.__module__ = __name__
del _cls


def _compare_into(prim: str):
    node = _INTO[prim]

    def fn(x, other):
        return node.apply(x, other, prim)
    return fn


def _logical_not_into(x, _):
    be = x._dev.backend
    return x._wrap(be.cast(be.logical_not(be.cast(x._x, dtypes.bool_)), x.dtype), x._dev)


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
    """Tensor methods that compare and choose: operators ``== != < <= > >=``, logic, ``sign``, ``isnan``,
    ``clamp``, ``maximum`` and ``minimum``; finiteness, closeness and equality tests."""

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

    greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne

    # in place: the answer (1 or 0) written in the tensor's own dtype, as torch's
    def eq_(self, other) -> Tensor:
        return self._inplace("eq_", _compare_into("eq"), other)

    def ne_(self, other) -> Tensor:
        return self._inplace("ne_", _compare_into("ne"), other)

    def lt_(self, other) -> Tensor:
        return self._inplace("lt_", _compare_into("lt"), other)

    def le_(self, other) -> Tensor:
        return self._inplace("le_", _compare_into("le"), other)

    def gt_(self, other) -> Tensor:
        return self._inplace("gt_", _compare_into("gt"), other)

    def ge_(self, other) -> Tensor:
        return self._inplace("ge_", _compare_into("ge"), other)

    greater_, greater_equal_, less_, less_equal_, not_equal_ = gt_, ge_, lt_, le_, ne_

    def logical_and_(self, other) -> Tensor:
        need_tensor(other, "logical_and_")  # (a number is refused, as torch's)
        return self._inplace("logical_and_", _compare_into("logical_and"), other)

    def logical_or_(self, other) -> Tensor:
        need_tensor(other, "logical_or_")  # (a number is refused, as torch's)
        return self._inplace("logical_or_", _compare_into("logical_or"), other)

    def logical_xor_(self, other) -> Tensor:
        need_tensor(other, "logical_xor_")  # (a number is refused, as torch's)
        return self._inplace("logical_xor_", _compare_into("logical_xor"), other)

    def logical_not_(self) -> Tensor:
        return self._inplace("logical_not_", _logical_not_into, None)

    def clip_(self, min=None, max=None) -> Tensor:
        return self.clamp_(min, max)

    def isreal(self) -> Tensor:
        """True everywhere: there are no complex tensors here."""
        return self._full_like(True, dtypes.bool_)

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
        if isinstance(min, TensorBase) or isinstance(max, TensorBase):  # (torch's gradients: ClampMin & co. above)
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
            raise broadcast_error(self, other, "isclose") from None
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


# ---- free functions ---------------------------------------------------------------------------------
__all__ = ["isfinite", "isinf", "isposinf", "isneginf", "isclose", "allclose", "equal", "is_floating_point",
           "is_complex", "greater", "greater_equal", "less", "less_equal", "not_equal", "clamp_", "clip_",
           "isreal"]  # (what ``from tinygrad_like import *`` takes from here; the rest below are tl.<name> too)

(eq, ne, lt, le, gt, ge, logical_not, logical_and, logical_or, logical_xor, sign, isnan, clamp, clip, maximum,
 minimum) = free_functions(ComparisonMixin, "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and",
                           "logical_or", "logical_xor", "sign", "isnan", "clamp", "clip", "maximum", "minimum")
(isfinite, isinf, isposinf, isneginf, isclose, allclose, equal) = free_functions(
    ComparisonMixin, "isfinite", "isinf", "isposinf", "isneginf", "isclose", "allclose", "equal")
is_floating_point, is_complex = free_functions(ConversionMixin, "is_floating_point", "is_complex")
greater, greater_equal, less, less_equal, not_equal, isreal = free_functions(
    ComparisonMixin, "greater", "greater_equal", "less", "less_equal", "not_equal", "isreal")


def clamp_(input, min=None, max=None) -> Tensor:
    """``clamp`` written into ``input``."""
    need_tensor(input, "clamp_", "input", 1)
    return input.clamp_(min, max)


def clip_(input, min=None, max=None) -> Tensor:
    """``clip`` (``clamp``) written into ``input``."""
    need_tensor(input, "clip_", "input", 1)
    return input.clamp_(min, max)
