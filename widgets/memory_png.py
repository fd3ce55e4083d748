"""The memory timeline as a small PNG: the static picture a saved notebook shows where no kernel runs the widget.
One panel per run, the categories stacked in the widget's colours (light theme), transparent background, no text.
NumPy and zlib (:func:`._static_picture.encode_png`), no matplotlib.
"""

from __future__ import annotations

import numpy as np

from ._static_picture import encode_png

__all__ = ["memory_png", "CATEGORY_RGB"]

#: as static/memory.js draws them in a light theme
CATEGORY_RGB = {"parameters": (76, 120, 168), "optimizer state": (84, 162, 75), "gradients": (228, 87, 86),
                "saved for backward": (245, 133, 24), "outputs": (178, 121, 162), "temporaries": (157, 117, 93),
                "inputs and data": (114, 183, 178), "host copies": (237, 201, 72),
                "pool cache (free)": (186, 176, 172)}


def memory_png(payload: dict, width: int = 480, height: int = 120) -> bytes | None:
    runs = payload.get("runs") or []
    if not runs:
        return None
    peak = max(max(r["series"]["max"], 1) for r in runs)
    panels = []
    for r in runs:
        s = r["series"]
        img = np.zeros((height, width, 4), np.uint8)
        x = np.asarray(s["x"], np.float64)
        if len(x):
            cols = np.clip(np.round((x / max(x[-1], 1)) * (width - 1)).astype(np.int64), 0, width - 1)
            stack = np.zeros(len(x))
            for cat, vals in zip(s["categories"], s["values"]):
                lo = stack.copy()
                stack = stack + np.asarray(vals, np.float64)
                y0 = (height - 1 - lo / peak * (height - 1)).astype(np.int64)
                y1 = (height - 1 - stack / peak * (height - 1)).astype(np.int64)
                colour = (*CATEGORY_RGB.get(cat, (128, 128, 128)), 255)
                nxt = np.append(cols[1:], width)
                for c0, c1, a, b in zip(cols, nxt, y1, y0):
                    if b > a:
                        img[a:b, c0:max(c1, c0 + 1)] = colour
        panels.append(img)
    gap = np.zeros((height, 8, 4), np.uint8)
    out = panels[0] if len(panels) == 1 else np.concatenate([panels[0], gap, panels[1]], axis=1)
    return encode_png(out)
