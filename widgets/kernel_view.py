"""``KernelTimeline``: kernel launches on a zoomable canvas timeline, one row per kernel name and one bar per
launch coloured by phase (forward, backward, optimizer, transfer), an aggregated table (calls, total, mean,
share), a per-cell table and the compile events with their cache hit or miss.

While anyone listens to :mod:`tinygrad_like.events`, every backend primitive is timed (NumPy calls on the CPU,
kernel launches on CUDA) and arrives as a ``KernelTimed`` event, so the view is useful without a GPU. Layers:

- the *model* (``kernel_model``): :class:`LaunchStore`, the launches as typed columns, and the pure aggregates
  :func:`kernel_stats` and :func:`cell_summary` (the view keeps them incrementally);
- the *cells* (``kernel_cells``): which cell each launch ran in, from IPython's cell hooks (``In[n]``, or ``cell k``
  under nbval and in plain Python);
- the *view* (here): :class:`KernelTimeline` files the events into the store, keeps the tables and sends the
  launches to the browser;
- the *front-end*: ``static/timeline.js`` through :class:`kernel_widget.TimelineWidget` draws on a canvas, with
  zoom, pan, hover tooltip, click to select (linked to open graph views through :mod:`.selection`);
- the *static fallback* (``kernel_png``): a one-line ``text/plain`` and a small PNG (NumPy + zlib, no matplotlib).
"""

from __future__ import annotations

import html
import json
import time
import weakref
from collections import deque
from collections.abc import Sequence

from tinygrad_like import events, sites
from tinygrad_like.profiler import format_time

from . import kernel_cells, selection
from ._base import MAX_REFRESH_HZ, View, html_table
from ._static_picture import add_png
from .kernel_model import (  # noqa: F401 - COLUMNS, NODE_COLUMNS, BWD, OPT, payload_bytes: re-exported from here
    BWD,
    COLUMNS,
    FWD,
    NODE_COLUMNS,
    OPT,
    PHASE_CODES,
    PHASES,
    XFER,
    Compile,
    Launch,
    LaunchStore,
    add_launch,
    add_to_cell,
    cell_label,
    cell_rows,
    cell_summary,
    format_shapes,
    kernel_stats,
    payload_bytes,
    stats_rows,
)
from .kernel_png import compressed_x, timeline_png  # noqa: F401 - compressed_x: re-exported from here
from .kernel_widget import TimelineWidget

__all__ = ["KernelTimeline", "Launch", "Compile", "LaunchStore", "kernel_stats", "stats_rows", "cell_summary",
           "cell_rows", "cell_label", "PHASES", "timeline_png"]

#: after a cell, the whole history is sent again as the widget's state (what a saved notebook keeps) while it
#: holds at most this many launches; above, only the new launches are sent
SNAPSHOT_ROWS = 20_000
#: the inbox of events is filed into the store when it holds this many, or this long after the last filing
DRAIN_EVENTS = 4096
DRAIN_SECONDS = 1.0 / MAX_REFRESH_HZ
#: a launch after this long (seconds) without any starts a new stretch of its cell: the time axis cuts the idle time
IDLE_CUT_S = 0.25


