"""NumPy primitives of the Tensor API's sorting family (part of :class:`~.numpy_backend.NumpyBackend`).

Orders follow PyTorch's: NaN sorts above every number (last ascending, first descending), sorts are stable (equal
elements keep their order), and an order statistic (``kthvalue``, ``median``) picks, among equal values, the one a
stable sort puts at that rank. Every primitive returns fresh arrays; indices are int64.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import is_float_np

_I64 = np.int64


def _argsort(x, axis: int, descending: bool):
    """Stable argsort along ``axis``; descending keeps equal elements in their order too (NaN first)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # a stable ascending sort of the reversed array, reversed back: descending, ties in their original order
    i = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return (x.shape[axis] - 1) - i


def _nan_count(x, axis: int):
    """How many non-NaN elements each lane along ``axis`` has (keepdims), or None for a dtype without NaN."""
    if not is_float_np(x.dtype):
        return None
    return x.shape[axis] - np.isnan(x).sum(axis=axis, keepdims=True)


def _pick(s, i, pos, axis, keepdims):
    v = np.take_along_axis(s, pos, axis)
    j = np.take_along_axis(i, pos, axis)
    if not keepdims:
        v, j = np.squeeze(v, axis), np.squeeze(j, axis)
    return np.array(v, copy=True), np.array(j, dtype=_I64, copy=True)


