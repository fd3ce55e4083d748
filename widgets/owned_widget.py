"""``OwnedWidget``: the base of the views' anywidgets, which reach their view (the *owner*) only weakly.

ipywidgets keeps every widget, and every callback a widget holds, in a global registry until the widget is
closed. A widget holding its view strongly (a bound method, a closure over the view) would keep the view, its graph
and its model alive for the whole session. So the widget keeps a weak reference, and its callbacks are module
functions that look the owner up and do nothing once it is gone or closed: a closed or dropped view is garbage
collected (and a dropped view closes this widget: see ``_base.View``).
"""

from __future__ import annotations

import weakref

import anywidget

from .kernel_cells import acting_for


class OwnedWidget(anywidget.AnyWidget):
    """An anywidget whose browser messages (dicts) go to ``owner.on_message(content)``."""

    def __init__(self, owner, **kwargs) -> None:
        super().__init__(**kwargs)
        self._owner = weakref.ref(owner)
        self.on_msg(_forward)

    def observe_for_owner(self, method: str, names, pass_: str = "new") -> None:
        """Call ``owner.<method>(change[pass_])`` when one of the traits ``names`` changes (``pass_``: "new" for the
        value, "name" for the trait's name)."""
        self.observe(_OwnerCall(method, pass_), names=names)


def _forward(widget: OwnedWidget, content, buffers) -> None:
    owner = widget._owner()
    if owner is not None and isinstance(content, dict) and "_closed_as" not in owner.__dict__:
        with acting_for(owner):  # (a click's kernels, between cells: filed under the cell that made the view)
            owner.on_message(content)


class _OwnerCall:
    """A trait observer that calls a method of the widget's owner, holding neither (only names)."""

    __slots__ = ("method", "key")

    def __init__(self, method: str, key: str) -> None:
        self.method, self.key = method, key

    def __call__(self, change) -> None:
        owner = change["owner"]._owner()
        if owner is not None and "_closed_as" not in owner.__dict__:
            getattr(owner, self.method)(change[self.key])
