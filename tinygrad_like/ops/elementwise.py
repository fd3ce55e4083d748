"""Elementwise ops with broadcasting: arithmetic, ``where``, and the unary math a first model uses.

Each op is a node (a :class:`Function`): ``forward`` runs on native arrays through the inputs' backend; ``backward``
is written with Tensor ops, so ``create_graph=True`` differentiates it again. Below the nodes, the Tensor methods
and operators that apply them (``x * y`` is ``Mul.apply(x, y)``), and the free functions ``tl.mul``...
The dtype rules torch applies first (what it refuses, what it computes in) are in :mod:`._util`.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..dtypes import result_type
from ..tensor_base import TensorBase
from ._util import (
    as_float,
    as_wide,
    broadcast_error,
    check_same_device,
    float_operands,
    free_functions,
    integer_pow,
    is_bool,
    is_number,
    no_bool,
    operands,
    rounded,
)

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)
_BF16 = dtypes.bfloat16


class _Binary(Function):
    """A binary op whose second operand may be a Python number (kept as ``value``; None for a tensor)."""

    __slots__ = ("value",)

    def _scaling_forward(self, a, b, promoted, primitive: str):
        """Mul and Div: keep the number, or save what the gradients of the inputs that need one read (a
        gradient of ``a`` reads ``b``; one of ``b`` reads ``a``, and for Div ``b`` too). Nothing is saved
        outside autograd, and a tensor nobody's gradient reads may be written in place later (as in torch)."""
        xa, xb, _ = promoted
        if isinstance(b, TensorBase):
            self.value = None
            if _grad_mode.enabled:
                ra, rb = a._requires_grad, b._requires_grad  # perf: the slot, 9 ns (the property: 43)
                if ra or rb:
                    self.save_for_backward(a if rb else None, b if ra or (rb and primitive == "div") else None)
        else:  # (a number: operands() accepted it)
            self.value = b
            if promoted[2] is _BF16:  # torch multiplies (divides) a bfloat16 by a number in float32, rounding once
                be = a._dev.backend
                return be.cast(getattr(be, primitive)(be.cast(xa, dtypes.float32), xb), _BF16)
        try:
            return getattr(a._dev.backend, primitive)(xa, xb)
        except ValueError:
            raise broadcast_error(a, b, primitive) from None


class Add(_Binary):
    """``a + b``. The engine sums each gradient back over the dims broadcasting added (and casts it to the
    input's dtype), so both gradients are ``g`` itself."""

    __slots__ = ()

    def forward(self, a, b):
        xa, xb, _ = operands(a, b, "add")
        try:
            return a._dev.backend.add(xa, xb)
        except ValueError:
            raise broadcast_error(a, b, "add") from None

    def backward(self, g):
        return g, g


class Sub(_Binary):
    __slots__ = ()

    def forward(self, a, b):
        if a.dtype.name == "bool" or is_bool(b):
            raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                               "to invert a mask, use the `~` or `logical_not()` operator instead.")
        xa, xb, _ = operands(a, b, "sub")
        try:
            return a._dev.backend.sub(xa, xb)
        except ValueError:
            raise broadcast_error(a, b, "sub") from None

    def backward(self, g):
        return g, (-g if self.next[1] is not None else None)


class Mul(_Binary):
    """``a * b``: the gradient of each input is ``g`` times the other (DESIGN.md's sketch of a node)."""

    __slots__ = ()

    def forward(self, a, b):
        # saves what the gradients read (b for a's, a for b's), recording their versions now; a Python number b
        # is kept as ``value``; then one backend primitive computes the product
        return self._scaling_forward(a, b, operands(a, b, "mul"), "mul")

    def backward(self, g):
        if self.value is not None:  # a * number
            return g * self.value, None
        a, b = self.saved_tensors  # raises if a version moved, naming the write site
        return (None if b is None else g * b), (None if a is None else g * a)  # one gradient per input


class Div(_Binary):
    __slots__ = ()

    def forward(self, a, b):
        return self._scaling_forward(a, b, float_operands(a, b, "div"), "div")

    def backward(self, g):
        if self.value is not None:
            return g / self.value, None
        a, b = self.saved_tensors
        ga = g / b if self.next[0] is not None else None
        gb = -g * (a / b / b) if a is not None else None  # (torch's order of operations)
        return ga, gb


