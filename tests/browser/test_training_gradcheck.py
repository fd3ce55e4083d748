"""The ipywidgets views' controls in JupyterLab: ``training_gradcheck.ipynb`` trains a small MLP for 30 steps with a
``TrainingMonitor(30, model=model)`` open (so it shows a second figure, the training diagnostics) and shows a
failing ``GradcheckView`` (a matrix-vector Function whose backward forgets part of one gradient: 3 failing entries).

The notebook is opened and run once (a module-scoped page); the tests below then, in order: both monitor figures
are shown as SVG pictures (FigureWidget); clicking Pause turns its label into "Resume" and pauses the monitor in
Python, clicking again resumes it; the gradcheck lists its failing entries worst first, the worst explained at once,
and choosing another entry in the list updates the details panel (a round trip through the kernel); a real mouse
click on a cell of the gradcheck picture explains that cell and outlines it; screenshots of both views in the light
and the dark theme, after the figures were drawn again in the theme, with the contrast of the figures' text measured
on the pictures as the browser paints them. The last two tests guard against two defects found this way (the
verdict squeezing the Pause/Close buttons to "P…"/"C…", and text under 4.5:1 contrast in the dark theme).

Screenshots (look at them): ``test-artifacts/browser/training_monitor_{light,dark,paused}.png`` and
``gradcheck_{light,dark,detail,click}.png``.
"""

from __future__ import annotations

import ast
import re
from contextlib import closing

import pytest

from .conftest import COLOUR_JS, close_page, kernel_repr, light_then_dark, open_page

NB = "training_gradcheck.ipynb"
MONITOR = ".tl-training-monitor"
GRADCHECK = ".tl-gradcheck-view"
FIGURE = ".tl-figure"  # FigureWidget's root (figure.js): data-rendered (its theme), data-page, data-regions, data-ink
ACTION_MS = 15_000

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def tg(browser, lab):
    """The test notebook open in JupyterLab, every cell run."""
    page = open_page(browser, lab, "jupyterlab", NB, run_all=True)
    try:
        yield page
    finally:
        close_page(page)


def _image(loc) -> dict:
    """An <img> as the browser has it: loaded, its natural and its drawn size, and whether it fits the notebook."""
    return loc.evaluate("""img => { const r = img.getBoundingClientRect();
        const nb = img.closest('.jp-Notebook').getBoundingClientRect();
        return {complete: img.complete, natural: [img.naturalWidth, img.naturalHeight], shown: [r.width, r.height],
                inside: r.left >= nb.left - 1 && r.right <= nb.right + 1}; }""")


def test_monitor_shows_the_loss_and_the_diagnostics_figures(tg):
    from playwright.sync_api import expect

    page = tg
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    page.assert_no_widget_errors()
    mon = page.notebook.locator(MONITOR)
    expect(mon).to_be_visible(timeout=30_000)
    expect(mon.locator(".tl-training-status")).to_contain_text("step 30/30", timeout=ACTION_MS)
    for cls in ("tl-training-figure", "tl-training-diagnostics"):
        img = mon.locator(f".{cls} img")
        expect(img).to_have_count(1, timeout=ACTION_MS)
        expect(img).to_be_visible()
        info = _image(img)
        assert info["complete"] and min(info["natural"]) > 100 and min(info["shown"]) > 100, (cls, info)
        assert info["inside"], f"{cls}: the image is wider than the notebook: {info}"
    # the diagnostics figure is another picture than the loss plot; both are SVG (sharp at any zoom)
    kinds = mon.locator("img").evaluate_all("""imgs => Promise.all(imgs.map(async i => {
        const b = await (await fetch(i.src)).blob(); return [b.type, b.size]; }))""")
    assert [k for k, _ in kinds] == ["image/svg+xml"] * 2 and kinds[0] != kinds[1], kinds


def test_monitor_pause_says_resume_and_pauses(tg):
    from playwright.sync_api import expect

    page = tg
    mon = page.notebook.locator(MONITOR)
    pause = mon.locator("button.tl-pause")
    expect(pause).to_have_text("Pause")
    expect(mon.locator("button.tl-close")).to_have_text("Close")
    pause.click()
    expect(pause).to_have_text("Resume", timeout=ACTION_MS)
    expect(pause).to_have_class(re.compile(r"\bmod-active\b"))  # a pressed toggle button
    assert kernel_repr(page, "monitor.paused") == "True"
    page.shot("training_monitor_paused.png", mon)
    pause.click()
    expect(pause).to_have_text("Pause", timeout=ACTION_MS)
    assert kernel_repr(page, "monitor.paused") == "False"


