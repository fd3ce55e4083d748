"""``KernelTimeline`` (``widgets/static/timeline.js``, a canvas) in a real browser, in each of the three front-ends a
reader may use: JupyterLab, Notebook 7 and Voila. ``kernel_timeline.ipynb`` trains a small MLP for three steps with
a timeline open, shows a ``GraphView`` of the last loss, and feeds a second timeline 100,000 synthetic launches.

Per front-end the notebook is opened and run once (a module-scoped page); the tests below then, in order: check
the timeline renders (rows, launches, all four phases on the big one, and a canvas that is not blank: bars of
each phase's colour are painted); hover a bar (a tooltip naming its op: the browser alone); click a forward
cross_entropy bar, which selects the CrossEntropy node in the GraphView (a round trip through the kernel; Voila
keeps its kernel for the widgets, so this works there too; the Python side is checked where the page can reach
the kernel, Lab and Notebook 7); zoom with the wheel and Fit; measure the frame time while zooming the 100k
timeline (requestAnimationFrame timestamps in the page: at or under 33 ms); scroll it away (``visible`` false);
and photograph both timelines in the light and the dark theme (Voila: ``?theme=dark``, which runs the notebook
again), checking that the canvas repainted its labels in the dark theme's colours. Last, in JupyterLab only, on a page
with a device scale factor of 1.25: every pixel in the bars of the 100k timeline, zoomed out and zoomed in, light and
dark, is one of the legend's colours or the background, both in the canvas's bitmap and on the screen (issue 16).

Screenshots (look at them): ``test-artifacts/browser/kernel_timeline_<frontend>_*.png`` and
``kernel_timeline_100k_<zoom>_<theme>_dpr1.25.png`` (the screen the colour check read).
"""

from __future__ import annotations

import json
import re
from contextlib import closing

import pytest

from .conftest import ARTIFACTS, FRONTENDS, close_page, drawn_page, kernel_repr, light_then_dark, open_page

NB = "kernel_timeline.ipynb"
SMALL = ".tl-kernel-timeline .tl-timeline >> nth=0"
BIG = ".tl-kernel-timeline .tl-timeline >> nth=1"
GRAPH = ".tl-graph-view .tl-graph"
RENDER_MS = 60_000
ACTION_MS = 15_000
PHASES = ("forward", "backward", "optimizer", "transfer")

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", params=FRONTENDS)
def kt(request, browser):
    """The test notebook open in one front-end, every cell run, both timelines drawn."""
    yield from drawn_page(request, browser, NB, _wait_drawn)


def _wait_drawn(page) -> None:
    try:
        page.wait_for_function(
            "() => { const r = document.querySelectorAll('.tl-kernel-timeline .tl-timeline');"
            " return r.length === 2 && +r[0].dataset.launches > 50 && +r[1].dataset.launches === 100000"
            " && +r[0].dataset.drawn > 0; }", timeout=RENDER_MS)
    except Exception:
        page.shot(f"kernel_timeline_{page.frontend}_failed.png")
        state = page.evaluate("() => [...document.querySelectorAll('.tl-kernel-timeline .tl-timeline')]"
                              ".map(r => ({...r.dataset}))")
        raise AssertionError(f"timelines not drawn: {state}; console errors: {page.console_errors}") from None


def _settled(page) -> None:
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


