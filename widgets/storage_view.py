"""``StorageView``: every live storage -- owner, shapes, dtype, residency, dirty side, version, bytes,
pending fence, last in-place write -- with totals per device, the transfer log and the device pool.

Three layers, each testable on its own:

- the *model*: pure functions from the core's public objects to plain data
  (:func:`storage_model`, :func:`storage_totals`, :func:`transfer_summary`, :func:`pool_model`);
- the *drawing*: :func:`draw_storage`, totals and transfers in, a matplotlib ``Figure`` out;
- the *widget*: :class:`StorageView`, which listens to the storage events, keeps the transfer log
  while it is open and re-renders (throttled) as storages change.

>>> import tinygrad_like as tl
>>> from tinygrad_like.widgets.storage_view import storage_model
>>> w = tl.zeros(3, 4)
>>> row = next(r for r in storage_model() if r["id"] == w.storage.id)
>>> row["residency"], row["version"], row["nbytes"]
('cpu', 0, 48)

Nothing here keeps a storage alive: the model holds ids, numbers and strings; names given through
``names=`` or ``model=`` are held through weak references.
"""

from __future__ import annotations

import gc
import html
import weakref
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

import ipywidgets as W

from tinygrad_like import events
from tinygrad_like.profiler import format_time
from tinygrad_like.storage import Storage, live_storages
from tinygrad_like.tensor import Tensor

from ._base import View, figure_output, weak_callback

__all__ = ["StorageView", "storage_model", "storage_totals", "transfer_summary", "pool_model", "draw_storage",
           "format_bytes", "tensor_shapes", "NO_POOL_TEXT"]

NO_POOL_TEXT = "no device pool (CPU only)"

#: residency -> bar colour in :func:`draw_storage`
RESIDENCY_COLORS = {"cpu": "#4c78a8", "gpu": "#54a24b", "both": "#f58518"}
DIRECTION_COLORS = {"h2d": "#e45756", "d2h": "#72b7b2"}


# ---- formatting -----------------------------------------------------------------------------------
def format_bytes(n: float) -> str:
    """``12 B``, ``3.9 KiB``, ``1.50 MiB``, ``2.00 GiB``."""
    n = float(n)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            v = n / scale
            return f"{v:.2f} {unit}" if v < 10 else f"{v:.1f} {unit}"
    return f"{int(n)} B"


def _fmt_shape(shape: tuple) -> str:
    return "×".join(str(d) for d in shape) if shape else "scalar"


def _dirty_text(residency: str, dirty: str | None) -> str:
    if residency != "both":
        return "—"
    return {None: "in sync", "gpu": "host stale (device newer)", "cpu": "device stale (host newer)"}.get(
        dirty, str(dirty))


# ---- model ----------------------------------------------------------------------------------------
def tensor_shapes(storages: Iterable[Storage] | None = None) -> dict[int, list[tuple]]:
    """Storage id -> the distinct shapes of the live tensors that view it (one pass over the GC's objects).

    This costs about 20 ms per 100k live Python objects, so the view runs it after a cell or on an
    explicit refresh, not on every throttled redraw while events stream in.
    """
    wanted = None if storages is None else {s.id for s in storages}
    out: dict[int, list[tuple]] = {}
    for o in gc.get_objects():
        if issubclass(type(o), Tensor):  # not isinstance: that reads ``__class__``, which some objects compute
            st = getattr(o, "_storage", None)
            if st is None or (wanted is not None and st.id not in wanted):
                continue
            shapes = out.setdefault(st.id, [])
            shape = tuple(o.shape)
            if shape not in shapes:
                shapes.append(shape)
    return out


def _named_tensors(names: Mapping[str, Any] | None, model: Any) -> list[tuple[str, Any]]:
    """(name, tensor-or-storage) pairs from ``names`` and from ``model``'s parameters, buffers and grads."""
    pairs: list[tuple[str, Any]] = []
    for name, obj in (names or {}).items():
        if isinstance(obj, weakref.ref):
            obj = obj()
        if obj is not None:
            pairs.append((str(name), obj))
    if model is not None:
        for getter in ("named_parameters", "named_buffers"):
            fn = getattr(model, getter, None)
            if fn is None:
                continue
            for name, t in fn():
                if t is None:
                    continue
                pairs.append((name, t))
                g = getattr(t, "grad", None)
                if g is not None:
                    pairs.append((name + ".grad", g))
    return pairs


