"""What every part of ``tl.cuda`` asks first: is CUDA here, which device index a call means, and the runtime.

Without CUDA, the calls that need a GPU raise :class:`CudaUnavailableError`, which is both an ``AssertionError``
(what a CPU-only PyTorch raises: "Torch not compiled with CUDA enabled") and a ``RuntimeError`` (what a CUDA build
of PyTorch raises on a machine without a GPU), so a program's ``except`` clause for either catches it.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..backends.cuda.probe import CudaStatus, probe


class CudaUnavailableError(AssertionError, RuntimeError):
    """A CUDA call on a machine where CUDA cannot be used (no PyCUDA, no driver or no GPU)."""


def with_params(obj: Any, template: Any) -> Any:
    """Give a clear-error name torch's parameters (``template``'s signature), so that ``inspect.signature`` of it
    reads as torch's."""
    obj.__signature__ = inspect.signature(template)
    return obj


def need_cuda(what: str) -> CudaStatus:
    """The probe's status, or :class:`CudaUnavailableError` saying why ``what`` cannot run here."""
    status = probe()
    if not status.available:
        raise CudaUnavailableError(f"tl.cuda.{what}: CUDA is not available: {status.reason}")
    return status


def runtime(start: bool):
    """The CUDA runtime: started if ``start`` (and CUDA is here), else the running one or None."""
    # (the CUDA machinery loads only when it is used: importing tinygrad_like stays light)
    from ..backends.cuda import runtime as runtime_mod

    return runtime_mod.get_runtime() if start else runtime_mod.runtime_if_started()


def device_index(device: Any, optional: bool = True) -> int:
    """torch's ``_get_device_index``: ``None`` (the current device, 0 here), an int, ``"cuda"``, ``"cuda:1"`` or a
    ``tl.device``; -1 stays -1 ("no device")."""
    if device is None:
        if not optional:
            raise ValueError("Expected a cuda device with a specified index or an integer, but got: None")
        return 0
    if isinstance(device, bool) or not isinstance(device, (int, str)) and not hasattr(device, "type"):
        raise ValueError(f"Expected a cuda device, an int or None, got {device!r} of type {type(device).__name__}")
    if isinstance(device, int):
        return device
    kind, index = (device.split(":") + [None])[:2] if isinstance(device, str) else (device.type, device.index)
    if kind != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return 0 if index is None else int(index)


def checked_index(device: Any, what: str) -> int:
    """The index of a CUDA device that exists here (raises :class:`CudaUnavailableError` or ``ValueError``)."""
    status = need_cuda(what)
    index = device_index(device)
    if not 0 <= index < status.device_count:
        raise ValueError(f"CUDA device index {index} out of range: this machine has {status.device_count} device(s)")
    return index
