"""Build the CPU harnesses of ``tests/cuda_host/`` with nvcc, for ``tests/test_kernels_host_*.py``.

A harness includes a kernel family's ``.cuh`` and runs the kernels' ``__host__ __device__`` bodies over an
emulated grid on the CPU. It is an executable (file I/O through ``cuda_host/harness_io.h``) or, with
``shared=True``, a library for ctypes.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNEL_DIR = ROOT / "kernel_src"
HARNESS_DIR = ROOT / "tests" / "cuda_host"
NVCC = shutil.which("nvcc")


def build_harnesses(tmp_path_factory, *names: str, shared: bool = False) -> list[Path]:
    """Compile ``cuda_host/<name>.cu`` for each name (in parallel) into a temporary folder; skips the caller
    when nvcc is missing, fails with nvcc's output when a build fails."""
    if NVCC is None:
        pytest.skip("nvcc not found: install the CUDA toolkit (nvcc on PATH) to build the host harness")
    folder = tmp_path_factory.mktemp(names[0])
    builds = []
    for name in names:
        out = folder / (f"{name}.so" if shared else name)
        # -ffp-contract=off: no fused multiply-add the source does not write, whatever -march the host compiler
        # gets (NVCC_APPEND_FLAGS, an FMA baseline), so the tests that hold a kernel to NumPy bit for bit (Adam,
        # float16 arithmetic) compare the same separately rounded operations on any machine
        cmd = [NVCC, "-std=c++17", "-O2", "-x", "cu", "-I", str(KERNEL_DIR), "-Xcompiler", "-ffp-contract=off",
               *(("-shared", "-Xcompiler", "-fPIC") if shared else ()), "-o", str(out), str(HARNESS_DIR / f"{name}.cu")]
        builds.append((out, cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    for _, cmd, proc in builds:
        log, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{' '.join(cmd)}\n{log}"
    return [out for out, _, _ in builds]
