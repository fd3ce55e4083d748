"""NumPy primitives of the Tensor API's linalg family (part of :class:`~.numpy_backend.NumpyBackend`)."""

from __future__ import annotations

import numpy as np


class NumpyLinalgPrimitives:
    """The linalg family's NumPy primitives; each one is a row of ``backends/protocol.py``."""

    @staticmethod
    def cross(a, b, axis):
        """The cross product of 3-vectors along ``axis`` (the other dims broadcast)."""
        return np.ascontiguousarray(np.cross(a, b, axis=axis))

    @staticmethod
    def tril_indices(row, col, offset, dtype):
        """``(2, N)``: the row and column indices of the lower triangle of a ``row x col`` matrix, row-major."""
        return np.stack(np.tril_indices(row, offset, col)).astype(dtype.np)

    @staticmethod
    def triu_indices(row, col, offset, dtype):
        """``(2, N)``: the row and column indices of the upper triangle of a ``row x col`` matrix, row-major."""
        return np.stack(np.triu_indices(row, offset, col)).astype(dtype.np)

    # ---- singular value decomposition (SVD) ------------------------------------------------------
    @staticmethod
    def svd(x, full_matrices):
        """``(U, S, Vh)`` of the matrices in ``x``'s last two dims (LAPACK's gesdd, as torch's CPU SVD): singular
        values in descending order. ``full_matrices``: U is m x m and Vh n x n, else m x k and k x n (k = min(m,
        n)). The caller checks that ``x`` is finite."""
        u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
        return np.ascontiguousarray(u), np.ascontiguousarray(s), np.ascontiguousarray(vh)

    @staticmethod
    def svdvals(x):
        """The singular values alone, descending (no U, V computed)."""
        return np.ascontiguousarray(np.linalg.svd(x, compute_uv=False))