def storage_model(storages: Iterable[Storage] | None = None, *, names: Mapping[str, Any] | None = None,
                  model: Any = None, shapes: Mapping[int, list[tuple]] | None = None) -> list[dict]:
    """One dict per storage (default: every live storage), ordered by id (creation order).

    ``names``: ``{name: tensor or storage}``; ``model``: a module whose ``named_parameters()`` and
    ``named_buffers()`` name their storages (and ``name.grad`` for gradients). ``Storage.name``, when
    set, comes first. ``shapes``: storage id -> shapes, e.g. from :func:`tensor_shapes`; named tensors
    always contribute theirs.

    Keys: ``id``, ``name`` (``""`` when unknown), ``shapes`` (list of tuples), ``numel``, ``dtype``,
    ``device``, ``residency`` ("cpu" | "gpu" | "both"), ``dirty`` (None | "cpu" | "gpu"), ``dirty_text``,
    ``version``, ``nbytes``, ``fence`` (bool: device work pending), ``last_write`` (None or a dict with
    ``version``, ``op``, ``site``).
    """
    sts = live_storages() if storages is None else list(storages)
    owner: dict[int, list[str]] = {}
    shape_of: dict[int, list[tuple]] = {k: list(v) for k, v in (shapes or {}).items()}
    for name, obj in _named_tensors(names, model):
        st = obj if isinstance(obj, Storage) else getattr(obj, "storage", None)
        if not isinstance(st, Storage):
            continue
        lst = owner.setdefault(st.id, [])
        if name not in lst:
            lst.append(name)
        if isinstance(obj, Tensor):
            sh = shape_of.setdefault(st.id, [])
            if tuple(obj.shape) not in sh:
                sh.append(tuple(obj.shape))
    rows = []
    for s in sorted(sts, key=lambda s: s.id):
        found = owner.get(s.id, [])
        all_names = ([s.name] if s.name else []) + [n for n in found if n != s.name]
        last = s.bumps[-1] if s.bumps else None
        residency = s.residency
        rows.append({
            "id": s.id,
            "name": ", ".join(all_names),
            "shapes": shape_of.get(s.id, []),
            "numel": s.numel,
            "dtype": s.dtype.name,
            "device": str(s.device),
            "residency": residency,
            "dirty": s.dirty,
            "dirty_text": _dirty_text(residency, s.dirty),
            "version": s.version,
            "nbytes": s.nbytes,
            "fence": s.fence is not None,
            "last_write": None if last is None else {
                "version": last.version, "op": last.op, "site": "" if last.site is None else str(last.site)},
        })
    return rows


def storage_totals(rows: list[dict]) -> dict:
    """Totals from :func:`storage_model` rows.

    ``devices``: one dict per device (``device``, ``storages``, ``bytes`` = its own copies, ``host_mirror_bytes``,
    ``dirty`` = storages whose copies differ, ``fences`` = storages with pending work);
    ``by_residency``: one dict per (device, residency) with ``storages`` and ``bytes``;
    ``host_bytes``: everything in host memory (cpu storages and mirrors); ``storages``; ``bytes`` (logical).
    """
    devices: dict[str, dict] = {}
    by_res: dict[tuple[str, str], dict] = {}
    host = 0
    for r in rows:
        d = devices.setdefault(r["device"], {"device": r["device"], "storages": 0, "bytes": 0,
                                             "host_mirror_bytes": 0, "dirty": 0, "fences": 0})
        d["storages"] += 1
        d["bytes"] += r["nbytes"]
        if r["residency"] == "both":
            d["host_mirror_bytes"] += r["nbytes"]
        if r["residency"] in ("cpu", "both"):
            host += r["nbytes"]
        d["dirty"] += r["dirty"] is not None
        d["fences"] += bool(r["fence"])
        b = by_res.setdefault((r["device"], r["residency"]), {"device": r["device"], "residency": r["residency"],
                                                              "storages": 0, "bytes": 0})
        b["storages"] += 1
        b["bytes"] += r["nbytes"]
    order = {"cpu": 0, "both": 1, "gpu": 2}
    dev_list = sorted(devices.values(), key=lambda d: (d["device"] != "cpu", d["device"]))
    res_list = sorted(by_res.values(), key=lambda b: (b["device"] != "cpu", b["device"], order.get(b["residency"], 9)))
    return {"devices": dev_list, "by_residency": res_list, "host_bytes": host,
            "storages": len(rows), "bytes": sum(r["nbytes"] for r in rows)}


