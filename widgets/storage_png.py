"""The storage picture as a PNG: the static picture a saved notebook shows where no kernel runs the widget
(nbconvert, GitHub). Drawn with matplotlib from the payload the browser draws (``storage_model.storage_payload``).
"""

from __future__ import annotations

__all__ = ["storage_png", "STATIC_BLOCKS"]

#: lane colours of the static picture (the browser takes its own from the theme): a copy's state
_STATIC_COLORS = {"cpu": "#d9e6f2", "sync": "#b7dfb9", "host-newer": "#fdd9a8", "device-newer": "#b3d4f5",
                  "device-only": "#b3d4f5"}
#: storages drawn at most in the static picture
STATIC_BLOCKS = 12


def storage_png(payload: dict, dpi: int = 80) -> bytes:
    """The first :data:`STATIC_BLOCKS` storages of a payload as a PNG, for a saved notebook (nbconvert, GitHub) where
    the widget cannot run: each strip with its lanes coloured by state, the views' reads marked, names and version
    badges. Drawn with matplotlib from the same geometry the browser draws."""
    import io

    from matplotlib.collections import PatchCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    blocks = payload.get("blocks", [])[:STATIC_BLOCKS]
    width = float(payload.get("width", 400))
    height = (blocks[-1]["y"] + blocks[-1]["h"] + 8) if blocks else 40.0
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_axis_off()
    if not blocks:
        ax.text(8, 24, payload.get("status", "no storages"), fontsize=9)
    cells, faces, marks = [], [], []
    for b in blocks:
        ax.text(6, b["y"] + 15, b["label"], fontsize=9, weight="bold")
        ax.text(width - 6, b["y"] + 15, b["badge"]["text"], fontsize=8, ha="right")
        for lane in b["lanes"]:
            ax.text(6, lane["y"] + lane["h"] - 6, lane["label"], fontsize=7, color="#555555")
            for c in b["cells"]:
                if c.get("gap"):
                    continue
                cells.append(Rectangle((c["x"], lane["y"]), c["w"], lane["h"]))
                faces.append(_STATIC_COLORS.get(b["state"], "#dddddd") if lane["present"] else "none")
        for t in b["tracks"]:
            ax.text(6, t["y"] + t["h"] - 3, t["label"], fontsize=7, color="#555555")
            for col, *_ in t["marks"]:
                c = b["cells"][col]
                marks.append(Rectangle((c["x"] + 2, t["y"]), c["w"] - 4, t["h"]))
    ax.add_collection(PatchCollection(cells, facecolor=faces, edgecolor="#888888", linewidth=0.5))
    ax.add_collection(PatchCollection(marks, facecolor="#9ecae1", edgecolor="#4a7fb0", linewidth=0.5))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()

