"""NumPy primitives of the Tensor API's math family (part of :class:`~.numpy_backend.NumpyBackend`)."""

from __future__ import annotations


class NumpyMathPrimitives:
    """The math family's NumPy primitives; each one is a row of ``backends/protocol.py``."""
