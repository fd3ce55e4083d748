"""Views that free what they hold, in JupyterLab: ``view_lifecycle.ipynb``'s view cell (a nanoGPT forward pass and
its ``GraphView``) is run six times as a learner re-runs a cell (JupyterLab sends the cell's id with each run), then
its output is cleared (JupyterLab removes the widget's view and tells the kernel through ipywidgets' view count).
The kernel's memory (VmRSS after ``gc.collect()`` and ``malloc_trim``) and what is registered must stay flat, and
the view whose output was cleared is released at the end of the next cell.
"""

from __future__ import annotations

import json

import pytest

NB = "view_lifecycle.ipynb"
VIEW_CELL, COUNT_CELL = 2, 3


def _run_cell(page, index: int) -> None:
    page.evaluate("i => { const nb = window.jupyterapp.shell.currentWidget.content; nb.activeCellIndex = i; "
                  "nb.mode = 'command'; }", index)
    page.run("notebook:run-cell")
    page.wait_idle()


def _counts(page) -> dict:
    _run_cell(page, COUNT_CELL)
    text = page.notebook.locator(".jp-Cell").nth(COUNT_CELL).locator(".jp-OutputArea-output").last.inner_text()
    return json.loads(text.strip().splitlines()[-1])


@pytest.mark.browser
def test_rerunning_a_view_cell_and_clearing_its_output_in_lab(open_notebook):
    from playwright.sync_api import expect

    page = open_notebook(NB)
    page.run("notebook:run-all-cells")
    page.wait_idle()
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    views = page.notebook.locator(".tl-view.tl-graph-view")
    expect(views).to_have_count(1, timeout=60_000)
    first = _counts(page)
    for _ in range(5):
        _run_cell(page, VIEW_CELL)
        expect(views).to_have_count(1, timeout=60_000)
    after = _counts(page)
    assert page.cell_errors() == []
    page.assert_no_widget_errors()
    for key in ("open_views", "subscribers", "line_recorders", "widgets"):
        assert after[key] == first[key], (first, after)
    assert after["rss_mb"] - first["rss_mb"] < 5, (first, after)

    page.evaluate("i => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = i; }", VIEW_CELL)
    page.run("notebook:clear-cell-output")
    expect(views).to_have_count(0, timeout=30_000)
    _counts(page)  # the next cell ends: the view the front-end no longer shows is released
    cleared = _counts(page)
    print("kernel after run 1, after 5 reruns, after clearing the output:", first, after, cleared)
    assert cleared["open_views"] == after["open_views"] - 1 and cleared["line_recorders"] == 0, (after, cleared)
    assert cleared["widgets"] == after["widgets"] - 2  # (the GraphWidget and its Layout)