def test_gradcheck_choosing_another_failing_entry_updates_the_details(tg):
    from playwright.sync_api import expect

    page = tg
    gc = page.notebook.locator(GRADCHECK)
    expect(gc).to_be_visible()
    expect(gc.locator(".tl-gradcheck-verdict")).to_contain_text("FAIL: 3 of 18 Jacobian entries differ")
    expect(gc.locator(".tl-gradcheck-figure img")).to_be_visible()
    select = gc.locator(".tl-gradcheck-failures select")
    options = select.locator("option")
    expect(options).to_have_count(3)
    texts = [t.replace("\xa0", " ") for t in options.all_inner_texts()]  # (ipywidgets writes spaces as nbsp)
    assert all(re.match(r"out0\[\d\] / in1\[\d\]: analytic 0 vs numeric ", t) for t in texts), texts
    numeric = [abs(float(t.rsplit(" ", 1)[1])) for t in texts]
    assert numeric == sorted(numeric, reverse=True), texts  # worst first (here: the largest |numeric|)
    assert select.evaluate("s => s.selectedIndex") == 0  # the worst is explained at once
    detail = gc.locator(".tl-gradcheck-detail")
    expect(detail).to_contain_text("backward nodes")
    expect(detail).to_contain_text("out0 ← Tanh ← MatVecWrong ← in1")
    first = detail.inner_text()
    r0, c0 = re.match(r"out0\[(\d)\] / in1\[(\d)\]", texts[0]).groups()
    assert f"(row {r0})" in first and f"(column {c0})" in first, first
    r2, c2 = re.match(r"out0\[(\d)\] / in1\[(\d)\]", texts[2]).groups()
    select.select_option(index=2)
    expect(detail).to_contain_text(f"in1[{c2}] (column {c2})", timeout=ACTION_MS)
    expect(detail).to_contain_text(f"out0[{r2}] (row {r2})")
    expect(detail).to_contain_text(texts[2].rsplit(" ", 1)[1][:5])  # its numeric value
    assert detail.inner_text() != first
    assert kernel_repr(page, "check.failures.index") == "2"
    page.shot("gradcheck_detail.png", gc)


def _centre_of(box, img_box) -> tuple[float, float]:
    """Page coordinates of the centre of ``box`` ([left, top, right, bottom], fractions of the picture)."""
    left, top, right, bottom = box
    return (img_box["x"] + (left + right) / 2 * img_box["width"], img_box["y"] + (top + bottom) / 2 * img_box["height"])


def test_gradcheck_a_mouse_click_on_a_cell_of_the_picture_explains_it(tg):
    from playwright.sync_api import expect

    page = tg
    gc = page.notebook.locator(GRADCHECK)
    figure = gc.locator(f".tl-gradcheck-figure {FIGURE}")
    expect(figure).to_have_attribute("data-regions", "6")  # 2 pairs x 3 panels are clickable
    img = figure.locator("img.tl-fig-img")
    img.scroll_into_view_if_needed()
    select, detail = gc.locator(".tl-gradcheck-failures select"), gc.locator(".tl-gradcheck-detail")
    # a failing entry that is not the one explained: the list's last (pair 1 is out0 w.r.t. in1)
    text = select.locator("option").nth(2).inner_text().replace("\xa0", " ")
    r, c = (int(v) for v in re.match(r"out0\[(\d)\] / in1\[(\d)\]", text).groups())
    box = ast.literal_eval(kernel_repr(page, f"check.cell_box(1, {r}, {c}, 'difference')"))
    x, y = _centre_of(box, img.bounding_box())
    page.mouse.move(x, y)
    expect(img).to_have_css("cursor", "crosshair")  # over a clickable panel
    page.mouse.click(x, y)
    expect(detail).to_contain_text(f"in1[{c}] (column {c})", timeout=ACTION_MS)
    expect(detail).to_contain_text(f"out0[{r}] (row {r})")
    for words in ("output 0 w.r.t. input 1", "FAIL: ", "node under test", "MatVecWrong",
                  "out0 ← Tanh ← MatVecWrong ← in1"):
        expect(detail).to_contain_text(words)
    assert kernel_repr(page, "check.selected") == f"(1, {r}, {c})"
    expect(select).to_have_js_property("selectedIndex", 2)  # the list follows the picture
    # the cell is outlined on the pair's three panels; the outline on the difference panel is under the pointer
    marks = figure.locator(".tl-fig-mark")
    expect(marks).to_have_count(3, timeout=ACTION_MS)
    for b in (marks.nth(2).bounding_box(), figure.locator(".tl-fig-region[data-id='5']").bounding_box()):
        assert b["x"] <= x <= b["x"] + b["width"] and b["y"] <= y <= b["y"] + b["height"], (b, x, y)
    page.shot("gradcheck_click.png", gc)
    # a passing cell (pair 0, analytic panel, row 1 column 4: out0[1] w.r.t. in0[1, 1]) is explained too
    box = ast.literal_eval(kernel_repr(page, "check.cell_box(0, 1, 4, 'analytic')"))
    page.mouse.click(*_centre_of(box, img.bounding_box()))
    expect(detail).to_contain_text("in0[1, 1] (column 4)", timeout=ACTION_MS)
    expect(detail).to_contain_text("PASS: within the tolerance")
    expect(select).to_have_js_property("selectedIndex", -1)  # not a failing entry: nothing chosen in the list
    # outside every panel (the figure's title): nothing changes
    page.mouse.click(*_centre_of([0.45, 0.0, 0.55, 0.02], img.bounding_box()))
    page.wait_for_timeout(300)
    assert kernel_repr(page, "check.selected") == "(0, 1, 4)"


