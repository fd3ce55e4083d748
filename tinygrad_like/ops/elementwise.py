"""Elementwise ops with broadcasting: arithmetic, activations, and their gradients.

Forward runs on native arrays through the inputs' backend; backward is written with Tensor ops
so that ``create_graph=True`` differentiates it again.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..tensor_base import TensorBase
from . import _util
from ._util import float_operands, operands, rounded

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)
_BF16 = dtypes.bfloat16


def _num(x) -> bool:
    """A Python or NumPy scalar (not a Tensor)."""
    c = x.__class__
    if c is float or c is int or c is bool:
        return True
    return isinstance(x, (np.generic, int, float))


def _broadcast_error(a, b, op: str) -> RuntimeError:
    """The backend rejected the operands' shapes: say which dims and which rule."""
    from ..layout import broadcast_shapes
    try:
        broadcast_shapes(a.shape, b.shape)
    except ValueError as e:
        return RuntimeError(f"{op}: {e}")
    return RuntimeError(f"{op}: operands of shapes {a.shape} and {b.shape} were rejected by the backend")


def _is_bool(x) -> bool:
    """A bool tensor or a Python bool (torch refuses ``x - True`` too; a NumPy bool is a number there)."""
    return x is True or x is False or (isinstance(x, TensorBase) and x.dtype.name == "bool")


def _need_float(x, op: str) -> None:
    """Refuse what torch refuses: activations with no integer or bool kernel (gelu, silu, softmax, ...)."""
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"{op}: not implemented for {x.dtype.name} tensors (as in torch): expected a "
                                  f"floating point input; convert with .float() first")


def _no_bool(x, op: str, exc=RuntimeError) -> None:
    if x.dtype.name == "bool":
        raise exc(f"{op}: boolean inputs are not supported (as in torch); convert with .int() or .float() first")


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
            raise _broadcast_error(a, b, primitive) from None


class Add(_Binary):
    """``a + b``. The engine sums each gradient back over the dims broadcasting added (and casts it to the
    input's dtype), so both gradients are ``g`` itself."""

    __slots__ = ()

    def forward(self, a, b):
        xa, xb, _ = operands(a, b, "add")
        try:
            return a._dev.backend.add(xa, xb)
        except ValueError:
            raise _broadcast_error(a, b, "add") from None

    def backward(self, g):
        return g, g


class Sub(_Binary):
    __slots__ = ()

    def forward(self, a, b):
        if a.dtype.name == "bool" or _is_bool(b):
            raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                               "to invert a mask, use the `~` or `logical_not()` operator instead.")
        xa, xb, _ = operands(a, b, "sub")
        try:
            return a._dev.backend.sub(xa, xb)
        except ValueError:
            raise _broadcast_error(a, b, "sub") from None

    def backward(self, g):
        return g, (-g if self.next[1] is not None else None)


class Mul(_Binary):
    __slots__ = ()

    def forward(self, a, b):
        return self._scaling_forward(a, b, operands(a, b, "mul"), "mul")

    def backward(self, g):
        if self.value is not None:
            return g * self.value, None
        a, b = self.saved_tensors
        return (None if b is None else g * b), (None if a is None else g * a)


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
        if _num(b):
            self.value = b
            if _grad_mode.enabled:
                self.save_for_backward(a)
        else:
            self.value = None
            if _grad_mode.enabled:
                self.save_for_backward(a, b)
        if not dt.is_floating_point:
            if dt.name != "bool":
                return _integer_pow(a, b, xa, xb, dt)
            if not _num(b):  # (NumPy would give int8)
                raise NotImplementedError("\"pow\" not implemented for 'Bool'")
            return a._dev.backend.copy(xa) if b else a._dev.backend.full(a._x.shape, True, dt)  # x**True, x**False
        try:
            out = a._dev.backend.pow(xa, xb)
        except ValueError:
            raise _broadcast_error(a, b, "pow") from None
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