class NumpySortingPrimitives:
    """The sorting family's NumPy primitives; each one is a row of ``backends/protocol.py``."""

    # ---- sorting and order statistics ------------------------------------------------------------
    @staticmethod
    def sort(x, axis, descending, stable):
        """(values, indices) sorted along ``axis``. Always stable (``stable`` is accepted for the signature)."""
        i = _argsort(x, axis, descending)
        return np.take_along_axis(x, i, axis), np.array(i, dtype=_I64, copy=True)

    @staticmethod
    def topk(x, k, axis, largest, sorted):
        """(values, indices) of the ``k`` largest (smallest) along ``axis``, best first: a partial sort (O(n)), then
        a stable sort of the ``k`` chosen (in index order first, so equal values come in index order)."""
        n = x.shape[axis]
        if k == 0 or n == 0:
            shape = list(x.shape)
            shape[axis] = k
            return np.empty(shape, x.dtype), np.empty(shape, _I64)
        if k < n:
            idx = np.argpartition(x, n - k if largest else k - 1, axis=axis)
            idx = np.take(idx, np.arange(n - k, n) if largest else np.arange(k), axis=axis)
            idx = np.sort(idx, axis=axis)
        else:
            shape = [1] * x.ndim
            shape[axis] = n
            idx = np.broadcast_to(np.arange(n).reshape(shape), x.shape)
        v = np.take_along_axis(x, idx, axis)
        order = _argsort(v, axis, largest)
        return np.take_along_axis(v, order, axis), np.take_along_axis(idx, order, axis).astype(_I64, copy=False)

    @staticmethod
    def kthvalue(x, k, axis, keepdims):
        """(values, indices) of the ``k``-th smallest (1-based) along ``axis``; NaN counts as the largest."""
        i = np.argsort(x, axis=axis, kind="stable")
        s = np.take_along_axis(x, i, axis)
        shape = list(x.shape)
        shape[axis] = 1
        return _pick(s, i, np.full(shape, k - 1, _I64), axis, keepdims)

    @staticmethod
    def median(x, axis, keepdims, ignore_nan):
        """(values, indices): the lower median along ``axis`` (None: of all elements, flattened). A lane with a NaN
        has median NaN at its first NaN, unless ``ignore_nan`` (``nanmedian``: the median of the other elements)."""
        if axis is None:
            x, axis, keepdims = x.reshape(-1), 0, False
        n = x.shape[axis]
        i = np.argsort(x, axis=axis, kind="stable")
        s = np.take_along_axis(x, i, axis)
        shape = list(x.shape)
        shape[axis] = 1
        have = _nan_count(x, axis)
        if have is None:
            pos = np.full(shape, (n - 1) // 2, _I64)
        elif ignore_nan:
            pos = np.maximum(have - 1, 0) // 2
        else:  # the first NaN (sorted last, in their order) where there is one
            pos = np.where(have < n, have, (n - 1) // 2)
        return _pick(s, i, pos.astype(_I64, copy=False), axis, keepdims)

    @staticmethod
    def mode(x, axis, keepdims):
        """(values, indices): the most frequent value along ``axis`` (the smallest such one on a tie) and the index
        of its last occurrence (PyTorch's choices on the CPU)."""
        n = x.shape[axis]
        xm = np.moveaxis(x, axis, -1).reshape(-1, n)
        rows = xm.shape[0]
        i = np.argsort(xm, axis=1, kind="stable")
        s = np.take_along_axis(xm, i, 1)
        start = np.ones(s.shape, bool)
        start[:, 1:] = s[:, 1:] != s[:, :-1]
        run = np.cumsum(start.reshape(-1)) - 1  # one id per run of equal values (each row starts a new run)
        length = np.bincount(run)[run].reshape(s.shape)
        first = np.argmax(length, axis=1)  # the first position of the first longest run: the smallest mode
        last = first + length[np.arange(rows), first] - 1
        v = s[np.arange(rows), first]
        j = i[np.arange(rows), last].astype(_I64)
        out_shape = tuple(m for d, m in enumerate(x.shape) if d != axis)
        v, j = v.reshape(out_shape), j.reshape(out_shape)
        if keepdims:
            v, j = np.expand_dims(v, axis), np.expand_dims(j, axis)
        return np.array(v, copy=True), np.array(j, copy=True)  # (ascontiguousarray would make 0-d 1-d)

    @staticmethod
    def unique(x, axis, return_inverse, return_counts):
        """(values, inverse, counts): the sorted distinct elements (``axis``: distinct slices along it), the index
        of each element's (slice's) value, and how often each occurs. NaNs are all distinct, as in PyTorch."""
        if axis is None:
            v, inv, cnt = np.unique(x.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
            return v, inv.reshape(x.shape).astype(_I64), cnt.astype(_I64)
        if x.shape[axis] == 0:
            return np.array(x, copy=True), np.zeros(0, _I64), np.zeros(0, _I64)
        v, inv, cnt = np.unique(x, axis=axis, return_inverse=True, return_counts=True, equal_nan=False)
        return v, inv.reshape(-1).astype(_I64), cnt.astype(_I64)

    @staticmethod
    def unique_consecutive(x, axis):
        """(values, inverse, counts) with only runs of equal consecutive elements (slices) collapsed."""
        if axis is None:
            f = x.reshape(-1)
            n = f.shape[0]
            start = np.ones(n, bool)
            start[1:] = f[1:] != f[:-1]
            pos = np.flatnonzero(start)
            return f[pos], (np.cumsum(start) - 1).reshape(x.shape).astype(_I64), np.diff(np.append(pos, n)).astype(_I64)
        n = x.shape[axis]
        rows = np.moveaxis(x, axis, 0).reshape(n, -1)
        start = np.ones(n, bool)
        start[1:] = np.any(rows[1:] != rows[:-1], axis=1)
        pos = np.flatnonzero(start)
        return (np.take(x, pos, axis=axis), (np.cumsum(start) - 1).astype(_I64),
                np.diff(np.append(pos, n)).astype(_I64))

    @staticmethod
    def searchsorted(seq, values, right, sorter):
        """For each value, the insertion index into ``seq`` (sorted along its last dim, or made so by ``sorter``):
        the first position whose element is >= the value (> with ``right``). ``seq``'s leading dims are batch dims
        that ``values`` shares; a 1-D ``seq`` serves every value."""
        side = "right" if right else "left"
        if sorter is not None:
            seq = np.take_along_axis(seq, sorter, -1)
        if seq.ndim <= 1:
            return np.asarray(np.searchsorted(seq, values, side=side), dtype=_I64)
        s2 = seq.reshape(-1, seq.shape[-1])
        v2 = values.reshape(s2.shape[0], -1)
        out = np.empty(v2.shape, _I64)
        for r in range(s2.shape[0]):
            out[r] = np.searchsorted(s2[r], v2[r], side=side)
        return out.reshape(values.shape)

    # ---- counting: bincount, histograms --------------------------------------------------------------
    @staticmethod
    def bincount(x, weights, minlength):
        """How often each value of the 1-D non-negative integer ``x`` occurs (int64), or the sum of ``weights`` per
        value (in ``weights``' dtype); at least ``minlength`` bins."""
        if weights is None:
            return np.bincount(x, minlength=minlength).astype(_I64, copy=False)
        return np.bincount(x, weights, minlength).astype(weights.dtype, copy=False)

    @staticmethod
    def histc(x, bins, lo, hi):
        """Counts of ``x``'s elements in ``bins`` equal bins over ``[lo, hi]``, in ``x``'s dtype; elements outside
        (and NaN) are left out. The bin is found as torch's ``histc`` finds it, by arithmetic in ``x``'s dtype:
        ``int((v - lo) * bins / (hi - lo))``, the last bin including ``hi``."""
        t = x.dtype.type
        lo_t, hi_t = t(lo), t(hi)
        v = x.reshape(-1)
        v = v[(v >= lo_t) & (v <= hi_t)]
        pos = ((v - lo_t) * t(bins) / (hi_t - lo_t)).astype(_I64)
        return np.bincount(np.clip(pos, 0, bins - 1), minlength=bins).astype(x.dtype, copy=False)

    @staticmethod
    def histogram(x, edges, weight):
        """Counts (or sums of ``weight``) of ``x``'s elements in the bins between consecutive ``edges`` (1-D,
        increasing, ``x``'s dtype): ``edges[i] <= v < edges[i+1]``, the last bin including its right edge; elements
        outside ``[edges[0], edges[-1]]`` (and NaN) are left out. In ``edges``' dtype."""
        nb = edges.shape[0] - 1
        v = x.reshape(-1)
        keep = (v >= edges[0]) & (v <= edges[-1])
        pos = np.searchsorted(edges, v[keep], side="right") - 1
        w = None if weight is None else weight.reshape(-1)[keep]
        return np.bincount(np.clip(pos, 0, nb - 1), w, nb).astype(edges.dtype, copy=False)

    # ---- products, scans ---------------------------------------------------------------------------
    @staticmethod
    def prod(x, axis, keepdims, dtype):
        return np.asarray(np.multiply.reduce(x, axis, None if dtype is None else dtype.np, None, keepdims))

    @staticmethod
    def cumprod(x, axis, dtype):
        return np.cumprod(x, axis=axis, dtype=None if dtype is None else dtype.np)

    @staticmethod
    def cummax(x, axis, is_max):
        """(values, indices): the running maximum (minimum) along ``axis`` and where it was last reached. A NaN is
        kept from where it appears, at the index of the latest NaN (as in PyTorch)."""
        v = (np.maximum if is_max else np.minimum).accumulate(x, axis=axis)
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        hit = x == v
        if is_float_np(x.dtype):
            hit |= np.isnan(x)
        pos = np.where(hit, np.arange(x.shape[axis]).reshape(shape), 0)
        return v, np.maximum.accumulate(pos, axis=axis).astype(_I64, copy=False)

    @staticmethod
    def logcumsumexp(x, axis):
        return np.logaddexp.accumulate(x, axis=axis)

    # ---- sampling -------------------------------------------------------------------------------------
    @staticmethod
    def multinomial(gen, probs, num_samples, replacement):
        """``num_samples`` category indices per row of ``probs`` (1-D or 2-D non-negative weights, rows not all
        zero: the caller checks), drawn from ``gen``. With replacement: inverse-CDF sampling; without: the
        exponential race (the categories with the smallest Exp(1)/weight win, as sequential draws would), where
        categories of weight 0 come last, in index order."""
        p = np.asarray(probs, dtype=np.float64)
        one = p.ndim == 1
        p = p.reshape(1, -1) if one else p
        rows, k = p.shape
        g = gen.np_generator()
        if rows == 0:
            out = np.empty((0, num_samples), _I64)
        elif replacement:
            cdf = np.cumsum(p, axis=1)
            u = g.random((rows, num_samples)) * cdf[:, -1:]
            out = np.empty((rows, num_samples), _I64)
            for r in range(rows):
                out[r] = np.searchsorted(cdf[r], u[r], side="right")
            last = (k - 1) - np.argmax(p[:, ::-1] > 0, axis=1)  # rounding can not reach past the last weight
            out = np.minimum(out, last[:, None])
        else:
            with np.errstate(divide="ignore"):
                keys = g.standard_exponential((rows, k)) / p
            if num_samples == 1:  # (the usual draw of a language model's next token: one pass)
                out = np.argmin(keys, axis=1).astype(_I64).reshape(rows, 1)
            elif num_samples < k and (np.count_nonzero(p, axis=1) >= num_samples).all():
                # a partial sort when every row has enough finite keys (the infinite ones, weight 0, would tie)
                part = np.argpartition(keys, num_samples - 1, axis=1)[:, :num_samples]
                order = np.argsort(np.take_along_axis(keys, part, 1), axis=1, kind="stable")
                out = np.take_along_axis(part, order, 1).astype(_I64)
            else:
                out = np.argsort(keys, axis=1, kind="stable")[:, :num_samples].astype(_I64)
        return np.array(out.reshape(-1) if one else out, copy=True)

    @staticmethod
    def exponential(gen, shape, lambd, dtype):
        return (gen.np_generator().standard_exponential(size=shape) / lambd).astype(dtype.np)
