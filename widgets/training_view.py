"""``TrainingMonitor``: a progress bar, a status line and a live loss plot for a training loop; and
``draw_filters``, weights (or images) as a grid of small pictures.

>>> from tinygrad_like.widgets import TrainingMonitor
>>> monitor = TrainingMonitor(4, title="demo")
>>> for loss in (2.0, 1.5, 1.0, 0.5):
...     monitor.log(loss)
>>> monitor.history["loss"], monitor.status()
([2.0, 1.5, 1.0, 0.5], 'step 4/4 · loss 0.5000')
>>> monitor.close()

Logging must cost microseconds, not a figure per step: ``log()`` appends to plain lists; the bar and the
status line follow at most every ``STATUS_EVERY`` seconds, and the plot is redrawn at most every ``every``
seconds; a slow redraw waits longer, so that redrawing takes at most ``REDRAW_BUDGET`` (5%) of the wall time.
``epoch_end()`` updates the status line at once and leaves the plot to the next redraw. The last step,
``finish()`` and the end of the cell (``%load_ext tinygrad_like.widgets``) always draw what is pending.
As everywhere in the widgets, three layers:

- the *model*: :class:`TrainingMonitor`'s ``history`` (one entry per step) and ``epochs`` (one per
  epoch), plain dicts of lists, and pure helpers :func:`smooth` and :func:`status_text`;
- the *drawing*: :func:`draw_training` (history in, matplotlib ``Figure`` out) and :func:`draw_filters`;
- the *widget*: :class:`TrainingMonitor`, an ``IntProgress``, an ``HTML`` status line and the plot in a
  :class:`~.figure_widget.FigureWidget` (SVG, sharp at any zoom, drawn again in the page's light or dark theme;
  its display also carries a static light PNG, for nbconvert and viewers without widgets).
"""

from __future__ import annotations

import html
import math
import numbers
import time
from functools import partial

import ipywidgets
import numpy as np

from ._base import View
from ._static_picture import add_png
from .diagnostics import LayerDiagnostics, draw_diagnostics
from .figure_widget import FigureWidget, palette

__all__ = ["TrainingMonitor", "draw_training", "draw_filters", "smooth", "status_text", "REDRAW_BUDGET"]

#: redrawing may take at most this share of the wall time while a loop logs
REDRAW_BUDGET = 0.05  # (a 0.1 s plot: redrawn about every 2 s; 15% cost a nanoGPT loop a sixth of its time)
#: the bar and the status line (cheap) update at most this often (seconds) between plot redraws
STATUS_EVERY = 0.1
#: while a loop logs, the diagnostics figure (four panels: seconds to draw) may take at most this share of the time
#: since the first step; the last step, ``finish()`` and the end of the cell draw it whatever it costs
DIAGNOSTICS_BUDGET = 0.05

#: the light theme's colours (the dark theme's are in figure_widget.PALETTES)
LOSS_COLOR = "#4c78a8"
METRIC_COLORS = ("#e45756", "#54a24b", "#f58518", "#b279a2", "#72b7b2", "#9d755d")

#: the clock the monitor throttles by (tests replace it)
_now = time.perf_counter


# ---- model (pure) -----------------------------------------------------------------------------------
def smooth(values, weight: float = 0.9) -> list[float]:
    """Exponential moving average with TensorBoard's bias correction: ``s_t = w s_{t-1} + (1-w) x_t``,
    divided by ``1 - w**t`` so the start is not pulled towards 0. Non-finite values are skipped (the
    smoothed line keeps its last value there). ``weight`` 0 returns the values themselves.

    >>> [round(v, 3) for v in smooth([1.0, 0.0, 0.0], 0.5)]
    [1.0, 0.333, 0.143]
    """
    if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not 0 <= weight < 1:
        raise ValueError(f"smooth: weight must be a number in [0, 1), got {weight!r}")
    out, acc, n = [], 0.0, 0
    for v in values:
        v = float(v)
        if math.isfinite(v):
            acc = weight * acc + (1 - weight) * v
            n += 1
        out.append(acc / (1 - weight ** n) if n else math.nan)
    return out