def transfer_summary(log: Iterable[Any]) -> dict:
    """Per direction (``"h2d"``, ``"d2h"``): ``count``, ``bytes``, ``seconds``, from ``StorageStateChanged``
    events (or any records with ``direction``, ``nbytes``, ``seconds``); events without a direction are skipped."""
    out = {d: {"count": 0, "bytes": 0, "seconds": 0.0} for d in ("h2d", "d2h")}
    for e in log:
        d = getattr(e, "direction", None)
        if d is None:
            continue
        s = out.setdefault(d, {"count": 0, "bytes": 0, "seconds": 0.0})
        s["count"] += 1
        s["bytes"] += int(e.nbytes)
        s["seconds"] += float(e.seconds)
    return out


_IN_USE_KEYS = ("in_use_bytes", "allocated_bytes", "allocated_bytes.all.current", "bytes_in_use", "in_use")
_CACHED_KEYS = ("cached_bytes", "free_bytes", "cached", "reserved_free_bytes")
_HIT_KEYS = ("hits", "pool_hits", "cache_hits", "num_hits")
_MISS_KEYS = ("misses", "pool_misses", "cache_misses", "num_misses")


def _first(stats: Mapping[str, Any], keys: tuple[str, ...]):
    for k in keys:
        if k in stats and stats[k] is not None:
            return stats[k]
    return None


def _read_pool_stats(backend: Any) -> dict | None:
    """The pool numbers a device backend offers, or None: ``backend.memory_stats()`` / ``pool_stats()``
    (a dict), else ``backend.pool`` (``.stats()`` or attributes ``in_use_bytes``, ``cached_bytes``, ``hits``, ...)."""
    for attr in ("memory_stats", "pool_stats"):
        fn = getattr(backend, attr, None)
        if callable(fn):
            stats = fn()
            if isinstance(stats, Mapping):
                return dict(stats)
    pool = getattr(backend, "pool", None)
    if pool is None:
        return None
    fn = getattr(pool, "stats", None)
    if callable(fn):
        stats = fn()
        if isinstance(stats, Mapping):
            return dict(stats)
    keys = _IN_USE_KEYS + _CACHED_KEYS + _HIT_KEYS + _MISS_KEYS + ("hit_rate",)
    stats = {k: getattr(pool, k) for k in keys if "." not in k and hasattr(pool, k)}
    return stats or None


def pool_model(devices: Iterable[Any]) -> list[dict]:
    """One dict per non-host device: ``device``, ``available`` (the backend reports a pool), ``in_use_bytes``,
    ``cached_bytes``, ``hits``, ``misses``, ``hit_rate`` (None where not reported)."""
    rows = []
    seen = set()
    for dev in devices:
        if dev is None or getattr(dev, "is_host", True) or str(dev) in seen:
            continue
        seen.add(str(dev))
        backend = getattr(dev, "raw_backend", None) or getattr(dev, "backend", None)
        try:
            stats = _read_pool_stats(backend)
        except Exception:  # noqa: BLE001 - a backend's stats must never break the view
            stats = None
        row = {"device": str(dev), "available": stats is not None, "in_use_bytes": None, "cached_bytes": None,
               "hits": None, "misses": None, "hit_rate": None}
        if stats is not None:
            row["in_use_bytes"] = _first(stats, _IN_USE_KEYS)
            row["cached_bytes"] = _first(stats, _CACHED_KEYS)
            row["hits"] = _first(stats, _HIT_KEYS)
            row["misses"] = _first(stats, _MISS_KEYS)
            rate = stats.get("hit_rate")
            if rate is None and row["hits"] is not None and row["misses"] is not None:
                n = row["hits"] + row["misses"]
                rate = row["hits"] / n if n else None
            row["hit_rate"] = rate
        rows.append(row)
    return rows


def _devices_in_use(storages: Iterable[Storage]) -> list[Any]:
    """The devices of the given storages, plus ``cuda`` when it is available (its pool may hold cached
    buffers with no storage alive)."""
    devs = {}
    for s in storages:
        devs.setdefault(str(s.device), s.device)
    try:
        from tinygrad_like.device import get_device

        cuda = get_device("cuda")
        devs.setdefault(str(cuda), cuda)
    except (RuntimeError, ValueError, TypeError):
        pass
    return [devs[k] for k in sorted(devs)]


