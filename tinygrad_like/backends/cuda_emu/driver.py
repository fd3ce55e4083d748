"""A stand-in for ``pycuda.driver`` whose GPU is the CPU emulator (``emulator.py``): the ``cuda-emu`` device's driver.

Device memory is host memory (so a device address is a host address the emulated kernels can read),
copies are ``memmove``, and ``Function._launch_kernel`` hands the very argument buffer PyCUDA would
give ``cuLaunchKernel`` to the emulator, which unpacks it with the C++ compiler's view of each
kernel's parameter types and runs the real ``kernel_src`` kernel over the grid. Everything above the
driver (runtime, pool, launch packing, backend, Storage residency, Tensor ops) is the production code.

A learner's own kernel (a ``.cu`` file outside ``kernel_src``) runs in the emulator's checked build: every
load and store is checked against the launch's buffers (an out-of-bounds access stops the launch with the
parameter and element it missed) and every shared-memory byte against races between the threads of a block
(``checks.py``). Inside ``tl.cuda.trace()`` every launch, ours too, runs checked and is recorded
(``trace.py``).

What this cannot show: anything specific to a GPU (warp scheduling, the device math library, races between
blocks or in global memory, speed). Those need a GPU; coalescing and bank conflicts are modelled in a trace.
"""

from __future__ import annotations

import bisect
import ctypes
import time
import warnings
from pathlib import Path

import numpy as np

from ..cuda.compiler import CompiledModule
from .checks import (
    KernelDeadlockError,
    LaunchBuffer,
    OutOfBoundsError,
    SharedMemoryRaceError,
    SourceLines,
    deadlock_message,
    out_of_bounds_message,
    race_message,
)
from .emulator import CheckBuffer, CheckRequest, EmuError
from .trace import NO_WRITER, active_recorder, build_trace

# ctype of a pointer parameter -> (dtype name, itemsize) of what it points at
_POINTEES = {"float": ("float32", 4), "__half": ("float16", 2), "half": ("float16", 2), "double": ("float64", 8),
             "int": ("int32", 4), "int32_t": ("int32", 4), "unsigned": ("uint32", 4), "unsigned int": ("uint32", 4),
             "uint32_t": ("uint32", 4), "long long": ("int64", 8), "int64_t": ("int64", 8), "bool": ("bool", 1),
             "unsigned char": ("uint8", 1), "uint8_t": ("uint8", 1), "__nv_bfloat16": ("bfloat16", 2)}


class EmuDriverError(Exception):
    pass


