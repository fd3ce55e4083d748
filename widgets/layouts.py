"""Which storage elements a view reads, and in what order: the geometry behind ``StorageView``'s strips and
``draw_layouts`` (tutorial 01's picture of views over one storage).

A view of a storage is ``(shape, strides, offset)``: element ``t[i, j, ...]`` is storage element
``offset + i*strides[0] + j*strides[1] + ...``. Walking the view in row-major order (the order ``t.flatten()``
reads it) gives each storage element its *visit order*; a stride of 0 (``expand``) makes several view elements
read one storage element; a step in a slice leaves storage elements it never reads.

Long storages are *elided*: the strip shows the first ``head`` and the last ``tail`` elements with a gap between
that says how many are hidden, so a 16-million-element storage draws as readably as a 12-element one.

>>> reads = element_reads((3, 4), (1, 0), 0)          # col.expand(3, 4): stride 0 along the rows
>>> sorted(reads.items())
[(0, (0, 4)), (1, (4, 4)), (2, (8, 4))]
>>> strip_columns(100, max_cells=10, head=6, tail=3)
[0, 1, 2, 3, 4, 5, (6, 96), 97, 98, 99]
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["element_reads", "strip_columns", "view_spec", "draw_layouts", "MAX_EXACT"]

#: views with at most this many elements have every read computed; larger ones only their first and last visits
MAX_EXACT = 1 << 20
#: visits computed at each end of a view larger than MAX_EXACT
END_VISITS = 4096


def view_spec(t: Any) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """``(shape, strides, offset)`` of a tensor (strides in elements, as ``t.stride()``)."""
    return tuple(int(d) for d in t.shape), tuple(int(s) for s in t.stride()), int(t.storage_offset())


def _addresses(shape: tuple[int, ...], strides: tuple[int, ...], offset: int, visits: np.ndarray | None = None):
    """Storage addresses of the view's elements in visit (row-major) order; only ``visits`` if given."""
    if visits is None:
        addr = np.full((), offset, dtype=np.int64)
        for n, s in zip(shape, strides):
            addr = addr[..., None] + np.arange(n, dtype=np.int64) * s
        return addr.reshape(-1)
    idx = np.unravel_index(visits, shape) if shape else ()
    addr = np.full(len(visits), offset, dtype=np.int64)
    for i, s in zip(idx, strides):
        addr += i.astype(np.int64) * s
    return addr


