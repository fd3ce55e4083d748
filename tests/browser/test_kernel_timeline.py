"""``KernelTimeline`` (``widgets/static/timeline.js``, a canvas) in JupyterLab: ``kernel_timeline.ipynb`` trains a
small MLP for three steps with a timeline open, shows a ``GraphView`` of the last loss, and feeds a second timeline
100,000 synthetic launches.

One test, in order (one kernel start): the timeline renders (rows, launches, all four phases on the big one);
hovering a bar shows a tooltip naming its op; the wheel zooms; the frame time while zooming the 100k timeline,
measured from requestAnimationFrame timestamps in the page, stays at or under 33 ms; clicking a forward
cross_entropy bar selects the CrossEntropy node in the GraphView (in the browser and in Python); screenshots in
the light and the dark theme.

Screenshots (look at them): ``test-artifacts/browser/kernel_timeline_*.png``.
"""

from __future__ import annotations

import json

import pytest

NB = "kernel_timeline.ipynb"
SMALL = ".tl-kernel-timeline .tl-timeline >> nth=0"
BIG = ".tl-kernel-timeline .tl-timeline >> nth=1"
GRAPH = ".tl-graph-view .tl-graph"
ACTION_MS = 15_000
FRAME_BUDGET_MS = 33.0

pytestmark = pytest.mark.browser


def _kernel_repr(page, expr: str) -> str:
    """``repr(expr)`` evaluated in the notebook's kernel (no cell is added or run)."""
    return page.evaluate(
        """async (expr) => {
             const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
             const reply = await k.requestExecute({code: '', silent: true, store_history: false,
                                                   user_expressions: {r: expr}}).done;
             const r = reply.content.user_expressions.r;
             return r.status === 'ok' ? r.data['text/plain'] : `${r.ename}: ${r.evalue}`; }""", expr)


def _settled(page) -> None:
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


# zoom the big timeline with wheel events, one per animation frame, and collect the frames' timestamps
ZOOM_FRAMES_JS = """async ([sel, n]) => {
  const root = document.querySelectorAll('.tl-kernel-timeline .tl-timeline')[sel];
  const area = root.querySelector('.tl-area');
  const r = area.getBoundingClientRect();
  const times = [], paints = [], inview = [];
  await new Promise((done) => {
    let i = 0;
    function frame(ts) {
      times.push(ts);
      paints.push(+root.dataset.paintMs || 0);
      inview.push(+root.dataset.inview || 0);
      if (i >= n) { done(); return; }
      // zoom in about a point 40% across for the first half, back out for the second
      const dy = i < n / 2 ? -25 : 25;  // ×1.105 a frame: ×400 at the deepest, still thousands of bars in view
      area.dispatchEvent(new WheelEvent('wheel', {deltaY: dy, deltaMode: 0, clientX: r.left + r.width * 0.4,
                                                  clientY: r.top + r.height / 2, bubbles: true, cancelable: true}));
      i++;
      requestAnimationFrame(frame);
    }
    requestAnimationFrame(frame);
  });
  const dt = times.slice(1).map((t, k) => t - times[k]);
  const sorted = [...dt].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return {frames: dt.length, mean: dt.reduce((a, b) => a + b, 0) / dt.length, p50: q(0.5), p90: q(0.9),
          max: sorted[sorted.length - 1], paintMax: Math.max(...paints),
          paintMean: paints.reduce((a, b) => a + b, 0) / paints.length,
          inviewMax: Math.max(...inview), inviewMin: Math.min(...inview), zoom: +root.dataset.zoom};
}"""


