"""``KernelTimeline``: recent kernel launches as a timeline grouped by cell, an aggregated table
(calls, total, mean, share) and the compile events with their cache hit or miss.

While anyone listens to :mod:`tinygrad_like.events`, every backend primitive is timed (NumPy calls on
the CPU, kernel launches on CUDA) and arrives as a ``KernelTimed`` event, so the view is useful without
a GPU. As everywhere in the widgets, three layers:

- the *model*: :class:`Launch` records and pure functions over them (:func:`kernel_stats`,
  :func:`cell_summary`, :func:`timeline_layout`); the widget keeps the same aggregates incrementally
  (:func:`stats_rows`, :func:`cell_rows`), so a redraw while kernels stream in costs little;
- the *drawing*: :func:`draw_timeline`, launches in, a matplotlib ``Figure`` out;
- the *widget*: :class:`KernelTimeline`, which records launches (a bounded deque) tagged with the cell
  that ran them: the ``In[n]`` number under IPython, else a counter bumped by ``after_cell()``.
"""

from __future__ import annotations

import html
from collections import deque
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import ipywidgets as W

from tinygrad_like import events
from tinygrad_like.profiler import format_time

from ._base import View, figure_output, html_table, weak_callback

__all__ = ["KernelTimeline", "Launch", "Compile", "kernel_stats", "stats_rows", "cell_summary", "cell_rows",
           "timeline_layout", "draw_timeline", "cell_label"]

#: colours of successive cells in the timeline (cycled)
CELL_COLORS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6",
               "#9d755d", "#bab0ac")


class Launch(NamedTuple):
    """One timed primitive, tagged with the cell that ran it."""

    name: str
    device: str
    start: float  # seconds, on the events.now() clock
    seconds: float
    cell: int


class Compile(NamedTuple):
    name: str
    source: str
    seconds: float
    cache_hit: bool
    time: float
    cell: int


def cell_label(cell: int, ipython: bool) -> str:
    return f"In[{cell}]" if ipython else f"cell {cell}"


# ---- model (pure) ---------------------------------------------------------------------------------
def kernel_stats(launches: Iterable[Launch]) -> list[dict]:
    """Launches grouped by (name, device): ``calls``, ``total_s``, ``mean_s``, ``share`` (of all kernel
    time); largest total first."""
    groups: dict[tuple[str, str], list] = {}
    for l in launches:
        _add_launch(groups, l.name, l.device, l.seconds)
    return stats_rows(groups)


def _add_launch(groups: dict, name: str, device: str, seconds: float) -> None:
    g = groups.get((name, device))
    if g is None:
        groups[(name, device)] = [1, seconds]
    else:
        g[0] += 1
        g[1] += seconds


def stats_rows(groups: dict[tuple[str, str], list]) -> list[dict]:
    """``{(name, device): [calls, total_s]}`` -> the rows of :func:`kernel_stats`."""
    grand = sum(g[1] for g in groups.values())
    rows = [{"name": n, "device": d, "calls": c, "total_s": t, "mean_s": t / c,
             "share": t / grand if grand > 0 else 0.0} for (n, d), (c, t) in groups.items()]
    rows.sort(key=lambda r: (-r["total_s"], r["name"], r["device"]))
    return rows


def cell_summary(launches: Iterable[Launch]) -> list[dict]:
    """Per cell, in order: ``cell``, ``launches``, ``kernel_s`` (summed durations), ``span_s`` (first start
    to last end)."""
    cells: dict[int, list] = {}
    for l in launches:
        _add_to_cell(cells, l.cell, l.start, l.seconds)
    return cell_rows(cells)


def _add_to_cell(cells: dict, cell: int, start: float, seconds: float) -> None:
    c = cells.get(cell)
    end = start + seconds
    if c is None:
        cells[cell] = [1, seconds, start, end]
    else:
        c[0] += 1
        c[1] += seconds
        if start < c[2]:
            c[2] = start
        if end > c[3]:
            c[3] = end


