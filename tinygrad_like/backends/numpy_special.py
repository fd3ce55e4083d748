"""erf and GELU for the NumPy backend, vectorised, without SciPy.

NumPy has no ``erf``. SciPy's takes ~12 ns an element on float32 here (it computes in float64, one element at a time;
torch's vectorised float32 erf ~0.9 ns), and ``np.vectorize(math.erf)``, the fallback without SciPy, ~170 ns. Here
(float32, ~5 ns an element):

* **float32**: two branches, each a short polynomial evaluated over the whole array with in-place ufuncs on
  cache-sized chunks (no temporaries: one pass per operation, all in float32, SIMD), blended without ``np.where``
  (NumPy's masked selects cost ten times a multiply):

  - ``|x| < 1``: ``erf(x) = x * (c0 + z P(z))``, ``z = x*x``, ``P`` of degree 5 (odd, so the sign and -0 come out
    right, and subnormals keep their relative accuracy);
  - ``|x| >= 1``: ``erf(|x|) = 1 - exp(-x*x) R(t)``, ``t = 1 / (1 + 0.5 |x|)``, ``R`` of degree 3 (the
    Abramowitz-Stegun 7.1.26 form, refitted on ``[1, 4]``; from ``|x| = 3.92`` on, the result rounds to 1).

  Max error over all floats: 1.9e-7 relative (2.7 ulp), at ``|x|`` just below 1. (Eigen's single rational
  ``x P(x^2) / Q(x^2)``, 24 ufunc passes, was the other candidate: its float32 evaluation errs by 4.4e-7,
  7.5 ulp, at ``|x| = 3.2`` - too many roundings in one rational - and it was only ~1.4x faster.)
* **float64**: a vectorised port of fdlibm's ``s_erf.c`` (Sun, 1993; the erf of glibc, musl, Java): five ranges,
  each evaluated on its own elements only, within 1 ulp of the correctly rounded erf (~19 ns an element). SciPy's
  (used here before; not a dependency) errs by up to 2 ulp and is ~1.5x faster on large arrays; importing
  ``scipy.special`` cost ~150 ms, a third of ``import tinygrad_like``.
* small arrays (under 512 elements) of either dtype: ``math.erf`` per element, cheaper than the fixed cost of the
  vectorised passes.
* other floats (float16, bfloat16): through float32, rounded once.

GELU (``gelu`` / ``gelu_backward``) runs over cache-sized chunks as well, with a one-branch normal CDF of its own
for float32 (see ``_G``). When a backward will follow, forward also returns the derivative ``Phi(x) + x phi(x)``
(three more passes: the CDF and the density's exponential are at hand there), so the backward is one product.
"""

from __future__ import annotations

import math

import numpy as np

from . import cpu_kernels

_CHUNK = 32768  # elements per pass: the chunk and its scratch buffers (128 KiB each) stay in L2
_SMALL = 512  # fewer elements: math.erf one by one (see _erf_small)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_SQRT1_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TANH_C = math.sqrt(2 / math.pi)  # gelu(approximate="tanh"): 0.5 x (1 + tanh(c (x + k x^3)))
_TANH_K = 0.044715

# ---- float32: coefficients fitted (minimax, in float64) for the two branches ----------------------------------
_C0 = np.float32(2 / math.sqrt(math.pi))
# erf(x) / x = c0 + z P(z) on |x| < 1, P's coefficients lowest first
_P = tuple(np.float32(c) for c in (-0.3761263837860067, 0.11283752243433605, -0.02686156576160497,
                                   0.005204182366916442, -0.0008157347338117199, 8.360969484456401e-05))
# erfc(x) exp(x^2) = R(t), t = 1 / (1 + _T x), on 1 <= x (<= 4 matters), lowest first
_T = np.float32(0.5)
_R = tuple(np.float32(c) for c in (-0.008642303293943785, 0.3596138554942325, 0.02145611124622122,
                                   0.6309473126068378))
_ONE = np.float32(1)