def test_kernel_timeline_in_lab(open_notebook):
    from playwright.sync_api import expect

    page = open_notebook(NB)
    page.run("notebook:run-all-cells")
    page.wait_idle()
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    page.assert_no_widget_errors()
    small, big = page.locator(SMALL), page.locator(BIG)
    try:
        page.wait_for_function(
            "() => { const r = document.querySelectorAll('.tl-kernel-timeline .tl-timeline');"
            " return r.length === 2 && +r[0].dataset.launches > 50 && +r[1].dataset.launches === 100000"
            " && +r[0].dataset.drawn > 0; }", timeout=60_000)
    except Exception:
        page.shot("kernel_timeline_failed.png")
        state = page.evaluate("() => [...document.querySelectorAll('.tl-kernel-timeline .tl-timeline')]"
                              ".map(r => ({...r.dataset}))")
        raise AssertionError(f"timelines not drawn: {state}; console errors: {page.console_errors}") from None
    assert int(small.get_attribute("data-rows")) >= 8
    expect(small.locator(".tl-legend-item")).to_have_count(4)
    expect(small.locator(".tl-header")).to_contain_text("launches")
    expect(small.locator("table.tl-kernel-table")).to_be_visible()
    for phase in ("forward", "backward", "optimizer"):  # the small one: real training steps
        assert small.locator(f'.tl-legend-item[data-phase="{phase}"] .tl-legend-count').text_content() != ""
    page.shot("kernel_timeline_light.png", small)

    # ---- hover: a tooltip naming the op ------------------------------------------------------------------
    small.scroll_into_view_if_needed()
    _settled(page)
    seqs = small.evaluate("r => r.tlLaunches('cross_entropy', 'forward')")
    assert len(seqs) == 4, seqs  # three steps and the last forward
    last = seqs[-1]
    pt = small.evaluate("(r, s) => r.tlLaunchPoint(s)", last)
    assert pt, "the last cross_entropy launch is in view"
    page.mouse.move(pt[0], pt[1])
    tip = small.locator(".tl-tooltip")
    expect(tip).to_be_visible(timeout=ACTION_MS)
    expect(tip).to_contain_text("CrossEntropy")
    expect(tip).to_contain_text("cross_entropy")
    expect(tip).to_contain_text("forward")
    for field in ("shapes", "bytes", "duration", "cell", "line"):
        expect(tip).to_contain_text(field)
    page.shot("kernel_timeline_tooltip.png", small)

    # ---- click: the GraphView selects the node that launched it --------------------------------------------
    page.mouse.click(pt[0], pt[1])
    page.wait_for_function("s => document.querySelector('.tl-kernel-timeline .tl-timeline').dataset.selected"
                           " === String(s)", arg=last, timeout=ACTION_MS)
    box = page.locator(f"{GRAPH} g.tl-box.tl-selected")
    expect(box).to_have_count(1, timeout=ACTION_MS)
    expect(box).to_contain_text("CrossEntropy")
    assert _kernel_repr(page, "timeline.widget.selected") == str(last)
    assert _kernel_repr(page, "graph.selected_node.label") == "'CrossEntropy'"
    page.shot("kernel_timeline_linked_graph.png", page.locator(".tl-graph-view"))

    # ---- wheel zoom changes the view -------------------------------------------------------------------
    small.scroll_into_view_if_needed()  # (the graph's screenshot scrolled the page)
    _settled(page)
    z0 = float(small.get_attribute("data-zoom"))
    pt = small.evaluate("(r, s) => r.tlLaunchPoint(s)", last)
    page.mouse.move(pt[0], pt[1])
    page.mouse.wheel(0, -300)
    page.wait_for_function("z => +document.querySelector('.tl-kernel-timeline .tl-timeline').dataset.zoom > z",
                           arg=z0, timeout=ACTION_MS)
    assert small.evaluate("(r, s) => r.tlLaunchPoint(s)", last), "zoomed about the pointer: the bar stays in view"
    small.get_by_role("button", name="Fit").click()
    page.wait_for_function("() => Math.abs(+document.querySelector('.tl-kernel-timeline .tl-timeline').dataset.zoom"
                           " - 1) < 1e-6", timeout=ACTION_MS)

    # ---- 100k launches: frame time while zooming ----------------------------------------------------------
    big.scroll_into_view_if_needed()
    _settled(page)
    assert big.get_attribute("data-visible") == "true"
    for phase in ("forward", "backward", "optimizer", "transfer"):
        assert big.locator(f'.tl-legend-item[data-phase="{phase}"] .tl-legend-count').text_content() == "25000"
    page.shot("kernel_timeline_100k_light.png", big)
    stats = page.evaluate(ZOOM_FRAMES_JS, [1, 120])
    print("\n100k frame times while zooming (ms):", json.dumps(stats))
    import pathlib

    out = pathlib.Path(__file__).parents[2] / "test-artifacts" / "browser" / "kernel_timeline_frames.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(stats, indent=1))
    assert stats["inviewMax"] >= 50_000, "the zoom started with (almost) every launch in view"
    assert stats["p90"] <= FRAME_BUDGET_MS and stats["mean"] <= FRAME_BUDGET_MS, stats
    assert stats["paintMax"] <= FRAME_BUDGET_MS, stats

    # ---- the visibility report: scrolled away -> visible false -------------------------------------------
    page.locator(".jp-Notebook .jp-Cell").first.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('.tl-kernel-timeline .tl-timeline')[1].dataset.visible"
                           " === 'false'", timeout=ACTION_MS)
    assert _kernel_repr(page, "big.widget.visible") == "False"

    # ---- dark theme -------------------------------------------------------------------------------------
    page.set_theme("dark")
    try:
        small.scroll_into_view_if_needed()
        _settled(page)
        page.shot("kernel_timeline_dark.png", small)
        big.scroll_into_view_if_needed()
        _settled(page)
        page.shot("kernel_timeline_100k_dark.png", big)
    finally:
        page.set_theme("light")
