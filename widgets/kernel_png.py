"""The kernel timeline as a small PNG: the static picture a saved notebook shows where no kernel runs the widget
(nbconvert, GitHub). NumPy and zlib (:func:`._static_picture.encode_png`), no matplotlib.
"""

from __future__ import annotations

from ._static_picture import encode_png
from .kernel_model import LaunchStore

__all__ = ["timeline_png", "compressed_x", "PHASE_RGB"]

#: PNG colours of the phases (the canvas takes its own from the theme)
PHASE_RGB = ((76, 120, 168), (245, 133, 24), (84, 162, 75), (178, 121, 162))


def compressed_x(start, dur, cell, gap_frac: float = 0.02):
    """Where launches go on the x axis (seconds): within a cell real time since its first launch; cells side
    by side in order with a small gap (idle time between cells is cut out; all the gaps together take at most a fifth
    of the axis). ``cell`` indexes the store's cells, where a cell's launches after a long idle stretch are a part of
    their own (see ``KernelTimeline._drain``). The browser does the same (``timeline_store.js``)."""
    import numpy as np

    start, dur, cell = (np.asarray(a) for a in (start, dur, cell))
    if not len(start):
        return start.astype(float), 0.0
    cells = np.unique(cell)
    lo = {c: start[cell == c].min() for c in cells}
    hi = {c: (start + dur)[cell == c].max() for c in cells}
    total = sum(hi[c] - lo[c] for c in cells)
    gap = max(total * min(gap_frac, 0.2 / len(cells)), 1e-6) if len(cells) > 1 else 0.0
    off, x = {}, 0.0
    for c in cells:
        off[c] = x - lo[c]
        x += hi[c] - lo[c] + gap
    shift = np.zeros(int(cells.max()) + 1)
    for c in cells:
        shift[c] = off[c]
    return start + shift[cell], x - gap


def timeline_png(store: LaunchStore, width: int = 640, row_h: int = 8, max_rows: int = 24) -> bytes:
    """The timeline as a small PNG: one row per kernel name (most total time on top), bars coloured by phase,
    narrower bars merged into the pixel they fall in. Transparent background, no text."""
    import numpy as np

    n = len(store)
    c = store.cols
    if n == 0:
        img = np.zeros((row_h * 2, width, 4), np.uint8)
        img[row_h - 1:row_h + 1, :, 3] = 60
        return encode_png(img)
    start = np.frombuffer(c["start"], np.float64)
    dur = np.frombuffer(c["dur"], np.float64)
    name = np.frombuffer(c["name"], np.uint32)
    phase = np.frombuffer(c["phase"], np.uint8)
    cell = np.frombuffer(c["cell"], np.uint16).astype(np.int64)
    x, span = compressed_x(start, dur, cell)
    totals = np.bincount(name, weights=dur)
    order = [i for i in np.argsort(-totals, kind="stable") if totals[i] > 0 or np.any(name == i)][:max_rows]
    rows = np.full(len(totals), -1)
    rows[order] = np.arange(len(order))
    img = np.zeros((len(order) * row_h, width, 4), np.uint8)
    scale = (width - 1) / span if span > 0 else 0.0
    x0 = np.clip((x * scale).astype(np.int64), 0, width - 1)
    x1 = np.clip(((x + dur) * scale).astype(np.int64), 0, width - 1)
    r = rows[name]
    keep = r >= 0
    colours = np.array([(*rgb, 255) for rgb in PHASE_RGB], np.uint8)
    for ri, a, b, p in zip(r[keep], x0[keep], x1[keep], phase[keep]):
        img[ri * row_h + 1:(ri + 1) * row_h - 1, a:b + 1] = colours[p]
    return encode_png(img)

