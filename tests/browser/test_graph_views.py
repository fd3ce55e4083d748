"""The interactive graph views (``GraphView``, ``BackwardStepper``: one anywidget, ``widgets/static/graph.js``) in
a real browser, in each of the three front-ends a reader may use: JupyterLab, Notebook 7 and Voila.

``graph_views.ipynb`` builds a 40-block residual MLP (330 graph nodes, folded into 11 boxes) and shows both
views, then a third ``GraphView`` (``big``) of a 60-block model with every group open (490 boxes, 22,000 px tall).
Per front-end the notebook is opened and run once (a module-scoped page); the tests below then click through it in
order: select a node (the details come back from Python), zoom with the wheel and the button, expand the folded
group from a zoom where the labels are too small (the view zooms until they are 10 px), Step x3 / Back x1 in the
stepper and a Step after zooming out (the view follows the current box), photograph the page in the light and the
dark theme; then on ``big``: only what is near the view has elements, and after a pan the boxes now in view do;
Fit asks Python to fold it (``fold_to_fit``) and fits what comes back; Pause / Resume / Close (and none of them on
a fourth view, ``boxed``, shown inside a VBox as the Dashboard shows its views). The selectors are
the CSS hooks written down in ``widgets/static/CONTRACT.md``.

Screenshots (look at them): ``test-artifacts/browser/graph_<frontend>_<light|dark>.png``.
"""

from __future__ import annotations

import json
import re
from contextlib import closing
from pathlib import Path

import pytest

from .conftest import COLOUR_JS, FRONTENDS, drawn_page, kernel_repr, light_then_dark

NB = "graph_views.ipynb"
GRAPH = ".tl-graph-view:not(.tl-test-big):not(.tl-test-boxed) .tl-graph"  # GraphView's root
BIG = ".tl-test-big .tl-graph"              # the third view's root: every group open, culled
STEPPER = ".tl-backward-stepper .tl-graph"  # BackwardStepper's root
RENDER_MS = 60_000
ACTION_MS = 15_000  # a click's round trip through the kernel and back to a painted frame
READABLE_PX = 10.0  # the smallest box text (the 10.5 px sub line) at this size or more, in CSS px on the screen
LABEL_PX = 12 * READABLE_PX / 10.5  # data-label-px (a 12 px label) when the sub line is READABLE_PX

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", params=FRONTENDS)
def gv(request, browser):
    """The test notebook open in one front-end, every cell run, both views drawn."""
    yield from drawn_page(request, browser, NB, _wait_drawn)


def _wait_drawn(page) -> None:
    """The roots painted (data-boxes is set after the first frame), as many <g.tl-box> as data-boxes says (the
    big one: culled, some of them, data-drawn of them)."""
    page.wait_for_function(
        """([a, b, c]) => [a, b].every(sel => { const r = document.querySelector(sel);
             return r && +r.dataset.boxes > 0 && r.querySelectorAll('g.tl-box').length === +r.dataset.boxes; })
           && (r => r && +r.dataset.boxes > 0 && r.querySelectorAll('g.tl-box').length === +r.dataset.drawn)(
               document.querySelector(c))""",
        arg=[GRAPH, STEPPER, BIG], timeout=RENDER_MS)


def _data(loc, name: str) -> str | None:
    return loc.get_attribute(f"data-{name}")


def _wait_data(page, sel: str, name: str, pred_js: str, timeout: int = ACTION_MS) -> str:
    """Wait until ``pred_js`` (a JS expression in ``v``, the attribute's value) holds for data-NAME of ``sel``."""
    name = re.sub(r"-(\w)", lambda m: m.group(1).upper(), name)  # data-label-px is dataset.labelPx
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


RECT_JS = ("e => { const r = e.getBoundingClientRect();"
           " return {x: r.x + r.width / 2, y: r.y + r.height / 2, w: r.width, h: r.height}; }")


def _screen_rect(loc) -> dict:
    """Where a box is drawn on the screen now (CSS px of the page), however the view transform is applied."""
    return loc.evaluate(RECT_JS)


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


