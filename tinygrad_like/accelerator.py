"""``tl.accelerator`` (PyTorch's device-agnostic accelerator API) and the default device.

The accelerator is CUDA when ``tl.cuda.is_available()``; with no GPU there is none:
``is_available()`` is False and ``current_accelerator()`` is None, as in a CPU-only PyTorch.

``tl.set_default_device``/``tl.get_default_device`` live here too: the device factories use when given no
``device=`` (``with tl.device("cuda"):`` sets it for a block). On a machine without CUDA, a CUDA device is a
RuntimeError saying CUDA is not available (PyTorch accepts the call and fails at the first tensor made; this
fails at the call, naming the reason).

>>> import tinygrad_like as tl
>>> tl.accelerator.is_available() == tl.cuda.is_available()
True
>>> str(tl.get_default_device())
'cpu'
"""

from __future__ import annotations

from . import cuda
from .device import CPU, factory_device, get_device, set_default

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize"]


def _cuda():

    return cuda


def is_available() -> bool:
    return _cuda().is_available()


def current_accelerator(check_available: bool = False):
    """The accelerator's device (``cuda``), or None when there is none."""

    if not _cuda().is_available():
        return None
    return get_device("cuda")


def device_count() -> int:
    return _cuda().device_count()


def current_device_index() -> int:
    return 0 if is_available() else -1


def set_device_index(device) -> None:
    if not is_available():
        raise RuntimeError(f"no accelerator is available: {_cuda().unavailable_reason()}")
    idx = getattr(device, "index", device)
    if idx not in (None, 0):
        raise ValueError(f"device index {idx} out of range: tinygrad_like uses one CUDA device (0)")


def synchronize(device=None) -> None:
    if is_available():
        _cuda().synchronize()


def get_default_device():
    """The device factories use when given none: the CPU unless ``set_default_device`` or ``with device:`` says."""

    return factory_device(None)


def set_default_device(device) -> None:
    """Make factories (``tensor``, ``zeros``, ``randn``, module parameters...) default to ``device``.

    None means the CPU. As in PyTorch, ``from_numpy`` and ``*_like`` are not affected, and an explicit
    ``device=`` wins. A CUDA device on a machine without one is refused here, naming the reason.
    """

    if device is None:
        set_default(CPU)
        return
    spec = device if isinstance(device, str) else str(device)
    if spec.split(":")[0] == "cuda" and not _cuda().is_available():
        raise RuntimeError(f"set_default_device({spec!r}): CUDA is not available ({_cuda().unavailable_reason()}); "
                           f"use 'cpu'")
    set_default(get_device(spec))  # (an unknown device is get_device's error)
