"""``tl.accelerator`` (PyTorch's device-agnostic accelerator API) and the default device.

The accelerator is CUDA when ``tl.cuda.is_available()``; with no GPU there is none:
``is_available()`` is False and ``current_accelerator()`` is None, as in a CPU-only PyTorch.

``tl.set_default_device``/``tl.get_default_device`` live here too. On a machine without CUDA the default device
is the CPU: ``set_default_device("cpu")`` (or None) is accepted and changes nothing, and a CUDA device is a
RuntimeError saying CUDA is not available (PyTorch accepts the call and fails at the first tensor made; this
fails at the call, naming the reason). Where CUDA is available, factories still make CPU tensors unless
given ``device=``; move a model and its data with ``.to(device)``.

>>> import tinygrad_like as tl
>>> tl.accelerator.is_available() == tl.cuda.is_available()
True
>>> str(tl.get_default_device())
'cpu'
"""

from __future__ import annotations

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize"]


def _cuda():
    from . import cuda

    return cuda


def is_available() -> bool:
    return _cuda().is_available()


def current_accelerator(check_available: bool = False):
    """The accelerator's device (``cuda``), or None when there is none."""
    from .device import get_device

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
    """The device factories use when given none: the CPU."""
    from .device import get_device

    return get_device("cpu")


def set_default_device(device) -> None:
    """Accept PyTorch's ``set_default_device``: the CPU (or None) is the default already; see the module."""
    from .device import get_device

    if device is None:
        return
    spec = device if isinstance(device, str) else str(device)
    kind = spec.split(":")[0]
    if kind == "cpu":
        return
    if kind == "cuda" and not _cuda().is_available():
        raise RuntimeError(f"set_default_device({spec!r}): CUDA is not available ({_cuda().unavailable_reason()}); "
                           f"use 'cpu'")
    get_device(spec)  # (an unknown device is get_device's error)
    raise RuntimeError(f"set_default_device({spec!r}): tinygrad_like's factories always make CPU tensors unless "
                       f"given device=...; create tensors with device={spec!r} or move them with .to({spec!r})")
