"""The storage picture (``StorageView``: ``widgets/static/storage.js``) in JupyterLab: ``storage_view.ipynb`` trains a
small model with SGD + momentum on the simulated device ``sim`` and shows the view. The test checks that the names
appear (module paths, momentum buffers, notebook variables), that hovering a version badge shows the write site,
that filtering by name and by device works, and photographs the view in the light and the dark theme.

Screenshots (look at them): ``test-artifacts/browser/storage_view_{light,dark}.png`` and
``storage_view_filtered.png``.
"""

from __future__ import annotations

import pytest

NB = "storage_view.ipynb"
ROOT = ".tl-storage-view .tl-storage"
ACTION_MS = 15_000

pytestmark = pytest.mark.browser


def _labels(page) -> list[str]:
    return page.evaluate(f"""() => [...document.querySelectorAll('{ROOT} g.tl-st-block')]
                               .map(b => b.querySelector('.tl-st-name').textContent)""")


def test_storage_view_names_hover_filter_and_themes(open_notebook):
    from playwright.sync_api import expect

    page = open_notebook(NB)
    page.run("notebook:run-all-cells")
    page.wait_idle()
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    root = page.notebook.locator(ROOT)
    expect(root).to_be_visible(timeout=30_000)
    page.wait_for_function(f"() => +(document.querySelector('{ROOT}') || {{dataset: {{}}}}).dataset.blocks > 0",
                           timeout=30_000)
    labels = _labels(page)
    for name in ("model.0.weight", "model.0.weight.grad", "model.0.weight.momentum_buffer", "model.2.bias", "x"):
        assert name in labels, labels
    # the sim parameters have two lanes (host, device); x (cpu) has one, with its views over it
    w_block = root.locator("g.tl-st-block", has=page.locator(".tl-st-name", has_text="model.0.weight")).first
    assert w_block.locator("g.tl-st-lane").count() == 2
    x_block = root.locator("g.tl-st-block[data-kind='var']", has=page.locator("text.tl-st-name", has_text="x")).first
    assert sorted(x_block.locator("g.tl-st-track").evaluate_all("ts => ts.map(t => t.dataset.view)")) == \
        sorted(["x", "xT", "v"])

    # hover the version badge of x (written by x.mul_(2) in the last cell): the tooltip names the write site
    badge = x_block.locator("g.tl-st-badge")
    assert badge.get_attribute("data-version") == "1"
    badge.scroll_into_view_if_needed()
    badge.hover()
    tip = root.locator(".tl-tooltip")
    expect(tip).to_be_visible(timeout=ACTION_MS)
    expect(tip).to_contain_text("mul_ at cell In[")
    page.shot("storage_view_hover.png", root)
    page.mouse.move(0, 0)

    page.shot("storage_view_light.png", root)
    page.set_theme("dark")
    try:
        page.shot("storage_view_dark.png", root)
    finally:
        page.set_theme("light")

    # filter by name: only the momentum buffers; then by device: only cpu storages
    root.locator("input.tl-st-filter").fill("momentum")
    page.wait_for_function(f"""() => {{ const n = [...document.querySelectorAll('{ROOT} .tl-st-name')];
        return n.length > 0 && n.every(e => e.textContent.includes('momentum')); }}""", timeout=ACTION_MS)
    assert len(_labels(page)) == 4, _labels(page)
    page.shot("storage_view_filtered.png", root)
    root.locator("input.tl-st-filter").fill("")
    root.locator("select.tl-st-device").select_option("cpu")
    page.wait_for_function(f"""() => {{ const b = [...document.querySelectorAll('{ROOT} g.tl-st-block')];
        return b.length > 0 && b.every(e => e.querySelectorAll('g.tl-st-lane').length === 1); }}""",
                           timeout=ACTION_MS)
    assert "x" in _labels(page) and "model.0.weight" not in _labels(page)
    page.assert_no_widget_errors()
