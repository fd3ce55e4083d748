"""NumPy primitives of the Tensor API's shaping family (part of :class:`~.numpy_backend.NumpyBackend`)."""

from __future__ import annotations


class NumpyShapingPrimitives:
    """The shaping family's NumPy primitives; each one is a row of ``backends/protocol.py``."""
