"""The tutorials in a real browser: ``00_tour`` and ``03_stepping_through_backward`` run top to bottom in
JupyterLab, their widgets render, and clicking them does what the text tells the reader it does.

nbval (``make test``) checks the notebooks' text outputs; only a browser shows whether the ipywidgets views
actually render and respond. Screenshots (look at them): ``test-artifacts/browser/tutorial_*.png``.
"""

from __future__ import annotations

import re

import pytest

RUN_ALL_MS = 240_000  # the tour trains a model: about 15 s alone, more on a loaded 2-core machine


def _run_all(page) -> None:
    page.run("notebook:run-all-cells", timeout_ms=RUN_ALL_MS)
    page.wait_idle(RUN_ALL_MS)
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())


@pytest.mark.browser
def test_tour_dashboard_and_training_monitor(open_notebook):
    from playwright.sync_api import expect

    page = open_notebook("00_tour.ipynb")
    _run_all(page)
    nb = page.notebook

    # the training monitor: a full progress bar, the final status line, a drawn loss plot
    monitor = nb.locator(".tl-view.tl-training-monitor")
    expect(monitor).to_be_visible(timeout=30_000)
    status = monitor.locator(".tl-training-status")
    expect(status).to_contain_text(re.compile(r"step (\d+)/\1"), timeout=30_000)
    assert "test_acc" in status.inner_text(), status.inner_text()
    expect(monitor.locator(".tl-training-figure img")).to_have_count(1, timeout=30_000)
    page.shot("tutorial_00_monitor.png", monitor)
    print("\nmonitor status:", status.inner_text())

    # the dashboard: five tabs; each one, when clicked, shows its view
    dash = nb.locator(".tl-view.tl-dashboard").first  # the tour shows the dashboard again after training
    expect(dash).to_be_visible(timeout=30_000)
    tabs = dash.locator(".lm-TabBar-tab")
    expect(tabs).to_have_count(5)
    assert [t.strip() for t in tabs.all_inner_texts()] == ["Graph", "Backward", "Storage", "Kernels", "Memory"]
    for title, css in (("Graph", "tl-graph-view"), ("Backward", "tl-backward-stepper"),
                       ("Storage", "tl-storage-view"), ("Kernels", "tl-kernel-timeline"),
                       ("Memory", "tl-memory-view")):
        dash.locator(".lm-TabBar-tab", has_text=title).click()
        view = dash.locator(f".tl-view.{css}")
        expect(view).to_be_visible(timeout=15_000)
        if title in ("Graph", "Backward"):  # the browser-drawn graph: boxes painted
            expect(view.locator("g.tl-box").first).to_be_visible(timeout=15_000)
        elif title == "Storage":  # the storages as strips, drawn in SVG
            expect(view.locator("g.tl-st-block").first).to_be_visible(timeout=15_000)
        else:  # the launches, or the bytes alive, drawn on a canvas
            expect(view.locator("canvas").first).to_be_visible(timeout=15_000)
        page.shot(f"tutorial_00_dashboard_{title.lower()}.png", dash)
    # the Kernels tab counted the training's launches; the Storage tab lists the model's parameters
    dash.locator(".lm-TabBar-tab", has_text="Kernels").click()
    timeline = dash.locator(".tl-kernel-timeline")
    expect(timeline).to_contain_text(re.compile(r"\d+ launches"), timeout=15_000)
    launches = int(re.search(r"(\d+) launches", timeline.inner_text()).group(1))
    assert launches > 1000, timeline.inner_text()
    dash.locator(".lm-TabBar-tab", has_text="Storage").click()
    expect(dash.locator(".tl-storage-view table.tl-storage-table")).to_contain_text("0.weight", timeout=15_000)
    page.assert_no_widget_errors()
    page.shot("tutorial_00_final.png")


@pytest.mark.browser
def test_stepping_through_backward_by_clicking(open_notebook):
    from playwright.sync_api import expect

    page = open_notebook("03_stepping_through_backward.ipynb")
    _run_all(page)
    stepper = page.notebook.locator(".tl-view.tl-backward-stepper")
    expect(stepper).to_be_visible(timeout=30_000)
    current, filled = stepper.locator(".tl-status"), stepper.locator("g.tl-box.tl-filled")
    button = {label: stepper.get_by_role("button", name=label, exact=True)
              for label in ("Step", "Step 10", "Run to end", "Reset")}
    params = stepper.locator("g.tl-box[data-kind='param']")
    # the notebook ran the stepper to the end: every parameter's box is filled
    expect(current).to_contain_text("done")
    expect(filled).to_have_count(params.count())

    # Reset: back to the start, every .grad as before stepping (cleared in the notebook)
    button["Reset"].click()
    expect(current).to_contain_text("press Step", timeout=15_000)
    expect(filled).to_have_count(0)
    page.shot("tutorial_03_reset.png", stepper)

    # Step by step, in the order the notebook's table printed: Div, Sum, CrossEntropy, Linear (fills 2.*)
    for i, name in enumerate(["Div", "Sum", "CrossEntropy", "Linear"], start=1):
        button["Step"].click()
        expect(current).to_contain_text(f"step {i} of", timeout=15_000)
        expect(current).to_contain_text(f": {name}")
        expect(stepper.locator("g.tl-box.tl-current")).to_have_count(1)
    # the last step was the second Linear: it filled 2.weight and 2.bias; the first layer's are still empty
    expect(filled).to_have_count(2, timeout=15_000)
    expect(stepper.locator(".tl-details")).to_contain_text("weight: 2.weight")
    page.shot("tutorial_03_after_4_steps.png", stepper)

    button["Run to end"].click()
    expect(current).to_contain_text("done", timeout=15_000)
    expect(filled).to_have_count(params.count())
    page.assert_no_widget_errors()
    page.shot("tutorial_03_final.png")