# The box texts drawn inside the drawing area, with their size on the screen (font size x the scale from the drawing
# to the screen), and the view's centre (CSS px of the page).
SCREEN_TEXT_JS = """sel => {
  const root = document.querySelector(sel), v = root.querySelector('.tl-canvas').getBoundingClientRect();
  const out = [];
  for (const t of root.querySelectorAll('g.tl-box text.tl-box-label, g.tl-box text.tl-box-sub')) {
    const cs = getComputedStyle(t), r = t.getBoundingClientRect();
    if (cs.display === 'none' || cs.visibility === 'hidden' || !t.textContent.trim()) continue;
    if (r.right < v.left || r.left > v.right || r.bottom < v.top || r.top > v.bottom) continue;
    const m = t.getScreenCTM();
    out.push(+(parseFloat(cs.fontSize) * Math.hypot(m.a, m.b)).toFixed(2));
  }
  return {n: out.length, min_px: out.length ? Math.min(...out) : null, cx: v.x + v.width / 2, cy: v.y + v.height / 2,
          view: [v.left, v.top, v.right, v.bottom]}; }"""


def _filled(page, sel: str) -> None:
    """A culled view has made the elements of everything near the view (data-filling is gone), and painted."""
    page.wait_for_function("sel => !document.querySelector(sel).dataset.filling", arg=sel, timeout=ACTION_MS)
    _settled(page)


def _zoom_out_until_small(page, sel: str, root) -> None:
    """The toolbar's Zoom out until the labels are under 10 px (data-label-px)."""
    for _ in range(12):
        if float(_data(root, "label-px")) < READABLE_PX:
            return
        z = _data(root, "zoom")
        root.get_by_role("button", name="Zoom out", exact=True).click()
        _wait_data(page, sel, "zoom", f"v !== '{z}'")
    raise AssertionError(f"Zoom out left the labels at {_data(root, 'label-px')} px")


def test_graph_clicking_a_group_expands_it_and_zooms_until_its_labels_are_readable(gv):
    from playwright.sync_api import expect

    page = gv
    graph = page.locator(GRAPH)
    graph.scroll_into_view_if_needed()
    # the issue's case: a group expanded where the text is too small to read (e.g. at the Fit zoom)
    _zoom_out_until_small(page, GRAPH, graph)
    _settled(page)
    assert page.evaluate(SCREEN_TEXT_JS, GRAPH)["min_px"] < READABLE_PX
    n0 = int(_data(graph, "boxes"))
    group = graph.locator('g.tl-box[data-kind="group"]').first
    gid = _data(group, "id")
    group.click()
    n1 = int(_wait_data(page, GRAPH, "boxes", f"+v !== {n0}"))
    assert n1 > n0, (n0, n1)
    expect(graph.locator("g.tl-box")).to_have_count(n1)
    # the group is now a frame behind its members; its own box is gone
    frame = graph.locator(f'g.tl-frame[data-id="{gid}"]')
    expect(frame).to_have_count(1)
    expect(graph.locator(f'g.tl-box[data-id="{gid}"]')).to_have_count(0)
    # ... and the view zoomed (300 ms) until every label is 10 px or more, centred on the frame
    _wait_data(page, GRAPH, "label-px", f"+v >= {LABEL_PX - 0.01}")
    page.wait_for_timeout(450)
    _settled(page)
    texts = page.evaluate(SCREEN_TEXT_JS, GRAPH)
    assert texts["n"] >= 3 and texts["min_px"] >= READABLE_PX - 0.01, texts
    fr = _screen_rect(frame.locator(".tl-frame-rect"))
    assert abs(fr["x"] - texts["cx"]) <= fr["w"] / 2 and abs(fr["y"] - texts["cy"]) <= fr["h"] / 2, (fr, texts)
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

    # the view follows the current node: zoomed out until its text is unreadable and dragged aside, a Step brings
    # the current box back, whole, at a zoom where its labels are 10 px or more
    _zoom_out_until_small(page, STEPPER, st)
    area = st.locator(".tl-canvas").bounding_box()
    page.mouse.move(area["x"] + 10, area["y"] + 10)
    page.mouse.down()
    page.mouse.move(area["x"] + area["width"] - 10, area["y"] + 10, steps=5)
    page.mouse.up()
    _button(st, "Step").click()
    _wait_data(page, STEPPER, "cursor", "v === '3'")
    _wait_data(page, STEPPER, "label-px", f"+v >= {LABEL_PX - 0.01}")
    page.wait_for_timeout(300)  # (a quick move: 180 ms)
    _settled(page)
    cur = st.locator("g.tl-box.tl-current")
    expect(cur).to_have_count(1)
    assert _data(st, "current-box") == _data(cur, "idx")
    r, view = _screen_rect(cur.locator(".tl-box-shape")), st.locator(".tl-canvas").bounding_box()
    assert view["x"] <= r["x"] - r["w"] / 2 and r["x"] + r["w"] / 2 <= view["x"] + view["width"], (r, view)
    assert view["y"] <= r["y"] - r["h"] / 2 and r["y"] + r["h"] / 2 <= view["y"] + view["height"], (r, view)


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


