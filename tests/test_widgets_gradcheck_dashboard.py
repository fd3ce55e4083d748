"""GradcheckView (model, drawing, verdict) and Dashboard (tabs, css classes, set_loss), without a browser.

The gradcheck tests use a deliberately wrong custom ``Function``: its backward is right for |x| <= 1 and off by
a factor of two elsewhere, so exactly the Jacobian entries of those elements must be reported and boxed.
The Dashboard is tested twice: with stub views put in place of the four view modules (so its own wiring is
what is checked), and with the real views.
"""

from __future__ import annotations

import re
import sys
import types

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

from test_figure_widget import svg_images  # noqa: E402 - the same picture reader as the figure tests

import tinygrad_like as tl  # noqa: E402
from tinygrad_like.widgets import _base  # noqa: E402
from tinygrad_like.widgets.dashboard import TITLES, Dashboard  # noqa: E402
from tinygrad_like.widgets.figure_widget import PALETTES, render  # noqa: E402
from tinygrad_like.widgets.gradcheck_view import (  # noqa: E402
    HINT,
    PANELS,
    GradcheckView,
    _clickable_panels,
    draw_gradcheck,
    entry_detail,
    gradcheck_model,
    marked_elements,
    panel_axes,
    verdict_text,
)


class SquareWrongAboveOne(tl.autograd.Function):
    """y = x * x; the backward "forgets" the factor 2 where |x| > 1."""

    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.mul(x._x, x._x)

    def backward(self, g):
        (x,) = self.saved_tensors
        big = (x.abs() > 1).to(g.dtype)
        return (g * x * 2 * (1 - big) + g * x * big,)


class Square(tl.autograd.Function):
    def forward(self, x):
        self.save_for_backward(x)
        return x._dev.backend.mul(x._x, x._x)

    def backward(self, g):
        (x,) = self.saved_tensors
        return (g * x * 2,)


class BackwardRaises(tl.autograd.Function):
    def forward(self, x):
        return x._dev.backend.mul(x._x, x._x)

    def backward(self, g):
        raise ValueError("forgot to save x")


X = [[0.5, -1.5, 0.25], [2.0, -0.75, 1.25]]  # |x| > 1 at flat positions 1, 3, 5
BAD_FLAT = [1, 3, 5]


def _inputs():
    x = tl.tensor(X, dtype=tl.float64, requires_grad=True)
    w = tl.tensor([1.0, -2.0, 0.5], dtype=tl.float64, requires_grad=True)
    return x, w


def _wrong_fn(x, w):
    return SquareWrongAboveOne.apply(x) * w  # (2, 3): pair (out 0, in 0) is wrong, (out 0, in 1) is right


# ---- GradcheckView: model -------------------------------------------------------------------------------------
def test_model_finds_exactly_the_wrong_entries() -> None:
    m = gradcheck_model(_wrong_fn, _inputs())
    assert not m.passed
    assert [(p.output, p.input) for p in m.pairs] == [(0, 0), (0, 1)]
    wrong, right = m.pairs
    assert wrong.analytic.shape == (6, 6) and right.analytic.shape == (6, 3)
    assert wrong.bad_elements() == [(k, k) for k in BAD_FLAT]
    assert right.n_bad == 0 and m.n_bad == 3 and m.n_total == 36 + 18
    x = np.array(X).ravel()
    w = np.tile([1.0, -2.0, 0.5], 2)
    np.testing.assert_allclose(np.diag(wrong.numeric), 2 * x * w, atol=1e-6)
    expected = np.where(np.abs(x) > 1, x * w, 2 * x * w)
    np.testing.assert_allclose(np.diag(wrong.analytic), expected)
    # worst element: the largest |difference| among the bad ones -> flat 1 (x = -1.5, w = -2): |3 - 6| = 3
    assert m.worst() == (0, 1, 1)
    assert wrong.diff[1, 1] == pytest.approx(3.0, abs=1e-6) and wrong.diff[3, 3] == pytest.approx(2.0, abs=1e-6)


