"""When a view lets go of what it holds: a view that is no longer displayed anywhere, or whose cell was run again,
closes and keeps only a small shell that says so.

Why it is needed: IPython keeps every cell's result in its output history (``Out[5]``, ``_``), so a cell ending with
``GraphView(loss, model)`` run five times keeps five views, and with them five graphs, their subscriptions and
their line recorders, for the whole session. Nothing in the notebook shows the old ones any more.

How a view learns it is no longer shown, without importing IPython (the shell is looked up in ``sys.modules``):

- **its cell was run again.** A view displayed by a cell is *pinned* (held, so a view displayed with
  ``display(GraphView(...))`` and kept by nobody stays alive while its drawing is on the page) under that cell's
  key: the front-end's ``cellId`` (JupyterLab and Notebook 7 send one with every execution), else the cell's
  source text (a re-run with the same code). After the next run of the same cell (IPython's ``post_run_cell``
  event, by then the cell's new variables are bound) the views pinned by its earlier runs are unpinned, and each
  one that no variable of the user's still names (directly, or one or two levels down in lists, dicts or objects'
  attributes: ``g``, ``views["a"]``, ``views["a"][0]``; the output history ``Out``/``_``/``__``/``___``/``_5`` does
  not count) is released.
- **its widget was read by the user's code during a cell** (``w = GraphView(y).widget``): pinned under that cell
  too (unless pinned already), and released when it runs again if no variable names the view or its widget.
- **its output was cleared.** A displayed view turns on ipywidgets' view count (``_view_count``: the front-end
  adds one for each view of the widget it draws and takes it off when that view is removed, e.g. when the output
  area is cleared or the cell deleted). When it falls to 0, the view is released at the end of the next cell run
  if it is still 0 then and no variable names it (not at once: moving a cell removes its view and draws it again).

The hooks are registered by ``%load_ext tinygrad_like.widgets`` and, without it, when the first view is displayed
in an IPython kernel. Outside IPython nothing is pinned, and a dropped view is simply garbage collected (its
widgets close with it, unless the user's code read its ``widget``: then the widget keeps the view until ``close()``;
see ``_base._WidgetSlot``).
"""

from __future__ import annotations

import re
import sys
import weakref
from typing import Any

#: views displayed by a cell: id(view) -> [view, cell key, run serial]; held strongly while their drawing is shown
_pins: dict[int, list] = {}
#: views whose front-end view count fell to 0: id(view) -> weak reference (checked at the end of the next run)
_gone: dict[int, weakref.ref] = {}
#: cell runs seen by the hook (pins made during a run carry its serial: only earlier runs of a cell are released)
_serial = 0
#: the shells whose events this module is registered with (by id: a shell lives as long as the process)
_hooked: set[int] = set()

#: names of IPython's output and input history in the user's namespace (they do not keep a view alive)
_HISTORY = {"Out", "_oh", "In", "_ih", "_", "__", "___", "_i", "_ii", "_iii", "_dh", "exit", "quit", "get_ipython"}
_HISTORY_N = re.compile(r"_i?\d+$")
#: objects visited at most when looking for a user's variable that names a view (a large namespace is cut short)
_SCAN_BUDGET = 200_000


def shell() -> Any:
    """The running IPython shell, or None (looked up, never imported: the widgets work without IPython)."""
    ipy = sys.modules.get("IPython.core.getipython")
    if ipy is None:
        return None
    try:
        return ipy.get_ipython()
    except Exception:  # noqa: BLE001 - an IPython that changed its internals only loses the lifecycle
        return None


def attach(sh: Any = None) -> bool:
    """Register the end-of-cell hook with the IPython shell (once); False outside IPython."""
    sh = shell() if sh is None else sh
    if sh is None or not hasattr(sh, "events"):
        return False
    if id(sh) not in _hooked:
        sh.events.register("post_run_cell", _post_run_cell)
        _hooked.add(id(sh))
    return True


def detach(sh: Any) -> None:
    """Unregister the hook (``%unload_ext``)."""
    if id(sh) in _hooked:
        _hooked.discard(id(sh))
        try:
            sh.events.unregister("post_run_cell", _post_run_cell)
        except ValueError:
            pass


def cell_key(info: Any) -> tuple | None:
    """What names a cell across its runs: the front-end's cell id, else its source (an IPython ``ExecutionInfo``)."""
    if info is None:
        return None
    cell_id = getattr(info, "cell_id", None)
    if cell_id:
        return ("id", str(cell_id))
    raw = getattr(info, "raw_cell", None)
    return None if raw is None else ("source", raw)


def _running_cell(sh: Any) -> tuple | None:
    """The key of the cell running now (IPython keeps its ``ExecutionResult`` on the display hook while it runs)."""
    result = getattr(getattr(sh, "displayhook", None), "exec_result", None)
    return cell_key(getattr(result, "info", None))