# ---- HTML tables ----------------------------------------------------------------------------------------
def kernel_table_html(stats: list[dict], max_rows: int = 40) -> str:
    head = "".join(f"<th>{h}</th>" for h in ("kernel", "device", "calls", "total", "mean", "share"))
    body = []
    for r in stats[:max_rows]:
        cells = (r["name"], r["device"], r["calls"], format_time(r["total_s"]), format_time(r["mean_s"]),
                 f"{100 * r['share']:.1f}%")
        body.append(f"<tr data-kernel='{html.escape(r['name'], quote=True)}'>"
                    + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    more = "" if len(stats) <= max_rows else f"<div>… {len(stats) - max_rows} more kernels</div>"
    return f"<table class='tl-kernel-table'><tr>{head}</tr>{''.join(body)}</table>{more}"


def compile_table_html(compiles: Sequence[Compile], label=None, last: int = 20) -> str:
    if not compiles:
        return "<div class='tl-compile-table'>no kernels compiled while the view was open</div>"
    label = label or (lambda c: f"cell {c}")
    rows = [[c.name, c.source, "hit" if c.cache_hit else "miss", format_time(c.seconds), label(c.cell)]
            for c in list(compiles)[-last:][::-1]]
    hits = sum(c.cache_hit for c in compiles)
    return (html_table(["kernel", "source", "cache", "time", "cell"], rows, css="tl-compile-table")
            + f"<div class='tl-compile-count'>{len(compiles)} compiles: {hits} cache hits, "
              f"{len(compiles) - hits} misses</div>")


class _Html:
    """A read-only stand-in for the HTML widgets the view had before (``view.table.value``): the text now
    lives in the timeline widget's ``tables`` traitlet."""

    __slots__ = ("_owner", "_key")

    def __init__(self, owner, key: str) -> None:
        self._owner, self._key = weakref.ref(owner), key

    @property
    def value(self) -> str:
        o = self._owner()
        return "" if o is None else o._html.get(self._key, "")


# ---- the view ---------------------------------------------------------------------------------------------
class KernelTimeline(View):
    """Kernel launches: the recent ones (at most ``max_launches``) on a canvas timeline, all of them since the
    view opened (or ``clear()``) in an aggregated table (``tl-kernel-table``) and a per-cell table
    (``tl-cell-table``), and the compile events (``tl-compile-table``).

    ``selected_launch`` is the launch clicked in the browser (a :class:`Launch`), ``selected_node`` the graph
    node that launched it; a click also selects that node in open graph views (:mod:`.selection`).
    """

    css_class = "tl-kernel-timeline"
    listens_to = (events.KernelTimed, events.KernelCompiled, events.StorageStateChanged)
    records_hidden = listens_to  # a history: launches missed while hidden could never be drawn

    def __init__(self, *, live: bool = True, max_launches: int = 100_000, max_rows: int = 24,
                 height: int = 0) -> None:
        self._store = LaunchStore(max_launches)
        self._inbox: list = []  # (event, the node that launched it) not yet filed into the store
        self._filing_live = False  # filing from inside an event (an op may be running): see _drain
        self._compiles: deque = deque(maxlen=500)
        self.max_launches = max_launches
        self.max_rows = max_rows  # rows drawn without scrolling (the canvas scrolls to the others)
        self._seen = 0  # launches since open / clear (the store keeps the newest ``max_launches``)
        self._groups: dict[tuple[str, str], list] = {}  # (name, device) -> [calls, total_s], since open / clear
        self._cells: dict[int, list] = {}  # cell number -> [launches, kernel_s, first start, last end]
        # cell key -> [stretch number, end of its last launch], and the key filed last: see _drain
        self._stretches: dict = {}
        self._last_key = None
        self._counter = 1  # cells outside IPython
        self._ipy = kernel_cells.hook_shell()
        self._html: dict[str, str] = {}
        self._sent = (0, 0, 0)  # (rows, strings, node number) the browser has
        self._rev = 0  # bumped by every full snapshot; appends name the snapshot they follow
        self._height = height or (40 + 18 * max_rows)
        # the next forward pass records the user's line of each node (tooltips), until an optimizer steps: a timeline
        # left open does not keep a training loop walking the stack for every op (its launches then name no line)
        sites.request_lines()
        super().__init__(live=live)
        kernel_cells.track(self)  # (its inbox is filed before each cell starts)
        self.header, self.table = _Html(self, "header"), _Html(self, "stats")
        self.cells_html, self.compile_html = _Html(self, "cells"), _Html(self, "compiles")
        self.refresh()

    def _make_widget(self) -> TimelineWidget:
        return TimelineWidget(self, height=self._height)

    # ---- recording ------------------------------------------------------------------------------------
    @property
    def ipython(self) -> bool:
        return self._ipy

    def current_cell(self) -> int:
        """The number of the cell running now: ``In[n]`` when IPython stores the cell, else the cell's sequence
        number (nbval); outside IPython the view's own counter."""
        if self._ipy:
            cells = kernel_cells.CELLS
            return cells.number.get(cells.seq, cells.seq)
        return self._counter

    def _cell_key(self) -> int:
        cells = kernel_cells.CELLS
        if cells.acting is not None:  # (a view's work for a click, between cells: its own group)
            return cells.acting
        return cells.seq if self._ipy else -self._counter

    def cell_number(self, key) -> int:
        key = key[0] if isinstance(key, tuple) else key  # (a stretch of a cell after an idle gap: see _drain)
        return kernel_cells.CELLS.number.get(key, key) if key > 0 else -key

    def cell_name(self, key) -> str:
        if isinstance(key, tuple):  # a later stretch of the same cell: the label is drawn at its first one only
            return ""
        return kernel_cells.CELLS.label.get(key, f"cell {key}") if key > 0 else f"cell {-key}"

    # Events are not handled one by one: each lands in an inbox, filed into the store in one pass before anything
    # reads it, before each cell, and every 0.1 s during a cell (with the live redraw). A training step sends dozens
    # of launches; a handler per event was most of what an open timeline cost. Each launch comes with its node and
    # phase (``KernelTimed.node``/``phase``, read by the core when it was launched), so nothing waits for the op.
    def _subscribe_records(self):
        inbox, ref, clock = self._inbox, weakref.ref(self), time.perf_counter
        put, kernel = inbox.append, events.KernelTimed
        due = [clock() + DRAIN_SECONDS]

        def receive(event) -> None:
            # (a launch's node is held from here until filed, at most 0.1 s: a training loop drops each step's graph,
            # and the launch must still name the op and the line that made it)
            node = event.node_ref if type(event) is kernel else None
            node = None if node is None else node()
            put((event, node))
            if len(inbox) >= DRAIN_EVENTS or clock() >= due[0]:
                view = ref()
                if view is None:  # (the finalizer below unsubscribes; this is in case a delivery races it)
                    inbox.clear()
                    return
                due[0] = clock() + DRAIN_SECONDS
                view._filing_live = True  # (the redraw reads the store, which files again: live too)
                try:
                    view._drain()
                    if view._stale and view._live():
                        view._maybe_redraw()
                finally:
                    view._filing_live = False

        unsubscribe = events.subscribe(receive, self.records_hidden)
        weakref.finalize(self, unsubscribe)  # a view dropped without close() stops listening when collected
        return unsubscribe

    def _drain(self) -> None:
        """File the inbox into the store, the tables and the compile list (in the order the events came): the
        columns are built as lists and appended to the store's arrays once. Filed from inside an event, the
        launches of the last op, if it has no number yet, wait for the next filing (see below)."""
        inbox = self._inbox
        if not inbox:
            return
        items = inbox[:]
        keep = len(items)
        last = next((n for _, n in reversed(items) if n is not None), None) if self._filing_live else None
        if last is not None and not hasattr(last, "seq"):
            # its forward may still be running: the node is numbered (``seq``) when the forward returns, and a
            # launch filed before then names no op (a loaded machine filed there: "op —" in the browser)
            keep = next(i for i, (_, n) in enumerate(items) if n is last)
        inbox[:] = items[keep:]
        items = items[:keep]
        if not items:
            return
        st, groups, cells = self._store, self._groups, self._cells
        key = self._cell_key()  # (the inbox is emptied before each cell, so its events all ran in this one)
        # a launch after IDLE_CUT_S without any starts a new stretch of the cell (key, k): the drawing cuts idle time
        # out between stretches as between cells (a monitor's redraw or a pause must not squeeze the steps)
        # A key filed again after another one (a second click on the same view's group, after a cell ran) starts a
        # stretch of its own too: otherwise its span would run from the first click to the last, over the cell.
        seg = self._stretches.get(key)
        if seg is None:
            seg = self._stretches[key] = [0, -float("inf")]
        elif key != self._last_key:
            seg[0], seg[1] = seg[0] + 1, -float("inf")
        self._last_key = key
        ci = st.cell_index(key if seg[0] == 0 else (key, seg[0]))
        cell_col = []
        idx, intern, node_id, phases = st._str_idx, st.intern, st.node_id, PHASE_CODES
        kernel, state = events.KernelTimed, events.StorageStateChanged
        starts, durs, names, devs, shapes_col, nodes, phase_col, nbytes_col = [], [], [], [], [], [], [], []
        for event, node in items:
            cls = type(event)
            if cls is kernel:
                name, device, start, seconds = event.name, event.device, event.start, event.seconds
                shapes, phase = event.shapes, phases.get(event.phase, FWD)
            elif cls is state:
                if not event.direction:
                    continue
                name, device, seconds, shapes, phase = event.direction, "memcpy", event.seconds, (), XFER
                start = event.time - seconds
            else:  # KernelCompiled
                self._compiles.append(Compile(event.name, event.source, event.seconds, event.cache_hit, event.time,
                                              key))
                self._stale = True
                continue
            if start - seg[1] > IDLE_CUT_S and seg[1] > -float("inf"):
                seg[0] += 1
                ci = st.cell_index((key, seg[0]))
            if start + seconds > seg[1]:
                seg[1] = start + seconds
            cell_col.append(ci)
            starts.append(start)
            durs.append(seconds)
            i = idx.get(name)
            names.append(i if i is not None else intern(name))
            i = idx.get(device)
            devs.append(i if i is not None else intern(device))
            if shapes:
                i = idx.get(shapes)
                shapes_col.append(i if i is not None else intern(shapes, format_shapes(shapes)))
            else:
                shapes_col.append(0)
            nodes.append(-1 if node is None else node_id(node))
            phase_col.append(phase)
            nbytes_col.append(event.nbytes)
            add_launch(groups, name, device, seconds)
            add_to_cell(cells, key, start, seconds)
        if starts:
            st.extend({"start": starts, "dur": durs, "name": names, "dev": devs, "shape": shapes_col, "node": nodes,
                       "cell": cell_col, "phase": phase_col, "nbytes": nbytes_col})
            self._seen += len(starts)
            self._stale = True

    @property
    def store(self) -> LaunchStore:
        """The kept launches as columns (filed from the inbox first)."""
        self._drain()
        return self._store

    @property
    def seen(self) -> int:
        """Launches since the view opened or ``clear()`` (the store keeps the newest ``max_launches``)."""
        self._drain()
        return self._seen

    @property
    def compiles(self) -> deque:
        """The compile events (the newest 500), as :class:`Compile` records."""
        self._drain()
        return self._compiles

    def after_cell(self) -> None:
        """The cell ended: draw what is new (not while paused or scrolled away: the base class redraws once the view
        is shown or resumed)."""
        self._drain()
        if not self._ipy:
            self._counter += 1
        if self._sent[0] != self.store.end:
            self._stale = True
        if self._stale and self._live():
            self.refresh()

    def clear(self) -> None:
        """Forget every recorded launch and compile."""
        self._inbox.clear()
        self._store.clear()
        self._compiles.clear()
        self._groups.clear()
        self._cells.clear()
        self._stretches.clear()
        self._last_key = None
        self._seen = 0
        self._snapshot()
        self.refresh()

    # ---- model ---------------------------------------------------------------------------------------------
    def launch_records(self) -> list[Launch]:
        """The recent launches (what the timeline draws)."""
        st = self.store
        out = []
        for seq in range(st.first, st.end):
            r = st.row(seq)
            key = st.cells[r["cell_index"]]
            out.append(Launch(r["name"], r["device"], r["start"], r["seconds"], self.cell_number(key), r["phase"],
                              r["shapes"], r["nbytes"], r["op"], r["line"]))
        return out

    @property
    def launches(self) -> list[Launch]:
        """The recent launches (``launch_records()``; at most ``max_launches``)."""
        return self.launch_records()

    def stats(self) -> list[dict]:
        """Every launch since open / clear, grouped by (name, device), as :func:`kernel_stats` gives it."""
        self._drain()
        return stats_rows(self._groups)

    def cells(self) -> list[dict]:
        """Every launch since open / clear, per cell, as :func:`cell_summary` gives it (the work a view did for clicks
        between cells counts with the cell that made the view; the drawing and the cell table show it apart)."""
        self._drain()
        merged: dict[int, list] = {}
        for k, v in self._cells.items():  # (a view's clicks count with the cell that made the view, as in Launch.cell)
            n = self.cell_number(k)
            m = merged.get(n)
            merged[n] = list(v) if m is None else [m[0] + v[0], m[1] + v[1], min(m[2], v[2]), max(m[3], v[3])]
        return cell_rows(merged)

    def _cell_table(self) -> list[list]:
        self._drain()
        keys = sorted(self._cells, key=self.cell_number)[-10:]
        return [[self.cell_name(k), v[0], format_time(v[1]), format_time(v[3] - v[2])]
                for k, v in ((k, self._cells[k]) for k in keys)]

    def phase_counts(self) -> dict[str, int]:
        """How many of the kept launches fall in each phase."""
        counts = [0] * len(PHASES)
        for p in self.store.cols["phase"]:
            counts[p] += 1
        return dict(zip(PHASES, counts))

    def phase_seconds(self) -> dict[str, float]:
        """The kept launches' kernel time in each phase (seconds): where a training step spends its time."""
        cols = self.store.cols
        seconds = [0.0] * len(PHASES)
        for p, d in zip(cols["phase"], cols["dur"]):
            seconds[p] += d
        return dict(zip(PHASES, seconds))

    # ---- selection -----------------------------------------------------------------------------------------
    @property
    def selected_launch(self) -> Launch | None:
        seq = self.widget.selected
        st = self.store
        if seq < 0 or self.store.row(seq) is None:
            return None
        r = st.row(seq)
        key = st.cells[r["cell_index"]]
        return Launch(r["name"], r["device"], r["start"], r["seconds"], self.cell_number(key), r["phase"],
                      r["shapes"], r["nbytes"], r["op"], r["line"])

    @property
    def selected_node(self):
        """The graph node that launched the selected bar (None: none selected, not known, or garbage)."""
        seq = self.widget.selected
        r = self.store.row(seq) if seq >= 0 else None
        return None if r is None else self.store.node(r["node"])

    def select_launch(self, seq: int) -> None:
        """Select launch number ``seq`` (as a click does): the browser highlights it, graph views its node."""
        self.widget.selected = int(seq)

    def on_launch_selected(self, seq: int) -> None:
        node = self.selected_node
        if node is not None:
            selection.select(node, source=self)

    def on_message(self, msg: dict) -> None:
        kind = msg.get("type")
        if kind == "close":
            self.close()
        elif kind == "hello":  # a browser view (re)rendered: make sure it has everything
            if msg.get("rev") != self._rev or msg.get("end") != self._sent[0]:
                self._snapshot()
        elif kind == "sync":
            self._snapshot()
        elif kind == "clear":
            self.clear()

    # ---- sending ---------------------------------------------------------------------------------------------
    def _snapshot(self) -> None:
        """Send everything kept as the widget's ``data`` state (what a new browser view or a saved notebook
        starts from)."""
        st = self.store
        self._rev += 1
        meta, bufs = st.chunk(st.first, st.resolved, 0, st.node_first)
        meta["rev"] = self._rev
        meta["cells"] = self._cell_labels()
        self.widget.data = {"meta": meta, "buffers": bufs}
        self._sent = (meta["base"] + meta["n"], len(st.strs), st.node_first + len(st.nodes))

    def _append(self) -> None:
        """Send the launches resolved since the last update (a custom message with binary buffers)."""
        st = self.store
        rows, nstr, nnode = self._sent
        if rows < st.first:  # the browser missed launches that are gone now: start afresh
            self._snapshot()
            return
        upto = st.resolved
        if upto <= rows and nstr == len(st.strs):
            return
        meta, bufs = st.chunk(rows, upto, nstr, nnode)
        meta.update(type="append", rev=self._rev, cells=self._cell_labels())
        self.widget.send(meta, bufs)
        self._sent = (meta["base"] + meta["n"], len(st.strs), st.node_first + len(st.nodes))

    def _cell_labels(self) -> list[str]:
        return [self.cell_name(k) for k in self.store.cells]

    def _render(self) -> None:
        st = self.store
        if self._rev == 0 or len(st) <= SNAPSHOT_ROWS:
            self._snapshot()  # small: the widget's state holds everything (what a saved notebook keeps)
        else:
            self._append()
        self._render_tables()

    def _live_update(self) -> None:
        """During a cell: append the new launches and update the tables (cheap: no full resend)."""
        if not self._live():  # (the base class does not call this while paused or hidden either)
            self._stale = True
            return
        self.redraws += 1
        self._append()
        self._render_tables()

    def _render_tables(self) -> None:
        stats = self.stats()
        total = sum(r["total_s"] for r in stats)
        kept = len(self.store)
        self._html = {
            "header": (f"<b>Kernels</b>: {self.seen} launches, {len(stats)} kernels, {format_time(total)} "
                       f"kernel time" + (f"; the timeline shows the last {kept}" if self.seen > kept else "")),
            "stats": kernel_table_html(stats),
            "cells": html_table(["cell", "launches", "kernel time", "span"], self._cell_table(), css="tl-cell-table"),
            "compiles": compile_table_html(self.compiles, self.cell_name),
        }
        self.widget.tables = dict(self._html)

    # ---- export ----------------------------------------------------------------------------------------------
    def chrome_trace(self) -> dict:
        """The kept launches in Chrome Trace Event Format (``prof.export_chrome_trace`` writes the same kind):
        one track per device (transfers on "memcpy"), ``cat`` the phase, ``args`` shapes, bytes, op, cell."""
        import os

        recs = self.launch_records()
        pid = os.getpid()
        origin = min((r.start for r in recs), default=0.0)
        lanes: dict[str, int] = {}
        trace = []
        for r in recs:
            tid = lanes.setdefault(r.device, len(lanes) + 1)
            trace.append({"name": r.name, "cat": r.phase, "ph": "X", "ts": (r.start - origin) * 1e6,
                          "dur": max(r.seconds, 0.0) * 1e6, "pid": pid, "tid": tid,
                          "args": {"shapes": r.shapes, "nbytes": r.nbytes, "op": r.op, "line": r.line,
                                   "cell": r.cell}})
        trace.sort(key=lambda e: e["ts"])
        meta = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": "tinygrad_like"}}]
        meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": t, "args": {"name": lane}}
                 for lane, t in lanes.items()]
        return {"traceEvents": meta + trace, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path) -> str:
        """Write :meth:`chrome_trace` as JSON to ``path`` (open it in https://ui.perfetto.dev); returns the path."""
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)
        return str(path)

    # ---- display / closing -----------------------------------------------------------------------------------
    def summary(self) -> str:
        return "<KernelTimeline>"  # stable: saved notebooks compare it (nbval); counts are in the widget

    def to_png(self) -> bytes:
        return timeline_png(self.store, max_rows=self.max_rows)

    def _repr_mimebundle_(self, **kwargs):
        """The widget, plus :meth:`to_png` for a saved notebook where widgets do not run."""
        return add_png(super()._repr_mimebundle_(**kwargs), self.to_png())
