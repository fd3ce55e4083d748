"""Special functions and samplers the distributions need and the core does not have (yet): lgamma, digamma,
polygamma, erfinv, a differentiable Cholesky factor and triangular solve, and the random draws NumPy makes for us
(gamma with its reparameterised gradient, Poisson, binomial).

Each differentiable one is a small :class:`~tinygrad_like.autograd.function.Function`: the forward in float64 NumPy
(on the host), the backward written with Tensor ops (so higher derivatives work where the derivative's own op has a
backward). They are private to this package: when the core grows ``tl.lgamma`` and friends, the distributions can
switch to them.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from ..creation import arange, eye, tensor
from ..ops.linalg import LinAlgError
from ..random import default_generator
from ..tensor import Tensor

_EULER = 0.57721566490153286061
# Bernoulli numbers B_2k (k = 1..8), for the asymptotic series of digamma and polygamma
_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _host(t: Tensor) -> np.ndarray:
    """A tensor's values as a float64 NumPy array (a copy on the host)."""
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _like(values: np.ndarray, t: Tensor) -> Tensor:
    """``values`` as a tensor with ``t``'s dtype (floating: float32 for an integer ``t``) and device."""
    dtype = t.dtype if t.dtype.is_floating_point else None
    return tensor(np.asarray(values), dtype=dtype, device=t.device)


# ---- NumPy kernels (float64, elementwise) ---------------------------------------------------------------------

def np_lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)|, +inf at the poles (0, -1, -2, ...) as torch: Lanczos' approximation (g = 7, 9 terms; about
    1e-15 relative in Gamma) for x >= 1/2, the reflection formula below."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        pole = (x <= 0) & (x == np.floor(x))
        low = x < 0.5
        z = np.where(low, 1 - x, x) - 1
        a = np.full_like(z, _LANCZOS[0])
        for i, c in enumerate(_LANCZOS[1:], 1):
            a = a + c / (z + i)
        t = z + 7.5
        right = 0.5 * math.log(2 * math.pi) + (z + 0.5) * np.log(t) - t + np.log(a)
        right = np.where(np.isinf(z), np.inf, right)
        out = np.where(low, np.log(math.pi / np.abs(np.sin(math.pi * x))) - right, right)
        return np.where(pole | np.isinf(x), np.inf, out)


_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
            12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)


def np_polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """psi^(n)(x) (n = 0 is digamma): shift x above 10 with the recurrence, then the asymptotic series; the
    reflection formula for x < 0 (digamma only, as torch's polygamma for n >= 1 is defined on x > 0 here)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        if n == 0:
            neg = x < 0
            xr = np.where(neg, 1 - x, x)
            res = _polygamma_pos(0, xr)
            res = np.where(neg, res - math.pi / np.tan(math.pi * x), res)
            res = np.where((x <= 0) & (x == np.floor(x)), np.where(x == 0, -np.inf, np.nan), res)
            return res
        res = _polygamma_pos(n, x)
        return np.where(x <= 0, np.where(x == np.floor(x), np.inf if n % 2 else np.nan, np.nan), res)


def _polygamma_pos(n: int, x: np.ndarray) -> np.ndarray:
    x = np.where(x > 0, x, 1.0)  # (the callers put the poles and negative arguments back)
    acc = np.zeros_like(x)
    sign = (-1) ** (n + 1)
    fact = math.factorial(n)
    z = x.copy()
    for _ in range(12):  # psi^(n)(x) = psi^(n)(x+1) + sign n! / x^(n+1)
        small = z < 12
        if n == 0:
            acc = np.where(small, acc - 1 / z, acc)
        else:
            acc = np.where(small, acc + sign * fact / z ** (n + 1), acc)
        z = np.where(small, z + 1, z)
    if n == 0:
        series = np.log(z) - 0.5 / z
        for k, b in enumerate(_B2K, 1):
            series -= b / (2 * k * z ** (2 * k))
    else:
        series = math.factorial(n - 1) / z ** n + fact / (2 * z ** (n + 1))
        for k, b in enumerate(_B2K, 1):
            series = series + b * math.factorial(2 * k + n - 1) / (math.factorial(2 * k) * z ** (2 * k + n))
        series = sign * series
    return acc + series


def np_erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse error function: Giles' single-precision approximation, polished by Newton steps in float64."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        w = -np.log((1.0 - y) * (1.0 + y))
        small = w < 5
        ws, wl = w - 2.5, np.sqrt(w) - 3.0
        ps = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            ps = c + ps * ws
        pl = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            pl = c + pl * wl
        x = np.where(small, ps, pl) * y
        erf = np.vectorize(math.erf, otypes=[np.float64])
        for _ in range(2):
            fine = np.isfinite(x)
            step = (erf(np.where(fine, x, 0.0)) - y) / (2 / math.sqrt(math.pi) * np.exp(-np.where(fine, x, 0.0) ** 2))
            x = np.where(fine, x - step, x)
        x = np.where(y == 1, np.inf, np.where(y == -1, -np.inf, x))
        return np.where(np.abs(y) > 1, np.nan, x)


_MAX_TERMS = 20000


def np_gammainc(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The regularised lower incomplete gamma function P(a, x): its series below x = a + 1, the continued fraction
    of Q = 1 - P above."""
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        xs = np.maximum(x, 1e-300)
        log_pre = a * np.log(xs) - xs - np_lgamma(a)
        term = 1 / a
        total = term.copy()
        for k in range(1, _MAX_TERMS):  # (about sqrt(a) terms near x = a: run until every entry converged)
            term = term * x / (a + k)
            total = total + term
            if k % 16 == 0 and not np.any(np.abs(term) > 1e-17 * np.abs(total)):
                break
        series = total * np.exp(log_pre)
        # Lentz's continued fraction for Q(a, x)
        tiny = 1e-300
        b = x + 1 - a
        c = np.full_like(b, 1 / tiny)
        d = 1 / np.where(b == 0, tiny, b)
        h = d.copy()
        for i in range(1, _MAX_TERMS):
            an = -i * (i - a)
            b = b + 2
            d = an * d + b
            d = 1 / np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            delta = d * c
            h = h * delta
            if i % 16 == 0 and not np.any(np.abs(delta[x >= a + 1] - 1) > 1e-16):
                break
        cf = 1 - np.exp(log_pre) * h
        out = np.where(x < a + 1, series, cf)
        return np.where(x <= 0, 0.0, np.where(np.isinf(x), 1.0, out))


