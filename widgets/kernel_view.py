"""``KernelTimeline``: kernel launches on a zoomable canvas timeline, one row per kernel name and one bar per
launch coloured by phase (forward, backward, optimizer, transfer), an aggregated table (calls, total, mean,
share), a per-cell table and the compile events with their cache hit or miss.

While anyone listens to :mod:`tinygrad_like.events`, every backend primitive is timed (NumPy calls on the CPU,
kernel launches on CUDA) and arrives as a ``KernelTimed`` event, so the view is useful without a GPU. Layers:

- the *model*: :class:`LaunchStore`, the launches as typed columns (``array.array``) plus tables of strings,
  graph nodes (weakly) and cells. Each ``KernelTimed`` names the graph node whose forward or backward launched
  it and its phase (forward, backward, optimizer), as the core knew them at launch (``sites.launch_context``;
  a CUDA kernel's time arrives later, at a synchronisation, with the node it was launched for); a
  ``StorageStateChanged`` with a direction (h2d / d2h) is a "transfer". :meth:`LaunchStore.chunk` packs rows as
  little binary buffers (one per column) plus the new entries of the tables: the payload the browser appends.
  :func:`kernel_stats` and :func:`cell_summary` are the pure aggregates (the view keeps them incrementally);
- the *front-end*: ``static/timeline.js`` through :class:`kernel_widget.TimelineWidget` draws on a canvas, with
  zoom, pan, hover tooltip, click to select (linked to open graph views through :mod:`.selection`);
- the *static fallback*: a one-line ``text/plain`` and a small PNG (NumPy + zlib, no matplotlib).

Cells are numbered without ``In[n]`` where there is none (nbval runs cells with ``store_history=False``): a
``pre_run_cell`` / ``post_run_cell`` hook on the running IPython shell (installed when this module is imported
there) gives each cell a sequence number, labelled ``In[n]`` when IPython stores the cell in its history and
``cell k`` otherwise; outside IPython each view counts the cells itself (``after_cell()`` moves on).
"""

from __future__ import annotations

import html
import json
import time
import weakref
from array import array
from collections import deque
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from tinygrad_like import events, sites
from tinygrad_like.profiler import format_time

from . import selection
from ._base import MAX_REFRESH_HZ, View, html_table
from .kernel_widget import TimelineWidget

__all__ = ["KernelTimeline", "Launch", "Compile", "LaunchStore", "kernel_stats", "stats_rows", "cell_summary",
           "cell_rows", "cell_label", "PHASES", "timeline_png"]

#: phase codes of the ``phase`` column, in legend order
PHASES = ("forward", "backward", "optimizer", "transfer")
#: ``KernelTimed.phase`` -> the phase column's code (a launch from a producer that does not say is forward)
PHASE_CODES = {name: code for code, name in enumerate(PHASES)}
FWD, BWD, OPT, XFER = range(4)
#: PNG colours of the phases (the canvas takes its own from the theme)
PHASE_RGB = ((76, 120, 168), (245, 133, 24), (84, 162, 75), (178, 121, 162))
#: after a cell, the whole history is sent again as the widget's state (what a saved notebook keeps) while it
#: holds at most this many launches; above, only the new launches are sent
SNAPSHOT_ROWS = 20_000
#: the inbox of events is filed into the store when it holds this many, or this long after the last filing
DRAIN_EVENTS = 4096
DRAIN_SECONDS = 1.0 / MAX_REFRESH_HZ
NO_LINE = 0xFFFFFFFF  # node_line entry not looked up yet


class Launch(NamedTuple):
    """One timed primitive (or a host<->device transfer), tagged with the cell that ran it."""

    name: str
    device: str
    start: float  # seconds, on the events.now() clock
    seconds: float
    cell: int
    phase: str = "forward"
    shapes: str = ""
    nbytes: int = 0
    op: str = ""  # the graph node's op that launched it ("" when unknown)
    line: str = ""  # the user's line that made that node ("" when unknown)


