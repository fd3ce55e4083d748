"""``tl.backends.nnpack``: NNPACK's switch, recorded; tinygrad_like does not use NNPACK (``is_available()`` is
False)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["is_available", "flags", "set_flags"]

_state = {"enabled": True}


def is_available() -> bool:
    return False


def set_flags(_enabled):
    """Set the switch; returns the previous setting as a 1-tuple, as PyTorch's."""
    orig = (_state["enabled"],)
    _state["enabled"] = bool(_enabled)
    return orig


@contextlib.contextmanager
def flags(enabled=False) -> Iterator[None]:
    orig = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(orig[0])
