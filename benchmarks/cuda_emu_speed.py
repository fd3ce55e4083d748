"""How fast the ``cuda-emu`` device runs a teaching-sized launch, built and cached (the first-use compile is
``cuda_emu_build.py``'s).

Launches, each timed ``--repeats`` times after one warm-up (median, seconds):

* ``elementwise_1m``: tutorial 08's ``squareplus_f32`` over 1,048,576 elements, 4,096 blocks of 256 threads (a million
  threads, one element each);
* ``tiled_matmul_256``: ``matmul_tiled_f32`` (``benchmarks/kernels/emu_speed.cu``), 256 x 256, tiles of 16 in shared
  memory: 256 blocks of 256 threads, 32 barriers each;
* ``block_reduction_1m``: ``block_sum_f32``, 1,048,576 elements, 4,096 blocks of 256 threads, 9 barriers each;
* ``tutorial08_*``: the kernels of tutorial 08 at the sizes it launches them (squareplus over 16,384 elements in 8
  blocks; the chunked squareplus; the three 256 x 256 transposes).

Each in three modes: ``plain`` (the emulator's unchecked build, as our own kernels run: ``EmuKernel.launch`` on NumPy
buffers), ``checked`` (``tl.cuda.Kernel`` on ``cuda-emu`` tensors: a learner's kernel, every access bounds- and
race-checked) and ``traced`` (inside ``tl.cuda.trace()``, as the ``LaunchView`` needs). The peer, in the same run, is
NumPy doing the same computation (``numpy`` column): the emulator runs every thread, NumPy one vectorised call.
The emulator runs the blocks one after the other on one core; ``threads`` is the launch's thread count.

    python benchmarks/cuda_emu_speed.py [--repeats 5] [--out results.json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _env import git_state, machine_info, report  # noqa: E402

import tinygrad_like as tl  # noqa: E402
from tinygrad_like.backends.cuda_emu import Emulator  # noqa: E402

HERE = Path(__file__).resolve().parent
SPEED_CU = HERE / "kernels" / "emu_speed.cu"
SQUAREPLUS_CU = ROOT / "notebooks" / "kernels" / "squareplus.cu"
PATTERNS_CU = ROOT / "notebooks" / "kernels" / "memory_patterns.cu"


def _median(fn, repeats: int) -> float:
    fn()  # warm-up (and the first build, if any)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 4)


def _p(a: np.ndarray) -> int:
    return a.ctypes.data


def cases():
    """(name, source, kernel, grid, block, [numpy arrays], packed scalars after the pointers, numpy peer)."""
    rng = np.random.default_rng(0)
    n1m = 1 << 20
    x1m = rng.standard_normal(n1m).astype(np.float32)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    x16k = x1m[:1 << 14].copy()
    yield ("elementwise_1m", SQUAREPLUS_CU, "squareplus_f32", (4096,), (256,), [np.empty_like(x1m), x1m],
           [("f", 4.0), ("q", n1m)], lambda: 0.5 * (x1m + np.sqrt(x1m * x1m + 4.0)))
    yield ("tiled_matmul_256", SPEED_CU, "matmul_tiled_f32", (16, 16), (16, 16), [np.empty_like(a), a, b],
           [("i", 256)], lambda: a @ b)
    yield ("block_reduction_1m", SPEED_CU, "block_sum_f32", (4096,), (256,), [np.empty(4096, np.float32), x1m],
           [("q", n1m)], lambda: x1m.reshape(4096, 256).sum(1))
    yield ("tutorial08_squareplus_16k", SQUAREPLUS_CU, "squareplus_f32", (8,), (256,), [np.empty_like(x16k), x16k],
           [("f", 4.0), ("q", 1 << 14)], lambda: 0.5 * (x16k + np.sqrt(x16k * x16k + 4.0)))
    yield ("tutorial08_chunked_16k", PATTERNS_CU, "squareplus_chunked_f32", (8,), (256,),
           [np.empty_like(x16k), x16k], [("f", 4.0), ("q", 1 << 14)],
           lambda: 0.5 * (x16k + np.sqrt(x16k * x16k + 4.0)))
    for name in ("naive", "tiled", "padded"):
        yield (f"tutorial08_transpose_{name}_256", PATTERNS_CU, f"transpose_{name}_f32", (8, 8), (32, 8),
               [np.empty_like(a), a], [("i", 256)], lambda: np.ascontiguousarray(a.T))


def _pack(ptrs: list[int], scalars: list[tuple[str, object]]) -> bytes:
    """CUDA's packing: each parameter at the next multiple of its own size."""
    buf = b"".join(struct.pack("<Q", p) for p in ptrs)
    for code, value in scalars:
        size = struct.calcsize(code)
        buf += b"\0" * (-len(buf) % size) + struct.pack("<" + code, value)
    return buf


def measure(case, plain: dict, repeats: int) -> tuple[str, dict]:
    """One case in the three modes and NumPy; the results checked against NumPy's."""
    name, src, kname, grid, block, arrays, scalars, peer = case
    em = plain.setdefault(src, Emulator(kernel_dir=src.parent))
    k = em.kernel(kname)
    buf = _pack([_p(x) for x in arrays], scalars)
    row = {"plain": _median(lambda: k.launch(grid, block, buf), repeats)}
    want = peer()
    np.testing.assert_allclose(arrays[0].reshape(want.shape), want, rtol=1e-3, atol=1e-3)
    tensors = [tl.tensor(x).to("cuda-emu") for x in arrays]
    kern = tl.cuda.Kernel(src, kname)
    values = [v for _, v in scalars]
    row["checked"] = _median(lambda: kern(grid, block, *tensors, *values), repeats)

    def traced():
        with tl.cuda.trace():
            kern(grid, block, *tensors, *values)
    row["traced"] = _median(traced, repeats)
    np.testing.assert_allclose(tensors[0].numpy().reshape(want.shape), want, rtol=1e-3, atol=1e-3)
    row["numpy"] = _median(peer, repeats)
    row["threads"] = int(np.prod(grid)) * int(np.prod(block))
    return name, row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    res = {"benchmark": "cuda_emu_speed", "machine": machine_info(),
           "git": git_state("tinygrad_like", "kernel_src", "benchmarks"), "cores": os.cpu_count(),
           "seconds": {}}
    plain: dict[Path, Emulator] = {}
    for case in cases():
        name, row = measure(case, plain, args.repeats)
        res["seconds"][name] = row
        print(name, row, file=sys.stderr)
    report(res, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