def _erf32_into(x: np.ndarray, out: np.ndarray, xs: np.ndarray, z: np.ndarray, t: np.ndarray, u: np.ndarray,
                m: np.ndarray) -> None:
    """erf of the 1-D float32 chunk ``x`` into ``out``; ``xs, z, t, u, m`` are scratch buffers of its length.

    The branches are blended as ``xs * (S + m * (L - S))``, ``xs = clip(x, -1, 1)``, ``m = (|x| >= 1)``: where
    ``m`` is 0 that is ``x * S`` exactly; where it is 1, ``xs = +-1`` and ``S + (L - S) = L`` exactly (L and S are
    within a factor 2, so ``L - S`` is exact). Both branches are finite everywhere, so no NaN leaks in."""
    np.clip(x, -_ONE, _ONE, out=xs)
    np.multiply(xs, xs, out=z)
    p = _P
    np.multiply(z, p[5], out=out)  # out = S = c0 + z P(z), Horner
    for c in (p[4], p[3], p[2], p[1], p[0]):
        out += c
        out *= z
    out += _C0
    np.abs(x, out=t)  # the other branch at |x|: E = erfc(|x|) = exp(-x^2) R(t)
    np.greater_equal(t, _ONE, out=m)  # m, as 0.0 / 1.0
    np.multiply(t, t, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    t *= _T
    t += _ONE
    np.reciprocal(t, out=t)
    r = _R
    np.multiply(t, r[3], out=u)
    for c in (r[2], r[1]):
        u += c
        u *= t
    u += r[0]
    u *= z
    np.subtract(_ONE, u, out=u)  # L = 1 - E
    u -= out  # L - S
    u *= m
    out += u
    out *= xs


def _chunked(x: np.ndarray, n_scratch: int):
    """Yield ``(lo, hi, scratch)`` over the flat ``x`` in chunks, ``scratch`` buffers sliced to the chunk."""
    n = x.size
    m = min(n, _CHUNK)
    bufs = [np.empty(m, _F32) for _ in range(n_scratch)]
    for lo in range(0, n, _CHUNK):
        hi = min(lo + _CHUNK, n)
        yield lo, hi, bufs if hi - lo == m else [b[:hi - lo] for b in bufs]


def _flat32(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=_F32).reshape(-1)


def _erf_small(x: np.ndarray) -> np.ndarray:
    """``math.erf`` element by element (within 1 ulp of double; float32 rounded once from it): below ``_SMALL``
    elements it beats the ~35 ufunc passes of a vectorised erf, whose fixed cost is ~30 us."""
    return np.array([math.erf(v) for v in x.ravel().tolist()], dtype=x.dtype).reshape(x.shape)


def erf32(x: np.ndarray) -> np.ndarray:
    """erf of a float32 array (see the module's docstring for the method and its error)."""
    if x.size < _SMALL:
        return _erf_small(x)
    xf = _flat32(x)
    out = np.empty(xf.shape, _F32)
    with np.errstate(all="ignore"):  # overflow of x*x to inf (exp(-inf) = 0: the right limit)
        for lo, hi, scratch in _chunked(xf, 5):
            _erf32_into(xf[lo:hi], out[lo:hi], *scratch)
    return out.reshape(np.shape(x))


# ---- float64: fdlibm's s_erf.c, one range at a time ----------------------------------------------------------
_ERX = 8.45062911510467529297e-01
# |x| < 0.84375: erf = x + x * pp(z) / qq(z), z = x*x
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
       1.32494738004321644526e-04, -3.96022827877536812320e-06)
# 0.84375 <= |x| < 1.25: erf = erx + pa(s) / qa(s), s = |x| - 1
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
# 1.25 <= |x| < 1/0.35 and 1/0.35 <= |x| < 6: erfc = exp(-x^2 - 0.5625 + r(s) / q(s)) / |x|, s = 1 / x^2
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)
_HIGH_WORD = np.uint64(0xFFFFFFFF00000000)


def _poly(c: tuple, s: np.ndarray) -> np.ndarray:
    """``c[0] + c[1] s + ...`` by Horner (fdlibm's order of operations), in place on a fresh array."""
    r = s * c[-1]
    for a in c[-2:0:-1]:
        r += a
        r *= s
    r += c[0]
    return r


def _erfc_tail(a: np.ndarray, r: tuple, q: tuple) -> np.ndarray:
    """erfc(a) for a in [1.25, 6) as fdlibm computes it: exp(-a^2) split with a's low 32 bits dropped, so that
    ``zc * zc`` is exact."""
    s = 1 / (a * a)
    ratio = _poly(r, s)
    ratio /= _poly(q, s)
    zc = (a.view(np.uint64) & _HIGH_WORD).view(np.float64)
    e = np.exp(-zc * zc - 0.5625)
    e *= np.exp((zc - a) * (zc + a) + ratio)
    e /= a
    return e


