"""A stand-in for ``pycuda.driver`` whose GPU is the CPU emulator (``emulator.py``): the ``cuda-emu`` device's driver.

Device memory is host memory (so a device address is a host address the emulated kernels can read),
copies are ``memmove``, and ``Function._launch_kernel`` hands the very argument buffer PyCUDA would
give ``cuLaunchKernel`` to the emulator, which unpacks it with the C++ compiler's view of each
kernel's parameter types and runs the real ``kernel_src`` kernel over the grid. Everything above the
driver (runtime, pool, launch packing, backend, Storage residency, Tensor ops) is the production code.

What this cannot show: anything specific to a GPU (warp scheduling, memory coalescing, the device math
library, race conditions between blocks, speed). Those need a GPU.
"""

from __future__ import annotations

import ctypes
import time
from pathlib import Path

import numpy as np

from ..cuda.compiler import CompiledModule


class EmuDriverError(Exception):
    pass


class EmuAlloc:
    """Host memory standing for one device allocation (256-byte aligned, like cudaMalloc's)."""

    def __init__(self, nbytes: int):
        self._mem = np.empty(nbytes + 256, np.uint8)
        base = self._mem.ctypes.data
        self.address = base + (-base % 256)
        self.nbytes = nbytes
        self.freed = False

    def __int__(self) -> int:
        return self.address

    def free(self) -> None:
        self.freed = True
        self._mem = None


class EmuEvent:
    def __init__(self, flags=0):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()
        return self

    def query(self) -> bool:
        return self.t is not None

    def synchronize(self):
        return self

    def time_since(self, start) -> float:
        return (self.t - start.t) * 1000.0


class EmuDriver:
    """Enough of ``pycuda.driver`` for ``probe()`` and ``CudaRuntime``; counts what it is asked to do."""

    Error = EmuDriverError
    MemoryError = EmuDriverError
    Event = EmuEvent
    NAME = "CPU emulator of a CUDA device"
    EMULATED = True  # (the backend then times no kernel variants: the emulator's speed says nothing of a GPU's)

    def __init__(self, emulator, sm_count: int = 2, memory_limit: int = 1 << 31):
        self.emulator = emulator
        self.sm_count = sm_count
        self.memory_limit = memory_limit
        self.allocated = 0
        self.allocs = 0
        self.launches = 0
        self.htod = 0
        self.dtoh = 0
        driver = self

        class Device:
            @staticmethod
            def count():
                return 1

            def __init__(self, i):
                self.i = i

            def name(self):
                return driver.NAME

            def compute_capability(self):
                return (9, 0)

            def total_memory(self):
                return driver.memory_limit

            def get_attribute(self, attr):
                return {"MULTIPROCESSOR_COUNT": driver.sm_count}[attr]

        class Context:
            @staticmethod
            def synchronize():
                return None

        self.Device, self.Context = Device, Context
        self.device_attribute = type("device_attribute", (), {"MULTIPROCESSOR_COUNT": "MULTIPROCESSOR_COUNT"})

    def init(self):
        return None

    def get_driver_version(self):
        return 13000

    def mem_alloc(self, nbytes: int) -> EmuAlloc:
        if self.allocated + nbytes > self.memory_limit:
            raise EmuDriverError(f"cuMemAlloc failed: out of memory ({nbytes} bytes requested)")
        self.allocs += 1
        self.allocated += nbytes
        alloc = EmuAlloc(nbytes)
        real_free = alloc.free

        def free():
            self.allocated -= nbytes
            real_free()
        alloc.free = free
        return alloc

    def memcpy_htod(self, dst: int, src) -> None:
        src = np.ascontiguousarray(src)
        self.htod += 1
        ctypes.memmove(int(dst), src.ctypes.data, src.nbytes)

    def memcpy_dtoh(self, dst, src: int) -> None:
        self.dtoh += 1
        ctypes.memmove(dst.ctypes.data, int(src), dst.nbytes)

    def module_from_buffer(self, cubin):
        """``cubin`` is what :func:`emulated_compile` made: empty for a file of ``kernel_src`` (run by this
        driver's emulator), else the path of a user's ``.cu`` file, whose folder is built as it is now (so an
        edited file is a new module, as a new cubin would be on a GPU)."""
        emulator = self.emulator if not cubin else type(self.emulator)(kernel_dir=Path(cubin.decode()).parent)
        driver = self

        class Function:
            def __init__(self, name):
                self.kernel = emulator.kernel(name)

            def _launch_kernel(self, grid, block, arg_buf, shared, stream):
                driver.launches += 1
                grid = tuple(grid) + (1,) * (3 - len(grid))
                block = tuple(block) + (1,) * (3 - len(block))
                self.kernel.launch(grid, block, bytes(arg_buf), shared)

        class Module:
            @staticmethod
            def get_function(name):
                return Function(name)

        return Module()


def emulated_compile(source, arch):
    """Stands in for ``compile_kernel_file`` under the emulator, which runs ``.cu`` sources, not cubins: the
    "cubin" of a user's file is its path (empty for a file of ``kernel_src``)."""
    path = str(source).encode() if Path(str(source)).is_absolute() else b""
    return CompiledModule(str(source), arch, path, "emulated", "miss", 0.0)
