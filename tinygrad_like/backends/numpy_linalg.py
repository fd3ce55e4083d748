"""NumPy primitives of the Tensor API's linalg family (part of :class:`~.numpy_backend.NumpyBackend`)."""

from __future__ import annotations


class NumpyLinalgPrimitives:
    """The linalg family's NumPy primitives; each one is a row of ``backends/protocol.py``."""
