"""Per-op framework overhead on tiny tensors: tinygrad_like vs PyTorch (CPU), side by side in one run.

At 4x4 the arithmetic is nothing; what is measured is the Python/dispatch/autograd-recording cost of
one op (and of a backward pass), which is what dominates small models and notebooks. Both libraries
run in the same process, interleaved repeat by repeat, so machine noise hits both alike; the figure
that matters is the ratio tinygrad_like / torch, compared with a target (issue 30: each tiny op and the 10-op
chain with its backward at most 1.2x; issue 15 had asked for 1.0x and 0.9x).

    .venv/bin/python benchmarks/overhead.py [--out results.json] [--repeat 7] [--budget 0.05]
    .venv/bin/python benchmarks/overhead.py --busy 1             # with one core busy elsewhere (issue 30)
    .venv/bin/python benchmarks/overhead.py --cprofile "a + b"   # where tinygrad_like's time goes

Prints one JSON document on stdout. Each time is min over ``repeat`` runs of the mean per call in
microseconds (timeit-style; the garbage collector is off while timing, as timeit does).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import os
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import numpy as np  # noqa: E402
import torch  # noqa: E402
from _env import busy_cores, machine_info, report  # noqa: E402

import tinygrad_like as tl  # noqa: E402

# issue 30: each tiny op and the 10-op chain at most 1.2x torch (issue 15's 1.0 and 0.9 were not reached with a
# Python dispatch; issue 30 set these instead)
TARGETS = {"op": 1.2, "backward": 1.2}
SHAPE = (4, 4)
CHAIN_BLOCKS = 2  # each block is 5 differentiable ops: mul, add, tanh, matmul, relu -> 10 ops


def chain(a, b):
    """10 differentiable ops (then ``.sum()`` makes the scalar loss); same code for both libraries."""
    y = a
    for _ in range(CHAIN_BLOCKS):
        y = ((y * b + a).tanh() @ b).relu()
    return y


def make_inputs():
    tl.manual_seed(0)
    a_tl = tl.randn(*SHAPE, requires_grad=True)
    b_tl = tl.randn(*SHAPE, requires_grad=True)
    a_t = torch.tensor(a_tl.detach().numpy().copy(), requires_grad=True)
    b_t = torch.tensor(b_tl.detach().numpy().copy(), requires_grad=True)
    return (a_tl, b_tl), (a_t, b_t)


def op_cases(a, b):
    """name -> zero-argument callable running one op (the result is discarded)."""
    return {
        "a + b": lambda: a + b,
        "a * b": lambda: a * b,
        "a @ b": lambda: a @ b,
        "a.relu()": lambda: a.relu(),
        "a.sum()": lambda: a.sum(),
    }


def build_and_backward(a, b):
    def run():
        a.grad = None
        b.grad = None
        chain(a, b).sum().backward()
    return run


def pick_number(fn, budget: float) -> int:
    """Calls per repeat so that one repeat takes about ``budget`` seconds (at least 50)."""
    for _ in range(20):  # warm up caches, lazy imports, first-call paths
        fn()
    n, elapsed = 1, 0.0
    while elapsed < budget / 10:
        n *= 2
        elapsed = timeit.Timer(fn).timeit(number=n)
    return max(50, int(n * budget / elapsed))


def time_op(fn, number: int) -> float:
    """Seconds per call for one repeat (gc disabled, as in timeit)."""
    return timeit.Timer(fn).timeit(number=number) / number


def time_backward_only(a, b, number: int) -> float:
    """Seconds per ``loss.backward()``, the graph rebuilt untimed before each call."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        total = 0.0
        for _ in range(number):
            a.grad = None
            b.grad = None
            loss = chain(a, b).sum()
            t0 = time.perf_counter()
            loss.backward()
            total += time.perf_counter() - t0
        return total / number
    finally:
        if was_enabled:
            gc.enable()


def backward_per_node(lib, repeat: int, graphs: int = 200) -> float:
    """Microseconds one backward node costs: backward of 50 chained negations minus that of 10, over 40 (the graph
    rebuilt untimed before each backward; min over repeats). A negation's formula is one op (``-g``), so this is the
    engine's own cost per node plus one small op under ``no_grad``."""
    def time_depth(depth: int) -> float:
        x = lib.ones(*SHAPE, requires_grad=True)
        best = float("inf")
        for _ in range(repeat):
            losses = []
            for _ in range(graphs):
                y = x
                for _ in range(depth):
                    y = -y
                losses.append(y.sum())
            gc.disable()
            try:
                t0 = time.perf_counter()
                for loss in losses:
                    loss.backward()
                best = min(best, (time.perf_counter() - t0) / graphs)
            finally:
                gc.enable()
        return best

    return (time_depth(50) - time_depth(10)) / 40 * 1e6


def measure_pair(tl_fn, torch_fn, repeat: int, budget: float, backward_only=None):
    """min-of-``repeat`` microseconds per call for both libraries, repeats interleaved."""
    n_tl, n_t = pick_number(tl_fn, budget), pick_number(torch_fn, budget)
    best_tl = best_t = float("inf")
    for _ in range(repeat):
        if backward_only is None:
            best_tl = min(best_tl, time_op(tl_fn, n_tl))
            best_t = min(best_t, time_op(torch_fn, n_t))
        else:
            (a_tl, b_tl), (a_t, b_t) = backward_only
            best_tl = min(best_tl, time_backward_only(a_tl, b_tl, n_tl))
            best_t = min(best_t, time_backward_only(a_t, b_t, n_t))
    return best_tl * 1e6, best_t * 1e6, n_tl, n_t


