"""A BLAS thread policy: mid-sized matrix products run on one thread, large ones on all of the BLAS's threads.

Why: OpenBLAS (NumPy's BLAS) wakes its worker threads for every product above a small size, and after the
product they spin, waiting for more work, before they sleep. A recurrent layer runs a small product per time step
with Python and NumPy work in between, so the workers spin while the main thread works, on the very cores it
needs. On a quiet 2-core machine that costs little; with one core busy elsewhere (a browser, another notebook)
an LSTM language-model step went from 52 ms on one thread to 100 ms on two (issue 30). Large products, on the
other hand, do gain from every core. So: one thread for products in a middle band, the BLAS's own choice
outside it.

- Below ``SINGLE_THREAD_MNK`` (m*n*k) OpenBLAS already computes on the calling thread; nothing is switched.
- From there to ``LARGE_MNK`` the product runs with the BLAS set to one thread, and the count is put back right
  after: the rest of the process (``threadpoolctl``, ``tl.set_num_threads``, an environment variable) always
  sees its own setting, which is the cap this policy works under.
- Only the main thread switches: OpenBLAS's count is one per process, so two threads switching it would
  undo each other's settings. Products on other threads run at the BLAS's count.
- ``TL_BLAS_POLICY=off`` (or :func:`enable`\\ ``(False)``) turns the policy off.

It acts on OpenBLAS only, through its own ``openblas_set_num_threads`` (0.3 µs a call, where
``threadpoolctl.threadpool_limits`` costs 8 µs), found by ``threadpoolctl`` in the library NumPy loaded. With
another BLAS (MKL, BLIS, Accelerate) or without threadpoolctl, products run at the BLAS's own count.

>>> import numpy as np
>>> from tinygrad_like.backends import blas_threads
>>> a = np.ones((64, 256), np.float32); b = np.ones((256, 512), np.float32)
>>> float(blas_threads.matmul(a, b)[0, 0])
256.0
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

__all__ = ["matmul", "matmul_into", "enable", "info", "SINGLE_THREAD_MNK", "LARGE_MNK"]

# OpenBLAS's own rule (interface/gemm.c): m*n*k at most 65536 * GEMM_MULTITHREAD_THRESHOLD (4 by default) runs
# on the calling thread.
SINGLE_THREAD_MNK = 65536 * 4
# Above this the product gains from every core even with one core busy elsewhere: 512x128x1000 took 686 us on
# two threads and 1,256 us on one, with a busy core beside it (2-core AMD EPYC, issue 30's notes). The LSTM and
# GPT steps of benchmarks/train_step.py measured the band (benchmarks/RESULTS.md, "BLAS thread policy").
LARGE_MNK = 16 * 2**20


def _find_openblas():
    """(set_num_threads, get_num_threads) of the OpenBLAS NumPy loaded, as ctypes functions; None if NumPy uses
    another BLAS or threadpoolctl is missing."""
    try:
        import threadpoolctl  # (at the first mid-sized product: it scans the loaded libraries, ~10 ms)
    except ImportError:
        return None
    np.ones((2, 2)) @ np.ones((2, 2))  # (make sure NumPy's BLAS is loaded before it is looked for)
    for ctl in threadpoolctl.ThreadpoolController().select(internal_api="openblas").lib_controllers:
        lib = ctypes.CDLL(ctl.filepath)
        for prefix in ("", "scipy_"):  # the names of NumPy's scipy-openblas builds, then a system OpenBLAS
            for suffix in ("", "64_", "_64"):
                try:
                    set_fn = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}")
                    get_fn = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}")
                except AttributeError:
                    continue
                set_fn.argtypes, set_fn.restype = [ctypes.c_int], None
                get_fn.argtypes, get_fn.restype = [], ctypes.c_int
                return set_fn, get_fn, ctl.filepath
    return None


_WANTED = os.environ.get("TL_BLAS_POLICY", "on").lower() not in ("0", "off", "false", "no")
_on = _WANTED  # (until the first mid-sized product looks for OpenBLAS: off from then on if there is none)
_found = None  # (set_num_threads, get_num_threads, library path), looked up at the first mid-sized product
_probed = False
_main = threading.main_thread().ident
_get_ident = threading.get_ident


def _probe() -> bool:
    """Look for OpenBLAS once (threadpoolctl scans the loaded libraries: ~10 ms, kept off ``import``)."""
    global _found, _probed, _on
    if not _probed:
        _found, _probed = _find_openblas(), True
        _on = _on and _found is not None
    return _found is not None


def enable(on: bool = True) -> bool:
    """Turn the policy on or off; returns whether it was on. Off, or without OpenBLAS, every product runs at the
    BLAS's own thread count."""
    global _on
    was = _on
    _on = bool(on) and _probe()
    return was


def info() -> dict:
    """What the policy acts on (the benchmarks record it)."""
    _probe()
    return {"enabled": _on, "blas": "openblas" if _found else None, "library": _found[2] if _found else None,
            "single_thread_mnk": SINGLE_THREAD_MNK, "large_mnk": LARGE_MNK,
            "blas_threads": _found[1]() if _found else None}


def _mid_sized(a, b) -> bool:
    """Whether ``a @ b`` is in the band this policy runs on one thread, on the main thread, with OpenBLAS found."""
    if not a.ndim or not b.ndim:
        return False
    # m*n*k of one product: a batched matmul runs its products one after another, each deciding alone
    mnk = (a.shape[-2] if a.ndim > 1 else 1) * a.shape[-1] * (b.shape[-1] if b.ndim > 1 else 1)
    return SINGLE_THREAD_MNK < mnk <= LARGE_MNK and _get_ident() == _main and (_found is not None or _probe())


def _on_one_thread(a, b, out):
    set_threads, get_threads = _found[0], _found[1]
    cap = get_threads()  # (whatever the rest of the process set: put back after)
    if cap <= 1:
        return np.matmul(a, b, out=out)
    set_threads(1)
    try:
        return np.matmul(a, b, out=out)
    finally:
        set_threads(cap)


def matmul(a, b, /):
    """``np.matmul(a, b)``, with the BLAS on one thread when the product is mid-sized (see the module docstring)."""
    # perf: a.size * b.size bounds m*n*k from above, so a small product skips the shape arithmetic: on 4x4 @ 4x4
    # (np.matmul 1.03 us) the policy added 0.93 us through _mid_sized, 0.09 us with this test first
    if _on and a.size * b.size > SINGLE_THREAD_MNK and _mid_sized(a, b):
        return _on_one_thread(a, b, None)
    return np.matmul(a, b)


def matmul_into(a, b, out):
    """``np.matmul(a, b, out=out)`` under the same policy (the recurrent layers' per-step products)."""
    if _on and a.size * b.size > SINGLE_THREAD_MNK and _mid_sized(a, b):
        return _on_one_thread(a, b, out)
    return np.matmul(a, b, out=out)
