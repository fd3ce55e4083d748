"""What re-running a notebook cell that ends with a view costs the kernel: memory and what stays registered.

A real IPython kernel (jupyter_client's KernelManager, this Python, this checkout on PYTHONPATH) runs a set-up cell,
then the same view cell ``--runs`` times, as JupyterLab sends it (with a ``cellId`` in the request's metadata; with
``--no-cell-id`` without one, as older front-ends do), e.g. for ``--model gpt``::

    model, loss = learner_models.make("gpt")   # nanoGPT 6x6x192 of tests/learner_models.py: a forward pass
    GraphView(loss, model)                      # the cell's result: IPython keeps it in Out[n]

After each run a silent cell reports the kernel's resident memory (VmRSS, after ``gc.collect()`` and glibc's
``malloc_trim(0)``, so memory freed but kept by the allocator does not count), the open views, the event
subscribers, the line recorders (``sites._listeners``), the widgets in ipywidgets' registry and the views pinned
as displayed. The headline: **MB added by the reruns after the first two runs** (``added_mb``: run ``--runs`` minus
run 2: the first rerun still holds the old graph while the new forward runs, which sets the allocator's high-water
mark once) and ``added_mb_from_first`` (minus run 1). No front-end is attached, so nothing reports views removed:
what is measured is the re-run path alone.

    .venv/bin/python benchmarks/view_reruns.py [--runs 6] [--model gpt] [--view GraphView] [--no-cell-id]

Prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SETUP = """\
import gc, sys, ctypes
sys.path.insert(0, 'tests')
import learner_models
import tinygrad_like as tl
import tinygrad_like.widgets as W
from tinygrad_like.widgets import _base, lifecycle
from tinygrad_like import events, sites
import ipywidgets.widgets.widget as _wm
_libc = ctypes.CDLL('libc.so.6')
def _counts():
    gc.collect()
    _libc.malloc_trim(0)
    rss = [line for line in open('/proc/self/status') if line.startswith('VmRSS')][0].split()[1]
    return dict(rss_mb=round(int(rss) / 1024, 2), open_views=len(_base._OPEN), subscribers=len(events._subscribers),
                line_recorders=sites._listeners, widgets=len(_wm._instances), pinned=len(lifecycle.pinned()))
"""

CELLS = {
    "GraphView": "model, loss = learner_models.make({model!r})\nW.GraphView(loss, model)\n",
    "BackwardStepper": "model, loss = learner_models.make({model!r})\nW.BackwardStepper(loss, model)\n",
    "Dashboard": "model, loss = learner_models.make({model!r})\nW.Dashboard(loss, model, follow=True)\n",
    "none": "model, loss = learner_models.make({model!r})\n",  # the control: the same cell without a view
}


class Kernel:
    """A kernel running this checkout, and a way to run a cell in it and read what it printed."""

    def __init__(self) -> None:
        from jupyter_client import KernelManager

        self.km = KernelManager(kernel_name="python3")
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.km.start_kernel(env=env, cwd=str(ROOT), extra_arguments=["--HistoryManager.enabled=False"])
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code: str, cell_id: str | None = None, timeout: float = 600) -> str:
        """Run ``code`` as a notebook cell (with ``cell_id`` in its metadata, as JupyterLab sends it); returns its
        printed text; raises on an error in the cell."""
        content = dict(code=code, silent=False, store_history=True, user_expressions={}, allow_stdin=False,
                       stop_on_error=True)
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
        self.kc.shell_channel.send(msg)
        msg_id, out, error = msg["header"]["msg_id"], [], None
        while True:
            m = self.kc.get_iopub_msg(timeout=timeout)
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            kind = m["msg_type"]
            if kind == "stream":
                out.append(m["content"]["text"])
            elif kind == "error":
                error = "\n".join(m["content"]["traceback"])
            elif kind == "status" and m["content"]["execution_state"] == "idle":
                break
        self.kc.get_shell_msg(timeout=timeout)
        if error is not None:
            raise RuntimeError(f"the cell failed:\n{code}\n{error}")
        return "".join(out)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def measure(runs: int = 6, model: str = "gpt", view: str = "GraphView", cell_id: bool = True) -> dict:
    kernel = Kernel()
    try:
        kernel.run(SETUP)
        cell = CELLS[view].format(model=model)
        rows = []
        for i in range(runs):
            t0 = time.perf_counter()
            kernel.run(cell, "cell-view" if cell_id else None)
            seconds = time.perf_counter() - t0
            row = json.loads(kernel.run("import json; print(json.dumps(_counts()))").strip().splitlines()[-1])
            row.update(run=i + 1, seconds=round(seconds, 2))
            rows.append(row)
        out_kept = kernel.run("print(sum(1 for v in Out.values() if isinstance(v, _base.View)), "
                              "sum(1 for v in Out.values() if isinstance(v, _base.View) and v.closed))").split()
    finally:
        kernel.close()
    first, second, last = rows[0], rows[min(1, runs - 1)], rows[-1]
    return {"model": model, "view": view, "cell_id": cell_id, "runs": rows,
            "added_mb": round(last["rss_mb"] - second["rss_mb"], 2),
            "added_mb_from_first": round(last["rss_mb"] - first["rss_mb"], 2),
            "views_in_out": int(out_kept[0]), "closed_views_in_out": int(out_kept[1])}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=6)
    p.add_argument("--model", default="gpt")
    p.add_argument("--view", default="GraphView", choices=sorted(CELLS))
    p.add_argument("--no-cell-id", action="store_true", help="send no cellId (older front-ends): key by source")
    args = p.parse_args(argv)
    if args.runs < 2:
        sys.exit("--runs must be at least 2")
    print(json.dumps(measure(args.runs, args.model, args.view, not args.no_cell_id), indent=1))


if __name__ == "__main__":
    main()