def element_reads(shape, strides, offset: int, *, exact_limit: int = MAX_EXACT) -> dict[int, tuple[int, int]]:
    """``{storage index: (first visit order, number of reads)}`` for the view ``(shape, strides, offset)``.

    Views with more than ``exact_limit`` elements are summarised by their first and last ``END_VISITS`` visits
    only (the counts then are counts among those visits)."""
    shape, strides = tuple(shape), tuple(strides)
    n = math.prod(shape)
    if n == 0:
        return {}
    if n <= exact_limit:
        addr = _addresses(shape, strides, offset)
        order = np.arange(n)
    else:
        k = min(END_VISITS, n // 2)
        order = np.concatenate([np.arange(k), np.arange(n - k, n)])
        addr = _addresses(shape, strides, offset, order)
    uniq, first, counts = np.unique(addr, return_index=True, return_counts=True)
    return {int(a): (int(order[f]), int(c)) for a, f, c in zip(uniq, first, counts)}


def strip_columns(numel: int, *, max_cells: int = 24, head: int = 16, tail: int = 8) -> list:
    """The strip's columns: storage indices, with one ``(first, last)`` gap standing for the hidden middle when
    ``numel > max_cells`` (``head`` indices before it, ``tail`` after it)."""
    if numel <= max_cells:
        return list(range(numel))
    head, tail = min(head, numel), min(tail, max(numel - head, 0))
    return list(range(head)) + [(head, numel - tail - 1)] + list(range(numel - tail, numel))


def _fmt(n: int) -> str:
    return f"{n:,}"


# ---- the matplotlib picture (tutorial 01) --------------------------------------------------------------------
def _grid(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[tuple[int, int], tuple[int, int]]:
    """A view as a 2-D grid: rows = all leading dimensions together (their stride is only meaningful for
    ndim <= 2; the addresses are computed from the real strides), cols = the last dimension."""
    if len(shape) == 0:
        return (1, 1), (0, 0)
    if len(shape) == 1:
        return (1, shape[0]), (0, strides[0])
    return (math.prod(shape[:-1]), shape[-1]), (0, strides[-1])


@lru_cache(maxsize=1)
def _figure_class():
    from matplotlib.figure import Figure

    class LayoutsFigure(Figure):
        """A Figure that shows itself as a PNG in a notebook, whether or not pyplot's inline backend is active."""

        def _repr_png_(self) -> bytes:
            import io

            buf = io.BytesIO()
            self.savefig(buf, format="png", dpi=self.dpi, bbox_inches="tight")
            return buf.getvalue()

    return LayoutsFigure


def draw_layouts(*views, max_cells: int = 24, max_grid: int = 8, dpi: int = 80):
    """One row per ``(name, tensor)`` pair: on the left the view as a grid, each cell labelled with the storage
    element it reads; on the right the flat storage, each element coloured by the view row that reads it first
    (white: never read), ``×n`` where n view elements read it (stride 0). Long storages are elided in the
    middle; grids larger than ``max_grid`` rows or columns show their corners.

    Returns a matplotlib ``Figure`` not registered with pyplot: the last expression of a notebook cell shows
    it; elsewhere save it with ``fig.savefig(...)``.

    >>> import tinygrad_like as tl
    >>> x = tl.arange(12, dtype=tl.float32).reshape(3, 4)
    >>> fig = draw_layouts(("x", x), ("x.T", x.T))
    >>> len(fig.axes)
    4
    """
    from matplotlib.patches import Rectangle

    Figure = _figure_class()

    if not views:
        raise ValueError("draw_layouts needs at least one (name, tensor) pair")
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
              "#bcbd22", "#17becf"]
    specs = []
    for name, t in views:
        shape, strides, offset = view_spec(t)
        (rows, cols), _ = _grid(shape, strides)
        shown_r = list(range(rows)) if rows <= max_grid else list(range(max_grid - 2)) + [None, rows - 1]
        shown_c = list(range(cols)) if cols <= max_grid + 4 else list(range(max_grid + 2)) + [None, cols - 1]
        specs.append((name, t, shape, strides, offset, rows, cols, shown_r, shown_c))
    # wide labels (storage indices of 4+ digits) get wider cells, so every label stays readable
    digits = max(len(str(max(t.storage.numel - 1, 0))) for _, t in views)
    cw = 1.0 if digits <= 3 else 0.3 * digits
    cells = max(12, *(min(t.storage.numel, max_cells + 1) for _, t in views)) * cw
    gcols = max(4, *(len(s[8]) for s in specs)) * cw
    unit = 0.42  # inches per grid cell: the figure grows with what it shows, so labels never shrink
    fig = Figure(figsize=((gcols + cells + 2) * unit, sum((len(s[7]) + 1.3) * unit for s in specs)), dpi=dpi)
    axes = fig.subplots(len(specs), 2, squeeze=False, width_ratios=[gcols, cells],
                        height_ratios=[len(s[7]) + 0.8 for s in specs])
    for (name, t, shape, strides, offset, rows, cols, shown_r, shown_c), (ax_v, ax_s) in zip(specs, axes):
        numel = t.storage.numel
        reads = element_reads(shape, strides, offset)
        # the grid: row r, column c of the flattened view is visit r * cols + c
        flat_shape = (rows, cols)
        for gi, r in enumerate(shown_r):
            for gj, c in enumerate(shown_c):
                if r is None or c is None:
                    ax_v.text((gj + 0.5) * cw, -gi + 0.5, "…", ha="center", va="center", fontsize=9)
                    continue
                visit = np.array([r * cols + c])
                k = int(_addresses(shape, strides, offset, visit)[0]) if shape else offset
                ax_v.add_patch(Rectangle((gj * cw, -gi), cw, 1, fc=colors[r % 10], alpha=0.5, ec="k"))
                ax_v.text((gj + 0.5) * cw, -gi + 0.5, str(k), ha="center", va="center", fontsize=8)
        for x, col in enumerate(strip_columns(numel, max_cells=max_cells, head=max_cells - 8, tail=8)):
            if isinstance(col, tuple):
                ax_s.text((x + 0.5) * cw, 0.5, f"…\n{_fmt(col[1] - col[0] + 1)}", ha="center", va="center",
                          fontsize=7)
                continue
            first, n = reads.get(col, (None, 0))
            row = None if first is None else first // max(cols, 1)
            ax_s.add_patch(Rectangle((x * cw, 0), cw, 1, ec="k", fc="white" if row is None else colors[row % 10],
                                     alpha=1 if row is None else 0.5))
            label = str(col) if n < 2 else f"{col}\n×{n}"
            ax_s.text((x + 0.5) * cw, 0.5, label, ha="center", va="center", fontsize=8)
        title = f"{name}  {tuple(shape)}" + ("" if flat_shape == tuple(shape) or len(shape) < 2 else
                                               f"  (rows: the first {len(shape) - 1} dims)")
        ax_v.set(xlim=(0, gcols), ylim=(1 - len(shown_r), 1), aspect="equal")
        ax_v.set_title(title, fontsize=10)
        ax_s.set(xlim=(0, cells), ylim=(0, 1), aspect="equal")
        ax_s.set_title(f"storage ({_fmt(numel)} elements): stride {tuple(strides)}, offset {offset}", fontsize=10)
        for ax, anchor in ((ax_v, "NW"), (ax_s, "N")):
            ax.set_anchor(anchor)
            ax.axis("off")
    return fig