# ---- differentiable functions -----------------------------------------------------------------------------------

class _Lgamma(Function):
    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        return _like(np_lgamma(_host(x)), x)

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * digamma(x),)


class _Polygamma(Function):
    __slots__ = ("n",)

    def forward(self, x, n):
        self.n = n
        self.save_for_backward(x)
        return _like(np_polygamma(n, _host(x)), x)

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * polygamma(self.n + 1, x), None)


class _Erfinv(Function):
    __slots__ = ()
    save_output = True

    def forward(self, x):
        return _like(np_erfinv(_host(x)), x)

    def backward(self, g):
        (y,) = self.saved_tensors
        return (g * (math.sqrt(math.pi) / 2) * (y * y).exp(),)


def _float(x) -> Tensor:
    if not isinstance(x, Tensor):
        return tensor(float(x))
    return x if x.dtype.is_floating_point else x.float()


def lgamma(input, *, out=None) -> Tensor:
    """log|Gamma(input)| (torch.lgamma)."""
    return _Lgamma.apply(_float(input))


def digamma(input, *, out=None) -> Tensor:
    """d/dx lgamma(x) (torch.digamma)."""
    return _Polygamma.apply(_float(input), 0)


def polygamma(n: int, input, *, out=None) -> Tensor:
    """The n-th derivative of digamma (torch.polygamma)."""
    return _Polygamma.apply(_float(input), int(n))


