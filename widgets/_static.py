"""The browser code of the views: each view's ES module and style sheet, with the parts they share put in front.

anywidget loads one ES module per widget, with no bundler and no imports between files, so the helpers every view
uses (``static/common.js``: DOM and SVG builders, buttons, text fitting, visibility reporting) and the theme
tokens every view reads (``static/common.css``) are prepended here, once, instead of being copied into each view.
A view's own code may come in several files, joined the same way into its one module (the timeline's store, paint
and interact parts, then ``timeline.js``, which exports ``render``): they share the module's scope.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).parent / "static"


def module(*names: str) -> str:
    """``static/common.js`` followed by each ``static/<name>`` in order: the source anywidget loads as the view's ES
    module (the last file exports ``render``)."""
    return "".join((STATIC / name).read_text(encoding="utf-8") for name in ("common.js", *names))


def styles(name: str) -> str:
    """``static/common.css`` followed by ``static/<name>`` (the view's own rules come last and win)."""
    return (STATIC / "common.css").read_text(encoding="utf-8") + (STATIC / name).read_text(encoding="utf-8")
