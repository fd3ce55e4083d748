"""Training diagnostics: how saturated each layer is, what its activations and gradients look like, and how big each
update is next to the weights it changes; and the confusion matrix as a picture.

These are the plots that teach people to read a training run (as in the well-known from-scratch lectures on
training deep nets):

- **saturation per layer**: the share of tanh/sigmoid outputs in their flat tails (``|tanh| > 0.97``), or of dead
  ReLU units (never positive on a whole batch). A layer with much saturation learns slowly or not at all;
- **activation and gradient histograms per layer**: healthy layers have similar spreads; a layer whose gradients
  are far smaller than the others' barely learns;
- **the update-to-data ratio per weight**, ``std(Δw) / std(w)`` for one optimizer step, on a log scale with a
  line at ``1e-3``: far below it, the layer hardly moves; far above, it thrashes.

:class:`LayerDiagnostics` collects them from a model every ``every`` steps only (forward hooks on the activation
modules that do nothing between samples, and a copy of the weights just before the sampled step), so watching costs
next to nothing. :func:`draw_diagnostics` and :func:`draw_confusion` are pure: data in, matplotlib ``Figure`` out.

>>> import tinygrad_like as tl
>>> model = tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.Tanh(), tl.nn.Linear(8, 2))
>>> diag = LayerDiagnostics(model, every=1)
>>> opt = tl.optim.SGD(model.parameters(), lr=0.1)
>>> for step in range(1, 4):
...     out = model(tl.randn(16, 4))
...     loss = (out * out).mean()
...     opt.zero_grad(); loss.backward(); opt.step()
...     diag.after_step(step)
>>> diag.layers, diag.weights, len(diag.steps)
(['1 (Tanh)'], ['0.weight', '2.weight'], 3)
>>> diag.close()
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["LayerDiagnostics", "draw_diagnostics", "draw_confusion", "SATURATED", "UPDATE_RATIO_REF"]

#: |tanh| above this (sigmoid within 1 - this of 0 or 1... scaled alike) counts as saturated
SATURATED = 0.97
#: the reference update-to-data ratio drawn as a line
UPDATE_RATIO_REF = 1e-3
#: activations and gradients kept per layer for a histogram (a random subsample beyond this)
HIST_SAMPLE = 20_000
#: layers drawn at most (evenly chosen beyond this, and the figure says so)
MAX_LINES = 12

_ACTIVATIONS = {"Tanh": "tanh", "Sigmoid": "sigmoid", "ReLU": "relu", "LeakyReLU": "relu", "GELU": "relu",
                "SiLU": "relu", "ReLU6": "relu", "ELU": "relu"}


def _flat_sample(a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    a = a.reshape(-1)
    if a.size > HIST_SAMPLE:
        a = a[rng.choice(a.size, HIST_SAMPLE, replace=False)]
    return a.astype(np.float64)


def saturation(kind: str, a: np.ndarray) -> float:
    """Share of saturated outputs (tanh, sigmoid) or of dead units (ReLU family: a unit, i.e. a feature or channel,
    that is <= 0 for every example of the batch).

    >>> saturation("tanh", np.array([0.99, -0.5, -0.98, 0.1]))
    0.5
    >>> saturation("relu", np.array([[0.0, 1.0], [0.0, 2.0]]))   # unit 0 never fires
    0.5
    """
    if a.size == 0:
        return math.nan
    if kind == "tanh":
        return float(np.mean(np.abs(a) > SATURATED))
    if kind == "sigmoid":
        return float(np.mean(np.abs(2 * a - 1) > SATURATED))
    if a.ndim < 2:
        return float(np.mean(a <= 0))
    units = a.reshape(a.shape[0], a.shape[1], -1)  # (batch, units or channels, positions)
    return float(np.mean(np.all(units <= 0, axis=(0, 2))))


class LayerDiagnostics:
    """Samples a model's layers every ``every`` steps; call :meth:`after_step` once per optimizer step.

    ``layers``: the activation modules watched (``"3 (Tanh)"``); ``weights``: the parameters with 2 or more dims.
    ``steps``: the sampled steps; ``saturation[layer]`` and ``update_ratio[weight]``: one value per sampled step;
    ``activations[layer]`` / ``gradients[layer]``: the latest sample's values (a subsample) for the histograms.
    """

    def __init__(self, model, every: int = 10, seed: int = 0) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"LayerDiagnostics: every must be a positive integer (steps), got {every!r}")
        self.every = every
        self._rng = np.random.default_rng(seed)
        self._armed = False
        self._snapshot: dict[str, np.ndarray] = {}
        self._pending: dict[str, tuple] = {}  # layer -> (kind, activations) captured in the armed forward pass
        self._grads: dict[str, np.ndarray] = {}
        self._params = [(n, p) for n, p in model.named_parameters() if p.ndim >= 2]
        self.weights = [n for n, _ in self._params]
        self.layers: list[str] = []
        self._handles = []
        for name, module in model.named_modules():
            kind = _ACTIVATIONS.get(type(module).__name__)
            if kind is None or not name:
                continue
            label = f"{name} ({type(module).__name__})"
            self.layers.append(label)
            self._handles.append(module.register_forward_hook(self._hook(label, kind)))
        self.steps: list[int] = []
        self.saturation: dict[str, list[float]] = {k: [] for k in self.layers}
        self.update_ratio: dict[str, list[float]] = {k: [] for k in self.weights}
        self.activations: dict[str, np.ndarray] = {}
        self.gradients: dict[str, np.ndarray] = {}
        self.kinds: dict[str, str] = {}
        self._arm()  # the first step is sampled

    def _hook(self, label: str, kind: str):
        def hook(module, inputs, out) -> None:
            if not self._armed or not module.training:  # (between samples, and in eval passes: nothing)
                return
            self._pending[label] = (kind, out.detach().numpy().copy())
            if out.requires_grad:
                out.register_hook(lambda g: self._grads.__setitem__(label, g.detach().numpy().copy()))
        return hook

    def _arm(self) -> None:
        """The next step is sampled: keep the weights as they are before its update."""
        self._armed = True
        self._pending.clear()
        self._grads.clear()
        self._snapshot = {n: p.detach().numpy().astype(np.float64) for n, p in self._params}

    def after_step(self, step: int) -> None:
        """Once per step, after ``optimizer.step()``: record the sample if this step was one, arm the next."""
        if self._armed:
            self._armed = False
            self._record(step)
        if (step + 1) % self.every == 0:
            self._arm()

    def _record(self, step: int) -> None:
        self.steps.append(step)
        for label in self.layers:
            got = self._pending.get(label)
            if got is None:
                self.saturation[label].append(math.nan)
                continue
            kind, a = got
            self.kinds[label] = kind
            self.saturation[label].append(saturation(kind, a))
            self.activations[label] = _flat_sample(a, self._rng)
            g = self._grads.get(label)
            if g is not None:
                self.gradients[label] = _flat_sample(g, self._rng)
        for name, p in self._params:
            now = p.detach().numpy().astype(np.float64)
            before = self._snapshot.get(name)
            spread = float(now.std())
            ratio = float((now - before).std()) / spread if before is not None and spread > 0 else math.nan
            self.update_ratio[name].append(ratio)
        self._pending.clear()
        self._grads.clear()
        self._snapshot = {}

    def close(self) -> None:
        """Remove the hooks from the model."""
        for h in self._handles:
            h.remove()
        self._handles = []
        self._armed = False


def _pick(names: list[str]) -> list[str]:
    if len(names) <= MAX_LINES:
        return names
    idx = np.linspace(0, len(names) - 1, MAX_LINES).round().astype(int)
    return [names[i] for i in sorted(set(idx))]


def draw_diagnostics(diag: LayerDiagnostics, *, width: float = 10.0, dpi: int = 80):
    """Four panels: saturation per layer over steps, the latest activation and gradient histograms per layer, and
    log10 of the update-to-data ratio per weight over steps with a line at ``UPDATE_RATIO_REF``. Colours follow the
    theme being drawn (``figure_widget.themed``: the line colours are the theme's colour cycle)."""
    from matplotlib.figure import Figure

    from .figure_widget import palette

    muted = palette()["muted"]

    fig = Figure(figsize=(width, 5.2), dpi=dpi, layout="constrained")
    (ax_sat, ax_act), (ax_grad, ax_ud) = fig.subplots(2, 2)
    for ax in (ax_sat, ax_act, ax_grad, ax_ud):
        ax.tick_params(labelsize=7)
    layers, weights = _pick(diag.layers), _pick(diag.weights)
    colors = [f"C{i % 10}" for i in range(max(len(layers), len(weights), 1))]
    few = " (some layers)" if len(layers) < len(diag.layers) else ""

    ax_sat.set_title("saturated outputs / dead units per layer" + few, fontsize=9)
    ax_sat.set_ylabel("share (%)", fontsize=8)
    ax_sat.set_xlabel("step", fontsize=8)
    for c, name in zip(colors, layers):
        ys = [100 * v for v in diag.saturation[name]]
        ax_sat.plot(diag.steps, ys, color=c, linewidth=1.2, marker="o" if len(ys) < 20 else None, markersize=3,
                    label=name)
    top = max([100 * v for name in layers for v in diag.saturation[name] if math.isfinite(v)], default=0)
    ax_sat.set_ylim(0, min(100, max(10, 1.2 * top)))  # (a few percent stay readable; 100 at most)

    for ax, data, what in ((ax_act, diag.activations, "activations"), (ax_grad, diag.gradients, "gradients")):
        ax.set_title(f"{what} per layer (latest sample)", fontsize=9)
        ax.set_yticks([])
        drawn = False
        for c, name in zip(colors, layers):
            v = data.get(name)
            if v is None or not v.size:
                continue
            label = f"{name}: mean {v.mean():+.2g}, std {v.std():.2g}"
            if what == "activations" and diag.kinds.get(name) == "relu":  # the zeros would dwarf the rest
                label += f", {np.mean(v <= 0):.0%} <= 0 (not drawn)"
                v = v[v > 0]
                if not v.size:
                    continue
            hist, edges = np.histogram(v, bins=60, density=True)
            ax.plot((edges[:-1] + edges[1:]) / 2, hist, color=c, linewidth=1.2, label=label)
            drawn = True
        if drawn:
            ax.legend(fontsize=7, frameon=False, loc="upper right")
        else:
            ax.text(0.5, 0.5, f"no {what} sampled yet", ha="center", va="center", transform=ax.transAxes, fontsize=8)

    ax_ud.set_title("update / data ratio per weight, log10", fontsize=9)
    ax_ud.set_xlabel("step", fontsize=8)
    for c, name in zip(colors, weights):
        ys = [math.log10(v) if v > 0 else math.nan for v in diag.update_ratio[name]]
        ax_ud.plot(diag.steps, ys, color=c, linewidth=1.2, label=name)
    ref = math.log10(UPDATE_RATIO_REF)
    ax_ud.axhline(ref, color=muted, linestyle="--", linewidth=1)
    ax_ud.annotate("1e-3", (0, ref), xycoords=("axes fraction", "data"), xytext=(2, 2), textcoords="offset points",
                   fontsize=7, color=muted)
    logs = [v for name in weights for v in _finite_log(diag.update_ratio[name])]
    ax_ud.set_ylim(min([ref - 1.5, *logs]) - 0.2, max([ref + 1.5, *logs]) + 0.2)
    if weights:
        ax_ud.legend(fontsize=7, frameon=False, loc="lower right", ncol=2 if len(weights) > 6 else 1)
    if layers:
        ax_sat.legend(fontsize=7, frameon=False, loc="upper right")
    return fig


def _finite_log(values) -> list[float]:
    return [math.log10(v) for v in values if v > 0 and math.isfinite(v)]


def draw_confusion(truth, pred, classes=None, *, title: str = "", normalize: bool = False, dpi: int = 80):
    """The confusion matrix as a picture: rows are the true classes, columns the predicted ones, each cell shaded by
    its count (or by its share of the row with ``normalize``) with the count written in it; the diagonal (right
    answers) and the off-diagonal (mistakes) use two colour scales, so the few mistakes stand out.

    >>> fig = draw_confusion([0, 1, 1, 2], [0, 1, 2, 2])
    >>> [t.get_text() for t in fig.axes[0].texts if t.get_text()][:3]
    ['1', '1', '1']
    """
    from matplotlib.figure import Figure

    truth = np.asarray(getattr(truth, "numpy", lambda: truth)()).reshape(-1).astype(np.int64)
    pred = np.asarray(getattr(pred, "numpy", lambda: pred)()).reshape(-1).astype(np.int64)
    if truth.shape != pred.shape:
        raise ValueError(f"draw_confusion: {truth.size} true labels but {pred.size} predictions")
    if truth.size and (truth.min() < 0 or pred.min() < 0):
        raise ValueError("draw_confusion: labels must be non-negative class indices")
    n = int(max(truth.max(initial=-1), pred.max(initial=-1)) + 1)
    if classes is not None:
        classes = [str(c) for c in classes]
        if len(classes) < n:
            raise ValueError(f"draw_confusion: {len(classes)} class names for labels up to {n - 1}")
        n = len(classes)
    else:
        classes = [str(i) for i in range(n)]
    counts = np.zeros((n, n), np.int64)
    np.add.at(counts, (truth, pred), 1)
    rows = counts.sum(1, keepdims=True)
    shown = counts / np.maximum(rows, 1) if normalize else counts.astype(np.float64)
    side = 0.42 * n + 1.4
    fig = Figure(figsize=(side + 0.6, side), dpi=dpi, layout="constrained")
    ax = fig.subplots()
    diag = np.eye(n, dtype=bool)
    off = np.ma.masked_where(diag | (counts == 0), shown)
    on = np.ma.masked_where(~diag, shown)
    ax.imshow(on, cmap="Greens", vmin=0, vmax=max(float(on.max() or 1), 1e-9), interpolation="nearest")
    ax.imshow(off, cmap="Reds", vmin=0, vmax=max(float(off.max() or 1), 1e-9), interpolation="nearest")
    for i in range(n):
        for j in range(n):
            if counts[i, j]:
                strong = shown[i, j] > 0.55 * (on.max() if i == j else max(off.max() or 1, 1e-9))
                ax.text(j, i, str(counts[i, j]), ha="center", va="center", fontsize=7,
                        color="white" if strong else "black")
    ax.set_xticks(range(n), classes, fontsize=7)
    ax.set_yticks(range(n), classes, fontsize=7)
    ax.set_xlabel("predicted", fontsize=8)
    ax.set_ylabel("true", fontsize=8)
    wrong = int(counts.sum() - np.trace(counts))
    ax.set_title(title or f"{wrong} mistakes in {int(counts.sum())}", fontsize=9)
    ax.set_xticks(np.arange(-0.5, n), minor=True)
    ax.set_yticks(np.arange(-0.5, n), minor=True)
    ax.grid(which="minor", color="0.85", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    return fig
