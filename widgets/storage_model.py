"""The storage view's model and payload: plain data, no widget.

- the *model*: pure functions from the core's public objects to plain data (:func:`storage_model` names every
  storage: parameters and optimizer state by module path, the notebook's variables by their names;
  :func:`storage_totals`, :func:`transfer_summary`, :func:`pool_model`);
- the *payload*: :func:`storage_payload`, model in, every coordinate the browser draws out (plain JSON).

>>> import tinygrad_like as tl
>>> from tinygrad_like.widgets.storage_model import storage_model
>>> w = tl.zeros(3, 4)
>>> row = next(r for r in storage_model(user_ns={"w": w}) if r["id"] == w.storage.id)
>>> row["name"], row["residency"], row["version"], row["nbytes"]
('w', 'cpu', 0, 48)

Nothing here keeps a storage alive: the model holds ids, numbers and strings, and the notebook's namespace is read,
not kept.
"""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from tinygrad_like.profiler import format_time
from tinygrad_like.storage import Storage, live_storages, summarize_writes
from tinygrad_like.tensor import Tensor

from .layouts import element_reads, strip_columns
from .storage_groups import Group, default_open, group_text, group_tree, visible

__all__ = ["storage_model", "storage_totals", "transfer_summary", "pool_model", "storage_payload", "collect_names",
           "ipython_namespace", "format_bytes", "tensor_shapes", "pool_text", "devices_in_use", "NO_POOL_TEXT"]

NO_POOL_TEXT = "no device pool (CPU only)"


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


# ---- model: shapes --------------------------------------------------------------------------------
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


# ---- model: names -----------------------------------------------------------------------------------
#: names in a notebook's namespace that are IPython's, not the user's
_NS_SKIP = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


def ipython_namespace() -> Mapping[str, Any] | None:
    """The running IPython shell's user namespace, or None (plain Python, tests). Never imports IPython: only a
    process that already loaded it can be running a shell."""
    ip_mod = sys.modules.get("IPython")
    get = getattr(ip_mod, "get_ipython", None)
    shell = get() if callable(get) else None
    return getattr(shell, "user_ns", None)


def _is_module(obj: Any) -> bool:
    from tinygrad_like.nn import Module

    return isinstance(obj, Module)


def _is_optimizer(obj: Any) -> bool:
    from tinygrad_like.optim import Optimizer

    return isinstance(obj, Optimizer)


def collect_names(names: Mapping[str, Any] | None = None, model: Any = None, optimizers: Iterable[Any] = (),
                  user_ns: Mapping[str, Any] | None = None) -> list[tuple[str, str, tuple, Any]]:
    """Every name we can give a storage, as ``(name, kind, sort key, tensor or storage)``.

    Kinds: ``"name"`` (given through ``names=``), ``"param"`` / ``"buffer"`` (a module's, by module path;
    ``model=``'s bare, a module found in ``user_ns`` prefixed with its variable: ``net.0.weight``), ``"grad"``
    (``<param>.grad``), ``"state"`` (optimizer state by its parameter's path: ``0.weight.momentum_buffer``,
    ``blocks.3.fc1.weight.exp_avg``) and ``"var"`` (a notebook variable holding a tensor). The sort key keeps a
    parameter, its gradient and its optimizer state together, in the model's order.
    """
    out: list[tuple[str, str, tuple, Any]] = []
    for name, obj in (names or {}).items():
        if isinstance(obj, weakref.ref):
            obj = obj()
        if obj is not None:
            out.append((str(name), "name", (0, len(out)), obj))
    modules: list[tuple[str, Any]] = [("", model)] if model is not None else []
    opts: list[tuple[str, Any]] = [("optimizer", o) for o in optimizers if o is not None]
    variables: list[tuple[str, Any]] = []
    seen_mod, seen_opt = {id(model)}, {id(o) for _, o in opts}
    for var, obj in (user_ns or {}).items():
        if not isinstance(var, str) or var.startswith("_") or var in _NS_SKIP:
            continue
        if isinstance(obj, Tensor):
            variables.append((var, obj))
        elif _is_module(obj) and id(obj) not in seen_mod:
            seen_mod.add(id(obj))
            modules.append((var + ".", obj))
        elif _is_optimizer(obj) and id(obj) not in seen_opt:
            seen_opt.add(id(obj))
            opts.append((var, obj))
    param_path: dict[int, tuple[str, int]] = {}  # id(parameter) -> (its path, its order)
    for prefix, mod in modules:
        for getter, kind in (("named_parameters", "param"), ("named_buffers", "buffer")):
            fn = getattr(mod, getter, None)
            if fn is None:
                continue
            for path, t in fn():
                if t is None or id(t) in param_path:
                    continue
                order = len(param_path)
                param_path[id(t)] = (prefix + path, order)
                out.append((prefix + path, kind, (1, order, 0), t))
                g = getattr(t, "grad", None)
                if g is not None:
                    out.append((prefix + path + ".grad", "grad", (1, order, 1), g))
    for var, opt in opts:
        plist = [p for group in getattr(opt, "param_groups", ()) for p in group.get("params", ())]
        for i, p in enumerate(plist):
            state = getattr(opt, "state", {}).get(p) if isinstance(getattr(opt, "state", None), Mapping) else None
            if not state:
                continue
            path, order = param_path.get(id(p), (f"{var}.param{i}", 10_000 + i))
            for j, (key, value) in enumerate(state.items()):
                if isinstance(value, Tensor):
                    out.append((f"{path}.{key}", "state", (1, order, 2 + j), value))
    for var, t in variables:
        out.append((var, "var", (2, len(out)), t))
    return out


