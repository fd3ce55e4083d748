"""Special functions: the gamma family (``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma``, the incomplete gamma
functions ``igamma``/``igammac``, ``zeta``), the error-function family (``erfc``, ``erfinv``, ``erfcx``, ``ndtri``,
``log_ndtr``), Bessel functions (``i0``, ``i0e``, ``i1``, ``i1e``, ``bessel_j0``...), ``sinc``, ``entr``,
``xlog1py`` and the classical orthogonal polynomials: the nodes, and the host code that computes them.

They compute on the host in float64 and round once to the result's dtype (the input's floating dtype, or the default
float for integers), whatever the backend: NumPy has no kernels for most of them. Gradients are torch's formulas
(``tools/autograd/derivatives.yaml``), written with Tensor ops so that they differentiate again; the functions torch
does not differentiate (the Bessel functions of ``torch.special``, the orthogonal polynomials) return results with
no history, as torch's do.

``erfc``, ``lgamma``, ``digamma``, ``erfinv``, ``i0`` and ``sinc`` are computed with NumPy and :mod:`math` alone
(for the first three, scipy's faster kernels are used when scipy happens to be installed). The rest (``polygamma`` of
order >= 1, ``zeta``, ``igamma``, the scaled and first-order Bessel functions, ``ndtri``, ``erfcx``, ``airy_ai``...)
call ``scipy.special``, which is not a dependency of this package: it is imported the first time one of them runs,
and a clear ``ModuleNotFoundError`` says to install it when it is missing.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..autograd.function import Function
from ..backends import numpy_special
from ..tensor_base import TensorBase
from ._math_util import need_tensor, not_implemented
from ._util import operands
from .elementwise import where

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def scipy_special():
    """``scipy.special``, imported when a function that needs it first runs (scipy is optional here)."""
    try:
        import scipy.special  # (optional dependency: only these functions need it, so the core imports without it)
    except ImportError:
        raise ModuleNotFoundError("this special function is computed with scipy.special, which is not installed; "
                                  "install it with `pip install scipy`", name="scipy") from None
    return scipy.special


# ---- host evaluation ---------------------------------------------------------------------------------
def result_dtype(*xs):
    """The floating dtype of a special function's result: the promoted dtype, or the default float for integers."""
    dt = xs[0].dtype if len(xs) == 1 else dtypes.result_type(*xs)
    return dt if dt.is_floating_point else dtypes.default_float


def _host64(x) -> np.ndarray:
    arr = x._x if x._dev.is_host else x._dev.backend.to_numpy(x._x)
    return np.asarray(arr).astype(np.float64)


def _native(x, arr: np.ndarray, dt):
    out = np.ascontiguousarray(np.asarray(arr).astype(dt.np, copy=False))
    return out if x._dev.is_host else x._dev.backend.from_numpy(out)


def host_apply(fn, op: str, *xs):
    """``fn`` of the inputs' float64 values (broadcast), rounded to the result dtype, as the first input's native."""
    first = xs[0]
    for t in xs[1:]:
        if t._dev is not first._dev:
            raise RuntimeError(f"{op}: expected all tensors to be on the same device, but found tensors on "
                               f"{first._dev} and {t._dev}; move one with .to(device) first")
    args = [_host64(t) for t in xs]
    try:
        args = np.broadcast_arrays(*args) if len(args) > 1 else args
    except ValueError:
        shapes = " and ".join(str(tuple(t.shape)) for t in xs)
        raise RuntimeError(f"{op}: the shapes {shapes} cannot be broadcast together") from None
    with np.errstate(all="ignore"):
        out = fn(*args)
    return _native(first, out, result_dtype(*xs))


def no_history(x, fn, op: str, *others):
    """A result torch does not differentiate: computed on the host, with no graph node."""
    return x._wrap(host_apply(fn, op, x, *others), x._dev)


