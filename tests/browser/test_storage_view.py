"""The storage picture (``StorageView``: ``widgets/static/storage.js``) in a real browser, in each of the three
front-ends a reader may use: JupyterLab, Notebook 7 and Voila.

``storage_view.ipynb`` trains a small model with SGD + momentum on the simulated device ``sim`` and shows the view;
its last cell writes ``x`` in place. Per front-end the notebook is opened and run once (a module-scoped page); the
tests below then check, in order, that the picture is drawn (``g.tl-st-block`` per storage) with the names
(module paths, momentum buffers, notebook variables), that hovering a version badge shows the write site (the
browser alone), that filtering by name and by device works (a round trip through the kernel: Voila keeps its
kernel for the widgets, so it works there too), and finally photograph the view in the light and the dark theme
(Voila: ``?theme=dark``, which runs the notebook again).

Screenshots (look at them): ``test-artifacts/browser/storage_view_<frontend>_{light,dark,hover,filtered}.png``.
"""

from __future__ import annotations

from contextlib import closing

import pytest

from .conftest import COLOUR_JS, FRONTENDS, drawn_page, light_then_dark

NB = "storage_view.ipynb"
ROOT = ".tl-storage-view .tl-storage"
RENDER_MS = 60_000
ACTION_MS = 15_000

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", params=FRONTENDS)
def sv(request, browser):
    """The test notebook open in one front-end, every cell run, the picture drawn."""
    yield from drawn_page(request, browser, NB, _wait_drawn)


def _wait_drawn(page) -> None:
    """The root is painted: data-blocks (set after each drawing) > 0 and as many g.tl-st-block as it says."""
    page.wait_for_function(
        """sel => { const r = document.querySelector(sel);
             return r && +r.dataset.blocks > 0
               && r.querySelectorAll('g.tl-st-block').length === +r.dataset.blocks; }""",
        arg=ROOT, timeout=RENDER_MS)


def _labels(page) -> list[str]:
    return page.evaluate(f"""() => [...document.querySelectorAll('{ROOT} g.tl-st-block')]
                               .map(b => b.querySelector('.tl-st-name').textContent)""")


def _x_block(page):
    root = page.locator(ROOT)
    return root.locator("g.tl-st-block[data-kind='var']", has=page.locator("text.tl-st-name", has_text="x")).first


def test_storage_view_renders_the_names(sv):
    from playwright.sync_api import expect

    page = sv
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    page.assert_no_widget_errors()
    root = page.notebook.locator(ROOT)
    expect(root).to_be_visible()
    labels = _labels(page)
    for name in ("model.0.weight", "model.0.weight.grad", "model.0.weight.momentum_buffer", "model.2.bias", "x"):
        assert name in labels, labels
    # the sim parameters have two lanes (host, device); x (cpu) has one, with its views over it
    w_block = root.locator("g.tl-st-block", has=page.locator(".tl-st-name", has_text="model.0.weight")).first
    assert w_block.locator("g.tl-st-lane").count() == 2
    assert sorted(_x_block(page).locator("g.tl-st-track").evaluate_all("ts => ts.map(t => t.dataset.view)")) == \
        sorted(["x", "xT", "v"])
    # every name is drawn inside the picture (not clipped by the svg's right edge)
    over = page.evaluate(f"""() => {{ const svg = document.querySelector('{ROOT} svg.tl-st-svg');
        const right = svg.getBoundingClientRect().right;
        return [...svg.querySelectorAll('.tl-st-name, .tl-st-sub, .tl-st-detail')]
          .filter(t => t.getBoundingClientRect().right > right + 1).map(t => t.textContent); }}""")
    assert over == [], f"text past the picture's right edge: {over}"


def test_storage_view_hover_shows_the_write_site(sv):
    from playwright.sync_api import expect

    page = sv
    root = page.locator(ROOT)
    # hover the version badge of x (written by x.mul_(2) in the last cell): the tooltip names the write site
    badge = _x_block(page).locator("g.tl-st-badge")
    assert badge.get_attribute("data-version") == "1"
    badge.scroll_into_view_if_needed()
    badge.hover()
    tip = root.locator(".tl-tooltip")
    expect(tip).to_be_visible(timeout=ACTION_MS)
    expect(tip).to_contain_text("mul_ at cell In[")
    page.shot(f"storage_view_{page.frontend}_hover.png", root)
    page.mouse.move(0, 0)
    expect(tip).to_be_hidden(timeout=ACTION_MS)


def test_storage_view_filters_by_name_and_device(sv):
    page = sv
    root = page.locator(ROOT)
    n_all = len(_labels(page))
    # filter by name: only the momentum buffers; then by device: only cpu storages
    root.locator("input.tl-st-filter").fill("momentum")
    page.wait_for_function(f"""() => {{ const n = [...document.querySelectorAll('{ROOT} .tl-st-name')];
        return n.length > 0 && n.every(e => e.textContent.includes('momentum')); }}""", timeout=ACTION_MS)
    assert len(_labels(page)) == 4, _labels(page)
    page.shot(f"storage_view_{page.frontend}_filtered.png", root)
    root.locator("input.tl-st-filter").fill("")
    root.locator("select.tl-st-device").select_option("cpu")
    page.wait_for_function(f"""() => {{ const b = [...document.querySelectorAll('{ROOT} g.tl-st-block')];
        return b.length > 0 && b.every(e => e.querySelectorAll('g.tl-st-lane').length === 1); }}""",
                           timeout=ACTION_MS)
    assert "x" in _labels(page) and "model.0.weight" not in _labels(page)
    # back to everything, for the screenshots
    root.locator("select.tl-st-device").select_option("")
    page.wait_for_function(f"n => document.querySelectorAll('{ROOT} g.tl-st-block').length === n", arg=n_all,
                           timeout=ACTION_MS)
    page.assert_no_widget_errors()


def test_storage_view_screenshots_light_and_dark(sv):
    page = sv
    colours = {}
    with closing(light_then_dark(page, _wait_drawn)) as themes:
        for theme in themes:
            root = page.locator(ROOT)
            page.evaluate("() => document.activeElement && document.activeElement.blur()")  # no focus ring
            page.mouse.move(0, 0)
            page.shot(f"storage_view_{page.frontend}_{theme}.png", root)
            colours[theme] = page.evaluate(LUMINANCE_JS, ROOT)
    # the dark theme reaches the picture: a dark background and light names
    print(f"\n{page.frontend} storage colours: {colours}")
    assert colours["dark"]["bg"] < 0.2 < colours["light"]["bg"], colours
    for theme, c in colours.items():
        assert c["contrast"] >= 4.5, (theme, c)


# the luminance of what is under the picture, and the contrast of a block's name on it
LUMINANCE_JS = """sel => {""" + COLOUR_JS + """
  const root = document.querySelector(sel);
  const chain = [];
  for (let e = root; e; e = e.parentElement) chain.unshift(getComputedStyle(e).backgroundColor);
  const bg = paint('#fff', ...chain);
  const name = getComputedStyle(root.querySelector('.tl-st-name')).fill;
  const fg = paint('#fff', ...chain, name);
  return {bg: +lum(bg).toFixed(3), name, contrast: +contrast(bg, fg).toFixed(2)}; }"""
