"""Is CUDA usable here, and if not, why: no PyCUDA, no driver, or no device.

The probe imports ``pycuda.driver`` only when asked (``tl.cuda.is_available()`` or ``device="cuda"``),
never at ``import tinygrad_like``, and remembers its answer. Each failure has its own reason string,
which ``tl.cuda.unavailable_reason()`` returns and ``device="cuda"`` errors quote.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CudaStatus:
    available: bool
    reason: str                     # "" when available
    devices: tuple = field(default=())   # (name, (major, minor), total_bytes) per device
    driver_version: int | None = None

    @property
    def device_count(self) -> int:
        return len(self.devices)


_status: CudaStatus | None = None


def probe(driver=None, *, refresh: bool = False) -> CudaStatus:
    """Probe once (``refresh`` to ask again). ``driver`` stands in for ``pycuda.driver`` in tests."""
    global _status
    if _status is not None and not refresh and driver is None:
        return _status
    status = _probe(driver)
    if driver is None:
        _status = status
    return status


def _probe(drv) -> CudaStatus:
    if drv is None:
        try:
            drv = importlib.import_module("pycuda.driver")
        except ModuleNotFoundError as e:
            if e.name in ("pycuda", "pycuda.driver"):
                return CudaStatus(False, "PyCUDA is not installed: pip install 'tinygrad_like[cuda]' (it needs the "
                                         "CUDA toolkit to build and an NVIDIA driver to run)")
            return CudaStatus(False, f"PyCUDA could not be imported: {e}")
        except (ImportError, OSError) as e:  # libcuda.so.1 missing: PyCUDA is there, the driver is not
            return CudaStatus(False, f"no NVIDIA driver: importing pycuda.driver failed ({e})")
    error = getattr(drv, "Error", RuntimeError)
    try:
        drv.init()
        count = drv.Device.count()
        if count == 0:
            return CudaStatus(False, "the NVIDIA driver reports 0 CUDA devices")
        devices = []
        for i in range(count):
            d = drv.Device(i)
            devices.append((d.name(), d.compute_capability(), d.total_memory()))
        version = drv.get_driver_version() if hasattr(drv, "get_driver_version") else None
    except error as e:  # e.g. "cuInit failed: no CUDA-capable device is detected"
        return CudaStatus(False, f"the NVIDIA driver found no usable GPU: {e}")
    return CudaStatus(True, "", tuple(devices), version)


def arch_of(compute_capability: tuple[int, int]) -> str:
    """(9, 0) -> "sm_90": the arch nvcc must target for that device (never nvcc's default)."""
    major, minor = compute_capability
    return f"sm_{major}{minor}"
