"""NumPy primitives of the Tensor API's shaping family (part of :class:`~.numpy_backend.NumpyBackend`)."""

from __future__ import annotations

import numpy as np

from ..dtypes import is_float_np


def _along(index, axis: int) -> tuple:
    """The advanced index that addresses ``out[..., index[i, j, ...], ...]`` along ``axis`` (scatter's rule: every
    other dim is the position in ``index`` itself)."""
    idx = list(np.indices(index.shape, sparse=True))
    idx[axis] = index
    return tuple(idx)


def _identity(reduce: str, dtype):
    """The value that a reduction's first write replaces (include_self=False starts from it)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if is_float_np(dtype):
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


_AT = {"sum": np.add.at, "mean": np.add.at, "prod": np.multiply.at, "amax": np.maximum.at, "amin": np.minimum.at}


class NumpyShapingPrimitives:
    """The shaping family's NumPy primitives; each one is a row of ``backends/protocol.py``."""

    @staticmethod
    def roll(x, shifts, axes):
        """``x`` shifted circularly by ``shifts[i]`` along ``axes[i]`` (a new array)."""
        return np.roll(x, shifts, axes)

    @staticmethod
    def repeat_interleave(x, repeats, axis):
        """Each element (or slice along ``axis``) repeated ``repeats`` times, in place order (``np.repeat``)."""
        return np.repeat(x, repeats, axis=axis)

    @staticmethod
    def scatter(x, axis, index, src):
        """A copy of ``x`` with ``out[.., index[i, j], ..] = src[i, j]`` along ``axis``; ``src`` may be a number.
        Of duplicate indices, the last write wins (torch leaves it unspecified)."""
        out = np.array(x, copy=True, order="C")
        if index.size:
            v = src if np.ndim(src) == 0 else src[tuple(slice(0, n) for n in index.shape)]
            out[_along(index, axis)] = v
        return out

    @staticmethod
    def scatter_reduce(x, axis, index, src, reduce, include_self):
        """A copy of ``x`` with ``src`` reduced into it at ``index`` along ``axis``: ``reduce`` is one of sum, prod,
        mean, amax, amin; without ``include_self`` the written positions start from the reduction's identity (so
        ``x``'s own value there takes no part). Integer means round down, as torch's."""
        out = np.array(x, copy=True, order="C")
        if not index.size:
            return out
        at = _along(index, axis)
        v = src[tuple(slice(0, n) for n in index.shape)]
        if not include_self:
            out[at] = _identity(reduce, out.dtype)
        with np.errstate(invalid="ignore"):  # (NaN meets NaN in amax/amin: NaN, as in torch, quietly)
            _AT[reduce](out, at, v)
        if reduce == "mean":
            count = np.full(out.shape, 1 if include_self else 0, dtype=np.int64)
            np.add.at(count, at, 1)
            count[count == 0] = 1
            if is_float_np(out.dtype):
                out = (out / count).astype(out.dtype, copy=False)
            else:
                out = np.floor_divide(out, count).astype(out.dtype, copy=False)
        return out

    @staticmethod
    def logspace(start, end, steps, base, dtype):
        """``base ** linspace(start, end, steps)``, computed in float64 and cast to ``dtype``."""
        return np.power(float(base), np.linspace(start, end, steps)).astype(dtype.np, copy=False)
