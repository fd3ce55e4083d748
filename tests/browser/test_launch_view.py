"""``LaunchView`` (``widgets/static/launch.js``: canvases) in a real browser, JupyterLab, light and dark.

``launch_view.ipynb`` writes four kernels to a file and traces them on ``cuda-emu``: a grid-stride loop (5,000
elements, 8 blocks of 128 threads), a shared-memory tiled matmul (64 x 64, tiles of 16), a block reduction (8 blocks
of 256) with a transposing copy in the same trace (its writes are uncoalesced), and the grid-stride loop again over
1M elements (4,096 blocks of 256 threads: a million threads).

What each test expects is worked out from the kernels, not read from the view: which elements a thread writes in a
grid-stride loop, how many barrier phases the tiled matmul has, which access of the transposed copy is strided.
Colours are read back from the canvases' pixels. Screenshots (look at them):
``test-artifacts/browser/launch_view_{light,dark}.png`` and ``launch_view_<kernel>_{light,dark}.png``.
"""

from __future__ import annotations

from contextlib import closing

import pytest

from .conftest import kernel_repr, lab_page_run_all, light_then_dark, views_js_errors, worst_text_contrast

NB = "launch_view.ipynb"
RENDER_MS = 240_000  # (the first run compiles the kernels' checked build: tens of seconds on 2 cores)
ACTION_MS = 15_000
VIEWS = {"stride": ".lv-stride .tl-launch", "matmul": ".lv-matmul .tl-launch", "sum": ".lv-sum .tl-launch",
         "big": ".lv-big .tl-launch"}

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def lv(request, browser):
    yield from lab_page_run_all(browser, request, NB, _wait_drawn, RENDER_MS)


def _wait_drawn(page) -> None:
    page.wait_for_function(
        """sels => sels.every(sel => { const r = document.querySelector(sel); return r && +r.dataset.drawn > 0; })""",
        arg=list(VIEWS.values()), timeout=RENDER_MS)


def _pixel(page, root: str, canvas: str, x_css: float, y_css: float) -> list[int]:
    """The RGB of one canvas pixel (CSS px within the canvas)."""
    return page.evaluate(
        """([root, canvas, x, y]) => { const c = document.querySelector(root + ' ' + canvas);
             const d = window.devicePixelRatio || 1;
             const px = c.getContext('2d').getImageData(Math.floor(x * d), Math.floor(y * d), 1, 1).data;
             return [px[0], px[1], px[2]]; }""", [root, canvas, x_css, y_css])


def _cell(page, root: str) -> float:
    """The CSS size of one element's cell in the output canvas (its width over the row length)."""
    return page.evaluate("""root => { const r = document.querySelector(root);
        const c = r.querySelector('canvas.tl-la-outcanvas');
        return parseFloat(c.style.width) / +r.dataset.cols; }""", root)


def test_every_view_draws_without_errors(lv):
    page = lv
    assert page.cell_errors() == [], "cells failed:\n" + "\n".join(page.cell_errors())
    page.assert_no_widget_errors()
    assert views_js_errors(page, r"tl-|anywidget|launch") == []
    kernels = {k: page.locator(sel).get_attribute("data-kernel") for k, sel in VIEWS.items()}
    assert kernels == {"stride": "scale_grid_stride", "matmul": "matmul_tiled", "sum": "block_sum",
                       "big": "scale_grid_stride"}
    assert "True" in page.notebook.inner_text()  # the tiled matmul's result equals NumPy's
    page.shot("launch_view_light.png")


