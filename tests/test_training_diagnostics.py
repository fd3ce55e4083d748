"""Training diagnostics (widgets/diagnostics.py), the confusion matrix picture, and the TrainingMonitor's panels,
Pause and Close.

The numbers are checked against values computed here independently: the share of saturated tanh outputs of a
network built to saturate, dead ReLU units made dead on purpose, and the update-to-data ratio of a plain SGD step,
which is ``lr * std(grad) / std(w)`` by definition of the step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

import tinygrad_like as tl  # noqa: E402
from tinygrad_like.widgets import TrainingMonitor  # noqa: E402
from tinygrad_like.widgets.diagnostics import (  # noqa: E402
    LayerDiagnostics,
    draw_confusion,
    draw_diagnostics,
    saturation,
)

nn = tl.nn


def _mlp(act=nn.Tanh, scale=1.0):
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), act(), nn.Linear(32, 32), act(), nn.Linear(32, 3))
    with tl.no_grad():
        for p in model.parameters():
            p.mul_(scale)
    return model


def _train(model, steps, diag=None, lr=0.1, batch=64):
    opt = tl.optim.SGD(model.parameters(), lr=lr)
    x = tl.randn(batch, 8)
    y = tl.randint(0, 3, (batch,))
    for step in range(1, steps + 1):
        loss = tl.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if diag is not None:
            diag.after_step(step)
    return opt


def test_tanh_saturation_is_the_share_of_outputs_in_the_flat_tails():
    for scale, low, high in ((1.0, 0.0, 0.2), (20.0, 0.6, 1.0)):  # default init vs weights made 20x larger
        model = _mlp(scale=scale)
        diag = LayerDiagnostics(model, every=1)
        _train(model, 1, diag, lr=0.0)
        x = tl.randn(64, 8)  # (not the batch above: compare with an independent forward pass of the same weights)
        with tl.no_grad():
            h1 = model[1](model[0](x)).numpy()
        expected = float(np.mean(np.abs(h1) > 0.97))
        got = diag.saturation["1 (Tanh)"][0]
        assert low <= got <= high and low <= expected <= high, (scale, got, expected)
        diag.close()


def test_dead_relu_units_are_counted_per_unit_over_the_batch():
    model = _mlp(act=nn.ReLU)
    with tl.no_grad():
        model[0].bias[:8] = -100.0  # 8 of the 32 first-layer units can never fire
    diag = LayerDiagnostics(model, every=1)
    _train(model, 1, diag, lr=0.0)
    assert diag.saturation["1 (ReLU)"][0] == pytest.approx(8 / 32)
    assert saturation("relu", np.array([[0.0, 1.0, -2.0], [0.0, 0.5, 3.0]])) == pytest.approx(1 / 3)
    conv = np.zeros((2, 4, 3, 3))
    conv[:, 1:] = 1.0  # channel 0 dead everywhere
    assert saturation("relu", conv) == pytest.approx(1 / 4)


def test_update_to_data_ratio_of_an_sgd_step_is_lr_times_the_grad_spread_over_the_weight_spread():
    model = _mlp()
    diag = LayerDiagnostics(model, every=1)
    opt = tl.optim.SGD(model.parameters(), lr=0.05)
    x, y = tl.randn(16, 8), tl.randint(0, 3, (16,))
    loss = tl.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    grads = {n: p.grad.numpy().astype(np.float64) for n, p in model.named_parameters() if p.ndim >= 2}
    opt.step()
    diag.after_step(1)
    for name, p in model.named_parameters():
        if p.ndim < 2:
            continue
        expected = 0.05 * grads[name].std() / p.detach().numpy().astype(np.float64).std()
        assert diag.update_ratio[name][0] == pytest.approx(expected, rel=1e-4)
    assert set(diag.update_ratio) == {"0.weight", "2.weight", "4.weight"}  # weights only, not biases
    assert set(diag.gradients) == {"1 (Tanh)", "3 (Tanh)"} and all(g.size for g in diag.gradients.values())


def test_it_samples_every_n_steps_and_does_nothing_in_between_or_in_eval_passes():
    model = _mlp()
    diag = LayerDiagnostics(model, every=5)
    _train(model, 12, diag)
    assert diag.steps == [1, 5, 10]
    assert all(len(v) == 3 for v in diag.saturation.values())
    assert not diag._pending  # between samples the hooks keep nothing
    diag._arm()
    model.eval()
    with tl.no_grad():
        model(tl.randn(4, 8))
    assert not diag._pending  # an evaluation pass is not a training step
    model.train()
    diag.close()
    assert all(not m._forward_hooks for m in model.modules())


def test_draw_diagnostics_has_four_panels_and_the_reference_line():
    model = _mlp()
    diag = LayerDiagnostics(model, every=2)
    empty = draw_diagnostics(diag)
    assert len(empty.axes) == 4
    _train(model, 6, diag)
    fig = draw_diagnostics(diag)
    ax_sat, ax_act, ax_grad, ax_ud = fig.axes
    assert [line.get_label() for line in ax_sat.get_lines()] == ["1 (Tanh)", "3 (Tanh)"]
    assert len(ax_act.get_lines()) == 2 and len(ax_grad.get_lines()) == 2
    ref = [line for line in ax_ud.get_lines() if line.get_linestyle() == "--"]
    assert len(ref) == 1 and ref[0].get_ydata()[0] == pytest.approx(-3.0)
    lo, hi = ax_ud.get_ylim()
    for line in ax_ud.get_lines():
        ys = [v for v in np.asarray(line.get_ydata(), float) if math.isfinite(v)]
        assert all(lo <= v <= hi for v in ys)
    fig.canvas.draw()  # renders without error


def test_confusion_matrix_picture_counts_what_numpy_counts():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 5, 200)
    pred = np.where(rng.random(200) < 0.8, truth, rng.integers(0, 5, 200))
    fig = draw_confusion(tl.tensor(truth), tl.tensor(pred), classes=list("abcde"))
    ax = fig.axes[0]
    expected = np.zeros((5, 5), int)
    np.add.at(expected, (truth, pred), 1)
    written = {(round(t.get_position()[1]), round(t.get_position()[0])): int(t.get_text()) for t in ax.texts}
    assert written == {(i, j): int(expected[i, j]) for i in range(5) for j in range(5) if expected[i, j]}
    assert ax.get_title() == f"{int((truth != pred).sum())} mistakes in 200"
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcde")
    with pytest.raises(ValueError, match="3 true labels but 2 predictions"):
        draw_confusion([0, 1, 2], [0, 1])
    with pytest.raises(ValueError, match="2 class names for labels up to 2"):
        draw_confusion([0, 1, 2], [0, 1, 2], classes=["x", "y"])


def test_monitor_with_a_model_draws_the_diagnostics_and_close_removes_the_hooks():
    model = _mlp()
    monitor = TrainingMonitor(20, model=model, diagnostics_every=5, every=0.0)
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    x, y = tl.randn(16, 8), tl.randint(0, 3, (16,))
    for _ in range(20):
        loss = tl.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        monitor.log(loss.item())
    assert monitor.diagnostics.steps == [1, 5, 10, 15, 20]
    shown = monitor.diagnostics_figure.figure
    assert shown["svg"].startswith("<?xml") and "tl-training-diagnostics" in monitor.diagnostics_figure._dom_classes
    assert shown["svg"] != monitor.figure.figure["svg"]
    monitor.close()


def test_the_diagnostics_figure_follows_the_theme():
    """In the dark theme its text is light and its lines take the dark palette's colour cycle."""
    from tinygrad_like.widgets.figure_widget import PALETTES

    model = _mlp()
    monitor = TrainingMonitor(5, model=model, diagnostics_every=1, every=0.0)
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    x, y = tl.randn(16, 8), tl.randint(0, 3, (16,))
    for _ in range(5):
        loss = tl.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        monitor.log(loss.item())
    figure = monitor.diagnostics_figure
    light = figure.figure["svg"]
    figure.theme = "dark"
    dark = figure.figure["svg"]
    monitor.close()
    for key in ("fg", "muted"):
        assert PALETTES["dark"][key] in dark and PALETTES["dark"][key] not in light, key
    assert PALETTES["dark"]["cycle"][0] in dark and PALETTES["light"]["cycle"][0] in light
    assert PALETTES["light"]["fg"] not in dark
    assert all(not m._forward_hooks for m in model.modules())


