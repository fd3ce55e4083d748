"""What a ``TrainingMonitor`` costs a nanoGPT training loop, with and without ``model=`` (its layer diagnostics).

The loop is ``tests/learner_models.py``'s nanoGPT (6 layers, 6 heads, 192-dim, dropout), batch 2 x 32 tokens, AdamW,
``--steps`` steps: forward, ``zero_grad``, backward, ``step``, then ``monitor.log(loss.item())``, as the usual loop
does. Conditions, each on a fresh model with the same seed, in a shuffled order per round:

* ``none``: no monitor (the reference);
* ``monitor``: ``TrainingMonitor(steps)``;
* ``monitor_model``: ``TrainingMonitor(steps, model=model)`` (the diagnostics sampled every 10 steps, their figure).

The monitor is made "on screen" (its visibility probe set, as the browser sets it when the view is scrolled into
view): otherwise it would not redraw at all outside a notebook. What is reported per condition: the **mean seconds
of a whole loop divided by its steps** (redraws included: they are what a learner waits for), over ``--rounds``,
its ratio to ``none``; the same without the last step (which always draws what is pending), the median step, the
figures drawn, and the time spent drawing them.

    .venv/bin/python benchmarks/monitor_overhead.py [--steps 60] [--rounds 2]
    .venv/bin/python benchmarks/monitor_overhead.py --cprofile monitor_model   # where the monitor's time goes

Prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # (one BLAS thread: a 2-thread pool makes every ratio noisier)

import learner_models  # noqa: E402
import numpy as np  # noqa: E402

import tinygrad_like as tl  # noqa: E402
from tinygrad_like.widgets import TrainingMonitor  # noqa: E402

CONDITIONS = ("none", "monitor", "monitor_model")


def run_loop(condition: str, steps: int) -> dict:
    """One loop of ``steps`` steps under ``condition``: seconds per step (mean), figures drawn and their time."""
    model, _ = learner_models.make("gpt")
    opt = tl.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(1)
    batches = [(tl.tensor(rng.integers(0, 65, (2, 32)), dtype=tl.long),
                tl.tensor(rng.integers(0, 65, (2, 32)), dtype=tl.long)) for _ in range(4)]
    monitor = None
    if condition != "none":
        monitor = TrainingMonitor(steps, model=model if condition == "monitor_model" else None)
        monitor._probe.visible = True  # (on screen, as the browser reports it)
    draw_s = [0.0]
    if monitor is not None:
        render = monitor._render

        def timed_render():
            t0 = time.perf_counter()
            render()
            draw_s[0] += time.perf_counter() - t0
        monitor._render = timed_render
    gc.collect()
    times = []
    for i in range(steps):
        t0 = time.perf_counter()
        idx, targets = batches[i % len(batches)]
        _, loss = model(idx, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if monitor is not None:
            monitor.log(loss.item())
        times.append(time.perf_counter() - t0)
    out = {"step_s": sum(times) / steps, "median_step_s": statistics.median(times),
           "until_last_s": sum(times[:-1]) / (steps - 1), "draw_s": draw_s[0]}
    if monitor is not None:
        out["figure_draws"] = monitor.figure_draws
        out["diagnostics_draws"] = getattr(monitor, "diagnostics_draws", None)
        monitor.close()
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--cprofile", choices=CONDITIONS, help="profile one loop of this condition instead")
    args = p.parse_args(argv)
    if args.cprofile:
        prof = cProfile.Profile()
        prof.enable()
        run_loop(args.cprofile, args.steps)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
        print(buf.getvalue())
        return
    results: dict[str, list] = {c: [] for c in CONDITIONS}
    run_loop("none", 3)  # (warm-up: imports, first allocations; matplotlib's import and font cache below)
    warm = TrainingMonitor(2)
    warm._probe.visible = True
    warm.log(1.0)
    warm.log(0.5)
    warm.close()
    for _ in range(args.rounds):
        order = list(CONDITIONS)
        random.shuffle(order)
        for c in order:
            results[c].append(run_loop(c, args.steps))
    base = statistics.fmean(r["step_s"] for r in results["none"])
    summary = {}
    for c, runs in results.items():
        mean = statistics.fmean(r["step_s"] for r in runs)
        until = statistics.fmean(r["until_last_s"] for r in runs)
        summary[c] = {"step_ms": round(mean * 1e3, 2), "ratio": round(mean / base, 3),
                      "until_last_step_ratio": round(until / statistics.fmean(r["until_last_s"]
                                                                          for r in results["none"]), 3),
                      "median_step_ms": round(statistics.fmean(r["median_step_s"] for r in runs) * 1e3, 2),
                      "draw_s_per_loop": round(statistics.fmean(r["draw_s"] for r in runs), 3),
                      "figure_draws": [r.get("figure_draws") for r in runs],
                      "diagnostics_draws": [r.get("diagnostics_draws") for r in runs]}
    print(json.dumps({"steps": args.steps, "rounds": args.rounds, "conditions": summary}, indent=1))


if __name__ == "__main__":
    main()
