"""``tl.backends.mkl``: Intel's oneMKL, which tinygrad_like does not call (NumPy computes here, with whichever BLAS it
was built with): ``is_available()`` is False and ``verbose`` is a context manager that changes nothing."""

from __future__ import annotations

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available() -> bool:
    return False


class verbose:  # noqa: N801 - torch's name
    """``with torch.backends.mkl.verbose(VERBOSE_ON):``: oneMKL's messages, of which there are none here."""

    def __init__(self, enable: int) -> None:
        self.enable = enable

    def __enter__(self) -> verbose:
        return self

    def __exit__(self, *exc: object) -> bool:
        return False
