"""The browser-test setup itself: Lab opens a notebook, runs it, renders an ipywidgets Button, and a click
reaches the kernel and comes back. If this fails, the views are not to blame."""

from __future__ import annotations

import pytest


@pytest.mark.browser
def test_lab_renders_and_drives_a_button(open_notebook):
    from playwright.sync_api import expect

    page = open_notebook("smoke.ipynb")
    page.run("notebook:run-all-cells")
    page.wait_idle()
    nb = page.notebook
    button = nb.locator(".smoke-button")
    expect(button).to_be_visible(timeout=30_000)
    expect(button).to_have_text("Click me")
    label = nb.locator(".smoke-label")
    expect(label).to_have_text("clicks: 0")
    button.click()
    expect(label).to_have_text("clicks: 1", timeout=10_000)
    button.click()
    expect(label).to_have_text("clicks: 2", timeout=10_000)
    page.shot("smoke.png")
    assert page.cell_errors() == []
    page.assert_no_widget_errors()