def erf64(x: np.ndarray) -> np.ndarray:
    """erf of a float64 array: fdlibm's algorithm, each range on its own elements (gathered, computed, put back)."""
    if x.size < _SMALL:
        return _erf_small(x)
    xf = np.ascontiguousarray(x, dtype=_F64).reshape(-1)
    ax = np.abs(xf)
    out = np.empty_like(xf)
    small, mid, tail = ax < 0.84375, ax < 1.25, ax < 6.0
    with np.errstate(all="ignore"):
        i = np.flatnonzero(small)
        if i.size:
            xi = xf[i]
            z = xi * xi
            y = _poly(_PP, z)
            y /= _poly(_QQ, z)
            y *= xi
            out[i] = xi + y
        i = np.flatnonzero(mid & ~small)
        if i.size:
            s = ax[i] - 1
            y = _poly(_PA, s)
            y /= _poly(_QA, s)
            y += _ERX
            out[i] = np.copysign(y, xf[i])
        for lo, hi, r, q in ((1.25, 1 / 0.35, _RA, _SA), (1 / 0.35, 6.0, _RB, _SB)):
            i = np.flatnonzero((ax >= lo) & (ax < hi))
            if i.size:
                out[i] = np.copysign(1 - _erfc_tail(ax[i], r, q), xf[i])
        i = np.flatnonzero(~tail)  # |x| >= 6 (1 to double precision) and NaN
        if i.size:
            xi = xf[i]
            out[i] = np.where(np.isnan(xi), xi, np.copysign(1.0, xi))
    return out.reshape(np.shape(x))


def erf(x: np.ndarray, /) -> np.ndarray:
    """The backend's ``erf``: a fresh array of ``x``'s dtype."""
    dt = x.dtype
    if dt == _F32:
        return erf32(x)
    if dt == _F64:
        return erf64(x)
    return erf32(x).astype(dt)  # float16, bfloat16: computed in float32, rounded once


# ---- GELU -------------------------------------------------------------------------------------------------
# GELU's normal CDF in float32: Phi(x) = 0.5 + sign(x) (0.5 - Q(|x|)), Q(a) = 0.5 erfc(a / sqrt 2)
# = exp(-a^2 / 2) G(t), t = 1 / (1 + _GT a), G of degree 5 fitted (minimax, float64) for the absolute error of Phi
# (5e-8; evaluated in float32, 2.7e-7). One branch: GELU needs Phi to a few 1e-7 absolute, not erf's relative
# accuracy near 0 (torch's own float32 gelu errs by up to 1.2e-6 against float64).
_GT = np.float32(0.3)
_G = tuple(np.float32(c) for c in (0.015243018292617525, -0.0027453547569624426, 0.5226115017929677,
                                   -0.5748506957694559, 0.6868172578374634, -0.1470756777483952))
_HUGE = np.float32(2.0 ** 100)  # clip(x * 2^100, -1, 1): the sign of x without np.copysign (5x a multiply)


