"""Run the tutorials and save their outputs in place: ``make notebooks`` (or ``python notebooks/execute.py``).

Why a script: nbval checks each notebook's fresh outputs against the saved ones, so the saved ones must come
from a clean, seeded run in this environment, not from someone's half-edited Lab session. This runs every
notebook top to bottom in a fresh kernel (cwd ``notebooks/``), writes the outputs and the widget state back,
and prints one JSON line per notebook with its wall time, so the "under 60 s on 2 cores" promise is measured
by the same command that makes the outputs.

Every cell runs, on any machine: the GPU cells of 05 and 08 run on the simulated device ``sim`` or print a one-line
note where there is no GPU (their output is not compared: ``# NBVAL_IGNORE_OUTPUT``).

    python notebooks/execute.py                 # every notebook
    python notebooks/execute.py 03 06           # the ones whose names start with 03 or 06
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
BUDGET_S = 60.0  # the limit per notebook on 2 cores


def notebooks(prefixes: list[str]) -> list[Path]:
    found = sorted(HERE.glob("[0-9][0-9]_*.ipynb"))
    if prefixes:
        found = [p for p in found if any(p.name.startswith(x) for x in prefixes)]
        if not found:
            raise SystemExit(f"no notebook in {HERE} starts with any of {prefixes}")
    return found


def execute(path: Path, timeout: int) -> float:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(HERE)}})
    t0 = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - t0
    nbformat.write(nb, path)
    return seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prefixes", nargs="*", help="notebook name prefixes (default: all)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per cell before giving up")
    args = ap.parse_args(argv)
    over = []
    for path in notebooks(args.prefixes):
        seconds = execute(path, args.timeout)
        print(json.dumps({"notebook": path.name, "seconds": round(seconds, 1), "budget_s": BUDGET_S}), flush=True)
        if seconds > BUDGET_S:
            over.append(path.name)
    if over:
        print(f"over the {BUDGET_S:.0f} s budget: {', '.join(over)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
