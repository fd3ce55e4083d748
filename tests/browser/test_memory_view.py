"""``MemoryTimelineView`` (``widgets/static/memory.js``: a canvas per run) in a real browser, JupyterLab, light and
dark, at model scale.

``memory_view.ipynb`` records one training step of an MLP (with Adam), the same MLP's forward under ``no_grad`` to
compare, a step on the ``sim`` device whose results are read on the host (its menu switches to ``cpu``: the host
copies), and one step of a learner's nanoGPT (6 layers, 192-dim; AdamW) of about 900 events and 700 storages.
The tests check that each view draws (the stacked areas in the categories' colours, read back from the canvas),
that hovering asks Python for what was alive (the answer names parameters), that a click pins the details, that
the comparison shares one scale, and they photograph the views in both themes:
``test-artifacts/browser/memory_view_{mlp,compare,copies,gpt}_{light,dark}.png``.
"""

from __future__ import annotations

from contextlib import closing

import pytest

from .conftest import lab_page_run_all, light_then_dark, views_js_errors, worst_text_contrast

NB = "memory_view.ipynb"
RENDER_MS = 180_000
ACTION_MS = 15_000
VIEWS = {"mlp": ".mv-mlp .tl-memory", "compare": ".mv-compare .tl-memory", "copies": ".mv-copies .tl-memory",
         "gpt": ".mv-gpt .tl-memory"}
# as static/memory.js draws them in the light theme
PARAMETERS_RGB = [76, 120, 168]
HOST_COPIES_RGB = [237, 201, 72]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def mv(request, browser):
    yield from lab_page_run_all(browser, request, NB, _wait_drawn, RENDER_MS)


def _wait_drawn(page) -> None:
    page.wait_for_function(
        """sels => sels.every(sel => { const r = document.querySelector(sel); return r && +r.dataset.drawn > 0; })""",
        arg=list(VIEWS.values()), timeout=RENDER_MS)


def _pixel(page, sel: str, run: int, fx: float, fy: float) -> list[int]:
    """The RGB at a fraction of a run's plot area (inside the axes)."""
    return page.evaluate(
        """([sel, run, fx, fy]) => { const c = document.querySelectorAll(sel + ' canvas.tl-me-canvas')[run];
             const d = window.devicePixelRatio || 1, w = parseFloat(c.style.width), h = parseFloat(c.style.height);
             const x = 70 + (w - 82) * fx, y = 18 + (h - 44) * fy;
             const p = c.getContext('2d').getImageData(Math.floor(x * d), Math.floor(y * d), 1, 1).data;
             return [p[0], p[1], p[2]]; }""", [sel, run, fx, fy])


def test_the_views_draw_without_errors(mv):
    page = mv
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    page.assert_no_widget_errors()
    assert views_js_errors(page, r"tl-|anywidget|memory") == []
    assert page.locator(VIEWS["compare"]).get_attribute("data-runs") == "2"
    # the bottom of every column is the parameters (alive throughout): the first category stacked
    assert _pixel(page, VIEWS["mlp"], 0, 0.5, 0.995) == PARAMETERS_RGB
    title = page.locator(VIEWS["gpt"] + " .tl-me-title").inner_text()
    assert "nanoGPT step" in title and "peak" in title
    page.shot("memory_view_light.png")