class Pow(_Binary):
    """``a ** b`` for a tensor or number exponent. Keeps the inputs, and the output for a tensor exponent (its
    gradient's formula reads it), as torch does: so ``y = x ** 2; y += 1`` is legal, ``y = x ** t`` then
    ``y += 1`` is not."""

    __slots__ = ()

    def forward(self, a, b):
        xa, xb, dt = operands(a, b, "pow")
        if is_number(b):
            self.value = b
            if _grad_mode.enabled:
                self.save_for_backward(a)
        else:
            self.value = None
            if _grad_mode.enabled:
                self.save_for_backward(a, b)
        if not dt.is_floating_point:
            if dt.name != "bool":
                return integer_pow(a, b, xa, xb, dt)
            if not is_number(b):  # (NumPy would give int8)
                raise NotImplementedError("\"pow\" not implemented for 'Bool'")
            return a._dev.backend.copy(xa) if b else a._dev.backend.full(a._x.shape, True, dt)  # x**True, x**False
        try:
            out = a._dev.backend.pow(xa, xb)
        except ValueError:
            raise broadcast_error(a, b, "pow") from None
        if self.value is None and _grad_mode.enabled and (a.requires_grad or b.requires_grad):
            # the exponent's gradient reads the output, which torch keeps for a tensor exponent (so writing it in
            # place is an error there and here); the output returned shares this one's storage and version
            y = a._wrap(out, a._dev)
            self.save_for_backward(a, b, y)
            return y
        return out

    def backward(self, g):
        if self.value is not None:
            (a,) = self.saved_tensors
            p = self.value
            return (g * 0 if p == 0 else g * p * a ** (p - 1)), None
        saved = self.saved_tensors
        a, b = saved[0], saved[1]
        y = self.kept_output(saved[2]) if len(saved) == 3 else None  # (this node's output: see forward)
        # (an integer operand, e.g. the 2 of 2 ** x, enters the formulas in the result's dtype: log(2) in float64
        # for a float64 x, not in the default float)
        a = a if a.dtype is g.dtype else a.to(g.dtype)
        b = b if b.dtype is g.dtype else b.to(g.dtype)
        ga = where(b == 0, 0.0, g * b * a ** (b - 1)) if self.next[0] is not None else None
        if y is None or self.next[1] is None:  # (the exponent needs no gradient)
            return ga, None
        # d/db a**b = a**b * log(a) (torch: 0 where the exponent is 0, so 0**0 gives no nan; and 0 where a == 0
        # and b >= 0)
        safe = (a == 0) & (b >= 0)
        return ga, g * y.masked_fill(safe, 0) * a.masked_fill(safe, 1).log()


class Where(Function):
    """``where(cond, a, b)``; ``a`` or ``b`` may be Python numbers."""

    __slots__ = ()

    def forward(self, cond, a, b):
        if cond.dtype.name != "bool":
            raise TypeError(f"where expected condition to be a bool tensor, got {cond.dtype.name}")
        T = TensorBase
        ref = a if isinstance(a, T) else b if isinstance(b, T) else None
        be = cond._dev.backend
        if ref is None:
            dt = result_type(a, b)
            return be.cast(be.where(cond._x, a, b), dt)
        other = b if ref is a else a
        xr, xo, dt = operands(ref, other, "where")
        xa, xb = (xr, xo) if ref is a else (xo, xr)
        for t in (a, b):
            if isinstance(t, T) and t._dev is not cond._dev:
                check_same_device(cond, t, "where")
        self.save_for_backward(cond)
        out = be.where(cond._x, xa, xb)
        return out if out.dtype == dt.np else be.cast(out, dt)

    def backward(self, g):
        (cond,) = self.saved_tensors
        zero = g.new_zeros(())
        nxt = self.next
        return None, (where(cond, g, zero) if nxt[1] is not None else None), \
            (where(cond, zero, g) if nxt[2] is not None else None)


def where(cond, a, b):
    return Where.apply(cond, a, b)


# ---- unary ----------------------------------------------------------------------------------


class Neg(Function):
    __slots__ = ()

    def forward(self, x):
        no_bool(x, "neg (the - operator)")
        return x._dev.backend.neg(x._x)

    def backward(self, g):
        return (-g,)


class Abs(Function):
    __slots__ = ()

    def forward(self, x):
        no_bool(x, "abs", NotImplementedError)
        self.save_for_backward(x)
        return x._dev.backend.abs(x._x)

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * x.sign(),)


