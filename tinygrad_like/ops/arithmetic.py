"""Arithmetic beyond elementwise's operators: ``lerp``, ``addcmul`` and ``addcdiv`` (the fused-looking updates that
optimizers write), ``copysign``, ``heaviside``, ``square``, ``nan_to_num``, and clamps with tensor bounds
(``clamp_min``, ``clamp_max``, and the nodes of ``clamp`` with a tensor bound); with their in-place forms and free
functions, and the in-place forms torch has of elementwise's unary ops (``exp_``, ``relu_``, ...).

>>> import tinygrad_like as tl
>>> a, b = tl.tensor([0.0, 10.0]), tl.tensor([10.0, 20.0])
>>> a.lerp(b, 0.5).tolist(), a.addcmul(b, b, value=0.5).tolist(), a.copysign(-1.0).tolist()
([5.0, 15.0], [50.0, 210.0], [-0.0, -10.0])
>>> a.clamp_min(tl.tensor([1.0, 1.0])).tolist(), tl.tensor([float("inf")]).nan_to_num(posinf=9.0).tolist()
([1.0, 10.0], [9.0])
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..dtypes import result_type
from ..layout import broadcast_shapes
from ..tensor_base import TensorBase
from ._math_util import call_method, need_tensor, not_implemented, run_binary, zero_grad
from ._util import check_same_device, float_operands, free_functions, in_float32, rounded
from .comparison import Clamp, ClampMax, ClampMin
from .elementwise import Add, ElementwiseMixin, Pow, Reciprocal, Sub, where
from .statistics import NoDerivative

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = ["reciprocal", "square", "lerp", "copysign", "nan_to_num", "clamp_min", "clamp_max",
           "reciprocal_", "square_", "nan_to_num_", "clamp_min_", "clamp_max_", "add", "sub", "subtract", "multiply",
           "negative", "absolute", "positive", "rsub"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


# ---- lerp, addcmul and addcdiv, copysign, nan_to_num --------------------------------------------------
def _is_small(w) -> bool:
    return abs(w) < 0.5


class Lerp(Function):
    """``start + weight * (end - start)``, computed as torch does: ``end - (end - start) * (1 - weight)`` where
    ``|weight| >= 0.5`` (exact at weight 1). ``weight`` is a tensor or a Python number. Gradients: ``g * (1 - w)``,
    ``g * w`` and ``g * (end - start)`` (torch's)."""

    __slots__ = ("value",)

    def forward(self, start, end, weight):
        need_tensor(end, "lerp", "end")
        dt = start.dtype
        if not dt.is_floating_point:
            raise not_implemented("lerp", dt)
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
        need_tensor(t1, op, "tensor1", 1)
        need_tensor(t2, op, "tensor2", 2)
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
            raise not_implemented(op, dt)
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
        return run_binary(a, b, "copysign", a._dev.backend.copysign, xa, xb)

    def backward(self, g):
        a, y = self.saved_tensors
        ga = None
        if self.next[0] is not None:
            ga = g * (y / a).masked_fill(a == 0, 0)
        return ga, (zero_grad(g) if self.next[1] is not None else None)


class NanToNum(Function):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf``, ``neginf`` (None: the dtype's extreme finite values);
    integers and bools come back unchanged. Gradient ``g * x.isfinite()`` (torch's)."""

    __slots__ = ("nan", "posinf", "neginf")

    def forward(self, x, nan, posinf, neginf):
        self.nan, self.posinf, self.neginf = nan, posinf, neginf
        if not x.dtype.is_floating_point:
            return x._dev.backend.copy(x._x)
        self.save_for_backward(x)
        return x._dev.backend.nan_to_num(x._x, nan, posinf, neginf)

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * x.isfinite(), None, None, None


# ---- clamps with tensor bounds ------------------------------------------------------------------------


def _pow(x, exponent):
    return x.pow(exponent)


def _grad_operand(t1, t2):
    """Of two operands, the one ``_inplace`` should look at to decide whether grad flows (one that requires it)."""
    return t2 if isinstance(t2, TensorBase) and t2.requires_grad else t1


def _clamp_min(x, bound):
    return x.clamp_min(bound)


def _clamp_max(x, bound):
    return x.clamp_max(bound)


def _scaled(x, other, alpha):
    """``alpha * other`` for add and sub; a float ``alpha`` is refused when both operands are integral (as torch)."""
    if isinstance(alpha, float) and not result_type(x, other).is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    return other * alpha


class ArithmeticMixin:
    """Tensor methods: square, lerp, copysign, nan_to_num, clamp_min/clamp_max, addcmul/addcdiv, heaviside, and the
    in-place forms, of these and of elementwise's unary ops."""

    __slots__ = ()

    def add(self, other, *, alpha=1) -> Tensor:
        """``self + alpha * other`` (``+`` itself is in ops/elementwise.py)."""
        if alpha == 1:
            return Add.apply(self, other)
        return Add.apply(self, _scaled(self, other, alpha))

    def sub(self, other, *, alpha=1) -> Tensor:
        """``self - alpha * other``."""
        if alpha == 1:
            return Sub.apply(self, other)
        return Sub.apply(self, _scaled(self, other, alpha))

    # torch's other spellings of the elementwise arithmetic (the operators themselves are in ops/elementwise.py)
    subtract, multiply = sub, ElementwiseMixin.mul
    negative, absolute = ElementwiseMixin.neg, ElementwiseMixin.abs

    def positive(self) -> Tensor:
        """``self`` itself (as torch's ``+x``); refused for bool tensors, as torch does."""
        if self.dtype is dtypes.bool_:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def multiply_(self, other) -> Tensor:
        return self.mul_(other)

    def subtract_(self, other, *, alpha=1) -> Tensor:
        return self.sub_(other, alpha=alpha)

    def square(self) -> Tensor:
        """``self ** 2`` (as torch: a Pow node; bool gives int64)."""
        return Pow.apply(self, 2)

    def lerp(self, end, weight) -> Tensor:
        """``self + weight * (end - self)``; ``weight`` a number or a tensor (all three broadcast)."""
        return Lerp.apply(self, end, weight)

    def copysign(self, other) -> Tensor:
        """``|self|`` with the sign of ``other`` (a tensor or a number; -0.0 is negative)."""
        return Copysign.apply(self, other)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        """NaN, +inf, -inf replaced by ``nan``, ``posinf``, ``neginf`` (None: the dtype's extreme finite values)."""
        return NanToNum.apply(self, nan, posinf, neginf)

    def clamp_min(self, min) -> Tensor:
        """``clamp(min=min)``; ``min`` a number or a tensor (broadcast)."""
        if isinstance(min, TensorBase):
            return ClampMin.apply(self, min)
        return Clamp.apply(self, min, None)

    def clamp_max(self, max) -> Tensor:
        if isinstance(max, TensorBase):
            return ClampMax.apply(self, max)
        return Clamp.apply(self, None, max)

    # ---- in place (same versioning and checks as add_, mul_: see ops/inplace.py) ------------------------
    def reciprocal_(self) -> Tensor:
        return self._inplace("reciprocal_", call_method, "reciprocal")

    def square_(self) -> Tensor:
        return self._inplace("square_", call_method, "square")

    def lerp_(self, end, weight) -> Tensor:
        if isinstance(weight, TensorBase) and weight.requires_grad and _grad_mode.enabled:
            # (the weight is the operand that makes this a graph op: _inplace decides on its `other`)
            return self._inplace("lerp_", lambda x, w: Lerp.apply(x, end, w), weight)
        return self._inplace("lerp_", lambda x, e: Lerp.apply(x, e, weight), end)

    def copysign_(self, other) -> Tensor:
        return self._inplace("copysign_", Copysign.apply, other)

    def nan_to_num_(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        return self._inplace("nan_to_num_", lambda x, _: NanToNum.apply(x, nan, posinf, neginf), None)

    def clamp_min_(self, min) -> Tensor:
        return self._inplace("clamp_min_", _clamp_min, min)

    def clamp_max_(self, max) -> Tensor:
        return self._inplace("clamp_max_", _clamp_max, max)

    # ---- the rest of torch's in-place unary functions (exp_, relu_, ...: see _INPLACE_UNARY below) -------------
    def pow_(self, exponent) -> Tensor:
        return self._inplace("pow_", _pow, exponent)

    # ---- fused-looking arithmetic that optimizers and learners write ---------------------------------------
    def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
        """``self + value * tensor1 * tensor2`` (broadcast, the three promoted together), as ``torch.addcmul``:
        ``value`` takes the result's dtype (0.5 is 0 for an integer result). See ``_AddC``."""
        return Addcmul.apply(self, tensor1, tensor2, value)

    def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
        """``self + value * tensor1 / tensor2``; integer ``tensor1`` and ``tensor2`` are refused, as torch does."""
        return Addcdiv.apply(self, tensor1, tensor2, value)

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
        with grad_mode.no_grad():
            out = where(self == 0, values, (self > 0).to(self.dtype))
        if _grad_mode.enabled and (self.requires_grad or values.requires_grad):
            return NoDerivative.apply(self, out._x, "heaviside", values)
        return out

    def heaviside_(self, values: Tensor) -> Tensor:
        return self._inplace("heaviside_", lambda x, v: x.heaviside(v), values)


    # ---- Python callables applied elementwise (torch's CPU-only apply_, map_, map2_) ----------------------------
    def apply_(self, callable) -> Tensor:
        """Replace each element ``v`` with ``callable(v)`` (a Python number in and out). As torch: slow, never recorded
        for autograd, and refused for a tensor that requires grad."""
        _check_map(self, "apply_")
        return _map_into(self, callable, (), "apply_")

    def map_(self, tensor, callable) -> Tensor:
        """Replace each element ``v`` with ``callable(v, t)``, ``t`` the matching element of ``tensor`` (broadcast to
        this tensor's shape)."""
        _check_map(self, "map_", tensor)
        return _map_into(self, callable, (tensor,), "map_")

    def map2_(self, x, y, callable) -> Tensor:
        """Replace each element ``v`` with ``callable(v, a, b)``, ``a`` and ``b`` the matching elements of ``x`` and
        ``y`` (broadcast to this tensor's shape)."""
        _check_map(self, "map2_", x, y)
        return _map_into(self, callable, (x, y), "map2_")


def _check_map(x, op: str, *others) -> None:
    if x.requires_grad and _grad_mode.enabled:
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")
    for t in others:
        if not isinstance(t, TensorBase):
            raise TypeError(f"{op}(): expected a Tensor argument, got {type(t).__name__}")
        if t.requires_grad and _grad_mode.enabled:
            raise RuntimeError(f"{op}(): the tensors it reads must not require grad (as in torch); pass .detach()")


def _map_into(x, fn, others: tuple, op: str) -> Tensor:
    """Each element of ``x`` (with the matching elements of ``others``) through the Python callable ``fn``, written
    back into ``x`` (a version bump)."""
    x._check_inplace(op)
    arrays = [x.numpy(force=True)] + [np.broadcast_to(t.numpy(force=True), tuple(x.shape)) for t in others]
    items = [a.reshape(-1).tolist() for a in arrays]
    out = np.array([fn(*vals) for vals in zip(*items, strict=True)], dtype=np.float64 if x.dtype is dtypes.bfloat16
                   else x.dtype.np).reshape(tuple(x.shape)).astype(x.dtype.np)
    be = x._dev.backend
    be.assign(x._x, out if x._dev.is_host else be.from_numpy(np.ascontiguousarray(out)))
    x._wrote(op)
    return x


# exp_, log_, relu_, ...: each writes its out-of-place op's result into the tensor, with _inplace's checks, version bump
# and autograd history (as floor_, acos_ and the other in-place methods of the math families)
_INPLACE_UNARY = ("exp", "log", "sqrt", "rsqrt", "relu", "sigmoid", "tanh", "abs", "neg", "sin", "cos", "erf")


def _inplace_unary(name: str):
    def method(self) -> Tensor:
        return self._inplace(name + "_", call_method, name)
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"``{name}`` written into this tensor (a version bump; recorded for autograd)."
    return method


for _name in _INPLACE_UNARY:
    setattr(ArithmeticMixin, _name + "_", _inplace_unary(_name))
ArithmeticMixin.absolute_, ArithmeticMixin.negative_ = ArithmeticMixin.abs_, ArithmeticMixin.neg_
del _name


add, sub, subtract, multiply, negative, absolute, positive = free_functions(
    ArithmeticMixin, "add", "sub", "subtract", "multiply", "negative", "absolute", "positive")
(square, lerp, copysign, nan_to_num, clamp_min, clamp_max, addcmul, addcdiv, heaviside) = free_functions(
    ArithmeticMixin, "square", "lerp", "copysign", "nan_to_num", "clamp_min", "clamp_max", "addcmul", "addcdiv",
    "heaviside")
reciprocal_, square_, nan_to_num_, clamp_min_, clamp_max_ = free_functions(
    ArithmeticMixin, "reciprocal_", "square_", "nan_to_num_", "clamp_min_", "clamp_max_")
exp_, log_, sqrt_, rsqrt_, relu_, sigmoid_, tanh_, abs_, neg_, sin_, cos_, erf_, absolute_, negative_ = free_functions(
    ArithmeticMixin, "exp_", "log_", "sqrt_", "rsqrt_", "relu_", "sigmoid_", "tanh_", "abs_", "neg_", "sin_", "cos_",
    "erf_", "absolute_", "negative_")


# (written out: the generated form would name ArithmeticMixin, and reciprocal's method is ElementwiseMixin's)
def reciprocal(input: Tensor) -> Tensor:
    need_tensor(input, "reciprocal", "input", 1)
    return Reciprocal.apply(input)


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (torch's reversed subtraction)."""
    need_tensor(input, "rsub", "input", 1)
    scaled = input if alpha == 1 else input * alpha
    if isinstance(other, TensorBase):
        return Sub.apply(other, scaled)
    left = scaled._left_number(other)
    if left is None:
        raise TypeError(f"rsub(): argument 'other' must be Tensor or Number, not {type(other).__name__}")
    return Sub.apply(left, scaled)
