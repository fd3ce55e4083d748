"""The browser half of ``KernelTimeline``: one anywidget whose ES module (``static/timeline.js`` with its parts
``timeline_store.js``, ``timeline_paint.js`` and ``timeline_interact.js``) draws the launches on a ``<canvas>`` and
reports clicks, its visibility and the Pause / Close buttons back.

Traitlets (``model.get(name)`` in JS):

- ``data``: a full snapshot ``{"meta": {...}, "buffers": [column buffers]}`` (the binary buffers travel as
  such, not as JSON); ``meta`` as :meth:`kernel_model.LaunchStore.chunk` makes it plus ``rev`` and ``cells``
  (cell labels, indexed by the ``cell`` column). Launches after it come as custom messages
  ``{"type": "append", "rev": rev, "base": seq, ...}`` with the same buffers; a view whose rows do not end at
  ``base`` (or whose ``rev`` differs) asks for ``{"type": "sync"}`` and gets a new snapshot.
- ``tables``: HTML of the header line and of the kernel, cell and compile tables (escaped by Python).
- ``selected`` (two-way): the sequence number of the clicked launch, -1 for none.
- ``visible`` (set by JS: an IntersectionObserver on the root and the page's visibility) and ``paused``
  (the Pause / Resume button): the Python view skips live redraws while paused or not visible.
- ``height``: the canvas height in CSS px.

Messages JS -> Python: ``{"type": "hello", "rev", "end"}`` (a view rendered; Python sends a snapshot if the
view lacks anything), ``{"type": "sync"}``, ``{"type": "close"}`` (the Close button), ``{"type": "clear"}``.

As in ``graph_widget``, the widget holds its view only through a weak reference, and its callbacks are module
functions, so a closed view is garbage even though ipywidgets keeps the widget in its registry until closed.
"""

from __future__ import annotations

import traitlets

from ._static import module, styles
from .owned_widget import OwnedWidget


class TimelineWidget(OwnedWidget):
    """Canvas timeline of kernel launches: zoom, pan, hover tooltip, click to select, Pause / Close."""

    # (static/common.js in front, then the timeline's parts, then timeline.js, which exports render: see _static.py)
    _esm = module("timeline_store.js", "timeline_paint.js", "timeline_interact.js", "timeline.js")
    _css = styles("timeline.css")

    data = traitlets.Dict().tag(sync=True)
    tables = traitlets.Dict().tag(sync=True)
    selected = traitlets.Int(-1).tag(sync=True)
    visible = traitlets.Bool(True).tag(sync=True)
    paused = traitlets.Bool(False).tag(sync=True)
    height = traitlets.Int(472).tag(sync=True)

    def __init__(self, owner, **kwargs) -> None:
        super().__init__(owner, **kwargs)  # messages (hello, sync, close, clear) go to the view
        self.observe_for_owner("on_launch_selected", "selected")
