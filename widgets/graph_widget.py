"""The browser half of the graph views: one anywidget whose ES module (``static/graph.js``) draws the payload
Python computed (``graph_model.graph_payload``) and reports clicks, steps and searches back.

The traitlets and messages are written down in ``static/CONTRACT.md``. The widget itself holds no logic: the
view that owns it (``GraphView``, ``BackwardStepper``) answers its messages, through a weak reference so a
closed view can be garbage collected while ipywidgets still keeps the widget in its registry.
"""

from __future__ import annotations

import weakref
from pathlib import Path

import anywidget
import traitlets

STATIC = Path(__file__).parent / "static"


class GraphWidget(anywidget.AnyWidget):
    """SVG graph with zoom, pan, hover, click-to-select, search, group folding and backward stepping."""

    _esm = STATIC / "graph.js"
    _css = STATIC / "graph.css"

    graph = traitlets.Dict().tag(sync=True)
    state = traitlets.Dict({"cursor": 0, "steps": [], "filled": [], "error": None, "done": False,
                            "total": 0}).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    details = traitlets.Dict().tag(sync=True)
    stepper = traitlets.Bool(False).tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(560).tag(sync=True)

    def __init__(self, owner, **kwargs) -> None:
        super().__init__(**kwargs)
        self._owner = weakref.ref(owner)
        self.on_msg(_forward)
        self.observe(_selected_changed, names="selected")


def _forward(widget: GraphWidget, content, buffers) -> None:
    """A message from the browser (toggle, step, back, run, reset, reveal) goes to the owning view."""
    owner = widget._owner()
    if owner is not None and isinstance(content, dict):
        owner.on_message(content)


def _selected_changed(change) -> None:
    owner = change["owner"]._owner()
    if owner is not None:
        owner.on_selected(change["new"])