# What the canvas of the timeline number `i` holds: how many pixels are painted (the canvas is transparent where
# nothing is drawn: the area's background shows through), how many of them have exactly each phase's colour (the
# bars are filled rectangles), and the mean luminance of the opaque pixels of the row labels (text on the left).
CANVAS_JS = """i => {
  const root = document.querySelectorAll('.tl-kernel-timeline .tl-timeline')[i];
  const cv = root.querySelector('canvas.tl-canvas');
  const W = cv.width, H = cv.height;
  const d = cv.getContext('2d').getImageData(0, 0, W, H).data;
  const probe = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const cs = getComputedStyle(root);
  const rgb = css => { probe.clearRect(0, 0, 1, 1); probe.fillStyle = '#000'; probe.fillStyle = css;
    probe.fillRect(0, 0, 1, 1); const [r, g, b] = probe.getImageData(0, 0, 1, 1).data;
    return (r << 16) | (g << 8) | b; };
  const phases = ['forward', 'backward', 'optimizer', 'transfer'];
  const want = phases.map(p => rgb(cs.getPropertyValue('--tl-phase-' + p).trim()));
  const counts = phases.map(() => 0);
  const lum = (r, g, b) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  const labelW = Math.round(100 * (window.devicePixelRatio || 1));
  let painted = 0, lsum = 0, ln = 0;
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
    const k = (y * W + x) * 4;
    if (d[k + 3] === 0) continue;
    painted++;
    const c = (d[k] << 16) | (d[k + 1] << 8) | d[k + 2];
    const j = want.indexOf(c);
    if (j >= 0 && d[k + 3] === 255) counts[j]++;
    if (x < labelW && d[k + 3] > 200) { lsum += lum(d[k], d[k + 1], d[k + 2]); ln++; }
  }
  return {w: W, h: H, painted, frac: painted / (W * H), phase: Object.fromEntries(phases.map((p, j) => [p, counts[j]])),
          label_luminance: ln ? +(lsum / ln).toFixed(3) : null, label_pixels: ln};
}"""


def _canvas(page, i: int) -> dict:
    _settled(page)
    return page.evaluate(CANVAS_JS, i)


# ---- renders --------------------------------------------------------------------------------------------------
def test_timeline_renders_a_painted_canvas(kt):
    from playwright.sync_api import expect

    page = kt
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    page.assert_no_widget_errors()
    small, big = page.locator(SMALL), page.locator(BIG)
    assert int(small.get_attribute("data-rows")) >= 8
    expect(small.locator(".tl-legend-item")).to_have_count(4)
    expect(small.locator(".tl-header")).to_contain_text("launches")
    expect(small.locator("table.tl-kernel-table")).to_be_visible()
    for phase in ("forward", "backward", "optimizer"):  # the small one: real training steps
        assert small.locator(f'.tl-legend-item[data-phase="{phase}"] .tl-legend-count').text_content() != ""
    for phase in PHASES:
        assert big.locator(f'.tl-legend-item[data-phase="{phase}"] .tl-legend-count').text_content() == "25000"
    small.scroll_into_view_if_needed()
    c = _canvas(page, 0)
    print(f"\n{page.frontend} small canvas:", json.dumps(c))
    assert c["w"] > 300 and c["h"] > 100, c
    assert c["frac"] > 0.02, f"the canvas is (almost) blank: {c}"
    for phase in ("forward", "backward", "optimizer"):
        assert c["phase"][phase] > 20, f"no {phase} bars painted: {c}"
    big.scroll_into_view_if_needed()
    c = _canvas(page, 1)
    print(f"{page.frontend} big canvas:", json.dumps(c))
    assert c["frac"] > 0.05, f"the canvas is (almost) blank: {c}"
    for phase in PHASES:
        assert c["phase"][phase] > 20, f"no {phase} bars painted: {c}"


# ---- hover: a tooltip naming the op (the browser alone) --------------------------------------------------------
def _cross_entropy_kernel() -> str:
    """The forward cross-entropy's kernel name in the timeline: our compiled CPU kernel's where a C compiler built it
    (the notebook's kernel runs on this machine), else the NumPy primitive's."""
    from tinygrad_like.backends import cpu_kernels

    return "cross_entropy_fwd" if cpu_kernels.available() else "cross_entropy"


def _last_cross_entropy(page) -> tuple:
    """The small timeline scrolled into view and settled, the last forward cross_entropy launch's seq, and the point
    (page px) where its bar is drawn."""
    small = page.locator(SMALL)
    small.scroll_into_view_if_needed()
    _settled(page)
    seqs = small.evaluate("(r, name) => r.tlLaunches(name, 'forward')", _cross_entropy_kernel())
    assert len(seqs) == 4, seqs  # three steps and the last forward
    last = seqs[-1]
    return small, last, small.evaluate("(r, s) => r.tlLaunchPoint(s)", last)


