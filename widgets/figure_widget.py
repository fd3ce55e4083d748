"""``FigureWidget``: a matplotlib figure in the notebook, drawn as SVG in the page's theme, with clickable axes.

Why not a PNG in an ``Output``: a PNG is blurry when zoomed or on a high-density screen, it is drawn once in light
colours that glare (and whose dark text vanishes) in JupyterLab's dark theme, and nothing in it can be clicked.
Here Python keeps the *drawing function* (``draw() -> Figure``) rather than the picture, and draws again when the
page's theme changes. The browser code (``static/figure.js``) shows the SVG, reports the theme
(``body[data-jp-theme-light]``, watched with a MutationObserver) and reports clicks as fractions of the picture;
Python maps a click to an axes and its data coordinates (it saved the picture, so it knows exactly where each axes
is in it). The contract is in ``static/CONTRACT.md`` (section "FigureWidget").

Drawing functions read their theme colours from :func:`palette` (the theme being drawn, light outside
:func:`themed`), and matplotlib's own colours (text, spines, ticks, the colour cycle) come from the rcParams that
:func:`themed` sets. Until the browser reports a theme (nbval, nbconvert, plain Python) figures are light.

>>> from matplotlib.figure import Figure
>>> def draw():
...     fig = Figure(figsize=(2, 2), dpi=80)
...     fig.subplots().imshow([[0, 1, 2], [3, 4, 5]])
...     return fig
>>> shown = FigureWidget()
>>> shown.show(draw, clickable=lambda fig: [("heatmap", fig.axes[0])])
>>> shown.figure["theme"], shown.figure["svg"].startswith("<?xml")
('light', True)
>>> left, top, right, bottom = shown.regions[0].box      # where the axes is, in fractions of the picture
>>> hit = shown.locate(left + (right - left) * 5 / 6, top + (bottom - top) / 4)   # the middle of row 0, column 2
>>> hit.key, round(hit.x), round(hit.y)
('heatmap', 2, 0)
>>> shown.locate(0.0, 0.0) is None                        # the corner is outside every axes
True
>>> shown.close()
"""

from __future__ import annotations

import io
import weakref
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import anywidget
import traitlets

from ._static import module, styles
from ._static_picture import add_png

__all__ = ["FigureWidget", "Region", "Hit", "palette", "themed", "render", "PALETTES", "THEMES"]

THEMES = ("light", "dark")

#: the colours a drawing uses for each theme; text at least 4.5:1 against JupyterLab's page (white, #111111)
PALETTES: dict[str, dict[str, Any]] = {
    "light": {
        "fg": "#212121",  # text (JupyterLab's --jp-ui-font-color1 on white)
        "muted": "#5f5f5f",  # ticks, tick labels, spines, reference lines
        "grid": "#c8c8c8",  # faint guides (epoch lines)
        "bg": "#ffffff",  # the page behind the figure (for label boxes drawn over lines)
        "ok": "#2e7d32", "bad": "#c62828",  # pass and fail text
        "mark": "#d50000",  # boxes around failing cells
        "loss": "#4c78a8",
        "cycle": ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf"),
        "metrics": ("#e45756", "#54a24b", "#f58518", "#b279a2", "#72b7b2", "#9d755d"),
        "diverging": "RdBu_r",  # white at 0: zero looks like the page
        "sequential": "magma_r",  # pale at 0
    },
    "dark": {
        "fg": "#e0e0e0",
        "muted": "#adadad",
        "grid": "#4a4a4a",
        "bg": "#111111",
        "ok": "#81c784", "bad": "#ff8a80",
        "mark": "#ff5252",
        "loss": "#7aa7d9",
        "cycle": ("#5fa2dd", "#ff9e4a", "#67bf5c", "#ed665d", "#ad8bc9", "#c49c94", "#ed97ca", "#a2a2a2",
                  "#cdcc5d", "#6dccda"),
        "metrics": ("#ff8a80", "#8fd18a", "#ffb870", "#d2a6f0", "#8fd6d1", "#c9a38b"),
        "diverging": "berlin",  # dark at 0: zero looks like the page, as RdBu_r's white does in the light theme
        "sequential": "magma",  # dark at 0
    },
}

