"""The interactive graph views (``GraphView``, ``BackwardStepper``: one anywidget, ``widgets/static/graph.js``) in
a real browser, in each of the three front-ends a reader may use: JupyterLab, Notebook 7 and Voila.

``graph_views.ipynb`` builds a 40-block residual MLP (330 graph nodes, folded into 11 boxes) and shows both
views. Per front-end the notebook is opened and run once (a module-scoped page); the tests below then click
through it in order: select a node (the details come back from Python), zoom with the wheel and the button,
expand the folded group, Step x3 / Back x1 in the stepper, and finally photograph the page in the light and
the dark theme. The selectors are the CSS hooks written down in ``widgets/static/CONTRACT.md``.

Screenshots (look at them): ``test-artifacts/browser/graph_<frontend>_<light|dark>.png``.
"""

from __future__ import annotations

import json
import re
from contextlib import closing

import pytest

from .conftest import COLOUR_JS, FRONTENDS, drawn_page, kernel_repr, light_then_dark

NB = "graph_views.ipynb"
GRAPH = ".tl-graph-view .tl-graph"          # GraphView's root
STEPPER = ".tl-backward-stepper .tl-graph"  # BackwardStepper's root
RENDER_MS = 60_000
ACTION_MS = 15_000  # a click's round trip through the kernel and back to a painted frame

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", params=FRONTENDS)
def gv(request, browser):
    """The test notebook open in one front-end, every cell run, both views drawn."""
    yield from drawn_page(request, browser, NB, _wait_drawn)


def _wait_drawn(page) -> None:
    """Both roots painted (data-boxes is set after the first frame), as many <g.tl-box> as data-boxes says."""
    page.wait_for_function(
        """([a, b]) => [a, b].every(sel => { const r = document.querySelector(sel);
             return r && +r.dataset.boxes > 0 && r.querySelectorAll('g.tl-box').length === +r.dataset.boxes; })""",
        arg=[GRAPH, STEPPER], timeout=RENDER_MS)


def _data(loc, name: str) -> str | None:
    return loc.get_attribute(f"data-{name}")


def _wait_data(page, sel: str, name: str, pred_js: str, timeout: int = ACTION_MS) -> str:
    """Wait until ``pred_js`` (a JS expression in ``v``, the attribute's value) holds for data-NAME of ``sel``."""
    page.wait_for_function(f"([sel, n]) => {{ const r = document.querySelector(sel); const v = r && r.dataset[n];"
                           f" return v != null && ({pred_js}); }}", arg=[sel, name], timeout=timeout)
    return page.evaluate("([sel, n]) => document.querySelector(sel).dataset[n]", [sel, name])


def _button(root, text: str):
    """A toolbar button by its visible text (the accessible names are longer: "Step forward", ...)."""
    return root.locator("button.tl-btn", has_text=re.compile(rf"^{re.escape(text)}$"))


# ---- GraphView ------------------------------------------------------------------------------------------
def test_graph_renders_and_a_click_selects_a_node(gv):
    from playwright.sync_api import expect

    page = gv
    graph = page.locator(GRAPH)
    # the outputs are where cell_errors() looks (.jp-OutputArea-output[data-mime-type]; stdout is
    # application/vnd.jupyter.stdout in Lab and Notebook 7, text/plain in Voila; errors are stderr in both)
    printed = page.notebook.locator(".jp-OutputArea-output[data-mime-type]", has_text=re.compile(r"loss \d+\.\d{4}"))
    expect(printed).to_have_count(1)
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    page.assert_no_widget_errors()
    n = int(_data(graph, "boxes"))
    kinds = page.evaluate("sel => [...document.querySelectorAll(sel + ' g.tl-box')].map(b => b.dataset.kind)", GRAPH)
    # 330 nodes folded by module path: the 40 blocks are one run box, the rest are single nodes
    assert n == len(kinds) and 5 <= n <= 60, (n, kinds)
    assert kinds.count("group") >= 1 and kinds.count("output") == 1, kinds
    expect(graph.locator(".tl-details")).to_contain_text("Click a box")

    box = graph.locator('g.tl-box[data-kind="op"]', has_text="CrossEntropy")
    expect(box).to_have_count(1)
    label = box.locator(".tl-box-label").text_content()
    box_id = _data(box, "id")
    box.scroll_into_view_if_needed()
    box.click()
    expect(graph.locator(".tl-details-title")).to_contain_text(label, timeout=ACTION_MS)
    expect(box).to_have_class(re.compile(r"\btl-selected\b"))
    expect(graph.locator("g.tl-box.tl-selected")).to_have_count(1)
    if (sel := kernel_repr(page, "view.selected")) is not None:  # the click reached Python
        assert sel == repr(box_id), (sel, box_id)
    # the details show the node's rows too (op, output shape...), not just the title
    expect(graph.locator(".tl-details tr").first).to_be_visible()