@pytest.mark.parametrize("frontend", ["notebook7", "voila"])
def test_other_frontends_draw_the_figures_dark_and_answer_a_click(open_frontend, frontend):
    """Notebook 7 and Voila: the page's theme reaches the figures, and a click on a cell (found from the clickable
    region the picture reports: pair 1's difference panel, a 2x3 Jacobian) explains it."""
    from playwright.sync_api import expect

    page = open_frontend(frontend, NB)
    with closing(light_then_dark(page, _figures_drawn_in_the_page_theme)) as themes:
        for theme in themes:
            _figures_drawn_in_the_page_theme(page)
            if theme == "light":
                continue
            gc = page.notebook.locator(GRADCHECK)
            figure = gc.locator(f".tl-gradcheck-figure {FIGURE}")
            ink = figure.evaluate(FIGURE_INK_JS)
            assert ink["rendered"] == "dark" and ink["background_luminance"] < 0.05 and ink["contrast"] >= 4.5, ink
            region = figure.locator(".tl-fig-region[data-id='5']")
            region.scroll_into_view_if_needed()
            b = region.bounding_box()
            page.mouse.click(b["x"] + b["width"] * 0.5 / 3, b["y"] + b["height"] * 1.5 / 2)  # row 1, column 0
            detail = gc.locator(".tl-gradcheck-detail")
            expect(detail).to_contain_text("in1[0] (column 0)", timeout=ACTION_MS)
            expect(detail).to_contain_text("out0[1] (row 1)")
            expect(detail).to_contain_text("FAIL: ")
            expect(figure.locator(".tl-fig-mark")).to_have_count(3)
            page.shot(f"gradcheck_{frontend}_dark.png", gc)


def _figures_drawn_in_the_page_theme(page) -> None:
    """Every FigureWidget reported the page's theme and Python drew it again in it."""
    page.wait_for_function(f"""() => {{ const f = [...document.querySelectorAll('{FIGURE}')];
        return f.length === 3 && f.every(e => e.dataset.page && e.dataset.rendered === e.dataset.page); }}""",
                           timeout=ACTION_MS)


def test_screenshots_light_and_dark(tg):
    page = tg
    mon, gc = page.notebook.locator(MONITOR), page.notebook.locator(GRADCHECK)
    page.mouse.move(0, 0)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # no focus ring in the shots
    seen = {}
    with closing(light_then_dark(page, _figures_drawn_in_the_page_theme)) as themes:
        for theme in themes:
            _figures_drawn_in_the_page_theme(page)
            page.shot(f"training_monitor_{theme}.png", mon)
            page.shot(f"gradcheck_{theme}.png", gc)
            seen[theme] = [mon.locator(f".tl-training-figure {FIGURE}").evaluate(FIGURE_INK_JS),
                           mon.locator(f".tl-training-diagnostics {FIGURE}").evaluate(FIGURE_INK_JS),
                           gc.locator(f".tl-gradcheck-figure {FIGURE}").evaluate(FIGURE_INK_JS)]
            if theme == "dark":  # the theme reaches the widgets: the buttons and the status line are light on dark
                status = mon.locator(".tl-training-status")
                assert _luminance(page, status, "color") > 0.5, "the status line is not light text in the dark theme"
    print("\nfigures as painted (background, ink, contrast, ink pixels):", seen)
    for theme, figures in seen.items():
        for name, f in zip(("loss", "diagnostics", "gradcheck"), figures):
            assert f["rendered"] == theme, (theme, name, f)
            # the figure is transparent: the page's own colour is what most of the picture shows
            assert (f["background_luminance"] > 0.8) if theme == "light" else (f["background_luminance"] < 0.05), f
            assert f["ink_pixels"] > 2000, f"{theme} {name}: little text in the theme's ink colour: {f}"
            assert f["contrast"] >= 4.5, f"{theme} {name}: text under 4.5:1 on the page: {f}"