def module_of(name: str, kind: str) -> str:
    """The module path a storage's first name belongs to: its parameter's module for a parameter, buffer, gradient
    (``<param>.grad``) or optimizer state (``<param>.<key>``); ``""`` (the top level) for anything else."""
    if kind == "grad" and name.endswith(".grad"):
        param = name[: -len(".grad")]
    elif kind == "state":
        param = name.rpartition(".")[0]
    elif kind in ("param", "buffer"):
        param = name
    else:
        return ""
    return param.rpartition(".")[0]


def _views_of(st: Storage) -> list[Tensor]:
    """The live view tensors the core made over ``st`` (``Storage.views`` holds them weakly)."""
    return [t for t in (r() for r in (st.views or ())) if t is not None]


def _spec(t: Tensor) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    return tuple(int(d) for d in t.shape), tuple(int(s) for s in t.stride()), int(t.storage_offset())


def storage_model(storages: Iterable[Storage] | None = None, *, names: Mapping[str, Any] | None = None,
                  model: Any = None, optimizers: Iterable[Any] = (), user_ns: Mapping[str, Any] | None = None,
                  shapes: Mapping[int, list[tuple]] | None = None) -> list[dict]:
    """One dict per storage (default: every live storage), ordered by id (creation order).

    Names come from ``Storage.name`` (first), ``names`` (``{name: tensor or storage}``), ``model`` (a module:
    parameters and buffers by path, ``path.grad`` for gradients), ``optimizers`` (their state by parameter path)
    and ``user_ns`` (a notebook namespace: tensors by variable, modules and optimizers found there likewise); see
    :func:`collect_names`. ``shapes``: storage id -> shapes, e.g. from :func:`tensor_shapes`; named tensors
    always contribute theirs.

    Keys: ``id``, ``name`` (all names joined by ", "; ``""`` when unknown), ``names`` (list), ``kind`` (the
    first name's kind, ``""`` when unnamed), ``group`` (the module path of the first name's parameter:
    ``"transformer.h.0.attn"`` for ``transformer.h.0.attn.c_attn.weight.exp_avg``; ``""`` for a notebook variable),
    ``sort`` (a sort key: model order, then the rest), ``shapes`` (list
    of tuples), ``numel``, ``dtype``, ``device``, ``simulated`` (a simulated device: ``sim``), ``residency``
    ("cpu" | "gpu" | "both"), ``dirty`` (None | "cpu" | "gpu"), ``dirty_text``, ``version``, ``nbytes``, ``fence``
    (bool: device work pending), ``last_write`` (None or a dict with ``version``, ``op``, ``site``), ``writes``
    (the recent writes, newest last, as text), ``views`` (the tensors over it: ``{"label", "shape", "strides",
    "offset"}``, named ones first, one per distinct layout).
    """
    sts = live_storages() if storages is None else list(storages)
    owner: dict[int, list[tuple[str, str, tuple]]] = {}
    layouts: dict[int, dict[tuple, list[str]]] = {}
    shape_of: dict[int, list[tuple]] = {k: list(v) for k, v in (shapes or {}).items()}
    for name, kind, key, obj in collect_names(names, model, optimizers, user_ns):
        st = obj if isinstance(obj, Storage) else getattr(obj, "storage", None)
        if not isinstance(st, Storage):
            continue
        lst = owner.setdefault(st.id, [])
        if all(n != name for n, _, _ in lst):
            lst.append((name, kind, key))
        if isinstance(obj, Tensor):
            spec = _spec(obj)
            layouts.setdefault(st.id, {}).setdefault(spec, []).append(name)
            sh = shape_of.setdefault(st.id, [])
            if spec[0] not in sh:
                sh.append(spec[0])
    rows = []
    for s in sorted(sts, key=lambda s: s.id):
        found = owner.get(s.id, [])
        all_names = ([s.name] if s.name else []) + [n for n, _, _ in found if n != s.name]
        kind = "name" if s.name else (found[0][1] if found else "")
        first = all_names[0] if all_names else ""
        sort = min((k for _, _, k in found), default=(0, -1) if s.name else (3, s.id))
        views = [{"label": ", ".join(dict.fromkeys(ns)), "shape": sp[0], "strides": sp[1], "offset": sp[2]}
                 for sp, ns in layouts.get(s.id, {}).items()]
        known = set(layouts.get(s.id, {}))
        for t in _views_of(s):
            sp = _spec(t)
            if sp not in known:
                known.add(sp)
                views.append({"label": "", "shape": sp[0], "strides": sp[1], "offset": sp[2]})
        last = s.bumps[-1] if s.bumps else None
        residency = s.residency
        rows.append({
            "id": s.id,
            "name": ", ".join(all_names),
            "names": all_names,
            "kind": kind,
            "group": module_of(first, kind),
            "sort": sort,
            "shapes": shape_of.get(s.id, []),
            "numel": s.numel,
            "dtype": s.dtype.name,
            "device": str(s.device),
            "simulated": bool(getattr(getattr(s.device, "raw_backend", None), "simulated", False)),
            "residency": residency,
            "dirty": s.dirty,
            "dirty_text": _dirty_text(residency, s.dirty),
            "version": s.version,
            "nbytes": s.nbytes,
            "fence": s.fence is not None,
            "last_write": None if last is None else {
                "version": last.version, "op": last.op, "site": "" if last.site is None else str(last.site)},
            "writes": [f"v{b.version}: " + str(w) for b in (s.bumps or ()) for w in summarize_writes([b])],
            "views": views,
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


def devices_in_use(storages: Iterable[Storage]) -> list[Any]:
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


def _pool_text(p: dict) -> str:
    if not p["available"]:
        return "backend reports no pool"
    fmt = lambda v: "—" if v is None else format_bytes(v)  # noqa: E731
    rate = "—" if p["hit_rate"] is None else f"{100 * p['hit_rate']:.1f}%"
    return f"pool: in use {fmt(p['in_use_bytes'])} · cached {fmt(p['cached_bytes'])} · hit rate {rate}"


def pool_text(pools: list[dict]) -> str:
    """The pool line(s) the view shows, one per device; :data:`NO_POOL_TEXT` without a device."""
    return "\n".join(f"{p['device']} {_pool_text(p)}" for p in pools) if pools else NO_POOL_TEXT


# ---- payload: what the browser draws (every coordinate in CSS px, origin top-left) ---------------------------
LEFT = 136       # the label column (lane and view names)
CELL = 24        # one storage element
GAP_W = 52       # the elided middle of a long strip, at least (wider when its count needs it: gap_width)
GAP_PAD = 6      # between the elided count and the indices either side of it
CHAR_W = 7.2     # an upper bound of one character's width in the 11 px index text (digits are 7.0 px in DejaVu Sans)
HEADER_H = 24    # name, details and version badge
LANE_H = 20      # one copy of the bytes (host or device)
LANE_GAP = 6     # between the host and the device lane (the transfer arrows cross it)
INDEX_H = 14     # element indices under the strip
TRACK_H = 20     # one view over the storage
BLOCK_GAP = 14   # between two storages
SECTION_H = 22   # a section title ("named (6)", "other (15)")
GROUP_H = 24     # a module's row: its fold toggle, path and summary
INDENT = 14      # per level of the module tree
RIGHT_W = 200    # the column right of the strips: badges, transfer labels, view details
MAX_CELLS, HEAD, TAIL = 24, 16, 8
MAX_TRACKS = 4   # views drawn per storage (the rest are counted)
EXACT_READS = 1 << 16  # views larger than this mark only their first and last visits (see layouts.element_reads)
BADGE_H = 18
BADGE_COL = 48   # the version badges' column, right of the strips
#: the columns of the table under the picture (``payload["table"]``)
TABLE_COLUMNS = ("id", "owner", "dtype", "device", "copies", "version", "last write")
#: the legend, in its order: what each colour (or pattern) of the picture means; only those drawn are listed
LEGEND = (("cpu", "only copy"), ("sync", "in sync"), ("host-newer", "host newer"), ("device-newer", "device newer"),
          ("stale", "stale copy"), ("absent", "no copy"), ("view", "read by a view"))


@lru_cache(maxsize=4096)
def _marks(shape: tuple, strides: tuple, offset: int, numel: int, columns: tuple) -> tuple:
    """``(((column, first visit, reads), ...), elements read)`` of one view over a strip's ``columns``."""
    n = 1
    for d in shape:
        n *= d
    contiguous = n > 0 and all(s == p for d, s, p in zip(shape, strides, _row_major(shape)) if d != 1)
    if contiguous:  # the common case (parameters, whole tensors): no address arithmetic at all
        marks = tuple((i, c, c - offset, 1) for i, c in enumerate(columns)
                      if not isinstance(c, tuple) and offset <= c < offset + n)
        return marks, n
    reads = element_reads(shape, strides, offset, exact_limit=EXACT_READS)
    marks = tuple((i, c, *reads[c]) for i, c in enumerate(columns) if not isinstance(c, tuple) and c in reads)
    distinct = len(reads) if n <= EXACT_READS else None
    return marks, distinct


def _row_major(shape: tuple) -> tuple:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


def _matches(row: dict, text: str, device: str, dtype: str) -> bool:
    if device and row["device"] != device:
        return False
    if dtype and row["dtype"] != dtype:
        return False
    if text:
        hay = [n.lower() for n in row["names"]] + [f"#{row['id']}"] + [v["label"].lower() for v in row["views"]]
        return all(any(alt in h for alt in term.split("|") if alt for h in hay) for term in text.lower().split())
    return True


def _tx_text(arrow: str, d: str, s: dict) -> str:
    return f"{arrow} {d} {s['count']}× · {format_bytes(s['bytes'])} · {format_time(s['seconds'])}"


def gap_width(numels: Iterable[int]) -> float:
    """The width of the elided middle shared by the strips of storages with ``numels`` elements: its count
    (``12,456``) fits with :data:`GAP_PAD` to the indices either side, at :data:`CHAR_W` a character (an upper
    bound: the browser measures, and shortens a count that still would not fit)."""
    widest = max((len(f"{n - HEAD - TAIL:,}") for n in numels if n > MAX_CELLS), default=0)
    return max(GAP_W, float(round(widest * CHAR_W + 2 * GAP_PAD)))


def block_height(row: dict) -> float:
    """The height :func:`_block` gives ``row``'s storage (without the gap below it)."""
    h = HEADER_H + LANE_H + INDEX_H + TRACK_H * min(len(row["views"]), MAX_TRACKS)
    if row["device"] != "cpu":
        h += LANE_H + LANE_GAP
    return h + (14 if len(row["views"]) > MAX_TRACKS else 0)


def _relative(label: str, group: str) -> str:
    """A view's label as shown under its group's row: without the group's path (``weight.exp_avg`` under
    ``transformer.h.0.attn.c_attn``); the whole label is in its tooltip."""
    return label[len(group) + 1:] if group and label.startswith(group + ".") else label


def _block(row: dict, y: float, strip_x: float, right_x: float, tx: dict | None, *, gap_w: float = GAP_W,
           x0: float = 0.0, group: str = "") -> dict:
    """One storage: header, lanes, indices, view tracks and transfer arrows, at ``y`` (TOP-LEFT coordinates); its
    header starts at ``x0`` (indented under its group), its strip at ``strip_x``."""
    numel = row["numel"]
    columns = strip_columns(numel, max_cells=MAX_CELLS, head=HEAD, tail=TAIL)
    cells, x = [], strip_x
    for c in columns:
        if isinstance(c, tuple):
            n = c[1] - c[0] + 1
            cells.append({"x": x, "w": gap_w, "gap": True, "text": f"… {n:,} …", "count": f"{n:,}",
                          "tip": f"{n:,} elements not drawn: {c[0]:,} to {c[1]:,}", "first": c[0], "last": c[1]})
            x += gap_w
        else:
            cells.append({"x": x, "w": CELL, "i": c})
            x += CELL
    strip_w = x - strip_x
    device_home = row["device"] != "cpu"
    res, dirty = row["residency"], row["dirty"]
    if not device_home:
        state = "cpu"
    elif res == "gpu":
        state = "device-only"
    elif dirty == "cpu":
        state = "host-newer"
    elif dirty == "gpu":
        state = "device-newer"
    else:
        state = "sync"
    lanes, ly = [], y + HEADER_H
    host = {"id": "host", "label": "host", "y": ly, "h": LANE_H, "present": res in ("cpu", "both"),
            "stale": dirty == "gpu", "newer": dirty == "cpu"}
    lanes.append(host)
    if device_home:
        ly += LANE_H + LANE_GAP
        lanes.append({"id": "device", "label": row["device"] + (" (sim)" if row["simulated"] else ""), "y": ly,
                      "h": LANE_H, "present": res in ("gpu", "both"), "stale": dirty == "cpu",
                      "newer": dirty == "gpu"})
    ly += LANE_H
    index_y = ly + 11
    ly += INDEX_H
    tracks = []
    for v in row["views"][:MAX_TRACKS]:
        marks, distinct = _marks(tuple(v["shape"]), tuple(v["strides"]), v["offset"], numel, tuple(columns))
        vn = 1
        for d in v["shape"]:
            vn *= d
        reads = f"{distinct:,} of {numel:,} read" if distinct is not None else f"{vn:,} elements"
        detail = (f"{tuple(v['shape'])} · stride {tuple(v['strides'])} · offset {v['offset']} · {reads}")
        short = f"stride {tuple(v['strides'])} · offset {v['offset']}"
        tracks.append({
            "y": ly + 2, "h": TRACK_H - 4, "label": v["label"] or f"view {_fmt_shape(tuple(v['shape']))}",
            "rel": _relative(v["label"], group) if v["label"] else f"view {_fmt_shape(tuple(v['shape']))}",
            "named": bool(v["label"]), "detail": detail, "short": short,
            # [column index, storage index, first visit, reads]
            "marks": [list(m) for m in marks],
        })
        ly += TRACK_H
    more = len(row["views"]) - MAX_TRACKS
    note = f"+{more} more views" if more > 0 else ""
    if note:
        ly += 14
    arrows = []
    if device_home and tx:
        y_host, y_dev = lanes[0]["y"] + LANE_H / 2, lanes[1]["y"] + LANE_H / 2
        for j, (d, arrow) in enumerate((("h2d", "↓"), ("d2h", "↑"))):
            s = tx.get(d)
            if s and s["count"]:
                arrows.append({"dir": d, "x": right_x + 6 + 12 * j, "y0": y_host if d == "h2d" else y_dev,
                               "y1": y_dev if d == "h2d" else y_host, "count": s["count"],
                               "text": _tx_text(arrow, d, s), "ty": (y_host if d == "h2d" else y_dev) + 4,
                               "tx": right_x + 34})
    shapes = ", ".join(_fmt_shape(tuple(s)) for s in row["shapes"][:3]) + (" …" if len(row["shapes"]) > 3 else "")
    sub = " · ".join(x for x in (f"#{row['id']}", row["dtype"], row["device"], shapes or None,
                                  f"{numel:,} elements", format_bytes(row["nbytes"]),
                                  "fence pending" if row["fence"] else None) if x)
    lw = row["last_write"]
    badge_text = f"v{row['version']}"
    tip = [["storage", f"#{row['id']}"], ["names", row["name"] or "(none)"], ["dtype", row["dtype"]],
           ["device", row["device"] + (" (simulated)" if row["simulated"] else "")],
           ["elements", f"{numel:,} ({format_bytes(row['nbytes'])})"],
           ["shapes", ", ".join(_fmt_shape(tuple(s)) for s in row["shapes"]) or "—"],
           ["residency", res], ["copies", _dirty_text(res, dirty)], ["version", str(row["version"])],
           ["fence", "pending" if row["fence"] else "—"]]
    return {
        "id": row["id"], "y": y, "x": x0, "group": group, "h": ly - y,
        "label": row["names"][0] if row["names"] else f"storage #{row['id']}",
        "names": row["names"], "kind": row["kind"] or "other", "sub": sub, "state": state, "tip": tip,
        "device": row["device"], "dtype": row["dtype"], "residency": res, "dirty": dirty or "",
        "version": row["version"],
        "badge": {"x": right_x, "y": y + (HEADER_H - BADGE_H) / 2 - 2, "h": BADGE_H, "text": badge_text,
                  "site": "" if lw is None else f"v{lw['version']} {lw['op']} at {lw['site'] or 'an unrecorded place'}",
                  "writes": row["writes"][-6:]},
        "strip": {"x": strip_x, "w": strip_w}, "cells": cells, "index_y": index_y, "lanes": lanes,
        "tracks": tracks, "note": note, "note_y": ly - 3, "arrows": arrows,
    }


def storage_payload(rows: list[dict], *, totals: dict | None = None, pools: list[dict] | None = None,
                    transfers: dict | None = None, by_storage: Mapping[int, dict] | None = None,
                    text: str = "", device: str = "", dtype: str = "", show_other: bool = False,
                    max_rows: int = 200, toggled: Mapping[str, bool] | None = None, budget: float = 840) -> dict:
    """What ``static/storage.js`` draws (see ``static/CONTRACT.md``): the named storages in the model's order,
    grouped by module into folding groups (``storage_groups``), then -- only when ``show_other`` -- the unnamed
    ones, each filtered by name (substring, any of its names or views; ``#12`` finds storage 12), device and dtype;
    at most ``max_rows`` blocks.

    ``toggled``: group path -> open, the groups the learner opened or folded; the others are open or folded by
    ``storage_groups.default_open`` (all open when few storages match, else levels that fit in ``budget`` px)."""
    totals = storage_totals(rows) if totals is None else totals
    toggled = toggled or {}
    match = [r for r in rows if _matches(r, text.strip(), device, dtype)]
    named = sorted((r for r in match if r["names"]), key=lambda r: (r["sort"], r["id"]))
    other_all = [r for r in rows if not r["names"]]
    other = [r for r in match if not r["names"]]
    # one strip geometry for everything that matches, drawn or folded: opening a group moves nothing sideways
    candidates = named + (other if show_other else [])
    ncols = max((len(strip_columns(r["numel"], max_cells=MAX_CELLS, head=HEAD, tail=TAIL)) for r in candidates),
                default=8)
    has_gap = any(r["numel"] > MAX_CELLS for r in candidates)
    gap_w = gap_width(r["numel"] for r in candidates)
    strip_w = max(8, ncols - has_gap) * CELL + (gap_w if has_gap else 0)
    strip_x, right_x = LEFT, LEFT + strip_w + 14
    width = right_x + RIGHT_W
    root = group_tree(named)
    height_of = lambda it: GROUP_H if isinstance(it, Group) else block_height(it) + BLOCK_GAP  # noqa: E731
    opened = default_open(root, height_of, budget - SECTION_H - 8)  # (the section's title, the margins)
    is_open = lambda path: toggled.get(path, path in opened)  # noqa: E731
    items = visible(root, is_open) + ([(0, r) for r in other] if show_other else [])
    n_rows = sum(not isinstance(it, Group) for _, it in items)
    cut = max(n_rows - max_rows, 0)
    blocks, groups, sections, y = [], [], [], 4.0
    drawn = 0
    for title, part in ((f"named ({len(named)})", [(d, it) for d, it in items if isinstance(it, Group) or it["names"]]),
                        (f"other ({len(other)})", [(d, it) for d, it in items
                                                   if not isinstance(it, Group) and not it["names"]])):
        if not part:
            continue
        sections.append({"y": y, "label": title})
        y += SECTION_H
        parent: list[str] = []  # the open groups above the current item, by depth
        for depth, it in part:
            del parent[depth:]
            if isinstance(it, Group):
                # (as wide as the strips and their badges: the drawing is no wider for it)
                groups.append({"id": it.path, "label": it.path, "depth": depth, "x": depth * INDENT, "y": y,
                               "w": right_x + BADGE_COL - depth * INDENT, "h": GROUP_H,
                               "open": bool(is_open(it.path)), "count": it.total,
                               "text": group_text(it, format_bytes)})
                parent.append(it.path)
                y += GROUP_H
                continue
            if drawn >= max_rows:
                continue
            drawn += 1
            b = _block(it, y, strip_x, right_x, (by_storage or {}).get(it["id"]), gap_w=gap_w, x0=depth * INDENT,
                       group=parent[-1] if parent else "")
            blocks.append(b)
            y += b["h"] + BLOCK_GAP
    notes = []
    if cut:
        notes.append({"level": "info", "text": f"{cut} more storages match but are not drawn (max_rows={max_rows}): "
                                               "fold some groups, or filter"})
    if not blocks and not groups:
        notes.append({"level": "info", "text": "no named storage matches" if rows else "no live storages"})
    tx = transfers or transfer_summary(())
    devices = []
    pool_of = {p["device"]: p for p in (pools or [])}
    for d in totals["devices"]:
        lines = [f"{d['storages']} storages · {format_bytes(d['bytes'])}"]
        if d["device"] != "cpu":
            lines.append(f"host mirrors {format_bytes(d['host_mirror_bytes'])} · {d['dirty']} with a newer side"
                         + (f" · {d['fences']} fences" if d["fences"] else ""))
        p = pool_of.get(d["device"])
        if p is not None:
            lines.append(_pool_text(p))
        sim = any(r["simulated"] for r in rows if r["device"] == d["device"])
        devices.append({"device": d["device"] + (" (simulated)" if sim else ""), "lines": lines})
    for dev, p in pool_of.items():  # a pool with no live storage on its device (cuda's cache)
        if not any(d["device"] == dev for d in totals["devices"]):
            devices.append({"device": dev, "lines": ["0 storages", _pool_text(p)]})
    devices.append({"device": "host memory", "lines": [format_bytes(totals["host_bytes"])]})
    tx_lines = [_tx_text(a, d, tx[d]) for d, a in (("h2d", "↓"), ("d2h", "↑")) if tx.get(d, {}).get("count")]
    return {
        "width": width, "height": y + 4, "blocks": blocks, "sections": sections, "notes": notes,
        "devices": devices, "transfers": tx_lines or ["no transfers since the view opened"],
        "pool_note": "" if pools else NO_POOL_TEXT,
        "other": {"count": len(other_all), "bytes": sum(r["nbytes"] for r in other_all), "shown": show_other,
                  "text": f"other ({len(other_all)})"},
        "filters": {"devices": sorted({r["device"] for r in rows}), "dtypes": sorted({r["dtype"] for r in rows})},
        "status": (f"{len(named)} named of {len(rows)} live storages · {format_bytes(totals['bytes'])}"
                   + (f" · {len(match)} match the filter" if (text or device or dtype) else "")
                   + (f" · {len(blocks)} drawn, {len(candidates) - len(blocks)} in folded groups"
                      if len(blocks) < len(candidates) and not cut else "")),
        "groups": groups,
        "legend": legend_of(blocks),
        # every storage that matches, drawn or folded: the table under the picture (screen readers, copying), one
        # list per storage in TABLE_COLUMNS' order (lists: a 1,500-storage model's table stays ~150 kB)
        "table": [[r["id"], ", ".join(r["names"]) or "—", r["dtype"], r["device"], r["residency"], r["version"],
                   "—" if r["last_write"] is None else
                   f"v{r['last_write']['version']} {r['last_write']['op']} at {r['last_write']['site'] or '?'}"]
                  for r in candidates],
        "table_columns": list(TABLE_COLUMNS),
    }


def legend_of(blocks: list[dict]) -> list[list[str]]:
    """``[[key, text], ...]`` of the colours and patterns the blocks use, in :data:`LEGEND`'s order: each colour of
    the picture has one meaning, and the legend lists every one drawn (``storage.css`` colours ``tl-st-<key>``)."""
    used = set()
    for b in blocks:
        for lane in b["lanes"]:
            if not lane["present"]:
                used.add("absent")
            elif lane["stale"]:
                used.add("stale")
            else:
                used.add("cpu" if b["state"] in ("cpu", "device-only") else b["state"])
        if b["tracks"]:
            used.add("view")
    return [[k, t] for k, t in LEGEND if k in used]
