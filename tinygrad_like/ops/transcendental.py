"""Transcendental functions: the inverse trigonometric ones and ``tan`` (``sin``, ``cos``, ``tanh`` are elementwise's),
``atan2``, the hyperbolic ones, logs and exps (``log2``, ``log10``, ``log1p``, ``expm1``, ``exp2``, ``logaddexp``,
``logaddexp2``), ``logit``, ``xlogy`` and ``hypot``, with their in-place forms and free functions.

Each op is one :class:`Function` whose backward is written with Tensor ops, with torch's formulas
(``tools/autograd/derivatives.yaml``), so that ``create_graph=True`` differentiates them again. Integer inputs compute
in the default float, as in torch.

>>> import tinygrad_like as tl
>>> x = tl.tensor([1.0, 8.0], requires_grad=True)
>>> y = x.log2()
>>> y.sum().backward()
>>> y.tolist(), [round(g, 6) for g in x.grad.tolist()]
([0.0, 3.0], [1.442695, 0.180337])
>>> tl.xlogy(2, tl.tensor([1.0])).tolist(), tl.arctan2 is tl.atan2
([0.0], True)
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..tensor_base import TensorBase
from . import special_functions as sf
from ._math_util import call_method, first_operand, need_tensor, not_implemented, run_binary
from ._util import as_float, float_operands, free_functions, operands
from .elementwise import where

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = [
    "acos", "asin", "atan", "atan2", "tan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "arccos", "arcsin", "arctan", "arctan2", "arcsinh", "arccosh", "arctanh",
    "log2", "log10", "log1p", "expm1", "exp2", "logaddexp", "logaddexp2", "hypot", "xlogy",
    "acos_", "asin_", "atan_", "arccos_", "arcsin_", "arctan_", "sinh_", "cosh_", "tan_", "asinh_", "acosh_", "atanh_",
    "arcsinh_", "arccosh_", "arctanh_", "log2_", "log10_", "log1p_", "expm1_", "exp2_", "xlogy_",
    "erfc", "erfc_", "erfinv", "lgamma", "digamma", "polygamma", "mvlgamma", "i0", "i0_", "igamma", "igammac", "sinc",
    "sinc_", "deg2rad", "deg2rad_", "rad2deg", "rad2deg_", "float_power", "ldexp", "ldexp_", "nextafter", "frexp",
    "signbit", "fmax", "fmin", "logit_",
]

#: ``frexp``'s result, as ``torch.return_types.frexp``: ``(mantissa, exponent)``
frexp_result = namedtuple("frexp", ["mantissa", "exponent"])
frexp_result.__doc__ = "``frexp``'s result, as ``torch.return_types.frexp``: ``(mantissa, exponent)``."

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


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


# ---- of two tensors: logaddexp, logaddexp2, hypot, atan2 --------------------------------------------
class _FloatBinary(Function):
    """A binary op of two tensors computed in floating point only (logaddexp, hypot: torch has no integer kernel)."""

    __slots__ = ()

    def _forward(self, a, b, op: str):
        need_tensor(b, op)
        xa, xb, dt = operands(a, b, op)
        if not dt.is_floating_point:
            raise not_implemented(op, dt)
        return xa, xb


class Logaddexp(_FloatBinary):
    """``log(exp(a) + exp(b))`` without overflow; gradients ``g / (1 + exp(b - a))`` and symmetric (torch's)."""

    __slots__ = ()

    def forward(self, a, b):
        xa, xb = self._forward(a, b, "logaddexp")
        self.save_for_backward(a, b)
        return run_binary(a, b, "logaddexp", a._dev.backend.logaddexp, xa, xb)

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
        return run_binary(a, b, "logaddexp2", a._dev.backend.logaddexp2, xa, xb)

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
        return run_binary(a, b, "hypot", a._dev.backend.hypot, xa, xb)

    def backward(self, g):
        a, b, y = self.saved_tensors
        nxt = self.next
        return (g * a / y if nxt[0] is not None else None, g * b / y if nxt[1] is not None else None)


class Atan2(Function):
    """``atan2(a, b)``, the angle of the point (b, a); integer inputs compute in the default float.
    Gradients ``g * b / (a**2 + b**2)`` and ``-g * a / (a**2 + b**2)``, 0 where both are 0 (torch's)."""

    __slots__ = ()

    def forward(self, a, b):
        need_tensor(b, "atan2")
        xa, xb, _ = float_operands(a, b, "atan2")
        self.save_for_backward(a, b)
        return run_binary(a, b, "atan2", a._dev.backend.atan2, xa, xb)

    def backward(self, g):
        a, b = self.saved_tensors
        a = a if a.dtype is g.dtype else a.to(g.dtype)
        b = b if b.dtype is g.dtype else b.to(g.dtype)
        den = a * a + b * b
        recip = where(den == 0, 0.0, den.reciprocal())
        nxt = self.next
        return (g * b * recip if nxt[0] is not None else None, g * -a * recip if nxt[1] is not None else None)


# ---- logit, xlogy --------------------------------------------------------------------------------
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


class Xlogy(Function):
    """``a * log(b)``, 0 where ``a == 0`` (unless ``b`` is NaN). Either operand may be a number (the first comes
    here as a 0-d tensor). Gradients: ``xlogy(g, b)`` (0 where ``a == 0`` and ``b <= 0``) and ``g * a / b``."""

    __slots__ = ("value",)

    def forward(self, a, b):
        xa, xb, _ = float_operands(a, b, "xlogy")
        self.value = None if isinstance(b, TensorBase) else b
        self.save_for_backward(a, b if self.value is None else None)
        return run_binary(a, b, "xlogy", a._dev.backend.xlogy, xa, xb)

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


# ---- sin, cos, rsqrt and erf (their Tensor methods are below) ------------------------------------
class Rsqrt(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return x._dev.backend.rsqrt(as_float(x))

    def backward(self, g):
        (y,) = self.saved_tensors
        return (-0.5 * g * y * y * y,)


class Sin(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.sin(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * x.cos(),)


class Cos(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.cos(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (-g * x.sin(),)


class Erf(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.erf(as_float(x))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * (2 / math.sqrt(math.pi)) * (-(x * x)).exp(),)


def _check_polygamma_order(n) -> None:
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def _check_mvlgamma_order(p) -> None:
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"mvlgamma(): argument 'p' must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def _as_float_tensor(x):
    """``x`` itself when floating, else converted to the default float (as torch's deg2rad of integers)."""
    return x if x.dtype.is_floating_point else x.to(dtypes.default_float)


class TranscendentalMixin:
    """Tensor methods: inverse trigonometric and hyperbolic functions, logs and exps, logit, xlogy, hypot."""

    __slots__ = ()

    # ---- trigonometric and hyperbolic ------------------------------------------------------------
    def sin(self):
        return Sin.apply(self)

    def cos(self):
        return Cos.apply(self)

    def rsqrt(self):
        return Rsqrt.apply(self)

    def erf(self):
        return Erf.apply(self)

    def acos(self) -> Tensor:
        return Acos.apply(self)

    def asin(self) -> Tensor:
        return Asin.apply(self)

    def atan(self) -> Tensor:
        return Atan.apply(self)

    def tan(self) -> Tensor:
        return Tan.apply(self)

    def sinh(self) -> Tensor:
        return Sinh.apply(self)

    def cosh(self) -> Tensor:
        return Cosh.apply(self)

    def asinh(self) -> Tensor:
        return Asinh.apply(self)

    def acosh(self) -> Tensor:
        return Acosh.apply(self)

    def atanh(self) -> Tensor:
        return Atanh.apply(self)

    def atan2(self, other) -> Tensor:
        """The angle of the point ``(other, self)``, in ``[-pi, pi]``."""
        return Atan2.apply(self, other)

    arccos, arcsin, arctan, arcsinh, arccosh, arctanh, arctan2 = acos, asin, atan, asinh, acosh, atanh, atan2

    # ---- logs and exps ---------------------------------------------------------------------------
    def log2(self) -> Tensor:
        return Log2.apply(self)

    def log10(self) -> Tensor:
        return Log10.apply(self)

    def log1p(self) -> Tensor:
        """``log(1 + x)``, accurate for small ``x``."""
        return Log1p.apply(self)

    def expm1(self) -> Tensor:
        """``exp(x) - 1``, accurate for small ``x``."""
        return Expm1.apply(self)

    def exp2(self) -> Tensor:
        return Exp2.apply(self)

    def logaddexp(self, other) -> Tensor:
        """``log(exp(self) + exp(other))`` without overflow."""
        return Logaddexp.apply(self, other)

    def logaddexp2(self, other) -> Tensor:
        return Logaddexp2.apply(self, other)

    def logit(self, eps: float | None = None) -> Tensor:
        """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given (its gradient is then
        0 outside that range, as torch's)."""
        return Logit.apply(self, eps)

    def xlogy(self, other) -> Tensor:
        """``self * log(other)``, 0 where ``self == 0``."""
        return Xlogy.apply(self, other)

    def hypot(self, other) -> Tensor:
        """``sqrt(self**2 + other**2)`` without overflow."""
        return Hypot.apply(self, other)

    # ---- in place (same versioning and checks as add_, mul_: see ops/inplace.py) ------------------------
    def acos_(self) -> Tensor:
        return self._inplace("acos_", call_method, "acos")

    def asin_(self) -> Tensor:
        return self._inplace("asin_", call_method, "asin")

    def atan_(self) -> Tensor:
        return self._inplace("atan_", call_method, "atan")

    def tan_(self) -> Tensor:
        return self._inplace("tan_", call_method, "tan")

    def sinh_(self) -> Tensor:
        return self._inplace("sinh_", call_method, "sinh")

    def cosh_(self) -> Tensor:
        return self._inplace("cosh_", call_method, "cosh")

    def asinh_(self) -> Tensor:
        return self._inplace("asinh_", call_method, "asinh")

    def acosh_(self) -> Tensor:
        return self._inplace("acosh_", call_method, "acosh")

    def atanh_(self) -> Tensor:
        return self._inplace("atanh_", call_method, "atanh")

    def atan2_(self, other) -> Tensor:
        return self._inplace("atan2_", Atan2.apply, other)

    arccos_, arcsin_, arctan_, arcsinh_, arccosh_, arctanh_, arctan2_ = (acos_, asin_, atan_, asinh_, acosh_,
                                                                           atanh_, atan2_)

    def log2_(self) -> Tensor:
        return self._inplace("log2_", call_method, "log2")

    def log10_(self) -> Tensor:
        return self._inplace("log10_", call_method, "log10")

    def log1p_(self) -> Tensor:
        return self._inplace("log1p_", call_method, "log1p")

    def expm1_(self) -> Tensor:
        return self._inplace("expm1_", call_method, "expm1")

    def exp2_(self) -> Tensor:
        return self._inplace("exp2_", call_method, "exp2")

    def logit_(self, eps: float | None = None) -> Tensor:
        return self._inplace("logit_", lambda x, _: x.logit(eps), None)

    def xlogy_(self, other) -> Tensor:
        return self._inplace("xlogy_", Xlogy.apply, other)

    def hypot_(self, other) -> Tensor:
        return self._inplace("hypot_", Hypot.apply, other)

    # ---- special functions (their nodes and host code: ops/special_functions.py) ------------------------
    def erfc(self) -> Tensor:
        """``1 - erf(x)``, accurate where erf is near 1."""
        return sf.Erfc.apply(self)

    def erfinv(self) -> Tensor:
        """The inverse of ``erf`` on [-1, 1] (+-inf at +-1, NaN outside)."""
        return sf.Erfinv.apply(self)

    def lgamma(self) -> Tensor:
        """``log|Gamma(x)|``."""
        return sf.Lgamma.apply(self)

    def digamma(self) -> Tensor:
        """``d/dx lgamma(x)``."""
        return sf.Digamma.apply(self)

    def polygamma(self, n: int) -> Tensor:
        """The ``n``-th derivative of digamma at ``self`` (``polygamma(0, x)`` is digamma)."""
        _check_polygamma_order(n)
        return sf.Polygamma.apply(self, n)

    def mvlgamma(self, p: int) -> Tensor:
        """The multivariate log-gamma function of dimension ``p``."""
        _check_mvlgamma_order(p)
        return sf.Mvlgamma.apply(self, p)

    def i0(self) -> Tensor:
        """The modified Bessel function of the first kind, order 0."""
        return sf.I0.apply(self)

    def igamma(self, other) -> Tensor:
        """The regularized lower incomplete gamma function ``P(self, other)``."""
        need_tensor(other, "igamma")
        return sf.Igamma.apply(self, other, False)

    def igammac(self, other) -> Tensor:
        """The regularized upper incomplete gamma function ``Q(self, other) = 1 - P(self, other)``."""
        need_tensor(other, "igammac")
        return sf.Igammac.apply(self, other, True)

    def sinc(self) -> Tensor:
        """``sin(pi x) / (pi x)``, 1 at 0."""
        return sf.Sinc.apply(self)

    def deg2rad(self) -> Tensor:
        return _as_float_tensor(self) * (math.pi / 180)

    def rad2deg(self) -> Tensor:
        return _as_float_tensor(self) * (180 / math.pi)

    def float_power(self, exponent) -> Tensor:
        """``self ** exponent`` computed in float64 (the result is float64, as torch's)."""
        e = exponent.to(dtypes.float64) if isinstance(exponent, TensorBase) else exponent
        return self.to(dtypes.float64) ** e

    def ldexp(self, other) -> Tensor:
        """``self * 2 ** other``."""
        need_tensor(other, "ldexp")
        return self * (2.0 ** other)

    def nextafter(self, other) -> Tensor:
        """The next floating point value after ``self`` towards ``other`` (its gradient is ``g`` for ``self``)."""
        need_tensor(other, "nextafter")
        return sf.Nextafter.apply(self, other)

    def frexp(self):
        """``(mantissa, exponent)`` with ``self = mantissa * 2 ** exponent``, ``|mantissa|`` in [0.5, 1); the exponent
        is int32 (as torch's); the mantissa's gradient is ``g / 2 ** exponent``."""
        if not self.dtype.is_floating_point:
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
        arr = np.asarray(self._x if self._dev.is_host else self._dev.backend.to_numpy(self._x))
        m, e = np.frexp(arr.astype(np.float64) if self.dtype is dtypes.bfloat16 else arr)
        be = self._dev.backend
        m = np.ascontiguousarray(m.astype(self.dtype.np))
        e = np.ascontiguousarray(e.astype(np.int32))
        if not self._dev.is_host:
            m, e = be.from_numpy(m), be.from_numpy(e)
        exponent = self._wrap(e, self._dev)
        return frexp_result(sf.Frexp.apply(self, m, exponent), exponent)

    def signbit(self) -> Tensor:
        """True where the sign bit is set (-0.0 and NaNs with the bit included)."""
        if self.dtype is dtypes.bool_:
            return self._full_like(False, dtypes.bool_)
        be = self._dev.backend
        if not self.dtype.is_floating_point:
            return self._wrap(be.lt(self._x, 0), self._dev)
        arr = np.asarray(self._x if self._dev.is_host else be.to_numpy(self._x))
        out = np.ascontiguousarray(np.signbit(arr))
        return self._wrap(out if self._dev.is_host else be.from_numpy(out), self._dev)

    def fmax(self, other) -> Tensor:
        """The elementwise maximum, ignoring NaN where the other value is a number."""
        need_tensor(other, "fmax")
        return sf.Fmax.apply(self, other, False)

    def fmin(self, other) -> Tensor:
        """The elementwise minimum, ignoring NaN where the other value is a number."""
        need_tensor(other, "fmin")
        return sf.Fmin.apply(self, other, True)

    def erfc_(self) -> Tensor:
        return self._inplace("erfc_", call_method, "erfc")

    def erfinv_(self) -> Tensor:
        return self._inplace("erfinv_", call_method, "erfinv")

    def lgamma_(self) -> Tensor:
        return self._inplace("lgamma_", call_method, "lgamma")

    def digamma_(self) -> Tensor:
        return self._inplace("digamma_", call_method, "digamma")

    def polygamma_(self, n: int) -> Tensor:
        return self._inplace("polygamma_", lambda x, _: x.polygamma(n), None)

    def mvlgamma_(self, p: int) -> Tensor:
        return self._inplace("mvlgamma_", lambda x, _: x.mvlgamma(p), None)

    def i0_(self) -> Tensor:
        return self._inplace("i0_", call_method, "i0")

    def igamma_(self, other) -> Tensor:
        return self._inplace("igamma_", lambda x, o: x.igamma(o), other)

    def igammac_(self, other) -> Tensor:
        return self._inplace("igammac_", lambda x, o: x.igammac(o), other)

    def sinc_(self) -> Tensor:
        return self._inplace("sinc_", call_method, "sinc")

    def deg2rad_(self) -> Tensor:
        return self._inplace("deg2rad_", call_method, "deg2rad")

    def rad2deg_(self) -> Tensor:
        return self._inplace("rad2deg_", call_method, "rad2deg")

    def float_power_(self, exponent) -> Tensor:
        if self.dtype is not dtypes.float64:
            raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.name} but the operation's "
                               f"result requires dtype float64 (as in torch: call .double() first)")
        return self._inplace("float_power_", lambda x, e: x.float_power(e), exponent)

    def ldexp_(self, other) -> Tensor:
        return self._inplace("ldexp_", lambda x, o: x.ldexp(o), other)

    def nextafter_(self, other) -> Tensor:
        return self._inplace("nextafter_", lambda x, o: x.nextafter(o), other)


(acos, asin, atan, atan2, tan, sinh, cosh, asinh, acosh, atanh, log2, log10, log1p, expm1, exp2, logaddexp, logaddexp2,
 logit, hypot) = free_functions(TranscendentalMixin, "acos", "asin", "atan", "atan2", "tan", "sinh", "cosh", "asinh",
                                "acosh", "atanh", "log2", "log10", "log1p", "expm1", "exp2", "logaddexp", "logaddexp2",
                                "logit", "hypot")
arccos, arcsin, arctan, arctan2, arcsinh, arccosh, arctanh = acos, asin, atan, atan2, asinh, acosh, atanh
(acos_, asin_, atan_, arccos_, arcsin_, arctan_, sinh_, cosh_, tan_, asinh_, acosh_, atanh_, arcsinh_, arccosh_,
 arctanh_, log2_, log10_, log1p_, expm1_, exp2_, xlogy_) = free_functions(
    TranscendentalMixin, "acos_", "asin_", "atan_", "arccos_", "arcsin_", "arctan_", "sinh_", "cosh_", "tan_", "asinh_",
    "acosh_", "atanh_", "arcsinh_", "arccosh_", "arctanh_", "log2_", "log10_", "log1p_", "expm1_", "exp2_", "xlogy_")


def xlogy(input, other) -> Tensor:
    """``input * log(other)``, 0 where ``input == 0``; ``input`` may be a Python number (as torch's)."""
    return Xlogy.apply(first_operand(input, other, "xlogy"), other)
sin, cos, rsqrt, erf = free_functions(TranscendentalMixin, "sin", "cos", "rsqrt", "erf")  # (tl.<name>, not in __all__)

(erfc, erfinv, lgamma, digamma, i0, sinc, deg2rad, rad2deg, float_power, ldexp, nextafter, frexp, signbit, fmax, fmin,
 igamma, igammac, mvlgamma) = free_functions(
    TranscendentalMixin, "erfc", "erfinv", "lgamma", "digamma", "i0", "sinc", "deg2rad", "rad2deg", "float_power",
    "ldexp", "nextafter", "frexp", "signbit", "fmax", "fmin", "igamma", "igammac", "mvlgamma")
erfc_, i0_, sinc_, deg2rad_, rad2deg_, ldexp_ = free_functions(
    TranscendentalMixin, "erfc_", "i0_", "sinc_", "deg2rad_", "rad2deg_", "ldexp_")


def polygamma(n: int, input) -> Tensor:
    """The ``n``-th derivative of digamma (torch's order of arguments: the order first)."""
    need_tensor(input, "polygamma", "input", 2)
    return input.polygamma(n)


def logit_(input, eps: float | None = None) -> Tensor:
    """``logit`` written into ``input``."""
    need_tensor(input, "logit_", "input", 1)
    return input.logit_(eps)
