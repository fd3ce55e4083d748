"""Frame time of the kernel timeline while zooming over 100,000 launches, in JupyterLab, Notebook 7 and Voila.

The issue "Views, part 2" asks the canvas timeline to stay responsive at 100,000 events: a frame every 33 ms or
faster while zooming. Only a real browser can measure it, so this runs the browser test that zooms (one wheel event
per animation frame, 120 frames, in each front-end: ``tests/browser/test_kernel_timeline.py``), which writes each
front-end's frame statistics to ``test-artifacts/browser/kernel_timeline_<frontend>_frames.json``, and reports them
against the budget. The test itself asserts nothing about time.

    .venv/bin/python benchmarks/timeline_frames.py [--out results.json]

Needs what ``make test-browser`` needs (Chromium, Playwright). Prints one JSON document: per front-end the mean,
median, 90th percentile and worst frame interval (ms, requestAnimationFrame timestamps: 16.7 ms is the display's
own rate), the longest and mean paint (the timeline's own drawing time), and whether the budget holds.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _env import git_state, machine_info, report  # noqa: E402

BUDGET_MS = 33.0
FRONTENDS = ("jupyterlab", "notebook7", "voila")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out")
    args = ap.parse_args()
    art = ROOT / "test-artifacts" / "browser"
    for f in FRONTENDS:
        (art / f"kernel_timeline_{f}_frames.json").unlink(missing_ok=True)
    env = dict(os.environ, TL_CHROMIUM=os.environ.get("TL_CHROMIUM", "/usr/bin/chromium"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "browser", "-k", "100k_frame_time",
                          "tests/browser/test_kernel_timeline.py"], cwd=ROOT, env=env, capture_output=True, text=True)
    res = {"benchmark": "timeline_frames", "date": datetime.date.today().isoformat(), "machine": machine_info(),
           "git": git_state("widgets", "benchmarks"), "budget_ms": BUDGET_MS, "launches": 100_000,
           "frontends": {}}
    for f in FRONTENDS:
        path = art / f"kernel_timeline_{f}_frames.json"
        if not path.exists():
            res["frontends"][f] = {"error": "no measurement (the browser test did not reach it)"}
            continue
        s = json.loads(path.read_text())
        res["frontends"][f] = {k: round(s[k], 2) for k in ("mean", "p50", "p90", "max", "paintMean", "paintMax")} | {
            "frames": s["frames"], "pass": s["p90"] <= BUDGET_MS and s["mean"] <= BUDGET_MS}
    res["pytest"] = run.stdout.strip().splitlines()[-1:] if run.stdout else [run.stderr[-500:]]
    res["all_pass"] = all(v.get("pass") for v in res["frontends"].values())
    report(res, args.out)
    return 0 if run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
