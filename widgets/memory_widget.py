"""The browser half of ``MemoryTimelineView``: one anywidget whose ES module (``static/memory.js``) draws the payload
Python computed (``memory_model.timeline_payload``) and reports hovers, clicks, Pause and Close back.

The traitlets and messages are written down in ``static/CONTRACT.md`` (section "MemoryWidget"); the view that owns
the widget answers its messages through a weak reference (``OwnedWidget``).
"""

from __future__ import annotations

import traitlets

from ._static import module, styles
from .owned_widget import OwnedWidget


class MemoryWidget(OwnedWidget):
    """Stacked bytes alive per category over a recording's events, one panel per run (two to compare)."""

    _esm = module("memory.js")  # (static/common.js in front: see _static.py)
    _css = styles("memory.css")

    payload = traitlets.Dict().tag(sync=True)
    #: set by the browser: false while scrolled away, in a hidden tab, or the page is hidden
    visible = traitlets.Bool(True).tag(sync=True)
    #: Pause/Resume in the browser: no live redraws while paused
    paused = traitlets.Bool(False).tag(sync=True)
