"""NumPy primitives of the Tensor API's math family (part of :class:`~.numpy_backend.NumpyBackend`).

Each is one NumPy call (or a few for what NumPy spells differently from torch) and a row of ``protocol.py``:
rounding, inverse trigonometric and hyperbolic functions, the base-2/base-10 and ``1 + x`` logs and exps,
remainders and rounded divisions, ``copysign``/``hypot``/``atan2``/``xlogy``, finiteness tests, ``nan_to_num``,
and the integer bit operations NumPy's ``bitwise_and`` family lacks. Integer division by zero is refused by the
op before it gets here (NumPy would give 0 and a warning; torch raises).
"""

from __future__ import annotations

import numpy as np

from ..dtypes import bfloat16, finfo, is_float_np


def _arr(r):
    """A fresh ndarray (NumPy's ufuncs return scalars for 0-d inputs)."""
    return r if type(r) is np.ndarray else np.asarray(r)


def _round(x, decimals):
    """Round half to even, as torch's ``round``; ``decimals`` scales by 10**decimals around it, as torch does
    (``nearbyint(x * 10**d) / 10**d``, or ``nearbyint(x / 10**-d) * 10**-d`` for negative ``d``): NumPy's ``round``
    is the same computation."""
    return _arr(np.round(x, decimals))


def _trunc_divide(x, y, /):
    """``x / y`` rounded toward zero: ``trunc(x / y)`` for floats (torch's formula), exact for integers (NumPy's
    integer ``//`` rounds toward minus infinity: one up where the remainder is nonzero and the signs differ)."""
    if is_float_np(np.result_type(x, y)):
        return _arr(np.trunc(np.true_divide(x, y)))
    q = np.floor_divide(x, y)
    fix = (np.remainder(x, y) != 0) & ((np.less(x, 0)) != (np.less(y, 0)))
    return _arr(q + fix)  # (a bool added to an integer keeps the integer's dtype)


def _xlogy(x, y, /):
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN), as torch's ``xlogy``. A number operand takes the
    other's dtype first (NumPy's log of a Python float is a float64 scalar, which would promote)."""
    if type(y) is not np.ndarray:
        y = np.asarray(y, dtype=x.dtype)
    elif type(x) is not np.ndarray:
        x = np.asarray(x, dtype=y.dtype)
    out = np.multiply(x, np.log(y))
    return _arr(np.where(np.logical_and(np.equal(x, 0), np.logical_not(np.isnan(y))), 0, out).astype(
        np.result_type(out), copy=False))


def _nan_to_num(x, nan, posinf, neginf):
    """NaN, +inf and -inf replaced (``None``: the dtype's largest/smallest finite value), as torch's."""
    if x.dtype == bfloat16.np:  # (np.nan_to_num passes a dtype NumPy does not know as a float through unchanged)
        big = float(finfo(bfloat16).max)
        return _arr(np.nan_to_num(x.astype(np.float32), nan=nan, posinf=big if posinf is None else posinf,
                                  neginf=-big if neginf is None else neginf).astype(x.dtype))
    return _arr(np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf))


class NumpyMathPrimitives:
    """The math family's NumPy primitives; each one is a row of ``backends/protocol.py``."""

    # rounding (integer inputs never reach these: the ops copy them)
    floor = staticmethod(np.floor)
    ceil = staticmethod(np.ceil)
    trunc = staticmethod(np.trunc)
    round = staticmethod(_round)
    # inverse trigonometric, hyperbolic and their inverses
    acos = staticmethod(np.arccos)
    asin = staticmethod(np.arcsin)
    atan = staticmethod(np.arctan)
    tan = staticmethod(np.tan)
    sinh = staticmethod(np.sinh)
    cosh = staticmethod(np.cosh)
    asinh = staticmethod(np.arcsinh)
    acosh = staticmethod(np.arccosh)
    atanh = staticmethod(np.arctanh)
    # logs and exps
    log2 = staticmethod(np.log2)
    log10 = staticmethod(np.log10)
    log1p = staticmethod(np.log1p)
    expm1 = staticmethod(np.expm1)
    exp2 = staticmethod(np.exp2)
    logaddexp = staticmethod(np.logaddexp)
    logaddexp2 = staticmethod(np.logaddexp2)
    # binary
    atan2 = staticmethod(np.arctan2)
    hypot = staticmethod(np.hypot)
    copysign = staticmethod(np.copysign)
    fmod = staticmethod(np.fmod)  # C's fmod: the sign of the dividend (torch's fmod)
    remainder = staticmethod(np.remainder)  # Python's %: the sign of the divisor (torch's remainder)
    floor_divide = staticmethod(np.floor_divide)  # (NumPy's float floor division is torch's: fmod-based, exact)
    trunc_divide = staticmethod(_trunc_divide)
    xlogy = staticmethod(_xlogy)
    # finiteness
    isinf = staticmethod(np.isinf)
    isfinite = staticmethod(np.isfinite)
    nan_to_num = staticmethod(_nan_to_num)
    # integer bits (and, or, xor are rows of the core's elementwise block)
    bitwise_not = staticmethod(np.invert)
    bitwise_left_shift = staticmethod(np.left_shift)  # a shift by >= the width, or by < 0, gives 0 (as torch)
    bitwise_right_shift = staticmethod(np.right_shift)  # ... and the sign fill there (as torch)
