"""``tl.backends.mkldnn``: oneDNN's switches (``enabled``, ``deterministic``, ``allow_tf32``, ``fp32_precision`` and
``matmul``/``conv``/``rnn.fp32_precision``), accepted and recorded. tinygrad_like does not use oneDNN
(``is_available()`` is False): its CPU ops are NumPy's, in full precision and deterministic."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2

enabled = True
deterministic = False
allow_tf32 = None  # (as torch 2.13 reports it: superseded by fp32_precision)
fp32_precision = "none"


class _FP32Precision:
    """``matmul``/``conv``/``rnn``: an ``fp32_precision`` attribute, as PyTorch's."""

    def __init__(self, op: str) -> None:
        self.op, self.fp32_precision = op, "none"

    def __repr__(self) -> str:
        return f"<tl.backends.mkldnn.{self.op} fp32_precision={self.fp32_precision!r}>"


matmul, conv, rnn = _FP32Precision("matmul"), _FP32Precision("conv"), _FP32Precision("rnn")


def is_available() -> bool:
    return False


def is_acl_available() -> bool:
    """False: no Arm Compute Library here."""
    return False


class verbose:  # noqa: N801 - torch's name
    """``with torch.backends.mkldnn.verbose(VERBOSE_ON):``: oneDNN's messages, of which there are none here."""

    def __init__(self, level: int) -> None:
        self.level = level

    def __enter__(self) -> verbose:
        return self

    def __exit__(self, *exc: object) -> bool:
        return False


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Set the switches given (None leaves one as it is); returns the previous ones, as PyTorch's."""
    global enabled, deterministic, allow_tf32, fp32_precision
    orig = (enabled, deterministic, allow_tf32, fp32_precision)
    if _enabled is not None:
        enabled = _enabled
    if _deterministic is not None:
        deterministic = _deterministic
    if _allow_tf32 is not None:
        allow_tf32 = _allow_tf32
    if _fp32_precision is not None:
        fp32_precision = _fp32_precision
    return orig


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none") -> Iterator[None]:
    """The switches inside the block, the previous ones after it."""
    orig = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        set_flags(*orig)
