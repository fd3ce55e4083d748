"""The CUDA backend beside PyTorch CUDA, in one process on one GPU (TF32 off for float32).

Measured, each as the median of ``--repeats`` timings taken with CUDA events around ``--iters`` launches:

* ``gemm_f32``: 4096 x 4096 x 4096 float32 matmul, TFLOP/s, tinygrad_like vs torch (cuBLAS). Target >= 60%.
* ``gemm_f16``: the same in float16 (our WMMA kernel vs cuBLAS tensor cores). Target >= 50%.
* ``add``: elementwise add of two 64M-float tensors, GB/s moved (3 x 256 MB) vs the device-to-device copy
  bandwidth (``torch``'s ``copy_`` of 256 MB, counted as 2 x 256 MB). Target >= 80% of the copy.
* ``softmax`` and ``layer_norm`` on 8192 x 8192 float32: GB/s (read + write) vs the same copy. Target >= 70%.
* ``mlp_step``: the nn issue's MLP (784-512-512-10, batch 256, Adam) training step, ms, vs torch. Target <= 1.5x.

    python benchmarks/cuda.py [--out results.json] [--repeats 10] [--iters 10] [--only gemm_f32,bandwidth]

Prints one JSON document (device name, date, commit, figures and ratios). Needs a GPU, PyCUDA and torch with
CUDA; without them it says why and exits 2.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from _env import git_state, machine_info, report  # noqa: E402

import tinygrad_like as tl  # noqa: E402
import tinygrad_like.nn.functional as F  # noqa: E402


def _timer(torch):
    """Seconds per call of ``fn``: CUDA events around ``iters`` calls, median over ``repeats``."""
    def measure(fn, iters: int, repeats: int) -> float:
        fn()
        torch.cuda.synchronize()
        tl.cuda.synchronize()
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000.0 / iters)
        return statistics.median(times)
    return measure


def bench_gemm(torch, measure, dtype: str, n: int, iters: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    ta, tb = tl.tensor(a, device="cuda"), tl.tensor(b, device="cuda")
    pa, pb = torch.tensor(a, device="cuda"), torch.tensor(b, device="cuda")
    if dtype == "float16":
        ta, tb, pa, pb = ta.half(), tb.half(), pa.half(), pb.half()
    err = float(np.max(np.abs((ta @ tb).float().numpy() - (pa @ pb).float().cpu().numpy())))
    flops = 2 * n ** 3
    ours = measure(lambda: ta @ tb, iters, repeats)
    theirs = measure(lambda: pa @ pb, iters, repeats)
    return {"n": n, "dtype": dtype, "tflops": flops / ours / 1e12, "torch_tflops": flops / theirs / 1e12,
            "ratio_of_torch": theirs / ours, "max_abs_diff": err}


def bench_bandwidth(torch, measure, iters: int, repeats: int) -> dict:
    n = 64 * 1024 * 1024
    src = torch.empty(n, device="cuda")
    dst = torch.empty(n, device="cuda")
    copy_s = measure(lambda: dst.copy_(src), iters, repeats)
    copy_gbs = 2 * n * 4 / copy_s / 1e9
    out = {"copy_gbs": copy_gbs}
    x, y = tl.ones(n, device="cuda"), tl.ones(n, device="cuda")
    s = measure(lambda: x + y, iters, repeats)
    out["add"] = {"gbs": 3 * n * 4 / s / 1e9, "of_copy": 3 * n * 4 / s / 1e9 / copy_gbs}
    px, py = torch.ones(n, device="cuda"), torch.ones(n, device="cuda")
    s = measure(lambda: px + py, iters, repeats)
    out["add"]["torch_gbs"] = 3 * n * 4 / s / 1e9
    m = tl.randn(8192, 8192).to("cuda")
    pm = torch.tensor(m.numpy(), device="cuda")
    for name, ours, theirs in (("softmax", lambda: m.softmax(-1), lambda: pm.softmax(-1)),
                               ("layer_norm", lambda: F.layer_norm(m, (8192,)),
                                lambda: torch.nn.functional.layer_norm(pm, (8192,)))):
        moved = 2 * m.numel() * 4
        s, ts = measure(ours, iters, repeats), measure(theirs, iters, repeats)
        out[name] = {"gbs": moved / s / 1e9, "of_copy": moved / s / 1e9 / copy_gbs, "torch_gbs": moved / ts / 1e9}
    return out


def bench_mlp(torch, measure, iters: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 784)).astype(np.float32)
    y = rng.integers(0, 10, 256)
    tnet = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                               torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    net = tl.nn.Sequential(tl.nn.Linear(784, 512), tl.nn.ReLU(), tl.nn.Linear(512, 512), tl.nn.ReLU(),
                           tl.nn.Linear(512, 10))
    with tl.no_grad():
        for p, q in zip(net.parameters(), tnet.parameters()):
            p.copy_(tl.tensor(q.detach().cpu().numpy()))
    net.to("cuda")
    opt, topt = tl.optim.Adam(net.parameters(), lr=1e-3), torch.optim.Adam(tnet.parameters(), lr=1e-3)
    tx, ty = tl.tensor(x, device="cuda"), tl.tensor(y, device="cuda")
    px, py = torch.tensor(x, device="cuda"), torch.tensor(y, device="cuda")

    def ours():
        opt.zero_grad()
        F.cross_entropy(net(tx), ty).backward()
        opt.step()

    def theirs():
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tnet(px), py).backward()
        topt.step()

    ours()
    ours()  # warm: the pool has every block the step needs
    before = tl.cuda.memory_stats()["driver_allocs"]
    s, ts = measure(ours, iters, repeats), measure(theirs, iters, repeats)
    fallbacks = dict(tl.device("cuda").raw_backend.fallbacks)
    return {"ms": s * 1e3, "torch_ms": ts * 1e3, "ratio_to_torch": s / ts, "host_fallbacks": fallbacks,
            "driver_allocs_during_timing": tl.cuda.memory_stats()["driver_allocs"] - before}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--only", default="gemm_f32,gemm_f16,bandwidth,mlp_step")
    args = ap.parse_args()
    if not tl.cuda.is_available():
        print(json.dumps({"error": f"CUDA is not available: {tl.cuda.unavailable_reason()}"}))
        return 2
    import torch
    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch has no CUDA here: the peer cannot run"}))
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    measure = _timer(torch)
    only = set(args.only.split(","))
    unknown = only - {"gemm_f32", "gemm_f16", "bandwidth", "mlp_step"}
    if unknown:
        ap.error(f"--only: unknown {sorted(unknown)}; choose from gemm_f32, gemm_f16, bandwidth, mlp_step")
    res = {"device": tl.cuda.get_device_name(), "torch_device": torch.cuda.get_device_name(),
           "date": datetime.date.today().isoformat(), "machine": machine_info("torch", "pycuda"),
           "git": git_state("tinygrad_like", "kernel_src", "benchmarks")}
    if "gemm_f32" in only:
        res["gemm_f32"] = bench_gemm(torch, measure, "float32", 4096, args.iters, args.repeats)
    if "gemm_f16" in only:
        res["gemm_f16"] = bench_gemm(torch, measure, "float16", 4096, args.iters, args.repeats)
    if "bandwidth" in only:
        res["bandwidth"] = bench_bandwidth(torch, measure, args.iters, args.repeats)
    if "mlp_step" in only:
        res["mlp_step"] = bench_mlp(torch, measure, args.iters, args.repeats)
    res["memory_stats"] = tl.cuda.memory_stats()
    report(res, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