class Exp(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.exp(as_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (g * y,)


class Log(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.log(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g / x,)


class Sqrt(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.sqrt(as_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (g / (2 * y),)


class Reciprocal(Function):
    """``1 / x``. Keeps its output (d/dx = -1/x**2 = -y*y), as torch does, so ``x`` may be written in place
    afterwards; ``number / x`` is this times the number, so its result is not the kept one either."""

    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.div(1, as_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (-g * (y * y),)


class Tanh(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.tanh(as_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (TanhBackward.apply(g, y),)


class TanhBackward(Function):
    """``g * (1 - y * y)`` (``y`` = tanh's output) as one fused kernel. It is a node of its own, so the formula
    ``loss.backward()`` runs is the one ``create_graph=True`` differentiates again."""

    __slots__ = ()

    def forward(self, g, y):
        if _grad_mode.enabled:
            self.save_for_backward(g, y)
        return g._dev.backend.tanh_backward(g._x, y._x)

    def backward(self, gg):
        g, y = self.saved_tensors
        return TanhBackward.apply(gg, y), gg * g * y * -2


class Sigmoid(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        if x.dtype is _BF16:  # (NumPy's composite sigmoid would round each step: in float32, rounded once)
            return rounded(x, x._dev.backend.sigmoid(as_wide(x)))
        return x._dev.backend.sigmoid(as_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (SigmoidBackward.apply(g, y),)


class SigmoidBackward(Function):
    """``g * y * (1 - y)`` (``y`` = sigmoid's output) as one fused kernel, a node of its own (see TanhBackward)."""

    __slots__ = ()

    def forward(self, g, y):
        if _grad_mode.enabled:
            self.save_for_backward(g, y)
        return g._dev.backend.sigmoid_backward(g._x, y._x)

    def backward(self, gg):
        g, y = self.saved_tensors
        return SigmoidBackward.apply(gg, y), gg * g * (1 - 2 * y)


class Relu(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        if x.dtype is dtypes.bool_:
            no_bool(x, "relu")
        return x._dev.backend.relu(x._x)

    def backward(self, g):
        (y,) = self.saved_tensors
        return (ReluBackward.apply(g, y),)


class ReluBackward(Function):
    """``g`` where relu's output ``y`` is positive, else 0, as one fused kernel (a node of its own, see
    TanhBackward). A select, not ``g * mask``: an infinite gradient where ``y <= 0`` gives 0, not inf * 0 = NaN,
    and a NaN output passes its gradient through, as in PyTorch.

    Its derivative in ``y`` is zero almost everywhere; it is returned as zeros (as PyTorch's threshold_backward
    does), so a second derivative through relu gives zeros rather than no gradient."""

    __slots__ = ()

    def forward(self, g, y):
        if _grad_mode.enabled:
            self.save_for_backward(y)
        return g._dev.backend.relu_backward(g._x, y._x)

    def backward(self, gg):
        (y,) = self.saved_tensors
        return ReluBackward.apply(gg, y), gg.new_zeros(y.shape)


class ElementwiseMixin:
    """Tensor methods and operators for the nodes above: ``x + y``, ``x * y``, ``x.exp()``, ``x.relu()``..."""

    __slots__ = ()

    # ---- arithmetic --------------------------------------------------------------------------
    def __add__(self, other):
        return Add.apply(self, other)

    def __radd__(self, other):
        return Add.apply(self, other)

    def __sub__(self, other):
        return Sub.apply(self, other)

    def _left_number(self, value):
        """``value`` from the left of an operator (``2 - x``, ``2 ** x``) as a 0-d tensor of the dtype ``x op value``
        has, so the op itself runs (Sub, Pow: one node type per op) with the number as its first operand. An integer
        too large for that dtype wraps into it, as torch's does. None when ``value`` is not a number (the operator
        then returns NotImplemented, as Python expects)."""
        if not is_number(value):
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
        return NotImplemented if left is None else Sub.apply(left, self)

    def __mul__(self, other):
        return Mul.apply(self, other)

    def __rmul__(self, other):
        return Mul.apply(self, other)

    def __truediv__(self, other):
        return Div.apply(self, other)

    def __rtruediv__(self, other):
        """``number / x`` is ``reciprocal(x) * number``, as in torch (so neither ``x`` nor the result is kept)."""
        if not is_number(other):
            return NotImplemented
        return Mul.apply(Reciprocal.apply(self), other)

    def reciprocal(self):
        return Reciprocal.apply(self)

    def __pow__(self, other):
        return Pow.apply(self, other)

    def __rpow__(self, other):
        left = self._left_number(other)
        return NotImplemented if left is None else Pow.apply(left, self)

    def __neg__(self):
        return Neg.apply(self)

    def __abs__(self):
        return Abs.apply(self)

    def __pos__(self):
        return self


    mul = __mul__
    pow = __pow__  # (div, with its rounding_mode, is in ops/division.py; the bitwise operators in ops/bitwise.py)
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

    # ---- unary math --------------------------------------------------------
    def exp(self):
        return Exp.apply(self)

    def log(self):
        return Log.apply(self)

    def sqrt(self):
        return Sqrt.apply(self)

    def tanh(self):
        return Tanh.apply(self)

    def sigmoid(self):
        return Sigmoid.apply(self)

    def relu(self):
        return Relu.apply(self)


# ---- free functions ---------------------------------------------------------------------------------
__all__ = ["mul", "pow", "neg", "abs", "exp", "log", "sqrt", "tanh",
           "sigmoid", "relu"]

(mul, pow, neg, abs, exp, log, sqrt, tanh, sigmoid, relu) = free_functions(  # noqa: A001
    ElementwiseMixin, *__all__)
