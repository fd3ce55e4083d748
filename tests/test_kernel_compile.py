"""Every CUDA source in kernel_src/ compiles cleanly with nvcc, with no GPU needed.

Strict flags: any compiler warning, register spill or local-memory use is an error. ``-Xptxas -v``
reports each entry function's registers; each must fit the hardware limit (255). The entry points
must be exactly the ``extern "C" __global__`` functions the file declares (unmangled names), and the
sources may include only device-side CUDA headers or their own ``.cuh`` files.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNEL_DIR = ROOT / "kernel_src"
SOURCES = sorted(KERNEL_DIR.glob("*.cu"))
ARCHS = ("sm_80", "sm_90")  # A100, H100/H200
MAX_REGISTERS = 255
DEVICE_HEADERS = {"cuda_fp16.h", "cuda_bf16.h"}  # usable without host headers
NVCC = shutil.which("nvcc")

ENTRY_RE = re.compile(r"Compiling entry function '([^']+)' for '(sm_\d+)'")
REGS_RE = re.compile(r"Used (\d+) registers")
DECL_RE = re.compile(r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\([^)]*\)\s+)?void\s+(\w+)\s*\(')


def test_there_are_kernel_sources():
    assert SOURCES, f"no .cu files in {KERNEL_DIR}"


def declared_kernels(src: Path) -> set[str]:
    return set(DECL_RE.findall(src.read_text()))


def registers_per_kernel(ptxas_log: str) -> dict[str, int]:
    """``{kernel: registers}`` from ``-Xptxas -v`` output (each entry's 'Used N registers' follows it)."""
    found, current = {}, None
    for line in ptxas_log.splitlines():
        if m := ENTRY_RE.search(line):
            current = m.group(1)
        elif (m := REGS_RE.search(line)) and current is not None:
            found[current] = int(m.group(1))
            current = None
    return found


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_includes_are_device_side_only(src):
    for inc in re.findall(r'^\s*#\s*include\s*([<"][^>"]+[>"])', src.read_text(), re.M):
        name = inc[1:-1]
        local = inc.startswith('"') and (KERNEL_DIR / name).is_file() and name.endswith(".cuh")
        assert name in DEVICE_HEADERS or local, f"{src.name} includes {inc}: kernels take no host headers"


@pytest.mark.cuda
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_compiles_strictly(src, arch, tmp_path):
    if NVCC is None:
        pytest.skip("nvcc not found: install the CUDA toolkit (nvcc on PATH) to compile kernel_src/*.cu")
    cmd = [NVCC, "--cubin", f"-arch={arch}", "-std=c++17", "-Werror", "all-warnings",
           "-Xptxas", "-v,-warn-spills,-warn-lmem-usage,-Werror", "-o", str(tmp_path / "x.cubin"), str(src)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    log = p.stdout + p.stderr
    assert p.returncode == 0, f"{' '.join(cmd)}\nexited {p.returncode}:\n{log}"

    regs = registers_per_kernel(log)
    declared = declared_kernels(src)
    assert declared, f'{src.name} declares no extern "C" __global__ kernel'
    assert set(regs) == declared, (f"entry points {sorted(regs)} != declared extern \"C\" kernels "
                                   f"{sorted(declared)} (a mangled name means a missing extern \"C\")\n{log}")
    too_many = {k: n for k, n in regs.items() if n > MAX_REGISTERS}
    assert not too_many, f"{src.name} on {arch}: registers over {MAX_REGISTERS}: {too_many}\n{log}"
