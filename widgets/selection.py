"""One selection shared by the open views: click a kernel bar in a ``KernelTimeline`` and an open ``GraphView``
(or ``BackwardStepper``) that shows the graph node which launched it highlights that node.

A tiny hub, no widget import: views ``register(view)`` and implement ``on_shared_select(node)``; any view calls
``select(node, source=view)`` and every *other* registered view is told. The hub holds its views in a
``weakref.WeakSet`` and the last selected node through a weak reference, so it never keeps a closed view, its
widgets or a graph alive (a view that is garbage simply drops out; ``unregister`` at ``close()`` is tidier).

>>> class Probe:
...     got = None
...     def on_shared_select(self, node):
...         self.got = node
>>> a, b = Probe(), Probe()
>>> _ = register(a), register(b)
>>> class Node: pass
>>> n = Node()
>>> select(n, source=a)
1
>>> a.got is None and b.got is n and current() is n
True
>>> unregister(a); unregister(b)
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

__all__ = ["register", "unregister", "select", "current", "registered", "StorageSelection"]


class StorageSelection:
    """What a view selects to name a storage (the memory timeline's rows): the storage's ``id``. Views that draw
    storages (``StorageView``) show it; views that draw graph nodes ignore it."""

    __slots__ = ("storage_id", "__weakref__")

    def __init__(self, storage_id: int) -> None:
        self.storage_id = storage_id

    def __repr__(self) -> str:
        return f"StorageSelection({self.storage_id})"

#: every view that wants to hear about selections (weakly: a view that is garbage drops out by itself)
_VIEWS: weakref.WeakSet = weakref.WeakSet()
#: the last selected node (a weak reference; None before any selection or once the node is garbage)
_current: weakref.ref | None = None


def register(view: Any) -> Any:
    """Hear about selections from now on: the hub calls ``view.on_shared_select(node)``. Returns ``view``."""
    _VIEWS.add(view)
    return view


def unregister(view: Any) -> None:
    """Stop hearing about selections (what ``close()`` calls); unknown views are ignored."""
    _VIEWS.discard(view)


def registered() -> list:
    """The views registered now (strong references only for the caller's use)."""
    return list(_VIEWS)


def current() -> Any:
    """The node selected last, or None (also once that node has been garbage collected)."""
    return None if _current is None else _current()


def select(node: Any, source: Any = None) -> int:
    """Tell every registered view except ``source`` that ``node`` is selected; returns how many were told.

    A view that raises does not stop the others (its error goes to stderr: a broken view must not break the
    notebook)."""
    global _current
    try:
        _current = None if node is None else weakref.ref(node)
    except TypeError:  # an object without weak-reference support: remember nothing rather than keep it alive
        _current = None
    told = 0
    for view in list(_VIEWS):
        if view is source:
            continue
        fn = getattr(view, "on_shared_select", None)
        if fn is None:
            continue
        try:
            fn(node)
            told += 1
        except Exception as exc:  # noqa: BLE001
            print(f"tinygrad_like.widgets: {type(view).__name__} failed to show the selection: {exc}",
                  file=sys.stderr)
    return told