# How a FigureWidget's picture reads where it is: the SVG painted (at 3x, as a zoomed-in or dense screen would) over
# what is behind it (the page and the picture's own background); then the most common colour (the background seen),
# how many pixels have the figure's text colour (data-ink), and the WCAG contrast of that colour on that background.
FIGURE_INK_JS = """async root => {""" + COLOUR_JS + """
  const img = root.querySelector('img.tl-fig-img');
  await img.decode();
  const r = img.getBoundingClientRect(), k = 3;
  const W = Math.round(r.width * k), H = Math.round(r.height * k);
  const chain = [];
  for (let e = img; e; e = e.parentElement) chain.unshift(getComputedStyle(e).backgroundColor);
  const bg = paint('#fff', ...chain), ink = paint(root.dataset.ink);
  const cv2 = document.createElement('canvas'); cv2.width = W; cv2.height = H;
  const c2 = cv2.getContext('2d', {willReadFrequently: true});
  c2.fillStyle = `rgb(${bg.join(',')})`; c2.fillRect(0, 0, W, H);
  c2.drawImage(img, 0, 0, W, H);
  const d = c2.getImageData(0, 0, W, H).data;
  const counts = new Map();
  let inkPixels = 0;
  for (let i = 0; i < d.length; i += 4) {
    const key = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
    counts.set(key, (counts.get(key) || 0) + 1);
    if (Math.abs(d[i] - ink[0]) <= 6 && Math.abs(d[i + 1] - ink[1]) <= 6 && Math.abs(d[i + 2] - ink[2]) <= 6)
      inkPixels++;
  }
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
  const seen = [(top >> 16) & 255, (top >> 8) & 255, top & 255];
  return {rendered: root.dataset.rendered, page: root.dataset.page, background: seen,
          background_luminance: +lum(seen).toFixed(3), ink, ink_pixels: inkPixels,
          contrast: +contrast(seen, ink).toFixed(2)};
}"""


# ---- two defects of widgets/gradcheck_view.py seen in the screenshots above, now fixed -------------------------------
def test_gradcheck_buttons_show_their_labels(tg):
    gc = tg.notebook.locator(GRADCHECK)
    for cls in ("tl-pause", "tl-close"):
        b = gc.locator(f"button.{cls}")
        clipped = b.evaluate("b => b.scrollWidth > b.clientWidth + 1 || b.getBoundingClientRect().width < 40")
        assert not clipped, f"{cls}: its label is cut ({b.bounding_box()})"


def test_gradcheck_text_is_readable_in_the_dark_theme(tg):
    page = tg
    gc = page.notebook.locator(GRADCHECK)
    page.set_theme("dark")
    try:
        found = gc.evaluate(CONTRAST_JS)
    finally:
        page.set_theme("light")
    print("\ngradcheck text contrast in the dark theme:", found)
    low = {k: v for k, v in found.items() if v < 4.5}
    assert not low, f"text under 4.5:1 on the dark background: {low}"


def _luminance(page, loc, prop: str) -> float:
    return loc.evaluate("""(e, prop) => { const cx = document.createElement('canvas').getContext('2d');
        cx.fillStyle = getComputedStyle(e)[prop]; cx.fillRect(0, 0, 1, 1);
        const [r, g, b] = cx.getImageData(0, 0, 1, 1).data;
        const f = v => (v /= 255, v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); }""", prop)


# the WCAG contrast, against the background behind them, of the colours of the view's text (td and b elements)
CONTRAST_JS = """root => {""" + COLOUR_JS + """
  const out = {};
  for (const el of root.querySelectorAll('.tl-gradcheck-detail td, .tl-gradcheck-verdict b')) {
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.unshift(getComputedStyle(e).backgroundColor);
    const bg = paint('#fff', ...chain), fg = paint('#fff', ...chain, getComputedStyle(el).color);
    const key = `${el.tagName.toLowerCase()} ${getComputedStyle(el).color}`;
    out[key] = Math.min(out[key] ?? 99, +contrast(bg, fg).toFixed(2));
  }
  return out; }"""
