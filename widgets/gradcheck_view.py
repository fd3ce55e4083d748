"""``GradcheckView(fn, inputs)``: the analytic and the finite-difference Jacobian side by side, for learners
writing their own ``Function``.

For every (output, input) pair the view shows three panels: the Jacobian from backward (*analytic*), the one
from float64 central differences (*numeric*), and the per-element ``|analytic - numeric|`` as a heatmap.
Elements outside ``atol + rtol * |numeric|`` (the rule of :func:`tinygrad_like.autograd.gradcheck`) are boxed
in red on all three panels. A verdict line above says pass or fail, and names the worst element by its row
(output element) and column (input element).

The picture is a :class:`~.figure_widget.FigureWidget` (SVG, in the page's light or dark theme): clicking any cell
of any panel explains that entry below it (:func:`entry_detail`: the output and input elements it relates, both
values, the tolerance, pass or fail, and the backward node under test) and outlines it on the pair's three panels.
The failing entries are also listed, worst first, for the keyboard.

Three layers, each testable on its own: :func:`gradcheck_model` (plain NumPy data),
:func:`draw_gradcheck` (model -> matplotlib Figure, no widgets) and :class:`GradcheckView` (the wiring).

>>> import tinygrad_like as tl
>>> from tinygrad_like.widgets.gradcheck_view import gradcheck_model
>>> x = tl.tensor([0.5, -1.0], dtype=tl.float64, requires_grad=True)
>>> m = gradcheck_model(lambda t: t * t, (x,))
>>> m.passed, len(m.pairs), m.pairs[0].analytic.shape
(True, 1, (2, 2))
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from functools import partial

import ipywidgets
import numpy as np

from tinygrad_like.autograd.torch_nodes import view_label

from ._base import View, weak_callback
from ._static_picture import add_png
from .figure_widget import FigureWidget, palette

#: panels drawn per (output, input) pair, left to right; each panel's Axes carries its name as its label
PANELS = ("analytic", "numeric", "difference")
#: the gid of the red boxes around elements outside the tolerance (one PatchCollection per panel)
MISMATCH_GID = "tl-gradcheck-mismatch"
#: write a value into a cell only when the cell is at least this large on screen (pixels at the figure's dpi), so
#: numbers never overlap: a 2x30 Jacobian gets numbers, a 512x512 one a picture
ANNOTATE_MIN_CELL = (26.0, 13.0)
#: the failing entries listed for inspection (the worst first)
LIST_MAX = 200
#: the details panel before anything is chosen
HINT = ("<div class='tl-gc-hint' style='font-size:12px;color:var(--jp-ui-font-color2,#616161)'>Click a cell of the "
        "pictures for the output and input elements it relates and the backward node under test.</div>")
#: the verdict's and the detail panel's colours, readable in JupyterLab's light and dark themes (4.5:1 at least)
STYLE = ("<style>.tl-gc-pass{color:#2e7d32}.tl-gc-fail{color:#c62828}.tl-gc-empty{color:#8d6e00}"
         ".tl-gc-key{color:var(--jp-ui-font-color2,#616161);white-space:nowrap;padding:1px 10px 1px 0;"
         "vertical-align:top}"
         "body[data-jp-theme-light='false'] .tl-gc-pass{color:#81c784}"
         "body[data-jp-theme-light='false'] .tl-gc-fail{color:#ff8a80}"
         "body[data-jp-theme-light='false'] .tl-gc-empty{color:#ffd54f}</style>")


# ---- model ---------------------------------------------------------------------------------------------------
@dataclass
class PairCheck:
    """One (output, input) pair: Jacobians of shape ``(output.numel(), input.numel())``.

    Row ``r`` is output element ``r`` (flat, C order), column ``c`` is input element ``c``.
    """

    output: int
    input: int  # the position of the input among ``fn``'s arguments
    output_shape: tuple
    input_shape: tuple
    analytic: np.ndarray
    numeric: np.ndarray
    diff: np.ndarray  # |analytic - numeric|
    tol: np.ndarray  # atol + rtol * |numeric|
    bad: np.ndarray  # bool: outside the tolerance (np.isclose's rule, NaN counts as bad)
    #: the graph nodes a gradient passes through from the output back to the input, the output's grad_fn first
    path: tuple[str, ...] = ()
    #: the backward node under test: the first node on ``path`` that the learner wrote (a Function defined outside
    #: tinygrad_like), else the output's grad_fn; "" when the output has no grad_fn
    node: str = ""

    @property
    def n_bad(self) -> int:
        return int(self.bad.sum())

    @property
    def excess(self) -> np.ndarray:
        """``diff / tol``: above 1 means outside the tolerance; NaN differences count as infinite."""
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = self.diff / self.tol
        return np.where(np.isnan(self.diff), np.inf, ratio)

    def worst(self) -> tuple[int, int] | None:
        """(row, column) of the worst element: the largest |difference| among those outside the tolerance
        (NaN first), or, when all are inside, the one closest to its tolerance."""
        if self.diff.size == 0:
            return None
        score = self._score()
        r, c = np.unravel_index(int(np.argmax(score)), self.diff.shape)
        return int(r), int(c)

    def _score(self) -> np.ndarray:
        if self.bad.any():
            d = np.where(np.isnan(self.diff), np.inf, self.diff)
            return np.where(self.bad, d, -1.0)
        return self.excess

    def bad_elements(self) -> list[tuple[int, int]]:
        """(row, column) of every element outside the tolerance, row-major."""
        return [(int(r), int(c)) for r, c in np.argwhere(self.bad)]

    def title(self) -> str:
        return f"d out{self.output}{list(self.output_shape)} / d in{self.input}{list(self.input_shape)}"


@dataclass
class GradcheckModel:
    pairs: list[PairCheck]
    eps: float
    atol: float
    rtol: float
    skipped_inputs: list[int] = field(default_factory=list)  # arguments that are not tensors needing grad

    @property
    def n_bad(self) -> int:
        return sum(p.n_bad for p in self.pairs)

    @property
    def n_total(self) -> int:
        return sum(p.diff.size for p in self.pairs)

    @property
    def passed(self) -> bool:
        return self.n_bad == 0

    def worst(self) -> tuple[int, int, int] | None:
        """(pair index, row, column) of the worst element over all pairs (see :meth:`PairCheck.worst`)."""
        best, where = (False, -np.inf), None
        for i, p in enumerate(self.pairs):
            w = p.worst()
            if w is None:
                continue
            key = (bool(p.bad[w]), float(p._score()[w]))  # a failing element beats any passing one
            if key > best:
                best, where = key, (i, *w)
        return where


def _unravel(k: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(k, shape)) if shape else ()


def gradcheck_model(fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3) -> GradcheckModel:
    """Both Jacobians of every (output, input) pair, compared as :func:`~tinygrad_like.autograd.gradcheck` does.

    Inputs that need gradients must be float64 tensors (finite differences need the precision).
    """
    import tinygrad_like as tl
    from tinygrad_like.autograd import jacobians

    inputs = tuple(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, tl.Tensor) and t.requires_grad]
    skipped = [i for i in range(len(inputs)) if i not in diff_idx]
    analytic, numeric = jacobians(fn, inputs, eps)
    outs = fn(*inputs)  # once more, recording: its graph names the backward nodes each pair goes through
    outs = (outs,) if isinstance(outs, tl.Tensor) else tuple(outs)
    pairs = []
    for oi, o in enumerate(outs):
        for j, i in enumerate(diff_idx):
            a = np.asarray(analytic[j][oi], dtype=np.float64)
            n = np.asarray(numeric[j][oi], dtype=np.float64)
            d = np.abs(a - n)
            tol = atol + rtol * np.abs(n)
            bad = ~np.isclose(a, n, atol=atol, rtol=rtol)
            nodes = _backward_nodes(o, inputs[i])
            pairs.append(PairCheck(oi, i, tuple(o.shape), tuple(inputs[i].shape), a, n, d, tol, bad,
                                   tuple(view_label(node) for node in nodes), _node_under_test(o, nodes)))
    return GradcheckModel(pairs, eps, atol, rtol, skipped)


def _node_under_test(out, nodes: list) -> str:
    """The learner's own Function on the path (its class is defined outside tinygrad_like), else the output's
    grad_fn: the backward that this pair checks."""
    own = [n for n in nodes if type(n).__module__.partition(".")[0] != "tinygrad_like"]
    if own:
        return view_label(own[0])
    grad_fn = getattr(out, "grad_fn", None)
    return "" if grad_fn is None else view_label(grad_fn)


def verdict_text(model: GradcheckModel) -> str:
    """One line: PASS/FAIL, how many elements differ, the worst element with its row and column."""
    if not model.pairs:
        return "NOTHING TO CHECK: no input requires grad (pass float64 tensors with requires_grad=True)"
    w = model.worst()
    rule = f"|analytic - numeric| <= {model.atol:g} + {model.rtol:g} * |numeric|"
    if w is None:
        return f"PASS: the Jacobians are empty ({rule})"
    p = model.pairs[w[0]]
    r, c = w[1], w[2]
    where = (f"output {p.output} w.r.t. input {p.input}, row {r} (output element {_unravel(r, p.output_shape)}), "
             f"column {c} (input element {_unravel(c, p.input_shape)})")
    values = (f"analytic {p.analytic[r, c]:.6g} vs numeric {p.numeric[r, c]:.6g}, "
              f"|difference| {p.diff[r, c]:.3g}")
    if model.passed:
        return (f"PASS: all {model.n_total} Jacobian entries in {len(model.pairs)} pair(s) agree ({rule}); "
                f"closest to the tolerance: {where}: {values}")
    failing = sum(1 for q in model.pairs if q.n_bad)
    return (f"FAIL: {model.n_bad} of {model.n_total} Jacobian entries differ, in {failing} of {len(model.pairs)} "
            f"pair(s) ({rule}); worst: {where}: {values} > tolerance {p.tol[r, c]:.3g}")


def verdict_html(model: GradcheckModel) -> str:
    text = verdict_text(model)
    head, _, rest = text.partition(":")
    kind = "pass" if model.passed and model.pairs else "fail" if model.pairs else "empty"
    return (f"{STYLE}<div class='tl-gradcheck-{kind}' style='font-size:13px'><b class='tl-gc-{kind}'>"
            f"{html.escape(head)}</b>:{html.escape(rest)}</div>")


# ---- drawing (pure: model -> Figure) ----------------------------------------------------------------------------
def draw_gradcheck(model: GradcheckModel, panel_in: float = 3.4):
    """A matplotlib Figure with one row per (output, input) pair and three panels per row (see :data:`PANELS`).

    Analytic and numeric share one diverging colour scale (so equal values look equal); the difference panel
    has its own. Each panel has a colorbar. Elements outside the tolerance get a red box on all three panels
    (a PatchCollection with gid :data:`MISMATCH_GID`). Uses ``matplotlib.figure.Figure`` directly: no pyplot
    state, no backend needed. Colours follow the theme being drawn (:func:`.figure_widget.themed`): the colormaps
    put 0 on the page's own shade (white in the light theme, near black in the dark one).
    """
    from matplotlib.collections import PatchCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    pal = palette()

    n = max(1, len(model.pairs))
    height = 0.6 + 3.2 * n
    # constrained layout: titles, labels and colorbars are fitted, never clipped or drawn over each other
    fig = Figure(figsize=(3 * panel_in, height), dpi=80, layout="constrained")
    if not model.pairs:
        ax = fig.add_subplot()
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no input requires grad: nothing to compare", ha="center", va="center")
        return fig
    axes = fig.subplots(n, 3, squeeze=False)
    state = "PASS" if model.passed else f"FAIL ({model.n_bad} of {model.n_total} entries differ)"
    fig.suptitle(f"gradcheck {state}   eps={model.eps:g}  atol={model.atol:g}  rtol={model.rtol:g}", fontsize=10,
                 color=pal["ok"] if model.passed else pal["bad"])
    for row, p in zip(axes, model.pairs):
        rows, cols = p.diff.shape
        aspect = "equal" if rows and cols and max(rows / cols, cols / rows) <= 4 else "auto"
        lim = float(np.nanmax(np.abs(np.concatenate([p.analytic.ravel(), p.numeric.ravel()]))) if p.diff.size else 0)
        lim = lim if np.isfinite(lim) and lim > 0 else 1.0
        finite = p.diff[np.isfinite(p.diff)]
        # the scale reaches at least the largest tolerance, so differences well inside it stay pale
        dmax = max(float(finite.max()) if finite.size else 0.0, float(np.max(p.tol)) if p.tol.size else 0.0)
        dmax = dmax if dmax > 0 else 1.0
        panels = (
            ("analytic", p.analytic, dict(cmap=pal["diverging"], vmin=-lim, vmax=lim),
             f"analytic (backward)\n{p.title()}"),
            ("numeric", p.numeric, dict(cmap=pal["diverging"], vmin=-lim, vmax=lim),
             f"numeric (central differences)\n{p.title()}"),
            ("difference", p.diff, dict(cmap=pal["sequential"], vmin=0.0, vmax=dmax),
             f"|analytic - numeric|\n{p.n_bad} of {p.diff.size} outside tolerance"),
        )
        # the size of one cell on screen: the panel is about a third of the width, less its colorbar
        cell_w = (panel_in * 0.72 * fig.dpi) / max(cols, 1)
        cell_h = min(panel_in * 0.72 * fig.dpi, 2.3 * fig.dpi) / max(rows, 1) if aspect == "auto" else cell_w
        annotate = cell_w >= ANNOTATE_MIN_CELL[0] and cell_h >= ANNOTATE_MIN_CELL[1]
        bad = p.bad_elements()
        for ax, (name, data, style, title) in zip(row, panels):
            ax.set_label(name)
            # "none": one image pixel per element, drawn with sharp edges at any zoom (SVG)
            im = ax.imshow(data, interpolation="none", aspect=aspect, **style)
            fig.colorbar(im, ax=ax, shrink=0.85)
            ax.set_title(title, fontsize=8, color=pal["bad"] if name == "difference" and p.n_bad else pal["fg"])
            ax.set_xlabel(f"column: input {p.input} element", fontsize=7)
            ax.set_ylabel(f"row: output {p.output} element", fontsize=7)
            ax.tick_params(labelsize=6)
            if cols <= 16:
                ax.set_xticks(range(cols))
            if rows <= 16:
                ax.set_yticks(range(rows))
            if annotate:
                for (r, c), v in np.ndenumerate(data + 0.0):  # + 0.0: no "-0" labels
                    if name == "difference" and not p.bad[r, c]:
                        continue  # differences inside the tolerance are rounding noise: leave them blank
                    ax.text(c, r, f"{v:.2g}", ha="center", va="center", fontsize=6, color=_ink_on(im, v))
            if bad:
                boxes = PatchCollection([Rectangle((c - 0.5, r - 0.5), 1.0, 1.0) for r, c in bad],
                                        facecolor="none", edgecolor="#00c853" if name == "difference" else pal["mark"],
                                        linewidth=1.6, gid=MISMATCH_GID, label="mismatch")
                ax.add_collection(boxes)
    return fig


def _ink_on(im, v: float) -> str:
    """Black or white, whichever reads on the colour ``im`` paints ``v`` with (its relative luminance)."""
    if not np.isfinite(v):
        return palette()["fg"]
    r, g, b, _ = im.cmap(im.norm(v))
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return "black" if 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] > 0.18 else "white"


def marked_elements(ax) -> list[tuple[int, int]]:
    """(row, column) of the cells boxed as mismatching on one panel (reads the drawing back; for tests)."""
    out = []
    for coll in ax.collections:
        if coll.get_gid() != MISMATCH_GID:
            continue
        for path in coll.get_paths():
            ext = path.get_extents()
            out.append((int(round((ext.y0 + ext.y1) / 2)), int(round((ext.x0 + ext.x1) / 2))))
    return sorted(out)


def panel_axes(fig) -> list:
    """The Jacobian panels of a drawing (colorbars excluded), row by row."""
    return [ax for ax in fig.axes if ax.get_label() in PANELS]


def failing_entries(model: GradcheckModel, limit: int = LIST_MAX) -> list[tuple[int, int, int]]:
    """(pair index, row, column) of the entries outside the tolerance, the worst (largest excess) first."""
    found = []
    for i, p in enumerate(model.pairs):
        if p.n_bad:
            excess = p.excess
            found += [(float(excess[r, c]), i, r, c) for r, c in p.bad_elements()]
    found.sort(key=lambda e: -e[0])
    return [(i, r, c) for _, i, r, c in found[:limit]]


def entry_text(model: GradcheckModel, i: int, r: int, c: int) -> str:
    """One entry, for a list: ``out0[1, 2] / in1[3]: analytic 2 vs numeric 1``."""
    p = model.pairs[i]
    return (f"out{p.output}{list(_unravel(r, p.output_shape))} / in{p.input}{list(_unravel(c, p.input_shape))}: "
            f"analytic {p.analytic[r, c]:.4g} vs numeric {p.numeric[r, c]:.4g}")


def entry_detail(model: GradcheckModel, i: int, r: int, c: int) -> list[tuple[str, str]]:
    """The details of one Jacobian entry, as (name, value) rows: which output and input elements it relates (row ->
    output element, column -> input element, unravelled to their shapes), both values, the difference against the
    tolerance, pass or fail, and the backward node under test with the path the gradient takes."""
    p = model.pairs[i]
    a, n, d, tol = p.analytic[r, c], p.numeric[r, c], p.diff[r, c], p.tol[r, c]
    if not p.bad[r, c]:
        verdict = "PASS: within the tolerance"
    elif np.isnan(d):
        verdict = "FAIL: not a number"
    else:
        verdict = f"FAIL: {d / tol:.3g}× the tolerance"
    path = " ← ".join([f"out{p.output}", *p.path, f"in{p.input}"]) if p.path else "(no recorded path)"
    return [("pair", f"output {p.output} w.r.t. input {p.input} (Jacobian {p.diff.shape[0]}x{p.diff.shape[1]})"),
            ("output element", f"out{p.output}{list(_unravel(r, p.output_shape))} (row {r})"),
            ("input element", f"in{p.input}{list(_unravel(c, p.input_shape))} (column {c})"),
            ("analytic (backward)", f"{a:.6g}"), ("numeric", f"{n:.6g}"),
            ("|difference|", f"{d:.3g}"),
            ("tolerance", f"{tol:.3g} = {model.atol:g} + {model.rtol:g} × |numeric|"),
            ("verdict", verdict),
            ("node under test", p.node or "(none: the output has no grad_fn)"),
            ("backward nodes", path)]


def detail_html(model: GradcheckModel, i: int, r: int, c: int) -> str:
    """:func:`entry_detail` as the details panel's table (the verdict row in the pass or fail colour)."""
    cells = []
    for k, v in entry_detail(model, i, r, c):
        cls = f" class='tl-gc-{'pass' if v.startswith('PASS') else 'fail'}'" if k == "verdict" else ""
        cells.append(f"<tr><td class='tl-gc-key'>{html.escape(k)}</td>"
                     f"<td style='font-family:monospace'{cls}>{html.escape(v)}</td></tr>")
    return f"{STYLE}<table class='tl-gc-entry' style='font-size:12px'>{''.join(cells)}</table>"