def row(name: str, kind: str, tl_us: float, torch_us: float, n_tl: int, n_t: int, repeat: int) -> dict:
    ratio = tl_us / torch_us
    return {"name": name, "kind": kind, "tinygrad_like_us": round(tl_us, 3), "torch_us": round(torch_us, 3),
            "ratio": round(ratio, 3), "target": TARGETS[kind], "pass": ratio <= TARGETS[kind],
            "number": {"tinygrad_like": n_tl, "torch": n_t}, "repeat": repeat}


def run(repeat: int, budget: float) -> dict:
    torch.set_num_threads(1)
    (a_tl, b_tl), (a_t, b_t) = make_inputs()
    # sanity: both compute the same thing
    np.testing.assert_allclose(chain(a_tl, b_tl).detach().numpy(), chain(a_t, b_t).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    started = time.perf_counter()
    rows = []
    tl_ops, t_ops = op_cases(a_tl, b_tl), op_cases(a_t, b_t)
    for name in tl_ops:
        rows.append(row(name, "op", *measure_pair(tl_ops[name], t_ops[name], repeat, budget), repeat))
    # backward cases take ~100x longer per call than one op: give them more time per repeat
    bw_budget = 2 * budget
    rows.append(row("chain10 build + backward", "backward",
                    *measure_pair(build_and_backward(a_tl, b_tl), build_and_backward(a_t, b_t), repeat,
                                  bw_budget), repeat))

    # backward alone: call counts are picked from rebuild + backward, so a repeat stays within the budget
    def rebuild_and_backward(a, b):
        return lambda: time_backward_only(a, b, 1)
    rows.append(row("chain10 backward only", "backward",
                    *measure_pair(rebuild_and_backward(a_tl, b_tl), rebuild_and_backward(a_t, b_t), repeat,
                                  bw_budget, backward_only=((a_tl, b_tl), (a_t, b_t))), repeat))

    # informative: what an open tl.profile() costs per op (timed backend + one event per primitive)
    profiled = {}
    plain_us = next(r["tinygrad_like_us"] for r in rows if r["name"] == "a + b")
    with tl.profile(kinds=(tl.events.KernelTimed,)) as prof:
        n = pick_number(tl_ops["a + b"], budget)
        best = min(time_op(tl_ops["a + b"], n) for _ in range(repeat)) * 1e6
        prof.events.clear()
    profiled["a + b"] = {"tinygrad_like_us": round(best, 3), "plain_us": plain_us,
                         "extra_us": round(best - plain_us, 3)}

    return {
        "benchmark": "overhead",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": " ".join([os.path.relpath(sys.executable), *sys.argv]),
        "machine": machine_info("torch") | {"torch_threads": torch.get_num_threads()},
        "settings": {"shape": list(SHAPE), "dtype": "float32", "requires_grad": True,
                     "chain_ops": 5 * CHAIN_BLOCKS, "repeat": repeat, "budget_s_per_repeat": budget,
                     "statistic": "min over repeats of mean microseconds per call",
                     "gc": "disabled while timing"},
        "targets": TARGETS,
        "rows": rows,
        "all_pass": all(r["pass"] for r in rows),
        "profiler_overhead": profiled,
        "backward_per_node_us": {"tinygrad_like": round(backward_per_node(tl, repeat), 3),
                                 "torch": round(backward_per_node(torch, repeat), 3)},
        "elapsed_s": round(time.perf_counter() - started, 1),
    }


def cprofile(name: str, calls: int = 20000, top: int = 25) -> None:
    """Print where tinygrad_like spends its time on one case (to stderr)."""
    import cProfile
    import pstats

    (a_tl, b_tl), _ = make_inputs()
    cases = op_cases(a_tl, b_tl) | {"backward": build_and_backward(a_tl, b_tl)}
    if name not in cases:
        raise SystemExit(f"--cprofile: expected one of {', '.join(cases)}")
    fn = cases[name]
    for _ in range(100):
        fn()
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(calls):
        fn()
    pr.disable()
    pstats.Stats(pr, stream=sys.stderr).sort_stats("tottime").print_stats(top)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", help="also write the JSON to this file")
    p.add_argument("--repeat", type=int, default=7, help="timed repeats per case (min is reported)")
    p.add_argument("--budget", type=float, default=0.05, help="seconds per repeat per library per case")
    p.add_argument("--origins", choices=("off", "scopes", "lines"), default="off",
                   help="graph-node origin recording while timing: off (plain import), scopes (what importing "
                        "tinygrad_like.widgets turns on), lines (while a graph view is open)")
    p.add_argument("--busy", type=int, default=0, metavar="N",
                   help="run N busy-looping processes beside the benchmark (default 0: a quiet machine)")
    p.add_argument("--cprofile", metavar="CASE",
                   help="profile one case of tinygrad_like instead ('a + b', ..., 'backward')")
    args = p.parse_args(argv)
    tl.sites.record_scopes(args.origins == "scopes")
    tl.sites.record_origins(args.origins == "lines")
    if args.cprofile:
        cprofile(args.cprofile)
        return 0
    with busy_cores(args.busy):
        result = run(args.repeat, args.budget)
    result["origins"] = args.origins
    result["busy_cores"] = args.busy
    report(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
