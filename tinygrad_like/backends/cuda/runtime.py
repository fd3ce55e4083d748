"""The live CUDA state of one process: primary context, buffer pool, loaded modules, launch timing.

Created on first use, only when :func:`probe` says CUDA is available. It uses the device's *primary*
context (``pycuda.autoprimaryctx``), the one the runtime API and so PyTorch and CuPy use, so all
three can share one process and one GPU. Modules are compiled by :mod:`.compiler` for the device's own
arch and loaded with ``module_from_buffer``. ``launch`` looks a kernel up once, packs its arguments by
the signature in its source (``kernels.py``), then launches it with (grid, block) and, only while
someone listens to ``events``, brackets it with timing events.
"""

from __future__ import annotations

import importlib
import threading
import weakref

from ... import events
from .compiler import compile_kernel_file
from .kernels import check_block, signature
from .pool import BufferPool
from .probe import arch_of, probe
from .timing import LaunchTimer


class CudaRuntime:
    """One per process and device (``get_runtime()``; the emulator's: ``backends/cuda_emu``); ``driver`` is
    ``pycuda.driver`` or a stand-in for it, ``compile`` what turns a kernel file into a module for it."""

    def __init__(self, driver, device_index: int = 0, *, compile=None, device_type: str = "cuda"):
        self.drv = driver
        self.device_index = device_index
        self.device_type = device_type  # "cuda", or "cuda-emu" for the emulator's driver
        self._compile = compile  # source, arch -> CompiledModule: None is nvcc's (the emulator's takes the source)
        dev = driver.Device(device_index)
        self.name = dev.name()
        self.arch = arch_of(dev.compute_capability())
        self.sm_count = int(dev.get_attribute(driver.device_attribute.MULTIPROCESSOR_COUNT))
        self.pool = BufferPool(driver.mem_alloc, lambda alloc: alloc.free(),
                               out_of_memory=(getattr(driver, "MemoryError", MemoryError),))
        if hasattr(driver, "requested_bytes"):  # the emulator's driver: a traced launch's buffers end where asked
            driver.requested_bytes = self.pool.live_requested.get
        self.timer = LaunchTimer(driver.Event, f"{device_type}:{device_index}")
        self._modules: dict[tuple[str, str], object] = {}
        self._functions: dict[tuple[str, str, str], object] = {}
        _every_runtime.add(self)

    def function(self, source: str, kernel: str, revision: str = ""):
        """The loaded kernel ``kernel`` from ``kernel_src/<source>`` or the file ``source`` (compiled and loaded
        once per ``revision``: a user's file that changed is compiled and loaded again)."""
        key = (source, revision, kernel)
        fn = self._functions.get(key)
        if fn is None:
            module = self._modules.get((source, revision))
            if module is None:
                compiled = (self._compile or compile_kernel_file)(source, self.arch)
                module = self._modules[(source, revision)] = self.drv.module_from_buffer(compiled.cubin)
            fn = self._functions[key] = module.get_function(kernel)
        return fn

    def launch(self, kernel: str, grid: tuple, block: tuple, args: tuple, *, shared: int = 0, shapes: tuple = (),
               nbytes: int = 0, stream=None) -> None:
        """Launch ``kernel`` (a name from ``kernel_src``) without waiting; ``args`` are its parameters in order,
        pointers as ints and by-value structs as their fields. Timed through CUDA events only while ``events``
        has a listener."""
        sig = signature(kernel)
        self.launch_signature(sig, self.function(sig.source, kernel), grid, block, args, shared=shared,
                              shapes=shapes, nbytes=nbytes, stream=stream)

    def launch_signature(self, sig, fn, grid: tuple, block: tuple, args: tuple, *, shared: int = 0,
                         shapes: tuple = (), nbytes: int = 0, stream=None, tensors=None) -> None:
        """Launch the loaded function ``fn`` whose parameters are ``sig`` (a kernel of ours or one you wrote).
        The emulator's functions are told the signature and ``tensors`` ({pointer parameter: Tensor}), so that
        a checked launch names what a thread did wrong in the kernel's own words."""
        kernel = sig.name
        check_block(sig, block)
        buf = sig.pack(*args)
        described = getattr(fn, "launch_described", None)
        if events.ACTIVE:
            start = self.timer.begin(stream)
        if described is None:
            fn._launch_kernel(grid, block, buf, shared, stream)
        else:
            described(grid, block, buf, shared, stream, sig=sig, args=args, tensors=tensors)
        if events.ACTIVE:
            self.timer.end(start, kernel, grid, block, shapes, nbytes, stream)

    def synchronize(self) -> None:
        """Wait for all queued work, then turn finished launches into ``KernelTimed`` events."""
        self.drv.Context.synchronize()
        self.timer.collect()


_runtime: CudaRuntime | None = None
_runtime_lock = threading.Lock()


def get_runtime() -> CudaRuntime:
    """The process's runtime, created (primary context and all) on first call; raises with the probe's reason.

    The primary context is made current on the calling thread only: drive the GPU from one thread."""
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            status = probe()
            if not status.available:
                raise RuntimeError(f"CUDA is not available: {status.reason}")
            importlib.import_module("pycuda.autoprimaryctx")  # retains and pushes the primary context
            _runtime = CudaRuntime(importlib.import_module("pycuda.driver"))
        return _runtime


_every_runtime: weakref.WeakSet = weakref.WeakSet()  # the GPU's and the emulated devices'


def runtimes_started() -> list[CudaRuntime]:
    """Every runtime made in this process (the GPU's, ``cuda-emu``'s): what a sync point such as the end of a profile
    must wait for."""
    return list(_every_runtime)


def runtime_if_started() -> CudaRuntime | None:
    return _runtime