def cell_rows(cells: dict[int, list]) -> list[dict]:
    """``{cell: [launches, kernel_s, first_start, last_end]}`` -> the rows of :func:`cell_summary`."""
    return [{"cell": k, "launches": v[0], "kernel_s": v[1], "span_s": v[3] - v[2]} for k, v in sorted(cells.items())]


def timeline_layout(launches: Sequence[Launch], max_rows: int = 24, gap_frac: float = 0.04) -> dict:
    """Where each launch goes on the timeline.

    Rows: one per kernel name, the ``max_rows`` names with the most total time (others are folded and
    counted). x (ms): within a cell, real time since the cell's first launch; cells are laid side by side
    in order with a small gap, so idle time between cells is cut out.

    Returns ``names`` (row order, top first), ``folded`` (names not shown), ``cells`` (list of dicts
    ``cell``, ``x0``, ``x1`` in ms), ``bars`` (dict ``(name, cell)`` -> list of ``(x_ms, width_ms)``).
    """
    totals: dict[str, float] = {}
    for l in launches:
        totals[l.name] = totals.get(l.name, 0.0) + l.seconds
    ranked = sorted(totals, key=lambda n: (-totals[n], n))
    names = ranked[:max_rows]
    keep = set(names)
    by_cell: dict[int, list[Launch]] = {}
    for l in launches:
        by_cell.setdefault(l.cell, []).append(l)
    spans = {c: (min(l.start for l in ls), max(l.start + l.seconds for l in ls)) for c, ls in by_cell.items()}
    total_span = sum(e - s for s, e in spans.values()) * 1e3
    gap = max(total_span * gap_frac, 1e-3) if len(spans) > 1 else 0.0
    cells, bars, x = [], {}, 0.0
    for c in sorted(by_cell):
        s, e = spans[c]
        for l in by_cell[c]:
            if l.name in keep:
                bars.setdefault((l.name, c), []).append(((l.start - s) * 1e3 + x, l.seconds * 1e3))
        cells.append({"cell": c, "x0": x, "x1": x + (e - s) * 1e3})
        x += (e - s) * 1e3 + gap
    return {"names": names, "folded": ranked[max_rows:], "cells": cells, "bars": bars}