def _pin(view: Any) -> bool:
    """Pin ``view`` under the cell running now; False outside IPython or outside a cell run (a comm message, a
    callback: no cell will re-run it)."""
    sh = shell()
    if sh is None or not attach(sh):
        return False
    key = _running_cell(sh)
    if key is None:
        return False
    _pins[id(view)] = [view, key, _serial]
    return True


def displayed(view: Any) -> None:
    """``view`` is being displayed: pin it under the running cell and have the front-end count its views."""
    if not _pin(view):
        return
    _gone.pop(id(view), None)
    widget = view.__dict__.get("_widget")
    if widget is not None and widget.has_trait("_view_count") and widget._view_count is None:
        widget._view_count = 0  # (None: the front-end does not count; a number: it adds and takes off its views)
        widget.observe(_count_observer(view), names="_view_count")


def held(view: Any) -> None:
    """The user's code read ``view``'s widget while a cell ran (``w = GraphView(y).widget``, ``VBox([v.widget])``):
    pin the view under that cell, unless a cell pinned it already. When the cell runs again, a view whose widget no
    variable names any more is released, as a displayed one is: re-running ``w = GraphView(y).widget`` keeps one
    view, not one per run (the widget, which ipywidgets keeps for good, would hold each old view)."""
    if id(view) not in _pins:
        _pin(view)


def _count_observer(view: Any):
    ref = weakref.ref(view)

    def changed(change) -> None:
        v = ref()
        if v is not None and not change["new"] and change["old"]:
            _gone[id(v)] = ref

    return changed


def forget(view: Any) -> None:
    """Drop what this module holds of ``view`` (it was closed)."""
    _pins.pop(id(view), None)
    _gone.pop(id(view), None)


def pinned() -> list:
    """The views pinned now (for tests and diagnostics)."""
    return [entry[0] for entry in _pins.values()]


def _post_run_cell(result: Any = None) -> None:
    """End of a cell run: release the views of earlier runs of this cell, and those the front-end no longer shows."""
    global _serial
    run, _serial = _serial, _serial + 1
    key = cell_key(getattr(result, "info", None))
    due: list[tuple[Any, str]] = []
    if key is not None:
        for vid, (view, k, serial) in list(_pins.items()):
            if k == key and serial < run:
                del _pins[vid]
                due.append((view, "its cell was run again"))
    for vid, ref in list(_gone.items()):
        del _gone[vid]
        view = ref()
        widget = None if view is None else view.__dict__.get("_widget")
        if widget is not None and not widget._view_count:
            _pins.pop(vid, None)
            due.append((view, "its output was cleared"))
    if not due:
        return
    sh = shell()
    ns = getattr(sh, "user_ns", None) or {}
    for view, why in due:
        if "_closed_as" in view.__dict__:
            continue
        widget = view.__dict__.get("_widget")
        if named_by_user(view, ns) or widget is not None and named_by_user(widget, ns):
            view._no_longer_shown()  # (the variable's view: freed once it is dropped, as one never displayed)
        else:
            view.release(why)


def named_by_user(obj: Any, ns: dict) -> bool:
    """Whether a variable of the user's namespace ``ns`` holds ``obj``: directly (the variable is ``obj``), or one or
    two levels down, each level an item of a list, tuple, set or dict or an attribute of an object (``v[0]``,
    ``v["a"][0]``, ``v.x.y``); deeper is not searched. IPython's output history does not count."""
    budget = [_SCAN_BUDGET]
    level = [v for k, v in ns.items() if k not in _HISTORY and not _HISTORY_N.match(k)]
    for depth in range(3):  # the variables themselves, then one and two levels down
        if any(v is obj for v in level):
            return True
        if depth == 2:
            return False
        nxt: list = []
        for v in level:
            nxt.extend(_contents(v, budget))
            if budget[0] <= 0:
                return False
        level = nxt
    return False


def _contents(value: Any, budget: list) -> list:
    """The objects a container or a plain object holds (not modules, classes or functions), within ``budget``."""
    if isinstance(value, (str, bytes, int, float, bool, type(None))) or isinstance(value, type):
        return []
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value) if len(value) <= budget[0] else []
    elif isinstance(value, dict):
        items = list(value.values()) if len(value) <= budget[0] else []
    else:
        if type(value).__name__ in ("module", "function", "builtin_function_or_method", "method"):
            return []
        try:  # (a user's proxy object may answer __dict__ in its own way, or raise)
            d = object.__getattribute__(value, "__dict__")
        except Exception:  # noqa: BLE001
            d = None
        items = list(d.values()) if isinstance(d, dict) and len(d) <= budget[0] else []
    budget[0] -= len(items) + 1
    return items