def _screen_rect(loc) -> dict:
    """Where a box is drawn on the screen now (CSS px of the page), however the view transform is applied."""
    return loc.evaluate("e => { const r = e.getBoundingClientRect();"
                        " return {x: r.x + r.width / 2, y: r.y + r.height / 2, w: r.width, h: r.height}; }")


def _settled(page) -> None:
    """Two animation frames: whatever the view scheduled has been painted."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def test_graph_zooms_with_the_wheel_and_the_button(gv):
    page = gv
    graph = page.locator(GRAPH)
    area = graph.locator(".tl-canvas")  # the drawing area (its size does not change with the zoom)
    area.scroll_into_view_if_needed()
    view = area.bounding_box()
    out = graph.locator('g.tl-box[data-kind="output"] .tl-box-shape')
    z0, r0 = float(_data(graph, "zoom")), _screen_rect(out)
    # a mouse-wheel notch (integral deltaY >= 40, deltaMode 0) over the drawing zooms in about the pointer
    px, py = view["x"] + view["width"] / 2, view["y"] + view["height"] / 2
    page.mouse.move(px, py)
    page.mouse.wheel(0, -120)
    z1 = float(_wait_data(page, GRAPH, "zoom", f"+v !== {z0}"))
    _settled(page)
    r1 = _screen_rect(out)
    f = z1 / z0
    assert f > 1.05, (z0, z1)
    assert r1["w"] == pytest.approx(r0["w"] * f, rel=0.02), (r0, r1, f)  # the drawing grew by data-zoom's ratio
    # ... about the pointer: the point under it stays put, so the box moved away from it by the same ratio
    assert r1["x"] == pytest.approx(px + (r0["x"] - px) * f, abs=3), (r0, r1, (px, py), f)
    assert r1["y"] == pytest.approx(py + (r0["y"] - py) * f, abs=3), (r0, r1, (px, py), f)

    # the toolbar's "Zoom in" (x1.4 about the centre) and "Zoom out"
    graph.get_by_role("button", name="Zoom in", exact=True).click()
    z2 = float(_wait_data(page, GRAPH, "zoom", f"+v !== {z1}"))
    assert z2 == pytest.approx(min(z1 * 1.4, 6), rel=1e-3), (z1, z2)
    _settled(page)
    page.shot(f"graph_{page.frontend}_zoomed.png", area)  # text at ~1.5x: crisp, not a scaled bitmap
    graph.get_by_role("button", name="Zoom out", exact=True).click()
    z3 = float(_wait_data(page, GRAPH, "zoom", f"+v !== {z2}"))
    assert z3 == pytest.approx(z2 / 1.4, rel=1e-3), (z2, z3)
    _settled(page)

    # a drag pans: everything moves with the pointer, the zoom stays
    r3 = _screen_rect(out)
    start = (view["x"] + 12, view["y"] + 12)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(start[0] + 60, start[1] + 40, steps=5)
    page.mouse.up()
    _settled(page)
    r4 = _screen_rect(out)
    assert (r4["x"] - r3["x"], r4["y"] - r3["y"]) == (pytest.approx(60, abs=2), pytest.approx(40, abs=2)), (r3, r4)
    assert float(_data(graph, "zoom")) == pytest.approx(z3)

    # Fit brings the whole drawing back into the view
    _button(graph, "Fit").click()
    page.wait_for_function("([sel, z]) => +document.querySelector(sel).dataset.zoom !== z", arg=[GRAPH, z3],
                           timeout=ACTION_MS)
    page.wait_for_timeout(400)  # Fit animates (300 ms)
    boxes = graph.locator("g.tl-box .tl-box-shape")
    view = area.bounding_box()
    for i in range(boxes.count()):
        r = _screen_rect(boxes.nth(i))
        assert view["x"] - 1 <= r["x"] - r["w"] / 2 and r["x"] + r["w"] / 2 <= view["x"] + view["width"] + 1, (i, r)
        assert view["y"] - 1 <= r["y"] - r["h"] / 2 and r["y"] + r["h"] / 2 <= view["y"] + view["height"] + 1, (i, r)


def test_graph_clicking_a_group_expands_it(gv):
    from playwright.sync_api import expect

    page = gv
    graph = page.locator(GRAPH)
    n0 = int(_data(graph, "boxes"))
    group = graph.locator('g.tl-box[data-kind="group"]').first
    gid = _data(group, "id")
    group.scroll_into_view_if_needed()
    group.click()
    n1 = int(_wait_data(page, GRAPH, "boxes", f"+v !== {n0}"))
    assert n1 > n0, (n0, n1)
    expect(graph.locator("g.tl-box")).to_have_count(n1)
    # the group is now a frame behind its members; its own box is gone
    expect(graph.locator(f'g.tl-frame[data-id="{gid}"]')).to_have_count(1)
    expect(graph.locator(f'g.tl-box[data-id="{gid}"]')).to_have_count(0)
    page.shot(f"graph_{page.frontend}_expanded.png", graph)


# ---- BackwardStepper --------------------------------------------------------------------------------------
def test_stepper_steps_and_steps_back(gv):
    from playwright.sync_api import expect

    page = gv
    st = page.locator(STEPPER)
    st.scroll_into_view_if_needed()
    expect(st.locator(".tl-status")).to_contain_text("press Step")
    assert _data(st, "cursor") == "0"
    expect(st.locator("g.tl-box.tl-current")).to_have_count(0)
    current = {}
    for i in (1, 2, 3):
        _button(st, "Step").click()
        _wait_data(page, STEPPER, "cursor", f"v === '{i}'")
        expect(st.locator(".tl-status")).to_contain_text(f"step {i} of")
        cur = st.locator("g.tl-box.tl-current")
        expect(cur).to_have_count(1)
        current[i] = _data(cur, "id")
        expect(st.locator("g.tl-box.tl-visited")).to_have_count(i)  # Div, Sum, CrossEntropy: a box each
    assert len(set(current.values())) == 3, current  # otherwise the Back check below proves nothing
    _button(st, "Back").click()
    _wait_data(page, STEPPER, "cursor", "v === '2'")
    cur = st.locator("g.tl-box.tl-current")
    expect(cur).to_have_count(1)
    assert _data(cur, "id") == current[2], (current, _data(cur, "id"))
    expect(st.locator(".tl-status")).to_contain_text("step 2 of")
    expect(st.locator("g.tl-box.tl-visited")).to_have_count(2)
    if (cursor := kernel_repr(page, "stepper.widget.state['cursor']")) is not None:
        assert cursor == "2", cursor


# ---- the whole page, light and dark -------------------------------------------------------------------
CONTRAST_JS = """sel => {
  // WCAG contrast of each kind of box's label against the box, as painted (text over box fill over the page)
""" + COLOUR_JS + """  const root = document.querySelector(sel), out = {};
  const chain = [];  // background colours from the page down to the widget
  for (let e = root; e; e = e.parentElement) chain.unshift(getComputedStyle(e).backgroundColor);
  const bg = paint('#fff', ...chain);
  out.background = `rgb(${bg.join(', ')})`;
  out.background_luminance = +lum(bg).toFixed(3);
  for (const kind of ['op', 'param', 'output', 'group']) {
    const b = root.querySelector(`g.tl-box[data-kind="${kind}"]`); if (!b) continue;
    const fill = getComputedStyle(b.querySelector('.tl-box-shape')).fill;
    const text = getComputedStyle(b.querySelector('.tl-box-label')).fill;
    const under = paint('#fff', ...chain, fill), over = paint('#fff', ...chain, fill, text);
    out[kind] = {fill, text, contrast: +contrast(over, under).toFixed(2)};
  }
  return out; }"""


def test_no_widget_errors_and_screenshots_light_and_dark(gv):
    page = gv
    page.assert_no_widget_errors()
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    themes = {}
    with closing(light_then_dark(page, _wait_drawn)) as each_theme:
        for theme in each_theme:
            graph = page.locator(GRAPH)
            graph.scroll_into_view_if_needed()
            page.screenshot(path=str(_artifact(f"graph_{page.frontend}_{theme}.png")))  # the viewport
            page.shot(f"graph_{page.frontend}_{theme}_stepper.png", page.locator(STEPPER))
            themes[theme] = page.evaluate(CONTRAST_JS, GRAPH)
    print(f"\n{page.frontend} colours:", json.dumps(themes, indent=1))
    # the dark theme reaches the widget: a dark background, and every label readable on its box (WCAG AA 4.5)
    assert themes["dark"]["background_luminance"] < 0.2 < themes["light"]["background_luminance"], themes
    for theme, colours in themes.items():
        for kind, c in colours.items():
            if isinstance(c, dict):
                assert c["contrast"] >= 4.5, f"{theme}: {kind} label {c['text']} on {c['fill']}: {c['contrast']}"


def _artifact(name: str):
    from .conftest import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / name