class EmuAlloc:
    """Host memory standing for one device allocation (256-byte aligned, like cudaMalloc's), with ``PAD`` bytes
    of its own on each side: a checked kernel that strays a little past a buffer lands in memory of this
    allocation (so the check can name the buffer), never in memory of the Python process."""

    PAD = 4096

    def __init__(self, nbytes: int):
        self._mem = np.empty(nbytes + 256 + 2 * self.PAD, np.uint8)  # (untouched pages cost no memory)
        self.lo = self._mem.ctypes.data
        base = self.lo + self.PAD
        self.address = base + (-base % 256)
        self.hi = self.lo + self._mem.nbytes
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
        self._live: list[EmuAlloc] = []  # live allocations, by address (what a check knows)
        self._live_at: list[int] = []    # their addresses
        self._checked_ours = None  # kernel_src's checked build (for traced launches), made when first needed
        # bytes the runtime's pool was asked for at a block's address (set by CudaRuntime), for a trace's extents
        self.requested_bytes = lambda address: None
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
        i = bisect.bisect_left(self._live_at, alloc.address)
        self._live_at.insert(i, alloc.address)
        self._live.insert(i, alloc)

        def free():
            self.allocated -= nbytes
            i = bisect.bisect_left(self._live_at, alloc.address)
            if i < len(self._live) and self._live[i] is alloc:
                del self._live[i], self._live_at[i]
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
        user = bool(cubin)  # a learner's file: always the checked build
        emulator = self.emulator if not user else type(self.emulator)(kernel_dir=Path(cubin.decode()).parent,
                                                                       cache_dir=self.emulator.cache_dir,
                                                                       checked=True)
        driver = self

        class Function:
            def __init__(self, name):
                self.name = name
                self.kernel = emulator.kernel(name)

            def _launch_kernel(self, grid, block, arg_buf, shared, stream):
                self.launch_described(grid, block, arg_buf, shared, stream)

            def launch_described(self, grid, block, arg_buf, shared, stream, sig=None, args=(), tensors=None):
                """The launch, checked (a learner's kernel, or any inside ``tl.cuda.trace()``) when ``sig`` names
                its pointer parameters (``args``: the packed values; ``tensors``: the Tensor of each pointer
                parameter, when known, for exact extents)."""
                driver.launches += 1
                grid = tuple(grid) + (1,) * (3 - len(grid))
                block = tuple(block) + (1,) * (3 - len(block))
                recorder = active_recorder()
                if recorder is not None and not recorder.wants_more:
                    recorder.skipped += 1
                    recorder = None
                if sig is None or not (user or recorder is not None):
                    self.kernel.launch(grid, block, bytes(arg_buf), shared)
                    return
                kernel = self.kernel if user else driver.checked_ours().kernel(self.name)
                driver.launch_checked(kernel, sig, grid, block, bytes(arg_buf), shared, args, tensors, recorder,
                                      strict=user)

        class Module:
            @staticmethod
            def get_function(name):
                return Function(name)

        return Module()


    # ---- checked launches
    def checked_ours(self):
        """The checked build of the kernels of ``kernel_src`` (compiled on first use, then cached on disk)."""
        if self._checked_ours is None:
            self._checked_ours = type(self.emulator)(kernel_dir=self.emulator.kernel_dir,
                                                     cache_dir=self.emulator.cache_dir, checked=True)
        return self._checked_ours

    def allocation_of(self, address: int) -> EmuAlloc | None:
        i = bisect.bisect_right(self._live_at, address) - 1
        if i >= 0 and self._live[i].address <= address < self._live[i].address + self._live[i].nbytes:
            return self._live[i]
        return None

    def launch_buffers(self, sig, args, tensors) -> list[LaunchBuffer]:
        """The pointer arguments of a launch, named by the kernel's parameters: a tensor's exact bytes when the
        caller passed the tensors, else from the pointer to the end of its allocation."""
        out, i = [], 0
        tensors = dict(tensors or {})
        for p in sig.params:
            n = len(p.code) if p.code else 1
            value = args[i] if n == 1 and i < len(args) else None
            i += n
            if not p.is_pointer or not isinstance(value, int) or value == 0:
                continue
            dtype, itemsize = _POINTEES.get(p.ctype[:-1].strip(), ("uint8", 1))
            t = tensors.get(p.name)
            if t is not None:
                out.append(LaunchBuffer(p.name, value, t.nbytes, t.dtype.name, t.element_size(), tuple(t.shape),
                                        p.const))
                continue
            alloc = self.allocation_of(value)
            # (to the end of the bytes the pool block was asked for, not of the block: its size class is larger)
            asked = self.requested_bytes(alloc.address) if alloc is not None else None
            nbytes = (alloc.address + (asked if asked is not None else alloc.nbytes) - value) if alloc else 0
            out.append(LaunchBuffer(p.name, value, max(nbytes, 0) // itemsize * itemsize, dtype, itemsize, (), p.const))
        return out

    def launch_checked(self, kernel, sig, grid, block, buf, shared, args, tensors, recorder,
                       strict: bool = False) -> None:
        """A checked launch (``strict``: a learner's kernel, which may touch nothing but its own buffers); an
        out-of-bounds access, a deadlock or (outside a trace) a shared-memory race raises in the learner's words."""
        buffers = self.launch_buffers(sig, args, tensors)
        writers = {b.name: np.full(max(b.numel, 1), NO_WRITER, np.uint32) for b in buffers if not b.const} \
            if recorder is not None else {}
        checks = [CheckBuffer(b.lo, b.nbytes, True, b.itemsize, writers.get(b.name)) for b in buffers]
        checks += [CheckBuffer(a.lo, a.hi - a.lo, False) for a in self._live]
        traced = recorder.block_linear(grid) if recorder is not None else 0
        request = CheckRequest(checks, trace=recorder is not None, block=traced, strict=strict)
        start = time.perf_counter()
        try:
            result = kernel.launch(grid, block, buf, shared, check=request)
        except EmuError as e:
            check = getattr(e, "check", None)
            if check is not None and check.fault is not None:
                lines = SourceLines(kernel.library, check.lib_base)
                raise OutOfBoundsError(out_of_bounds_message(kernel.name, check.fault, buffers, grid, block, lines,
                                                             shared)) from None
            if check is not None and ": deadlock in block" in str(e):
                lines = SourceLines(kernel.library, check.lib_base)
                raise KernelDeadlockError(deadlock_message(str(e), lines)) from None
            raise
        seconds = time.perf_counter() - start
        race = None
        if result.races:
            race = race_message(kernel.name, result.race, result.races, result.shared_vars, grid, block,
                                SourceLines(kernel.library, result.lib_base))
        if recorder is not None:
            recorder.launches.append(build_trace(kernel.name, sig.source, grid, block, shared, buffers, writers,
                                                 traced, result, kernel.library, race, seconds))
        if race is not None and recorder is None:
            raise SharedMemoryRaceError(race)
        if race is not None:  # (inside a trace the learner wants to see it: the trace holds it, and a warning says it)
            warnings.warn(race, RuntimeWarning, stacklevel=2)


def emulated_compile(source, arch):
    """Stands in for ``compile_kernel_file`` under the emulator, which runs ``.cu`` sources, not cubins: the
    "cubin" of a user's file is its path (empty for a file of ``kernel_src``)."""
    path = str(source).encode() if Path(str(source)).is_absolute() else b""
    return CompiledModule(str(source), arch, path, "emulated", "miss", 0.0)
