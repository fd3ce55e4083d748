"""The math family's ops: rounding, inverse trigonometric and hyperbolic functions, logs and exps, remainders and
rounded division, ``lerp``, ``copysign``, ``hypot``, ``xlogy``, ``nan_to_num``, tensor-bounded clamps, and the
non-differentiable ones (finiteness tests, ``isclose``, integer bit operations).

Each differentiable op is one :class:`Function` whose forward runs the inputs' backend primitives and whose
backward is written with Tensor ops, with torch's formulas (``tools/autograd/derivatives.yaml``), so that
``create_graph=True`` differentiates them again. Integer inputs follow torch: the transcendental functions compute
in the default float, the rounding functions return the integers unchanged, integer division by zero raises.
"""

from __future__ import annotations

import math
import numbers

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..dtypes import result_type
from ..tensor_base import TensorBase
from ._util import as_float, broadcast_error, check_same_device, float_operands, in_float32, operands, rounded
from .elementwise import where

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


# ---- helpers ------------------------------------------------------------------------------------
def _not_implemented(op: str, dt) -> NotImplementedError:
    """What torch raises for a dtype an op has no kernel for (e.g. ``"floor" not implemented for 'Bool'``)."""
    return NotImplementedError(f"\"{op}\" not implemented for '{dt.name}' tensors (as in torch)")


def _need_tensor(x, op: str, arg: str = "other", pos: int = 2) -> None:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _run(a, b, op: str, fn, xa, xb):
    """``fn(xa, xb)`` with NumPy's broadcasting error turned into torch's RuntimeError, naming the shapes."""
    try:
        return fn(xa, xb)
    except ValueError:
        raise broadcast_error(a, b, op) from None


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


def _float_only(x, op: str) -> None:
    if not x.dtype.is_floating_point:
        raise _not_implemented(op, x.dtype)


def _zeros(g):
    """A zero gradient (torch's ``zeros_like(grad)``; the engine sums it to the input's shape)."""
    return g.new_zeros(g.shape)


# ---- rounding: zero gradient (torch's), integers unchanged ------------------------------------------
class _Rounding(Function):
    """floor, ceil, trunc: integers come back unchanged (a copy), bool is refused, the gradient is zero."""

    __slots__ = ()

    def _integer(self, x, op: str):
        if x.dtype is dtypes.bool_:
            raise _not_implemented(op, x.dtype)
        return x._dev.backend.copy(x._x)

    def backward(self, g):
        return (_zeros(g),)


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
                raise _not_implemented("round with decimals", x.dtype)
            return self._integer(x, "round")
        return x._dev.backend.round(x._x, decimals)

    def backward(self, g):
        return _zeros(g), None


class Frac(Function):
    """``x - trunc(x)`` (torch's formula: frac(inf) is nan); gradient 1."""

    __slots__ = ()

    def forward(self, x):
        _float_only(x, "frac")
        be = x._dev.backend
        return be.sub(x._x, be.trunc(x._x))

    def backward(self, g):
        return (g,)


