"""The storage picture (``StorageView``: ``widgets/static/storage.js``) in a real browser, in each of the three
front-ends a reader may use: JupyterLab, Notebook 7 and Voila.

``storage_view.ipynb`` trains a small model with SGD + momentum on the simulated device ``sim`` and shows the view;
its last cell writes ``x`` in place. Per front-end the notebook is opened and run once (a module-scoped page); the
tests below then check, in order, that the picture is drawn (``g.tl-st-block`` per storage) with the names
(module paths, momentum buffers, notebook variables), that hovering a version badge shows the write site (the
browser alone), that filtering by name and by device works (a round trip through the kernel: Voila keeps its
kernel for the widgets, so it works there too), and finally photograph the view in the light and the dark theme
(Voila: ``?theme=dark``, which runs the notebook again).

Its last cell shows a second view, of a learner's own model: nanoGPT after one AdamW step (311 storages). On it
(JupyterLab, light and dark) the tests check that it starts as an overview within the box's height and that groups
open down to a parameter's storages (the table lists all of them); that no two texts of the picture overlap (the
elided counts of long strips included); that the track labels of a group are distinct; that every text has a
contrast of 4.5:1 or more on what it is drawn on; and that each colour of the picture has one meaning, which the
legend shows.

Screenshots (look at them): ``test-artifacts/browser/storage_view_<frontend>_{light,dark,hover,filtered}.png`` and
``storage_view_gpt_{light,dark}.png``.
"""

from __future__ import annotations

from contextlib import closing

import pytest

from .conftest import COLOUR_JS, FRONTENDS, drawn_page, light_then_dark

NB = "storage_view.ipynb"
ROOT = ".tl-storage-view:not(.gpt-storage) .tl-storage"
GPT = ".gpt-storage .tl-storage"
BOX_H = 560  # StorageView's default box height
RENDER_MS = 60_000
ACTION_MS = 15_000

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", params=FRONTENDS)
def sv(request, browser):
    """The test notebook open in one front-end, every cell run, the picture drawn."""
    yield from drawn_page(request, browser, NB, _wait_drawn)


def _wait_drawn(page) -> None:
    """The root is painted: data-blocks (set after each drawing) > 0 and as many g.tl-st-block as it says; the
    nanoGPT view's module groups are drawn."""
    page.wait_for_function(
        """sel => { const r = document.querySelector(sel);
             return r && +r.dataset.blocks > 0
               && r.querySelectorAll('g.tl-st-block').length === +r.dataset.blocks; }""",
        arg=ROOT, timeout=RENDER_MS)
    page.wait_for_function(
        """sel => { const r = document.querySelector(sel);
             return r && +r.dataset.groups > 0
               && r.querySelectorAll('g.tl-st-group').length === +r.dataset.groups; }""",
        arg=GPT, timeout=RENDER_MS)


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
    # no two texts overlap, and the track labels of one group read differently (cut in the middle if too long)
    texts = page.evaluate(TEXTS_JS, ROOT)
    assert _overlaps(texts) == [], f"overlapping texts: {_overlaps(texts)[:10]}"
    _assert_distinct_tracks(texts)


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


# ---- a learner's model: nanoGPT after one AdamW step -----------------------------------------------------------
# the nanoGPT view's checks run in JupyterLab only (the drawing is the same in every front-end): the module's page
# there, not a skip elsewhere (a skipped browser test fails a CI run)
lab_only = pytest.mark.parametrize("sv", ["jupyterlab"], indirect=True)


def _open_group(page, group: str) -> None:
    """Click a group's row (if folded) and wait for the drawing that shows it open."""
    row = page.locator(f"{GPT} g.tl-st-group[data-group='{group}']")
    if row.get_attribute("data-open") != "true":
        row.scroll_into_view_if_needed()
        row.click()
    page.wait_for_function(f"""() => {{ const g = document.querySelector("{GPT} g.tl-st-group[data-group='{group}']");
        return g && g.dataset.open === 'true'; }}""", timeout=ACTION_MS)


def _open_gpt(page) -> None:
    """Fold all, then open the path down to block 3's attention projections and the token embedding (a long strip)."""
    page.locator(f"{GPT} .tl-st-foldall").click()
    page.wait_for_function(f"() => document.querySelector('{GPT}').dataset.groups === '1'", timeout=ACTION_MS)
    for g in ("transformer", "transformer.wte", "transformer.h", "transformer.h.3", "transformer.h.3.attn",
              "transformer.h.3.attn.c_attn"):
        _open_group(page, g)


