"""How fast the memory timeline (``MemoryTimelineView``: ``widgets/static/memory.js``) draws and answers in a real
browser, on a learner's nanoGPT (6 layers, 6 heads, 192-dim, AdamW) and ResNet-18 (``tests/learner_models.py``),
each recording one training step: JupyterLab on 127.0.0.1 and Debian's Chromium through Playwright (the helpers of
``tests/browser/conftest.py``; never ``playwright install``).

Timed in the page with ``performance.now()``, ``--repeats`` times (median reported, samples kept):

* ``first_draw_ms``: running the cell that displays the view until its ``.tl-memory[data-drawn]`` is set and one
  more animation frame ran (the Python side, the payload's trip and the drawing); ``draw_ms``: the drawing alone
  (``data-draw-ms``, the last full redraw in JS);
* ``hover_frame_ms``: animation-frame intervals while the pointer sweeps the plot one move per frame (each move
  redraws the canvas with a cursor and asks Python for the storages alive there, 80 ms after it stops);
  mean, p95 and max.

Issue 33's targets: each view draws in under a second; hovering stays smooth (p95 frame at most 33 ms, 30 fps).
Headless Chromium with ``--disable-gpu`` (software raster), a page of 1280x1000 CSS px.

    .venv/bin/python benchmarks/memory_browser.py [--repeats 5] [--out results.json]

Prints one JSON document on stdout; exit status 1 if a target is missed, 2 if the browser or Lab cannot run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import graph_browser as GB  # noqa: E402 - (its page helpers and server start-up)
from _env import git_state, machine_info, report  # noqa: E402

C = GB.C  # tests/browser/conftest.py's server helpers



SETUP = f"""import sys
import numpy as np
import tinygrad_like as tl
from tinygrad_like.widgets import MemoryTimelineView
sys.path.insert(0, {str(ROOT / 'tests')!r})
import learner_models

F = tl.nn.functional


def recorded(name):
    # one training step of the learner's model (after a first one: the optimizer's state exists), recorded
    model, first = learner_models.make(name)
    opt = tl.optim.AdamW(model.parameters(), lr=1e-3)
    first.backward()
    opt.step()
    opt.zero_grad()
    rng = np.random.default_rng(1)
    with tl.memory_timeline(model=model, optimizer=opt, lines=False) as m:
        if name == "gpt":
            idx = tl.tensor(rng.integers(0, 65, (8, 32)), dtype=tl.long)
            _, loss = model(idx, idx)
        else:
            x = tl.tensor(rng.standard_normal((8, 3, 32, 32)).astype(np.float32))
            loss = F.cross_entropy(model(x), tl.tensor(rng.integers(0, 10, (8,)), dtype=tl.long))
        loss.backward()
        opt.step()
        opt.zero_grad()
    return m


mems = {{"gpt": recorded("gpt"), "resnet": recorded("resnet")}}
print({{k: (len(m), len(m.allocations)) for k, m in mems.items()}})"""
CELLS = {"setup": SETUP, "gpt": "MemoryTimelineView(mems['gpt'])", "resnet": "MemoryTimelineView(mems['resnet'])"}
ORDER = ["setup", "gpt", "resnet"]

RUN_CELL_JS = """async (i) => {
  const B = window.__tlb, nb = B.nb(), cell = nb.widgets[i];
  nb.activeCellIndex = i;
  const old = cell.node.querySelector('.tl-memory');
  const t0 = performance.now();
  const drawn = B.until(cell.node, () => { const r = cell.node.querySelector('.tl-memory[data-drawn]');
                                           return r && r !== old; });
  window.jupyterapp.commands.execute('notebook:run-cell');
  const t1 = await drawn;
  const r = cell.node.querySelector('.tl-memory');
  return {ms: t1 - t0, draw_ms: +r.dataset.drawMs};
}"""

HOVER_JS = """async ([i, n]) => {
  const B = window.__tlb, cell = B.nb().widgets[i], c = cell.node.querySelector('canvas.tl-me-canvas');
  c.scrollIntoView({block: 'center'}); await B.frame(); await B.frame();
  const r = c.getBoundingClientRect(), stamps = [];
  for (let k = 0; k < n; k++) {
    const x = r.left + 72 + (r.width - 84) * (k / n), y = r.top + r.height / 2;
    c.dispatchEvent(new PointerEvent('pointermove', {clientX: x, clientY: y, bubbles: true, pointerType: 'mouse'}));
    stamps.push(await B.frame());
  }
  return stamps.slice(1).map((t, j) => t - stamps[j]);
}"""


def run(repeats: int) -> dict:
    import nbformat
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("TL_CHROMIUM") or C.CHROMIUM
    if not Path(chromium).exists():
        raise FileNotFoundError(f"{chromium} not found (apt-get install chromium; never `playwright install`)")
    meas: dict = {}
    with tempfile.TemporaryDirectory(prefix="tl-memory-bench-") as tmp, \
            contextlib.contextmanager(C._serve)(GB._Tmp(Path(tmp)), "bench-lab", C.lab_argv) as lab, \
            sync_playwright() as pw:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(CELLS[k]) for k in ORDER]
        nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}}
        nbformat.write(nb, lab["root"] / "memory_bench.ipynb")
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=C.CHROME_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(180_000)
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("http://127.0.0.1") else r.abort())
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{lab['base']}/lab/tree/memory_bench.ipynb?reset&token={lab['token']}", timeout=120_000)
        page.wait_for_function(C.KERNEL_IDLE_JS, timeout=120_000)
        page.locator(C.VISIBLE_NB).wait_for(state="visible")
        page.evaluate(GB.JS_HELPERS)  # (window.__tlb: frame, nb, until)

        def idle():
            page.wait_for_function(C.KERNEL_IDLE_JS, timeout=180_000)

        t = time.perf_counter()
        page.evaluate("() => { window.__tlb.nb().activeCellIndex = 0; }")
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-cell')")
        idle()
        meas["setup_cell_s"] = round(time.perf_counter() - t, 2)
        meas["events_storages"] = page.evaluate(
            "() => window.__tlb.nb().widgets[0].node.querySelector('.jp-OutputArea-output').innerText.trim()")
        for name in ("gpt", "resnet"):
            runs = []
            for _ in range(repeats):
                runs.append(page.evaluate(RUN_CELL_JS, ORDER.index(name)))
                idle()
            meas[name] = {"first_draw_ms": round(statistics.median(r["ms"] for r in runs), 1),
                          "draw_ms": round(statistics.median(r["draw_ms"] for r in runs), 1),
                          "samples_first_draw_ms": [round(r["ms"], 1) for r in runs],
                          "hover_frame_ms": GB._stats(page.evaluate(HOVER_JS, [ORDER.index(name), 60]))}
        meas["page_errors"] = errors
        meas["chromium"] = browser.version
        browser.close()
    return meas


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    try:
        meas = run(args.repeats)
    except (FileNotFoundError, ImportError, RuntimeError) as e:
        print(f"memory_browser: cannot run: {e}", file=sys.stderr)
        return 2
    ok = all(meas[m]["first_draw_ms"] < 1000 and meas[m]["hover_frame_ms"]["p95"] <= 33 for m in ("gpt", "resnet"))
    res = {"benchmark": "memory_browser", "machine": machine_info(), "git": git_state("widgets", "tinygrad_like"),
           "targets": {"first_draw_ms": 1000, "hover_frame_p95_ms": 33}, "ok": ok, **meas}
    report(res, args.out, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
