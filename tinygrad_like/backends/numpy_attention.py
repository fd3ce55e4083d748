"""Scaled dot-product attention for the NumPy backend: one fused primitive for the forward.

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


def _softmax_rows_inplace(s: np.ndarray) -> None:
    """Softmax over the last axis of ``s`` (a fresh C-contiguous array of shape (..., L, S)), in place."""
    L, S = s.shape[-2:]
    mats = s.reshape(-1, L * S)
    m = np.maximum.reduce(mats, axis=1)  # each matrix's maximum
    lower = np.minimum.reduce(s[..., 0].reshape(-1, L), axis=1)  # <= each row's maximum (column 0 is in the row)
    with np.errstate(invalid="ignore"):  # (inf - inf, NaN: not safe, the exact shift below)
        matrix_shift = bool(np.all(m - lower <= _SHIFT_SPAN))
    if matrix_shift:
        np.subtract(mats, m[:, None], out=mats)
    else:
        np.subtract(s, np.maximum.reduce(s, axis=-1, keepdims=True), out=s)
    np.exp(s, out=s)
    inv = np.matmul(s, np.ones(S, s.dtype))
    np.divide(1, inv, out=inv)  # (times the reciprocal of each row's sum, as torch's softmax: a broadcast product
    np.multiply(s, inv[..., None], out=s)  # costs half a broadcast division here)


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, mask: np.ndarray | None):
    """``(softmax(q @ k^T * scale + mask) @ v, the softmax)`` over (..., L, E) queries and (..., S, E) keys and
    (..., S, Ev) values (batch dims broadcast); ``mask`` is None or added to the scores (0 / -inf for a causal
    mask). The softmax (the attention weights) is returned for the backward."""
    s = np.matmul(np.multiply(q, scale), np.swapaxes(k, -1, -2))
    if mask is not None:
        if np.broadcast_shapes(s.shape, mask.shape) == s.shape:
            np.add(s, mask, out=s)
        else:
            s = s + mask
    if s.size:
        _softmax_rows_inplace(s)
    return np.matmul(s, v), s


class NumpyAttentionPrimitives:
    """The fused attention primitive (mixed into ``NumpyBackend``)."""

    attention = staticmethod(attention)
