"""``tl.cuda`` (``torch.cuda``): is CUDA here, which devices, their memory pool, streams, events and seeds.

Nothing here imports PyCUDA until a function is called, and every function answers on a machine without CUDA
as PyTorch's does on one: ``is_available()`` is False (``unavailable_reason()`` says why), ``device_count()`` is 0,
the memory counters are 0, seeding is a no-op, and the calls that need a GPU (``current_device()``,
``get_device_name()``, ``synchronize()``, ``Stream()`` ...) raise :class:`CudaUnavailableError`, an
``AssertionError`` (what a CPU-only PyTorch raises) that is also a ``RuntimeError`` (what a CUDA build raises
without a GPU). With CUDA, they answer from the backend: the device the driver reports, the backend's buffer pool
(``memory``), its one stream (``streams``), and the default generator (``random``).

>>> import tinygrad_like as tl
>>> isinstance(tl.cuda.is_available(), bool)
True
>>> tl.cuda.is_available() or bool(tl.cuda.unavailable_reason())
True
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from ..backends.cuda.probe import arch_of, probe
from ..unsupported import VENDOR, unsupported_class, unsupported_function
from . import graphs, jiterator, memory, nccl, nvtx, profiler, random, sparse, streams, tunable  # noqa: F401
from ._base import CudaUnavailableError, checked_index, device_index, need_cuda, runtime, with_params
from .graphs import CUDAGraph, graph, graph_pool_handle, make_graphed_callables  # noqa: F401
from .memory import (CUDAPluggableAllocator, MemPool, caching_allocator_alloc, caching_allocator_delete,  # noqa: F401
                     caching_allocator_disabled, caching_allocator_enable, change_current_allocator, empty_cache,
                     get_allocator_backend, get_per_process_memory_fraction, host_memory_stats,
                     host_memory_stats_as_nested_dict, list_gpu_processes, max_memory_allocated, max_memory_cached,
                     max_memory_reserved, mem_get_info, memory_allocated, memory_cached, memory_reserved,
                     memory_snapshot, memory_stats, memory_stats_as_nested_dict, memory_summary,
                     reset_accumulated_host_memory_stats, reset_accumulated_memory_stats, reset_max_memory_allocated,
                     reset_max_memory_cached, reset_peak_host_memory_stats, reset_peak_memory_stats,
                     set_per_process_memory_fraction, use_mem_pool)
from .random import (get_rng_state, get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed,  # noqa: F401
                     seed_all, set_rng_state, set_rng_state_all)
from .streams import (Event, ExternalStream, Stream, StreamContext, current_stream, default_stream,  # noqa: F401
                      get_stream_from_external, is_current_stream_capturing, set_stream, stream)

__all__ = ["is_available", "unavailable_reason", "device_count", "get_device_name", "get_device_capability",
           "get_device_properties", "synchronize", "memory_stats", "empty_cache", "Kernel", "amp",  # noqa: F822
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "current_device", "set_device",
           "is_initialized", "is_bf16_supported", "CudaUnavailableError", "trace", "KernelError",
           "OutOfBoundsError", "SharedMemoryRaceError", "KernelCompileError",
           "KernelDeadlockError"]  # (Kernel, amp, trace and the errors come from __getattr__)

# the emulated device's kernel checks and launch traces (loaded only when asked for)
_EMULATOR_NAMES = {"trace": "trace", "KernelError": "checks", "OutOfBoundsError": "checks",
                   "SharedMemoryRaceError": "checks", "KernelCompileError": "checks", "KernelDeadlockError": "checks"}

has_half = True
has_magma = False
_sync_debug_mode = {"mode": 0}

# the legacy tensor types (torch.cuda.FloatTensor ...) and storages: made on first use (they need the Tensor class)
_TENSOR_TYPE_NAMES = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
                      "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor")


def __getattr__(name: str):
    if name == "Kernel":  # your own kernel from a .cu file (imports the compiler: only when asked for)
        # (the CUDA machinery loads only when it is used: importing tinygrad_like stays light)
        from ..backends.cuda.user_kernel import Kernel

        return Kernel
    if name in _EMULATOR_NAMES:  # tl.cuda.trace() and the errors of a checked launch on cuda-emu
        # (the emulator loads only when it is used: importing tinygrad_like stays light)
        module = importlib.import_module(f"..backends.cuda_emu.{_EMULATOR_NAMES[name]}", __name__)
        return module.TraceRecorder if name == "trace" else getattr(module, name)
    if name == "amp":  # torch.cuda.amp: autocast and GradScaler for "cuda" (see tinygrad_like.amp)
        from .. import _cuda_amp  # (the CUDA machinery loads only when it is used: importing tl stays light)

        return _cuda_amp
    if name == "default_generators":  # (one generator serves every device: see .random)
        # (waits: the generators live above the cuda layer's first import)
        from ..random import default_generator

        return (default_generator,) * probe().device_count
    if name in _TENSOR_TYPE_NAMES or name.endswith("Storage"):
        from . import _tensor_types  # (waits: the legacy classes need the Tensor class, built after tl.cuda)

        found = _tensor_types.tensor_types.get(name) or _tensor_types.storages.get(name)
        if found is not None:
            return found
    raise AttributeError(f"module 'tinygrad_like.cuda' has no attribute {name!r}")


def is_available() -> bool:
    """True when PyCUDA imports, the driver initialises and at least one GPU is present."""
    return probe().available


def unavailable_reason() -> str:
    """Why CUDA cannot be used here ("" when it can): no PyCUDA, no driver, or no device."""
    return probe().reason


def device_count() -> int:
    return probe().device_count


def _device(index: Any):
    return probe().devices[checked_index(index, "device query")]


def get_device_name(device: Any = None) -> str:
    """The GPU's name, e.g. "NVIDIA H100 80GB HBM3"."""
    return _device(device)[0]


