"""NumPy primitives of the Tensor API's sorting family (part of :class:`~.numpy_backend.NumpyBackend`)."""

from __future__ import annotations


class NumpySortingPrimitives:
    """The sorting family's NumPy primitives; each one is a row of ``backends/protocol.py``."""
