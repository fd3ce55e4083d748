"""``tl.backends.miopen``: the switch of AMD's MIOpen convolutions (``immediate``), recorded; tinygrad_like has no
ROCm backend, so nothing reads it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

immediate = False


def set_flags(_immediate=None):
    """Set the switch (None leaves it); returns the previous setting as a 1-tuple, as PyTorch's."""
    global immediate
    orig = (immediate,)
    if _immediate is not None:
        immediate = _immediate
    return orig


@contextlib.contextmanager
def flags(immediate=False) -> Iterator[None]:
    orig = set_flags(immediate)
    try:
        yield
    finally:
        set_flags(orig[0])
