"""Keep freed memory for reuse: the NumPy backend's large temporaries otherwise page-fault every step.

A training step allocates and frees the same few megabyte-sized arrays again and again (im2col
columns, activations, their gradients). glibc's malloc serves arrays above its mmap threshold with
fresh ``mmap`` pages and gives freed heap tops back to the kernel, so every step pays first-touch
page faults on those arrays again: on the 2-core benchmark machine that was about 2 ms of an 11 ms
CNN step (``benchmarks/train_step.py``; see ``benchmarks/RESULTS.md``). Raising both thresholds
keeps the pages mapped and reused, as caching allocators (PyTorch's on the GPU, jemalloc) do.

It is process-wide, so it is a documented choice that can be switched off: set the environment
variable ``TINYGRAD_LIKE_TUNE_MALLOC=0`` before importing. Arrays above 32 MB still get their own
``mmap`` and go back to the system when freed; up to 256 MB of free heap top is kept.
"""

from __future__ import annotations

import os
import sys

MMAP_THRESHOLD = 32 * 1024 * 1024   # glibc's largest allowed value on 64-bit
TRIM_THRESHOLD = 256 * 1024 * 1024
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # from <malloc.h>

#: What happened at import: "tuned", "off (TINYGRAD_LIKE_TUNE_MALLOC=0)", or why it was not applicable.
status = "not attempted"


def tune_glibc_malloc() -> str:
    """Apply the thresholds once; returns (and stores in ``status``) what happened."""
    global status
    if os.environ.get("TINYGRAD_LIKE_TUNE_MALLOC", "1") == "0":
        status = "off (TINYGRAD_LIKE_TUNE_MALLOC=0)"
    elif not sys.platform.startswith("linux"):
        status = f"not applicable on {sys.platform} (glibc only)"
    else:
        import ctypes  # (only on Linux, where glibc's malloc is tuned)

        try:
            libc = ctypes.CDLL(None)
            mallopt = libc.mallopt
        except (OSError, AttributeError):  # a C library without mallopt
            status = "not applicable (no mallopt)"
        else:  # musl's mallopt is a stub that refuses everything: then the status says so
            mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
            mmap_ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
            trim_ok = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
            status = ("tuned" if mmap_ok and trim_ok else "partly tuned (mmap threshold only)" if mmap_ok
                      else "partly tuned (trim threshold only)" if trim_ok else "mallopt refused the thresholds")
    return status