# ---- the big view: culled, Fit folds, Pause and Close ---------------------------------------------------------
BOXES_ON_SCREEN_JS = """([sel, boxes]) => {
  // which payload boxes meet the drawing area now (from data-zoom and where the svg is), and which have elements
  const root = document.querySelector(sel), v = root.querySelector('.tl-canvas').getBoundingClientRect();
  const s = root.querySelector('svg.tl-svg').getBoundingClientRect(), k = +root.dataset.zoom;
  const meet = boxes.filter(([id, x, y, w, h]) =>
      s.left + (x + w / 2) * k > v.left && s.left + (x - w / 2) * k < v.right
      && s.top + (y + h / 2) * k > v.top && s.top + (y - h / 2) * k < v.bottom).map(b => b[0]);
  const drawn = [...root.querySelectorAll('g.tl-box')].map(g => g.dataset.id);
  return {meet, drawn, attr: +root.dataset.drawn}; }"""


def test_big_graph_has_elements_only_near_the_view_and_finds_boxes_after_a_pan(gv):
    from playwright.sync_api import expect

    page = gv
    big = page.locator(BIG)
    big.scroll_into_view_if_needed()
    n = int(_data(big, "boxes"))
    assert n > 400, n  # (above the size from which graph.js culls)
    # the payload's geometry, as the notebook wrote it beside itself (no test before this one changes the view)
    boxes = json.loads((Path(page.server["root"]) / "graph_views_big_boxes.json").read_text())
    assert len(boxes) == n  # data-boxes is the whole graph's count, not the drawn part's
    seen = []
    area = big.locator(".tl-canvas").bounding_box()
    for step in range(3):
        _filled(page, BIG)
        r = page.evaluate(BOXES_ON_SCREEN_JS, [BIG, boxes])
        assert r["meet"], r  # (the view shows part of the drawing)
        assert set(r["meet"]) <= set(r["drawn"]), sorted(set(r["meet"]) - set(r["drawn"]))[:10]
        assert len(r["drawn"]) == r["attr"] < n / 2, (len(r["drawn"]), r["attr"], n)
        seen.append(set(r["meet"]))
        if step < 2:  # drag the drawing down by most of the view: what was above it comes into view
            page.mouse.move(area["x"] + area["width"] / 2, area["y"] + 10)
            page.mouse.down()
            page.mouse.move(area["x"] + area["width"] / 2, area["y"] + area["height"] - 10, steps=8)
            page.mouse.up()
    assert seen[2] - seen[0], "the pans showed no new boxes"
    # the boxes made after the pan answer the pointer: hover shows the tooltip, a click selects
    box = big.locator(f'g.tl-box[data-id="{sorted(seen[2] - seen[0])[0]}"]')
    box.locator(".tl-box-shape").hover()
    expect(big.locator(".tl-tooltip")).to_be_visible()
    box.locator(".tl-box-shape").click()
    expect(box).to_have_class(re.compile(r"\btl-selected\b"), timeout=ACTION_MS)
    expect(big.locator(".tl-details-title")).not_to_be_empty(timeout=ACTION_MS)