@lab_only
def test_gpt_starts_as_an_overview_and_opens_down_to_a_parameter(sv):
    page = sv
    root = page.locator(GPT)
    first = page.evaluate(f"""() => {{ const r = document.querySelector('{GPT}'), c = r.querySelector('.tl-st-canvas');
        return {{height: +r.dataset.height, groups: [...r.querySelectorAll('g.tl-st-group')].map(g => g.dataset.group),
                 blocks: +r.dataset.blocks,
                 rows: r.querySelectorAll('table.tl-storage-table tr[data-storage-id]').length,
                 box: c.clientHeight, scroll: c.scrollHeight}}; }}""")
    print("\nnanoGPT first drawing:", first)
    assert first["height"] <= 1.5 * BOX_H, first
    assert "transformer.h" in first["groups"] and first["rows"] >= 300, first
    assert "not drawn" not in root.locator(".tl-notes").inner_text()
    _open_gpt(page)
    names = page.evaluate(f"""() => [...document.querySelectorAll('{GPT} g.tl-st-block .tl-st-name')]
                               .map(t => t.textContent)""")
    for p in ("weight", "bias"):
        for s in ("", ".grad", ".exp_avg", ".exp_avg_sq"):
            assert f"transformer.h.3.attn.c_attn.{p}{s}" in names, names
    # keyboard: Enter on a focused row folds it (and the row keeps the focus)
    row = root.locator("g.tl-st-group[data-group='transformer.h.3.attn.c_attn']")
    row.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"""() => {{ const g = document.querySelector(
        "{GPT} g.tl-st-group[data-group='transformer.h.3.attn.c_attn']");
        return g && g.dataset.open === 'false' && document.activeElement === g; }}""", timeout=ACTION_MS)
    page.keyboard.press("Enter")
    page.wait_for_function(f"""() => document.querySelector(
        "{GPT} g.tl-st-group[data-group='transformer.h.3.attn.c_attn']").dataset.open === 'true'""", timeout=ACTION_MS)
    page.assert_no_widget_errors()


# every text of the picture: its box on screen, its text, its block and track, and the contrast of its fill on what
# is painted under it (the mark, badge or group row it sits on, else the box's background)
TEXTS_JS = """sel => {""" + COLOUR_JS + """
  const root = document.querySelector(sel);
  const chain = [];
  for (let e = root.querySelector('.tl-st-canvas'); e; e = e.parentElement)
    chain.unshift(getComputedStyle(e).backgroundColor);
  const under = t => {
    const prev = t.previousElementSibling;
    if (t.classList.contains('tl-st-mark-text') && prev) return [getComputedStyle(prev).fill];
    const box = t.closest('.tl-st-badge, .tl-st-group');
    if (box) return [getComputedStyle(box.querySelector('rect')).fill];
    return [];
  };
  return [...root.querySelectorAll('svg.tl-st-svg text')].filter(t => t.textContent.trim()).map(t => {
    const r = t.getBoundingClientRect(), bg = paint('#fff', ...chain, ...under(t));
    const fg = paint('#fff', ...chain, ...under(t), getComputedStyle(t).fill);
    const blk = t.closest('g.tl-st-block'), trk = t.closest('g.tl-st-track');
    return {text: t.textContent, cls: t.getAttribute('class'), x0: r.left, x1: r.right, y0: r.top, y1: r.bottom,
            block: blk ? blk.dataset.storageId : null, group: blk ? blk.dataset.group : null,
            view: trk && t.classList.contains('tl-st-track-label') ? trk.dataset.view : null,
            contrast: +contrast(bg, fg).toFixed(2)};
  }); }"""

# per meaning, the colour the picture paints it in, and the legend's swatch of it
COLOURS_JS = """sel => {""" + COLOUR_JS + """
  const root = document.querySelector(sel);
  const chain = [];
  for (let e = root.querySelector('.tl-st-canvas'); e; e = e.parentElement)
    chain.unshift(getComputedStyle(e).backgroundColor);
  const picture = {};
  for (const c of root.querySelectorAll('rect.tl-st-cell')) {
    const lane = c.closest('g.tl-st-lane');
    if (lane.classList.contains('tl-st-absent') || lane.classList.contains('tl-st-stale')) continue;
    const k = [...c.classList].find(x => x !== 'tl-st-cell' && x.startsWith('tl-st-')).slice(6);
    const key = k === 'device-only' ? 'cpu' : k;
    (picture[key] = picture[key] || new Set()).add(paint('#fff', ...chain, getComputedStyle(c).fill).join(','));
  }
  for (const m of root.querySelectorAll('rect.tl-st-mark'))
    (picture.view = picture.view || new Set()).add(paint('#fff', ...chain, getComputedStyle(m).fill).join(','));
  const legend = {};
  for (const sw of root.querySelectorAll('.tl-st-legend .tl-st-swatch')) {
    const k = [...sw.classList].find(x => x !== 'tl-st-swatch').slice(6);
    legend[k] = paint('#fff', getComputedStyle(sw).backgroundColor).join(',');
  }
  return {picture: Object.fromEntries(Object.entries(picture).map(([k, v]) => [k, [...v]])), legend}; }"""


