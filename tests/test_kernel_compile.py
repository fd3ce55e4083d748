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
DEVICE_HEADERS = {"cuda_fp16.h", "cuda_bf16.h", "mma.h"}  # usable without host headers
NVCC = shutil.which("nvcc")

ENTRY_RE = re.compile(r"Compiling entry function '([^']+)' for '(sm_\d+)'")
REGS_RE = re.compile(r"Used (\d+) registers")
BOUNDS_RE = re.compile(r'extern\s+"C"\s+__global__\s+__launch_bounds__\(\s*([^,)]+)[^)]*\)\s+void\s+(\w+)\s*\(')
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


def launch_bounds(src: Path) -> dict[str, int]:
    """``{kernel: max threads per block}`` from each kernel's ``__launch_bounds__`` (macros from the file and
    its local headers are resolved when they are plain integer ``#define``s or ``constexpr int``s)."""
    text = src.read_text()
    consts = {}
    for part in [text] + [(KERNEL_DIR / h).read_text() for h in re.findall(r'#\s*include\s*"([^"]+)"', text)
                          if (KERNEL_DIR / h).is_file()]:
        consts.update(re.findall(r"#\s*define\s+(\w+)\s+\(?(\d+)\)?\s*$", part, re.M))
        consts.update(re.findall(r"constexpr\s+(?:int|unsigned)\s+(\w+)\s*=\s*(\d+)\s*;", part))

    def value(expr: str) -> int:
        expr = expr.strip()
        for name, v in consts.items():
            expr = re.sub(rf"\b{name}\b", v, expr)
        if not re.fullmatch(r"[\d\s*+()]+", expr):
            raise AssertionError(f"{src.name}: cannot evaluate __launch_bounds__({expr})")
        return int(eval(expr))  # digits, spaces, * + ( ) only

    return {name: value(expr) for expr, name in BOUNDS_RE.findall(text)}


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_includes_are_device_side_only(src):
    for inc in re.findall(r'^\s*#\s*include\s*([<"][^>"]+[>"])', src.read_text(), re.M):
        name = inc[1:-1]
        local = inc.startswith('"') and (KERNEL_DIR / name).is_file() and name.endswith(".cuh")
        assert name in DEVICE_HEADERS or local, f"{src.name} includes {inc}: kernels take no host headers"


@pytest.mark.cuda
@pytest.mark.other_process  # (nvcc's work)
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

    # every kernel states the largest block it may be launched with (__launch_bounds__); ptxas then keeps
    # its registers within what that block needs (spilling instead, which the flags above reject) and
    # refuses static shared memory over 48 KiB, so together they guarantee the stated launch fits an SM.
    # (The launchers, once written, must be checked against these bounds.)
    bounds = launch_bounds(src)
    assert set(bounds) == declared, (f"{src.name}: every kernel needs __launch_bounds__(threads); missing on "
                                     f"{sorted(declared - set(bounds))}")
    bad = {k: t for k, t in bounds.items() if not (0 < t <= 1024 and t % 32 == 0)}
    assert not bad, f"{src.name}: __launch_bounds__ must be a whole number of warps up to 1024: {bad}"
