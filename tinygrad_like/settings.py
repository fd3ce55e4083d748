"""torch's process-wide settings, with torch's semantics on one CPU process: threads, determinism, matmul
precision, warnings, denormals, the default tensor type, the autocast state functions, and the build flags
(``has_lapack``...). Each setting is read back as it was set; where it changes what tinygrad_like computes, the
docstring says how."""

from __future__ import annotations

import os
import sys
import types
import warnings
from typing import Any

from . import amp, dtypes

__all__ = ["get_num_threads", "set_num_threads", "get_num_interop_threads", "set_num_interop_threads",
           "init_num_threads", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision",
           "set_warn_always", "is_warn_always_enabled", "set_flush_denormal", "set_default_tensor_type",
           "get_autocast_dtype", "set_autocast_dtype", "is_autocast_enabled", "set_autocast_enabled",
           "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
           "get_autocast_gpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
           "autocast_decrement_nesting", "get_autocast_ipu_dtype", "set_autocast_ipu_dtype",
           "is_autocast_ipu_enabled", "set_autocast_ipu_enabled", "get_autocast_xla_dtype", "set_autocast_xla_dtype",
           "is_autocast_xla_enabled", "set_autocast_xla_enabled", "has_lapack", "has_mkl", "has_openmp",
           "has_spectral", "is_vulkan_available", "get_device_module"]


# ---- threads ---------------------------------------------------------------------------------------------------
# tinygrad_like's own code is single-threaded; what runs on several threads is NumPy's BLAS (matmul, conv as
# matmul). torch's intra-op thread count maps onto it: set_num_threads limits BLAS through threadpoolctl (a
# dependency; a missing one is tolerated: the count is then only remembered). The limit is the cap under which the
# BLAS thread policy (backends/blas_threads.py) runs mid-sized products on one thread.
_threads: dict[str, int | None] = {"intra": None, "interop": None}