def test_timeline_hover_shows_a_tooltip(kt):
    from playwright.sync_api import expect

    page = kt
    small, last, pt = _last_cross_entropy(page)
    assert pt, "the last cross_entropy launch is in view"
    page.mouse.move(pt[0], pt[1])
    tip = small.locator(".tl-tooltip")
    expect(tip).to_be_visible(timeout=ACTION_MS)
    expect(tip).to_contain_text("CrossEntropy")
    expect(tip).to_contain_text("cross_entropy")
    expect(tip).to_contain_text("forward")
    for field in ("shapes", "bytes", "duration", "cell", "line"):
        expect(tip).to_contain_text(field)
    page.shot(f"kernel_timeline_{page.frontend}_tooltip.png", small)
    # the tooltip stays inside the widget
    tb, rb = tip.bounding_box(), small.bounding_box()
    assert rb["x"] - 1 <= tb["x"] and tb["x"] + tb["width"] <= rb["x"] + rb["width"] + 1, (tb, rb)


# ---- click: the GraphView selects the node that launched it (through the kernel) -----------------------------
def test_timeline_click_selects_the_node_in_the_graph(kt):
    from playwright.sync_api import expect

    page = kt
    small, last, pt = _last_cross_entropy(page)
    page.mouse.click(pt[0], pt[1])
    page.wait_for_function("s => document.querySelector('.tl-kernel-timeline .tl-timeline').dataset.selected"
                           " === String(s)", arg=last, timeout=ACTION_MS)
    box = page.locator(f"{GRAPH} g.tl-box.tl-selected")
    expect(box).to_have_count(1, timeout=ACTION_MS)
    expect(box).to_contain_text("CrossEntropy")
    if (sel := kernel_repr(page, "timeline.widget.selected")) is not None:
        assert sel == str(last)
        assert kernel_repr(page, "graph.selected_node.label") == "'CrossEntropy'"
    page.shot(f"kernel_timeline_{page.frontend}_linked_graph.png", page.locator(".tl-graph-view"))


# ---- wheel zoom and Fit (the browser alone) -------------------------------------------------------------------
def test_timeline_wheel_zooms_and_fit_resets(kt):
    page = kt
    small, last, pt = _last_cross_entropy(page)  # (scrolled back into view: the graph's screenshot scrolled the page)
    z0 = float(small.get_attribute("data-zoom"))
    page.mouse.move(pt[0], pt[1])
    page.mouse.wheel(0, -300)
    page.wait_for_function("z => +document.querySelector('.tl-kernel-timeline .tl-timeline').dataset.zoom > z",
                           arg=z0, timeout=ACTION_MS)
    assert small.evaluate("(r, s) => r.tlLaunchPoint(s)", last), "zoomed about the pointer: the bar stays in view"
    page.mouse.move(0, 0)
    _settled(page)
    page.shot(f"kernel_timeline_{page.frontend}_zoomed.png", small)
    small.get_by_role("button", name="Fit").click()
    page.wait_for_function("() => Math.abs(+document.querySelector('.tl-kernel-timeline .tl-timeline').dataset.zoom"
                           " - 1) < 1e-6", timeout=ACTION_MS)


# ---- 100k launches: frame time while zooming ------------------------------------------------------------------
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


def test_timeline_100k_frame_time_and_visibility(kt):
    page = kt
    big = page.locator(BIG)
    big.scroll_into_view_if_needed()
    _settled(page)
    assert big.get_attribute("data-visible") == "true"
    stats = page.evaluate(ZOOM_FRAMES_JS, [1, 120])
    print(f"\n{page.frontend} 100k frame times while zooming (ms):", json.dumps(stats))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"kernel_timeline_{page.frontend}_frames.json").write_text(json.dumps(stats, indent=1))
    assert stats["inviewMax"] >= 50_000, "the zoom started with (almost) every launch in view"
    assert stats["frames"] == 120 and stats["zoom"] > 0, stats  # every frame was drawn
    # (the frame times are a speed target: benchmarks/timeline_frames.py reads them from the JSON written above and
    # compares them with the 33 ms budget; a test asserts nothing about time)
    big.get_by_role("button", name="Fit").click()

    # the visibility report: scrolled away -> visible false (and Python hears of it where we can ask). Voila shows
    # no code, so its whole page fits the 1800 px tall window: a shorter window for this part
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": 600})
    try:
        page.notebook.locator(".jp-Cell").first.scroll_into_view_if_needed()
        page.wait_for_function("() => document.querySelectorAll('.tl-kernel-timeline .tl-timeline')[1]"
                               ".dataset.visible === 'false'", timeout=ACTION_MS)
        if (v := kernel_repr(page, "big.widget.visible")) is not None:
            assert v == "False"
    finally:
        page.set_viewport_size(size)
    big.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('.tl-kernel-timeline .tl-timeline')[1].dataset.visible"
                           " === 'true'", timeout=ACTION_MS)


