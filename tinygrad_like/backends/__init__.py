"""Backends: one module per device kind behind one small protocol (see ``numpy_backend``)."""
