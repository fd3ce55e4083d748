"""What a Step click costs in Python, over a whole backward pass of the learners' models (``tests/learner_models.py``:
nanoGPT, ResNet-18, the LSTM language model), now that the stepper follows its node into folds (each step may open
and fold groups, i.e. draw another set of boxes).

Set-up as in a notebook: a ``GraphView`` and a ``BackwardStepper`` of the same loss, the clicks coming long after
the cell ran (the live-redraw timers are reset before the first click, which is what made the first click redraw the
GraphView too). Per step: wall time, CPU time of this process (the machine may be shared: CPU time is what the step
itself costs), the engine's own time for the node (``record.seconds``: the backward math, which no view can make
cheaper) and the view's share (wall minus engine). Reported: the first step, the median and the maximum over the
pass, the number of distinct drawings made (layouts) and the number of sibling redraws during the pass (0 expected).
``sibling_refresh_ms`` is what one redraw of that GraphView costs: what the first click used to add.

    PYTHONPATH=. .venv/bin/python benchmarks/stepper_steps.py [--models gpt resnet lstm] [--out results.json]

Prints one JSON document on stdout. Target (the issue's): the first step costs what later steps cost, at most 60 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from _env import ROOT, git_state, machine_info

sys.path.insert(0, str(ROOT / "tests"))


def _stats(xs: list[float]) -> dict:
    return {"first_ms": round(xs[0] * 1e3, 2), "median_ms": round(statistics.median(xs) * 1e3, 2),
            "p90_ms": round(sorted(xs)[int(0.9 * (len(xs) - 1))] * 1e3, 2), "max_ms": round(max(xs) * 1e3, 2)}


def measure(name: str) -> dict:
    import learner_models

    from tinygrad_like.widgets import BackwardStepper, GraphView, _base
    from tinygrad_like.widgets import graph_view as gv

    model, loss = learner_models.make(name)
    layouts = []
    real = gv.graph_payload

    def counted(*a, **k):
        layouts.append(1)
        return real(*a, **k)

    gv.graph_payload = counted
    try:
        view = GraphView(loss, model)
        t0 = time.perf_counter()
        view.refresh()
        sibling_ms = (time.perf_counter() - t0) * 1e3
        s = BackwardStepper(loss, model)
        view._last_draw, _base._BUDGET.next_allowed = 0.0, 0.0  # the learner clicks long after the cell
        redraws, n0 = view.redraws, len(layouts)
        wall, cpu, own = [], [], []
        while not s.done:
            k = len(s.records)
            w0, c0 = time.perf_counter(), time.process_time()
            s.step()
            w1, c1 = time.perf_counter(), time.process_time()
            wall.append(w1 - w0)
            cpu.append(c1 - c0)
            own.append(w1 - w0 - sum(r.seconds for r in s.records[k:]))
        out = {"ops": s._total, "steps": len(wall), "wall": _stats(wall), "cpu": _stats(cpu), "view": _stats(own),
               "layouts": len(layouts) - n0, "sibling_redraws": view.redraws - redraws,
               "sibling_refresh_ms": round(sibling_ms, 1)}
        s.close()
        view.close()
    finally:
        gv.graph_payload = real
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", default=["gpt", "resnet", "lstm"])
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args(argv)
    res = {"benchmark": "stepper_steps", "machine": machine_info("ipywidgets"),
           "git": git_state("widgets", "tinygrad_like"), "target_ms": 60,
           "models": {m: measure(m) for m in args.models}}
    text = json.dumps(res, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