class Compile(NamedTuple):
    name: str
    source: str
    seconds: float
    cache_hit: bool
    time: float
    cell: int


def cell_label(cell: int, ipython: bool) -> str:
    return f"In[{cell}]" if ipython else f"cell {cell}"


# ---- cells: a robust identity under Jupyter, nbval and plain Python -----------------------------------------
class _Cells:
    """The cell running now, from IPython's ``pre_run_cell`` / ``post_run_cell`` events.

    ``seq`` counts cells (1, 2, ...) since the hooks were installed; ``number[seq]`` / ``label[seq]`` are
    ``n`` / ``"In[n]"`` for a cell IPython stores in its history, else the sequence number / ``"cell k"``.
    """

    def __init__(self) -> None:
        self.shell = None
        self.seq = 0
        self.number: dict[int, int] = {}
        self.label: dict[int, str] = {}

    def install(self, shell) -> bool:
        """Hook ``shell`` (once); the cell running now becomes cell 1 (``In[n]`` when the history names it)."""
        if shell is None:
            return False
        if self.shell is shell:
            return True
        try:
            cbs = shell.events.callbacks
            for name, fn in (("pre_run_cell", _pre_run_cell), ("post_run_cell", _post_run_cell)):
                if fn not in cbs.get(name, []):
                    shell.events.register(name, fn)
        except Exception:  # noqa: BLE001 - a shell without IPython's events: count cells per view instead
            return False
        self.shell = shell
        self.seq += 1
        hist = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
        n = len(hist) - 1 if hist else 0
        self._name(self.seq, n if n >= 1 else None)
        return True

    def _name(self, seq: int, n: int | None) -> None:
        self.number[seq] = n if n is not None else seq
        self.label[seq] = f"In[{n}]" if n is not None else f"cell {seq}"

    def pre(self, info) -> None:
        self.seq += 1
        n = None
        if getattr(info, "store_history", False):
            ec = getattr(self.shell, "execution_count", None)
            if isinstance(ec, int):  # IPython 9 counts the running cell before pre_run_cell, IPython 8 after
                n = ec - 1 if _EC_AHEAD else ec
        self._name(self.seq, n)

    def post(self, result) -> None:
        info = getattr(result, "info", None)
        ec = getattr(result, "execution_count", None)
        if getattr(info, "store_history", False) and isinstance(ec, int):
            self._name(self.seq, ec)  # the authoritative number


def _ec_ahead() -> bool:
    try:
        import IPython
        return IPython.version_info[0] >= 9
    except Exception:  # noqa: BLE001
        return True


_EC_AHEAD = _ec_ahead()
CELLS = _Cells()


#: open timelines: their inboxes are filed before a new cell starts (the cell they ran in is read when filing)
_TIMELINES: weakref.WeakSet = weakref.WeakSet()


def _pre_run_cell(info=None) -> None:
    for view in list(_TIMELINES):
        view._drain()
    CELLS.pre(info)


def _post_run_cell(result=None) -> None:
    CELLS.post(result)


def _get_ipython():
    """The running IPython shell (a kernel or a terminal), or None.

    A bare ``InteractiveShell`` singleton does not count: IPython's display formatting creates one on first use
    in a plain Python process (``Output.append_display_data`` does), and its execution count never moves.
    """
    try:
        from IPython import get_ipython
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:
        return None
    sh = get_ipython()
    return None if sh is None or type(sh) is InteractiveShell else sh


CELLS.install(_get_ipython())  # importing the widgets in a notebook starts the count


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


def _fmt_shapes(shapes) -> str:
    try:
        return " · ".join("(" + ", ".join(str(d) for d in s) + (",)" if len(s) == 1 else ")")
                          if isinstance(s, tuple) else str(s) for s in shapes)
    except TypeError:
        return str(shapes)


# ---- the launch store: typed columns, appended, trimmed from the front ---------------------------------------
#: (column, array typecode) in the order of the binary buffers sent to the browser
COLUMNS = (("start", "d"), ("dur", "f"), ("name", "I"), ("dev", "I"), ("shape", "I"), ("node", "i"),
           ("cell", "H"), ("phase", "B"), ("nbytes", "f"))