def _fmt(v) -> str:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return str(int(v))
    return f"{float(v):.4f}"


def status_text(step: int, total: int, loss: float | None = None, epoch: int | None = None,
                epochs: int | None = None, metrics: dict | None = None) -> str:
    """The monitor's status line: ``step 120/560 · epoch 3/10 · loss 0.2345 · test_acc 0.9611``.

    >>> status_text(120, 560, 0.23451, epoch=3, epochs=10, metrics={"test_acc": 0.96111})
    'step 120/560 · epoch 3/10 · loss 0.2345 · test_acc 0.9611'
    """
    parts = [f"step {step}/{total}"]
    if epoch is not None:
        parts.append(f"epoch {epoch}/{epochs}" if epochs else f"epoch {epoch}")
    if loss is not None:
        parts.append(f"loss {_fmt(loss)}")
    for k, v in (metrics or {}).items():
        parts.append(f"{k} {_fmt(v)}")
    return " · ".join(parts)


def _as_float(value, what: str) -> float:
    """A number, or a one-element tensor / array (its ``.item()``), as a Python float."""
    if isinstance(value, bool) or isinstance(value, (str, bytes)):
        raise TypeError(f"{what} must be a number, got {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Real):
        return float(value)
    item = getattr(value, "item", None)
    if callable(item):
        shape = tuple(getattr(value, "shape", ()))
        if math.prod(shape) != 1:
            raise TypeError(f"{what} must be a number or a one-element tensor, got a tensor of shape {shape}; "
                            f"log a scalar such as loss.item()")
        return _as_float(item(), what)
    raise TypeError(f"{what} must be a number (e.g. loss.item()), got {type(value).__name__}")


# ---- drawing (pure: history in, Figure out) -----------------------------------------------------------
def draw_training(history: dict, epochs: dict | None = None, total_steps: int | None = None, *, title: str = "",
                  smoothing: float = 0.9, logy: bool = True, width: float = 7.0, dpi: int = 80):
    """Loss per step (thin), its smoothed line (thick) and, on a second y axis, each epoch metric as
    markers at the step where its epoch ended. Returns a ``Figure`` (not registered with pyplot).

    ``history`` holds ``step`` and ``loss`` lists (as :attr:`TrainingMonitor.history`); ``epochs`` holds
    ``step`` and one list per metric (as :attr:`TrainingMonitor.epochs`; its ``epoch`` and ``loss`` entries
    are not drawn as metrics: the train loss is already the left axis). The loss axis is logarithmic
    when ``logy`` and every loss is positive. Colours follow the theme being drawn (:func:`.figure_widget.themed`).
    """
    from matplotlib.figure import Figure

    pal = palette()
    loss_color, metric_colors = pal["loss"], pal["metrics"]

    steps = list(history.get("step", []))
    loss = [float(v) for v in history.get("loss", [])]
    if len(steps) != len(loss):
        raise ValueError(f"draw_training: history has {len(steps)} steps but {len(loss)} losses")
    fig = Figure(figsize=(width, 3.0), dpi=dpi)
    ax = fig.subplots()
    ax.set_xlabel("step", fontsize=8)
    ax.tick_params(labelsize=7)
    if title:
        ax.set_title(title, fontsize=9)
    right = max([total_steps or 0, *steps[-1:]]) or 1
    ax.set_xlim(0, right)
    if not steps:
        ax.text(0.5, 0.5, "no steps logged yet", ha="center", va="center", transform=ax.transAxes, fontsize=9)
        ax.set_yticks([])
        return fig
    finite = [v for v in loss if math.isfinite(v)]
    use_log = logy and bool(finite) and min(finite) > 0
    if use_log:
        from matplotlib.ticker import FuncFormatter, LogLocator

        ax.set_yscale("log")
        plain = FuncFormatter(lambda v, _pos: f"{v:g}")  # 0.5, not 5x10^-1
        ax.yaxis.set_major_formatter(plain)
        if max(finite) / min(finite) < 100:  # under two decades: label 2, 3, 5 in between too
            ax.yaxis.set_minor_locator(LogLocator(subs=(2.0, 3.0, 5.0)))
            ax.yaxis.set_minor_formatter(plain)
        else:
            ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _pos: ""))
    ax.plot(steps, loss, color=loss_color, alpha=0.35, linewidth=0.8, label="loss per step")
    ax.plot(steps, smooth(loss, smoothing), color=loss_color, linewidth=1.8, label=f"smoothed ({smoothing:g})")
    ax.set_ylabel("train loss" + (" (log scale)" if use_log else ""), fontsize=8, color=loss_color)
    ep = epochs or {}
    ends = list(ep.get("step", []))
    if 0 < len(ends) <= 40:
        for s in ends:
            ax.axvline(s, color=pal["grid"], linewidth=0.6, linestyle=":", zorder=0)
    handles, labels = ax.get_legend_handles_labels()
    names = [k for k in ep if k not in ("epoch", "step", "loss")]
    if names and ends:
        ax2 = ax.twinx()
        ax2.tick_params(labelsize=7)
        values = []
        for i, name in enumerate(names):
            ys = [float(v) for v in ep[name]]
            values += [v for v in ys if math.isfinite(v)]
            ax2.plot(ends, ys, marker="o", markersize=4, linewidth=1.0, linestyle="--", clip_on=False,
                     color=metric_colors[i % len(metric_colors)], label=name)
            ax2.annotate(_fmt(ys[-1]), (ends[-1], ys[-1]), textcoords="offset points", xytext=(-4, 6), ha="right",
                         fontsize=7, color=metric_colors[i % len(metric_colors)], zorder=5,
                         bbox={"boxstyle": "round,pad=0.15", "fc": pal["bg"], "ec": "none", "alpha": 0.85})
        if values and 0 <= min(values) and max(values) <= 1:  # accuracies and the like: up to 1, from a round tenth
            low = math.floor(min(values) * 10) / 10
            pad = 0.05 * (1 - low)  # (a first accuracy on the round tenth itself is drawn whole, not cut in half)
            ax2.set_ylim(low - pad, 1 + pad)
        ax2.set_ylabel(", ".join(names) + " (per epoch)", fontsize=8)
        h2, l2 = ax2.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=min(len(labels), 4),
              frameon=False)
    return fig