def _blas_limits():
    try:
        import threadpoolctl  # (a dependency; without it the count is only remembered)
    except ImportError:
        return None
    return threadpoolctl


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism (BLAS's, here)."""
    if _threads["intra"] is not None:
        return _threads["intra"]
    tpc = _blas_limits()
    if tpc is not None:
        counts = [i.get("num_threads", 1) for i in tpc.threadpool_info() if i.get("user_api") == "blas"]
        if counts:
            return int(max(counts))
    return os.cpu_count() or 1


def set_num_threads(nthreads: int) -> None:
    """Set the number of intra-op threads (torch's rule: a positive int)."""
    if isinstance(nthreads, bool) or not isinstance(nthreads, int) or nthreads <= 0:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {nthreads!r}")
    tpc = _blas_limits()
    if tpc is not None:
        tpc.threadpool_limits(limits=nthreads, user_api="blas")
    _threads["intra"] = nthreads


def get_num_interop_threads() -> int:
    """Threads for running independent ops in parallel: tinygrad_like runs ops one after another, so the number
    is what was set (default: the CPU count, torch's default)."""
    return _threads["interop"] or os.cpu_count() or 1


def set_num_interop_threads(nthreads: int) -> None:
    """As torch: once only, with a positive int."""
    if isinstance(nthreads, bool) or not isinstance(nthreads, int) or nthreads <= 0:
        raise RuntimeError(f"set_num_interop_threads expects a positive integer, got {nthreads!r}")
    if _threads["interop"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _threads["interop"] = nthreads


def init_num_threads() -> None:
    """Initialise the thread pools of the calling thread: nothing to do (BLAS's pool is process-wide)."""


# ---- determinism: every op of tinygrad_like is deterministic, so the flags only need to read back ---------------
_det: dict[str, Any] = {"on": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms. Every tinygrad_like op already is (NumPy on the CPU, fixed-order reductions
    in the CUDA kernels), so none needs to raise or warn."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {type(mode).__name__}")
    _det["on"], _det["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _det["on"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _det["on"] and _det["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """0 / 'default', 1 / 'warn' or 2 / 'error', as ``use_deterministic_algorithms``' three settings."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    return 0 if not _det["on"] else 1 if _det["warn_only"] else 2


# ---- float32 matmul precision: NumPy multiplies float32 in float32 ("highest"); the others are accepted ---------
_matmul = {"precision": "highest"}


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium'. torch may use TF32 or bfloat16 passes below 'highest'; tinygrad_like always
    computes float32 matmuls in float32, which is what every setting allows."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision!r}: expected 'highest', 'high' or 'medium'")
    _matmul["precision"] = precision


def get_float32_matmul_precision() -> str:
    return _matmul["precision"]


# ---- warnings ------------------------------------------------------------------------------------------------------
_warn = {"always": False}


def set_warn_always(b: bool, /) -> None:
    """With True, warnings torch gives once per process are given every time (Python's 'always' filter for the
    warnings tinygrad_like raises)."""
    _warn["always"] = bool(b)
    if b:
        warnings.filterwarnings("always", module=r"tinygrad_like(\.|$)", category=UserWarning)


def is_warn_always_enabled() -> bool:
    return _warn["always"]


def set_flush_denormal(mode: bool) -> bool:
    """torch returns whether the CPU's flush-to-zero mode could be set; NumPy offers no way to set it, so the answer
    is False and denormals keep their IEEE values."""
    return False


def set_default_tensor_type(t, /) -> None:
    """The legacy way to set the default dtype: ``set_default_tensor_type(torch.DoubleTensor)`` or
    ``('torch.DoubleTensor')``. Only floating point types, as torch."""
    from .ops.conversion import _parse_type_name  # (the ops sit above this module: only asked here)
    if isinstance(t, str):
        dt, device = _parse_type_name(t)
    elif isinstance(getattr(t, "dtype", None), dtypes.DType) and isinstance(t, type):
        dt, device = t.dtype, "cpu"
    else:
        raise TypeError(f"invalid type: {t!r} (expected a legacy tensor type such as torch.DoubleTensor)")
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if device != "cpu":
        raise TypeError(f"set_default_tensor_type({t!r}): only CPU tensor types are accepted here; use "
                        f"tl.set_default_device('{device}') for the device")
    dtypes.set_default_dtype(dt)


# ---- autocast's state, read and written as ``with torch.autocast(...)`` does (tinygrad_like.amp) -------------------
_autocast = {"cache": True, "nesting": 0}


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    return amp.is_autocast_enabled(device_type)


def set_autocast_enabled(device_type, enabled: bool | None = None) -> None:
    """``set_autocast_enabled('cpu', True)``, or the older ``set_autocast_enabled(True)`` (for CUDA)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    amp._state.enabled[device_type] = bool(enabled)


def get_autocast_dtype(device_type: str):
    return amp.get_autocast_dtype(device_type)


def set_autocast_dtype(device_type: str, dtype) -> None:
    amp._state.dtype[device_type] = dtypes.to_dtype(dtype)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def _device_functions(device: str, prefix: str | None = None):
    prefix = prefix or device

    def is_enabled() -> bool:
        _deprecated(f"is_autocast_{prefix}_enabled", f"is_autocast_enabled('{device}')")
        return is_autocast_enabled(device)

    def set_enabled(enabled: bool) -> None:
        _deprecated(f"set_autocast_{prefix}_enabled", f"set_autocast_enabled('{device}', enabled)")
        set_autocast_enabled(device, enabled)

    def get_dtype():
        _deprecated(f"get_autocast_{prefix}_dtype", f"get_autocast_dtype('{device}')")
        return get_autocast_dtype(device)

    def set_dtype(dtype) -> None:
        _deprecated(f"set_autocast_{prefix}_dtype", f"set_autocast_dtype('{device}', dtype)")
        set_autocast_dtype(device, dtype)

    for f, name in ((is_enabled, f"is_autocast_{prefix}_enabled"), (set_enabled, f"set_autocast_{prefix}_enabled"),
                    (get_dtype, f"get_autocast_{prefix}_dtype"), (set_dtype, f"set_autocast_{prefix}_dtype")):
        f.__name__ = f.__qualname__ = name
    return is_enabled, set_enabled, get_dtype, set_dtype


is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype, set_autocast_cpu_dtype = (
    _device_functions("cpu"))
_, _, get_autocast_gpu_dtype, set_autocast_gpu_dtype = _device_functions("cuda", "gpu")
is_autocast_ipu_enabled, set_autocast_ipu_enabled, get_autocast_ipu_dtype, set_autocast_ipu_dtype = (
    _device_functions("ipu"))
is_autocast_xla_enabled, set_autocast_xla_enabled, get_autocast_xla_dtype, set_autocast_xla_dtype = (
    _device_functions("xla"))


def is_autocast_cache_enabled() -> bool:
    return _autocast["cache"]


def set_autocast_cache_enabled(enabled: bool) -> None:
    _autocast["cache"] = bool(enabled)


def clear_autocast_cache() -> None:
    """Autocast keeps no cast weights here (ops compute in full precision), so there is nothing to clear."""


def autocast_increment_nesting() -> int:
    _autocast["nesting"] += 1
    return _autocast["nesting"]


def autocast_decrement_nesting() -> int:
    _autocast["nesting"] = max(0, _autocast["nesting"] - 1)
    return _autocast["nesting"]


# ---- what this build has: NumPy's LAPACK and FFT; no MKL (NumPy's BLAS is OpenBLAS), no OpenMP, no Vulkan ---------
has_lapack = True
has_spectral = True
has_mkl = False  # (NumPy here links OpenBLAS, not MKL)
has_openmp = False


def is_vulkan_available() -> bool:
    return False


def _cpu_module() -> types.ModuleType:
    m = types.ModuleType("tinygrad_like.cpu", "The CPU's device module (torch.cpu): one device, always available.")
    m.is_available = lambda: True
    m.device_count = lambda: 1
    m.current_device = lambda: "cpu"
    m.synchronize = lambda device=None: None
    return m


_CPU = _cpu_module()


def get_device_module(device=None):
    """The module of a device type: ``tinygrad_like.cuda`` for 'cuda', a small ``cpu`` module for 'cpu' (the
    default device's when ``device`` is None)."""
    from . import accelerator  # (above this module: asked at call time)
    name = str(device if device is not None else accelerator.get_default_device()).split(":")[0]
    if name == "cpu":
        return _CPU
    if name == "cuda":
        return sys.modules["tinygrad_like.cuda"]
    raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