#: padding (inches) around the drawn content of the saved picture, as bbox_inches="tight" adds
PAD_INCHES = 0.08

_drawing: list[str] = []  # the themes being drawn (a stack: themed() may nest)
_page = {"theme": "light"}  # the theme a browser reported last: new figures start in it


def palette() -> dict[str, Any]:
    """The colours of the theme being drawn (:func:`themed`); the light ones outside it."""
    return PALETTES[_drawing[-1] if _drawing else "light"]


def _rc(p: dict[str, Any]) -> dict[str, Any]:
    from cycler import cycler

    return {"text.color": p["fg"], "axes.labelcolor": p["fg"], "axes.titlecolor": p["fg"],
            "axes.edgecolor": p["muted"], "xtick.color": p["muted"], "ytick.color": p["muted"],
            "xtick.labelcolor": p["fg"], "ytick.labelcolor": p["fg"], "grid.color": p["grid"],
            "legend.labelcolor": p["fg"], "legend.facecolor": p["bg"], "legend.edgecolor": p["grid"],
            "lines.color": p["fg"], "patch.edgecolor": p["fg"], "axes.prop_cycle": cycler(color=list(p["cycle"])),
            # transparent: the page (light or dark) shows through; the static PNG gets the light page's white
            "figure.facecolor": "none", "axes.facecolor": "none", "savefig.facecolor": "none",
            "svg.fonttype": "path",  # the glyphs matplotlib measured, whatever fonts the browser has
            "svg.hashsalt": "tinygrad_like"}  # stable ids: the same figure gives the same SVG, and is not resent


@contextmanager
def themed(theme: str = "light") -> Iterator[dict[str, Any]]:
    """Draw (and save) inside this to get ``theme``'s colours: matplotlib's rcParams, and :func:`palette` for the
    colours a drawing picks itself. Saving must happen inside too: colours like ``"C0"`` are resolved at draw time."""
    import matplotlib

    if theme not in PALETTES:
        raise ValueError(f"themed: theme must be one of {THEMES}, got {theme!r}")
    _drawing.append(theme)
    try:
        with matplotlib.rc_context(_rc(PALETTES[theme])):
            yield PALETTES[theme]
    finally:
        _drawing.pop()


# ---- where the axes are in the saved picture ------------------------------------------------------------------
class Hit(NamedTuple):
    """A click inside a clickable axes: its key and the data coordinates clicked."""

    key: Hashable
    x: float
    y: float


@dataclass(frozen=True)
class Region:
    """A clickable axes in the saved picture. ``box`` is (left, top, right, bottom) in fractions of the picture,
    from its top-left corner (as the browser measures a click); ``x`` holds the data x at the left and right edges,
    ``y`` the data y at the top and bottom edges (for ``imshow``, -0.5 at the top: rows grow downwards). Linear axes
    only (images, heatmaps)."""

    key: Hashable
    box: tuple[float, float, float, float]
    x: tuple[float, float]
    y: tuple[float, float]

    def to_data(self, fx: float, fy: float) -> tuple[float, float] | None:
        """The data coordinates at picture fractions (fx, fy), or None outside the axes."""
        left, top, right, bottom = self.box
        if not (left <= fx <= right and top <= fy <= bottom) or right <= left or bottom <= top:
            return None
        u, v = (fx - left) / (right - left), (fy - top) / (bottom - top)
        return float(self.x[0] + u * (self.x[1] - self.x[0])), float(self.y[0] + v * (self.y[1] - self.y[0]))

    def to_picture(self, x: float, y: float) -> tuple[float, float]:
        """Picture fractions (from the top-left corner) of the data point (x, y)."""
        left, top, right, bottom = self.box
        u = (x - self.x[0]) / (self.x[1] - self.x[0])
        v = (y - self.y[0]) / (self.y[1] - self.y[0])
        return left + u * (right - left), top + v * (bottom - top)


@dataclass
class Rendered:
    """A saved figure: the file's bytes, its size in CSS px at the figure's dpi, and its clickable regions."""

    data: bytes
    width: float
    height: float
    regions: list[Region]


