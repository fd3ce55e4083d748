"""Devices and the backend each one runs on.

``Device.backend`` is the object whose primitives the ops call. While someone listens to
``events``, it is swapped for a :class:`TimedBackend` that times every primitive and emits
``KernelTimed``; with no listener the ops call the plain backend and pay nothing for timing.
"""

from __future__ import annotations

import numpy as np

from . import events
from .backends import cpu_kernels
from .backends.numpy_backend import NumpyBackend
from .backends.protocol import PRIMITIVES, UNTIMED
from .sites import launch_context


class TimedBackend:
    """Wraps a backend: each primitive call becomes a ``KernelTimed`` event (name, shapes, time). Which names are
    primitives, and which of them only move memory (untimed), is ``backends.protocol``'s table."""

    def __init__(self, inner, device_name: str):
        self._inner = inner
        self._device = device_name

    def __getattr__(self, name):
        fn = getattr(self._inner, name)
        if name not in PRIMITIVES or name in UNTIMED or not callable(fn):  # (memory ops, attributes, helpers)
            if callable(fn):
                self.__dict__[name] = fn  # (a method is looked up once; a plain attribute every time, it may change)
            return fn
        inner_dev = self._device
        now, record, ndarray = events.now, events.KernelTimed, np.ndarray
        compiled = cpu_kernels.LAUNCHED

        def timed(*args, **kwargs):
            # (this runs for every primitive while a view listens, so it is written for speed: one pass over the
            # arguments with the common case, a NumPy array, first)
            compiled[0] = None
            t0 = now()
            out = fn(*args, **kwargs)
            dt = now() - t0
            kname, kdev = name, inner_dev
            if compiled[0] is not None:  # it ran one of our compiled CPU kernels: shown under the kernel's name
                kname, kdev = compiled[0], inner_dev + ", compiled"
            if events.ACTIVE:
                shapes = []
                nbytes = out.nbytes if type(out) is ndarray else getattr(out, "nbytes", 0)
                for a in args:
                    if type(a) is ndarray:
                        shapes.append(a.shape)
                        nbytes += a.nbytes
                    elif hasattr(a, "shape"):
                        shapes.append(a.shape)
                        nbytes += getattr(a, "nbytes", 0)
                events.emit(record(kname, kdev, t0, dt, tuple(shapes), int(nbytes), None, None, *launch_context()))
            return out

        timed.__name__ = name
        self.__dict__[name] = timed  # cache: __getattr__ runs once per primitive name
        return timed


class _UploadFirst:
    """``Device.backend`` while host writes wait in ``Device.pending``: the first primitive looked up
    (any op, view or write on that device) uploads them, puts the real backend back and is served by it.
    So "uploaded at the device's next use" holds for every op, not only those that check ``pending``."""

    __slots__ = ("_dev",)

    def __init__(self, dev: Device):
        self._dev = dev

    def __getattr__(self, name):
        dev = self._dev
        dev.flush()
        return getattr(dev.backend, name)


class Device:
    """``cpu`` or an accelerator such as ``cuda:0``; compares equal to its string form."""

    __slots__ = ("type", "index", "raw_backend", "backend", "pending", "is_host", "_timed")

    def __init__(self, type_: str, index: int | None, backend):
        self.type = type_
        self.index = index
        self.raw_backend = backend
        self.backend = backend
        self.pending: set = set()  # storages whose host copy is newer: uploaded at the next op
        self.is_host = bool(getattr(backend, "is_host", False))
        self._timed = None
        events.on_activation(self._set_timed)

    def __reduce__(self):
        # one Device object per device: a deep copy or an unpickled tensor finds the same one (a second "cpu"
        # would make every op with the copy fail with "expected ... same device, found cpu and cpu")
        return get_device, (str(self),)

    def __copy__(self) -> Device:
        return self

    def __deepcopy__(self, memo) -> Device:
        return self

    def _set_timed(self, active: bool) -> None:
        # a backend that reports its own kernel times (CUDA events) is never wrapped: no double reports
        wrap = active and not getattr(self.raw_backend, "times_itself", False)
        self._timed = TimedBackend(self.raw_backend, str(self)) if wrap else None
        if not self.pending:  # else flush() puts the right one back
            self.backend = self._timed or self.raw_backend

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        return f"device(type='{self.type}'" + ("" if self.index is None else f", index={self.index}") + ")"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = get_device(other)
            except (RuntimeError, ValueError):
                return False
        return self is other

    def __hash__(self) -> int:
        return hash(str(self))

    def __enter__(self) -> Device:
        """``with tl.device("cuda"):`` makes factories inside the block default to this device, as in PyTorch."""
        _default_stack.append(_default[0])
        _default[0] = self
        return self

    def __exit__(self, *exc) -> None:
        _default[0] = _default_stack.pop()

    def mark_pending(self, storage) -> None:
        """``storage``'s host copy was written: upload it before this device's next primitive."""
        self.pending.add(storage)
        if type(self.backend) is not _UploadFirst:
            self.backend = _UploadFirst(self)

    def flush(self) -> None:
        """Upload every storage whose host copy was written since the last device op."""
        self.backend = self._timed or self.raw_backend
        for s in list(self.pending):
            s.device_buffer()
        self.pending.clear()