def test_a_grid_stride_loop_is_stripes_of_block_colours(lv):
    page = lv
    root = VIEWS["stride"]
    cols = int(page.locator(root).get_attribute("data-cols"))
    assert cols == 64  # 5,000 elements of a 1-D tensor: 78 rows of 64 (rows of 32 would be over twice as tall as wide)
    cell = _cell(page, root)

    def colour(i):
        return _pixel(page, root, "canvas.tl-la-outcanvas", (i % cols + 0.5) * cell, (i // cols + 0.5) * cell)
    # 1,024 threads: element i is written by thread i % 1024 of block (i % 1024) // 128
    assert colour(5) == colour(5 + 1024) == colour(5 + 4096)
    assert colour(0) == colour(127) != colour(128)
    assert len({tuple(colour(128 * b)) for b in range(8)}) == 8  # eight blocks, eight colours


def test_hovering_a_thread_lists_and_outlines_what_it_wrote(lv):
    from playwright.sync_api import expect

    page = lv
    root = page.locator(VIEWS["stride"])
    canvas = root.locator("canvas.tl-la-threads")
    canvas.scroll_into_view_if_needed()
    cell = page.evaluate("c => (parseFloat(c.style.width) - 40) / 32", canvas.element_handle())
    canvas.hover(position={"x": 40 + 3.5 * cell, "y": 14 + 0.5 * cell})  # block 0, warp 0, lane 3
    tip = root.locator(".tl-tooltip")
    expect(tip).to_contain_text("wrote out", timeout=ACTION_MS)  # (Python's answer)
    # thread 3 writes 3, 3 + 1,024, ... below 5,000
    expect(tip).to_contain_text("3, 1,027, 2,051, 3,075, 4,099")
    page.shot("launch_view_stride_hover.png", root)
    page.mouse.move(0, 0)
    expect(tip).to_be_hidden(timeout=ACTION_MS)


def test_stepping_the_barrier_phases_of_a_tiled_matmul(lv):
    from playwright.sync_api import expect

    page = lv
    root = page.locator(VIEWS["matmul"])
    phase = root.locator(".tl-la-phase")
    # 64 / 16 = 4 tiles, two __syncthreads() each: 9 phases; the first loads a tile of each matrix
    expect(phase).to_contain_text("phase 1 of 9: before the first __syncthreads(); 512 shared writes, 0 shared reads")
    root.locator(".tl-la-step").click()
    expect(root).to_have_attribute("data-phase", "1")
    # the second computes: 256 threads read 16 words of as and 16 of bs, and write nothing shared
    expect(phase).to_contain_text("between __syncthreads() number 1 and 2; 0 shared writes, 8,192 shared reads")
    root.locator(".tl-la-back").click()
    expect(root).to_have_attribute("data-phase", "0")
    root.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(root).to_have_attribute("data-phase", "2")
    # the traced block is blockIdx (1, 2): its tile of as was written in phase 3 (the second load)
    expect(root.locator(".tl-la-bar .tl-la-sub").first).to_contain_text("block (1, 2, 0)")
    assert _pixel(page, VIEWS["matmul"], "canvas.tl-la-shared", 84 + 2, 14 + 2) != [0, 0, 0]
    page.shot("launch_view_matmul_phase3.png", root)
    rows = root.locator(".tl-la-table tr:not(.tl-la-explain)").all_inner_texts()
    # the global loads of a and b and the store of c are coalesced; as[ty][k] is a broadcast within a warp
    assert any("global read" in r and "\tb\t" in r and "coalesced" in r for r in rows), rows
    assert not any("uncoalesced" in r or "conflict" in r and "no bank" not in r for r in rows), rows


def test_a_strided_copy_is_uncoalesced_with_the_fix(lv):
    from playwright.sync_api import expect

    page = lv
    root = page.locator(VIEWS["sum"])
    expect(root).to_have_attribute("data-colour", "warp")
    root.locator("select.tl-la-launch").select_option("1")  # the second launch of the trace: copy_transposed
    expect(root).to_have_attribute("data-kernel", "copy_transposed", timeout=ACTION_MS)
    bad = root.locator("tr.tl-la-bad:not(.tl-la-explain)")
    expect(bad).to_have_count(1)
    # out[row * n + col] = x[col * n + row]: neighbouring threads (row, row + 1) write 64 floats = 256 bytes apart,
    # 32 sectors a warp; their reads of x are neighbours (coalesced)
    expect(bad).to_contain_text("global write")
    expect(bad).to_contain_text("uncoalesced")
    expect(bad).to_contain_text("32.0 sectors / request")
    read = root.locator("tr:not(.tl-la-explain)", has_text="global read")
    expect(read).to_contain_text("coalesced")
    expect(read).not_to_contain_text("uncoalesced")
    explain = root.locator("tr.tl-la-explain.tl-la-bad").first
    expect(explain).to_contain_text("256 bytes apart")
    expect(explain).to_contain_text("threadIdx.x index the contiguous")
    page.shot("launch_view_uncoalesced.png", root)
    root.locator("select.tl-la-launch").select_option("0")
    expect(root).to_have_attribute("data-kernel", "block_sum", timeout=ACTION_MS)


def test_colour_by_thread_and_a_million_threads(lv):
    from playwright.sync_api import expect

    page = lv
    root = page.locator(VIEWS["big"])
    expect(root).to_have_attribute("data-colour", "thread")
    assert int(root.get_attribute("data-shown")) == 1 << 17  # the first 131,072 of 1,048,576 elements are drawn
    expect(root.locator(".tl-la-out .tl-la-sub")).to_contain_text("1,048,576 elements; the first 131,072 drawn")
    blocks = root.locator("canvas.tl-la-blocks")
    blocks.scroll_into_view_if_needed()
    blocks.hover(position={"x": 3, "y": 3})
    tip = root.locator(".tl-tooltip")
    expect(tip).to_contain_text("wrote out", timeout=ACTION_MS)  # block 0: elements 0-255, then every 1,048,576...
    expect(tip).to_contain_text("256 elements")
    page.mouse.move(0, 0)
    root.locator(".tl-la-colour button[data-by='block']").click()
    expect(root).to_have_attribute("data-colour", "block", timeout=ACTION_MS)
    assert kernel_repr(page, "big_view.widget.payload['color_by']") == "'block'"


# the view's texts (header, phase line, table cells, legends) whose contrast on what is painted under them is checked
TEXTS = [".tl-la-header", ".tl-la-phase", ".tl-la-sub", ".tl-la-table td", ".tl-la-legend span"]


def test_light_and_dark(lv):
    page = lv
    with closing(light_then_dark(page, _wait_drawn)) as themes:
        for theme in themes:
            for name, sel in VIEWS.items():
                page.locator(sel).scroll_into_view_if_needed()
                page.shot(f"launch_view_{name}_{theme}.png", page.locator(sel))
                worst, what = worst_text_contrast(page, sel, TEXTS)
                assert worst >= 4.5, (name, theme, worst, what)
            # the canvases were drawn again in the theme's colours: the thread grid's labels take the text colour
            dark = page.evaluate("sel => document.querySelector(sel).classList.contains('tl-la-dark')",
                                 VIEWS["stride"])
            assert dark == (theme == "dark")