# ---- light and dark ---------------------------------------------------------------------------------------------
def test_timeline_screenshots_light_and_dark(kt):
    page = kt
    small, big = page.locator(SMALL), page.locator(BIG)
    labels = {}
    with closing(light_then_dark(page, _wait_drawn)) as themes:
        for theme in themes:
            page.mouse.move(0, 0)
            small.scroll_into_view_if_needed()
            c = _canvas(page, 0)
            page.shot(f"kernel_timeline_{page.frontend}_{theme}.png", small)
            big.scroll_into_view_if_needed()
            _settled(page)
            page.shot(f"kernel_timeline_{page.frontend}_100k_{theme}.png", big)
            labels[theme] = c
    print(f"\n{page.frontend} canvas by theme:", json.dumps({t: (c["label_luminance"], c["frac"])
                                                               for t, c in labels.items()}))
    # the canvas repainted in the theme's colours: dark labels on light, light labels on dark, bars in both
    assert labels["light"]["label_luminance"] < 0.4 < labels["dark"]["label_luminance"], labels
    for theme, c in labels.items():
        assert c["frac"] > 0.02 and c["phase"]["forward"] > 20, (theme, c)


# ---- issue 16: every pixel of the bars is a legend colour, at any zoom ---------------------------------------------
# With 100,000 launches most bars are narrower than a device pixel. Each pixel column of a row must still show one
# of the legend's colours, never a blend of two phases (or of a phase and the background): in the canvas's bitmap
# (what timeline.js paints: getImageData) and on the screen (what the browser composites: a screenshot, decoded into a
# canvas in the page and read with getImageData too). The page gets a device scale factor of 1.25 (a common laptop
# setting) before the notebook runs, as a reader's browser would have it: at 1 every CSS pixel is a device pixel
# and fractional geometry, where blends come from, is rarer. One front-end suffices (the drawing is the same code).
DPR = 1.25

# The colours to compare with, read from the page (the legend's swatches and the theme's CSS variables, not written
# here): the four phases, exactly; and the background inside the bars area: the canvas where nothing is painted, the
# row stripes, the time grid and both together. `screen`: those over the area's (opaque) background, as they reach
# the screen, else as in the bitmap (transparent where nothing is painted).
PALETTE_JS = """
  const root = document.querySelectorAll('.tl-kernel-timeline .tl-timeline')[i];
  const probe = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const paint = (...layers) => { probe.clearRect(0, 0, 1, 1);
    for (const c of layers) { probe.fillStyle = '#000'; probe.fillStyle = c; probe.fillRect(0, 0, 1, 1); }
    return [...probe.getImageData(0, 0, 1, 1).data]; };
  const cs = getComputedStyle(root), v = n => cs.getPropertyValue(n).trim();
  const legend = [...root.querySelectorAll('.tl-legend-item')].map(e => ({phase: e.dataset.phase,
    rgba: paint(getComputedStyle(e.querySelector('.tl-swatch')).backgroundColor)}));
  let bg = 'rgba(0, 0, 0, 0)';
  for (let e = root.querySelector('.tl-area'); e && bg === 'rgba(0, 0, 0, 0)'; e = e.parentElement) {
    bg = getComputedStyle(e).backgroundColor; }
  const under = screen ? [bg] : [];
  const background = [[], [v('--tl-stripe')], [v('--tl-grid')], [v('--tl-stripe'), v('--tl-grid')]]
    .map(layers => paint(...under, ...layers));
"""