# ---- drawing (pure: launches in, Figure out) ------------------------------------------------------------
def draw_timeline(launches: Sequence[Launch], *, max_rows: int = 24, ipython: bool = False, width: float = 8.0,
                  dpi: int = 80):
    """One row per kernel name, a bar per launch at its start and duration, coloured by cell.
    Returns a ``Figure`` (not registered with pyplot)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    lay = timeline_layout(launches, max_rows=max_rows)
    names = lay["names"]
    fig = Figure(figsize=(width, 1.3 + 0.22 * max(len(names), 1)), dpi=dpi)
    ax = fig.subplots()  # no layout engine (it doubles the drawing time): labels and legend stick out of
    # the figure on purpose, ``bbox_inches="tight"`` (as in ``figure_output``) keeps them
    if not names:
        ax.text(0.5, 0.5, "no kernel launches yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title("kernel timeline", fontsize=9)
        return fig
    row = {n: len(names) - 1 - i for i, n in enumerate(names)}  # top row = most total time
    color = {c["cell"]: CELL_COLORS[i % len(CELL_COLORS)] for i, c in enumerate(lay["cells"])}
    for (name, cell), xs in lay["bars"].items():
        ax.broken_barh(xs, (row[name] - 0.4, 0.8), facecolors=color[cell], edgecolors=color[cell], linewidth=0.6)
    for c in lay["cells"][1:]:
        ax.axvline(c["x0"], color="#888888", linewidth=0.6, linestyle=":")
    ax.set_yticks(range(len(names)), names[::-1], fontsize=8)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlabel("ms (within each cell; idle time between cells cut out)", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    title = f"kernel timeline: {len(launches)} launches in {len(lay['cells'])} cell(s)"
    if lay["folded"]:
        title += f"; {len(lay['folded'])} more kernel names folded"
    ax.set_title(title, fontsize=9)
    shown = lay["cells"][-8:]
    ax.legend(handles=[Patch(color=color[c["cell"]], label=cell_label(c["cell"], ipython)) for c in shown],
              fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return fig


# ---- HTML ----------------------------------------------------------------------------------------------
def kernel_table_html(stats: list[dict], max_rows: int = 40) -> str:
    head = "".join(f"<th style='text-align:left;padding:1px 6px'>{h}</th>"
                   for h in ("kernel", "device", "calls", "total", "mean", "share"))
    body = []
    for r in stats[:max_rows]:
        cells = (r["name"], r["device"], r["calls"], format_time(r["total_s"]), format_time(r["mean_s"]),
                 f"{100 * r['share']:.1f}%")
        body.append(f"<tr data-kernel='{html.escape(r['name'], quote=True)}'>"
                    + "".join(f"<td style='padding:1px 6px'>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    more = "" if len(stats) <= max_rows else f"<div>… {len(stats) - max_rows} more kernels</div>"
    return (f"<table class='tl-kernel-table' style='border-collapse:collapse;font-size:12px'><tr>{head}</tr>"
            f"{''.join(body)}</table>{more}")


def compile_table_html(compiles: Sequence[Compile], ipython: bool = False, last: int = 20) -> str:
    if not compiles:
        return "<div class='tl-compile-table'>no kernels compiled while the view was open</div>"
    rows = [[c.name, c.source, "hit" if c.cache_hit else "miss", format_time(c.seconds), cell_label(c.cell, ipython)]
            for c in list(compiles)[-last:][::-1]]
    hits = sum(c.cache_hit for c in compiles)
    return (html_table(["kernel", "source", "cache", "time", "cell"], rows, css="tl-compile-table")
            + f"<div style='font-size:11px'>{len(compiles)} compiles: {hits} cache hits, "
              f"{len(compiles) - hits} misses</div>")


def _get_ipython():
    """The running IPython shell (a kernel or a terminal), or None.

    A bare ``InteractiveShell`` singleton does not count: IPython's display formatting creates one on
    first use in a plain Python process (``Output.append_display_data`` does), and its execution count
    never moves.
    """
    try:
        from IPython import get_ipython
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        return None
    sh = get_ipython()
    return None if sh is None or type(sh) is InteractiveShell else sh


# ---- the widget ----------------------------------------------------------------------------------------
class KernelTimeline(View):
    """Kernel launches: the recent ones (at most ``max_launches``) as a timeline grouped by cell, all of
    them since the view opened (or ``clear()``) in an aggregated table (``tl-kernel-table``) and a per-cell
    table (``tl-cell-table``), and the compile events (``tl-compile-table``)."""

    css_class = "tl-kernel-timeline"
    listens_to = (events.KernelTimed, events.KernelCompiled)
    # during a cell only the tables update (``_live_update``, throttled by the base); the timeline is
    # drawn after the cell

    def __init__(self, *, live: bool = True, max_launches: int = 5000, max_rows: int = 24) -> None:
        self.launches: deque = deque(maxlen=max_launches)  # (cell, KernelTimed) pairs, converted when drawn
        self.compiles: deque = deque(maxlen=500)
        self.max_rows = max_rows
        self.seen = 0  # launches since open / clear (the deque keeps the newest ``max_launches``)
        self._groups: dict[tuple[str, str], list] = {}  # (name, device) -> [calls, total_s], since open / clear
        self._cells: dict[int, list] = {}  # cell -> [launches, kernel_s, first start, last end]
        self._shell = _get_ipython()
        self._counter = 1
        self._fig_key = None
        super().__init__(live=live)

        self.header = W.HTML()
        self.figure = W.Output()
        self.figure.add_class("tl-kernel-figure")
        self.table = W.HTML()
        self.cells_html = W.HTML()
        self.compile_html = W.HTML()
        clear = W.Button(description="Clear", icon="trash", layout=W.Layout(width="100px"))
        clear.add_class("tl-kernel-clear")
        clear.on_click(weak_callback(self, "clear"))
        self.widget.children = (W.HBox([self.header, clear]), self.figure, self.table, self.cells_html,
                                W.HTML("<b>Compiles</b>"), self.compile_html)
        self.refresh()

    # ---- recording ------------------------------------------------------------------------------------
    @property
    def ipython(self) -> bool:
        return self._shell is not None

    def current_cell(self) -> int:
        """The number of the cell running now: ``In[n]`` under IPython, else the view's own counter.

        Under IPython this is read from the input history, which holds the running cell already; the
        shell's ``execution_count`` is ``n`` during cell ``n`` in IPython 8 but ``n + 1`` in IPython 9.
        """
        sh = self._shell
        if sh is not None:
            hist = getattr(getattr(sh, "history_manager", None), "input_hist_raw", None)
            if hist:
                return len(hist) - 1
            n = getattr(sh, "execution_count", None)
            if isinstance(n, int):
                return n
        return self._counter

    def _on_event(self, event) -> None:
        cls = type(event)
        if cls is events.KernelTimed:
            cell = self.current_cell()
            self.launches.append((cell, event))
            self.seen += 1
            _add_launch(self._groups, event.name, event.device, event.seconds)
            _add_to_cell(self._cells, cell, event.start, event.seconds)
        elif cls is events.KernelCompiled:
            self.compiles.append(Compile(event.name, event.source, event.seconds, event.cache_hit, event.time,
                                         self.current_cell()))
        else:
            return
        super()._on_event(event)

    def after_cell(self) -> None:
        self._shell = _get_ipython()
        if self._shell is None:
            self._counter += 1
        if self._stale or self._fig_key != self._timeline_key():
            self.refresh()

    def clear(self) -> None:
        """Forget every recorded launch and compile."""
        self.launches.clear()
        self.compiles.clear()
        self._groups.clear()
        self._cells.clear()
        self.seen = 0
        self.refresh()

    # ---- model + render -------------------------------------------------------------------------------
    def launch_records(self) -> list[Launch]:
        """The recent launches (what the timeline draws)."""
        return [Launch(e.name, e.device, e.start, e.seconds, c) for c, e in self.launches]

    def stats(self) -> list[dict]:
        """Every launch since open / clear, grouped by (name, device), as :func:`kernel_stats` gives it."""
        return stats_rows(self._groups)

    def cells(self) -> list[dict]:
        """Every launch since open / clear, per cell, as :func:`cell_summary` gives it."""
        return cell_rows(self._cells)

    def _timeline_key(self) -> tuple:
        kept = len(self.launches)
        return (self.seen, kept, self.launches[-1][1].start if kept else None)

    def _render(self) -> None:
        self._render_tables()
        key = self._timeline_key()
        if key != self._fig_key:
            launches = self.launch_records()
            figure_output(draw_timeline(launches, max_rows=self.max_rows, ipython=self.ipython), self.figure)
            self._fig_key = key

    def _live_update(self) -> None:
        """During a cell: the tables only (the timeline follows after the cell). The tables are this
        view's content, so this counts as a redraw."""
        self.redraws += 1
        self._render_tables()

    def _render_tables(self) -> None:
        stats = self.stats()
        cells = self.cells()
        total = sum(r["total_s"] for r in stats)
        kept = len(self.launches)
        self.header.value = (f"<b>Kernels</b>: {self.seen} launches, {len(stats)} kernels, {format_time(total)} "
                             f"kernel time" + (f"; the timeline shows the last {kept}" if self.seen > kept else ""))
        self.table.value = kernel_table_html(stats)
        self.cells_html.value = html_table(
            ["cell", "launches", "kernel time", "span"],
            [[cell_label(c["cell"], self.ipython), c["launches"], format_time(c["kernel_s"]),
              format_time(c["span_s"])] for c in cells[-10:]], css="tl-cell-table")
        self.compile_html.value = compile_table_html(self.compiles, self.ipython)