def get_device_capability(device: Any = None) -> tuple[int, int]:
    return tuple(_device(device)[1])


@dataclass(frozen=True)
class _CudaDeviceProperties:
    """What ``get_device_properties`` tells (the fields programs read: name, capability, memory, SMs)."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int | None

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    """The device's name, compute capability, memory in bytes and number of SMs (as the driver reports them)."""
    index = checked_index(device, "get_device_properties()")
    name, (major, minor), total = probe().devices[index]
    rt = runtime(start=False)
    sms = rt.sm_count if rt is not None and rt.device_index == index else None
    return _CudaDeviceProperties(name, int(major), int(minor), int(total), sms)


def synchronize(device: Any = None) -> None:
    """Wait for all queued GPU work and report finished kernel timings (a no-op when CUDA was never used)."""
    rt = runtime(start=False)
    if rt is not None:
        rt.synchronize()
    else:
        need_cuda("synchronize()")


def current_device() -> int:
    """0: tinygrad_like drives one GPU."""
    need_cuda("current_device()")
    return 0


def set_device(device: Any) -> None:
    """Accept device 0 (tinygrad_like uses one GPU); a negative index is a no-op, as in PyTorch."""
    index = device_index(device)
    if index < 0:
        return
    checked_index(index, "set_device()")


class device:  # noqa: N801 - torch's name
    """``with torch.cuda.device(i):`` makes device ``i`` current inside the block (there is one here: 0);
    ``-1`` or a CPU device is a no-op."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if getattr(device, "type", "cuda") != "cuda" else device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx != -1:
            checked_index(self.idx, "device()")
            self.prev_idx = 0

    def __exit__(self, *exc: object) -> bool:
        return False


class device_of(device):  # noqa: N801 - torch's name
    """``with torch.cuda.device_of(tensor):`` the tensor's CUDA device (a no-op for a CPU tensor)."""

    def __init__(self, obj: Any) -> None:
        dev = getattr(obj, "device", None)
        super().__init__(dev if getattr(dev, "type", None) == "cuda" else -1)


def is_initialized() -> bool:
    """Whether the CUDA runtime (context, pool) has started."""
    return runtime(start=False) is not None


def init() -> None:
    """Start the CUDA runtime now (it otherwise starts with the first CUDA tensor)."""
    need_cuda("init()")
    runtime(start=True)


def ipc_collect() -> None:
    """Free memory other processes no longer use through CUDA IPC: none is shared from here, so a no-op."""
    need_cuda("ipc_collect()")


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    """False: our kernels compute float32 in full float32 (no TF32)."""
    return False