def test_model_passes_for_a_correct_function_and_skips_non_grad_inputs() -> None:
    x, _ = _inputs()
    c = tl.tensor([1.0, 2.0, 3.0], dtype=tl.float64)  # no grad: not a column of any Jacobian
    m = gradcheck_model(lambda a, b: (Square.apply(a) * b, (a * b).sum()), (x, c))
    assert m.passed and m.n_bad == 0
    assert [(p.output, p.input) for p in m.pairs] == [(0, 0), (1, 0)]
    assert m.skipped_inputs == [1]
    assert m.pairs[1].analytic.shape == (1, 6)


@pytest.mark.parametrize("rel_error,passes", [(1e-4, True), (5e-3, False)])
def test_model_uses_the_relative_tolerance(rel_error, passes) -> None:
    """|a - n| <= atol + rtol * |n|: on large values a small relative error passes though it exceeds atol."""

    class SlightlyOff(tl.autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x._dev.backend.mul(x._x, x._x)

        def backward(self, g):
            (x,) = self.saved_tensors
            return (g * x * (2 * (1 + rel_error)),)

    x = tl.tensor([100.0, -300.0], dtype=tl.float64, requires_grad=True)
    m = gradcheck_model(SlightlyOff.apply, (x,), eps=1e-4)
    p = m.pairs[0]
    assert p.diff.max() > 1e-5  # beyond atol either way
    assert m.passed is passes and p.bad_elements() == ([] if passes else [(0, 0), (1, 1)])


def test_model_agrees_with_autograd_gradcheck() -> None:
    from tinygrad_like.autograd import gradcheck

    for fn in (_wrong_fn, lambda a, b: Square.apply(a) * b):
        assert gradcheck_model(fn, _inputs()).passed == gradcheck(fn, _inputs(), raise_exception=False)


# ---- GradcheckView: drawing ------------------------------------------------------------------------------------
def test_drawing_has_three_panels_per_pair_with_colorbars_and_marks() -> None:
    m = gradcheck_model(_wrong_fn, _inputs())
    fig = draw_gradcheck(m)
    panels = panel_axes(fig)
    assert [ax.get_label() for ax in panels] == list(PANELS) * 2
    assert len(fig.axes) - len(panels) == 6  # one colorbar per panel
    for ax in panels[:3]:  # the wrong pair: the same cells boxed on analytic, numeric and difference
        assert marked_elements(ax) == [(k, k) for k in BAD_FLAT]
        assert ax.images and ax.images[0].get_array().shape == (6, 6)
    for ax in panels[3:]:  # the right pair: nothing boxed
        assert marked_elements(ax) == []
    # analytic and numeric share one colour scale
    assert panels[0].images[0].get_clim() == panels[1].images[0].get_clim()
    np.testing.assert_allclose(np.asarray(panels[2].images[0].get_array()), m.pairs[0].diff)
    assert "FAIL" in fig._suptitle.get_text()


def test_drawing_of_a_passing_check_marks_nothing() -> None:
    m = gradcheck_model(lambda a, b: Square.apply(a) * b, _inputs())
    fig = draw_gradcheck(m)
    assert len(panel_axes(fig)) == 6
    assert all(marked_elements(ax) == [] for ax in panel_axes(fig))
    assert "PASS" in fig._suptitle.get_text()


# ---- GradcheckView: the widget ---------------------------------------------------------------------------------
def test_view_shows_failure_verdict_and_figure() -> None:
    view = GradcheckView(_wrong_fn, _inputs())
    try:
        assert "tl-gradcheck-view" in view.widget._dom_classes
        assert "tl-view" in view.widget._dom_classes
        assert "tl-gradcheck-verdict" in view.verdict._dom_classes
        text = verdict_text(view.model)
        assert text.startswith("FAIL: 3 of 54 Jacobian entries differ, in 1 of 2 pair(s)")
        assert "worst: output 0 w.r.t. input 0, row 1 (output element (0, 1)), column 1 (input element (0, 1))" in text
        assert "analytic 3 vs numeric 6, |difference| 3 > tolerance 0.006" in text
        assert "FAIL" in view.verdict.value and "row 1" in view.verdict.value
        assert view.passed is False
        assert view._unsubscribe is None  # not live
        shown = view.figure.figure  # the picture the browser gets: SVG, light until the page reports its theme
        assert shown["svg"].startswith("<?xml") and shown["theme"] == "light" and len(shown["regions"]) == 6
        assert "tl-gradcheck-figure" in view.figure._dom_classes
        assert view.summary().startswith("<GradcheckView: FAIL")
        bundle = view._repr_mimebundle_()  # the saved notebook's static fallback: a PNG and one stable line
        assert bundle["image/png"] and bundle["text/plain"] == view.summary()
    finally:
        view.close()


def test_view_passes_for_a_correct_function() -> None:
    view = GradcheckView(lambda a, b: Square.apply(a) * b, _inputs())
    try:
        assert view.passed is True
        assert view.verdict.value.count("PASS") == 1 and "FAIL" not in view.verdict.value
    finally:
        view.close()


@pytest.mark.parametrize("fn,inputs,message", [
    (BackwardRaises.apply, lambda: (tl.tensor([1.0, 2.0], dtype=tl.float64, requires_grad=True),),
     "forgot to save x"),
    (Square.apply, lambda: (tl.tensor([1.0, 2.0], requires_grad=True),), "float64"),  # float32: refused
])
def test_view_shows_errors_instead_of_raising(fn, inputs, message) -> None:
    view = GradcheckView(fn, inputs())
    try:
        assert view.model is None and view.error is not None
        assert "ERROR" in view.verdict.value and message in view.verdict.value
        assert view.figure.figure == {} and view.figure.regions == [] and view.selected is None
        assert "image/png" not in view._repr_mimebundle_()
    finally:
        view.close()


def test_view_is_not_recomputed_after_every_cell() -> None:
    view = GradcheckView(lambda a, b: Square.apply(a) * b, _inputs())
    try:
        before = view.redraws
        _base.refresh_open_views()
        assert view.redraws == before
        view.refresh()
        assert view.redraws == before + 1
    finally:
        view.close()


# ---- Dashboard with stub views ---------------------------------------------------------------------------------
class _Stub(_base.View):
    listens_to = ()
    calls: list

    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs, self.renders, self.closed = args, kwargs, 0, False
        super().__init__(live=False)
        self.refresh()

    def _render(self) -> None:
        self.renders += 1

    def close(self) -> None:
        self.closed = True
        super().close()


def _stub_module(name: str, cls_name: str, css: str):
    mod = types.ModuleType(name)
    setattr(mod, cls_name, type(cls_name, (_Stub,), {"css_class": css}))
    return mod


STUBS = {"graph_view": ("GraphView", "stub-graph"), "stepper": ("BackwardStepper", "stub-stepper"),
         "storage_view": ("StorageView", "stub-storage"), "kernel_view": ("KernelTimeline", "stub-kernels"),
         "memory_view": ("MemoryTimelineView", "stub-memory")}


@pytest.fixture
def stub_views(monkeypatch):
    pkg = Dashboard.__module__.rpartition(".")[0]
    for mod, (cls, css) in STUBS.items():
        monkeypatch.setitem(sys.modules, f"{pkg}.{mod}", _stub_module(f"{pkg}.{mod}", cls, css))
    return pkg


def _loss():
    tl.manual_seed(0)
    net = tl.nn.Sequential(tl.nn.Linear(4, 3), tl.nn.ReLU(), tl.nn.Linear(3, 2))
    return tl.nn.functional.cross_entropy(net(tl.randn(5, 4)), tl.tensor([0, 1, 1, 0, 1])), net


def test_dashboard_tabs_and_placeholders_without_loss(stub_views) -> None:
    _, net = _loss()
    dash = Dashboard(model=net)
    try:
        assert dash.tab.titles == ("Graph", "Backward", "Storage", "Kernels", "Memory") == TITLES
        assert "tl-dashboard" in dash.widget._dom_classes and "tl-view" in dash.widget._dom_classes
        assert "tl-dashboard-tabs" in dash.tab._dom_classes
        pages = dash.tab.children
        assert "tl-dashboard-placeholder" in pages[0]._dom_classes and "set_loss" in pages[0].value
        assert "tl-dashboard-placeholder" in pages[1]._dom_classes
        assert "stub-storage" in pages[2]._dom_classes and "stub-kernels" in pages[3]._dom_classes
        assert dash.views["Graph"] is None and dash.views["Backward"] is None
        assert dash.views["Storage"].kwargs == {"model": net} and dash.views["Kernels"].args == ()
        assert dash.views["Memory"].kwargs == {"model": net, "per_cell": True, "lines": False}
        assert "stub-memory" in pages[4]._dom_classes
        assert dash.errors == {}
    finally:
        dash.close()


def test_dashboard_set_loss_fills_graph_and_backward(stub_views) -> None:
    loss, net = _loss()
    dash = Dashboard(model=net)
    try:
        dash.select("Backward")
        dash.set_loss(loss)
        g, b = dash.views["Graph"], dash.views["Backward"]
        assert g.args == (loss,) and g.kwargs == {"model": net}
        assert b.args == (loss,) and b.kwargs == {"model": net}
        assert "stub-graph" in dash.tab.children[0]._dom_classes
        assert "stub-stepper" in dash.tab.children[1]._dom_classes
        assert dash.tab.titles == TITLES and dash.selected == "Backward"
        # a second loss replaces (and closes) the views of the first
        loss2, _ = _loss()
        dash.set_loss(loss2)
        assert g.closed and b.closed
        assert dash.views["Graph"].args == (loss2,) and dash.tab.children[0] is dash.views["Graph"].widget
        assert dash.summary() == "<Dashboard: Graph, Backward, Storage, Kernels, Memory>"
    finally:
        dash.close()


def test_dashboard_with_loss_refreshes_the_visible_tab_and_closes_all(stub_views) -> None:
    loss, net = _loss()
    dash = Dashboard(loss, model=net)
    views = dict(dash.views)
    try:
        assert all(v is not None for v in views.values())
        before = {t: v.renders for t, v in views.items()}
        dash.refresh()
        assert {t: v.renders - before[t] for t, v in views.items()} == {"Graph": 1, "Backward": 0, "Storage": 0,
                                                                        "Kernels": 0, "Memory": 0}
        dash.select("Kernels")  # switching shows an up-to-date view
        assert views["Kernels"].renders == before["Kernels"] + 1 and views["Storage"].renders == before["Storage"]
        dash.refresh()
        assert views["Kernels"].renders == before["Kernels"] + 2 and views["Graph"].renders == before["Graph"] + 1
    finally:
        dash.close()
    assert all(v.closed for v in views.values())
    assert dash not in _base._OPEN and not any(v in _base._OPEN for v in views.values())


def test_dashboard_shows_a_broken_view_in_its_tab(stub_views, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, f"{stub_views}.kernel_view", None)  # -> ImportError
    loss, net = _loss()
    dash = Dashboard(loss, model=net)
    try:
        assert dash.views["Kernels"] is None and "kernel_view" in dash.errors["Kernels"]
        page = dash.tab.children[3]
        assert "tl-dashboard-error" in page._dom_classes and "kernel_view" in page.value
        assert dash.views["Graph"] is not None and dash.tab.titles == TITLES
    finally:
        dash.close()


# ---- Dashboard with the real views -----------------------------------------------------------------------------
def test_dashboard_with_the_real_views() -> None:
    loss, net = _loss()
    dash = Dashboard(model=net)
    try:
        assert dash.errors == {}
        assert "tl-storage-view" in dash.tab.children[2]._dom_classes
        assert "tl-kernel-timeline" in dash.tab.children[3]._dom_classes
        dash.set_loss(loss)
        assert dash.errors == {}
        assert [type(v).__name__ for v in dash.views.values()] == ["GraphView", "BackwardStepper", "StorageView",
                                                                   "KernelTimeline", "MemoryTimelineView"]
        assert "tl-memory-view" in dash.tab.children[4]._dom_classes
        memory = dash.views["Memory"]
        assert not memory.timeline.recording  # (a hidden tab records nothing)
        dash.select("Memory")
        assert memory.timeline.recording  # (shown: it records the cell)
        y = net(tl.randn(3, 4))
        memory.after_cell()  # (what the post-run hook calls: the cell's recording is drawn, a new one starts)
        assert memory.timeline.recording and memory._last_done is not None and len(memory._last_done) > 0
        assert memory.widget.payload["runs"][0]["storages"] > 0
        dash.select("Graph")
        assert not memory.timeline.recording
        del y
        assert "tl-graph-view" in dash.tab.children[0]._dom_classes
        assert "tl-backward-stepper" in dash.tab.children[1]._dom_classes
        dash.select("Backward")
        dash.views["Backward"].step(2)
        dash.refresh()
        assert dash.tab.titles == TITLES
    finally:
        dash.close()
    assert all(v is None for v in dash.views.values())
    assert not any(type(v).__name__ in ("GraphView", "StorageView", "KernelTimeline") and v._unsubscribe
                   for v in list(_base._OPEN))


# ---- GradcheckView: readable with several inputs and large, non-square Jacobians; failing entries explained --------
class MatVecWrong(tl.autograd.Function):
    """y = W @ v with the gradient of v forgetting the entries of W above 1."""

    def forward(self, w, v):
        self.save_for_backward(w, v)
        return w._dev.backend.matmul(w._x, v._x)

    def backward(self, g):
        w, v = self.saved_tensors
        return g.unsqueeze(1) * v.unsqueeze(0), (w * (w.abs() <= 1).to(w.dtype)).mT @ g


def _text_boxes(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # (the figure is drawn as the view draws it: constrained layout applied)
    canvas.draw()
    renderer = canvas.get_renderer()
    out = []
    for ax in fig.axes:
        for t in (ax.title, ax.xaxis.label, ax.yaxis.label):
            if t.get_text():
                out.append((t.get_text(), t.get_window_extent(renderer)))
    return out


@pytest.mark.parametrize("rows, cols", [(2, 30), (30, 2), (3, 5)])
def test_titles_and_labels_fit_the_figure_and_never_overlap(rows, cols) -> None:
    tl.manual_seed(0)
    w = tl.randn(rows, cols, dtype=tl.float64, requires_grad=True) * 2
    w = w.detach().requires_grad_()
    v = tl.randn(cols, dtype=tl.float64, requires_grad=True)
    fig = draw_gradcheck(gradcheck_model(MatVecWrong.apply, (w, v)))
    boxes = _text_boxes(fig)
    width, height = fig.bbox.width, fig.bbox.height
    for text, b in boxes:
        assert b.x0 >= -1 and b.y0 >= -1 and b.x1 <= width + 1 and b.y1 <= height + 1, f"clipped: {text!r}"
    for k, (t1, b1) in enumerate(boxes):
        for t2, b2 in boxes[k + 1:]:
            assert not b1.overlaps(b2), f"{t1!r} overlaps {t2!r}"


def test_numbers_are_written_only_where_cells_are_large_enough() -> None:
    small = gradcheck_model(lambda t: t * t, (tl.tensor([0.5, -1.0, 2.0], dtype=tl.float64, requires_grad=True),))
    fig = draw_gradcheck(small)
    assert all(len(ax.texts) == 9 for ax in panel_axes(fig)[:2])  # 3x3: every value written
    big_in = tl.randn(512, dtype=tl.float64, requires_grad=True)
    big = gradcheck_model(lambda t: t * 2, (big_in,))  # a 512 x 512 Jacobian: a picture, no numbers
    fig = draw_gradcheck(big)
    assert all(not ax.texts for ax in panel_axes(fig)) and big.pairs[0].analytic.shape == (512, 512)


def test_failing_entries_are_listed_worst_first_and_explained_with_the_backward_nodes() -> None:
    w = tl.tensor([[0.5, 3.0, -0.25], [-2.0, 0.75, 1.5]], dtype=tl.float64, requires_grad=True)
    v = tl.tensor([1.0, -1.0, 2.0], dtype=tl.float64, requires_grad=True)
    view = GradcheckView(lambda a, b: MatVecWrong.apply(a, b).tanh(), (w, v))
    entries = [e for _, e in view.failures.options]
    pair = next(i for i, p in enumerate(view.model.pairs) if p.input == 1)
    p = view.model.pairs[pair]
    assert sorted(entries) == sorted((pair, r, c) for r, c in p.bad_elements())
    excess = [p.excess[r, c] for _, r, c in entries]
    assert excess == sorted(excess, reverse=True)
    assert view.failures.value == entries[0]  # the worst is explained at once
    i, r, c = entries[0]
    detail = view.detail.value
    assert f"out0[{r}] (row {r})" in detail and f"in1[{c}] (column {c})" in detail
    assert "out0 ← Tanh ← MatVecWrong ← in1" in detail.replace("&lt;", "<")
    view.select_entry(*entries[-1])
    assert f"(column {entries[-1][2]})" in view.detail.value
    view.close()


def test_a_passing_check_lists_nothing_and_invites_a_click() -> None:
    view = GradcheckView(Square.apply, (tl.tensor([0.5, 2.0], dtype=tl.float64, requires_grad=True),))
    assert view.failures.options == () and view.failures.layout.display == "none"
    assert view.detail.value == HINT and view.selected is None and view.figure.marks == []
    view.select_entry(0, 1, 1)  # a passing entry is explained all the same
    assert "PASS: within the tolerance" in view.detail.value and view.failures.index is None
    view.close()


# ---- GradcheckView: clicking a cell of the picture explains it ---------------------------------------------------
SCALE = [1.0, 3.0]  # the two outputs scaled differently, so no two rows of a Jacobian look alike


def _click_view() -> GradcheckView:
    """y = (W @ v) * s with W (2, 3): Jacobians 2x6 (w.r.t. W, right) and 2x3 (w.r.t. v, 3 entries wrong)."""
    w = tl.tensor([[0.5, 3.0, -0.25], [-2.0, 0.75, 1.5]], dtype=tl.float64, requires_grad=True)
    v = tl.tensor([1.0, -1.0, 2.0], dtype=tl.float64, requires_grad=True)
    s = tl.tensor(SCALE, dtype=tl.float64)
    return GradcheckView(lambda a, b: MatVecWrong.apply(a, b) * s, (w, v))


def _image_extents(view: GradcheckView, theme: str) -> dict:
    """Per panel, where its heatmap really is in the picture: the same drawing saved as a PNG with the same crop,
    and the box of the pixels painted in one of the panel's cell colours ([left, top, right, bottom], fractions)."""
    from functools import partial
    from io import BytesIO

    import matplotlib.image as mpimg

    from tinygrad_like.widgets.figure_widget import themed

    out = render(partial(draw_gradcheck, view.model), theme, _clickable_panels, fmt="png", facecolor="#808080")
    img = mpimg.imread(BytesIO(out.data))[..., :3]
    height, width = img.shape[:2]
    assert (width, height) == pytest.approx((out.width, out.height), abs=1.5)
    # the picture shown is the SVG: the same crop as this PNG, and its panels' boxes are where it draws the heatmaps
    svg = view.figure.figure["svg"]
    w_pt, h_pt = (float(v) for v in re.search(r'<svg[^>]* width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    assert (w_pt / 72 * 80, h_pt / 72 * 80) == pytest.approx((out.width, out.height), abs=1.0)
    drawn = svg_images(svg)
    for shown, saved in zip(view.figure.regions, out.regions):
        assert shown.key == saved.key and shown.box == pytest.approx(saved.box, abs=5e-3)  # (text metrics differ a bit)
        assert any(shown.box == pytest.approx(box, abs=1e-4) for box in drawn), shown
    with themed(theme):
        fig = draw_gradcheck(view.model)
    found = {}
    for (key, ax), region in zip(_clickable_panels(fig), out.regions):
        im = ax.images[0]
        colours = np.asarray(im.cmap(im.norm(np.asarray(im.get_array(), dtype=float))))[..., :3].reshape(-1, 3)
        left, top, right, bottom = region.box
        x0, x1 = int(left * width) - 3, int(right * width) + 4  # a little around the axes (no colorbar this close)
        y0, y1 = int(top * height) - 3, int(bottom * height) + 4
        window = img[y0:y1, x0:x1]
        near = np.abs(window[:, :, None, :] - colours[None, None]).max(-1) <= 2.5 / 255
        ys, xs = np.nonzero(near.any(-1))
        found[key] = [(x0 + xs.min()) / width, (y0 + ys.min()) / height,
                      (x0 + xs.max() + 1) / width, (y0 + ys.max() + 1) / height]
    return found


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_click_at_the_centre_of_any_cell_of_any_panel_explains_that_cell(theme) -> None:
    view = _click_view()
    try:
        view.figure.theme = theme  # (drawn again, in the theme's colours: the layout stays)
        assert view.figure.figure["theme"] == theme
        extents = _image_extents(view, theme)
        assert sorted(extents) == [(i, name) for i in (0, 1) for name in sorted(PANELS)]
        for (pair, name), (left, top, right, bottom) in extents.items():
            rows, cols = view.model.pairs[pair].diff.shape
            assert (rows, cols) == ((2, 6) if pair == 0 else (2, 3))
            for r in range(rows):
                for c in range(cols):  # the centre of the cell, measured on the drawn picture
                    fx = left + (c + 0.5) * (right - left) / cols
                    fy = top + (r + 0.5) * (bottom - top) / rows
                    hit = view.figure.click(fx, fy)
                    assert hit is not None and hit.key == (pair, name), (pair, name, r, c)
                    assert view.selected == (pair, r, c), (name, (r, c), view.selected)
        # the cell clicked last is outlined on its pair's three panels, where the picture has it
        pair, r, c = view.selected
        assert view.figure.marks == [view.cell_box(pair, r, c, name) for name in PANELS]
        left, top, right, bottom = extents[(pair, "numeric")]
        box = view.cell_box(pair, r, c, "numeric")
        expected = [left + c * (right - left) / 3, top + r * (bottom - top) / 2,
                    left + (c + 1) * (right - left) / 3, top + (r + 1) * (bottom - top) / 2]
        assert box == pytest.approx(expected, abs=3e-3)
    finally:
        view.close()


def test_a_click_outside_every_panel_does_nothing() -> None:
    view = _click_view()
    try:
        before, detail = view.selected, view.detail.value
        regions = view.figure.regions
        right_of_panel = regions[0].box[2] + 0.004  # the gap towards its colorbar
        colorbar = regions[0].box[2] + 0.06  # the colorbar itself: not a panel
        for fx, fy in [(0.002, 0.002), (0.5, 0.01), (right_of_panel, 0.3), (colorbar, 0.3), (0.99, 0.99)]:
            assert view.figure.click(fx, fy) is None, (fx, fy)
            assert view.figure.locate(fx, fy) is None
        assert view.selected == before and view.detail.value == detail
    finally:
        view.close()


def test_the_details_name_the_elements_the_values_and_the_node_under_test() -> None:
    view = _click_view()
    try:
        m = view.model
        assert [(p.output, p.input, p.path, p.node) for p in m.pairs] == [
            (0, 0, ("Mul", "MatVecWrong"), "MatVecWrong"), (0, 1, ("Mul", "MatVecWrong"), "MatVecWrong")]
        # a passing entry of the 2x6 Jacobian: row 1 = out0[1], column 4 = in0[1, 1] (w[1, 1]): d out/d w = s1 * v1
        rows = dict(entry_detail(m, 0, 1, 4))
        assert rows["pair"] == "output 0 w.r.t. input 0 (Jacobian 2x6)"
        assert rows["output element"] == "out0[1] (row 1)" and rows["input element"] == "in0[1, 1] (column 4)"
        assert float(rows["analytic (backward)"]) == pytest.approx(SCALE[1] * -1.0)
        assert float(rows["numeric"]) == pytest.approx(SCALE[1] * -1.0, abs=1e-6)
        assert rows["verdict"] == "PASS: within the tolerance"
        assert rows["tolerance"].endswith("= 1e-05 + 0.001 × |numeric|")
        assert rows["node under test"] == "MatVecWrong"
        assert rows["backward nodes"] == "out0 ← Mul ← MatVecWrong ← in0"
        # a failing one of the 2x3 Jacobian: out0[1] w.r.t. in1[0]: analytic 0 (W[1, 0] = -2 forgotten), numeric -6
        rows = dict(entry_detail(m, 1, 1, 0))
        assert rows["input element"] == "in1[0] (column 0)" and float(rows["analytic (backward)"]) == 0
        assert float(rows["numeric"]) == pytest.approx(-6.0, abs=1e-6) and rows["|difference|"] == "6"
        assert rows["verdict"].startswith("FAIL: ") and rows["verdict"].endswith("× the tolerance")
        # in the view: clicking picks the entry in the list when it is a failing one, and clears the list otherwise
        view.select_entry(1, 1, 0)
        assert view.failures.value == (1, 1, 0) and "in1[0] (column 0)" in view.detail.value
        assert "tl-gc-fail" in view.detail.value and "MatVecWrong" in view.detail.value
        view.on_figure_click(view.figure, view.figure.locate(*_centre(view.cell_box(0, 1, 4, "difference"))))
        assert view.selected == (0, 1, 4) and view.failures.index is None
        assert "in0[1, 1] (column 4)" in view.detail.value and "tl-gc-pass" in view.detail.value
        view.failures.value = view.failures.options[-1][1]  # the keyboard's way: the list
        assert view.selected == view.failures.options[-1][1]
        with pytest.raises(IndexError, match="outside the 2x3 Jacobian"):
            view.select_entry(1, 2, 0)
    finally:
        view.close()


def _centre(box):
    left, top, right, bottom = box
    return (left + right) / 2, (top + bottom) / 2


def test_the_picture_follows_the_theme_and_keeps_the_selection() -> None:
    view = _click_view()
    try:
        light = view.figure.figure["svg"]
        draws = view.figure.draws
        marks = view.figure.marks
        assert PALETTES["light"]["fg"] in light and PALETTES["dark"]["fg"] not in light
        view.figure.theme = "dark"
        dark = view.figure.figure["svg"]
        assert view.figure.draws == draws + 1 and view.figure.figure["theme"] == "dark"
        assert PALETTES["dark"]["fg"] in dark and PALETTES["light"]["fg"] not in dark
        assert view.figure.figure["ink"] == PALETTES["dark"]["fg"]
        assert len(marks) == 3  # the outlined cell stays outlined, on the three panels
        np.testing.assert_allclose(view.figure.marks, marks, atol=2e-3)
        view.figure.theme = "light"
        assert view.figure.figure["svg"] == light  # the same drawing, byte for byte
    finally:
        view.close()


def test_the_gradcheck_path_and_the_freed_note_name_nodes_as_the_graph_does() -> None:
    """torch's names, as the graph's boxes show them (``Mm``, ``Transpose``), not our ops' (``Matmul``,
    ``Permute``)."""
    from tinygrad_like.widgets.dashboard import freed_note
    from tinygrad_like.widgets.gradcheck_view import backward_path

    w = tl.ones(3, 2, requires_grad=True)
    y = tl.ones(2, 3) @ w.transpose(0, 1).transpose(0, 1)
    assert backward_path(y, w) == ["Mm", "Transpose", "Transpose"]
    loss = y.sum()
    loss.backward()
    assert "last op <code>Sum</code>" in freed_note(loss, follow=False)
    assert "last op <code>Mm</code>" in freed_note(y, follow=False)
