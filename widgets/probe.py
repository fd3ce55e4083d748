"""``VisibilityProbe``: a widget that draws nothing and reports whether the view it sits in can be seen.

The anywidget views report their own visibility (a synced ``visible`` trait set by an IntersectionObserver in their
browser code). Views built from plain ipywidgets (the training monitor, the gradcheck view, the Dashboard) carry a
probe in their controls bar instead (``View._controls``), so they too skip live redraws while scrolled away, in a
hidden tab or a collapsed output. Without a front-end (tests, scripts) the probe stays ``visible=True``.
"""

from __future__ import annotations

import anywidget
import traitlets

from ._static import module


class VisibilityProbe(anywidget.AnyWidget):
    _esm = module("probe.js")

    visible = traitlets.Bool(True).tag(sync=True)
