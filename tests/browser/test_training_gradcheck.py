"""The ipywidgets views' controls in JupyterLab: ``training_gradcheck.ipynb`` trains a small MLP for 30 steps with a
``TrainingMonitor(30, model=model)`` open (so it shows a second figure, the training diagnostics) and shows a
failing ``GradcheckView`` (a matrix-vector Function whose backward forgets part of one gradient: 3 failing entries).

The notebook is opened and run once (a module-scoped page); the tests below then, in order: both monitor figures
are shown as images; clicking Pause turns its label into "Resume" and pauses the monitor in Python, clicking again
resumes it; the gradcheck lists its failing entries worst first, the worst explained at once, and choosing another
entry in the list updates the details panel (a round trip through the kernel); screenshots of both views in the
light and the dark theme. The last two tests guard against two defects found this way (the verdict squeezing the
Pause/Close buttons to "P…"/"C…", and text under 4.5:1 contrast in the dark theme).

Screenshots (look at them): ``test-artifacts/browser/training_monitor_{light,dark,paused}.png`` and
``gradcheck_{light,dark,detail}.png``.
"""

from __future__ import annotations

import re

import pytest

from .conftest import COLOUR_JS, close_page, kernel_repr, open_page

NB = "training_gradcheck.ipynb"
MONITOR = ".tl-training-monitor"
GRADCHECK = ".tl-gradcheck-view"
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
    # the diagnostics figure is another picture than the loss plot
    srcs = mon.locator("img").evaluate_all("imgs => imgs.map(i => i.src)")
    assert len(set(srcs)) == 2, "the two figures are the same image"


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


def test_screenshots_light_and_dark(tg):
    page = tg
    mon, gc = page.notebook.locator(MONITOR), page.notebook.locator(GRADCHECK)
    page.mouse.move(0, 0)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # no focus ring in the shots
    page.shot("training_monitor_light.png", mon)
    page.shot("gradcheck_light.png", gc)
    page.set_theme("dark")
    try:
        page.assert_no_widget_errors()
        page.shot("training_monitor_dark.png", mon)
        page.shot("gradcheck_dark.png", gc)
        # the theme reaches the widgets: the buttons and the status line are light on dark
        status = mon.locator(".tl-training-status")
        assert _luminance(page, status, "color") > 0.5, "the status line is not light text in the dark theme"
    finally:
        page.set_theme("light")


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
