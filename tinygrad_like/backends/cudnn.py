"""``tl.backends.cudnn``: PyTorch's cuDNN switches, accepted and recorded; nothing here uses cuDNN.

``benchmark``, ``deterministic``, ``allow_tf32`` and ``enabled`` are plain attributes a program may set and
read; they change no computation (the CUDA backend uses its own kernels, in full float32, and is
deterministic). ``is_available()`` is False: there is no cuDNN.
"""

from __future__ import annotations

import contextlib

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True
fp32_precision = "none"
depthwise_kernel = "auto"


class _FP32Precision:
    """``conv``/``rnn``: an ``fp32_precision`` attribute, as PyTorch's."""

    def __init__(self, op: str) -> None:
        self.op, self.fp32_precision = op, "tf32"  # (torch's default, read from allow_tf32; recorded only here)

    def __repr__(self) -> str:
        return f"<tl.backends.cudnn.{self.op} fp32_precision={self.fp32_precision!r}>"


conv, rnn = _FP32Precision("conv"), _FP32Precision("rnn")


def is_available() -> bool:
    return False


def version():
    return None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Set the switches inside the block (as ``torch.backends.cudnn.flags``), restore them after."""
    g = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    old = {k: g[k] for k in names}
    g.update(dict(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32))))
    try:
        yield
    finally:
        g.update(old)
