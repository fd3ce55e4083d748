"""The storage picture as a PNG: the static picture a saved notebook shows where no kernel runs the widget
(nbconvert, GitHub). Drawn with matplotlib from the payload the browser draws (``storage_model.storage_payload``).
"""

from __future__ import annotations

__all__ = ["storage_png", "STATIC_BLOCKS"]

#: lane colours of the static picture (the browser takes its own from the theme), one meaning each as in the
#: browser's legend: the only copy (grey), in sync (green), host newer (orange), device newer (blue)
_STATIC_COLORS = {"cpu": "#e4e4e4", "sync": "#b7dfb9", "host-newer": "#fdd9a8", "device-newer": "#b3d4f5",
                  "device-only": "#e4e4e4"}
#: a view's reads (purple: no state uses it)
_VIEW_FACE, _VIEW_EDGE = "#e3c6ea", "#7b1f8c"
#: storages drawn at most in the static picture
STATIC_BLOCKS = 12


def storage_png(payload: dict, dpi: int = 80) -> bytes:
    """The module rows and the first :data:`STATIC_BLOCKS` storages of a payload as a PNG, for a saved notebook
    (nbconvert, GitHub) where the widget cannot run: each strip with its lanes coloured by state, the views' reads
    marked, names and version badges. Drawn with matplotlib from the same geometry the browser draws."""
    import io

    from matplotlib.collections import PatchCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    blocks = payload.get("blocks", [])[:STATIC_BLOCKS]
    width = float(payload.get("width", 400))
    bottom = (blocks[-1]["y"] + blocks[-1]["h"]) if len(payload.get("blocks", [])) > STATIC_BLOCKS else float("inf")
    groups = [g for g in payload.get("groups", []) if g["y"] < bottom]
    height = max([b["y"] + b["h"] + 8 for b in blocks] + [g["y"] + g["h"] + 4 for g in groups] + [40.0])
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_axis_off()
    if not blocks and not groups:
        ax.text(8, 24, payload.get("status", "no storages"), fontsize=9)
    for g in groups:  # a module's row: open (▾) or folded (▸), its path and what it holds
        ax.text(g["x"] + 4, g["y"] + 16, ("▾ " if g["open"] else "▸ ") + g["label"], fontsize=9, weight="bold")
        ax.text(min(g["x"] + 30 + 6.5 * len(g["label"]), width - 200), g["y"] + 16, g["text"], fontsize=8,
                color="#444444")
    cells, faces, marks = [], [], []
    for b in blocks:
        ax.text(6 + b.get("x", 0), b["y"] + 15, b["label"], fontsize=9, weight="bold")
        ax.text(width - 6, b["y"] + 15, b["badge"]["text"], fontsize=8, ha="right")
        for lane in b["lanes"]:
            ax.text(6, lane["y"] + lane["h"] - 6, lane["label"], fontsize=7, color="#444444")
            for c in b["cells"]:
                if c.get("gap"):
                    continue
                cells.append(Rectangle((c["x"], lane["y"]), c["w"], lane["h"]))
                faces.append(_STATIC_COLORS.get(b["state"], "#dddddd") if lane["present"] else "none")
        for t in b["tracks"]:
            ax.text(6, t["y"] + t["h"] - 3, t.get("rel", t["label"]), fontsize=7, color="#444444")
            for col, *_ in t["marks"]:
                c = b["cells"][col]
                marks.append(Rectangle((c["x"] + 2, t["y"]), c["w"] - 4, t["h"]))
    ax.add_collection(PatchCollection(cells, facecolor=faces, edgecolor="#888888", linewidth=0.5))
    ax.add_collection(PatchCollection(marks, facecolor=_VIEW_FACE, edgecolor=_VIEW_EDGE, linewidth=0.5))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()