def test_hover_asks_python_what_was_alive_and_a_click_pins_it(mv):
    from playwright.sync_api import expect

    page = mv
    root = page.locator(VIEWS["gpt"])
    canvas = root.locator("canvas.tl-me-canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    canvas.hover(position={"x": 70 + (box["width"] - 82) * 0.3, "y": box["height"] / 2})
    tip = root.locator(".tl-tooltip")
    expect(tip).to_contain_text("parameters")
    details = root.locator(".tl-me-details")
    expect(details).to_contain_text("after event", timeout=ACTION_MS)     # (Python's answer)
    expect(details.locator("tr[data-storage]").first).to_be_visible()
    canvas.click(position={"x": 70 + (box["width"] - 82) * 0.6, "y": box["height"] / 2})
    page.wait_for_function("sel => document.querySelector(sel).dataset.pinned !== undefined", arg=VIEWS["gpt"],
                           timeout=ACTION_MS)
    expect(details).to_contain_text("(clicked)")
    page.mouse.move(0, 0)
    expect(tip).to_be_hidden(timeout=ACTION_MS)
    expect(details).to_contain_text("(clicked)")  # (a pinned event stays when the pointer leaves)
    page.shot("memory_view_gpt_pinned.png", root)


def test_a_row_outlines_its_storage_in_a_storage_view(mv):
    from playwright.sync_api import expect

    page = mv
    row = page.locator(VIEWS["mlp"] + " .tl-me-details tr[data-storage]").first  # (the peak's largest: a weight)
    row.scroll_into_view_if_needed()
    sid = row.get_attribute("data-storage")
    row.click()
    storage = page.locator(".mv-storage .tl-storage")
    expect(storage).to_have_attribute("data-selected", sid, timeout=ACTION_MS)  # (a round trip through Python)
    expect(storage.locator(f"g.tl-st-block.tl-st-selected[data-storage-id='{sid}']")).to_have_count(1)
    page.shot("memory_view_selects_storage.png", storage)


def test_the_comparison_shares_one_scale(mv):
    page = mv
    sel = VIEWS["compare"]
    titles = page.locator(sel + " .tl-me-title").all_inner_texts()
    assert titles[0].startswith("MLP, batch 64") and titles[1].startswith("no_grad")
    # no_grad saved nothing: its stack (parameters, the input, the output) is far lower on the shared scale, so
    # the middle of its panel is empty where the training step's is filled
    assert _pixel(page, sel, 1, 0.5, 0.2) != PARAMETERS_RGB


# (pixels of the host copies' colour in the plot, and the runs of opaque dark pixels 3 px above the x axis: the
# copies' triangles, drawn in the text colour, which no category's colour is near in the light theme)
COPIES_JS = """([sel, rgb]) => { const c = document.querySelector(sel + ' canvas.tl-me-canvas');
  const d = window.devicePixelRatio || 1, w = parseFloat(c.style.width), h = parseFloat(c.style.height);
  const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let yellow = 0, marks = 0;
  for (let i = 0; i < img.length; i += 4) {
    if (img[i] === rgb[0] && img[i + 1] === rgb[1] && img[i + 2] === rgb[2]) yellow++;
  }
  const y = Math.floor((h - 26 - 3) * d);
  let inMark = false;
  for (let x = Math.ceil(71 * d); x < Math.floor((w - 12) * d); x++) {
    const k = (y * c.width + x) * 4;
    const dark = img[k + 3] > 200 && Math.max(img[k], img[k + 1], img[k + 2]) < 90;
    if (dark && !inMark) marks++;  // (runs of dark pixels: one per triangle)
    inMark = dark;
  }
  return [yellow, marks]; }"""


def test_copies_between_host_and_device_are_marked_and_the_host_copies_drawn(mv):
    page = mv
    sel = VIEWS["copies"]
    title = page.locator(sel + " .tl-me-title")
    assert "on sim:0" in title.inner_text()
    # the batch's upload, print's download and the gradient's .numpy()
    assert page.locator(sel + " section.tl-me-panel").get_attribute("data-transfers") == "3"
    sub = page.locator(sel + " .tl-me-sub").inner_text()
    assert "▼ 2 to the host" in sub and "▲ 1 to the device (16.0 KiB)" in sub, sub
    yellow, marks = page.evaluate(COPIES_JS, [sel, HOST_COPIES_RGB])
    assert yellow == 0 and marks >= 3, (yellow, marks)  # (the device holds no host copy)
    # the menu draws the host's memory instead: the host copies are there
    menu = page.locator(sel + " select.tl-me-device")
    assert menu.is_visible() and sorted(menu.locator("option").all_inner_texts()) == ["cpu", "sim:0"]
    drawn = int(page.locator(sel).get_attribute("data-drawn"))
    menu.select_option("cpu")
    page.wait_for_function("([sel, n]) => +document.querySelector(sel).dataset.drawn > n", arg=[sel, drawn],
                           timeout=ACTION_MS)
    assert "on cpu" in title.inner_text()
    yellow, marks = page.evaluate(COPIES_JS, [sel, HOST_COPIES_RGB])
    assert yellow > 50 and marks >= 3, (yellow, marks)
    assert "host copies" in page.locator(sel + " .tl-me-legend").inner_text()
    # the other views have one device: no menu
    assert not page.locator(VIEWS["mlp"] + " select.tl-me-device").is_visible()


# the view's texts whose contrast on what is painted under them is checked
TEXTS = [".tl-me-title", ".tl-me-sub", ".tl-me-table td", ".tl-me-legend span", ".tl-me-dtitle"]


def test_light_and_dark(mv):
    page = mv
    with closing(light_then_dark(page, _wait_drawn)) as themes:
        for theme in themes:
            for name, sel in VIEWS.items():
                page.locator(sel).scroll_into_view_if_needed()
                page.shot(f"memory_view_{name}_{theme}.png", page.locator(sel))
                worst, what = worst_text_contrast(page, sel, TEXTS)
                assert worst >= 4.5, (name, theme, worst, what)
            dark = page.evaluate("sel => document.querySelector(sel).classList.contains('tl-me-dark')", VIEWS["mlp"])
            assert dark == (theme == "dark")
