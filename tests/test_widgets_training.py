"""``TrainingMonitor`` and ``draw_filters``: history, throttled redraws, the bar and status line, the
drawings, and the errors for bad input, without a browser."""

from __future__ import annotations

import math
import os

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pytest.importorskip("ipywidgets")

import numpy as np  # noqa: E402

import tinygrad_like as tl  # noqa: E402
from tinygrad_like.widgets import TrainingMonitor, draw_filters  # noqa: E402
from tinygrad_like.widgets import training_view as tv  # noqa: E402

PNG_DIR = os.environ.get("TL_WIDGET_PNG_DIR", "/tmp/widget_pngs")


class FakeClock:
    """Stands in for ``training_view._now``: time moves only when the test says so (a redraw, whatever it
    really costs, takes no time on it)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock(monkeypatch):
    c = FakeClock()
    monkeypatch.setattr(tv, "_now", c)
    return c


@pytest.fixture
def monitors():
    opened = []

    def make(*args, **kwargs):
        m = TrainingMonitor(*args, **kwargs)
        opened.append(m)
        return m

    yield make
    for m in opened:
        m.close()


def save_png(fig, name):
    os.makedirs(PNG_DIR, exist_ok=True)
    with open(os.path.join(PNG_DIR, name), "wb") as f:
        fig.savefig(f, format="png", dpi=fig.dpi, bbox_inches="tight")


def image_axes(fig):
    return [ax for ax in fig.axes if ax.images]


def grid_of(fig):
    return image_axes(fig)[0].get_subplotspec().get_gridspec().get_geometry()


# ---- history ------------------------------------------------------------------------------------------
def test_history_holds_every_step_and_epoch(clock, monitors):
    m = monitors(6, every=0.5)
    for i, loss in enumerate([2.0, 1.0, 0.5, 0.4, 0.3, 0.2]):
        m.log(loss, lr=0.1 * (i + 1)) if i >= 1 else m.log(loss)
        if i in (2, 5):
            m.epoch_end(test_acc=0.5 if i == 2 else 0.75)
    h = m.history
    assert h["step"] == [1, 2, 3, 4, 5, 6]
    assert h["loss"] == [2.0, 1.0, 0.5, 0.4, 0.3, 0.2]
    assert math.isnan(h["lr"][0]) and h["lr"][1:] == pytest.approx([0.2, 0.3, 0.4, 0.5, 0.6])
    assert all(type(v) is float for v in h["loss"])  # plain Python numbers, not tensors or NumPy scalars
    e = m.epochs
    assert e["epoch"] == [1, 2] and e["step"] == [3, 6]
    assert e["loss"] == pytest.approx([3.5 / 3, 0.9 / 3])  # mean train loss of each epoch's steps
    assert e["test_acc"] == [0.5, 0.75]
    assert m.planned_epochs == 2  # inferred from the first epoch's 3 steps of 6


def test_log_takes_one_element_tensors(clock, monitors):
    m = monitors(3)
    m.log(tl.tensor(1.5))
    m.log(tl.tensor([0.25]))
    m.log(np.float32(0.125), acc=tl.tensor(0.5))
    assert m.history["loss"] == [1.5, 0.25, 0.125] and m.history["acc"][-1] == 0.5


# ---- throttling -----------------------------------------------------------------------------------------
def test_log_does_not_redraw_every_step(clock, monitors):
    m = monitors(100, every=0.5)
    base = m.figure_draws  # the empty plot drawn when the view opens
    for _ in range(50):  # no time passes: the plot is not redrawn
        m.log(1.0)
    assert m.figure_draws == base
    assert m._stale
    clock.t += 0.6  # the period has passed: the next log redraws, once
    m.log(1.0)
    m.log(1.0)
    assert m.figure_draws == base + 1 and m.bar.value == 51
    clock.t += 0.3  # within the period again
    for _ in range(10):
        m.log(1.0)
    assert m.figure_draws == base + 1


def test_bar_and_status_follow_faster_than_the_plot(clock, monitors):
    m = monitors(100, every=3600)
    draws = m.figure_draws
    for _ in range(10):
        m.log(0.5)
    assert m.bar.value == 0 and "step 0/100" in m.label.value  # within STATUS_EVERY of opening: nothing updates
    clock.t += tv.STATUS_EVERY + 0.01
    m.log(0.25)
    assert m.bar.value == 11 and "step 11/100 · loss 0.2500" in m.label.value
    m.log(0.125)  # the next status update waits for another STATUS_EVERY
    assert m.bar.value == 11
    assert m.figure_draws == draws  # the plot waits for ``every``


def test_slow_redraws_wait_longer(monkeypatch, monitors):
    """A redraw that takes 1 s blocks the next for 1 / REDRAW_BUDGET - 1 s, longer than ``every``."""
    t = [0.0]

    def slow_clock():
        return t[0]

    monkeypatch.setattr(tv, "_now", slow_clock)
    real = tv.draw_training

    def slow_draw(*a, **k):
        t[0] += 1.0
        return real(*a, **k)

    monkeypatch.setattr(tv, "draw_training", slow_draw)
    m = monitors(100, every=0.5)
    t[0] += 1.0
    m.log(1.0)  # the first plot: a slow redraw (the empty monitor draws no plot)
    draws = m.figure_draws
    assert draws == 1
    wait = 1.0 / tv.REDRAW_BUDGET - 1
    t[0] += wait - 0.1
    m.log(1.0)
    assert m.figure_draws == draws
    t[0] += 0.2
    m.log(1.0)
    assert m.figure_draws == draws + 1


def test_last_step_always_redraws_and_finishes_the_bar(clock, monitors):
    m = monitors(5, every=3600)
    for _ in range(4):
        m.log(0.5)
    draws = m.figure_draws
    m.log(0.25)
    assert m.figure_draws == draws + 1
    assert (m.bar.value, m.bar.max, m.bar.bar_style) == (5, 5, "success")
    assert not m._stale


def test_after_cell_draws_pending_logs_only(clock, monitors):
    m = monitors(10, every=3600)
    m.log(1.0)
    draws = m.figure_draws
    m.after_cell()
    assert m.figure_draws == draws + 1 and m.bar.value == 1
    m.after_cell()  # nothing new: no redraw
    assert m.figure_draws == draws + 1
    m.finish()
    assert m.figure_draws == draws + 1


# ---- bar and status line --------------------------------------------------------------------------------
def test_bar_and_status_line(clock, monitors):
    m = monitors(560, epochs=10, every=3600, title="mlp")  # only the first log may redraw
    assert (m.bar.value, m.bar.max) == (0, 560)
    assert m.status() == "step 0/560 · epoch 1/10"
    for i in range(112):
        m.log(0.5 if i < 111 else 0.23456)
        if i in (55, 111):
            m.epoch_end(test_acc=0.9 if i == 55 else 0.96111)
    for _ in range(8):
        m.log(0.2345)
    m.finish()
    assert (m.bar.value, m.bar.max) == (120, 560)
    assert m.status() == "step 120/560 · epoch 3/10 · loss 0.2345 · test_acc 0.9611"
    assert "step 120/560 · epoch 3/10 · loss 0.2345" in m.label.value
    assert m.summary() == "<TrainingMonitor: step 120/560 · epoch 3/10 · loss 0.2345 · test_acc 0.9611>"
    assert "tl-training-monitor" in m.widget._dom_classes and "tl-view" in m.widget._dom_classes
    assert "<b>mlp</b>" in m.widget.children[0].children[0].value  # (beside the Pause and Close buttons)


def test_status_without_a_plan_shows_no_epoch_until_one_ends(clock, monitors):
    m = monitors(8, every=3600)
    m.log(1.0)
    assert m.status() == "step 1/8 · loss 1.0000"
    m.log(0.5)
    m.epoch_end(acc=0.5)
    assert m.status() == "step 2/8 · epoch 1/4 · loss 0.5000 · acc 0.5000"
    m.log(0.25)
    assert m.status().startswith("step 3/8 · epoch 2/4 ·")


def test_epoch_end_updates_the_status_line_without_a_plot(clock, monitors):
    m = monitors(100, every=3600)
    for _ in range(10):
        m.log(1.0)
    draws = m.figure_draws
    m.epoch_end(test_acc=0.875)
    assert "test_acc 0.8750" in m.label.value and m.bar.value == 10
    assert m.figure_draws == draws  # the plot follows at the next allowed redraw


# ---- drawing ---------------------------------------------------------------------------------------------
def test_training_figure_has_loss_smoothed_and_epoch_markers(clock, monitors):
    m = monitors(6, every=3600)  # drawn at the last step
    for i, loss in enumerate([2.0, 1.0, 0.5, 0.4, 0.3, 0.2]):
        m.log(loss)
        if i in (2, 5):
            m.epoch_end(test_acc=0.5 if i == 2 else 0.75)
    fig = tv.draw_training(m.history, m.epochs, m.total_steps, title="t")
    save_png(fig, "training_monitor.png")
    ax, ax2 = fig.axes
    assert ax.get_yscale() == "log"
    raw, smoothed = ax.lines[0], ax.lines[1]
    assert list(raw.get_ydata()) == [2.0, 1.0, 0.5, 0.4, 0.3, 0.2]
    assert list(smoothed.get_ydata()) == pytest.approx(tv.smooth([2.0, 1.0, 0.5, 0.4, 0.3, 0.2], 0.9))
    (acc,) = ax2.lines
    assert list(acc.get_xdata()) == [3, 6] and list(acc.get_ydata()) == [0.5, 0.75]
    assert acc.get_marker() == "o" and acc.get_label() == "test_acc"
    # from the tenth below the lowest value, to 1, padded so that a marker on either end is drawn whole
    assert ax2.get_ylim() == pytest.approx((0.475, 1.025))
    assert all(not line.get_clip_on() for line in ax2.get_lines())
    assert ax2.get_ylabel() == "test_acc (per epoch)"
    # the widget shows the same drawing as SVG (light until the page says otherwise), and a PNG for saved notebooks
    shown = m.figure.figure
    assert shown["svg"].startswith("<?xml") and shown["theme"] == "light" and shown["regions"] == []
    assert "tl-training-figure" in m.figure._dom_classes
    bundle = m._repr_mimebundle_()
    assert bundle["image/png"] and bundle["text/plain"] == m.summary()


def test_training_figure_follows_the_theme(clock, monitors):
    """Dark theme: light text and the dark palette's loss and metric colours, on a transparent background; drawing
    it again costs no training step (it is not one of the throttled figure draws)."""
    from matplotlib.colors import to_hex

    from tinygrad_like.widgets.figure_widget import PALETTES, themed

    m = monitors(6, every=3600)
    for i, loss in enumerate([2.0, 1.0, 0.5, 0.4, 0.3, 0.2]):
        m.log(loss)
        if i in (2, 5):
            m.epoch_end(test_acc=0.5 if i == 2 else 0.75)
    draws, light = m.figure_draws, m.figure.figure["svg"]
    m.figure.theme = "dark"
    dark = m.figure.figure["svg"]
    assert m.figure_draws == draws and m.figure.figure["theme"] == "dark"
    for key in ("fg", "loss", "muted"):
        assert PALETTES["dark"][key] in dark and PALETTES["dark"][key] not in light, key
        assert PALETTES["light"][key] in light and PALETTES["light"][key] not in dark, key
    with themed("dark") as p:
        fig = tv.draw_training(m.history, m.epochs, m.total_steps)
    ax, ax2 = fig.axes
    assert [to_hex(line.get_color()) for line in ax.lines] == [p["loss"]] * 2 + [p["grid"]] * 2  # 2 epoch ends
    assert to_hex(ax2.lines[0].get_color()) == p["metrics"][0]
    assert to_hex(ax.yaxis.label.get_color()) == p["loss"] and to_hex(ax2.yaxis.label.get_color()) == p["fg"]
    assert ax2.texts[0].get_bbox_patch().get_facecolor()[:3] == pytest.approx(matplotlib.colors.to_rgb(p["bg"]))
    # outside themed(): the light colours, as before
    fig = tv.draw_training(m.history, m.epochs, m.total_steps)
    assert to_hex(fig.axes[0].lines[0].get_color()) == tv.LOSS_COLOR == PALETTES["light"]["loss"]
    assert tuple(PALETTES["light"]["metrics"]) == tv.METRIC_COLORS


def test_training_figure_without_epochs_or_steps():
    fig = tv.draw_training({"step": [], "loss": []}, None, 10)
    assert "no steps logged yet" in fig.axes[0].texts[0].get_text()
    fig = tv.draw_training({"step": [1, 2], "loss": [0.5, -0.1]}, None, 10)  # a negative loss: linear axis
    assert len(fig.axes) == 1 and fig.axes[0].get_yscale() == "linear"
    with pytest.raises(ValueError, match="2 steps but 1 losses"):
        tv.draw_training({"step": [1, 2], "loss": [0.5]})


def test_smooth_is_a_debiased_moving_average():
    assert tv.smooth([3.0, 3.0, 3.0]) == pytest.approx([3.0, 3.0, 3.0])  # no pull towards 0 at the start
    assert tv.smooth([1.0, 2.0], 0.0) == [1.0, 2.0]
    s = tv.smooth([1.0, float("nan"), 1.0], 0.5)
    assert s == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        tv.smooth([1.0], 1.0)


def test_draw_filters_linear_weight_as_8x8_images():
    tl.manual_seed(0)
    lin = tl.nn.Linear(64, 20)
    fig = draw_filters(lin.weight)
    save_png(fig, "filters_linear.png")
    axes = image_axes(fig)
    assert len(axes) == 20 and grid_of(fig) == (3, 8)
    first = axes[0].images[0]
    assert first.get_array().shape == (8, 8)
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(first.get_array(), w[0].reshape(8, 8), rtol=1e-6)
    vmin, vmax = first.get_clim()
    assert vmin == -vmax and vmax == pytest.approx(np.abs(w).max())  # symmetric, shared by all tiles
    assert first.get_cmap().name == "RdBu_r"
    assert fig._suptitle.get_text() == "20 units, 8x8 each"


def test_draw_filters_conv_weight_one_image_per_output_channel():
    tl.manual_seed(0)
    conv = tl.nn.Conv2d(1, 32, 3)
    fig = draw_filters(conv.weight, ncols=16)
    save_png(fig, "filters_conv.png")
    axes = image_axes(fig)
    assert len(axes) == 32 and grid_of(fig) == (2, 16)
    assert axes[5].images[0].get_array().shape == (3, 3)
    np.testing.assert_allclose(axes[5].images[0].get_array(), conv.weight.detach().numpy()[5, 0], rtol=1e-6)
    conv2 = tl.nn.Conv2d(32, 64, 3)
    fig = draw_filters(conv2.weight, in_channel=7, max_filters=10)
    assert len(image_axes(fig)) == 10 and grid_of(fig) == (2, 8)
    np.testing.assert_allclose(image_axes(fig)[9].images[0].get_array(), conv2.weight.detach().numpy()[9, 7],
                               rtol=1e-6)
    assert fig._suptitle.get_text() == "first 10 of 64 channels, 3x3 each"


def test_draw_filters_pictures_with_labels_and_a_plain_colormap():
    imgs = np.arange(3 * 16, dtype=np.float32).reshape(3, 16)
    fig = draw_filters(imgs, labels=["a", "b", "c"], cmap="gray_r", symmetric=False, title="three")
    axes = image_axes(fig)
    assert [ax.get_title() for ax in axes] == ["a", "b", "c"]
    assert axes[0].images[0].get_clim() == (0.0, 47.0)
    assert fig._suptitle.get_text() == "three"
    fig = draw_filters(np.zeros((2, 12)), image_shape=(3, 4), ncols=8)
    assert image_axes(fig)[0].images[0].get_array().shape == (3, 4)
    assert grid_of(fig) == (1, 2)  # no empty columns for fewer tiles than ncols


# ---- errors ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("total, exc, msg", [(0, ValueError, "must be positive, got 0"),
                                             (-3, ValueError, "must be positive"),
                                             (2.5, TypeError, "must be an integer"),
                                             (True, TypeError, "must be an integer")])
def test_bad_total_steps(total, exc, msg):
    with pytest.raises(exc, match=msg):
        TrainingMonitor(total)


def test_bad_monitor_arguments_and_logs(clock, monitors):
    with pytest.raises(ValueError, match="every must be"):
        TrainingMonitor(5, every=-1)
    with pytest.raises(ValueError, match="epochs must be"):
        TrainingMonitor(5, epochs=0)
    with pytest.raises(ValueError, match="weight must be"):
        TrainingMonitor(5, smoothing=1.5)
    m = monitors(5)
    with pytest.raises(TypeError, match=r"shape \(2,\).*loss.item\(\)"):
        m.log(tl.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="must be a number"):
        m.log("0.5")
    with pytest.raises(ValueError, match="'loss' is recorded by the monitor"):
        m.log(0.5, loss=1.0)
    assert m.history["loss"] == []  # a refused log leaves no trace
    with pytest.raises(ValueError, match="no step was logged"):
        m.epoch_end(acc=1.0)
    m.log(0.5)
    m.epoch_end()
    with pytest.raises(ValueError, match="no step was logged since the last epoch_end"):
        m.epoch_end()


@pytest.mark.parametrize("shape, kwargs, msg", [
    ((10, 10, 3), {}, r"2-D \(out, in\).*got shape \(10, 10, 3\)"),
    ((5,), {}, "got shape"),
    ((4, 10), {}, "not a square number; pass image_shape"),
    ((4, 12), {"image_shape": (3, 5)}, r"does not hold the 12 inputs"),
    ((8, 3, 3, 3), {}, "has 3 input channels; pick the one to draw with in_channel"),
    ((8, 3, 3, 3), {"in_channel": 3}, r"in_channel must be an integer in \[0, 3\)"),
    ((4, 16), {"max_filters": 0}, "max_filters must be a positive integer"),
    ((4, 16), {"labels": ["a"]}, "1 labels for 4 tiles"),
])
def test_draw_filters_bad_input(shape, kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        draw_filters(np.zeros(shape), **kwargs)


def test_draw_filters_rejects_non_numbers():
    with pytest.raises(TypeError, match="expected numbers"):
        draw_filters(np.array([["a", "b"]]))


# ---- what the monitor costs a loop with a model (its diagnostics figure) -------------------------------------------
def _mlp_loop(monitor, model, steps, clock, step_s=0.1):
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    x, y = tl.randn(16, 8), tl.randint(0, 3, (16,))
    for _ in range(steps):
        loss = tl.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        clock.t += step_s
        monitor.log(loss.item())


def test_an_empty_monitor_draws_no_plot(monitors):
    m = monitors(10)
    assert m.figure_draws == 0 and m.figure.figure == {} and "step 0/10" in m.label.value


def test_the_diagnostics_figure_stays_within_its_budget_and_the_last_step_draws_it(clock, monitors, monkeypatch):
    """The diagnostics figure takes seconds to draw: drawn at each loss redraw it doubled a nanoGPT loop. Now the
    loop spends at most DIAGNOSTICS_BUDGET of its time on it, and the last step shows every sample."""
    real = tv.draw_diagnostics

    def slow(*a, **k):
        clock.t += 2.0  # a 2 s figure
        return real(*a, **k)

    monkeypatch.setattr(tv, "draw_diagnostics", slow)
    model = tl.nn.Sequential(tl.nn.Linear(8, 16), tl.nn.Tanh(), tl.nn.Linear(16, 3))
    m = monitors(400, model=model, diagnostics_every=10, every=4.0)
    start = clock.t
    _mlp_loop(m, model, 400, clock)  # 40 s of steps, 40 samples
    spent = 2.0 * m.diagnostics_draws
    assert m.diagnostics_draws >= 2  # it does follow the loop: drawn during it, not only at the end
    assert spent <= tv.DIAGNOSTICS_BUDGET * (clock.t - start) + 2.0  # (+ the last step's own drawing)
    assert m._diag_drawn == len(m.diagnostics.steps) and m.diagnostics.steps[-1] == 400  # the last step: all


def test_the_diagnostics_figure_is_not_redrawn_without_a_new_sample(clock, monitors):
    model = tl.nn.Sequential(tl.nn.Linear(8, 16), tl.nn.Tanh(), tl.nn.Linear(16, 3))
    m = monitors(8, model=model, diagnostics_every=50, every=0.0)
    _mlp_loop(m, model, 6, clock, step_s=100.0)  # a plot redraw at every step, one sample (step 1)
    assert m.figure_draws == 6 and m.diagnostics_draws == 1
    m.after_cell()
    assert m.diagnostics_draws == 1