# ---- the functions themselves, on float64 arrays ---------------------------------------------------------------
def _scipy_if_installed():
    """``scipy.special`` when it is installed, else None (the fallbacks below are exact but slower)."""
    try:
        import scipy.special  # (optional: only to run faster where it is installed)
    except ImportError:
        return None
    return scipy.special


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)|: inf at the poles (0 and the negative integers) and at +-inf, as torch. scipy's gammaln when
    installed (10x faster), else :func:`math.lgamma` element by element."""
    sp = _scipy_if_installed()
    if sp is not None:
        out = sp.gammaln(x)
        return np.where(np.isneginf(x), np.inf, out)

    def one(v: float) -> float:
        try:
            return math.lgamma(v)
        except (ValueError, OverflowError):
            return math.inf
    return np.vectorize(one, otypes=[np.float64])(x) if x.size else x.copy()


def erfc(x: np.ndarray) -> np.ndarray:
    """1 - erf(x) without cancellation: scipy's when installed, else :func:`math.erfc` element by element."""
    sp = _scipy_if_installed()
    if sp is not None:
        return sp.erfc(x)
    return np.vectorize(math.erfc, otypes=[np.float64])(x) if x.size else x.copy()


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x), as torch: -inf at +0, +inf at -0, NaN at the negative integers and at -inf. scipy's when installed;
    else the recurrence up to x >= 10, then the asymptotic series (4.5e-13 relative, or 2e-14 absolute near the root at
    1.46), and the reflection formula below 0.5."""
    x = np.asarray(x, np.float64)
    sp = _scipy_if_installed()
    if sp is not None:
        return sp.digamma(x)  # (its values at the poles, +-0 and +-inf are torch's)
    neg = x < 0.5
    v = np.where(neg, 1.0 - x, x)
    steps = np.clip(np.ceil(10.0 - np.where(np.isfinite(v), v, 10.0)), 0, 10)  # (v + steps >= 10)
    acc = np.zeros_like(v)
    for k in range(int(steps.max(initial=0))):
        acc -= np.where(k < steps, 1.0 / (v + k), 0.0)
    v = v + steps
    inv2 = 1.0 / (v * v)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    out = acc + np.log(v) - 0.5 / v - series
    refl = out - math.pi / np.tan(math.pi * x)
    out = np.where(neg, refl, out)
    out = np.where(neg & (x == np.floor(x)), np.nan, out)  # (the poles at the negative integers)
    out = np.where(x == 0, np.where(np.signbit(x), np.inf, -np.inf), out)
    out = np.where(np.isposinf(x), np.inf, out)
    return np.where(np.isneginf(x), np.nan, out)


def erfinv(x: np.ndarray) -> np.ndarray:
    """The inverse of erf: Giles' approximation (float32 accuracy), then two Newton steps on float64's erf; +-inf at
    +-1 and NaN outside [-1, 1], as torch."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - x) * (1.0 + x))
        a = w - 2.5
        p1 = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                  0.246640727, 1.50140941):
            p1 = p1 * a + c
        b = np.sqrt(w) - 3.0
        p2 = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                  1.00167406, 2.83297682):
            p2 = p2 * b + c
        y = np.where(w < 5.0, p1, p2) * x
        for _ in range(2):
            err = numpy_special.erf(y) - x
            y = y - err / (2.0 / _SQRT_PI * np.exp(-y * y))
    y = np.where(np.abs(x) == 1.0, np.copysign(np.inf, x), y)
    y = np.where(x == 0, x, y)
    return np.where(np.abs(x) > 1.0, np.nan, y)


def sinc(x: np.ndarray) -> np.ndarray:
    """sin(pi x) / (pi x), 1 at 0 (NumPy's normalized sinc, torch's)."""
    return np.sinc(x)


def polygamma(n: int):
    def fn(x: np.ndarray) -> np.ndarray:
        if n == 0:
            return digamma(x)
        return scipy_special().polygamma(n, x)
    return fn


def mvlgamma(p: int):
    """The multivariate log-gamma of dimension ``p``: ``p (p-1)/4 log(pi) + sum_i lgamma(x - i/2)``."""
    def fn(x: np.ndarray) -> np.ndarray:
        out = np.full_like(x, p * (p - 1) / 4 * math.log(math.pi))
        for i in range(p):
            out = out + lgamma(x - i / 2)
        return out
    return fn


def i0(x: np.ndarray) -> np.ndarray:
    return np.i0(x) if x.size else x.copy()


def scipy_function(name: str):
    """The scipy.special function ``name``, looked up when called."""
    def fn(*args):
        return getattr(scipy_special(), name)(*args)
    fn.__name__ = name
    return fn


# ---- nodes: one input ---------------------------------------------------------------------------------------
class _HostUnary(Function):
    """A special function of one tensor computed on the host (``compute``: float64 array -> array); subclasses give
    the derivative in ``grad(x, y, g)`` (``y``: the output, kept when ``save_output`` is set)."""

    __slots__ = ()
    op = ""
    compute = None

    def forward(self, x):
        self.save_for_backward(x)
        return host_apply(type(self).compute, self.op, x)

    def backward(self, g):
        saved = self.saved_tensors
        x = saved[0]
        if x.dtype is not g.dtype:
            x = x.to(g.dtype)
        return (self.grad(x, saved[1] if len(saved) > 1 else None, g),)


