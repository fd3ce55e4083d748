"""``tl.special`` (``torch.special`` under the alias): the special functions, with torch's names and parameters.

Many are other names of ops the tensors have (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is
``digamma``...). Those torch differentiates are differentiable here too, with torch's formulas; the Bessel functions
``bessel_*``, ``modified_bessel_*``, ``scaled_modified_bessel_*``, ``spherical_bessel_j0``, ``airy_ai`` and the
orthogonal polynomials return results with no history, as torch's do. Where it says so in
:mod:`tinygrad_like.ops.special_functions`, a function needs scipy (optional), imported on first use.

>>> import tinygrad_like as tl
>>> tl.special.expit(tl.tensor([0.0])).item(), f"{tl.special.gammaln(tl.tensor([4.0])).item():.5f}"
(0.5, '1.79176')
>>> tl.special.legendre_polynomial_p(tl.tensor([0.5]), 2).tolist()
[-0.125]
"""

from __future__ import annotations

import math

from .ops import special_functions as sf
from .ops._math_util import need_tensor
from .ops.activation import log_softmax as _log_softmax
from .ops.activation import softmax as _softmax
from .ops.transcendental import xlogy as _xlogy
from .tensor import Tensor

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
    "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
    "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0",
    "xlog1py", "xlogy", "zeta",
]

_SQRT1_2 = math.sqrt(0.5)


def _out(result: Tensor, out, name: str) -> Tensor:
    """torch's ``out=``: the result written into ``out``, which is returned (``out`` must have the result's shape:
    there is no resizing of a tensor here)."""
    if out is None:
        return result
    need_tensor(out, f"special.{name}", "out", 0)
    if out.requires_grad and result.requires_grad:
        raise RuntimeError(f"special.{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")
    if tuple(out.shape) != tuple(result.shape):
        raise RuntimeError(f"special.{name}(): out= has shape {tuple(out.shape)} but the result has shape "
                           f"{tuple(result.shape)}; pass a tensor of the result's shape")
    out.copy_(result.detach())
    return out