def test_big_graph_fit_folds_it_to_the_overview_or_says_to_zoom_in(gv):
    """Fitting 22,000 px into 420 would draw the labels at 0.2 px: Fit sends {"type": "fold_to_fit"}; Python folds
    the graph to its overview and the view fits that; whatever cannot be fitted readably is fitted anyway, under a
    note "zoom in to read the labels"."""
    from playwright.sync_api import expect

    page = gv
    big = page.locator(BIG)
    big.scroll_into_view_if_needed()
    n0, z0 = int(_data(big, "boxes")), _data(big, "zoom")
    note = big.locator(".tl-zoom-note")
    expect(note).to_be_hidden()
    _button(big, "Fit").click()
    _wait_data(page, BIG, "zoom", f"v !== '{z0}'", timeout=ACTION_MS)
    page.wait_for_timeout(450)  # (Fit animates, 300 ms)
    _filled(page, BIG)
    if (types := kernel_repr(page, "seen")) is not None:
        assert "fold_to_fit" in types, types
    n1 = int(_data(big, "boxes"))
    view = big.locator(".tl-canvas").bounding_box()
    shapes = big.locator("g.tl-box .tl-box-shape")
    assert shapes.count() == n1  # fitted: everything is on screen, so every box has its element
    for i, r in enumerate(shapes.evaluate_all(f"es => es.map({RECT_JS})")):  # (_screen_rect of each, in one go)
        assert view["x"] - 1 <= r["x"] - r["w"] / 2 and r["x"] + r["w"] / 2 <= view["x"] + view["width"] + 1, (i, r)
        assert view["y"] - 1 <= r["y"] - r["h"] / 2 and r["y"] + r["h"] / 2 <= view["y"] + view["height"] + 1, (i, r)
    small = float(_data(big, "label-px")) < LABEL_PX - 0.01
    if n1 < n0:  # Python folded it: its note says so
        expect(big.locator(".tl-note", has_text="Folded to fit")).to_be_visible()
    else:
        assert small, "nothing was folded, yet the whole drawing fits with readable labels?"
    (expect(note).to_be_visible if small else expect(note).to_be_hidden)()
    if small:  # zooming in until the labels are readable takes the note away
        for _ in range(20):
            if float(_data(big, "label-px")) >= LABEL_PX - 0.01:
                break
            z = _data(big, "zoom")
            big.get_by_role("button", name="Zoom in", exact=True).click()
            _wait_data(page, BIG, "zoom", f"v !== '{z}'")
        expect(note).to_be_hidden()


def test_a_view_inside_a_widget_container_leaves_pause_and_close_to_it(gv):
    from playwright.sync_api import expect

    page = gv
    boxed = page.locator(".tl-test-boxed .tl-graph")
    boxed.scroll_into_view_if_needed()
    expect(boxed.locator(".tl-zoombar")).to_be_visible()
    expect(boxed.locator("button.tl-close")).to_be_hidden()
    expect(boxed.locator("button.tl-pause")).to_be_hidden()
    expect(page.locator(GRAPH).locator("button.tl-close")).to_be_visible()  # (a view shown by itself has them)


def test_big_graph_pause_resume_and_close(gv):
    from playwright.sync_api import expect

    page = gv
    big = page.locator(BIG)
    big.scroll_into_view_if_needed()
    pause = big.locator("button.tl-pause")
    expect(pause).to_have_text("Pause")
    pause.click()
    expect(pause).to_have_text("Resume", timeout=ACTION_MS)
    assert _data(big, "paused") == "true"
    if (p := kernel_repr(page, "big.paused")) is not None:
        assert p == "True", p
    pause.click()
    expect(pause).to_have_text("Pause", timeout=ACTION_MS)
    if (p := kernel_repr(page, "big.paused")) is not None:
        assert p == "False", p
    big.locator("button.tl-close").click()
    # the drawing gives way to "closed"; the kernel closed the view and its widget (the notebook then hides the
    # widget's output, and "closed" stays in its place)
    closed = page.locator(".tl-graph-closed, .tl-test-big .tl-closed-msg")
    expect(closed.first).to_have_text("closed", timeout=ACTION_MS)
    # (asked after the close message; a closed view no longer hands out its widget: the notebook kept it). The
    # kernel handles the close message on its own time: under load it came after a first question (CI, once)
    want, expr = "(True, True, '<GraphView: closed>')", "(big.closed, big_widget.comm is None, repr(big))"
    if (c := kernel_repr(page, expr)) is not None:
        for _ in range(ACTION_MS // 100):
            if c == want:
                break
            page.wait_for_timeout(100)
            c = kernel_repr(page, expr)
        assert c == want, c
    left = page.locator(".tl-graph-closed")
    expect(left).to_have_text("closed", timeout=ACTION_MS)
    expect(left).to_be_visible()
    expect(page.locator(BIG)).to_have_count(0)  # (the view itself is gone with its widget)