def _assert_distinct_tracks(texts: list[dict]) -> dict:
    """Within a group, two different views never show the same track label. Returns (group, text) -> view."""
    seen: dict[tuple, str] = {}
    for t in texts:
        if t["view"] is None:
            continue
        key = (t["group"], t["text"])
        assert seen.setdefault(key, t["view"]) == t["view"], f"{t['view']} and {seen[key]} both read {key}"
    return seen


def _overlaps(texts: list[dict]) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes overlap by more than half a pixel both ways."""
    out = []
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            dx = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"])
            dy = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"])
            if dx > 0.5 and dy > 0.5:
                out.append((a["text"], b["text"]))
    return out


@lab_only
def test_gpt_picture_readable_in_light_and_dark(sv):
    """On the opened nanoGPT view, in both themes: no overlapping texts, distinct track labels per group, contrast
    >= 4.5:1 for every text, one colour per meaning and the legend's swatches in the picture's colours."""
    page = sv
    _open_gpt(page)
    report = {}
    with closing(light_then_dark(page, _wait_drawn)) as themes:
        for theme in themes:
            root = page.locator(GPT)
            root.scroll_into_view_if_needed()
            page.mouse.move(0, 0)
            texts = page.evaluate(TEXTS_JS, GPT)
            assert len(texts) > 100, len(texts)
            assert _overlaps(texts) == [], f"{theme}: overlapping texts: {_overlaps(texts)[:10]}"
            gaps = [t["text"] for t in texts if "tl-st-gaptext" in t["cls"]]
            assert "12,456" in gaps, gaps  # transformer.wte: 65 x 192 elements, 24 drawn
            # track labels: one per view of a block; within a group, different views read differently
            seen = _assert_distinct_tracks(texts)
            assert ("transformer.h.3.attn.c_attn", "weight.exp_avg_sq") in seen, sorted(seen)[:20]
            low = [(t["text"], t["cls"], t["contrast"]) for t in texts if t["contrast"] < 4.5]
            assert low == [], f"{theme}: text under 4.5:1: {low[:10]}"
            html_low = page.evaluate("""sel => {""" + COLOUR_JS + """
              const root = document.querySelector(sel), out = [];
              for (const e of root.querySelectorAll('.tl-status, .tl-st-legend-item, .tl-st-card-line, .tl-btn')) {
                const chain = [];
                for (let p = e; p; p = p.parentElement) chain.unshift(getComputedStyle(p).backgroundColor);
                const bg = paint('#fff', ...chain), fg = paint('#fff', ...chain, getComputedStyle(e).color);
                if (contrast(bg, fg) < 4.5) out.push([e.textContent, +contrast(bg, fg).toFixed(2)]);
              }
              return out; }""", GPT)
            assert html_low == [], f"{theme}: toolbar/status text under 4.5:1: {html_low}"
            col = page.evaluate(COLOURS_JS, GPT)
            report[theme] = {"min contrast": min(t["contrast"] for t in texts), "colours": col}
            picture = {k: v for k, v in col["picture"].items()}
            for k, v in picture.items():
                assert len(v) == 1, f"{theme}: {k} is painted in {len(v)} colours: {v}"
                assert k in col["legend"], f"{theme}: the legend does not list {k} ({sorted(col['legend'])})"
            rgb = {k: [int(x) for x in v[0].split(",")] for k, v in picture.items()}
            for a in rgb:
                for b in rgb:
                    if a < b:
                        assert sum((x - y) ** 2 for x, y in zip(rgb[a], rgb[b])) ** 0.5 > 30, (theme, a, b, rgb)
            for k, c in rgb.items():  # the legend's swatch is painted like the picture (mixed alike: within 60)
                sw = [int(x) for x in col["legend"][k].split(",")]
                assert max(abs(x - y) for x, y in zip(sw, c)) < 60, (theme, k, sw, c)
            page.shot(f"storage_view_gpt_{theme}.png", root)
    print("\nnanoGPT storage picture:", report)