def render(draw: Callable[[], Any], theme: str = "light", clickable=None, fmt: str = "svg", *, scale: float = 1.0,
           facecolor: str = "none") -> Rendered:
    """Draw ``draw()`` in ``theme`` and save it as ``fmt`` (``"svg"`` or ``"png"``, at ``scale`` times the figure's
    dpi), cropped to what is drawn plus :data:`PAD_INCHES`. ``clickable(fig)`` lists ``(key, axes)`` pairs; their
    regions are measured after saving, from the same crop box, so they are exact for this picture.
    """
    with themed(theme):
        fig = draw()
        axes = list(clickable(fig)) if clickable is not None else []
        # lay out (constrained layout, equal aspects) now, so the crop box is measured on the final layout;
        # bbox_inches="tight" would crop the same way, but without telling us where
        fig.draw_without_rendering()
        box = fig.get_tightbbox().padded(PAD_INCHES)
        buf = io.BytesIO()
        extra = {"metadata": {"Date": None}} if fmt == "svg" else {}
        fig.savefig(buf, format=fmt, dpi=fig.dpi * scale, bbox_inches=box, facecolor=facecolor, **extra)
    width_in, height_in = fig.get_size_inches()
    regions = []
    for key, ax in axes:
        pos = ax.get_position()  # figure fractions, bottom-left origin, as laid out for the saved picture
        left = (pos.x0 * width_in - box.x0) / box.width
        right = (pos.x1 * width_in - box.x0) / box.width
        top = (box.y1 - pos.y1 * height_in) / box.height
        bottom = (box.y1 - pos.y0 * height_in) / box.height
        x0, x1 = ax.get_xlim()
        y_bottom, y_top = ax.get_ylim()
        regions.append(Region(key, (float(left), float(top), float(right), float(bottom)), (float(x0), float(x1)),
                              (float(y_top), float(y_bottom))))
    return Rendered(buf.getvalue(), float(box.width * fig.dpi), float(box.height * fig.dpi), regions)


# ---- the widget -------------------------------------------------------------------------------------------------
class FigureWidget(anywidget.AnyWidget):
    """A figure drawn by ``draw()`` (see :meth:`show`), as SVG, in the theme the page reports.

    ``owner`` (optional, held weakly so a dropped view is freed) hears clicks inside clickable axes as
    ``owner.on_figure_click(widget, hit)``. ``draws`` counts the renders (the first one, and one per theme change).
    """

    _esm = module("figure.js")  # (static/common.js in front: see _static.py)
    _css = styles("figure.css")

    #: the picture: {"svg", "width", "height" (CSS px), "theme" (drawn in), "ink" (its text colour),
    #: "regions": [{"id", "box": [left, top, right, bottom]}]}; {} when nothing is shown
    figure = traitlets.Dict().tag(sync=True)
    #: boxes [left, top, right, bottom] (picture fractions) outlined over the picture: the selected cell(s)
    marks = traitlets.List().tag(sync=True)
    #: the theme to draw in; the browser reports the page's (a message), Python may set it too
    theme = traitlets.Enum(THEMES, default_value="light").tag(sync=True)
    #: the picture's text alternative (and tooltip)
    alt = traitlets.Unicode("").tag(sync=True)

    def __init__(self, owner=None, alt: str = "", **kwargs) -> None:
        super().__init__(alt=alt, theme=_page["theme"], **kwargs)
        self._owner = None if owner is None else weakref.ref(owner)
        self._draw: Callable[[], Any] | None = None
        self._clickable = None
        self._marks: list[tuple[Hashable, tuple[float, float, float, float]]] = []
        self.regions: list[Region] = []
        self.last_hit: Hit | None = None
        self.draws = 0
        self.on_msg(_on_message)
        self.observe(_on_theme, names="theme")

    # ---- what is shown ----------------------------------------------------------------------------------------
    def show(self, draw: Callable[[], Any], clickable=None) -> None:
        """Show the figure ``draw()`` returns (drawn now, and again whenever the theme changes). ``clickable(fig)``
        lists the ``(key, axes)`` a click may land in (linear axes: images, heatmaps)."""
        self._draw, self._clickable = draw, clickable
        self.redraw()

    def clear(self) -> None:
        """Show nothing."""
        self._draw = self._clickable = None
        self._marks, self.regions = [], []
        self.figure, self.marks = {}, []

    def redraw(self) -> None:
        """Draw again (in the current theme)."""
        if self._draw is None:
            return
        out = render(self._draw, self.theme, self._clickable)
        self.regions = out.regions
        self.draws += 1
        self.figure = {"svg": out.data.decode("utf-8"), "width": round(out.width, 1), "height": round(out.height, 1),
                       "theme": self.theme, "ink": PALETTES[self.theme]["fg"],
                       "regions": [{"id": i, "box": [round(v, 5) for v in r.box]}
                                   for i, r in enumerate(self.regions)]}
        self._place_marks()

    def png(self, scale: float = 2.0) -> bytes | None:
        """The figure as a light PNG on white, ``scale`` times its dpi: the static picture for saved notebooks and
        nbconvert (None when nothing is shown)."""
        if self._draw is None:
            return None
        return render(self._draw, "light", fmt="png", scale=scale, facecolor="white").data

    # ---- clicks and marks -------------------------------------------------------------------------------------
    def locate(self, fx: float, fy: float) -> Hit | None:
        """The clickable axes under picture fractions (fx, fy) (from the top-left corner) and the data coordinates
        there; None outside every clickable axes."""
        for region in self.regions:
            at = region.to_data(fx, fy)
            if at is not None:
                return Hit(region.key, *at)
        return None

    def click(self, fx: float, fy: float) -> Hit | None:
        """What a click at picture fractions (fx, fy) does: locate it and tell the owner (nothing outside)."""
        hit = self.locate(fx, fy)
        if hit is None:
            return None
        self.last_hit = hit
        owner = self._owner() if self._owner is not None else None
        if owner is not None and hasattr(owner, "on_figure_click"):
            owner.on_figure_click(self, hit)
        return hit

    def picture_box(self, key: Hashable, x0: float, y0: float, x1: float, y1: float) -> list[float] | None:
        """The data rectangle (x0, y0)-(x1, y1) of the axes ``key`` as [left, top, right, bottom] picture
        fractions; None when no clickable axes has that key."""
        region = next((r for r in self.regions if r.key == key), None)
        if region is None:
            return None
        (ax, ay), (bx, by) = region.to_picture(x0, y0), region.to_picture(x1, y1)
        return [round(float(v), 5) for v in (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))]

    def set_marks(self, marks: list[tuple[Hashable, tuple[float, float, float, float]]]) -> None:
        """Outline these data rectangles, ``(key, (x0, y0, x1, y1))`` each, over the picture (kept in data
        coordinates, so they follow a redraw)."""
        self._marks = list(marks)
        self._place_marks()

    def _place_marks(self) -> None:
        boxes = [self.picture_box(key, *rect) for key, rect in self._marks]
        self.marks = [b for b in boxes if b is not None]

    # ---- the page's theme -------------------------------------------------------------------------------------
    def report_theme(self, theme: str) -> None:
        """The browser says the page is ``theme``: draw in it, and start the next figures in it too."""
        if theme not in THEMES:
            return
        _page["theme"] = theme
        self.theme = theme

    def add_static_png(self, data: dict) -> dict:
        """Put the static picture (light, on white: what saved notebooks, nbconvert and GitHub show) into a mime
        bundle, if there is a figure."""
        return add_png(data, self.png())

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs) or {}
        if isinstance(data, tuple):
            data = data[0]
        self.add_static_png(data)
        data["text/plain"] = f"<FigureWidget: {self.alt}>" if self.alt else "<FigureWidget>"
        return data


def _on_message(widget: FigureWidget, content, buffers) -> None:
    """Messages from figure.js: ``{"type": "theme", "theme"}`` and ``{"type": "click", "x", "y"}``."""
    if not isinstance(content, dict):
        return
    kind = content.get("type")
    if kind == "theme":
        widget.report_theme(content.get("theme"))
    elif kind == "click":
        try:
            fx, fy = float(content["x"]), float(content["y"])
        except (KeyError, TypeError, ValueError):
            return
        widget.click(fx, fy)


def _on_theme(change) -> None:
    change["owner"].redraw()