# ---- drawing (pure: model in, Figure out) ------------------------------------------------------------
def _unit(max_bytes: float) -> tuple[str, float]:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if max_bytes >= scale:
            return unit, float(scale)
    return "B", 1.0


def draw_storage(totals: dict, transfers: dict | None = None, *, width: float = 6.0, dpi: int = 80):
    """Two panels, one above the other: bytes per (device, residency) and bytes moved per direction.
    Returns a ``Figure`` (not registered with pyplot: nothing shows by itself). No layout engine (it
    doubles the drawing time); tick labels may stick out on the left, which ``bbox_inches="tight"`` keeps."""
    from matplotlib.figure import Figure

    n = max(len(totals.get("by_residency", [])), 1)
    fig = Figure(figsize=(width, 1.6 + 0.3 * (n + 2)), dpi=dpi)
    ax_mem, ax_tx = fig.subplots(2, 1, height_ratios=[n + 0.5, 2])
    fig.subplots_adjust(left=0.02, right=0.98, top=0.9, bottom=0.12, hspace=1.0)

    bars = totals.get("by_residency", [])
    labels = [f"{b['device']} · {b['residency']}" for b in bars]
    unit, scale = _unit(max([b["bytes"] for b in bars], default=0))
    ys = list(range(len(bars)))[::-1]
    if bars:
        cont = ax_mem.barh(ys, [b["bytes"] / scale for b in bars],
                           color=[RESIDENCY_COLORS.get(b["residency"], "#999999") for b in bars])
        ax_mem.bar_label(cont, labels=[f"{format_bytes(b['bytes'])} ({b['storages']})" for b in bars],
                         padding=3, fontsize=8)
        ax_mem.set_yticks(ys, labels, fontsize=8)
        sizes = [b["bytes"] for b in bars if b["bytes"] > 0]
        if sizes and max(sizes) > 50 * min(sizes):  # small storages stay visible next to big ones
            ax_mem.set_xscale("log")
            ax_mem.set_xlim(min(sizes) / scale / 4, max(sizes) / scale * 40)
            unit += " (log scale)"
        else:
            ax_mem.margins(x=0.35)
    else:
        ax_mem.set_yticks([])
        ax_mem.text(0.5, 0.5, "no live storages", ha="center", va="center", transform=ax_mem.transAxes)
    ax_mem.set_xlabel(unit, fontsize=8)
    ax_mem.set_title(f"memory by device · residency  ({totals.get('storages', 0)} storages)", fontsize=9)
    ax_mem.tick_params(axis="x", labelsize=7)

    tx = transfers or transfer_summary(())
    dirs = ["h2d", "d2h"]
    tunit, tscale = _unit(max([tx[d]["bytes"] for d in dirs], default=0))
    cont = ax_tx.barh([1, 0], [tx[d]["bytes"] / tscale for d in dirs], color=[DIRECTION_COLORS[d] for d in dirs])
    ax_tx.bar_label(cont, labels=[f"{format_bytes(tx[d]['bytes'])} · {tx[d]['count']}× · "
                                  f"{format_time(tx[d]['seconds'])}" for d in dirs], padding=3, fontsize=8)
    ax_tx.set_yticks([1, 0], ["host→device (h2d)", "device→host (d2h)"], fontsize=8)
    ax_tx.margins(x=0.6)
    ax_tx.set_xlabel(tunit, fontsize=8)
    ax_tx.set_title("transfers while the view is open", fontsize=9)
    ax_tx.tick_params(axis="x", labelsize=7)
    return fig


# ---- HTML -----------------------------------------------------------------------------------------
_TD = "<td style='padding:1px 6px'>"
_TH = "<th style='text-align:left;padding:1px 6px'>"