def test_pause_keeps_logging_without_drawing_and_resume_catches_up():
    monitor = TrainingMonitor(10, every=0.0)
    draws = monitor.figure_draws
    button = monitor._pause_button
    button.value = True  # the Pause button
    assert monitor.paused and button.description == "Resume"
    for v in range(5):
        monitor.log(1.0 / (v + 1))
    monitor.after_cell()
    assert monitor.figure_draws == draws and monitor.step == 5  # numbers kept, nothing drawn
    button.value = False
    assert not monitor.paused and monitor.figure_draws == draws + 1  # one catch-up redraw
    monitor.close()


def test_the_close_button_closes_the_view():
    monitor = TrainingMonitor(3)
    root = monitor.widget
    close = root.children[0].children[-1].children[1]
    assert "tl-close" in close._dom_classes
    close.click()
    assert root.comm is None and monitor.closed  # closed (a closed view no longer holds its widgets)


def test_a_monitor_scrolled_away_waits_and_catches_up_when_shown():
    """The probe in the controls bar is what the browser sets when the view leaves or enters the screen."""
    monitor = TrainingMonitor(10, every=0.0)
    draws = monitor.figure_draws
    monitor._probe.visible = False  # scrolled away (the browser's IntersectionObserver)
    for v in range(4):
        monitor.log(1.0 / (v + 1))
    monitor.after_cell()
    assert monitor.figure_draws == draws and not monitor.visible
    monitor._probe.visible = True
    assert monitor.figure_draws == draws + 1 and monitor.visible
    monitor.close()
