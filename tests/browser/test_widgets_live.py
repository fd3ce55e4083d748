"""The notebook views in a real browser (issue 4's evidence): ``widgets_live.ipynb`` is run in JupyterLab,
the BackwardStepper is clicked, a new cell doing an in-place write is typed and run, and the StorageView
must show the version bump without anyone pressing its Refresh button.

Screenshots (look at them): ``test-artifacts/browser/widgets_live_*.png``.
"""

from __future__ import annotations

import re

import pytest

NB = "widgets_live.ipynb"

# the "version" cell of the row of one storage, found through the table's own header row
VERSION_CELL_JS = """([sel, sid]) => {
  const table = document.querySelector(sel + ' .tl-storage-view table.tl-storage-table');
  if (!table) return {error: 'no .tl-storage-table'};
  const header = [...table.rows[0].cells].map(c => c.textContent.trim());
  const col = header.indexOf('version');
  if (col < 0) return {error: 'no "version" column; header: ' + header.join(' | ')};
  const row = table.querySelector(`tr[data-storage-id="${sid}"]`);
  if (!row) return {error: `no row with data-storage-id=${sid}`,
                    ids: [...table.querySelectorAll('tr[data-storage-id]')].map(r => r.dataset.storageId)};
  return {version: row.cells[col].textContent.trim(), attr: row.dataset.version,
          owner: row.cells[header.indexOf('owner')] ? row.cells[header.indexOf('owner')].textContent.trim() : null};
}"""


def _version_cell(page, sid):
    return page.evaluate(VERSION_CELL_JS, [page.notebook_selector, sid])


def _type_and_run_new_cell(page, source: str) -> None:
    """Append a code cell at the end, type ``source`` into it through the keyboard, run it, wait for the kernel."""
    page.evaluate("""() => { const nb = window.jupyterapp.shell.currentWidget.content;
                             nb.activeCellIndex = nb.widgets.length - 1; nb.mode = 'command'; }""")
    page.run("notebook:insert-cell-below")
    page.run("notebook:enter-edit-mode")
    editor = page.notebook.locator(".jp-Cell.jp-mod-active .cm-content")
    editor.wait_for(state="visible", timeout=10_000)
    editor.focus()
    page.keyboard.insert_text(source)  # as typed, without the editor's auto-closing brackets
    typed = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCell"
                          ".model.sharedModel.getSource()")
    assert typed == source, f"the new cell holds {typed!r}, not {source!r}"
    page.run("notebook:run-cell")
    page.wait_idle()


@pytest.mark.browser
def test_views_live_in_lab(open_notebook):
    from playwright.sync_api import expect

    page = open_notebook(NB)
    page.run("notebook:run-all-cells")
    page.wait_idle()
    nb = page.notebook
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())

    stepper = nb.locator(".tl-view.tl-backward-stepper")
    storage = nb.locator(".tl-view.tl-storage-view")
    expect(stepper).to_be_visible(timeout=30_000)
    expect(storage).to_be_visible(timeout=30_000)
    for label in ("Step", "Step 10", "Run to end", "Reset"):
        expect(stepper.get_by_role("button", name=label, exact=True)).to_be_visible()
    page.assert_no_widget_errors()
    page.shot("widgets_live_1_after_run_all.png")

    # (1) Step three times: the status line, the outlined current box and the details panel change every time
    current, details = stepper.locator(".tl-status"), stepper.locator(".tl-details")
    step = stepper.get_by_role("button", name="Step", exact=True)
    seen = [current.inner_text()]
    boxes = []
    for i in range(3):
        step.click()
        expect(current).to_contain_text(f"step {i + 1} of", timeout=15_000)
        box = stepper.locator("g.tl-box.tl-current")
        expect(box).to_have_count(1, timeout=15_000)
        boxes.append(box.get_attribute("data-id"))
        seen.append(current.inner_text())
        name = re.search(r"step \d+ of \d+: (\w+)", seen[-1]).group(1)
        expect(details.locator(".tl-details-title")).to_contain_text(name, timeout=15_000)
        expect(details).to_contain_text("incoming")  # the gradients this node received and sent
    assert len(set(boxes)) == 3, f"the current node did not move: {boxes}"
    page.shot("widgets_live_2_stepper_after_3_steps.png", stepper)
    print("\nstepper after each step:", seen)

    # (2) an in-place write in a new cell bumps w's version; the storage view shows it by itself
    printed = nb.get_by_text(re.compile(r"w storage id: \d+")).inner_text()
    sid, v0 = map(int, re.search(r"w storage id: (\d+) version: (\d+)", printed).groups())
    before = _version_cell(page, sid)
    assert "error" not in before, before
    assert before["version"] == str(v0), before
    assert before["owner"] and "w" in before["owner"].split(", "), before
    _type_and_run_new_cell(page, "w.add_(1)\nprint('after add_:', w.storage.version)")
    expect(nb.get_by_text(f"after add_: {v0 + 1}")).to_be_visible(timeout=15_000)
    page.wait_for_function(f"([sel, sid]) => ({VERSION_CELL_JS})([sel, sid]).version === '{v0 + 1}'",
                           arg=[page.notebook_selector, sid], timeout=15_000)
    after = _version_cell(page, sid)
    assert after["version"] == str(v0 + 1) and after["attr"] == str(v0 + 1), after
    page.shot("widgets_live_3_storage_after_add.png", storage)

    # (3) nothing failed, nothing stuck loading, no cell error
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    page.assert_no_widget_errors()
    nb.locator(".jp-Cell").last.scroll_into_view_if_needed()
    page.shot("widgets_live_4_final.png")

