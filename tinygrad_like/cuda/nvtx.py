"""``tl.cuda.nvtx``: ranges and marks for NVIDIA's profilers (Nsight Systems).

tinygrad_like has no NVTX binding, so the ranges reach no external profiler; they nest and answer as PyTorch's
(``range_push`` returns the depth, ``range_pop`` the depth left). Without CUDA they raise, as PyTorch's on a build
without CUDA. The views' own timeline (kernel events) needs none of this.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator

from ._base import need_cuda

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_stack: list[str] = []
_open: dict[int, str] = {}
_ids = itertools.count(1)


def range_push(msg: str) -> int:
    """Open a nested range; returns its depth (0 for the outermost)."""
    need_cuda("nvtx.range_push()")
    _stack.append(str(msg))
    return len(_stack) - 1


def range_pop() -> int:
    """Close the innermost range; returns the depth of the one closed, or -1 when none was open."""
    need_cuda("nvtx.range_pop()")
    if not _stack:
        return -1
    _stack.pop()
    return len(_stack)


def range_start(msg: str) -> int:
    """Open a range that may span threads; returns its id for :func:`range_end`."""
    need_cuda("nvtx.range_start()")
    range_id = next(_ids)
    _open[range_id] = str(msg)
    return range_id


def range_end(range_id: int) -> None:
    need_cuda("nvtx.range_end()")
    _open.pop(range_id, None)


def mark(msg: str) -> None:
    """An instant marker."""
    need_cuda("nvtx.mark()")


@contextlib.contextmanager
def range(msg: str, *args, **kwargs) -> Iterator[None]:  # noqa: A001 - torch's name
    """``with nvtx.range("step {}", i):`` pushes the formatted message and pops it after."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