def _cell_rect(row: int, column: int) -> tuple[float, float, float, float]:
    """The data rectangle of one heatmap cell (imshow puts cell centres on whole numbers)."""
    return column - 0.5, row - 0.5, column + 0.5, row + 0.5


def _clickable_panels(fig) -> list:
    """The panels a click may land in, keyed (pair index, panel name)."""
    return [((k // len(PANELS), ax.get_label()), ax) for k, ax in enumerate(panel_axes(fig))]


def backward_path(out, leaf) -> list[str]:
    """The graph nodes a gradient passes through from ``out`` back to the tensor ``leaf``: the node of the op that made
    ``out`` first (the one under test when ``fn`` is one op), the node that received ``leaf`` last. Empty when
    ``out`` does not depend on ``leaf``."""
    return [view_label(n) for n in _backward_nodes(out, leaf)]


def _backward_nodes(out, leaf) -> list:
    """:func:`backward_path`'s nodes themselves (breadth first: a shortest path)."""
    from tinygrad_like.autograd.function import Function

    start = getattr(out, "grad_fn", None)
    if start is None:
        return []
    came_from = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for p in node.next:
            if p is leaf:
                path = [node]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])
                return path[::-1]
            if isinstance(p, Function) and p not in came_from:
                came_from[p] = node
                queue.append(p)
    return []


# ---- widget ------------------------------------------------------------------------------------------------------
class GradcheckView(View):
    """Both Jacobians of ``fn`` at ``inputs``, their difference, and a pass/fail verdict.

    Not live: a gradcheck is a snapshot (it runs one backward per output element and two forwards per input
    element), so it is computed when the view opens and again on :meth:`refresh`, never after every cell.
    An exception from ``fn`` or its backward is shown in the verdict instead of escaping.

    ``view.model`` is the :class:`GradcheckModel` (None after an error, then ``view.error`` holds it).
    """

    css_class = "tl-gradcheck-view"
    listens_to = ()

    def __init__(self, fn, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3) -> None:
        super().__init__(live=False)
        self.fn, self.inputs = fn, tuple(inputs)
        self.eps, self.atol, self.rtol = eps, atol, rtol
        self.model: GradcheckModel | None = None
        self.error: BaseException | None = None
        # (its buttons keep their width)
        self.verdict = ipywidgets.HTML(layout=ipywidgets.Layout(flex="1 1 auto", min_width="0"))
        self.verdict.add_class("tl-gradcheck-verdict")
        # the three panels per pair, as SVG in the page's theme; a click on any cell explains that cell
        self.figure = FigureWidget(owner=self, alt="gradcheck: the analytic and the numeric Jacobian and their "
                                                   "difference")
        self.figure.add_class("tl-gradcheck-figure")
        # the failing entries, worst first (the keyboard's way to the same details): choosing one explains it
        self.failures = ipywidgets.Select(options=[], rows=6, layout=ipywidgets.Layout(width="45%", flex="0 0 auto"))
        self.failures.add_class("tl-gradcheck-failures")
        self.failures.observe(weak_callback(self, "_on_entry"), names="value")
        self.detail = ipywidgets.HTML(layout=ipywidgets.Layout(flex="1 1 auto", min_width="0", margin="0 0 0 12px"))
        self.detail.add_class("tl-gradcheck-detail")
        #: (pair index, row, column) of the entry explained in the details, or None
        self.selected: tuple[int, int, int] | None = None
        self._entries: list[tuple[int, int, int]] = []
        self.widget.children = (ipywidgets.HBox([self.verdict, self._controls()]), self.figure,
                                ipywidgets.HBox([self.failures, self.detail]))
        self.refresh()

    def summary(self) -> str:
        if self.model is None:
            return f"<GradcheckView: ERROR {type(self.error).__name__}>" if self.error else "<GradcheckView>"
        head = verdict_text(self.model).split(";")[0]
        return f"<GradcheckView: {head}>"

    @property
    def passed(self) -> bool | None:
        return None if self.model is None else self.model.passed

    def _render(self) -> None:
        self.selected, self._entries = None, []
        try:
            self.model, self.error = gradcheck_model(self.fn, self.inputs, self.eps, self.atol, self.rtol), None
        except Exception as exc:  # noqa: BLE001 - a learner's broken Function is shown, not raised
            self.model, self.error = None, exc
            self.verdict.value = (f"<div class='tl-gradcheck-error' style='font-size:13px'>"
                                  f"{STYLE}<b class='tl-gc-fail'>ERROR</b>: gradcheck could not run: "
                                  f"{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</div>")
            self.figure.clear()
            self.failures.options = []
            self.failures.layout.display = "none"
            self.detail.value = ""
            return
        self.verdict.value = verdict_html(self.model)
        self.figure.show(partial(draw_gradcheck, self.model), clickable=_clickable_panels)
        self.figure.set_marks([])
        self._entries = failing_entries(self.model)
        self.failures.options = [(entry_text(self.model, *e), e) for e in self._entries]
        self.failures.layout.display = None if self._entries else "none"
        self.detail.value = HINT if self.model.pairs else ""
        if self._entries:
            self.select_entry(*self._entries[0])  # the worst, explained at once

    def select_entry(self, pair: int, row: int, column: int) -> None:
        """Explain one Jacobian entry, failing or not (as clicking its cell, or choosing it in the list, does) and
        outline its cell on the pair's three panels."""
        if self.model is None:
            raise RuntimeError("GradcheckView.select_entry: the gradcheck did not run (see view.error)")
        rows, cols = self.model.pairs[pair].diff.shape
        if not (0 <= row < rows and 0 <= column < cols):
            raise IndexError(f"GradcheckView.select_entry: ({row}, {column}) is outside the {rows}x{cols} Jacobian "
                             f"of pair {pair}")
        entry = (int(pair), int(row), int(column))
        self.selected = entry
        if entry in self._entries:
            self.failures.value = entry  # (its observer finds the entry already explained)
        else:
            self.failures.index = None  # a passing entry is not in the list
        self.detail.value = detail_html(self.model, *entry)
        self.figure.set_marks([((pair, name), _cell_rect(row, column)) for name in PANELS])

    def cell_box(self, pair: int, row: int, column: int, panel: str = "analytic") -> list[float] | None:
        """Where the cell (row, column) of a pair's ``panel`` is in the picture: [left, top, right, bottom] in
        fractions of it, from its top-left corner (for tests that click it)."""
        return self.figure.picture_box((pair, panel), *_cell_rect(row, column))

    def on_figure_click(self, figure: FigureWidget, hit) -> None:
        """A click inside a panel (the picture's browser code reports it; FigureWidget found the panel): explain the
        cell under it."""
        if self.model is None:
            return
        pair, _panel = hit.key
        rows, cols = self.model.pairs[pair].diff.shape
        # pixel centres are at whole numbers; clamp the outer half-pixel edges
        row = min(max(int(np.floor(hit.y + 0.5)), 0), rows - 1)
        column = min(max(int(np.floor(hit.x + 0.5)), 0), cols - 1)
        self.select_entry(pair, row, column)

    def _on_entry(self) -> None:
        entry = self.failures.value
        if entry is None or self.model is None or entry == self.selected:
            return
        self.select_entry(*entry)

    def _repr_mimebundle_(self, **kwargs):
        return add_png(super()._repr_mimebundle_(**kwargs), self.figure.png())

    def after_cell(self) -> None:
        """Nothing: recomputing Jacobians after every cell would be slow; call :meth:`refresh`."""