class Erfc(_HostUnary):
    __slots__ = ()
    op, compute = "erfc", staticmethod(erfc)

    def grad(self, x, y, g):
        return g * (-2 / _SQRT_PI) * (-(x * x)).exp()


class Erfinv(_HostUnary):
    __slots__ = ()
    op, compute, save_output = "erfinv", staticmethod(erfinv), True

    def grad(self, x, y, g):
        return g * (0.5 * _SQRT_PI) * (y * y).exp()


class Lgamma(_HostUnary):
    __slots__ = ()
    op, compute = "lgamma", staticmethod(lgamma)

    def grad(self, x, y, g):
        return g * x.digamma()


class Digamma(_HostUnary):
    __slots__ = ()
    op, compute = "digamma", staticmethod(digamma)

    def grad(self, x, y, g):
        return g * Polygamma.apply(x, 1)


class Sinc(_HostUnary):
    __slots__ = ()
    op, compute = "sinc", staticmethod(sinc)

    def grad(self, x, y, g):
        zero = x == 0
        xs = where(zero, 1.0, x)  # (no 0/0 where the gradient is 0 anyway)
        px = xs * math.pi
        return where(zero, 0.0, g * ((px * px.cos() - px.sin()) / (px * xs)))


class I0(_HostUnary):
    __slots__ = ()
    op, compute = "i0", staticmethod(i0)

    def grad(self, x, y, g):
        return g * I1.apply(x)


class I0e(_HostUnary):
    __slots__ = ()
    op, compute = "special_i0e", staticmethod(scipy_function("i0e"))

    def grad(self, x, y, g):
        return g * (I1e.apply(x) - x.sign() * I0e.apply(x))


class I1(_HostUnary):
    __slots__ = ()
    op, compute = "special_i1", staticmethod(scipy_function("i1"))

    def grad(self, x, y, g):
        zero = x == 0
        xs = where(zero, 1.0, x)
        return g * where(zero, 0.5, I0.apply(x) - I1.apply(x) / xs)


class I1e(_HostUnary):
    __slots__ = ()
    op, compute = "special_i1e", staticmethod(scipy_function("i1e"))

    def grad(self, x, y, g):
        zero = x == 0
        xs = where(zero, 1.0, x)
        return g * where(zero, 0.5, I0e.apply(x) - I1e.apply(x) * (x.sign() + 1 / xs))


class Ndtri(_HostUnary):
    __slots__ = ()
    op, compute, save_output = "special_ndtri", staticmethod(scipy_function("ndtri")), True

    def grad(self, x, y, g):
        return g * _SQRT_2PI * (y * y * 0.5).exp()


class LogNdtr(_HostUnary):
    __slots__ = ()
    op, compute, save_output = "special_log_ndtr", staticmethod(scipy_function("log_ndtr")), True

    def grad(self, x, y, g):
        return g * (-(x * x) * 0.5 - y).exp() / _SQRT_2PI


class Erfcx(_HostUnary):
    __slots__ = ()
    op, compute, save_output = "special_erfcx", staticmethod(scipy_function("erfcx")), True

    def grad(self, x, y, g):
        return g * (2 * x * y - 2 / _SQRT_PI)


class Entr(_HostUnary):
    """``-x log x`` (0 at 0, -inf below 0); gradient ``-(1 + log x)`` (torch's formula)."""

    __slots__ = ()
    op, compute = "special_entr", staticmethod(lambda x: np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)),
                                                                   np.where(x == 0, 0.0,
                                                                            np.where(x < 0, -np.inf, x))))

    def grad(self, x, y, g):
        return g * -(x.log() + 1)


class Polygamma(Function):
    """``polygamma(n, x)``, the n-th derivative of digamma; its gradient is ``polygamma(n + 1, x)``."""

    __slots__ = ("n",)

    def forward(self, x, n):
        self.n = n
        self.save_for_backward(x)
        return host_apply(polygamma(n), "polygamma", x)

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * Polygamma.apply(x, self.n + 1), None


