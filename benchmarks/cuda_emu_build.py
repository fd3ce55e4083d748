"""What the ``cuda-emu`` device costs at first use: compiling the kernel files as C++, and loading them once built.

* ``per_file``: each ``kernel_src/*.cu`` built alone into an empty cache (one compiler process), seconds.
* ``all_parallel``: every file built at once into an empty cache, one compiler process per core (what the first
  ``Emulator.build()`` does), seconds.
* ``warm_load``: the same build again, from the cache (nothing compiled), seconds.
* ``first_op``: a fresh Python process with an empty cache: ``tl.device("cuda-emu")``, a tensor there and ``x * 2``
  read back, seconds (the files its kernels come from are compiled on the way).

    python benchmarks/cuda_emu_build.py [--out results.json]

Prints one JSON document. Needs a C++ compiler (nothing from NVIDIA).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _env import git_state, machine_info, report  # noqa: E402

from tinygrad_like.backends.cuda_emu import Emulator  # noqa: E402

FIRST_OP = ("import tinygrad_like as tl; x = tl.arange(8, dtype=tl.float32, device='cuda-emu'); "
            "assert (x * 2).tolist() == [2.0 * i for i in range(8)]")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    args = ap.parse_args()
    res = {"benchmark": "cuda_emu_build", "machine": machine_info(), "git": git_state("tinygrad_like", "kernel_src"),
           "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        sources = Emulator(cache_dir=Path(tmp) / "probe").sources
        res["per_file"] = {src: round(_timed(lambda src=src: Emulator(cache_dir=Path(tmp) / src).build([src], 1)), 2)
                           for src in sources}
        res["per_file_total"] = round(sum(res["per_file"].values()), 2)
        res["all_parallel"] = round(_timed(lambda: Emulator(cache_dir=Path(tmp) / "all").build()), 2)
        res["warm_load"] = round(_timed(lambda: Emulator(cache_dir=Path(tmp) / "all").build()), 3)
        env = {**os.environ, "CUDA_EMU_CACHE_DIR": str(Path(tmp) / "fresh")}
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", FIRST_OP], check=True, env=env, cwd=Path(__file__).resolve().parents[1])
        res["first_op"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", FIRST_OP], check=True, env=env, cwd=Path(__file__).resolve().parents[1])
        res["first_op_cached"] = round(time.perf_counter() - t0, 2)
    report(res, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
