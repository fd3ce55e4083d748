"""``tl.cuda``: is CUDA here, which devices, and the state of its memory pool.

Nothing here imports PyCUDA until a function is called, and every function answers on a machine
without CUDA (``is_available()`` is False, ``unavailable_reason()`` says why, ``device_count()`` is 0).

>>> import tinygrad_like as tl
>>> isinstance(tl.cuda.is_available(), bool)
True
>>> tl.cuda.is_available() or bool(tl.cuda.unavailable_reason())
True
"""

from __future__ import annotations

import random as _pyrandom

from .backends.cuda.probe import probe
from .random import default_generator
from .random import manual_seed as _seed

# the runtime (compiler, pool, timing) is imported on first use: ``import tinygrad_like`` stays cheap


def _runtime(start: bool):
    # (the CUDA machinery loads only when it is used: importing tinygrad_like stays light)
    from .backends.cuda import runtime

    return runtime.get_runtime() if start else runtime.runtime_if_started()

__all__ = ["is_available", "unavailable_reason", "device_count", "get_device_name", "get_device_capability",
           "synchronize", "memory_stats", "empty_cache", "Kernel", "amp", "manual_seed",  # noqa: F822
           "manual_seed_all", "seed", "seed_all", "initial_seed", "current_device", "set_device", "is_initialized",
           "is_bf16_supported"]  # (Kernel and amp come from __getattr__)


def __getattr__(name: str):
    if name == "Kernel":  # your own kernel from a .cu file (imports the compiler: only when asked for)
        # (the CUDA machinery loads only when it is used: importing tinygrad_like stays light)
        from .backends.cuda.user_kernel import Kernel

        return Kernel
    if name == "amp":  # torch.cuda.amp: autocast and GradScaler for "cuda" (see tinygrad_like.amp)
        from . import _cuda_amp  # (the CUDA machinery loads only when it is used: importing tinygrad_like stays light)

        return _cuda_amp
    raise AttributeError(f"module 'tinygrad_like.cuda' has no attribute {name!r}")


def is_available() -> bool:
    """True when PyCUDA imports, the driver initialises and at least one GPU is present."""
    return probe().available


def unavailable_reason() -> str:
    """Why CUDA cannot be used here ("" when it can): no PyCUDA, no driver, or no device."""
    return probe().reason


def device_count() -> int:
    return probe().device_count


def _device(index: int):
    status = probe()
    if not status.available:
        raise RuntimeError(f"CUDA is not available: {status.reason}")
    if not 0 <= index < status.device_count:
        raise ValueError(f"CUDA device index {index} out of range: this machine has {status.device_count} device(s)")
    return status.devices[index]


def get_device_name(device: int = 0) -> str:
    """The GPU's name, e.g. "NVIDIA H100 80GB HBM3"."""
    return _device(device)[0]


def get_device_capability(device: int = 0) -> tuple[int, int]:
    return tuple(_device(device)[1])


def synchronize() -> None:
    """Wait for all queued GPU work and report finished kernel timings (a no-op when CUDA was never used)."""
    rt = _runtime(start=False)
    if rt is not None:
        rt.synchronize()
    elif not is_available():
        raise RuntimeError(f"CUDA is not available: {unavailable_reason()}")


def memory_stats() -> dict:
    """The buffer pool's counters (bytes allocated, cached, peak; driver allocations; pool hits). All zero,
    without creating a CUDA context, while nothing has used the GPU yet."""
    rt = _runtime(start=False)
    if rt is not None:
        return rt.pool.stats()
    if not is_available():
        raise RuntimeError(f"CUDA is not available: {unavailable_reason()}")
    # (the CUDA machinery loads only when it is used: importing tinygrad_like stays light)
    from .backends.cuda.pool import BufferPool

    return BufferPool(None, None).stats()


def empty_cache() -> None:
    """Give the pool's cached (free) blocks back to the driver."""
    rt = _runtime(start=False)
    if rt is not None:
        rt.pool.empty_cache()


# ---- PyTorch's seeding and device calls ------------------------------------------------------------------
# One generator (tl.manual_seed's) serves every device here, so seeding "CUDA" seeds it where CUDA is in use,
# and is a no-op without CUDA (as PyTorch's, which seeds a CUDA generator that nothing then reads).
def manual_seed(seed: int) -> None:
    """Seed the generator CUDA ops draw from (the default one); a no-op without CUDA."""
    if is_available():

        _seed(int(seed))


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def seed() -> None:
    """Seed with a random number (a no-op without CUDA)."""
    if is_available():

        manual_seed(_pyrandom.getrandbits(63))


def seed_all() -> None:
    seed()


def initial_seed() -> int:

    return default_generator.initial_seed()


def _need_cuda(what: str) -> None:
    if not is_available():
        raise RuntimeError(f"tl.cuda.{what}: CUDA is not available: {unavailable_reason()}")


def current_device() -> int:
    _need_cuda("current_device()")
    return 0


def set_device(device) -> None:
    """Accept device 0 (tinygrad_like uses one GPU); a no-op when CUDA is not available, as ``-1`` would be."""
    idx = getattr(device, "index", device)
    if isinstance(device, str):
        idx = int(device.split(":")[1]) if ":" in device else 0
    if idx is None or (isinstance(idx, int) and idx < 0):
        return
    _device(idx)


def is_initialized() -> bool:
    return _runtime(start=False) is not None


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False
