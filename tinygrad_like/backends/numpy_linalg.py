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
