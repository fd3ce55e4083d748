"""The ``cuda-emu`` device: the CUDA backend itself, on a CPU emulator of a CUDA GPU.

``emulator.py`` compiles CUDA C kernels (the project's ``kernel_src/*.cu``, and a learner's own files) as host C++
and runs them with CUDA's execution model: blocks, threads as fibers, ``__syncthreads``, warp shuffles and ballots,
shared memory, atomics, deadlock detection. ``driver.py`` stands in for ``pycuda.driver`` over it. Above the
driver everything is the ``cuda`` device's own code: the runtime, the launch packing, the buffer pool, residency,
fences, event timings (of the emulator: they say nothing of a GPU's speed) and the host-fallback census.

It needs a C++17 compiler at first use and nothing from NVIDIA: ``include/`` holds stand-ins for the CUDA headers
the kernels include (``cuda_fp16.h``, ``mma.h``).
"""

from __future__ import annotations

from .driver import EmuDriver, EmuDriverError, emulated_compile
from .emulator import EmuError, EmuKernel, Emulator, EmuToolchainError, parse_kernels

__all__ = ["EmuDriver", "EmuDriverError", "EmuError", "EmuKernel", "Emulator", "EmuToolchainError",
           "emulated_compile", "emulated_runtime", "parse_kernels"]


def emulated_runtime(device_type: str = "cuda-emu", emulator: Emulator | None = None):
    """A ``CudaRuntime`` whose driver is the emulator; raises EmuToolchainError (saying what to install) when no
    C++ compiler can build its kernels."""
    from ..cuda.runtime import CudaRuntime  # (loads the CUDA backend only when the device is made)

    emulator = emulator if emulator is not None else Emulator()
    emulator.kernel("fill_f32")  # builds (or loads) one file now: a missing compiler is said here, not at an op
    return CudaRuntime(EmuDriver(emulator), compile=emulated_compile, device_type=device_type)
