"""The gamma sampler with a reparameterised gradient (torch's private ``_standard_gamma``), which the core lacks:
Gamma, Beta, Dirichlet and Chi2 draw their ``rsample`` through it. Everything else the distributions compute with is
the core's (``tl.lgamma``, ``tl.linalg.cholesky``, ``tl.poisson``...: see :mod:`._tl`).

The gradient needs the incomplete gamma function P(a, x) on the host without SciPy (the core's ``igamma`` imports it
lazily; a learner's install may not have it), so a NumPy one is here.
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..creation import tensor
from ..ops.special_functions import lgamma as np_lgamma
from ..random import default_generator
from ..tensor import Tensor


def _host(t: Tensor) -> np.ndarray:
    """A tensor's values as a float64 NumPy array (a copy on the host)."""
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _like(values: np.ndarray, t: Tensor) -> Tensor:
    """``values`` as a tensor with ``t``'s dtype (floating: float32 for an integer ``t``) and device."""
    dtype = t.dtype if t.dtype.is_floating_point else None
    return tensor(np.asarray(values), dtype=dtype, device=t.device)


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
