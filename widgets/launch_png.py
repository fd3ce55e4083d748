"""The launch view as a small PNG: the static picture a saved notebook shows where no kernel runs the widget. The
shown output's elements, each a square coloured by the block that wrote it (the widget's colours), unwritten ones
transparent. NumPy and zlib (:func:`._static_picture.encode_png`), no matplotlib.
"""

from __future__ import annotations

import numpy as np

from ._static_picture import encode_png

__all__ = ["launch_png", "owner_rgb"]


def owner_rgb(ids: np.ndarray) -> np.ndarray:
    """RGB (uint8) of owner ids as the browser colours them in a light theme: hue ``id * 137.508`` degrees,
    saturation 62 %, lightness 44, 51 or 58 % by ``id % 3`` (launch.js, ``ownerColour``)."""
    ids = np.asarray(ids, np.float64)
    hue = (ids * 137.508) % 360 / 360
    light = (44 + (ids % 3) * 7) / 100
    sat = 0.62
    q = np.where(light < 0.5, light * (1 + sat), light + sat - light * sat)
    p = 2 * light - q

    def channel(t):
        t = t % 1
        return np.where(t < 1 / 6, p + (q - p) * 6 * t, np.where(t < 1 / 2, q, np.where(t < 2 / 3,
                        p + (q - p) * (2 / 3 - t) * 6, p)))
    rgb = np.stack([channel(hue + 1 / 3), channel(hue), channel(hue - 1 / 3)], -1)
    return np.round(rgb * 255).astype(np.uint8)


def launch_png(payload: dict, max_px: int = 512) -> bytes | None:
    """The output of a launch payload as a PNG (None when no thread wrote anything)."""
    out = payload.get("output")
    if not out or not out["shown"]:
        return None
    cols, rows, shown = out["cols"], out["rows"], out["shown"]
    owners = np.frombuffer(bytes(payload["owners"]), np.uint32)[:shown].astype(np.int64)
    cell = max(1, min(8, max_px // cols))
    blocks = np.where(owners == 0xFFFFFFFF, -1, owners // max(payload["tpb"], 1))
    grid = np.full(rows * cols, -1, np.int64)
    grid[:shown] = blocks
    img = np.zeros((rows, cols, 4), np.uint8)
    written = grid >= 0
    img.reshape(-1, 4)[written, :3] = owner_rgb(grid[written])
    img.reshape(-1, 4)[written, 3] = 255
    img = img.repeat(cell, 0).repeat(cell, 1)
    return encode_png(img)
