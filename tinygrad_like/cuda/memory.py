"""``tl.cuda.memory`` (``torch.cuda.memory``): the CUDA buffer pool's counters, in PyTorch's names.

The pool (``backends/cuda/pool.py``) is a caching allocator like PyTorch's: ``memory_allocated`` is the bytes live
tensors asked for, ``memory_reserved`` the bytes it holds from the driver (in use plus cached), ``max_*`` their peaks
since the last reset. Before anything used the GPU every counter is 0 (no CUDA context is made to read them); without
CUDA they are 0 and ``memory_stats()`` is empty, as PyTorch's.

>>> import tinygrad_like as tl
>>> tl.cuda.memory_allocated() if not tl.cuda.is_initialized() else 0
0
"""

from __future__ import annotations

import contextlib
import importlib
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from ..backends.cuda.probe import probe
from ..unsupported import unsupported_class, unsupported_function
from ._base import checked_index, device_index, need_cuda, runtime, with_params

__all__ = ["caching_allocator_alloc", "caching_allocator_delete", "caching_allocator_disabled",
           "caching_allocator_enable", "get_per_process_memory_fraction", "set_per_process_memory_fraction",
           "empty_cache", "memory_stats", "memory_stats_as_nested_dict", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached", "host_memory_stats",
           "host_memory_stats_as_nested_dict", "reset_accumulated_host_memory_stats", "reset_peak_host_memory_stats",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached",
           "max_memory_cached", "memory_snapshot", "memory_summary", "list_gpu_processes", "mem_get_info",
           "get_allocator_backend", "CUDAPluggableAllocator", "change_current_allocator", "MemPool", "use_mem_pool"]

ALLOCATOR = ("tinygrad_like's CUDA backend has one buffer pool of its own; custom allocators and separate memory pools "
             "cannot be plugged into it")

_state: dict[str, Any] = {"fraction": 1.0, "caching": True}
_raw: dict[int, Any] = {}  # address -> pool buffer, for caching_allocator_alloc / _delete


def _pool():
    rt = runtime(start=False)
    return None if rt is None else rt.pool


def _peaks(pool) -> tuple[int, int]:
    """(peak bytes requested, peak bytes reserved) since the last reset, as the pool tracks them."""
    return pool.peak_requested, pool.peak_reserved


def memory_stats(device: Any = None) -> dict[str, Any]:
    """PyTorch's flat counters (``"allocated_bytes.all.current"``, ``"reserved_bytes.all.peak"``, ...) beside the
    pool's own (``"pool_hits"`` ...); empty before the GPU is used, as PyTorch's."""
    pool = _pool()
    if pool is None:
        if not probe().available:
            return OrderedDict()
        # (a GPU not used yet: every counter 0, without creating a CUDA context)
        from ..backends.cuda.pool import BufferPool  # (waits: the pool module loads with the CUDA machinery)

        pool = BufferPool(None, None)
    device_index(device)
    peak_req, peak_res = _peaks(pool)
    ours = pool.stats()
    flat = {"allocated_bytes.all.current": pool.requested, "allocated_bytes.all.peak": peak_req,
            "reserved_bytes.all.current": pool.in_use + pool.cached, "reserved_bytes.all.peak": peak_res,
            "active_bytes.all.current": pool.in_use, "active_bytes.all.peak": pool.peak_in_use,
            "inactive_split_bytes.all.current": pool.cached, "num_alloc_retries": pool.oom_retries,
            "num_ooms": 0, "segment.all.allocated": pool.driver_allocs, "segment.all.freed": pool.driver_frees}
    return OrderedDict(sorted({**flat, **ours}.items()))


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """:func:`memory_stats` with the dotted keys split into nested dicts."""
    nested: dict[str, Any] = {}
    stats = memory_stats(device)
    for key, value in stats.items():
        if "." in key:  # (torch's keys; the pool's own plain keys follow, where they do not clash)
            *parents, leaf = key.split(".")
            where = nested
            for p in parents:
                where = where.setdefault(p, {})
            where[leaf] = value
    for key, value in stats.items():
        if "." not in key:
            nested.setdefault(key, value)
    return nested


def memory_allocated(device: Any = None) -> int:
    pool = _pool()
    return 0 if pool is None else pool.requested


def max_memory_allocated(device: Any = None) -> int:
    pool = _pool()
    return 0 if pool is None else _peaks(pool)[0]


def memory_reserved(device: Any = None) -> int:
    pool = _pool()
    return 0 if pool is None else pool.in_use + pool.cached


def max_memory_reserved(device: Any = None) -> int:
    pool = _pool()
    return 0 if pool is None else _peaks(pool)[1]


def memory_cached(device: Any = None) -> int:
    """Deprecated in PyTorch: :func:`memory_reserved`."""
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    """Deprecated in PyTorch: :func:`max_memory_reserved`."""
    return max_memory_reserved(device)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start the peaks again from the current values."""
    pool = _pool()
    if pool is None:
        return
    pool.peak_in_use, pool.peak_requested, pool.peak_reserved = pool.in_use, pool.requested, pool.in_use + pool.cached


def reset_max_memory_allocated(device: Any = None) -> None:
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: Any = None) -> None:
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device: Any = None) -> None:
    """Zero the pool's running totals (driver allocations and frees, hits, misses, retries)."""
    pool = _pool()
    if pool is not None:
        pool.driver_allocs = pool.driver_frees = pool.hits = pool.misses = pool.oom_retries = 0