class Logit(Function):
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given. Gradient ``g / (x (1 - x))``;
    outside ``[eps, 1 - eps]`` it is 0, and with no eps it is NaN outside ``[0, 1]`` (torch's logit_backward).

    Computed as torch's CPU kernel does, step by step in the result's dtype: ``eps`` converted to it, the upper
    bound ``1 - eps`` rounded there, then ``1 - p``, the quotient and the log each rounded to it (float16 and
    bfloat16 included: its kernel rounds each step for them, unlike most ops, which round once)."""

    __slots__ = ("eps",)

    def forward(self, x, eps):
        self.eps = eps
        self.save_for_backward(x)
        be = x._dev.backend
        p = as_float(x)
        t = (x.dtype if x.dtype.is_floating_point else dtypes.default_float).np.type  # (a NumPy scalar keeps the dtype)
        if eps is not None:
            lo = t(eps)
            p = be.minimum(be.maximum(p, lo), t(1) - lo)  # (not NumPy's clip: it has no bfloat16 loop)
        return be.log(be.div(p, be.sub(t(1), p)))

    def backward(self, g):
        (x,) = self.saved_tensors
        if self.eps is None:
            return (g / (x * (1 - x))).masked_fill((x < 0.0) | (x > 1.0), math.nan), None
        t = (x.dtype if x.dtype.is_floating_point else dtypes.default_float).np.type
        lo = t(self.eps)  # (the bounds forward clamped to; a NaN input is outside them: 0, as torch's)
        return where((x >= float(lo)) & (x <= float(t(1) - lo)), g / (x * (1 - x)), 0.0), None


# ---- inverse trigonometric and hyperbolic -------------------------------------------------------
class Acos(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.acos(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * -((-x * x + 1).rsqrt()),)


class Asin(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.asin(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * (-x * x + 1).rsqrt(),)


class Atan(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.atan(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g / (x * x + 1),)


class Tan(Function):
    """Keeps its output: d/dx tan x = 1 + tan(x)**2 (torch's formula)."""

    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.tan(as_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (g * (y * y + 1),)


class Sinh(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.sinh(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * x.cosh(),)


class Cosh(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.cosh(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * x.sinh(),)


class Asinh(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.asinh(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * (x * x + 1).rsqrt(),)


class Acosh(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.acosh(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * (x * x - 1).rsqrt(),)


class Atanh(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.atanh(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g / (1 - x * x),)


# ---- logs and exps ------------------------------------------------------------------------------
class Log2(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.log2(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g / (x * _LN2),)


class Log10(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.log10(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g / (x * _LN10),)


class Log1p(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.log1p(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g / (x + 1),)


class Expm1(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.expm1(as_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (g * (y + 1),)


class Exp2(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.exp2(as_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (g * y * _LN2,)


class _FloatBinary(Function):
    """A binary op of two tensors computed in floating point only (logaddexp, hypot: torch has no integer kernel)."""

    __slots__ = ()

    def _forward(self, a, b, op: str):
        _need_tensor(b, op)
        xa, xb, dt = operands(a, b, op)
        if not dt.is_floating_point:
            raise _not_implemented(op, dt)
        return xa, xb


class Logaddexp(_FloatBinary):
    """``log(exp(a) + exp(b))`` without overflow; gradients ``g / (1 + exp(b - a))`` and symmetric (torch's)."""

    __slots__ = ()

    def forward(self, a, b):
        xa, xb = self._forward(a, b, "logaddexp")
        self.save_for_backward(a, b)
        return _run(a, b, "logaddexp", a._dev.backend.logaddexp, xa, xb)

    def backward(self, g):
        a, b = self.saved_tensors
        nxt = self.next
        return (g / ((b - a).exp() + 1) if nxt[0] is not None else None,
                g / ((a - b).exp() + 1) if nxt[1] is not None else None)


class Logaddexp2(_FloatBinary):
    __slots__ = ()

    def forward(self, a, b):
        xa, xb = self._forward(a, b, "logaddexp2")
        self.save_for_backward(a, b)
        return _run(a, b, "logaddexp2", a._dev.backend.logaddexp2, xa, xb)

    def backward(self, g):
        a, b = self.saved_tensors
        nxt = self.next
        return (g / (2 ** (b - a) + 1) if nxt[0] is not None else None,
                g / (2 ** (a - b) + 1) if nxt[1] is not None else None)


class Hypot(_FloatBinary):
    """``sqrt(a**2 + b**2)``; keeps its output: gradients ``g * a / y``, ``g * b / y`` (torch's)."""

    __slots__ = ()
    save_output = True

    def forward(self, a, b):
        xa, xb = self._forward(a, b, "hypot")
        self.save_for_backward(a, b)
        return _run(a, b, "hypot", a._dev.backend.hypot, xa, xb)

    def backward(self, g):
        a, b, y = self.saved_tensors
        nxt = self.next
        return (g * a / y if nxt[0] is not None else None, g * b / y if nxt[1] is not None else None)


class Atan2(Function):
    """``atan2(a, b)``, the angle of the point (b, a); integer inputs compute in the default float.
    Gradients ``g * b / (a**2 + b**2)`` and ``-g * a / (a**2 + b**2)``, 0 where both are 0 (torch's)."""

    __slots__ = ()

    def forward(self, a, b):
        _need_tensor(b, "atan2")
        xa, xb, _ = float_operands(a, b, "atan2")
        self.save_for_backward(a, b)
        return _run(a, b, "atan2", a._dev.backend.atan2, xa, xb)

    def backward(self, g):
        a, b = self.saved_tensors
        a = a if a.dtype is g.dtype else a.to(g.dtype)
        b = b if b.dtype is g.dtype else b.to(g.dtype)
        den = a * a + b * b
        recip = where(den == 0, 0.0, den.reciprocal())
        nxt = self.next
        return (g * b * recip if nxt[0] is not None else None, g * -a * recip if nxt[1] is not None else None)


# ---- remainders and rounded division ----------------------------------------------------------------
class _Remainder(Function):
    """fmod and remainder: ``a - q * b`` with ``q`` a rounded quotient; gradient ``g`` for ``a``, ``-g * q`` for
    ``b`` (torch's). ``b`` may be a Python number; integer division by zero raises, as in torch."""

    __slots__ = ("value",)
    mode = ""

    def _forward(self, a, b, op: str):
        xa, xb, dt = operands(a, b, op)
        if dt is dtypes.bool_:
            raise _not_implemented(op, dt)
        _check_divisor(a, b, xb, dt)
        if isinstance(b, TensorBase):
            self.value = None
            if _grad_mode.enabled and b.requires_grad:  # (only b's gradient reads the inputs)
                self.save_for_backward(a, b)
        else:
            self.value = b
        return _run(a, b, op, getattr(a._dev.backend, op), xa, xb)

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
        raise _not_implemented(f"div with rounding_mode={mode!r}", dt)
    _check_divisor(a, b, xb, dt)
    be = a._dev.backend
    return _run(a, b, "div", be.floor_divide if op == "floor_divide" else be.trunc_divide, xa, xb)


class DivRounded(Function):
    """``div(a, b, rounding_mode='trunc' | 'floor')``: the quotient rounded; its gradient is zero for both inputs
    (torch's, which differentiates the rounding as a step function)."""

    __slots__ = ("rounding_mode",)

    def forward(self, a, b, rounding_mode):
        self.rounding_mode = rounding_mode
        return _rounded_quotient(a, b, rounding_mode)

    def backward(self, g):
        return _zeros(g), (_zeros(g) if self.next[1] is not None else None), None


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


# ---- lerp, copysign, xlogy, nan_to_num ----------------------------------------------------------------
def _is_small(w) -> bool:
    return abs(w) < 0.5


class Lerp(Function):
    """``start + weight * (end - start)``, computed as torch does: ``end - (end - start) * (1 - weight)`` where
    ``|weight| >= 0.5`` (exact at weight 1). ``weight`` is a tensor or a Python number. Gradients: ``g * (1 - w)``,
    ``g * w`` and ``g * (end - start)`` (torch's)."""

    __slots__ = ("value",)

    def forward(self, start, end, weight):
        _need_tensor(end, "lerp", "end")
        dt = start.dtype
        if not dt.is_floating_point:
            raise _not_implemented("lerp", dt)
        if end.dtype is not dt:
            raise RuntimeError(f"lerp: expected dtype {dt.name} for `end` but got dtype {end.dtype.name} (as in torch, "
                               f"start and end must have one dtype)")
        be = start._dev.backend
        if end._dev is not start._dev:
            check_same_device(start, end, "lerp")
        xa, xb = in_float32(start), in_float32(end)  # (bfloat16 in float32, rounded once: torch's kernel)
        try:
            d = be.sub(xb, xa)
            if not isinstance(weight, TensorBase):
                if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                    raise TypeError(f"lerp(): argument 'weight' must be Tensor or Number, not "
                                    f"{type(weight).__name__}")
                self.value = weight
                return rounded(start, be.add(xa, be.mul(d, weight)) if _is_small(weight) else
                               be.sub(xb, be.mul(d, 1 - weight)))
            self.value = None
            if weight._dev is not start._dev:
                check_same_device(start, weight, "lerp")
            xw = weight._x
            if weight.dtype is not dt:
                if weight.ndim:
                    raise RuntimeError(f"lerp: expected dtype {dt.name} for `weight` but got dtype "
                                       f"{weight.dtype.name} (as in torch; a 0-d weight may have another dtype)")
                xw = be.cast(xw, dt)
            if _grad_mode.enabled:
                need_w = start.requires_grad or end.requires_grad
                self.save_for_backward(start if weight.requires_grad else None, end if weight.requires_grad else None,
                                       weight if need_w else None)
            small = be.lt(be.abs(xw), 0.5)
            return rounded(start, be.where(small, be.add(xa, be.mul(xw, d)), be.sub(xb, be.mul(d, be.sub(1, xw)))))
        except ValueError:
            from ..layout import broadcast_shapes
            shapes = [start.shape, end.shape] + ([weight.shape] if isinstance(weight, TensorBase) else [])
            try:
                broadcast_shapes(*shapes)
            except ValueError as e:
                raise RuntimeError(f"lerp: {e}") from None
            raise

    def backward(self, g):
        nxt = self.next
        w = self.value
        if w is not None:
            return (g * (1 - w) if nxt[0] is not None else None), (g * w if nxt[1] is not None else None), None
        start, end, weight = self.saved_tensors
        if weight is not None and weight.dtype is not g.dtype:
            weight = weight.to(g.dtype)
        return ((g * (1 - weight) if nxt[0] is not None else None), (g * weight if nxt[1] is not None else None),
                (g * (end - start) if nxt[2] is not None else None))


_LOWP = (dtypes.float16, dtypes.bfloat16)


class _AddC(Function):
    """``x + value * t1 * t2`` (``addcmul``) and ``x + value * t1 / t2`` (``addcdiv``) as torch's CPU kernels
    compute them: the three operands promoted together (``result_type``), ``value`` converted to that dtype (for
    an integer result as torch converts a number: truncated, 0.5 -> 0, and checked: see ``dtypes.fill_value``);
    float16 and bfloat16 computed in float32 and rounded once; ``value * t1`` first, then ``* t2`` (fused with
    the addition into one rounding, as torch's fma: emulated in float64 for the dtypes below it) or ``/ t2``.
    float64 is rounded twice there (no fma: may differ from torch's in the last place).
    Gradients (torch's): ``g`` for ``x``; ``addcmul``: ``g * (t2 * value)`` and ``g * (t1 * value)``;
    ``addcdiv``: ``g * (value / t2)`` and ``-g * (value * t1 / (t2 * t2))``."""

    __slots__ = ("value",)
    op = ""

    def forward(self, x, t1, t2, value):
        op = self.op
        _need_tensor(t1, op, "tensor1", 1)
        _need_tensor(t2, op, "tensor2", 2)
        if type(value) not in (bool, int, float):  # (a NumPy number or a 0-d tensor: its value, as torch)
            if isinstance(value, TensorBase) and value.ndim == 0 or isinstance(value, numbers.Real):
                value = value.item() if hasattr(value, "item") else float(value)
            else:
                raise TypeError(f"{op}(): argument 'value' must be Number, not {type(value).__name__}")
        for t in (t1, t2):
            if t._dev is not x._dev:
                check_same_device(x, t, op)
        is_div = op == "addcdiv"
        if is_div and not (t1.dtype.is_floating_point or t2.dtype.is_floating_point):
            raise RuntimeError("Integer division with addcdiv is no longer supported: use (input + value * "
                               "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs, or float ones")
        dt = result_type(x, t1, t2)
        if dt is dtypes.bool_:
            raise _not_implemented(op, dt)
        be = x._dev.backend
        acc = dtypes.float32 if dt in _LOWP else dt  # (torch's opmath: float16/bfloat16 in float32)
        xs, a, b = (t._x if t.dtype is acc else be.cast(t._x if t.dtype is dt else be.cast(t._x, dt), acc)
                    for t in (x, t1, t2))  # (cast to the result dtype first, as torch's TensorIterator does)
        v = dtypes.fill_value(value, dt) if dt.category == 1 else float(value)
        self.value = v
        try:
            av = be.mul(a, v)
            if is_div:
                r = be.add(xs, be.div(av, b))
            elif acc is dtypes.float32 and x._dev.is_host:  # fma(value * t1, t2, x): the product of two floats is
                # exact in float64 (on the host; a device has no float64 kernels and computes in float32)
                f64 = dtypes.float64
                r = be.cast(be.add(be.mul(be.cast(av, f64), be.cast(b, f64)), be.cast(xs, f64)), acc)
            else:
                r = be.add(xs, be.mul(av, b))
        except ValueError:
            from ..layout import broadcast_shapes
            try:
                broadcast_shapes(x.shape, t1.shape, t2.shape)
            except ValueError as e:
                raise RuntimeError(f"{op}: {e}") from None
            raise
        if _grad_mode.enabled and (t1.requires_grad or t2.requires_grad):
            self.save_for_backward(t1 if t2.requires_grad else None,
                                   t2 if (t1.requires_grad or is_div) else None)
        return r if acc is dt else be.cast(r, dt)


class Addcmul(_AddC):
    __slots__ = ()
    op = "addcmul"

    def backward(self, g):
        t1, t2 = self.saved_tensors
        nxt, v = self.next, self.value
        return (g, (g * (t2 * v) if nxt[1] is not None else None), (g * (t1 * v) if nxt[2] is not None else None),
                None)


class Addcdiv(_AddC):
    __slots__ = ()
    op = "addcdiv"

    def backward(self, g):
        t1, t2 = self.saved_tensors
        nxt, v = self.next, self.value
        # (torch's C++ ``value / tensor2`` fills a tensor of t2's dtype with value first: rounded to it)
        return (g, (g * (t2.new_full((), v) / t2) if nxt[1] is not None else None),
                (-g * (v * t1 / (t2 * t2)) if nxt[2] is not None else None), None)


class Copysign(Function):
    """``|a|`` with the sign of ``b`` (a tensor or a number; -0.0 counts as negative); integer inputs compute in the
    default float. Keeps ``a`` and its output: ``a``'s gradient is ``g * y / a`` (0 where ``a == 0``), ``b``'s is
    zero (torch's)."""

    __slots__ = ()
    save_output = True

    def forward(self, a, b):
        xa, xb, _ = float_operands(a, b, "copysign")
        self.save_for_backward(a)
        return _run(a, b, "copysign", a._dev.backend.copysign, xa, xb)

    def backward(self, g):
        a, y = self.saved_tensors
        ga = None
        if self.next[0] is not None:
            ga = g * (y / a).masked_fill(a == 0, 0)
        return ga, (_zeros(g) if self.next[1] is not None else None)


class Xlogy(Function):
    """``a * log(b)``, 0 where ``a == 0`` (unless ``b`` is NaN). Either operand may be a number (the first comes
    here as a 0-d tensor). Gradients: ``xlogy(g, b)`` (0 where ``a == 0`` and ``b <= 0``) and ``g * a / b``."""

    __slots__ = ("value",)

    def forward(self, a, b):
        xa, xb, _ = float_operands(a, b, "xlogy")
        self.value = None if isinstance(b, TensorBase) else b
        self.save_for_backward(a, b if self.value is None else None)
        return _run(a, b, "xlogy", a._dev.backend.xlogy, xa, xb)

    def backward(self, g):
        a, b = self.saved_tensors
        nxt = self.next
        other = self.value if b is None else b
        ga = gb = None
        if nxt[0] is not None:
            ga = Xlogy.apply(g, other)
            if b is None:
                if other <= 0:
                    ga = ga.masked_fill(a == 0, 0)
            else:
                ga = ga.masked_fill((a == 0) & (b <= 0), 0)
        if b is not None and nxt[1] is not None:
            gb = g * a / b
        return ga, gb


class NanToNum(Function):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf``, ``neginf`` (None: the dtype's extreme finite values);
    integers and bools come back unchanged. Gradient ``g * isfinite(x)`` (torch's)."""

    __slots__ = ("nan", "posinf", "neginf")

    def forward(self, x, nan, posinf, neginf):
        self.nan, self.posinf, self.neginf = nan, posinf, neginf
        if not x.dtype.is_floating_point:
            return x._dev.backend.copy(x._x)
        self.save_for_backward(x)
        return x._dev.backend.nan_to_num(x._x, nan, posinf, neginf)

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * isfinite(x), None, None, None


# ---- clamps with tensor bounds ------------------------------------------------------------------------
def _clamp_operands(x, bounds, op: str):
    """The native operands of a clamp with tensor (or number) bounds, promoted to one dtype as torch does."""
    dt = result_type(x, *(b for b in bounds if b is not None))
    if dt is dtypes.bool_:
        raise _not_implemented(op, dt)
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
        return _run(x, lo, "clamp_min", x._dev.backend.maximum, xx, xl)

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
        return _run(x, hi, "clamp_max", x._dev.backend.minimum, xx, xh)

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
            from ..layout import broadcast_shapes
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


# ---- not differentiable: bool results, integer bits ----------------------------------------------------
def isfinite(x):
    """Bool tensor: True where ``x`` is neither inf nor NaN (always, for integers and bools)."""
    if not x.dtype.is_floating_point:
        return x._full_like(True, dtypes.bool_)
    return x._wrap(x._dev.backend.isfinite(x._x), x._dev)


def isinf(x):
    if not x.dtype.is_floating_point:
        return x._full_like(False, dtypes.bool_)
    return x._wrap(x._dev.backend.isinf(x._x), x._dev)


def _isinf_signed(x, positive: bool):
    if not x.dtype.is_floating_point:
        return x._full_like(False, dtypes.bool_)
    be = x._dev.backend
    side = be.gt(x._x, 0) if positive else be.lt(x._x, 0)
    return x._wrap(be.logical_and(be.isinf(x._x), side), x._dev)


def isposinf(x):
    return _isinf_signed(x, True)


def isneginf(x):
    return _isinf_signed(x, False)


def _torch_type_name(dt) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
            "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "bfloat16": "BFloat16"}.get(dt.name,
                                                                                                       dt.name)


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """``|a - b| <= atol + rtol * |b|`` elementwise (a bool tensor), or ``a == b``; NaNs equal when ``equal_nan``.
    As torch: both tensors of one dtype, tolerances non-negative, integers compared in the default float."""
    _need_tensor(b, "isclose")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"isclose: {_torch_type_name(a.dtype)} did not match {_torch_type_name(b.dtype)} (the two "
                           f"tensors must have one dtype, as in torch; convert one with .to(other.dtype))")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    if a._dev is not b._dev:
        check_same_device(a, b, "isclose")
    be = a._dev.backend
    xa, xb = a._x, b._x
    try:
        close = be.eq(xa, xb)
    except ValueError:
        raise broadcast_error(a, b, "isclose") from None
    fp = a.dtype.is_floating_point
    if equal_nan and fp:
        close = be.logical_or(close, be.logical_and(be.isnan(xa), be.isnan(xb)))
    if rtol == 0 and atol == 0:
        return a._wrap(close, a._dev)
    if a.dtype is dtypes.bool_:
        xa, xb = be.cast(xa, dtypes.default_float), be.cast(xb, dtypes.default_float)
        fp = True
    ft = a.dtype if fp else dtypes.default_float
    allowed = be.add(be.abs(be.mul(xb if fp else be.cast(xb, ft), rtol)), atol)
    actual = be.abs(be.sub(xa, xb))
    if not fp:
        actual = be.cast(actual, ft)
    ok = be.logical_and(be.isfinite(actual), be.le(actual, allowed))
    return a._wrap(be.logical_or(close, ok), a._dev)


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
            raise _not_implemented(op, dtypes.default_float)
        if not _fits(b, result_type(a, b)):  # (an int beyond the dtype wraps into it, through a 0-d tensor)
            left = a._left_number(b)
            if left is None:
                raise TypeError(f"{op}(): argument 'other' must be Tensor or int, not {type(b).__name__}")
            b = left
    xa, xb, dt = operands(a, b, op)
    if dt.is_floating_point or (dt is dtypes.bool_ and op not in _BITWISE_BOOL):
        raise _not_implemented(op, dt)
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
    return a._wrap(_run(a, b, op, fn, xa, xb), a._dev)


def bitwise_not(x):
    if x.dtype.is_floating_point:
        raise _not_implemented("bitwise_not", x.dtype)
    be = x._dev.backend
    return x._wrap(be.logical_not(x._x) if x.dtype is dtypes.bool_ else be.bitwise_not(x._x), x._dev)