# Check an RGBA image (`d`, `W` x `H`) against the palette: the bars area is the box around every exact legend-colour
# pixel, 2 px wider each side (partly covered pixels at a bar's edge, or at the plot's clipped edges, are in it);
# every pixel in it must be a legend colour exactly, or a background colour (within 2 levels on the screen, where the
# compositor rounds its own way). Returns the counts and the first bad pixels.
CHECK_JS = """
  const eq = (a, b, tol) => Math.abs(a[0] - b[0]) <= tol && Math.abs(a[1] - b[1]) <= tol &&
    Math.abs(a[2] - b[2]) <= tol && Math.abs(a[3] - b[3]) <= tol;
  const px = k => [d[k], d[k + 1], d[k + 2], d[k + 3]];
  const which = p => legend.findIndex(l => eq(p, l.rgba, 0));
  let x0 = W, y0 = H, x1 = -1, y1 = -1;
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) {
    if (which(px((y * W + x) * 4)) >= 0) { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y);
                                           y1 = Math.max(y1, y); } }
  x0 = Math.max(0, x0 - 2); y0 = Math.max(0, y0 - 2); x1 = Math.min(W - 1, x1 + 2); y1 = Math.min(H - 1, y1 + 2);
  const counts = Object.fromEntries(legend.map(l => [l.phase, 0]));
  let bad = 0, backgroundPx = 0;
  const samples = [], badColumns = new Set();
  for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) {
    const p = px((y * W + x) * 4), j = which(p);
    if (j >= 0) { counts[legend[j].phase]++; continue; }
    if (background.some(b => eq(p, b, screen ? 2 : 0))) { backgroundPx++; continue; }
    bad++; badColumns.add(x);
    if (samples.length < 8) samples.push({x, y, rgba: p});
  }
  return {size: [W, H], box: [x0, y0, x1, y1], legend: counts, background: backgroundPx, bad,
          bad_columns: badColumns.size, samples, palette: {legend: legend.map(l => l.rgba), background}};
"""

# the canvas's bitmap
BITMAP_JS = """(i) => { const screen = false;""" + PALETTE_JS + """
  const cv = root.querySelector('canvas.tl-canvas'), W = cv.width, H = cv.height;
  const d = cv.getContext('2d').getImageData(0, 0, W, H).data;""" + CHECK_JS + "}"

# a screenshot of the canvas (a PNG, base64) as the screen shows it
SCREEN_JS = """async ([i, png]) => { const screen = true;""" + PALETTE_JS + """
  const img = new Image();
  img.src = 'data:image/png;base64,' + png;
  await img.decode();
  const W = img.naturalWidth, H = img.naturalHeight;
  const cx = Object.assign(document.createElement('canvas'), {width: W, height: H}).getContext('2d',
                                                                                    {willReadFrequently: true});
  cx.drawImage(img, 0, 0);
  const d = cx.getImageData(0, 0, W, H).data;""" + CHECK_JS + "}"


# A point on a pixel column of the 100k timeline's matmul row, zoomed out (where a column holds many launches), and the
# phase whose legend colour the bitmap has there: hovering it must name a launch of that phase
HOVER_PICK_JS = """() => {
  const root = document.querySelectorAll('.tl-kernel-timeline .tl-timeline')[1];
  const cv = root.querySelector('canvas.tl-canvas'), r = cv.getBoundingClientRect(), dpr = devicePixelRatio;
  const seqs = root.tlLaunches('matmul'), [x, y] = root.tlLaunchPoint(seqs[seqs.length >> 1]);
  const col = Math.floor((x - r.left) * dpr), row = Math.floor((y - r.top) * dpr);
  const [R, G, B] = cv.getContext('2d').getImageData(col, row, 1, 1).data;
  const probe = document.createElement('canvas').getContext('2d', {willReadFrequently: true});
  const rgb = css => { probe.clearRect(0, 0, 1, 1); probe.fillStyle = css; probe.fillRect(0, 0, 1, 1);
    return [...probe.getImageData(0, 0, 1, 1).data].slice(0, 3).join(); };
  const item = [...root.querySelectorAll('.tl-legend-item')].find(e =>
    rgb(getComputedStyle(e.querySelector('.tl-swatch')).backgroundColor) === [R, G, B].join());
  return {x: r.left + (col + 0.5) / dpr, y, phase: item ? item.dataset.phase : null, rgb: [R, G, B]};
}"""


