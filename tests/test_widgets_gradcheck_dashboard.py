"""GradcheckView (model, drawing, verdict) and Dashboard (tabs, css classes, set_loss), without a browser.

The gradcheck tests use a deliberately wrong custom ``Function``: its backward is right for |x| <= 1 and off by
a factor of two elsewhere, so exactly the Jacobian entries of those elements must be reported and boxed.
The Dashboard is tested twice: with stub views put in place of the four view modules (so its own wiring is
what is checked), and with the real views.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

import tinygrad_like as tl  # noqa: E402
from tinygrad_like.widgets import _base  # noqa: E402
from tinygrad_like.widgets.dashboard import TITLES, Dashboard  # noqa: E402
from tinygrad_like.widgets.gradcheck_view import (  # noqa: E402
    PANELS,
    GradcheckView,
    draw_gradcheck,
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
        outs = view.figure_out.outputs
        assert len(outs) == 1 and "image/png" in outs[0]["data"]
        assert view.summary().startswith("<GradcheckView: FAIL")
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
        assert view.figure_out.outputs == ()
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
         "storage_view": ("StorageView", "stub-storage"), "kernel_view": ("KernelTimeline", "stub-kernels")}


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
        assert dash.tab.titles == ("Graph", "Backward", "Storage", "Kernels") == TITLES
        assert "tl-dashboard" in dash.widget._dom_classes and "tl-view" in dash.widget._dom_classes
        assert "tl-dashboard-tabs" in dash.tab._dom_classes
        pages = dash.tab.children
        assert "tl-dashboard-placeholder" in pages[0]._dom_classes and "set_loss" in pages[0].value
        assert "tl-dashboard-placeholder" in pages[1]._dom_classes
        assert "stub-storage" in pages[2]._dom_classes and "stub-kernels" in pages[3]._dom_classes
        assert dash.views["Graph"] is None and dash.views["Backward"] is None
        assert dash.views["Storage"].kwargs == {"model": net} and dash.views["Kernels"].args == ()
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
        assert dash.summary() == "<Dashboard: Graph, Backward, Storage, Kernels>"
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
                                                                        "Kernels": 0}
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
                                                                   "KernelTimeline"]
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

    canvas = FigureCanvasAgg(fig)  # (the figure is drawn as figure_output draws it: constrained layout applied)
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


def test_a_passing_check_lists_nothing() -> None:
    view = GradcheckView(Square.apply, (tl.tensor([0.5, 2.0], dtype=tl.float64, requires_grad=True),))
    assert view.failures.options == () and view.failures.layout.display == "none" and view.detail.value == ""
    view.close()
