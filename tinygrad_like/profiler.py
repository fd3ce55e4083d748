"""Kernel-level profiling: ``with tl.profile() as prof:`` collects what the core reports through ``events``.

While a profile is open the backends run their timed primitives, so every NumPy call (CPU) or CUDA
launch arrives as a :class:`~tinygrad_like.events.KernelTimed`; the backward engine adds one
:class:`~tinygrad_like.events.BackwardStep` per node. ``prof.table()`` summarises the kernels the way
``torch.profiler``'s ``key_averages().table()`` does, and ``prof.export_chrome_trace(path)`` writes a
trace that Perfetto (https://ui.perfetto.dev) and ``chrome://tracing`` open.

>>> import tinygrad_like as tl
>>> with tl.profile() as prof:
...     a = tl.ones(4, 4, requires_grad=True)
...     (a @ a + 1).relu().sum().backward()
>>> any(row.name == "matmul" for row in prof.key_averages())
True
>>> print(prof.table(row_limit=3))  # doctest: +SKIP
------------  ------  -----  ---------  ---------  ---------  ---------  -------
Name          Device  Calls      Total       Mean        Min        Max  % Total
------------  ------  -----  ---------  ---------  ---------  ---------  -------
matmul           cpu      3   14.207us    4.736us    3.907us    6.062us   31.42%
...
Self total: 45.216us
>>> prof.export_chrome_trace("trace.json")  # doctest: +SKIP

The same object also works without ``with``: ``prof = tl.profile(); prof.start(); ...; prof.stop()``.

Events hold references to graph nodes (``OpRecorded.node``, ``BackwardStep.node``), so a profile kept
around keeps those graphs alive. When profiling a long loop, keep only the kinds you need, e.g.
``tl.profile(kinds=(tl.events.KernelTimed,))`` (a ``KernelTimed`` names its node only weakly).
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from typing import Any, NamedTuple

from . import events as _events

__all__ = ["profile", "KernelStat", "format_time"]


class KernelStat(NamedTuple):
    """One row of :meth:`profile.key_averages`: all calls of one kernel name on one device."""

    name: str
    device: str
    calls: int
    total_s: float
    mean_s: float
    min_s: float
    max_s: float
    share: float  # total_s / (sum of total_s over all rows), in [0, 1]


def format_time(seconds: float) -> str:
    """Adaptive units as torch.profiler prints them: ``"12.345us"``, ``"1.234ms"``, ``"2.000s"``."""
    us = seconds * 1e6
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3f}s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


# sort keys accepted by table(); torch-style spellings map onto ours
_SORT_KEYS = {
    "total": lambda r: (-r.total_s, r.name, r.device),
    "calls": lambda r: (-r.calls, -r.total_s, r.name, r.device),
    "mean": lambda r: (-r.mean_s, r.name, r.device),
    "min": lambda r: (-r.min_s, r.name, r.device),
    "max": lambda r: (-r.max_s, r.name, r.device),
    "share": lambda r: (-r.total_s, r.name, r.device),
    "name": lambda r: (r.name, r.device),
    "device": lambda r: (r.device, -r.total_s, r.name),
}
_SORT_ALIASES = {
    "total_s": "total", "mean_s": "mean", "min_s": "min", "max_s": "max", "count": "calls",
    "cpu_time_total": "total", "self_cpu_time_total": "total", "cuda_time_total": "total",
    "self_cuda_time_total": "total", "device_time_total": "total", "self_device_time_total": "total",
}


class profile:
    """Collect every event the core emits between :meth:`start` and :meth:`stop` (or a ``with`` block).

    ``kinds``: if given, a tuple of event classes to keep (others are dropped on arrival).

    Attributes: ``events`` (every kept event, in arrival order), ``threads`` (the name of the thread each event
    came from, one per event), ``kernels`` (the ``KernelTimed`` ones),
    ``backward_steps`` (the ``BackwardStep`` ones), ``start_time`` / ``end_time`` (on the
    :func:`tinygrad_like.events.now` clock).
    """

    def __init__(self, *, kinds: tuple[type, ...] | None = None):
        self.events: list[Any] = []
        self.threads: list[str] = []
        self.kinds = tuple(kinds) if kinds is not None else None
        self.start_time: float | None = None
        self.end_time: float | None = None
        self._unsubscribe = None

    # ---- lifetime ----------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._unsubscribe is not None

    def start(self) -> profile:
        """Subscribe to ``events``; a stopped profile may be started again and keeps what it had."""
        if self._unsubscribe is not None:
            raise RuntimeError("this profile is already running (call stop() before start() again)")
        if self.start_time is None:
            self.start_time = _events.now()
        self.end_time = None
        # The sink holds the lists, not the profile: a profile dropped without stop() is collected, and its
        # finalizer unsubscribes (it used to stay subscribed for good, keeping every op on the slow path).
        events, threads, kinds, current = self.events, self.threads, self.kinds, threading.current_thread

        def sink(event) -> None:
            if kinds is None or isinstance(event, kinds):
                events.append(event)
                threads.append(current().name)

        self._unsubscribe = unsubscribe = _events.subscribe(sink)
        weakref.finalize(self, unsubscribe)
        return self

    def stop(self) -> profile:
        """Unsubscribe; nothing is recorded afterwards. Stopping a stopped profile does nothing."""
        if self._unsubscribe is not None:
            from .backends.cuda.runtime import runtime_if_started  # no PyCUDA import: only asks if it started
            rt = runtime_if_started()
            if rt is not None:  # a sync point: GPU launches still in flight become KernelTimed events now
                rt.synchronize()
            unsubscribe, self._unsubscribe = self._unsubscribe, None
            unsubscribe()
            self.end_time = _events.now()
        return self

    def __enter__(self) -> profile:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<tinygrad_like.profile {state}: {len(self.events)} events, {len(self.kernels)} kernels>"

    # ---- views of the events ---------------------------------------------------------------------
    @property
    def kernels(self) -> list[Any]:
        """The ``KernelTimed`` events, in arrival order."""
        return [e for e in self.events if isinstance(e, _events.KernelTimed)]

    @property
    def backward_steps(self) -> list[Any]:
        """The ``BackwardStep`` events, in arrival order."""
        return [e for e in self.events if isinstance(e, _events.BackwardStep)]

    def key_averages(self) -> list[KernelStat]:
        """Kernels grouped by (name, device): calls, total, mean, min, max, share; largest total first."""
        groups: dict[tuple[str, str], list[float]] = {}
        for k in self.kernels:
            groups.setdefault((k.name, k.device), []).append(k.seconds)
        grand = sum(sum(v) for v in groups.values())
        rows = []
        for (name, device), secs in groups.items():
            total = sum(secs)
            rows.append(KernelStat(name, device, len(secs), total, total / len(secs), min(secs), max(secs),
                                   total / grand if grand > 0 else 0.0))
        rows.sort(key=_SORT_KEYS["total"])
        return rows

    def table(self, sort_by: str = "total", row_limit: int | None = None) -> str:
        """A text table of :meth:`key_averages` like ``torch.profiler``'s ``key_averages().table()``.

        ``sort_by``: ``"total"`` (default), ``"calls"``, ``"mean"``, ``"min"``, ``"max"``, ``"name"``,
        ``"device"`` (torch spellings such as ``"cpu_time_total"`` work too). ``row_limit``: at most
        this many rows (the footer still counts every kernel).
        """
        key = _SORT_ALIASES.get(sort_by, sort_by)
        if key not in _SORT_KEYS:
            raise ValueError(f"table(sort_by={sort_by!r}): expected one of {', '.join(_SORT_KEYS)}")
        rows = self.key_averages()
        total = sum(r.total_s for r in rows)
        calls = sum(r.calls for r in rows)
        rows.sort(key=_SORT_KEYS[key])
        if row_limit is not None:
            if row_limit < 0:
                raise ValueError(f"table(row_limit={row_limit}): expected a count >= 0 or None")
            rows = rows[:row_limit]
        headers = ("Name", "Device", "Calls", "Total", "Mean", "Min", "Max", "% Total")
        cells = [(r.name, r.device, str(r.calls), format_time(r.total_s), format_time(r.mean_s),
                  format_time(r.min_s), format_time(r.max_s), f"{100.0 * r.share:.2f}%") for r in rows]
        widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(headers)]

        def line(values) -> str:
            parts = [f"{values[0]:<{widths[0]}}"] + [f"{v:>{w}}" for v, w in zip(values[1:], widths[1:])]
            return "  ".join(parts).rstrip()

        dashes = "  ".join("-" * w for w in widths)
        out = [dashes, line(headers), dashes, *(line(c) for c in cells), dashes,
               f"Self total: {format_time(total)} ({calls} kernel calls)"]
        return "\n".join(out)

    def summary(self) -> dict[str, Any]:
        """Plain numbers for widgets and logs (JSON-serialisable)."""
        rows = self.key_averages()
        steps = self.backward_steps
        if self.start_time is None:
            wall = 0.0
        else:
            wall = (self.end_time if self.end_time is not None else _events.now()) - self.start_time
        return {
            "running": self.running,
            "wall_s": wall,
            "events": len(self.events),
            "kernel_calls": sum(r.calls for r in rows),
            "kernel_total_s": sum(r.total_s for r in rows),
            "distinct_kernels": len(rows),
            "devices": sorted({r.device for r in rows}),
            "backward_steps": len(steps),
            "backward_total_s": sum(s.seconds for s in steps),
            "ops_recorded": sum(1 for e in self.events if isinstance(e, _events.OpRecorded)),
            "kernels_compiled": sum(1 for e in self.events
                                    if isinstance(e, _events.KernelCompiled) and not e.cache_hit),
            "top": [r._asdict() for r in rows[:10]],
        }

    # ---- Chrome trace ----------------------------------------------------------------------------
    def chrome_trace(self) -> dict[str, Any]:
        """The trace as a dict in Chrome Trace Event Format (what :meth:`export_chrome_trace` writes)."""
        pid = os.getpid()
        lanes: dict[str, int] = {}
        # one track per thread (and per lane in it): "autograd", or "Thread-2 · autograd" once several threads
        # emitted events
        several = len(set(self.threads)) > 1

        def tid(lane: str) -> int:
            if lane not in lanes:
                lanes[lane] = len(lanes) + 1
            return lanes[lane]

        # intervals: (lane, start, seconds, name, cat, args); instants: (lane, time, name, cat, args)
        spans: list[tuple] = []
        instants: list[tuple] = []
        threads = self.threads if len(self.threads) == len(self.events) else [""] * len(self.events)
        for e, thread in zip(self.events, threads):
            n_spans, n_instants = len(spans), len(instants)
            self._trace_entry(e, spans, instants)
            if several:
                if len(spans) > n_spans:
                    spans[-1] = (f"{thread} · {spans[-1][0]}",) + spans[-1][1:]
                if len(instants) > n_instants:
                    instants[-1] = (f"{thread} · {instants[-1][0]}",) + instants[-1][1:]
        return self._trace_json(spans, instants, pid, tid, lanes)

    @staticmethod
    def _trace_entry(e, spans: list, instants: list) -> None:
        """Add event ``e`` as an interval ``(lane, start, seconds, name, cat, args)`` or an instant."""
        if isinstance(e, _events.KernelTimed):
            spans.append((e.device, e.start, e.seconds, e.name, "kernel",
                          {"device": e.device, "shapes": _jsonable(e.shapes), "nbytes": e.nbytes,
                           "grid": _jsonable(e.grid), "block": _jsonable(e.block)}))
        elif isinstance(e, _events.BackwardStep):  # ``time`` is when the step ended
            spans.append(("autograd", e.time - e.seconds, e.seconds, e.op, "backward", {"index": e.index}))
        elif isinstance(e, _events.StorageStateChanged) and e.direction:  # a transfer; ``time`` = end
            spans.append(("memcpy", e.time - e.seconds, e.seconds, e.direction, "memcpy",
                          {"storage_id": e.storage_id, "nbytes": e.nbytes, "residency": e.residency,
                           "dirty": e.dirty}))
        elif isinstance(e, _events.KernelCompiled):
            instants.append(("compiler", e.time, e.name, "compile", {"seconds": e.seconds, "cache_hit": e.cache_hit}))
        elif isinstance(e, _events.OpRecorded):
            instants.append(("ops", e.time, e.op, "op",
                             {"inputs": _jsonable(e.input_shapes), "output": _jsonable(e.output_shape),
                              "dtype": e.dtype, "device": e.device}))

    def _trace_json(self, spans: list, instants: list, pid: int, tid, lanes: dict) -> dict[str, Any]:
        # times are relative to the profile start (or to the earliest event, should one predate it)
        times = [s[1] for s in spans] + [i[1] for i in instants]
        origin = self.start_time if self.start_time is not None else (min(times) if times else 0.0)
        if times:
            origin = min(origin, min(times))

        trace: list[dict[str, Any]] = []
        for lane, start, seconds, name, cat, args in spans:
            trace.append({"name": name, "cat": cat, "ph": "X", "ts": (start - origin) * 1e6,
                          "dur": max(seconds, 0.0) * 1e6, "pid": pid, "tid": tid(lane), "args": args})
        for lane, time, name, cat, args in instants:
            trace.append({"name": name, "cat": cat, "ph": "i", "s": "t", "ts": (time - origin) * 1e6,
                          "pid": pid, "tid": tid(lane), "args": args})
        trace.sort(key=lambda ev: ev["ts"])
        meta = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": "tinygrad_like"}}]
        for lane, t in lanes.items():
            meta.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": t, "args": {"name": lane}})
            meta.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": t,
                         "args": {"sort_index": t}})
        return {"traceEvents": meta + trace, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path) -> str:
        """Write the trace as JSON to ``path`` (open it in https://ui.perfetto.dev); returns the path."""
        path = os.fspath(path)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.chrome_trace(), f)
        return path


def _jsonable(value):
    """Shapes and launch dims as nested lists of plain ints (``None`` stays ``None``)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    try:
        return int(value)
    except (TypeError, ValueError):
        return str(value)