def _screen_pixels(page, cdp, i: int) -> dict:
    """Timeline ``i``'s canvas as the screen shows it: a screenshot at the device's scale (CDP's, since Playwright
    does not know of the emulated scale factor), checked in the page."""
    import base64

    box = page.evaluate("i => { const r = document.querySelectorAll('.tl-kernel-timeline .tl-timeline')[i]"
                        ".querySelector('canvas.tl-canvas').getBoundingClientRect();"
                        " return {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height}; }", i)
    shot = cdp.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False,
                                               "clip": {**box, "scale": 1}})
    res = page.evaluate(SCREEN_JS, [i, shot["data"]])
    res["png"] = base64.b64decode(shot["data"])
    return res


def test_timeline_100k_pixels_are_legend_colours(browser, lab):
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = open_page(browser, lab, "jupyterlab", NB)
    try:
        size = page.viewport_size
        cdp = page.context.new_cdp_session(page)
        cdp.send("Emulation.setDeviceMetricsOverride", {"width": size["width"], "height": size["height"],
                                                        "deviceScaleFactor": DPR, "mobile": False})
        assert page.evaluate("() => devicePixelRatio") == DPR
        page.run("notebook:run-all-cells", timeout_ms=RENDER_MS)
        page.wait_idle(RENDER_MS)
        _wait_drawn(page)
        big = page.locator(BIG)
        states = [("zoomed_out", ["Fit", "Zoom out"]), ("zoomed_in", ["Fit", "Zoom in", "Zoom in", "Zoom in"])]
        report, failures = {}, []
        with closing(light_then_dark(page, _wait_drawn)) as themes:
            for theme in themes:
                big.scroll_into_view_if_needed()
                page.mouse.move(0, 0)
                for state, clicks in states:
                    for name in clicks:
                        big.get_by_role("button", name=name).click()
                    page.mouse.move(0, 0)  # (no hover frame)
                    _settled(page)
                    bitmap = page.evaluate(BITMAP_JS, 1)
                    screen = _screen_pixels(page, cdp, 1)
                    (ARTIFACTS / f"kernel_timeline_100k_{state}_{theme}_dpr{DPR}.png").write_bytes(screen.pop("png"))
                    for where, res in (("bitmap", bitmap), ("screen", screen)):
                        report[f"{theme} {state} {where}"] = {k: res[k] for k in ("size", "legend", "background",
                                                                                 "bad", "bad_columns", "samples")}
                        if res["bad"]:
                            failures.append(f"{theme}, {state}, {where}: {res['bad']} pixels in "
                                            f"{res['bad_columns']} columns are no legend colour, e.g. "
                                            f"{res['samples'][:3]} (legend {res['palette']['legend']})")
                        assert min(res["legend"].values()) > 200, (theme, state, where, res["legend"])
                    if state == "zoomed_out" and theme == "light":
                        # hover a column of many launches: the tooltip names one of the phase drawn there
                        pick = page.evaluate(HOVER_PICK_JS)
                        assert pick["phase"], f"no legend colour at the matmul row: {pick}"
                        page.mouse.move(pick["x"], pick["y"])
                        tip = big.locator(".tl-tooltip")
                        expect(tip).to_be_visible(timeout=ACTION_MS)
                        expect(tip.locator(".tl-tooltip-title .tl-swatch")).to_have_class(
                            re.compile(rf"tl-phase-{pick['phase']}\b"))
                        expect(tip).to_contain_text("matmul")
                        expect(tip).to_contain_text("more launches here")
                        page.mouse.move(0, 0)
        print(f"\nlegend colours at devicePixelRatio {DPR}:", json.dumps(report))
        assert not failures, "\n".join(failures)
    finally:
        close_page(page)
