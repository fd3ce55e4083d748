"""The kernel timeline's model: plain data, no widget. :class:`LaunchStore` keeps the launches as typed columns
(``array.array``) plus tables of strings, graph nodes (weakly) and cells. Each ``KernelTimed`` names the graph node
whose forward or backward launched it and its phase (forward, backward, optimizer), as the core knew them at launch
(``sites.launch_context``; a CUDA kernel's time arrives later, at a synchronisation, with the node it was launched
for); a ``StorageStateChanged`` with a direction (h2d / d2h) is a "transfer". :meth:`LaunchStore.chunk` packs rows
as little binary buffers (one per column) plus the new entries of the tables: the payload the browser appends.
:func:`kernel_stats` and :func:`cell_summary` are the pure aggregates (the view keeps them incrementally, through
:func:`add_launch` and :func:`add_to_cell`).

>>> store = LaunchStore()
>>> store.add("exp", "cpu", 0.0, 2e-6, ((3,),), 12, 0, FWD)
0
>>> row = store.row(0)
>>> row["name"], row["shapes"], row["phase"]
('exp', '(3,)', 'forward')
>>> kernel_stats([Launch("exp", "cpu", 0.0, 2.0, 1), Launch("exp", "cpu", 3.0, 1.0, 2)])[0]["calls"]
2
"""

from __future__ import annotations

import json
import weakref
from array import array
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from tinygrad_like import sites
from tinygrad_like.autograd.torch_nodes import view_label

__all__ = ["Launch", "Compile", "LaunchStore", "kernel_stats", "stats_rows", "cell_summary", "cell_rows", "cell_label",
           "PHASES", "COLUMNS", "NODE_COLUMNS", "payload_bytes"]

#: phase codes of the ``phase`` column, in legend order
PHASES = ("forward", "backward", "optimizer", "transfer")
#: ``KernelTimed.phase`` -> the phase column's code (a launch from a producer that does not say is forward)
PHASE_CODES = {name: code for code, name in enumerate(PHASES)}
FWD, BWD, OPT, XFER = range(4)
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


# ---- aggregates (pure) -----------------------------------------------------------------------------------
def kernel_stats(launches: Iterable[Launch]) -> list[dict]:
    """Launches grouped by (name, device): ``calls``, ``total_s``, ``mean_s``, ``share`` (of all kernel
    time); largest total first."""
    groups: dict[tuple[str, str], list] = {}
    for l in launches:
        add_launch(groups, l.name, l.device, l.seconds)
    return stats_rows(groups)


def add_launch(groups: dict, name: str, device: str, seconds: float) -> None:
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
        add_to_cell(cells, l.cell, l.start, l.seconds)
    return cell_rows(cells)


def add_to_cell(cells: dict, cell: int, start: float, seconds: float) -> None:
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


def format_shapes(shapes) -> str:
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
    ``cells`` the cell keys (see :meth:`.kernel_view.KernelTimeline.current_cell`) the ``cell`` column indexes.
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
            c["shape"].append(i if i is not None else self.intern(shapes, format_shapes(shapes)))
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
        nid = -1 if getattr(node, "seq", None) is None else self._add_node(node, view_label(node))
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