def get_arch_list() -> list[str]:
    """The archs kernels are built for: the present device's own (we compile for it at run time); [] without CUDA."""
    return sorted({arch_of(tuple(cc)) for _, cc, _ in probe().devices}) if probe().available else []


def get_gencode_flags() -> str:
    return " ".join(f"-gencode compute=compute{a[2:]},code={a}" for a in get_arch_list())


def can_device_access_peer(device: Any, peer_device: Any) -> bool:
    """False: there is one GPU here, and no peer access between devices."""
    checked_index(device, "can_device_access_peer()")
    checked_index(peer_device, "can_device_access_peer()")
    return False


def get_sync_debug_mode() -> int:
    need_cuda("get_sync_debug_mode()")
    return _sync_debug_mode["mode"]


def set_sync_debug_mode(debug_mode: int | str) -> None:
    """Record the mode (0 "default", 1 "warn", 2 "error"); no warning is raised at synchronizing ops here."""
    need_cuda("set_sync_debug_mode()")
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError('invalid value of debug_mode, expected one of `default`, `warn`, `error`')
        debug_mode = modes[debug_mode]
    _sync_debug_mode["mode"] = int(debug_mode)


class cudaStatus:  # noqa: N801 - torch's name
    SUCCESS: int = 0
    ERROR_NOT_READY: int = 34


class CudaError(RuntimeError):
    """A CUDA runtime error code, as an exception."""

    def __init__(self, code: int) -> None:
        super().__init__(f"CUDA error {code}")


class DeferredCudaCallError(Exception):
    """A call queued before CUDA started failed when it ran."""


def check_error(res: int) -> None:
    if res != cudaStatus.SUCCESS:
        raise CudaError(res)


def _nvml(what: str, device: Any):
    """The NVML handle of ``device`` (``pynvml``, as PyTorch uses it for the utilization queries)."""
    try:
        pynvml = importlib.import_module("pynvml")
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be imported.") from e
    index = checked_index(device, what)
    pynvml.nvmlInit()
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(index)


def utilization(device: Any = None) -> int:
    """Percent of the last sample period a kernel ran (NVML)."""
    nvml, h = _nvml("utilization()", device)
    return nvml.nvmlDeviceGetUtilizationRates(h).gpu


def memory_usage(device: Any = None) -> int:
    """Percent of the last sample period memory was read or written (NVML)."""
    nvml, h = _nvml("memory_usage()", device)
    return nvml.nvmlDeviceGetUtilizationRates(h).memory


def temperature(device: Any = None) -> int:
    """Degrees Celsius (NVML)."""
    nvml, h = _nvml("temperature()", device)
    return nvml.nvmlDeviceGetTemperature(h, 0)


def power_draw(device: Any = None) -> int:
    """Milliwatts (NVML)."""
    nvml, h = _nvml("power_draw()", device)
    return nvml.nvmlDeviceGetPowerUsage(h)


def clock_rate(device: Any = None) -> int:
    """SM clock in MHz (NVML)."""
    nvml, h = _nvml("clock_rate()", device)
    return nvml.nvmlDeviceGetClockInfo(h, 1)


def device_memory_used(device: Any = None) -> int:
    """Bytes used on the device by every process (NVML)."""
    nvml, h = _nvml("device_memory_used()", device)
    return nvml.nvmlDeviceGetMemoryInfo(h).used


_RUNTIME_API = ("PyTorch's bindings of the CUDA runtime library (cudart) and its cuBLAS/cuSOLVER handles are not part "
                "of tinygrad_like, which drives the GPU through PyCUDA: use pycuda.driver")
cudart = with_params(unsupported_function("torch.cuda.cudart", _RUNTIME_API), lambda: None)
current_blas_handle = with_params(unsupported_function("torch.cuda.current_blas_handle", VENDOR), lambda: None)
current_solver_handle = with_params(unsupported_function("torch.cuda.current_solver_handle", VENDOR), lambda: None)
GreenContext = unsupported_class(
    "torch.cuda.GreenContext", "green contexts partition a GPU's SMs between CUDA contexts; tinygrad_like uses the "
    "device's one primary context")
with_params(GreenContext, lambda: None)