def _integer_pow(a, b, xa, xb, dt):
    """Integer ``a ** b`` with torch's rules: a negative Python exponent is refused; in a tensor exponent a
    negative power gives 1 for a base of 1, +-1 for -1 and 0 otherwise (NumPy refuses the whole array)."""
    if _num(b):
        if b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return a._dev.backend.pow(xa, xb)
    be = a._dev.backend
    na = np.asarray(a.numpy() if not a._dev.is_host else xa)
    nb = np.asarray(b.numpy() if not b._dev.is_host else xb)
    try:
        na, nb = np.broadcast_arrays(na, nb)
    except ValueError:
        raise _broadcast_error(a, b, "pow") from None
    neg = nb < 0
    out = np.power(na, np.where(neg, 0, nb))
    if neg.any():
        odd = (nb & 1).astype(bool)
        out = np.where(neg, np.where(na == 1, 1, np.where(na == -1, np.where(odd, -1, 1), 0)), out)
    out = out.astype(dt.np, copy=False)
    return out if a._dev.is_host else be.from_numpy(out)


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
            raise _broadcast_error(a, b, "maximum") from None

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
            raise _broadcast_error(a, b, "minimum") from None

    def backward(self, g):
        a, b = self.saved_tensors
        return _pick(g, a < b, a == b)


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
            from ..dtypes import result_type
            dt = result_type(a, b)
            return be.cast(be.where(cond._x, a, b), dt)
        other = b if ref is a else a
        xr, xo, dt = operands(ref, other, "where")
        xa, xb = (xr, xo) if ref is a else (xo, xr)
        for t in (a, b):
            if isinstance(t, T) and t._dev is not cond._dev:
                _util.check_same_device(cond, t, "where")
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
        _no_bool(x, "neg (the - operator)")
        return x._dev.backend.neg(x._x)

    def backward(self, g):
        return (-g,)


class Abs(Function):
    __slots__ = ()

    def forward(self, x):
        _no_bool(x, "abs", NotImplementedError)
        self.save_for_backward(x)
        return x._dev.backend.abs(x._x)

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * x.sign(),)


