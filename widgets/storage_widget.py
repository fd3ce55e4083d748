"""The browser half of ``StorageView``: one anywidget whose ES module (``static/storage.js``) draws the payload
Python computed (``storage_model.storage_payload``) and reports filters, Pause/Resume, Close and its own
visibility back.

The traitlets and messages are written down in ``static/CONTRACT.md`` (section "StorageWidget"). The widget
holds no logic: the view that owns it answers its messages and trait changes through a weak reference and
module-level callbacks, so a closed view can be garbage collected while ipywidgets still keeps the widget in
its registry.
"""

from __future__ import annotations

import traitlets

from ._static import module, styles
from .owned_widget import OwnedWidget


class StorageWidget(OwnedWidget):
    """SVG strips of storages with their views, host/device lanes, transfer arrows and version badges."""

    _esm = module("storage.js")  # (static/common.js in front: see _static.py)
    _css = styles("storage.css")

    payload = traitlets.Dict().tag(sync=True)
    filter_text = traitlets.Unicode("").tag(sync=True)
    filter_device = traitlets.Unicode("").tag(sync=True)
    filter_dtype = traitlets.Unicode("").tag(sync=True)
    show_other = traitlets.Bool(False).tag(sync=True)
    #: set by the browser: false while scrolled away, in a hidden tab, or the page is hidden
    visible = traitlets.Bool(True).tag(sync=True)
    #: Pause/Resume in the browser: no live redraws while paused
    paused = traitlets.Bool(False).tag(sync=True)
    height = traitlets.Int(560).tag(sync=True)
    #: the storage id another view selected (a memory timeline's row), -1 for none: outlined and scrolled to
    selected = traitlets.Int(-1).tag(sync=True)

    def __init__(self, owner, **kwargs) -> None:
        super().__init__(owner, **kwargs)  # messages ({"type": "close"}, {"type": "refresh"}) go to the view
        # (visible and paused are observed by the View base class, which redraws a stale view when shown again)
        self.observe_for_owner("on_widget_change", ["filter_text", "filter_device", "filter_dtype", "show_other"],
                               pass_="name")
