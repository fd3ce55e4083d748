"""Scaled dot-product attention for the NumPy backend: one fused primitive for the forward, one for the backward.

``softmax(q @ k^T * scale + mask) @ v`` over batches of small matrices (a small GPT: 64 matrices of 32 x 32 per
call) is dominated by NumPy's per-row overheads, not by arithmetic: a reduction over a last axis of 32 elements
runs a 32-element inner loop per row (``np.max(scores, -1)`` took 300 us on 65k float32 here, ``np.exp`` of the same
50 us), and a broadcast over rows of 32 costs ~5x a plain pass. So:

* ``q`` is scaled before the product (``L x E`` elements instead of ``L x S``), and the mask is added in place;
* the softmax is shifted by each *matrix's* maximum (one reduction over rows of ``L * S``) instead of each row's,
  when that is safe: when every row's maximum is within ``_SHIFT_SPAN`` of its matrix's (checked against column 0,
  a lower bound of each row's maximum when it is finite), no row underflows (``exp(-60)`` is a normal float32) and
  the entries that do underflow weigh under ``exp(-27)`` of their row's largest. Otherwise (a NaN, an infinite
  score, a masked first column, very spread scores) each row's own maximum is used, as ``softmax`` does;
* the row sums are a matrix-vector product with ones (BLAS), not a reduction, and the rows are multiplied by their
  reciprocals.

The result equals ``softmax`` then ``matmul`` to float rounding (a different shift, a different order of summation).
"""

from __future__ import annotations

import numpy as np

_SHIFT_SPAN = 60.0


def _softmax_rows_inplace(s: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of ``s`` (a fresh C-contiguous array of shape (..., L, S)), in place; returns
    each row's log-sum-exp (..., L). A row whose scores are all -inf gets zeros and a log-sum-exp of -inf."""
    L, S = s.shape[-2:]
    mats = s.reshape(-1, L * S)
    m = np.maximum.reduce(mats, axis=1)  # each matrix's maximum
    lower = np.minimum.reduce(s[..., 0].reshape(-1, L), axis=1)  # <= each row's maximum (column 0 is in the row)
    with np.errstate(invalid="ignore"):  # (inf - inf, NaN: not safe, the exact shift below)
        matrix_shift = bool(np.all(m - lower <= _SHIFT_SPAN))
    if matrix_shift:
        np.subtract(mats, m[:, None], out=mats)
        shift = np.broadcast_to(m.reshape(s.shape[:-2] + (1,)), s.shape[:-1])
    else:
        shift = np.maximum.reduce(s, axis=-1)
        dead = shift == -np.inf  # every key masked: shifted by 0, the row is all zeros after exp
        if dead.any():
            shift[dead] = 0.0
        np.subtract(s, shift[..., None], out=s)
    np.exp(s, out=s)
    total = np.matmul(s, np.ones(S, s.dtype))
    with np.errstate(divide="ignore"):  # (an all-masked row: log(0) = -inf, as its log-sum-exp should be)
        lse = shift + np.log(total)
    inv = np.divide(1, total, out=total, where=total > 0)  # (an all-masked row keeps 0: times 0 gives zeros)
    np.multiply(s, inv[..., None], out=s)  # (times the reciprocal of each row's sum, as torch's softmax: a broadcast
    return lse  # product costs half a broadcast division here)


_CAUSAL: dict = {}


def causal_mask(L: int, S: int, dtype) -> np.ndarray:
    """The additive causal mask (0 where query i may attend to key j <= i, -inf after it: top-left aligned, as
    PyTorch's ``is_causal``), built once per shape and dtype, read-only."""
    key = (L, S, np.dtype(dtype))
    m = _CAUSAL.get(key)
    if m is None:
        m = np.triu(np.full((L, S), -np.inf, dtype), 1)
        m.flags.writeable = False
        if len(_CAUSAL) >= 64:
            _CAUSAL.clear()
        _CAUSAL[key] = m
    return m


def _scores(q: np.ndarray, k: np.ndarray, scale: float, mask: np.ndarray | None, causal: bool) -> np.ndarray:
    """``q @ k^T * scale + mask`` (and the causal mask), a fresh array."""
    s = np.matmul(np.multiply(q, scale), np.swapaxes(k, -1, -2))
    for add in (causal_mask(*s.shape[-2:], s.dtype) if causal else None, mask):
        if add is None:
            continue
        if np.broadcast_shapes(s.shape, add.shape) == s.shape:
            np.add(s, add, out=s)
        else:
            s = s + add
    return s


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, mask: np.ndarray | None, causal: bool):
    """``(out, lse, weights)``: ``out = softmax(q @ k^T * scale + mask) @ v`` over (..., L, E) queries, (..., S, E)
    keys and (..., S, Ev) values (batch dims broadcast); ``mask`` is None or added to the scores, ``causal`` masks
    the keys after each query. ``lse`` is each row's log-sum-exp of the scores (what a flash-attention kernel keeps
    for its backward) and ``weights`` the softmax, kept here because recomputing it costs more than it saves. A
    query whose keys are all masked gets zeros."""
    s = _scores(q, k, scale, mask, causal)
    lse = _softmax_rows_inplace(s) if s.size else np.zeros(s.shape[:-1], s.dtype)
    return np.matmul(s, v), lse, s


def attention_backward(g: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray, out: np.ndarray,
                       lse: np.ndarray, weights: np.ndarray | None, scale: float, mask: np.ndarray | None,
                       causal: bool):
    """``(gq, gk, gv)`` of ``attention`` from ``g``, the gradient of ``out``, in the broadcast batch shape. Without
    ``weights`` they are recomputed from the scores and ``lse``: ``w = exp(s - lse)``. Then ``gv = w^T g`` and
    ``gs = w * (g v^T - rowsum(g * out)) * scale`` (softmax's backward: ``rowsum(g v^T * w)`` is ``rowsum(g * out)``),
    ``gq = gs k``, ``gk = gs^T q``."""
    w = weights
    if w is None:
        s = _scores(q, k, scale, mask, causal)
        with np.errstate(invalid="ignore"):  # (an all-masked row: -inf - -inf, set to 0 below)
            w = np.exp(s - lse[..., None], out=s)
        w[np.broadcast_to((lse == -np.inf)[..., None], w.shape)] = 0.0
    gv = np.matmul(np.swapaxes(w, -1, -2), g)
    gs = np.matmul(g, np.swapaxes(v, -1, -2))
    gs -= np.sum(g * out, axis=-1, keepdims=True)
    gs *= w
    gs *= scale
    return np.matmul(gs, k), np.matmul(np.swapaxes(gs, -1, -2), q), gv


class NumpyAttentionPrimitives:
    """The fused attention primitives (mixed into ``NumpyBackend``)."""

    attention = staticmethod(attention)
    attention_backward = staticmethod(attention_backward)