def _table(css: str, header: list[str], rows: list[tuple[dict, list[Any]]]) -> str:
    """A table whose rows carry ``data-*`` attributes: ``rows`` = [(attrs, cells)]."""
    head = "".join(f"{_TH}{html.escape(str(h))}</th>" for h in header)
    body = []
    for attrs, cells in rows:
        a = "".join(f" data-{k}='{html.escape(str(v), quote=True)}'" for k, v in attrs.items())
        body.append(f"<tr{a}>" + "".join(f"{_TD}{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    return (f"<table class='{css}' style='border-collapse:collapse;font-size:12px'>"
            f"<tr>{head}</tr>{''.join(body)}</table>")


STORAGE_HEADER = ["id", "owner", "shape / numel", "dtype", "device", "residency", "dirty", "version", "bytes",
                  "fence", "last in-place write"]


def storage_rows_html(rows: list[dict], max_rows: int = 200) -> str:
    """The ``tl-storage-table``: one ``<tr data-storage-id=.. data-version=..>`` per storage (first ``max_rows``)."""
    shown = rows[:max_rows]
    out = []
    for r in shown:
        shape = ", ".join(_fmt_shape(s) for s in r["shapes"])
        shape = f"{shape} ({r['numel']})" if shape else f"numel {r['numel']}"
        lw = r["last_write"]
        last = "" if lw is None else f"v{lw['version']} {lw['op']} at {lw['site']}"
        attrs = {"storage-id": r["id"], "version": r["version"], "residency": r["residency"],
                 "dirty": r["dirty"] or "", "device": r["device"]}
        out.append((attrs, [r["id"], r["name"] or "—", shape, r["dtype"], r["device"], r["residency"],
                            r["dirty_text"], r["version"], format_bytes(r["nbytes"]),
                            "pending" if r["fence"] else "—", last]))
    table = _table("tl-storage-table", STORAGE_HEADER, out)
    if len(rows) > max_rows:
        rest = rows[max_rows:]
        table += (f"<div class='tl-storage-more'>… {len(rest)} more storages not shown "
                  f"({format_bytes(sum(r['nbytes'] for r in rest))})</div>")
    return table


def totals_html(totals: dict) -> str:
    rows = [({"device": d["device"]}, [d["device"], d["storages"], format_bytes(d["bytes"]),
                                       format_bytes(d["host_mirror_bytes"]), d["dirty"], d["fences"]])
            for d in totals["devices"]]
    rows.append(({"device": "host-memory"}, ["host memory", "", format_bytes(totals["host_bytes"]), "", "", ""]))
    return _table("tl-storage-totals", ["device", "storages", "bytes", "host mirrors", "dirty", "fences"], rows)


def transfers_html(summary: dict, log: Iterable[Any], last: int = 8) -> str:
    head = _table("tl-transfer-table", ["direction", "copies", "bytes", "time"],
                  [({"direction": d}, [d, s["count"], format_bytes(s["bytes"]), format_time(s["seconds"])])
                   for d, s in summary.items()])
    recent = [e for e in log if getattr(e, "direction", None)][-last:]
    if not recent:
        return head
    tail = _table("tl-transfer-log", ["storage", "direction", "bytes", "time"],
                  [({"storage-id": e.storage_id}, [e.storage_id, e.direction, format_bytes(e.nbytes),
                                                   format_time(e.seconds)]) for e in reversed(recent)])
    return head + "<div style='font-size:11px;margin-top:4px'>latest transfers</div>" + tail


def pool_html(pools: list[dict]) -> str:
    if not pools:
        return f"<div class='tl-storage-pool'>{NO_POOL_TEXT}</div>"
    rows = []
    for p in pools:
        if not p["available"]:
            rows.append(({"device": p["device"]}, [p["device"], "backend reports no pool", "", ""]))
            continue
        fmt = lambda v: "—" if v is None else format_bytes(v)  # noqa: E731
        rate = "—" if p["hit_rate"] is None else f"{100 * p['hit_rate']:.1f}%"
        rows.append(({"device": p["device"]}, [p["device"], fmt(p["in_use_bytes"]), fmt(p["cached_bytes"]), rate]))
    return ("<div class='tl-storage-pool'>"
            + _table("tl-pool-table", ["device", "in use", "cached", "hit rate"], rows) + "</div>")


# ---- the widget -----------------------------------------------------------------------------------
class StorageView(View):
    """Every live storage as a table (``tl-storage-table``), totals per device, a memory / transfer chart,
    the transfer log (collected while the view is open) and the device pool.

    ``names``: ``{name: tensor}`` to label storages; ``model``: a module whose parameters, buffers and
    grads name their storages (held weakly where the module allows it). ``max_rows``: table rows shown.
    """

    css_class = "tl-storage-view"
    listens_to = (events.StorageAllocated, events.StorageStateChanged, events.VersionBump)
    # during a cell only the tables update (``_live_update``, throttled by the base); the shapes scan and
    # the chart wait for the refresh after the cell
    #: the newest transfers kept in the log
    max_log = 1000

    def __init__(self, names: Mapping[str, Any] | None = None, model: Any = None, *, live: bool = True,
                 max_rows: int = 200, scan_tensors: bool = True) -> None:
        self._names = {str(k): _weak(v) for k, v in (names or {}).items()}
        self._model = None if model is None else _weak(model)
        self.max_rows = max_rows
        self.scan_tensors = scan_tensors
        self.transfers: deque = deque(maxlen=self.max_log)
        self._tx_totals = transfer_summary(())
        self._shapes: dict[int, list[tuple]] = {}
        self._fig_key = None
        self.rows: list[dict] = []
        self.totals: dict = storage_totals([])
        self.pools: list[dict] = []
        super().__init__(live=live)

        self.header = W.HTML()
        self.totals_html = W.HTML()
        self.table = W.HTML()
        self.table.add_class("tl-storage-rows")
        self.figure = W.Output()
        self.figure.add_class("tl-storage-figure")
        self.transfer_html = W.HTML()
        self.pool_html = W.HTML()
        refresh = W.Button(description="Refresh", icon="refresh", layout=W.Layout(width="110px"))
        refresh.add_class("tl-storage-refresh")
        refresh.on_click(weak_callback(self, "refresh"))
        self.widget.children = (
            W.HBox([self.header, refresh]), self.totals_html, self.table, self.figure,
            W.HTML("<b>Transfers</b>"), self.transfer_html, W.HTML("<b>Device buffer pool</b>"), self.pool_html,
        )
        self.refresh()

    # ---- events -----------------------------------------------------------------------------------
    def _on_event(self, event) -> None:
        if not isinstance(event, self.listens_to):
            return
        if type(event) is events.StorageStateChanged and event.direction is not None:
            self.transfers.append(event)
            s = self._tx_totals.setdefault(event.direction, {"count": 0, "bytes": 0, "seconds": 0.0})
            s["count"] += 1
            s["bytes"] += event.nbytes
            s["seconds"] += event.seconds
        super()._on_event(event)

    def after_cell(self) -> None:
        # storages die and fences complete without an event: always look again after a cell
        self.refresh()

    def clear_transfers(self) -> None:
        """Forget the transfer log and its totals."""
        self.transfers.clear()
        self._tx_totals = transfer_summary(())
        self.refresh()

    # ---- model + render ---------------------------------------------------------------------------
    @property
    def model(self) -> Any:
        """The module whose parameters name storages (None if none was given, or it is gone)."""
        return self._model() if self._model is not None else None

    @property
    def names(self) -> dict[str, Any]:
        return {k: r() for k, r in self._names.items() if r() is not None}

    def transfer_totals(self) -> dict:
        return {d: dict(s) for d, s in self._tx_totals.items()}

    def _render(self) -> None:
        if self.scan_tensors:
            self._shapes = tensor_shapes(live_storages())
        key = self._render_tables()
        if key != self._fig_key:
            figure_output(draw_storage(self.totals, self.transfer_totals()), self.figure)
            self._fig_key = key

    def _live_update(self) -> None:
        """During a cell: the tables only (shapes from the last scan; the chart follows after the cell).
        The tables are this view's content, so this counts as a redraw."""
        self.redraws += 1
        self._render_tables()

    def _render_tables(self) -> tuple:
        """Rebuild the model and the HTML tables; returns what the chart depends on."""
        sts = live_storages()
        self.rows = storage_model(sts, names=self.names, model=self.model, shapes=self._shapes)
        self.totals = storage_totals(self.rows)
        self.pools = pool_model(_devices_in_use(sts))
        del sts
        tx = self.transfer_totals()
        t = self.totals
        self.header.value = (f"<b>Storages</b>: {t['storages']} live, {format_bytes(t['bytes'])}; "
                             f"host memory {format_bytes(t['host_bytes'])}")
        self.totals_html.value = totals_html(t)
        self.table.value = storage_rows_html(self.rows, self.max_rows)
        self.transfer_html.value = transfers_html(tx, self.transfers)
        self.pool_html.value = pool_html(self.pools)
        return (tuple((b["device"], b["residency"], b["storages"], b["bytes"]) for b in t["by_residency"]),
                tuple((d, s_["count"], s_["bytes"]) for d, s_ in sorted(tx.items())))


def _weak(obj: Any):
    """A weak reference where the object allows one, else a callable that returns it."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj
