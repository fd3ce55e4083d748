"""``tl.cuda.profiler``: ``start()``/``stop()`` of an external CUDA profiler's capture, and ``profile()``.

With CUDA they are accepted (the capture range of Nsight's ``--capture-range=cudaProfilerApi`` is not driven from
here: tinygrad_like's own timeline is ``tl.profiler``); without CUDA they raise, as PyTorch's on a CPU build.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._base import need_cuda

__all__ = ["start", "stop", "profile"]


def start() -> None:
    need_cuda("profiler.start()")


def stop() -> None:
    need_cuda("profiler.stop()")


@contextlib.contextmanager
def profile() -> Iterator[None]:
    start()
    try:
        yield
    finally:
        stop()