class Mvlgamma(Function):
    """The multivariate log-gamma of dimension ``p``; gradient ``sum_i digamma(x - i/2)`` (torch's)."""

    __slots__ = ("p",)

    def forward(self, x, p):
        self.p = p
        self.save_for_backward(x)
        return host_apply(mvlgamma(p), "mvlgamma", x)

    def backward(self, g):
        (x,) = self.saved_tensors
        total = x.digamma()
        for i in range(1, self.p):
            total = total + (x - i / 2).digamma()
        return g * total, None


# ---- nodes: two tensors ----------------------------------------------------------------------------------------
def tensor_pair(a, b, op: str):
    """Both operands as tensors (a number becomes a 0-d tensor of the other's device), at least one a tensor."""
    if not isinstance(a, TensorBase):
        need_tensor(b, op, "other", 2)
        a = b._left_number(a)
        if a is None:
            raise TypeError(f"{op}(): expected a Tensor or a number as 'input'")
    elif not isinstance(b, TensorBase):
        b2 = a._left_number(b)
        if b2 is None:
            raise TypeError(f"{op}(): argument 'other' must be Tensor or Number, not {type(b).__name__}")
        b = b2
    return a, b


def _not_differentiable(what: str) -> NotImplementedError:
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


class Igamma(Function):
    """The regularized lower incomplete gamma function P(a, x). Gradient w.r.t. ``x``:
    ``exp((a - 1) log x - x - lgamma(a))``; w.r.t. ``a`` torch has none: its backward raises, as here."""

    __slots__ = ("upper",)

    def forward(self, a, x, upper):
        self.upper = upper
        self.save_for_backward(a, x)
        name = "igammac" if upper else "igamma"
        return host_apply(scipy_function("gammaincc" if upper else "gammainc"), name, a, x)

    def backward(self, g):
        a, x = self.saved_tensors
        if self.next[0] is not None:
            raise _not_differentiable(f"{'igammac' if self.upper else 'igamma'}: input")
        d = g * ((a - 1) * x.log() - x - a.lgamma()).exp()
        return None, (-d if self.upper else d), None


class Zeta(Function):
    """The Hurwitz zeta function zeta(x, q); gradient w.r.t. ``q``: ``-x zeta(x + 1, q)``, none w.r.t. ``x`` (torch's
    backward raises there)."""

    __slots__ = ()

    def forward(self, x, q):
        self.save_for_backward(x, q)
        return host_apply(scipy_function("zeta"), "special_zeta", x, q)

    def backward(self, g):
        x, q = self.saved_tensors
        if self.next[0] is not None:
            raise _not_differentiable("zeta")
        return None, g * -x * Zeta.apply(x + 1, q)


class Xlog1py(Function):
    """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN). Gradients: ``xlog1py(g, y)`` (0 where ``x == 0``
    and ``y <= -1``) and ``g x / (1 + y)`` (torch's)."""

    __slots__ = ()

    def forward(self, x, y):
        self.save_for_backward(x, y)

        def fn(a, b):
            return np.where((a == 0) & ~np.isnan(b), 0.0, a * np.log1p(b))
        return host_apply(fn, "special_xlog1py", x, y)

    def backward(self, g):
        x, y = self.saved_tensors
        nxt = self.next
        gx = gy = None
        if nxt[0] is not None:
            gx = Xlog1py.apply(g, y).masked_fill((x == 0) & (y <= -1), 0)
        if nxt[1] is not None:
            gy = g * x / (y + 1)
        return gx, gy


class Fmax(Function):
    """``fmax``/``fmin``: the larger (smaller) value, NaN only where both are. Gradients as torch's: to ``a`` where it
    won or ``b`` is NaN (a tie goes to ``a``), to ``b`` elsewhere."""

    __slots__ = ("smaller",)

    def forward(self, a, b, smaller):
        self.smaller = smaller
        op = "fmin" if smaller else "fmax"
        xa, xb, _ = operands(a, b, op)
        self.save_for_backward(a, b)
        be = a._dev.backend
        if a._dev.is_host:
            try:
                return (np.fmin if smaller else np.fmax)(xa, xb)
            except ValueError:
                raise RuntimeError(f"{op}: the shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be broadcast "
                                   f"together") from None
        ha, hb = be.to_numpy(xa), be.to_numpy(xb)
        return be.from_numpy(np.ascontiguousarray((np.fmin if smaller else np.fmax)(ha, hb)))

    def backward(self, g):
        a, b = self.saved_tensors
        a_wins = ((a <= b) if self.smaller else (a >= b)) | b.isnan()
        nxt = self.next
        return (where(a_wins, g, 0.0) if nxt[0] is not None else None,
                where(a_wins, 0.0, g) if nxt[1] is not None else None, None)