def empty_cache() -> None:
    """Give the pool's cached (free) blocks back to the driver."""
    pool = _pool()
    if pool is not None:
        pool.empty_cache()


def host_memory_stats() -> dict[str, Any]:
    """Pinned host memory: tinygrad_like allocates none, so there are no counters (as PyTorch before any)."""
    return OrderedDict()


def host_memory_stats_as_nested_dict() -> dict[str, Any]:
    return {}


def reset_accumulated_host_memory_stats() -> None:
    """No pinned host memory, no counters to reset."""


def reset_peak_host_memory_stats() -> None:
    """No pinned host memory, no counters to reset."""


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of the GPU, from the driver."""
    checked_index(device, "mem_get_info()")
    return tuple(int(n) for n in runtime(start=True).drv.mem_get_info())


def get_per_process_memory_fraction(device: Any = None) -> float:
    """The fraction last set with :func:`set_per_process_memory_fraction` (1.0 at first)."""
    checked_index(device, "get_per_process_memory_fraction()")
    return _state["fraction"]


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Record a cap on the pool, as a fraction of the GPU's memory. The pool does not enforce it: an allocation
    beyond it fails only when the driver has no more memory."""
    checked_index(device, "set_per_process_memory_fraction()")
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _state["fraction"] = fraction


def caching_allocator_enable(value: bool = True) -> None:
    """Record whether the caching allocator is on; turning it off gives the cached blocks back to the driver (the
    pool itself keeps caching: it has no uncached mode)."""
    _state["caching"] = bool(value)
    if not value:
        empty_cache()


@contextlib.contextmanager
def caching_allocator_disabled() -> Iterator[None]:
    """:func:`caching_allocator_enable` (False) inside the block, the previous setting after it."""
    previous = _state["caching"]
    caching_allocator_enable(False)
    try:
        yield
    finally:
        caching_allocator_enable(previous)


def caching_allocator_alloc(size: int, device: Any = None, stream: Any = None) -> int:
    """``size`` bytes from the pool; the address, to give back with :func:`caching_allocator_delete`."""
    checked_index(device, "caching_allocator_alloc()")
    buffer = runtime(start=True).pool.alloc(int(size))
    _raw[int(buffer)] = buffer
    return int(buffer)


def caching_allocator_delete(mem_ptr: int) -> None:
    """Give back memory from :func:`caching_allocator_alloc`."""
    buffer = _raw.pop(int(mem_ptr), None)
    if buffer is None:
        raise RuntimeError(f"caching_allocator_delete: {mem_ptr} is not an address caching_allocator_alloc returned")
    runtime(start=True).pool.free(buffer)


def get_allocator_backend() -> str:
    """``"native"``: the backend's own caching pool (PyTorch's name for its own)."""
    need_cuda("get_allocator_backend()")
    return "native"


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """A short table of :func:`memory_stats` (this pool's counters; PyTorch's table has more rows)."""
    checked_index(device, "memory_summary()")
    stats = memory_stats(device)
    if not stats:
        return "|  CUDA memory summary: the GPU has not been used yet, nothing allocated  |\n"
    width = max(len(k) for k in stats)
    lines = [f"CUDA memory summary, device {device_index(device)}", "-" * (width + 16)]
    lines += [f"{k:<{width}}  {v:>14}" for k, v in stats.items()]
    return "\n".join(lines) + "\n"


def list_gpu_processes(device: Any = None) -> str:
    """The processes on the GPU with their memory, from NVML (``pynvml``), as PyTorch; says so when NVML is missing."""
    try:
        pynvml = importlib.import_module("pynvml")
    except ModuleNotFoundError:
        return "pynvml module not found, please install nvidia-ml-py"
    index = checked_index(device, "list_gpu_processes()")
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    lines = [f"GPU:{index}"] + ([f"process {p.pid:>10d} uses {p.usedGpuMemory / 1024 / 1024:>12.3f} MB GPU memory"
                                 for p in procs] or ["no processes are running"])
    return "\n".join(lines)


CUDAPluggableAllocator = with_params(unsupported_class("torch.cuda.memory.CUDAPluggableAllocator", ALLOCATOR),
                                     lambda path_to_so_file, alloc_fn_name, free_fn_name: None)
MemPool = with_params(unsupported_class("torch.cuda.memory.MemPool", ALLOCATOR),
                      lambda allocator=None, use_on_oom=False, no_split=False: None)
change_current_allocator = with_params(unsupported_function("torch.cuda.memory.change_current_allocator", ALLOCATOR),
                                       lambda allocator: None)
use_mem_pool = with_params(unsupported_function("torch.cuda.memory.use_mem_pool", ALLOCATOR),
                           lambda pool, device=None: None)
_NO_SEGMENTS = ("tinygrad_like's CUDA pool keeps counters, not a record of each segment; read "
                "torch.cuda.memory_stats() instead")
memory_snapshot = with_params(unsupported_function("torch.cuda.memory.memory_snapshot", _NO_SEGMENTS),
                              lambda mempool_id=None, include_traces=True: None)
