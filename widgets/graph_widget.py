"""The browser half of the graph views: one anywidget whose ES module (``static/graph.js``) draws the payload
Python computed (``graph_model.graph_payload``) and reports clicks, steps and searches back.

The traitlets and messages are written down in ``static/CONTRACT.md``. The widget itself holds no logic: the
view that owns it (``GraphView``, ``BackwardStepper``) answers its messages, through a weak reference so a
closed view can be garbage collected while ipywidgets still keeps the widget in its registry.
"""

from __future__ import annotations

import numbers

import orjson
import traitlets

from ._static import module, styles
from .owned_widget import OwnedWidget


def _plain(value):
    """What json cannot encode by itself: NumPy numbers (as Python numbers), anything else as its text."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)


def _graph_to_json(value: dict, widget) -> memoryview:
    """The graph payload as one binary buffer of UTF-8 JSON (graph.js decodes it). Sent as a dict, ipywidgets walks
    every dict and list in it looking for binary buffers before the message is encoded: 66,000 calls and about as
    long as the encoding itself on a 4,000-box graph. orjson encodes those 2 MB in 7 ms (the json module: 45)."""
    return memoryview(orjson.dumps(value, default=_plain, option=_ORJSON_OPTIONS))


_ORJSON_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


class GraphWidget(OwnedWidget):
    """SVG graph with zoom, pan, hover, click-to-select, search, group folding, backward stepping, Pause and
    Close."""

    _esm = module("graph.js")  # (static/common.js in front: see _static.py)
    _css = styles("graph.css")

    graph = traitlets.Dict().tag(sync=True, to_json=_graph_to_json)  # (a dict here, UTF-8 JSON bytes on the wire)
    state = traitlets.Dict({"cursor": 0, "steps": [], "filled": [], "error": None, "done": False,
                            "total": 0}).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    details = traitlets.Dict().tag(sync=True)
    stepper = traitlets.Bool(False).tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(560).tag(sync=True)
    #: shown by the Pause/Resume button, set by the view's pause()/resume() (the button sends "pause"/"resume");
    #: the View base class observes it: no live redraws while paused, one redraw on resume if something changed
    paused = traitlets.Bool(False).tag(sync=True)

    def __init__(self, owner, **kwargs) -> None:
        # messages (toggle, step, back, run, reset, reveal, fold_to_fit, pause, resume, close) go to the view
        super().__init__(owner, **kwargs)
        self.observe_for_owner("on_selected", "selected")