CPU = Device("cpu", None, NumpyBackend())
_devices: dict[str, Device] = {"cpu": CPU}
_default: list[Device] = [CPU]  # where factories put tensors given no device= (set_default_device)
_default_stack: list[Device] = []  # the defaults outside each open ``with device:`` block


def factory_device(spec) -> Device:
    """The device a factory (``tensor``, ``zeros``, ``arange``...) uses: ``spec``, else the default device."""
    return _default[0] if spec is None else get_device(spec)


def set_default(dev: Device) -> None:
    _default[0] = dev


def _cuda_device(spec: str) -> Device:
    """Start the CUDA backend on first use of ``cuda``/``cuda:0``; raise with the probe's reason where it cannot."""
    from .backends.cuda.probe import probe  # imports nothing from PyCUDA until probe() runs

    status = probe()
    if not status.available:
        raise RuntimeError(f"device '{spec}' is not available: {status.reason}")
    index = int(spec.split(":")[1]) if ":" in spec else 0
    if index != 0:
        raise RuntimeError(f"device '{spec}' is not available: this build drives one GPU, cuda:0 "
                           f"({status.device_count} present)")
    # (a device's backend loads only when that device is first asked for: PyCUDA and the kernels stay unloaded)
    from .backends.cuda.backend import CudaBackend  # noqa: I001 - (the comment above covers both)
    from .backends.cuda.runtime import get_runtime  # (as the line above)

    return register_device("cuda", CudaBackend(get_runtime()), 0)


def _cuda_emu_device(spec: str) -> Device:
    """The emulated CUDA device (``backends/cuda_emu``): the CUDA backend and its kernels, run on the CPU with CUDA's
    execution model. Needs a C++ compiler at first use; without one, the error says what to install."""
    if spec not in ("cuda-emu", "cuda-emu:0"):
        raise RuntimeError(f"device '{spec}' is not available: there is one emulated CUDA device, cuda-emu:0")
    from .backends.cuda.backend import CudaBackend  # (the backend and the emulator load only when first asked for)
    from .backends.cuda_emu import EmuToolchainError, emulated_runtime  # (as the line above)

    try:
        runtime = emulated_runtime()
    except EmuToolchainError as e:
        raise RuntimeError(f"device 'cuda-emu' is not available: {e}") from None
    return register_device("cuda-emu", CudaBackend(runtime), 0)


def _sim_device(spec: str) -> Device:
    """The simulated device (``backends/sim.py``): device memory and transfers of its own, NumPy compute."""
    if spec not in ("sim", "sim:0"):
        raise RuntimeError(f"device '{spec}' is not available: there is one simulated device, sim:0")
    from .backends.sim import SimBackend  # (a device's backend loads only when that device is first asked for)

    return register_device("sim", SimBackend(), 0)


class _MetaDeviceError(RuntimeError, AttributeError):
    """Asking the meta device for a primitive (an AttributeError too, so ``getattr(backend, x, default)`` works)."""


class _MetaBackend:
    """torch's ``meta`` device holds shapes without data; tinygrad_like has no such tensors. The device itself
    exists, so that programs and libraries can name it (``t.device != torch.device("meta")``); computing on it
    raises."""

    def __getattr__(self, name: str):
        raise _MetaDeviceError(f"the 'meta' device holds no data, and tinygrad_like cannot make tensors on it "
                               f"(asked for {name!r}); use 'cpu'")


_META: list[Device] = []


def _meta_device(spec: str) -> Device:
    if spec != "meta":
        raise RuntimeError(f"device '{spec}' is not available: there is one meta device, 'meta'")
    if not _META:  # (one object, not registered among the devices that hold tensors)
        _META.append(Device("meta", None, _MetaBackend()))
    return _META[0]


# device kinds started on first use (their imports and driver calls happen only then)
_lazy = {"cuda": _cuda_device, "cuda-emu": _cuda_emu_device, "sim": _sim_device, "meta": _meta_device}


def register_device(type_: str, backend, index: int = 0) -> Device:
    """Make ``type_:index`` available (used by the CUDA backend and by tests' second memory space)."""
    dev = Device(type_, index, backend)
    _devices[f"{type_}:{index}"] = dev
    _devices.setdefault(type_, dev)
    return dev


def unregister_device(type_: str) -> None:
    for k in [k for k in _devices if k == type_ or k.startswith(type_ + ":")]:
        dev = _devices.pop(k)
        if dev._set_timed in events._activation_hooks:  # forget the device: no hook keeps it alive
            events._activation_hooks.remove(dev._set_timed)


def get_device(spec) -> Device:
    """Resolve ``"cpu"``, ``"cuda"``, ``"cuda:0"`` or a Device; explain why one is unavailable."""
    if spec is None:
        return CPU
    if isinstance(spec, Device):
        return spec
    if not isinstance(spec, str):
        spec = getattr(spec, "type", None) and str(spec)
        if not isinstance(spec, str):
            raise TypeError(f"expected a device such as 'cpu' or 'cuda', got {spec!r}")
    dev = _devices.get(spec)
    if dev is not None:
        return dev
    kind = spec.split(":")[0]
    if kind in _lazy:
        return _lazy[kind](spec)
    known = sorted({k.split(':')[0] for k in _devices} | set(_lazy))
    raise RuntimeError(f"unknown device '{spec}': expected one of {', '.join(known)}")