NODE_COLUMNS = (("node_op", "I"), ("node_line", "I"))
#: columns kept at a higher precision than they travel (durations: float64 here, so the tables add exactly what
#: the events said; float32 on the wire, plenty for drawing)
STORE_TYPES = {"dur": "d"}


def _dead() -> None:
    """A weak reference's stand-in that never matches a node."""
    return None


class LaunchStore:
    """Launches as columns (``array.array``: a few bytes each, no object per launch) with sequence numbers:
    row ``i`` of the arrays is launch number ``first + i``; at most ``max_rows`` are kept (the oldest go).

    ``strs`` interns every string (kernel names, devices, shapes, ops, lines): columns hold indices. ``nodes``
    holds a weak reference per graph node a launch is attributed to (node number ``node_first + j``);
    ``cells`` the cell keys (see :meth:`KernelTimeline.current_cell`) the ``cell`` column indexes.
    """

    def __init__(self, max_rows: int = 100_000) -> None:
        self.max_rows = max_rows
        self.cols = {name: array(STORE_TYPES.get(name, code)) for name, code in COLUMNS}
        self.first = 0  # sequence number of row 0
        self.strs: list[str] = []
        self._str_idx: dict = {}  # str or shapes tuple -> index into strs
        self.nodes: list = []  # weakref.ref per node (None: not weak-referenceable)
        self.node_first = 0
        self.node_cols = {name: array(code) for name, code in NODE_COLUMNS}
        self._node_site: list = []  # (code, lineno) per node until its line is looked up, else None
        self.cells: list[int] = []  # cell keys; the cell column indexes this list
        self._cell_key = None
        self._last_node = _dead  # the node of the last launch (weakly) and its number (a node's launches come together)
        self._last_nid = -1
        self.intern("")  # index 0 is the empty string

    # ---- tables ------------------------------------------------------------------------------------------
    def intern(self, key, text: str | None = None) -> int:
        i = self._str_idx.get(key)
        if i is None:
            i = self._str_idx[key] = len(self.strs)
            self.strs.append(key if text is None else text)
        return i

    def cell_index(self, key: int) -> int:
        if key != self._cell_key:
            self._cell_key = key
            self.cells.append(key)
        return len(self.cells) - 1

    @property
    def end(self) -> int:
        """Sequence number of the next launch."""
        return self.first + len(self.cols["start"])

    @property
    def resolved(self) -> int:
        """Every launch before this sequence number is complete (all are: each comes with its node and phase)."""
        return self.end

    def __len__(self) -> int:
        return len(self.cols["start"])

    # ---- recording -----------------------------------------------------------------------------------------
    def add(self, name: str, device: str, start: float, seconds: float, shapes, nbytes: int, cell: int,
            phase: int, node=None) -> int:
        """Append a launch; ``node`` is the graph node that launched it (kept only if it was recorded)."""
        c = self.cols
        seq = self.end
        idx = self._str_idx
        c["start"].append(start)
        c["dur"].append(seconds)
        i = idx.get(name)
        c["name"].append(i if i is not None else self.intern(name))
        i = idx.get(device)
        c["dev"].append(i if i is not None else self.intern(device))
        if shapes:
            i = idx.get(shapes)
            c["shape"].append(i if i is not None else self.intern(shapes, _fmt_shapes(shapes)))
        else:
            c["shape"].append(0)
        c["node"].append(-1 if node is None else self.node_id(node))
        c["cell"].append(cell)
        c["phase"].append(phase)
        c["nbytes"].append(nbytes)
        if len(c["start"]) > self.max_rows + max(self.max_rows // 4, 1):
            self.trim()
        return seq

    def node_id(self, node) -> int:
        """The number of ``node`` among the store's nodes, added on its first launch (-1: not a recorded node)."""
        if self._last_node() is node:  # (a node's launches come together)
            return self._last_nid
        nid = -1 if getattr(node, "seq", None) is None else self._add_node(node, node.name)
        self._last_node, self._last_nid = weakref.ref(node), nid
        return nid

    def extend(self, rows: dict[str, list]) -> None:
        """Append many launches at once: one list per column of :data:`COLUMNS` (names, devices and shapes already
        interned, nodes already numbered): what filing a view's inbox does, an ``array.extend`` per column."""
        c = self.cols
        for name, values in rows.items():
            c[name].extend(values)
        if len(c["start"]) > self.max_rows + max(self.max_rows // 4, 1):
            self.trim()

    def _add_node(self, node, op: str) -> int:
        try:
            ref = weakref.ref(node)
        except TypeError:
            ref = None
        self.nodes.append(ref)
        self.node_cols["node_op"].append(self.intern(op))
        self.node_cols["node_line"].append(NO_LINE)
        origin = getattr(node, "origin", None)
        code = getattr(origin, "code", None)
        self._node_site.append((code, origin.lineno) if code is not None else None)
        return self.node_first + len(self.nodes) - 1

    def node(self, nid: int):
        """The graph node number ``nid`` (None when unknown, trimmed or garbage collected)."""
        j = nid - self.node_first
        if nid < 0 or not 0 <= j < len(self.nodes) or self.nodes[j] is None:
            return None
        return self.nodes[j]()

    def _lines_upto(self, j_end: int, j_from: int) -> None:
        """Look up the user's line of nodes ``[j_from, j_end)`` (local indices) not looked up yet."""
        lines = self.node_cols["node_line"]
        for j in range(j_from, j_end):
            if lines[j] == NO_LINE:
                site = self._node_site[j]
                label = str(sites.make_site(site[0].co_filename, site[1], site[0].co_name)) if site else ""
                lines[j] = self.intern(label)
                self._node_site[j] = None

    def trim(self) -> None:
        """Drop the oldest launches beyond ``max_rows`` (and the nodes no kept launch refers to)."""
        drop = len(self) - self.max_rows
        if drop <= 0:
            return
        for col in self.cols.values():
            del col[:drop]
        self.first += drop
        self._last_node, self._last_nid = _dead, -1
        nodes = self.cols["node"]
        keep_from = next((n for n in nodes if n >= 0), self.node_first + len(self.nodes))
        ndrop = keep_from - self.node_first
        if ndrop > 0:
            del self.nodes[:ndrop]
            del self._node_site[:ndrop]
            for col in self.node_cols.values():
                del col[:ndrop]
            self.node_first += ndrop

    # ---- reading -------------------------------------------------------------------------------------------
    def row(self, seq: int) -> dict | None:
        i = seq - self.first
        if not 0 <= i < len(self):
            return None
        c = self.cols
        nid = c["node"][i]
        op = line = ""
        j = nid - self.node_first
        if nid >= 0 and 0 <= j < len(self.nodes):
            self._lines_upto(j + 1, j)
            op = self.strs[self.node_cols["node_op"][j]]
            line = self.strs[self.node_cols["node_line"][j]]
        return {"seq": seq, "name": self.strs[c["name"][i]], "device": self.strs[c["dev"][i]],
                "start": c["start"][i], "seconds": c["dur"][i], "shapes": self.strs[c["shape"][i]],
                "nbytes": int(c["nbytes"][i]), "phase": PHASES[c["phase"][i]], "cell_index": c["cell"][i],
                "node": nid, "op": op, "line": line}

    def chunk(self, base: int, upto: int, strs_from: int, nodes_from: int) -> tuple[dict, list]:
        """Rows ``[base, upto)`` (sequence numbers), the strings from ``strs_from`` and the nodes from number
        ``nodes_from`` on: ``(meta, buffers)``; the buffers are the columns in :data:`COLUMNS` order, then the
        node columns (:data:`NODE_COLUMNS`). Lines of the new nodes are looked up now (once per node)."""
        base = max(base, self.first)
        i0, i1 = base - self.first, max(upto - self.first, base - self.first)
        j0 = max(nodes_from - self.node_first, 0)
        j1 = len(self.nodes)
        self._lines_upto(j1, j0)
        bufs = [memoryview(self.cols[name][i0:i1] if name not in STORE_TYPES else array(code, self.cols[name][i0:i1]))
                .cast("B") for name, code in COLUMNS]
        bufs += [memoryview(col[j0:j1]).cast("B") for col in self.node_cols.values()]
        meta = {"base": base, "n": i1 - i0, "first": self.first, "strs_base": strs_from,
                "strs": self.strs[strs_from:], "nodes_base": self.node_first + j0, "nodes_n": j1 - j0,
                "node_first": self.node_first, "columns": [n for n, _ in COLUMNS] + [n for n, _ in NODE_COLUMNS],
                "types": [t for _, t in COLUMNS] + [t for _, t in NODE_COLUMNS]}
        return meta, bufs

    def clear(self) -> None:
        self.__init__(self.max_rows)


def payload_bytes(meta: dict, buffers: Sequence) -> int:
    """What a chunk costs on the wire: its JSON part plus its binary buffers."""
    return len(json.dumps(meta, separators=(",", ":"))) + sum(b.nbytes for b in buffers)


# ---- static fallback: a small PNG (NumPy + zlib) -------------------------------------------------------
def _png(rgba) -> bytes:
    import struct
    import zlib

    h, w, _ = rgba.shape
    raw = b"".join(b"\x00" + rgba[y].tobytes() for y in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def compressed_x(start, dur, cell, gap_frac: float = 0.02):
    """Where launches go on the x axis (seconds): within a cell real time since its first launch; cells side
    by side in order with a small gap (idle time between cells is cut out). The browser does the same."""
    import numpy as np

    start, dur, cell = (np.asarray(a) for a in (start, dur, cell))
    if not len(start):
        return start.astype(float), 0.0
    cells = np.unique(cell)
    lo = {c: start[cell == c].min() for c in cells}
    hi = {c: (start + dur)[cell == c].max() for c in cells}
    total = sum(hi[c] - lo[c] for c in cells)
    gap = max(total * gap_frac, 1e-6) if len(cells) > 1 else 0.0
    off, x = {}, 0.0
    for c in cells:
        off[c] = x - lo[c]
        x += hi[c] - lo[c] + gap
    shift = np.zeros(int(cells.max()) + 1)
    for c in cells:
        shift[c] = off[c]
    return start + shift[cell], x - gap


def timeline_png(store: LaunchStore, width: int = 640, row_h: int = 8, max_rows: int = 24) -> bytes:
    """The timeline as a small PNG: one row per kernel name (most total time on top), bars coloured by phase,
    narrower bars merged into the pixel they fall in. Transparent background, no text."""
    import numpy as np

    n = len(store)
    c = store.cols
    if n == 0:
        img = np.zeros((row_h * 2, width, 4), np.uint8)
        img[row_h - 1:row_h + 1, :, 3] = 60
        return _png(img)
    start = np.frombuffer(c["start"], np.float64)
    dur = np.frombuffer(c["dur"], np.float64)
    name = np.frombuffer(c["name"], np.uint32)
    phase = np.frombuffer(c["phase"], np.uint8)
    cell = np.frombuffer(c["cell"], np.uint16).astype(np.int64)
    x, span = compressed_x(start, dur, cell)
    totals = np.bincount(name, weights=dur)
    order = [i for i in np.argsort(-totals, kind="stable") if totals[i] > 0 or np.any(name == i)][:max_rows]
    rows = np.full(len(totals), -1)
    rows[order] = np.arange(len(order))
    img = np.zeros((len(order) * row_h, width, 4), np.uint8)
    scale = (width - 1) / span if span > 0 else 0.0
    x0 = np.clip((x * scale).astype(np.int64), 0, width - 1)
    x1 = np.clip(((x + dur) * scale).astype(np.int64), 0, width - 1)
    r = rows[name]
    keep = r >= 0
    colours = np.array([(*rgb, 255) for rgb in PHASE_RGB], np.uint8)
    for ri, a, b, p in zip(r[keep], x0[keep], x1[keep], phase[keep]):
        img[ri * row_h + 1:(ri + 1) * row_h - 1, a:b + 1] = colours[p]
    return _png(img)


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
        self._compiles: deque = deque(maxlen=500)
        self.max_launches = max_launches
        self.max_rows = max_rows  # rows drawn without scrolling (the canvas scrolls to the others)
        self._seen = 0  # launches since open / clear (the store keeps the newest ``max_launches``)
        self._groups: dict[tuple[str, str], list] = {}  # (name, device) -> [calls, total_s], since open / clear
        self._cells: dict[int, list] = {}  # cell number -> [launches, kernel_s, first start, last end]
        self._counter = 1  # cells outside IPython
        self._ipy = CELLS.install(_get_ipython())
        self._html: dict[str, str] = {}
        self._sent = (0, 0, 0)  # (rows, strings, node number) the browser has
        self._rev = 0  # bumped by every full snapshot; appends name the snapshot they follow
        self._height = height or (40 + 18 * max_rows)
        self._unlisten = sites.listen(self)  # while open, new graph nodes record the user's line (tooltips)
        super().__init__(live=live)
        _TIMELINES.add(self)
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
            return CELLS.number.get(CELLS.seq, CELLS.seq)
        return self._counter

    def _cell_key(self) -> int:
        return CELLS.seq if self._ipy else -self._counter

    def cell_number(self, key: int) -> int:
        return CELLS.number.get(key, key) if key > 0 else -key

    def cell_name(self, key: int) -> str:
        return CELLS.label.get(key, f"cell {key}") if key > 0 else f"cell {-key}"

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
            put((event, None if node is None else node()))
            if len(inbox) >= DRAIN_EVENTS or clock() >= due[0]:
                view = ref()
                if view is None:  # (the finalizer below unsubscribes; this is in case a delivery races it)
                    inbox.clear()
                    return
                due[0] = clock() + DRAIN_SECONDS
                view._drain()
                if view._stale and view._live():
                    view._maybe_redraw()

        unsubscribe = events.subscribe(receive, self.records_hidden)
        weakref.finalize(self, unsubscribe)  # a view dropped without close() stops listening when collected
        return unsubscribe

    def _drain(self) -> None:
        """File the inbox into the store, the tables and the compile list (in the order the events came): the
        columns are built as lists and appended to the store's arrays once."""
        inbox = self._inbox
        if not inbox:
            return
        items = inbox[:]
        inbox.clear()
        st, groups, cells = self._store, self._groups, self._cells
        key = self._cell_key()  # (the inbox is emptied before each cell, so its events all ran in this one)
        ci = st.cell_index(key)
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
            starts.append(start)
            durs.append(seconds)
            i = idx.get(name)
            names.append(i if i is not None else intern(name))
            i = idx.get(device)
            devs.append(i if i is not None else intern(device))
            if shapes:
                i = idx.get(shapes)
                shapes_col.append(i if i is not None else intern(shapes, _fmt_shapes(shapes)))
            else:
                shapes_col.append(0)
            nodes.append(-1 if node is None else node_id(node))
            phase_col.append(phase)
            nbytes_col.append(event.nbytes)
            _add_launch(groups, name, device, seconds)
            _add_to_cell(cells, key, start, seconds)
        if starts:
            st.extend({"start": starts, "dur": durs, "name": names, "dev": devs, "shape": shapes_col, "node": nodes,
                       "cell": [ci] * len(starts), "phase": phase_col, "nbytes": nbytes_col})
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
        """Every launch since open / clear, per cell, as :func:`cell_summary` gives it."""
        self._drain()
        return cell_rows({self.cell_number(k): v for k, v in self._cells.items()})

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
        import base64

        data = super()._repr_mimebundle_(**kwargs)
        data["image/png"] = base64.b64encode(self.to_png()).decode("ascii")
        return data

    def close(self) -> None:
        if self._unlisten is not None:
            self._unlisten()
        super().close()
