"""A transformer on the CUDA backend beside PyTorch CUDA, in one process on one GPU (TF32 off for float32).

* ``attention``: ``F.scaled_dot_product_attention`` forward + backward, causal, at nanoGPT's shapes (batch 64,
  6 heads, T = 256, head dim 64), float32 and float16: our flash-attention kernels vs torch's SDPA; ms and ratio.
* ``gpt_step``: nanoGPT (6 layers, 6 heads, 384-dim, context 256, batch 64, AdamW) trained from the same weights
  on the same batches by both: the losses of every step side by side, the step time and its ratio, the host
  fallbacks and driver allocations while timed (both must be 0), the kernel launches per step, and the host CPU
  time per step beside the wall time (when they are close, the Python side, not the GPU, sets the pace).

    python benchmarks/cuda_gpt.py [--out results.json] [--steps 20] [--repeats 10] [--only attention,gpt_step]

Prints one JSON document. Needs a GPU, PyCUDA and torch with CUDA; without them it says why and exits 2.
``bench_gpt`` also runs at a toy size on the CUDA emulator with torch on the CPU (tests/test_cuda_gpt_step.py):
that checks the plumbing (the same losses, no host fallback, no allocation after warm-up), not the speed.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _env import git_state, machine_info, report  # noqa: E402
from train_step import gpt_model  # noqa: E402

import tinygrad_like as tl  # noqa: E402

NANOGPT = {"n_layer": 6, "n_head": 6, "n_embd": 384, "block": 256, "batch": 64, "vocab": 65}


def _sync(torch, torch_device: str) -> None:
    tl.cuda.synchronize()
    if torch_device == "cuda":
        torch.cuda.synchronize()


def bench_attention(torch, dtype: str, repeats: int, B: int = 64, H: int = 6, T: int = 256, hs: int = 64) -> dict:
    """Causal SDPA forward + backward: ms per call for both (wall time around ``repeats`` calls, synchronized)."""
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((B, H, T, hs)).astype(np.float32) for _ in range(4)]
    ours = [tl.tensor(a, device="cuda") for a in arrays]
    theirs = [torch.tensor(a, device="cuda") for a in arrays]
    if dtype == "float16":
        ours, theirs = [t.half() for t in ours], [t.half() for t in theirs]
    for t in (*ours[:3], *theirs[:3]):
        t.requires_grad_(True)

    def step(lib, q, k, v, g):
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        y.backward(g)
        return y

    y, ty = step(tl, *ours), step(torch, *theirs)
    err = float(np.max(np.abs(y.detach().float().numpy() - ty.detach().float().cpu().numpy())))
    times = {}
    for name, lib, xs in (("ours", tl, ours), ("torch", torch, theirs)):
        step(lib, *xs)
        _sync(torch, "cuda")
        t0 = time.perf_counter()
        for _ in range(repeats):
            step(lib, *xs)
        _sync(torch, "cuda")
        times[name] = (time.perf_counter() - t0) / repeats
    return {"shape": [B, H, T, hs], "dtype": dtype, "ms": times["ours"] * 1e3, "torch_ms": times["torch"] * 1e3,
            "ratio_to_torch": times["ours"] / times["torch"], "max_abs_diff_out": err}


def _launches(rt, fn) -> int:
    """How many kernels ``fn`` launches (counted on the runtime's one launch path, for this call only)."""
    count = 0
    launch = rt.launch_signature

    def counted(*args, **kwargs):
        nonlocal count
        count += 1
        return launch(*args, **kwargs)

    rt.launch_signature = counted
    try:
        fn()
    finally:
        del rt.launch_signature
    return count


def bench_gpt(torch, cfg: dict, steps: int, repeats: int, torch_device: str = "cuda") -> dict:
    """``steps`` AdamW steps of both models from the same weights on the same batches (losses side by side), then
    ``repeats`` more timed: wall and host CPU time per step, host fallbacks, driver allocations, launches."""
    torch.manual_seed(0)
    shape = {k: cfg[k] for k in ("vocab", "n_embd", "n_head", "n_layer", "block")}
    tmodel = gpt_model(torch, **shape)
    model = gpt_model(tl, **shape)
    with tl.no_grad():
        for p, q in zip(model.parameters(), tmodel.parameters(), strict=True):
            p.copy_(tl.tensor(q.detach().numpy()))
    tmodel.to(torch_device)
    model.to("cuda")
    opt = tl.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    topt = torch.optim.AdamW(tmodel.parameters(), lr=3e-4, weight_decay=0.1)
    rng = np.random.default_rng(0)
    batches = [rng.integers(0, cfg["vocab"], (cfg["batch"], cfg["block"] + 1)) for _ in range(4)]
    ours = [(tl.tensor(b[:, :-1], device="cuda"), tl.tensor(b[:, 1:], device="cuda")) for b in batches]
    theirs = [(torch.tensor(b[:, :-1], device=torch_device), torch.tensor(b[:, 1:], device=torch_device))
              for b in batches]

    def step(lib, net, optim, x, y):
        optim.zero_grad(set_to_none=True)
        logits = net(x)
        loss = lib.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        optim.step()
        return loss

    losses, tlosses = [], []
    for i in range(steps):
        losses.append(float(step(tl, model, opt, *ours[i % len(ours)]).item()))
        tlosses.append(float(step(torch, tmodel, topt, *theirs[i % len(theirs)]).item()))
    rel = [abs(a - b) / abs(b) for a, b in zip(losses, tlosses)]
    be = tl.device("cuda").raw_backend
    fallbacks_before, allocs_before = dict(be.fallbacks), tl.cuda.memory_stats()["driver_allocs"]
    launches = _launches(be.rt, lambda: step(tl, model, opt, *ours[0]))
    _sync(torch, torch_device)
    w0, c0 = time.perf_counter(), time.process_time()
    for i in range(repeats):
        step(tl, model, opt, *ours[i % len(ours)])
    _sync(torch, torch_device)
    wall, cpu = (time.perf_counter() - w0) / repeats, (time.process_time() - c0) / repeats
    fallbacks = {k: v - fallbacks_before.get(k, 0) for k, v in be.fallbacks.items() if v != fallbacks_before.get(k, 0)}
    allocs = tl.cuda.memory_stats()["driver_allocs"] - allocs_before
    t0 = time.perf_counter()
    for i in range(repeats):
        step(torch, tmodel, topt, *theirs[i % len(theirs)])
    _sync(torch, torch_device)
    twall = (time.perf_counter() - t0) / repeats
    return {"config": cfg, "losses": losses, "torch_losses": tlosses, "max_rel_loss_diff": max(rel),
            "step_ms": wall * 1e3, "torch_step_ms": twall * 1e3, "ratio_to_torch": wall / twall,
            "host_cpu_ms_per_step": cpu * 1e3, "launches_per_step": launches,
            "host_fallbacks_while_timed": fallbacks, "driver_allocs_while_timed": allocs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--steps", type=int, default=20, help="steps whose losses are compared (default 20)")
    ap.add_argument("--repeats", type=int, default=10, help="timed steps / calls (default 10)")
    ap.add_argument("--only", default="attention,gpt_step")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if only - {"attention", "gpt_step"}:
        ap.error(f"--only: unknown {sorted(only - {'attention', 'gpt_step'})}; choose from attention, gpt_step")
    if not tl.cuda.is_available():
        print(f'{{"error": "CUDA is not available: {tl.cuda.unavailable_reason()}"}}')
        return 2
    import torch
    if not torch.cuda.is_available():
        print('{"error": "torch has no CUDA here: the peer cannot run"}')
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    res = {"device": tl.cuda.get_device_name(), "torch_device": torch.cuda.get_device_name(),
           "date": datetime.date.today().isoformat(), "machine": machine_info("torch", "pycuda"),
           "git": git_state("tinygrad_like", "kernel_src", "benchmarks")}
    if "attention" in only:
        res["attention"] = [bench_attention(torch, dt, args.repeats) for dt in ("float32", "float16")]
    if "gpt_step" in only:
        res["gpt_step"] = bench_gpt(torch, NANOGPT, args.steps, args.repeats)
    res["memory_stats"] = tl.cuda.memory_stats()
    report(res, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
