"""Backends: one module per device kind behind one small protocol, written down in ``protocol.py``."""
