"""``StorageView``: every live storage as a picture -- a strip of its elements with the tensors that view it
laid over it, host and device copies as two lanes, transfers as arrows, version badges, totals per device and
the device's buffer pool.

Layers, each testable on its own:

- the *model* and the *payload* (``storage_model``): pure functions from the core's public objects to plain data
  (:func:`storage_model` names every storage: parameters and optimizer state by module path, the notebook's
  variables by their names; :func:`storage_totals`, :func:`transfer_summary`, :func:`pool_model`), and
  :func:`storage_payload`, model in, every coordinate the browser draws out (plain JSON);
- the *widget* (here): :class:`StorageView` listens to the storage events, keeps the transfer log while it is open and
  sends a new payload (throttled, only while shown and not paused) when something it shows changed. The browser
  half is ``storage_widget.StorageWidget`` (``static/storage.js``);
- the *static fallback* (``storage_png``): the first storages of the payload as a PNG (matplotlib).

Nothing here keeps a storage alive: the model holds ids, numbers and strings; names given through ``names=``,
``model=`` or ``optimizer=`` are held through weak references, and the notebook's namespace is read, not kept.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Mapping
from typing import Any

from tinygrad_like import events
from tinygrad_like.storage import live_storage_count, live_storages

from . import selection
from ._base import View
from ._static_picture import add_png
from .storage_model import (  # noqa: F401 - the layout constants and pool_text: re-exported from here
    CELL,
    GAP_W,
    HEAD,
    LEFT,
    NO_POOL_TEXT,
    TAIL,
    collect_names,
    devices_in_use,
    format_bytes,
    ipython_namespace,
    pool_model,
    pool_text,
    storage_model,
    storage_payload,
    storage_totals,
    tensor_shapes,
    transfer_summary,
)
from .storage_png import STATIC_BLOCKS, storage_png  # noqa: F401 - STATIC_BLOCKS: re-exported from here
from .storage_widget import StorageWidget

__all__ = ["StorageView", "storage_model", "storage_totals", "transfer_summary", "pool_model", "storage_payload",
           "collect_names", "ipython_namespace", "format_bytes", "tensor_shapes", "NO_POOL_TEXT"]


# ---- the widget -----------------------------------------------------------------------------------
class StorageView(View):
    """Every live storage as a picture (``static/storage.js``): named storages first (parameters, gradients and
    optimizer state by module path, the notebook's variables by name), the rest under "other (N)".

    ``names``: ``{name: tensor}`` to label storages; ``model``: a module whose parameters, buffers and grads are
    named by path; ``optimizer``: one optimizer (or a list) whose state is named by parameter path (all held
    weakly). ``user_ns``: True (default) reads the running IPython shell's namespace when there is one, a mapping
    is used as the namespace, False reads none. ``max_rows``: storages drawn.

    Named storages are grouped by module (a parameter with its gradient and optimizer state), in groups that fold
    (``storage_groups``): a small model starts open, a large one as an overview of its modules that fits the box;
    the learner opens groups with a click (``toggle``, ``expand``, ``fold_all`` from Python). Every storage can
    be reached, and the table under the picture lists them all.

    Filters (``set_filter(text=, device=, dtype=)``, ``show_other``) are also the widget's traitlets, which the
    browser sets; ``rows`` is the model of every live storage, ``widget.payload`` what is drawn.
    """

    css_class = "tl-storage-view"
    listens_to = (events.StorageAllocated, events.StorageStateChanged, events.VersionBump)
    records_hidden = (events.StorageStateChanged,)  # the transfer log: kept whether the view is seen or not
    #: the newest transfers kept in the log
    max_log = 1000

    def __init__(self, names: Mapping[str, Any] | None = None, model: Any = None, optimizer: Any = None, *,
                 live: bool = True, max_rows: int = 200, scan_tensors: bool = True,
                 user_ns: bool | Mapping[str, Any] = True, height: int = 560) -> None:
        self._names = {str(k): _weak(v) for k, v in (names or {}).items()}
        self._model = None if model is None else _weak(model)
        opts = optimizer if isinstance(optimizer, (list, tuple)) else ([] if optimizer is None else [optimizer])
        self._optimizers = [_weak(o) for o in opts]
        self._user_ns = user_ns if isinstance(user_ns, Mapping) else bool(user_ns)
        self.max_rows = max_rows
        self.scan_tensors = scan_tensors
        self.transfers: deque = deque(maxlen=self.max_log)
        self._tx_totals = transfer_summary(())
        self._tx_count = 0
        self._tx_by_storage: dict[int, dict] = {}
        self._shapes: dict[int, list[tuple]] = {}
        self._fingerprint = None
        self._last_quick = None
        self.rows: list[dict] = []
        self.totals: dict = storage_totals([])
        self.pools: list[dict] = []
        self.updates = 0  # payloads sent
        self._height = height
        self._toggled: dict[str, bool] = {}  # module path -> open, as the learner left it (the rest: default)
        super().__init__(live=live)
        selection.register(self)
        self.refresh()

    def _make_widget(self) -> StorageWidget:
        return StorageWidget(self, height=self._height)

    # ---- events -----------------------------------------------------------------------------------
    def _on_event(self, event) -> None:
        if not isinstance(event, self.listens_to):
            return
        if type(event) is events.StorageStateChanged and event.direction is not None:
            self.transfers.append(event)
            self._tx_count += 1
            for totals in (self._tx_totals, self._tx_by_storage.setdefault(event.storage_id, {})):
                s = totals.setdefault(event.direction, {"count": 0, "bytes": 0, "seconds": 0.0})
                s["count"] += 1
                s["bytes"] += event.nbytes
                s["seconds"] += event.seconds
        super()._on_event(event)

    @property
    def shown(self) -> bool:
        """Whether a redraw would be seen: the browser reports the view visible, no container hides it (a Dashboard
        tab), and the user has not paused it."""
        return self._live()

    def after_cell(self) -> None:
        """Look again after a cell, if anyone sees the view and something it shows may have changed: an event came
        (allocation, write, transfer), a storage died (they die without one), or a variable of the notebook was
        bound to something else (a new name for a storage). After a cell that did none of these (``1 + 1``) it does
        nothing."""
        if not self.shown:
            self._stale = True
            return
        quick = self._quick_check()
        if self._stale or quick != self._last_quick:
            self.refresh()
            self._last_quick = quick

    def _quick_check(self) -> tuple:
        ns = self.namespace()
        bound = hash(tuple((k, id(v)) for k, v in ns.items() if not k.startswith("_"))) if ns else 0
        return live_storage_count(), bound

    def _live_update(self) -> None:
        """During a cell: no scan of the garbage collector's objects (shapes from the last one)."""
        if not self.shown:
            self._stale = True
            return
        self.redraws += 1
        self._update()

    def clear_transfers(self) -> None:
        """Forget the transfer log and its totals."""
        self.transfers.clear()
        self._tx_totals = transfer_summary(())
        self._tx_by_storage.clear()
        self._tx_count = 0
        self.refresh()

    # ---- from the browser ---------------------------------------------------------------------------
    def on_message(self, content: dict) -> None:
        if content.get("type") == "close":
            self.close()
        elif content.get("type") == "refresh":
            self.refresh()
        elif content.get("type") == "toggle" and isinstance(content.get("group"), str):
            self.toggle(content["group"], content.get("open"))
        elif content.get("type") == "fold_all":
            self.fold_all()

    def on_shared_select(self, obj) -> None:
        """Another view selected a storage (``selection.StorageSelection``: a memory timeline's row): open the groups
        that hold it, show the storages no name points to if it is one of them, and outline it."""
        sid = getattr(obj, "storage_id", None)
        if not isinstance(sid, int):
            return
        row = next((r for r in self.rows if r["id"] == sid), None)
        if row is None:
            self.refresh()  # (made since the last drawing?)
            row = next((r for r in self.rows if r["id"] == sid), None)
        if row is None:
            return
        if not row["names"] and not self.widget.show_other:
            self.widget.show_other = True
        group = row.get("group")
        if row["names"] and group:
            parts = group.split(".")
            for i in range(1, len(parts) + 1):
                self._toggled[".".join(parts[:i])] = True
        self.widget.selected = sid
        self.refresh()

    def close(self) -> None:
        selection.unregister(self)
        super().close()

    # ---- folding ------------------------------------------------------------------------------------
    def toggle(self, group: str, open: bool | None = None) -> None:
        """Open or fold the group of module path ``group`` (``"transformer.h.3"``); ``open=None`` flips it."""
        if not isinstance(group, str):
            raise TypeError(f"toggle: the group is a module path (str), got {type(group).__name__}")
        if open is None:
            shown = {g["id"]: g["open"] for g in self.widget.payload.get("groups", [])}
            if group not in shown:
                raise ValueError(f"toggle: no group {group!r} is drawn; drawn groups: {sorted(shown)[:12]}")
            open = not shown[group]
        self._toggled[group] = bool(open)
        self.refresh()

    def expand(self, *groups: str) -> None:
        """Open the groups of these module paths (a path and all the groups above it: ``expand("transformer.h.3")``
        shows that block's modules)."""
        for g in groups:
            parts = g.split(".")
            for i in range(1, len(parts) + 1):
                self._toggled[".".join(parts[:i])] = True
        self.refresh()

    def fold_all(self) -> None:
        """Fold every group: the model's top-level modules, one row each."""
        self._toggled = {g: False for g in self._group_paths()}
        self.refresh()

    def _group_paths(self) -> set[str]:
        from .storage_groups import group_tree

        return {g.path for g in group_tree(sorted((r for r in self.rows if r["names"]),
                                                   key=lambda r: (r["sort"], r["id"]))).walk()}

    def on_widget_change(self, name: str) -> None:
        """A filter or ``show_other`` changed (in the browser or from Python): redraw now."""
        self.refresh()

    def set_filter(self, text: str | None = None, device: str | None = None, dtype: str | None = None) -> None:
        """Show only storages whose names match ``text`` (any case), on ``device``, of ``dtype`` ("" = any).

        ``text`` is words that must all appear in a storage's names, its views' labels or its ``#id``; a word may
        list alternatives with ``|``: ``"h.0 weight"`` is block 0's weights, ``"c_attn|c_proj bias"`` two biases."""
        with self.widget.hold_trait_notifications():
            if text is not None:
                self.widget.filter_text = text
            if device is not None:
                self.widget.filter_device = device
            if dtype is not None:
                self.widget.filter_dtype = dtype

    @property
    def show_other(self) -> bool:
        return self.widget.show_other

    @show_other.setter
    def show_other(self, value: bool) -> None:
        self.widget.show_other = bool(value)

    # ---- model + render ---------------------------------------------------------------------------
    @property
    def model(self) -> Any:
        """The module whose parameters name storages (None if none was given, or it is gone)."""
        return self._model() if self._model is not None else None

    @property
    def names(self) -> dict[str, Any]:
        return {k: r() for k, r in self._names.items() if r() is not None}

    @property
    def optimizers(self) -> list[Any]:
        return [o for o in (r() for r in self._optimizers) if o is not None]

    def namespace(self) -> Mapping[str, Any] | None:
        """The namespace whose variables name storages: the given mapping, IPython's, or None."""
        if isinstance(self._user_ns, Mapping):
            return self._user_ns
        return ipython_namespace() if self._user_ns else None

    def transfer_totals(self) -> dict:
        return {d: dict(s) for d, s in self._tx_totals.items()}

    def transfers_of(self, storage_id: int) -> dict:
        """Per direction: ``count``, ``bytes``, ``seconds`` of the transfers of one storage since the view opened."""
        return {d: dict(s) for d, s in self._tx_by_storage.get(storage_id, {}).items()}

    def summary(self) -> str:
        return "<StorageView>"

    def _repr_mimebundle_(self, **kwargs):
        """The widget, plus :func:`storage_png` of what it draws for a saved notebook where widgets do not run."""
        return add_png(super()._repr_mimebundle_(**kwargs), storage_png(self.widget.payload))

    def _render(self) -> None:
        if self.scan_tensors:
            self._shapes = tensor_shapes(live_storages())
        self._update()

    def _update(self) -> bool:
        """Rebuild the model; send a payload if what it shows changed. Returns whether one was sent."""
        sts = live_storages()
        self.rows = storage_model(sts, names=self.names, model=self.model, optimizers=self.optimizers,
                                  user_ns=self.namespace(), shapes=self._shapes)
        self.pools = pool_model(devices_in_use(sts))
        del sts
        self.totals = storage_totals(self.rows)
        live = {r["id"] for r in self.rows}
        for sid in [k for k in self._tx_by_storage if k not in live]:
            del self._tx_by_storage[sid]
        w = self.widget
        fp = (tuple((r["id"], r["version"], r["residency"], r["dirty"], r["fence"], r["name"], len(r["shapes"]),
                     tuple((v["label"], v["shape"], v["strides"], v["offset"]) for v in r["views"]))
                    for r in self.rows),
              self._tx_count, tuple((p["device"], p["in_use_bytes"], p["cached_bytes"], p["hit_rate"])
                                    for p in self.pools),
              w.filter_text, w.filter_device, w.filter_dtype, w.show_other, self.max_rows,
              tuple(sorted(self._toggled.items())))
        if fp == self._fingerprint:
            return False
        self._fingerprint = fp
        w.payload = storage_payload(self.rows, totals=self.totals, pools=self.pools,
                                    transfers=self.transfer_totals(), by_storage=self._tx_by_storage,
                                    text=w.filter_text, device=w.filter_device, dtype=w.filter_dtype,
                                    show_other=w.show_other, max_rows=self.max_rows, toggled=self._toggled,
                                    budget=1.5 * w.height)
        self.updates += 1
        return True


def _weak(obj: Any):
    """A weak reference where the object allows one, else a callable that returns it."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj
