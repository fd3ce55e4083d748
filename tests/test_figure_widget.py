"""FigureWidget (widgets/figure_widget.py) without a browser: where the clickable axes are in the saved picture, what a
click (as the browser reports it: fractions of the picture) lands on, the theme the page reports, and the static PNG.

The geometry is checked against the picture itself: the same drawing saved as a PNG with the same crop, where each
heatmap cell has a colour no other cell has, so its pixels say where it really is.
"""

from __future__ import annotations

import gc
import re
import weakref
from io import BytesIO

import numpy as np
import pytest

pytest.importorskip("anywidget")
pytest.importorskip("matplotlib")

from tinygrad_like.widgets import figure_widget as fw  # noqa: E402
from tinygrad_like.widgets.figure_widget import PALETTES, FigureWidget, Hit, palette, render, themed  # noqa: E402

GRID = np.arange(12.0).reshape(3, 4)  # 3 rows, 4 columns: every cell its own colour


def _draw():
    """A heatmap (left, clickable), a line plot (right, not) and labels all round, so the crop is not the figure."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 2.5), dpi=80, layout="constrained")
    heat, line = fig.subplots(1, 2)
    heat.imshow(GRID, cmap="viridis", interpolation="none")
    heat.set_title("a heatmap")
    heat.set_ylabel("row")
    line.plot([0, 1, 2], [2, 0, 1])
    line.set_xlabel("x")
    fig.suptitle("two axes")
    return fig


def _heatmap(fig):
    return [("heat", fig.axes[0])]


@pytest.fixture
def page_theme():
    """The theme a browser reported last is remembered for new figures: put it back after the test."""
    before = fw._page["theme"]
    yield
    fw._page["theme"] = before


def _cell_centres(png: bytes) -> dict[tuple[int, int], tuple[float, float]]:
    """Where each cell of GRID is in a PNG of _draw(): the centre of the pixels of its colour (fractions)."""
    import matplotlib as mpl
    import matplotlib.image as mpimg

    img = mpimg.imread(BytesIO(png))
    h, w = img.shape[:2]
    norm = mpl.colors.Normalize(GRID.min(), GRID.max())
    out = {}
    for (r, c), v in np.ndenumerate(GRID):
        colour = np.asarray(mpl.colormaps["viridis"](norm(v)))[:3]
        ys, xs = np.nonzero((np.abs(img[..., :3] - colour).max(-1) <= 2.5 / 255) & (img[..., 3] > 0.99))
        assert len(xs) > 50, (r, c, len(xs))
        out[(r, c)] = ((xs.mean() + 0.5) / w, (ys.mean() + 0.5) / h)
    return out


def svg_images(svg: str) -> list[tuple[float, float, float, float]]:
    """The box of every <image> a matplotlib SVG draws (imshow with interpolation "none": the data, one pixel per
    cell, scaled by its transform), as (left, top, right, bottom) fractions of the picture."""
    w_pt, h_pt = (float(v) for v in re.search(r'<svg[^>]* width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    boxes = []
    for tag in re.findall(r"<image [^>]*>", svg):
        matrix = re.search(r'transform="matrix\(([^)]*)\)"', tag)
        if matrix is None:  # (an image matplotlib resampled itself, such as a colorbar's)
            continue
        w, h = (float(re.search(f' {k}="([\\d.]+)"', tag).group(1)) for k in ("width", "height"))
        a, _b, _c, d, e, f = (float(v) for v in matrix.group(1).split())
        boxes.append((e / w_pt, f / h_pt, (e + a * w) / w_pt, (f + d * h) / h_pt))
    return boxes


# ---- where things are ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_a_click_at_a_cell_of_the_saved_picture_finds_that_cell(scale):
    out = render(_draw, "light", _heatmap, fmt="png", scale=scale)
    (region,) = out.regions
    assert region.key == "heat" and region.x == (-0.5, 3.5) and region.y == (-0.5, 2.5)  # imshow: row 0 on top
    for (r, c), (fx, fy) in _cell_centres(out.data).items():
        at = region.to_data(fx, fy)
        assert at is not None and (round(at[0]), round(at[1])) == (c, r)
        # and back: the data point (c, r) is where its pixels are, within half a pixel
        px, py = region.to_picture(c, r)
        assert (px * out.width * scale, py * out.height * scale) == pytest.approx(
            (fx * out.width * scale, fy * out.height * scale), abs=1.0)


def test_the_svg_is_the_png_s_crop_and_its_size_is_the_figure_s_dpi():
    svg, png = render(_draw, "light", _heatmap), render(_draw, "light", _heatmap, fmt="png")
    import matplotlib.image as mpimg

    h, w = mpimg.imread(BytesIO(png.data)).shape[:2]
    assert (w, h) == pytest.approx((png.width, png.height), abs=1.0)
    w_pt, h_pt = (float(v) for v in re.search(r'<svg[^>]* width="([\d.]+)pt" height="([\d.]+)pt"',
                                               svg.data.decode()).groups())
    assert (w_pt / 72 * 80, h_pt / 72 * 80) == pytest.approx((svg.width, svg.height), abs=0.5)
    assert (svg.width, svg.height) == pytest.approx((png.width, png.height), abs=1.0)
    # where the SVG really draws the heatmap (its <image> element) is the region's box
    assert svg_images(svg.data.decode()) == [pytest.approx(svg.regions[0].box, abs=1e-4)]


def test_the_widget_locates_clicks_and_tells_its_owner_weakly():
    class Owner:
        def __init__(self):
            self.hits = []

        def on_figure_click(self, widget, hit):
            self.hits.append(hit)

    owner = Owner()
    w = FigureWidget(owner=owner, alt="demo")
    try:
        w.show(_draw, clickable=_heatmap)
        assert w.figure["regions"] == [{"id": 0, "box": pytest.approx(list(w.regions[0].box), abs=1e-4)}]
        left, top, right, bottom = w.regions[0].box
        fx, fy = left + (right - left) * 3.5 / 4, top + (bottom - top) * 0.5 / 3  # row 0, column 3
        fw._on_message(w, {"type": "click", "x": fx, "y": fy}, [])  # as figure.js sends it
        (hit,) = owner.hits
        assert isinstance(hit, Hit) and hit.key == "heat" and (round(hit.x), round(hit.y)) == (3, 0)
        for outside in [(0.001, 0.001), (0.75, 0.5), (left - 0.01, (top + bottom) / 2)]:  # corner, line plot, label
            fw._on_message(w, {"type": "click", "x": outside[0], "y": outside[1]}, [])
        fw._on_message(w, {"type": "click", "x": "nan?"}, [])  # malformed: ignored
        assert len(owner.hits) == 1
        ref = weakref.ref(owner)
        del owner
        gc.collect()
        assert ref() is None  # the widget does not keep its owner alive
        assert w.click(fx, fy) == hit  # and a click after the owner is gone does no harm
    finally:
        w.close()


def test_marks_are_data_rectangles_that_follow_a_redraw():
    w = FigureWidget()
    try:
        w.show(_draw, clickable=_heatmap)
        w.set_marks([("heat", (0.5, -0.5, 1.5, 0.5)), ("nowhere", (0, 0, 1, 1))])  # row 0, column 1; unknown key
        (box,) = w.marks
        left, top, right, bottom = w.regions[0].box
        assert box == pytest.approx([left + (right - left) / 4, top, left + (right - left) / 2,
                                     top + (bottom - top) / 3], abs=1e-4)
        w.theme = "dark"
        assert w.marks == [pytest.approx(box, abs=2e-3)]
        w.clear()
        assert w.figure == {} and w.marks == [] and w.regions == [] and w.png() is None
    finally:
        w.close()


# ---- themes ----------------------------------------------------------------------------------------------------------
def test_the_theme_changes_the_colours_of_the_picture(page_theme):
    w = FigureWidget()
    try:
        w.show(_draw)
        light = w.figure["svg"]
        assert w.figure["theme"] == "light" and w.draws == 1
        assert PALETTES["light"]["fg"] in light and PALETTES["dark"]["fg"] not in light
        w.theme = "dark"
        dark = w.figure["svg"]
        assert w.figure["theme"] == "dark" and w.draws == 2 and w.figure["ink"] == PALETTES["dark"]["fg"]
        assert PALETTES["dark"]["fg"] in dark and PALETTES["light"]["fg"] not in dark
        assert PALETTES["dark"]["cycle"][0] in dark  # the line: the dark theme's first colour
        # transparent: the page shows through (no white or black rectangle behind the figure)
        assert 'style="fill: none"' in dark.split("<g id=\"axes_1\">")[0]
        assert fw._page["theme"] == "light"  # set from Python: not a page's report
    finally:
        w.close()


def test_the_page_s_report_draws_again_and_starts_the_next_figures_in_it(page_theme):
    w = FigureWidget()
    try:
        w.show(_draw)
        fw._on_message(w, {"type": "theme", "theme": "dark"}, [])  # as figure.js sends it
        assert w.theme == "dark" and w.figure["theme"] == "dark" and w.draws == 2
        fw._on_message(w, {"type": "theme", "theme": "sepia"}, [])  # not a theme: ignored
        assert w.theme == "dark" and w.draws == 2
        later = FigureWidget()
        assert later.theme == "dark"  # drawn dark at once, even before its own view reports
        later.close()
    finally:
        w.close()


def test_palette_and_rc_inside_themed_only():
    import matplotlib as mpl

    assert palette() is PALETTES["light"]
    with themed("dark") as p:
        assert p is PALETTES["dark"] and palette() is p
        assert mpl.rcParams["text.color"] == p["fg"] and mpl.rcParams["axes.facecolor"] == "none"
        with themed("light"):
            assert palette() is PALETTES["light"]
        assert palette() is p
    assert palette() is PALETTES["light"] and mpl.rcParams["text.color"] == "black"
    with pytest.raises(ValueError, match="one of"):
        with themed("blue"):
            pass


def test_every_theme_s_text_reads_on_its_page():
    """WCAG contrast of each palette's text colours against the page they are drawn on (4.5:1 for text)."""
    def lum(hex_colour):
        rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    for name, p in PALETTES.items():
        for key in ("fg", "muted", "ok", "bad", "loss"):
            hi, lo = sorted([lum(p[key]), lum(p["bg"])], reverse=True)
            assert (hi + 0.05) / (lo + 0.05) >= 4.5, (name, key, p[key])


# ---- the static picture ----------------------------------------------------------------------------------------------
def test_the_static_png_is_light_on_white_at_twice_the_dpi(page_theme):
    import matplotlib.image as mpimg

    w = FigureWidget(alt="demo")
    try:
        w.show(_draw)
        w.theme = "dark"  # the live picture is dark; the saved notebook's stays light, for any reader
        img = mpimg.imread(BytesIO(w.png()))
        assert img.shape[1] == pytest.approx(2 * w.figure["width"], abs=2)
        assert np.allclose(img[0, 0], [1, 1, 1, 1])  # opaque white
        bundle = w._repr_mimebundle_()
        assert bundle["image/png"] and bundle["text/plain"] == "<FigureWidget: demo>"
        assert "application/vnd.jupyter.widget-view+json" in bundle
    finally:
        w.close()


def test_the_same_drawing_gives_the_same_svg():
    """Stable ids (svg.hashsalt) and no date: a redraw of an unchanged figure sends nothing new."""
    assert render(_draw).data == render(_draw).data