def _gelu32_exact(x: np.ndarray, keep: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``x Phi(x)`` in float32, chunk by chunk (26 passes of in-place ufuncs, against ~40 through erf), and with
    ``keep`` its derivative ``Phi(x) + x phi(x)`` for the backward (3 more)."""
    xf = _flat32(x)
    y = np.empty(xf.shape, _F32)
    d = np.empty(xf.shape, _F32) if keep else None
    half, g = np.float32(0.5), _G
    with np.errstate(all="ignore"):
        for lo, hi, (t, u, e, cc) in _chunked(xf, 4):
            xc = xf[lo:hi]
            np.abs(xc, out=t)
            np.multiply(t, t, out=e)
            e *= np.float32(-0.5)
            np.exp(e, out=e)  # exp(-x^2 / 2)
            t *= _GT
            t += _ONE
            np.reciprocal(t, out=t)
            np.multiply(t, g[5], out=u)
            for c in (g[4], g[3], g[2], g[1]):
                u += c
                u *= t
            u += g[0]
            u *= e  # Q(|x|)
            np.subtract(half, u, out=u)  # 0.5 - Q
            np.multiply(xc, _HUGE, out=t)
            np.clip(t, -_ONE, _ONE, out=t)  # sign(x) (and x * 2^100 for |x| < 2^-100, where 0.5 - Q is ~0)
            np.multiply(u, t, out=cc)
            cc += half  # Phi(x)
            np.multiply(xc, cc, out=y[lo:hi])
            if keep:
                dc = d[lo:hi]
                np.multiply(xc, e, out=dc)
                dc *= np.float32(_INV_SQRT_2PI)
                dc += cc
    shape = np.shape(x)
    return y.reshape(shape), None if d is None else d.reshape(shape)


def _gelu_derivative(x: np.ndarray, cdf: np.ndarray | None = None, t: np.ndarray | None = None) -> np.ndarray:
    """``gelu'(x)`` (a fresh array of ``x``'s dtype, float32 or float64), torch's formulas: ``Phi(x) + x phi(x)``
    (from ``cdf`` = Phi(x) when given), or for the tanh form ``0.5 x (1 - t^2) c (1 + 3 k x^2) + 0.5 (1 + t)``."""
    if t is not None:
        inner = x * x
        inner *= 3 * _TANH_K
        inner += 1
        inner *= _TANH_C
        d = x * 0.5
        d *= 1 - t * t
        d *= inner
        d += (t + 1) * 0.5
        return d
    if cdf is None:
        cdf = erf(x * _SQRT1_2)
        cdf += 1
        cdf *= 0.5
    d = x * x
    d *= -0.5
    np.exp(d, out=d)
    d *= x
    d *= _INV_SQRT_2PI
    d += cdf
    return d


def gelu(x: np.ndarray, approximate: str, keep: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``(gelu(x), state)``: with ``keep``, ``state`` is ``gelu'(x)`` for ``gelu_backward`` (forward has what it
    needs at hand: the CDF, the density's exponential, the tanh), else None. Computed in float64 for float64, else
    in float32 (float16 and bfloat16 rounded once at the end, as torch does); the state stays in that dtype."""
    dt, shape = x.dtype, x.shape
    if not x.ndim:  # (NumPy's arithmetic on 0-d arrays gives scalars, which have no in-place ops)
        x = x.reshape(1)
    xc = x.astype(_F64 if dt == _F64 else _F32, copy=False)
    d = None
    k = cpu_kernels.kernel("gelu_tanh_f32" if approximate == "tanh" else "gelu_exact_f32") \
        if xc.dtype == _F32 and xc.size >= _SMALL else None
    if k is not None:  # (kernel_src/cpu/gelu.c: the float32 formulas below, in one pass)
        xc = np.ascontiguousarray(xc)
        y = np.empty_like(xc)
        d = np.empty_like(xc) if keep else None
        k(xc.size, xc.ctypes.data, y.ctypes.data, None if d is None else d.ctypes.data)
        cpu_kernels.launched("gelu_tanh_fwd" if approximate == "tanh" else "gelu_fwd")
    elif approximate == "tanh":  # 0.5 x (1 + tanh(c (x + k x^3))), torch's order of operations
        t = xc * xc
        t *= xc
        t *= _TANH_K
        t += xc
        t *= _TANH_C
        np.tanh(t, out=t)
        y = xc * 0.5
        y *= t + 1
        if keep:
            d = _gelu_derivative(xc, t=t)
    elif dt == _F64 or x.size < _SMALL:
        cdf = erf(xc * _SQRT1_2)
        cdf += 1
        cdf *= 0.5
        y = xc * cdf
        if keep:
            d = _gelu_derivative(xc, cdf=cdf)
    else:
        y, d = _gelu32_exact(xc, keep)
    return (y if y.dtype == dt else y.astype(dt)).reshape(shape), None if d is None else d.reshape(shape)


def gelu_backward(g: np.ndarray, x: np.ndarray, state: np.ndarray | None, approximate: str) -> np.ndarray:
    """``g * gelu'(x)``: ``gelu'(x)`` is gelu's ``state``, or computed here from ``x`` when there is none."""
    if state is None:
        xc = x.reshape(x.shape or (1,)).astype(_F64 if x.dtype == _F64 else _F32, copy=False)
        t = None
        if approximate == "tanh":
            t = np.tanh((xc + xc * xc * xc * _TANH_K) * _TANH_C)
        state = _gelu_derivative(xc, t=t).reshape(x.shape)
    d = np.asarray(g * state)  # (0-d operands give a NumPy scalar)
    return d if d.dtype == g.dtype else d.astype(g.dtype)


class NumpySpecialPrimitives:
    """The backend's erf and GELU primitives (mixed into ``NumpyBackend``)."""

    erf = staticmethod(erf)
    gelu = staticmethod(gelu)
    gelu_backward = staticmethod(gelu_backward)
