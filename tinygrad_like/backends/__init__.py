"""Backends: one module per device kind behind one small protocol, written down in ``protocol.py`` (the table of
primitives) and ``signatures.py`` (how each is called).

``cudnn`` and ``mps`` (and ``cuda.matmul``) are PyTorch's ``torch.backends`` switches, accepted and recorded only."""

from . import cudnn, mps  # noqa: F401 - torch.backends.cudnn / .mps flags (no imports of their own)