def _unary(name: str, method: str, doc: str):
    def fn(input: Tensor, *, out=None) -> Tensor:
        need_tensor(input, f"special.{name}", "input", 1)
        return _out(getattr(input, method)(), out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


# ---- other names of the tensors' own ops -------------------------------------------------------------------
erf = _unary("erf", "erf", "The error function.")
erfc = _unary("erfc", "erfc", "The complementary error function ``1 - erf(x)``.")
erfinv = _unary("erfinv", "erfinv", "The inverse error function.")
exp2 = _unary("exp2", "exp2", "``2 ** x``.")
expm1 = _unary("expm1", "expm1", "``exp(x) - 1``, accurate for small ``x``.")
log1p = _unary("log1p", "log1p", "``log(1 + x)``, accurate for small ``x``.")
expit = _unary("expit", "sigmoid", "The logistic sigmoid ``1 / (1 + exp(-x))``.")
digamma = _unary("digamma", "digamma", "The digamma function, ``d/dx lgamma(x)``.")
psi = _unary("psi", "digamma", "The digamma function (another name of ``digamma``).")
gammaln = _unary("gammaln", "lgamma", "``log|Gamma(x)|`` (torch's ``lgamma``).")
i0 = _unary("i0", "i0", "The modified Bessel function of the first kind, order 0.")
sinc = _unary("sinc", "sinc", "The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0.")


def logit(input: Tensor, eps: float | None = None, *, out=None) -> Tensor:
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    need_tensor(input, "special.logit", "input", 1)
    return _out(input.logit(eps), out, "logit")


def xlogy(input, other, *, out=None) -> Tensor:
    """``input * log(other)``, 0 where ``input == 0``; either may be a number."""
    return _out(_xlogy(*sf.tensor_pair(input, other, "special.xlogy")), out, "xlogy")


def polygamma(n: int, input: Tensor, *, out=None) -> Tensor:
    """The ``n``-th derivative of the digamma function."""
    need_tensor(input, "special.polygamma", "input", 2)
    return _out(input.polygamma(n), out, "polygamma")


def multigammaln(input: Tensor, p: int, *, out=None) -> Tensor:
    """The multivariate log-gamma function of dimension ``p`` (torch's ``mvlgamma``)."""
    need_tensor(input, "special.multigammaln", "input", 1)
    return _out(input.mvlgamma(p), out, "multigammaln")


def gammainc(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The regularized lower incomplete gamma function (torch's ``igamma``); needs scipy."""
    need_tensor(input, "special.gammainc", "input", 1)
    return _out(input.igamma(other), out, "gammainc")


def gammaincc(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The regularized upper incomplete gamma function (torch's ``igammac``); needs scipy."""
    need_tensor(input, "special.gammaincc", "input", 1)
    return _out(input.igammac(other), out, "gammaincc")


def round(input: Tensor, *, decimals: int = 0, out=None) -> Tensor:  # noqa: A001 - torch's name
    """Round half to even, to ``decimals`` places."""
    need_tensor(input, "special.round", "input", 1)
    return _out(input.round(decimals=decimals), out, "round")


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (``input`` converted to ``dtype`` first when given)."""
    need_tensor(input, "special.softmax", "input", 1)
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """``log(softmax(x))`` along ``dim``, computed stably."""
    need_tensor(input, "special.log_softmax", "input", 1)
    return _log_softmax(input, dim, dtype=dtype)


def logsumexp(input: Tensor, dim, keepdim: bool = False, *, out=None) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, computed stably."""
    need_tensor(input, "special.logsumexp", "input", 1)
    return _out(input.logsumexp(dim, keepdim), out, "logsumexp")


# ---- the normal distribution's functions and the scaled error functions ------------------------------------
def ndtr(input: Tensor, *, out=None) -> Tensor:
    """The standard normal CDF, ``erfc(-x / sqrt(2)) / 2`` (differentiable through ``erfc``)."""
    need_tensor(input, "special.ndtr", "input", 1)
    return _out((input * -_SQRT1_2).erfc() * 0.5, out, "ndtr")


def _node(name: str, node, doc: str):
    def fn(input: Tensor, *, out=None) -> Tensor:
        need_tensor(input, f"special.{name}", "input", 1)
        return _out(node.apply(input), out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


ndtri = _node("ndtri", sf.Ndtri, "The inverse of the standard normal CDF (needs scipy).")
log_ndtr = _node("log_ndtr", sf.LogNdtr, "The log of the standard normal CDF, accurate in the tails (needs scipy).")
erfcx = _node("erfcx", sf.Erfcx, "The scaled complementary error function ``exp(x**2) erfc(x)`` (needs scipy).")
entr = _node("entr", sf.Entr, "The elementwise entropy ``-x log x`` (0 at 0, -inf below 0).")
i0e = _node("i0e", sf.I0e, "The exponentially scaled ``i0``: ``exp(-|x|) i0(x)`` (needs scipy).")
i1 = _node("i1", sf.I1, "The modified Bessel function of the first kind, order 1 (needs scipy).")
i1e = _node("i1e", sf.I1e, "The exponentially scaled ``i1``: ``exp(-|x|) i1(x)`` (needs scipy).")


def xlog1py(input, other, *, out=None) -> Tensor:
    """``input * log1p(other)``, 0 where ``input == 0``; either may be a number."""
    return _out(sf.Xlog1py.apply(*sf.tensor_pair(input, other, "special.xlog1py")), out, "xlog1py")


def zeta(input, other, *, out=None) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other) ** -input`` (needs scipy); differentiable in ``other`` only,
    as torch's."""
    return _out(sf.Zeta.apply(*sf.tensor_pair(input, other, "special.zeta")), out, "zeta")


# ---- no derivative in torch: results with no history --------------------------------------------------------
def _plain(name: str, fn, doc: str):
    def f(input: Tensor, *, out=None) -> Tensor:
        need_tensor(input, f"special.{name}", "input", 1)
        return _out(sf.no_history(input, fn, f"special.{name}"), out, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


bessel_j0 = _plain("bessel_j0", sf.scipy_function("j0"),
                   "The Bessel function of the first kind, order 0 (needs scipy).")
bessel_j1 = _plain("bessel_j1", sf.scipy_function("j1"),
                   "The Bessel function of the first kind, order 1 (needs scipy).")
bessel_y0 = _plain("bessel_y0", sf.scipy_function("y0"),
                   "The Bessel function of the second kind, order 0 (needs scipy).")
bessel_y1 = _plain("bessel_y1", sf.scipy_function("y1"),
                   "The Bessel function of the second kind, order 1 (needs scipy).")
modified_bessel_i0 = _plain("modified_bessel_i0", sf.i0, "The modified Bessel function of the first kind, order 0.")
modified_bessel_i1 = _plain("modified_bessel_i1", sf.scipy_function("i1"),
                            "The modified Bessel function of the first kind, order 1 (needs scipy).")
modified_bessel_k0 = _plain("modified_bessel_k0", sf.scipy_function("k0"),
                            "The modified Bessel function of the second kind, order 0 (needs scipy).")
modified_bessel_k1 = _plain("modified_bessel_k1", sf.scipy_function("k1"),
                            "The modified Bessel function of the second kind, order 1 (needs scipy).")
scaled_modified_bessel_k0 = _plain("scaled_modified_bessel_k0", sf.scipy_function("k0e"),
                                   "``exp(x) k0(x)`` (needs scipy).")
scaled_modified_bessel_k1 = _plain("scaled_modified_bessel_k1", sf.scipy_function("k1e"),
                                   "``exp(x) k1(x)`` (needs scipy).")
spherical_bessel_j0 = _plain("spherical_bessel_j0", sf.spherical_bessel_j0,
                             "The spherical Bessel function of the first kind, order 0: ``sin(x) / x``.")
airy_ai = _plain("airy_ai", sf.airy_ai, "The Airy function Ai (needs scipy).")


def _polynomial(name: str, kind: str, shifted: bool, doc: str):
    fn = sf.polynomial(kind, shifted)

    def f(input, n, *, out=None) -> Tensor:
        x, deg = sf.tensor_pair(input, n, f"special.{name}")
        return _out(sf.no_history(x, fn, f"special.{name}", deg), out, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc + " ``input`` or ``n`` may be a number; ``n`` is taken as an integer (0 where negative)."
    return f


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "t", False, "Chebyshev polynomials of the first kind.")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "u", False, "Chebyshev polynomials of the second kind.")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", "v", False, "Chebyshev polynomials of the third kind.")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", "w", False, "Chebyshev polynomials of the fourth kind.")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", "t", True,
                                             "Shifted Chebyshev polynomials of the first kind, ``T_n(2x - 1)``.")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", "u", True,
                                             "Shifted Chebyshev polynomials of the second kind, ``U_n(2x - 1)``.")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", "v", True,
                                             "Shifted Chebyshev polynomials of the third kind, ``V_n(2x - 1)``.")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", "w", True,
                                             "Shifted Chebyshev polynomials of the fourth kind, ``W_n(2x - 1)``.")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "h", False, "The physicists' Hermite polynomials.")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", "he", False, "The probabilists' Hermite polynomials.")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "l", False, "The Laguerre polynomials.")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "p", False, "The Legendre polynomials.")
