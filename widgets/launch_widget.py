"""The browser half of ``LaunchView``: one anywidget whose ES module (``static/launch.js``) draws the payload Python
computed (``launch_model.launch_payload``) on canvases and reports hovers, choices and Close back.

The traitlets and messages are written down in ``static/CONTRACT.md`` (section "LaunchWidget"). The widget holds no
logic: the view that owns it answers its messages through a weak reference (``OwnedWidget``).
"""

from __future__ import annotations

import traitlets

from ._static import module, styles
from .owned_widget import OwnedWidget


class LaunchWidget(OwnedWidget):
    """One launch: who wrote each output element, the grid of blocks and a block's warps, the traced block's shared
    memory phase by phase, and the memory behaviour of each line."""

    _esm = module("launch.js")  # (static/common.js in front: see _static.py)
    _css = styles("launch.css")

    payload = traitlets.Dict().tag(sync=True)
    #: set by the browser: false while scrolled away, in a hidden tab, or the page is hidden
    visible = traitlets.Bool(True).tag(sync=True)