def _to_numpy(weight) -> np.ndarray:
    if hasattr(weight, "detach") and hasattr(weight, "numpy"):
        weight = weight.detach().numpy()  # a tinygrad_like (or torch) tensor, parameters included
    arr = np.asarray(weight)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"draw_filters: expected numbers, got an array of dtype {arr.dtype}")
    return arr.astype(np.float64)


def draw_filters(weight, *, image_shape: tuple[int, int] | None = None, in_channel: int | None = None,
                 max_filters: int = 64, ncols: int | None = None, labels=None, title: str | None = None,
                 cmap: str = "RdBu_r", symmetric: bool = True, colorbar: bool = True, tile: float = 0.75,
                 dpi: int = 80):
    """Weights as a grid of small images, one per unit or output channel. Returns a ``Figure``.

    - 2-D ``(out, in)`` (a ``Linear`` weight, or a batch of flat images): row ``i`` becomes an image of
      ``image_shape`` (default: square, e.g. 64 inputs -> 8x8), so each hidden unit shows the input
      pattern it responds to.
    - 4-D ``(out, in, kh, kw)`` (a ``Conv2d`` weight, or feature maps with a channel axis of 1): one
      image per output channel, from input channel ``in_channel`` (needed when ``in`` > 1).

    The first ``max_filters`` are drawn, ``ncols`` per row (default up to 8). With ``symmetric`` the
    colour scale is ``[-m, m]`` with ``m`` the largest ``|w|`` shown, shared by all tiles, in a diverging
    colormap (white is 0, red positive, blue negative); set ``symmetric=False`` and e.g. ``cmap="gray_r"``
    for non-negative pictures. ``labels`` (one string per tile) replace the tile numbers.
    """
    from matplotlib.figure import Figure

    w = _to_numpy(weight)
    if w.ndim == 2:
        out, n_in = w.shape
        if image_shape is None:
            side = math.isqrt(n_in)
            if side * side != n_in:
                raise ValueError(f"draw_filters: a 2-D weight of shape {w.shape} has {n_in} inputs per unit, not a "
                                 f"square number; pass image_shape=(h, w) with h * w == {n_in}")
            image_shape = (side, side)
        if len(image_shape) != 2 or image_shape[0] * image_shape[1] != n_in:
            raise ValueError(f"draw_filters: image_shape {tuple(image_shape)} does not hold the {n_in} inputs of a "
                             f"weight of shape {w.shape}")
        images = w.reshape(out, *image_shape)
        kind = "unit"
    elif w.ndim == 4:
        out, n_in = w.shape[:2]
        if image_shape is not None:
            raise ValueError("draw_filters: image_shape is for 2-D weights; a 4-D weight's images are (kh, kw)")
        if in_channel is None:
            if n_in != 1:
                raise ValueError(f"draw_filters: the conv weight of shape {w.shape} has {n_in} input channels; "
                                 f"pick the one to draw with in_channel=k (0 <= k < {n_in})")
            in_channel = 0
        if isinstance(in_channel, bool) or not isinstance(in_channel, (int, np.integer)) \
                or not 0 <= in_channel < n_in:
            raise ValueError(f"draw_filters: in_channel must be an integer in [0, {n_in}), got {in_channel!r}")
        images = w[:, in_channel]
        kind = "channel"
    else:
        raise ValueError(f"draw_filters: expected a 2-D (out, in) Linear weight or a 4-D (out, in, kh, kw) conv "
                         f"weight, got shape {w.shape}")
    if isinstance(max_filters, bool) or not isinstance(max_filters, (int, np.integer)) or max_filters < 1:
        raise ValueError(f"draw_filters: max_filters must be a positive integer, got {max_filters!r}")
    n = min(out, int(max_filters))
    if out == 0:
        raise ValueError(f"draw_filters: the weight of shape {w.shape} has no units to draw")
    if ncols is None:
        ncols = min(n, 8)
    if isinstance(ncols, bool) or not isinstance(ncols, (int, np.integer)) or ncols < 1:
        raise ValueError(f"draw_filters: ncols must be a positive integer, got {ncols!r}")
    ncols = min(int(ncols), n)
    nrows = -(-n // ncols)
    if labels is not None:
        labels = [str(s) for s in labels]
        if len(labels) < n:
            raise ValueError(f"draw_filters: {len(labels)} labels for {n} tiles")
    images = images[:n]
    if symmetric:
        m = float(np.max(np.abs(images))) or 1.0
        vmin, vmax = -m, m
    else:
        vmin, vmax = float(images.min()), float(images.max())
        if vmin == vmax:
            vmax = vmin + 1.0
    h, wd = images.shape[1:]
    cell = tile * max(h, wd) / 8 if max(h, wd) > 8 else tile
    fig_w = ncols * cell * 1.15 + (0.7 if colorbar else 0.1)
    fig_h = nrows * cell * 1.35 + 0.4  # room for each tile's title, and the figure's on top
    fig = Figure(figsize=(fig_w, fig_h), dpi=dpi)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    fig.subplots_adjust(left=0.05 / fig_w, right=1 - (0.7 if colorbar else 0.05) / fig_w, bottom=0.05 / fig_h,
                        top=1 - 0.4 / fig_h, wspace=0.15, hspace=0.35)
    im = None
    for i, ax in enumerate(axes.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        if i >= n:
            ax.set_axis_off()
            continue
        im = ax.imshow(images[i], cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
        ax.set_title(labels[i] if labels is not None else str(i), fontsize=7, pad=2)
        for s in ax.spines.values():
            s.set_linewidth(0.4)
    if colorbar and im is not None:
        cax = fig.add_axes((1 - 0.55 / fig_w, 0.1, 0.12 / fig_w, 0.8 - 0.4 / fig_h))
        fig.colorbar(im, cax=cax).ax.tick_params(labelsize=7)
    shown = f"first {n} of {out}" if n < out else f"{n}"
    fig.suptitle(title if title is not None else f"{shown} {kind}s, {h}x{wd} each", fontsize=9,
                 y=1 - 0.12 / fig_h, va="top")
    return fig


# ---- the widget ----------------------------------------------------------------------------------------
class TrainingMonitor(View):
    """A live view of a training loop: ``IntProgress`` bar (``tl-training-bar``), a status line
    (``tl-training-status``: ``step 120/560 · epoch 3/10 · loss 0.2345``) and the loss plot
    (``tl-training-figure``) with the epoch metrics as markers on a second axis.

    ``log(step_loss, **metrics)`` once per step, ``epoch_end(**metrics)`` once per epoch (e.g. the test
    accuracy). ``history`` holds one entry per step (``step``, ``loss``, and each per-step metric; a metric
    missing at a step is NaN), ``epochs`` one entry per epoch (``epoch``, ``step`` where it ended, ``loss``:
    the mean train loss of its steps, and each epoch metric). Both are dicts of plain lists.

    ``every`` (seconds) is the least time between two redraws while steps are logged; ``epochs`` (the
    number planned) is optional: without it, it is inferred from the first epoch's length.

    With ``model``, a second figure (``tl-training-diagnostics``) shows the training diagnostics of
    :mod:`.diagnostics`, sampled every ``diagnostics_every`` steps: saturation per layer, activation and gradient
    histograms, and the update-to-data ratio per weight (``monitor.diagnostics`` holds the numbers). Call ``log()``
    after ``optimizer.step()``, as the usual loop does.
    """

    css_class = "tl-training-monitor"
    listens_to = ()  # fed by log() / epoch_end(), not by core events

    def __init__(self, total_steps: int, *, title: str = "", every: float = 0.5, epochs: int | None = None,
                 smoothing: float = 0.9, logy: bool = True, model=None, diagnostics_every: int = 10) -> None:
        if isinstance(total_steps, bool) or not isinstance(total_steps, (int, np.integer)):
            raise TypeError(f"TrainingMonitor: total_steps must be an integer, got {type(total_steps).__name__}")
        if total_steps <= 0:
            raise ValueError(f"TrainingMonitor: total_steps must be positive, got {total_steps}")
        if isinstance(every, bool) or not isinstance(every, numbers.Real) or not every >= 0:
            raise ValueError(f"TrainingMonitor: every must be a number of seconds >= 0, got {every!r}")
        if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer))
                                   or epochs <= 0):
            raise ValueError(f"TrainingMonitor: epochs must be a positive integer or None, got {epochs!r}")
        smooth([], smoothing)  # validates the weight now, not at the first redraw
        self.total_steps = int(total_steps)
        self.title = str(title)
        self.every = float(every)
        self.planned_epochs = None if epochs is None else int(epochs)
        self.smoothing = float(smoothing)
        self.logy = bool(logy)
        self.history: dict[str, list] = {"step": [], "loss": []}
        self.epochs: dict[str, list] = {"epoch": [], "step": [], "loss": []}
        self.figure_draws = 0  # plots drawn (the costly part of a redraw)
        self.diagnostics_draws = 0  # diagnostics figures drawn (only when a new sample came)
        self._diag_drawn = 0  # samples the diagnostics figure shows
        self._diag_cost = None  # seconds its last drawing took (None: not drawn yet)
        self._diag_spent = 0.0  # seconds spent drawing it while the loop ran
        self._first_log = None  # the clock time of the first log()
        self._live_draw = False  # the redraw under way is log()'s throttled one (not a final one)
        self._next_draw = 0.0  # the clock time before which log() does not redraw the plot
        self._next_status = 0.0  # ... nor the bar and the status line
        self._epoch_start = 0  # index in history of the current epoch's first step
        self.diagnostics = None if model is None else LayerDiagnostics(model, every=diagnostics_every)
        super().__init__(live=False)

        self.bar = ipywidgets.IntProgress(value=0, min=0, max=self.total_steps, layout=ipywidgets.Layout(width="260px"))
        self.bar.add_class("tl-training-bar")
        self.label = ipywidgets.HTML()
        self.label.add_class("tl-training-status")
        self.figure = FigureWidget(alt="training loss per step" + (f" ({self.title})" if self.title else ""))
        self.figure.add_class("tl-training-figure")
        self.diagnostics_figure = None
        figures = (self.figure,)
        if self.diagnostics is not None:
            self.diagnostics_figure = FigureWidget(alt="training diagnostics: saturation, activations, gradients "
                                                       "and update ratios per layer")
            self.diagnostics_figure.add_class("tl-training-diagnostics")
            figures = (self.figure, self.diagnostics_figure)
        head = [ipywidgets.HTML(f"<b>{html.escape(self.title)}</b>")] if self.title else []
        self.widget.children = (ipywidgets.HBox([*head, self._controls()]), ipywidgets.HBox([self.bar, self.label]),
                                *figures)
        self.refresh()

    # ---- recording --------------------------------------------------------------------------------------
    @property
    def step(self) -> int:
        """Steps logged so far."""
        return len(self.history["loss"])

    @property
    def finished(self) -> bool:
        return self.step >= self.total_steps

    def log(self, step_loss, **metrics) -> None:
        """Record one step: its loss (a number, or a one-element tensor) and optional per-step metrics
        (e.g. ``lr=...``). Redraws only when the throttle allows, and always at the last step."""
        loss = _as_float(step_loss, "TrainingMonitor.log: step_loss")
        values = {k: _as_float(v, f"TrainingMonitor.log: metric {k!r}") for k, v in metrics.items()}
        h = self.history
        n = len(h["loss"])
        for k in values:
            if k in ("step", "loss"):
                raise ValueError(f"TrainingMonitor.log: {k!r} is recorded by the monitor; use another metric name")
            if k not in h:
                h[k] = [math.nan] * n
        h["step"].append(n + 1)
        h["loss"].append(loss)
        for k, col in h.items():
            if k not in ("step", "loss"):
                col.append(values.get(k, math.nan))
        if self.diagnostics is not None:
            self.diagnostics.after_step(n + 1)
        self._stale = True
        if not self._live():  # paused: the numbers are kept, the drawing waits for resume()
            return
        now = _now()
        if self._first_log is None:
            self._first_log = now
        if n + 1 == self.total_steps:
            self.refresh()
        elif now >= self._next_draw:
            self._live_draw = True
            try:
                self.refresh()
            finally:
                self._live_draw = False
        elif now >= self._next_status:
            self._render_status()
            self._next_status = now + STATUS_EVERY

    def epoch_end(self, **metrics) -> None:
        """Close the current epoch with its metrics (e.g. ``test_acc=0.96``): the status line shows them at
        once, the plot marks them at the epoch's last step (at the next redraw)."""
        values = {k: _as_float(v, f"TrainingMonitor.epoch_end: metric {k!r}") for k, v in metrics.items()}
        e = self.epochs
        for k in values:
            if k in ("epoch", "step", "loss"):
                raise ValueError(f"TrainingMonitor.epoch_end: {k!r} is recorded by the monitor; use another name")
        if self.step == self._epoch_start:
            raise ValueError("TrainingMonitor.epoch_end: no step was logged since the last epoch_end; call log() "
                             "once per step first")
        n = len(e["epoch"])
        for k in values:
            if k not in e:
                e[k] = [math.nan] * n
        losses = [v for v in self.history["loss"][self._epoch_start:] if math.isfinite(v)]
        e["epoch"].append(n + 1)
        e["step"].append(self.step)
        e["loss"].append(sum(losses) / len(losses) if losses else math.nan)
        for k, col in e.items():
            if k not in ("epoch", "step", "loss"):
                col.append(values.get(k, math.nan))
        if self.planned_epochs is None and n == 0:
            self.planned_epochs = -(-self.total_steps // self.step)  # from the first epoch's length
        self._epoch_start = self.step
        self._stale = True
        self._render_status()  # cheap: the numbers at once; the plot follows at the next allowed redraw
        if self.finished:
            self.refresh()

    def finish(self) -> None:
        """Draw whatever is pending now (the last step and ``%load_ext``'s end of cell do it by themselves)."""
        if self._stale:
            self.refresh()

    # ---- status and rendering -------------------------------------------------------------------------------
    def current_epoch(self) -> int | None:
        """The epoch the last logged step belongs to (1-based), or None before any epoch is known."""
        done = len(self.epochs["epoch"])
        if self.step > self._epoch_start:
            return done + 1
        return done or None

    def status(self) -> str:
        """The status line's text."""
        h, e = self.history, self.epochs
        last = {k: h[k][-1] for k in h if k not in ("step", "loss") and h[k] and math.isfinite(h[k][-1])}
        if e["epoch"]:
            last.update({k: e[k][-1] for k in e if k not in ("epoch", "step", "loss") and math.isfinite(e[k][-1])})
        epochs = self.planned_epochs
        epoch = None
        if epochs is not None:  # an epoch number means something once the plan is known
            epoch = self.current_epoch() or 1
        return status_text(self.step, self.total_steps, h["loss"][-1] if h["loss"] else None, epoch, epochs, last)

    def _render_status(self) -> None:
        self.bar.value = min(self.step, self.total_steps)
        self.bar.bar_style = "success" if self.finished else ""
        self.label.value = f"<span style='font-family:monospace;font-size:12px'>{html.escape(self.status())}</span>"

    def _render(self) -> None:
        t0 = _now()
        self._render_status()
        # the figures keep these drawing functions (over the monitor's lists, not the monitor: a dropped monitor is
        # freed) and call them again when the page's theme changes
        if self.step:
            self.figure.show(partial(draw_training, self.history, self.epochs, self.total_steps, title="",
                                     smoothing=self.smoothing, logy=self.logy))
            self.figure_draws += 1
        else:  # (nothing logged yet: the status line says so; no figure to draw, no matplotlib to pay for)
            self.figure.clear()
        t1 = _now()
        # a slow redraw waits longer: at most REDRAW_BUDGET of the wall time goes to drawing
        self._next_draw = t1 + max(self.every, (t1 - t0) * (1 / REDRAW_BUDGET - 1))
        self._next_status = t1 + STATUS_EVERY
        self._render_diagnostics(t1)

    def _render_diagnostics(self, now: float) -> None:
        """Draw the diagnostics figure when it has a sample it does not show yet: at once for a final redraw (last
        step, ``finish()``, end of the cell, resume); during the loop only while the time spent on it stays within
        ``DIAGNOSTICS_BUDGET`` of the time since the first step (it takes seconds: drawn at every loss redraw, it
        doubled a nanoGPT loop)."""
        d = self.diagnostics
        if d is None or len(d.steps) <= self._diag_drawn:
            return
        if self._live_draw:
            guess = self._diag_cost if self._diag_cost is not None else 1.0  # (a first guess: about a second)
            elapsed = now - (self._first_log if self._first_log is not None else now)
            if self._diag_spent + guess > DIAGNOSTICS_BUDGET * elapsed:
                return
        self.diagnostics_figure.show(partial(draw_diagnostics, d))
        self._diag_drawn = len(d.steps)
        self.diagnostics_draws += 1
        self._diag_cost = _now() - now
        if self._live_draw:
            self._diag_spent += self._diag_cost

    def after_cell(self) -> None:
        """After a cell: draw what was logged since the last redraw (nothing if nothing was, or while paused)."""
        if self._stale and self._live():
            self.refresh()

    def close(self) -> None:
        """Close the view and take the diagnostics' hooks off the model."""
        if self.diagnostics is not None:
            self.diagnostics.close()
        super().close()

    def summary(self) -> str:
        return f"<TrainingMonitor: {self.status()}>"

    def _repr_mimebundle_(self, **kwargs):
        return add_png(super()._repr_mimebundle_(**kwargs), self.figure.png())