# ---- torch.special's functions without a derivative: Bessel functions and orthogonal polynomials --------------
def spherical_bessel_j0(x: np.ndarray) -> np.ndarray:
    """sin(x) / x, 1 at 0."""
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 1.0, np.sin(safe) / safe)


def airy_ai(x: np.ndarray) -> np.ndarray:
    return scipy_special().airy(x)[0]


def _first_two(kind: str, x: np.ndarray):
    one = np.ones_like(x)
    first = {"t": x, "u": 2 * x, "v": 2 * x - 1, "w": 2 * x + 1, "h": 2 * x, "he": x, "l": 1 - x, "p": x}[kind]
    return one, first


def _next_term(kind: str, x: np.ndarray, k: int, pk: np.ndarray, pk1: np.ndarray) -> np.ndarray:
    """P_{k+1} from P_k and P_{k-1}, by the family's three-term recurrence."""
    if kind in ("t", "u", "v", "w"):
        return 2 * x * pk - pk1
    if kind == "h":
        return 2 * x * pk - 2 * k * pk1
    if kind == "he":
        return x * pk - k * pk1
    if kind == "l":
        return ((2 * k + 1 - x) * pk - k * pk1) / (k + 1)
    return ((2 * k + 1) * x * pk - k * pk1) / (k + 1)  # (Legendre)


def polynomial(kind: str, shifted: bool = False):
    """The orthogonal polynomial family ``kind`` of degree ``n`` (broadcast with ``x``; truncated to an integer as
    torch's kernels take it), evaluated by its three-term recurrence; 0 for a negative degree, as torch."""
    def fn(x: np.ndarray, n: np.ndarray) -> np.ndarray:
        if shifted:
            x = 2 * x - 1
        deg = np.where(np.isfinite(n), n, -1).astype(np.int64)
        out = np.zeros_like(x)
        if x.size == 0 or deg.max(initial=-1) < 0:
            return out
        p0, p1 = _first_two(kind, x)
        out = np.where(deg == 0, p0, out)
        out = np.where(deg == 1, p1, out)
        prev, cur = p0, p1
        for k in range(1, int(deg.max())):
            prev, cur = cur, _next_term(kind, x, k, cur, prev)
            out = np.where(deg == k + 1, cur, out)
        return out
    return fn


class Nextafter(Function):
    """The next representable value after ``a`` towards ``b``, in the promoted floating dtype. Gradient: ``g`` to
    ``a`` where ``a != b`` (0 where they are equal, when the result is ``b`` itself), zero to ``b`` (torch's)."""

    __slots__ = ()

    def forward(self, a, b):
        xa, xb, dt = operands(a, b, "nextafter")
        if not dt.is_floating_point:
            raise not_implemented("nextafter", dt)
        self.save_for_backward(a, b)
        be = a._dev.backend
        if not a._dev.is_host:
            xa, xb = be.to_numpy(xa), be.to_numpy(xb)
        try:
            out = np.nextafter(np.asarray(xa, dt.np), np.asarray(xb, dt.np))
        except ValueError:
            raise RuntimeError(f"nextafter: the shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be broadcast "
                               f"together") from None
        out = np.ascontiguousarray(out)
        return out if a._dev.is_host else be.from_numpy(out)

    def backward(self, g):
        a, b = self.saved_tensors
        nxt = self.next
        return (where(a == b, 0.0, g) if nxt[0] is not None else None,
                g.new_zeros(g.shape) if nxt[1] is not None else None)


class Frexp(Function):
    """``frexp``'s mantissa ``x / 2 ** e`` (``e``, the exponent, comes computed); gradient ``g / 2 ** e`` (torch's)."""

    __slots__ = ()

    def forward(self, x, mantissa, exponent):
        self.save_for_backward(exponent)
        return mantissa

    def backward(self, g):
        (e,) = self.saved_tensors
        return g * (2.0 ** -e.to(g.dtype)), None, None


class Fmin(Fmax):
    """``fmin`` (a node class of its own, so its name is torch's ``FminBackward0``)."""

    __slots__ = ()


class Igammac(Igamma):
    """``igammac`` (a node class of its own, so its name is torch's ``IgammacBackward0``)."""

    __slots__ = ()