class Exp(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.exp(_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (g * y,)


class Log(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.log(_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g / x,)


class Sqrt(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.sqrt(_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (g / (2 * y),)


class Reciprocal(Function):
    """``1 / x``. Keeps its output (d/dx = -1/x**2 = -y*y), as torch does, so ``x`` may be written in place
    afterwards; ``number / x`` is this times the number, so its result is not the kept one either."""

    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.div(1, _float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (-g * (y * y),)


class Rsqrt(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.rsqrt(_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (-0.5 * g * y * y * y,)


class Sin(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.sin(_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * x.cos(),)


class Cos(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.cos(_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (-g * x.sin(),)


class Tanh(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.tanh(_float(x))

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
            return rounded(x, x._dev.backend.sigmoid(_wide(x)))
        return x._dev.backend.sigmoid(_float(x))

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


class Erf(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.erf(_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * (2 / math.sqrt(math.pi)) * (-(x * x)).exp(),)


class Relu(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        if x.dtype is dtypes.bool_:
            _no_bool(x, "relu")
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


class LeakyRelu(Function):
    __slots__ = ("negative_slope",)

    def forward(self, x, negative_slope):
        _need_float(x, "leaky_relu")
        self.negative_slope = negative_slope
        self.save_for_backward(x)
        be, xx = x._dev.backend, _wide(x)  # integer input: computed in the default float, not float64
        return rounded(x, be.where(be.gt(xx, 0), xx, be.mul(xx, negative_slope)))

    def backward(self, g):
        (x,) = self.saved_tensors
        return LeakyReluBackward.apply(g, x, self.negative_slope), None


class LeakyReluBackward(Function):
    """``g`` where ``x > 0``, else ``g * negative_slope`` (a node of its own, see TanhBackward). It scales ``g``
    itself: ``where(x > 0, 1.0, slope)`` would round the slope to float32 first. Zero derivative in ``x`` (zeros,
    as PyTorch's)."""

    __slots__ = ("negative_slope",)

    def forward(self, g, x, negative_slope):
        self.negative_slope = negative_slope
        if _grad_mode.enabled:
            self.save_for_backward(x)
        be = g._dev.backend
        return be.where(be.gt(x._x, 0), g._x, be.mul(g._x, negative_slope))

    def backward(self, gg):
        (x,) = self.saved_tensors
        return LeakyReluBackward.apply(gg, x, self.negative_slope), gg.new_zeros(x.shape), None


class Gelu(Function):
    """GELU, exact ``x * Phi(x)`` (``Phi`` the normal CDF, ``0.5 * (1 + erf(x / sqrt(2)))``) or with PyTorch's tanh
    approximation ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``, as one fused kernel. When a backward
    will follow, the kernel also returns a state for it (on the CPU ``gelu'(x)`` itself, computed from what forward
    has at hand), kept here privately."""

    __slots__ = ("approximate", "state")

    def forward(self, x, approximate):
        _need_float(x, "gelu")
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate
        self.save_for_backward(x)
        y, self.state = x._dev.backend.gelu(x._x, approximate, _grad_mode.enabled and x.requires_grad)
        return y

    def backward(self, g):
        (x,) = self.saved_tensors
        return GeluBackward.apply(g, x, self.approximate, self.state), None

    def release(self) -> None:
        super().release()
        self.state = None


class GeluBackward(Function):
    """``g * gelu'(x)`` as one fused kernel, a node of its own (see TanhBackward):
    ``gelu'(x) = Phi(x) + x * phi(x)`` (``phi`` the normal density ``exp(-x**2 / 2) / sqrt(2 pi)``), or for the tanh
    form ``0.5 * (1 + t) + 0.5 * x * (1 - t**2) * k'(x)`` with ``t = tanh(k(x))``. It reads the state gelu's forward
    kept (``state``, held here too; None: computed from ``x``), so it computes no erf again; its own derivative
    below is written in ``x``."""

    __slots__ = ("approximate", "state")

    def forward(self, g, x, approximate, state):
        self.approximate, self.state = approximate, state
        if _grad_mode.enabled:
            self.save_for_backward(g, x)
        return g._dev.backend.gelu_backward(g._x, x._x, state, approximate)

    def backward(self, gg):
        """``gg * gelu'(x)`` for ``g`` (this same node) and ``gg * g * gelu''(x)`` for ``x``."""
        g, x = self.saved_tensors
        if self.approximate == "tanh":
            c, k = math.sqrt(2 / math.pi), 0.044715
            dk = c * (1 + 3 * k * x * x)  # k'(x) of the inner term k(x) = c * (x + k x^3)
            t = (c * (x + k * x * x * x)).tanh()
            d2 = (1 - t * t) * (dk + 0.5 * x * (6 * c * k * x - 2 * t * dk * dk))
        else:
            d2 = (2 - x * x) * (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
        return GeluBackward.apply(gg, x, self.approximate, self.state), gg * g * d2, None, None

    def release(self) -> None:
        super().release()
        self.state = None


class Silu(Function):
    __slots__ = ()

    def forward(self, x):
        _need_float(x, "silu")
        self.save_for_backward(x)
        be, xx = x._dev.backend, _wide(x)
        return rounded(x, be.mul(xx, be.sigmoid(xx)))

    def backward(self, g):
        (x,) = self.saved_tensors
        s = x.sigmoid()
        return (g * s * (1 + x * (1 - s)),)


class Softplus(Function):
    __slots__ = ("beta", "threshold")

    def forward(self, x, beta, threshold):
        _need_float(x, "softplus")
        self.beta, self.threshold = beta, threshold
        self.save_for_backward(x)
        return rounded(x, x._dev.backend.softplus(_wide(x), beta, threshold))

    def backward(self, g):
        (x,) = self.saved_tensors
        bx = x * self.beta
        return g * where(bx > self.threshold, 1.0, bx.sigmoid()), None, None


class Elu(Function):
    __slots__ = ("alpha",)

    def forward(self, x, alpha):
        _need_float(x, "elu")
        self.alpha = alpha
        self.save_for_backward(x)
        be, xx = x._dev.backend, _wide(x)
        return rounded(x, be.where(be.gt(xx, 0), xx, be.mul(be.sub(be.exp(be.minimum(xx, 0)), 1), alpha)))

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * where(x > 0, 1.0, self.alpha * x.clamp(max=0).exp()), None


class Clamp(Function):
    """Clamp to Python-number bounds (either may be None)."""

    __slots__ = ("min", "max")

    def forward(self, x, lo, hi):
        if lo is None and hi is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
        self.min, self.max = lo, hi
        self.save_for_backward(x)
        be, xx = x._dev.backend, x._x
        from ..dtypes import result_type
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
            _util.check_same_device(x, mask, "masked_fill")
        from ..layout import broadcast_shapes
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


class Cast(Function):
    __slots__ = ("src_dtype",)

    def forward(self, x, dtype):
        self.src_dtype = x.dtype
        return x._dev.backend.cast(x._x, dtype)

    def backward(self, g):
        return g.to(self.src_dtype), None


def _wide(x):
    """As :func:`_float`, with bfloat16 in float32: for the ops composed of several primitives (or with Python
    float constants), which round their result back once with ``rounded``, as torch's fused kernels do."""
    return _float(x) if x.dtype is not _BF16 else _util.in_float32(x)


def _float(x):
    """The native operand as the default float when ``x`` is integral (exp, log, ... of ints)."""
    if x.dtype.is_floating_point:
        return x._x
    from .. import dtypes
    return x._dev.backend.cast(x._x, dtypes.default_float)