def mvlgamma(input, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p`` (torch.mvlgamma)."""
    x = _float(input)
    shifts = arange(p, dtype=x.dtype, device=x.device) * -0.5
    return lgamma(x.unsqueeze(-1) + shifts).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def erfinv(input, *, out=None) -> Tensor:
    """The inverse error function (torch.erfinv)."""
    return _Erfinv.apply(_float(input))


def gammainc(input, other, *, out=None) -> Tensor:
    """The regularised lower incomplete gamma function (torch.special.gammainc; no gradient, as torch's for
    ``input``)."""
    a, x = _float(input), _float(other)
    return _like(np_gammainc(_host(a), _host(x)), a if a.ndim >= x.ndim else x).detach()


class _StandardGamma(Function):
    """Gamma(alpha, 1) draws; the backward is the implicit reparameterisation gradient
    dx/dalpha = -(dP(alpha, x)/dalpha) / p(x; alpha) (torch's _standard_gamma_grad computes the same quantity)."""

    __slots__ = ()

    def forward(self, alpha, generator):
        a = _host(alpha)
        gen = (generator or default_generator).np_generator()
        x = gen.standard_gamma(a) if a.size else np.zeros_like(a)
        tiny = float(np.finfo(alpha.dtype.np).tiny) if alpha.dtype.is_floating_point else 1e-38
        out = _like(np.maximum(x, tiny), alpha)
        self.save_for_backward(alpha, out)
        return out

    def backward(self, g):
        alpha, x = self.saved_tensors
        a, v = _host(alpha), _host(x)
        h = 1e-5 * np.maximum(a, 1e-3)
        dcdf = (np_gammainc(a + h, v) - np_gammainc(a - h, v)) / (2 * h)
        log_pdf = (a - 1) * np.log(v) - v - np_lgamma(a)
        with np.errstate(all="ignore"):
            grad = np.nan_to_num(-dcdf / np.exp(log_pdf), nan=0.0, posinf=0.0, neginf=0.0)
        return (g * _like(grad, alpha), None)


def standard_gamma(alpha: Tensor, generator=None) -> Tensor:
    """Gamma(alpha, 1) samples, differentiable in ``alpha`` (torch._standard_gamma)."""
    return _StandardGamma.apply(alpha, generator)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson draws with the given rates (torch.poisson)."""
    gen = (generator or default_generator).np_generator()
    return _like(gen.poisson(_host(input)).astype(np.float64), input)


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Binomial draws (torch.binomial)."""
    gen = (generator or default_generator).np_generator()
    n, p = np.broadcast_arrays(_host(count), _host(prob))
    return _like(gen.binomial(n.astype(np.int64), np.clip(p, 0, 1)).astype(np.float64), prob)


# ---- linear algebra ----------------------------------------------------------------------------------------------

def _lower_solve(a: np.ndarray, b: np.ndarray, upper: bool, left: bool, unitriangular: bool) -> np.ndarray:
    a = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        eye = np.eye(a.shape[-1], dtype=a.dtype)
        a = a * (1 - eye) + eye
    if left:
        return np.linalg.solve(*_batch(a, b))
    # X A = B  <=>  A^T X^T = B^T
    at, bt = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    return np.swapaxes(_lower_solve(at, bt, not upper, True, False), -1, -2)


def _batch(a: np.ndarray, b: np.ndarray):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])


class _SolveTriangular(Function):
    """X with A X = B (left) or X A = B, for a triangular A; the backward solves with A's transpose."""

    __slots__ = ("upper", "left", "unitriangular")

    def forward(self, a, b, upper, left, unitriangular):
        self.upper, self.left, self.unitriangular = upper, left, unitriangular
        x = _like(_lower_solve(_host(a), _host(b), upper, left, unitriangular), b)
        self.save_for_backward(a, x)
        return x

    def backward(self, g):
        a, x = self.saved_tensors
        at = a.mT
        if self.left:
            gb = solve_triangular(at, g, upper=not self.upper, left=True, unitriangular=self.unitriangular)
            ga = -(gb @ x.mT)
        else:
            gb = solve_triangular(at, g, upper=not self.upper, left=False, unitriangular=self.unitriangular)
            ga = -(x.mT @ gb)
        ga = ga.triu() if self.upper else ga.tril()
        if self.unitriangular:
            ga = ga.triu(1) if self.upper else ga.tril(-1)
        return (ga, gb, None, None, None)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
                     out=None) -> Tensor:
    """torch.linalg.solve_triangular."""
    return _SolveTriangular.apply(A, B, upper, left, unitriangular)


class _Cholesky(Function):
    """The lower Cholesky factor; the backward is torch's: A_bar = L^-H Phi(L^H L_bar) L^-1, symmetrised."""

    __slots__ = ("upper",)
    save_output = True

    def forward(self, a, upper):
        self.upper = upper
        host = _host(a)
        try:
            low = np.linalg.cholesky(host)
        except np.linalg.LinAlgError:
            raise _not_positive_definite() from None
        return _like(np.swapaxes(low, -1, -2) if upper else low, a)

    def backward(self, g):
        (out,) = self.saved_tensors
        low, gl = (out.mT, g.mT) if self.upper else (out, g)
        phi = (low.mT @ gl).tril()
        n = phi.shape[-1]
        phi = phi - phi * eye(n, dtype=phi.dtype, device=phi.device) * 0.5
        ga = solve_triangular(low, solve_triangular(low.mT, phi, upper=True), upper=False, left=False)
        return ((ga + ga.mT) * 0.5, None)


def _not_positive_definite() -> Exception:
    return LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                       "positive-definite.")


def cholesky(A: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """torch.linalg.cholesky (differentiable)."""
    return _Cholesky.apply(A, upper)
