"""The model of ``MemoryTimelineView``: what the browser draws of a memory timeline (``tl.memory_timeline()``), as
plain data. Pure functions of a :class:`~tinygrad_like.memory_timeline.MemoryTimeline`, tested without a browser.

Bounded whatever the recording: at most ``MAX_COLUMNS`` columns are sent (each bin of events keeps the event with
the most bytes alive, so no peak is lost between columns); what the learner hovers (the storages alive at one event)
is asked for and answered on demand (:func:`alive_rows`).
"""

from __future__ import annotations

import numpy as np

from tinygrad_like.memory_timeline import CATEGORIES, Allocation

__all__ = ["MAX_COLUMNS", "timeline_payload", "alive_rows", "peak_rows", "fmt_bytes"]

MAX_COLUMNS = 2000
MAX_TRANSFER_MARKS = 2000
TOP_ROWS = 12


def fmt_bytes(n: float) -> str:
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GiB"


def _columns(total: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the points drawn: all of them up to ``limit``, else the largest total of each of ``limit`` bins."""
    n = len(total)
    if n <= limit:
        return np.arange(n)
    edges = np.linspace(0, n, limit + 1).astype(np.int64)
    return np.asarray([lo + int(np.argmax(total[lo:hi])) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo])


def _series(mem, device: str | None, limit: int) -> dict:
    s = mem.series(device)
    cats = [c for c in CATEGORIES if s[c].any()]
    total = sum(s[c] for c in cats) if cats else np.zeros(len(mem) + 1, np.int64)
    cols = _columns(total, limit)
    return {"categories": cats, "x": cols.tolist(),  # (x: index into the series; event = x - 1)
            "values": [s[c][cols].tolist() for c in cats], "total": total[cols].tolist(),
            "max": int(total.max()) if len(total) else 0, "events": len(mem)}


def _row(a: Allocation) -> dict:
    return {"id": a.storage_id, "bytes": a.nbytes, "size": fmt_bytes(a.nbytes), "category": a.category,
            "what": a.saved_by or a.name or a.who, "op": a.op, "seq": a.node_seq, "module": a.module, "line": a.line,
            "phase": a.phase, "dtype": a.dtype}


def alive_rows(mem, index: int, device: str | None = None, top: int = TOP_ROWS) -> dict:
    """What was alive after event ``index``: bytes per category and the largest storages."""
    alive = mem.alive_at(index, device)
    cats = mem.by_category(index, device)
    return {"index": index, "total": sum(a.nbytes for a in alive), "count": len(alive),
            "categories": [[c, b, fmt_bytes(b)] for c, b in cats.items() if b],
            "rows": [_row(a) for a in alive[:top]], "more": max(0, len(alive) - top)}


def peak_rows(mem, device: str | None = None) -> dict:
    p = mem.peak_on(device)
    out = alive_rows(mem, p.index, device)
    out["bytes"] = p.bytes
    out["size"] = fmt_bytes(p.bytes)
    return out


def _transfers(mem, device: str) -> dict:
    """The copies between ``device`` and the host (on ``cpu``: every device's), as marks at their events (the first
    ``MAX_TRANSFER_MARKS``) and totals per direction."""
    of = None if device == "cpu" else device
    moved = [t for t in mem.transfers if of is None or t.device == of]
    totals = mem.transfer_totals(of)
    return {"marks": [[t.index + 1, t.direction, t.nbytes, t.device] for t in moved[:MAX_TRANSFER_MARKS]],
            "count": len(moved), "d2h": list(totals["d2h"]), "h2d": list(totals["h2d"])}  # (marks' x: series index)


def _one(mem, device: str | None, limit: int, live: bool = False) -> dict:
    device = device or mem._default_device()
    spans = [[lo + 1, hi + 1, ph] for lo, hi, ph in mem.phase_spans()]  # (in series indices)
    return {"name": mem.name or "", "device": device, "devices": mem.devices, "series": _series(mem, device, limit),
            "phases": spans, "peak": peak_rows(mem, device), "storages": len(mem.allocations),
            "transfers": _transfers(mem, device), "recording": live or mem.recording, "truncated": mem.truncated}


def timeline_payload(mem, other=None, *, device: str | None = None, compare_device: str | None = None,
                     limit: int = MAX_COLUMNS, live: bool = False) -> dict:
    """Everything the browser draws: one timeline, and ``other`` beside it to compare (or None). ``live``: the view
    records on (its Pause button is shown even between two recordings)."""
    out = {"categories": list(CATEGORIES), "runs": [_one(mem, device, limit, live)]}
    if other is not None:
        out["runs"].append(_one(other, compare_device, limit))
    return out
