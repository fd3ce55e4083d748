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

import enum
import functools
import gzip
import json
import os
import socket
import threading
import time as _time
import warnings
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from . import events as _events
from .unsupported import unsupported_class

__all__ = ["profile", "KernelStat", "format_time", "record_function", "ProfilerAction", "ProfilerActivity",
           "DeviceType", "schedule", "tensorboard_trace_handler", "supported_activities", "kineto_available",
           "ExecutionTraceObserver"]


class ProfilerActivity(enum.Enum):
    """The activity groups torch's profiler can trace (``activities=[ProfilerActivity.CPU, ...]``). Here every
    kernel is timed whatever the list says: NumPy calls as CPU, CUDA launches as CUDA."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class DeviceType(enum.Enum):
    """torch's device type codes (as ``torch.profiler.DeviceType``)."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


class ProfilerAction(enum.Enum):
    """What a profiler ``schedule`` asks for at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def supported_activities() -> set[ProfilerActivity]:
    """The activities that can be traced here: the CPU's, and CUDA's when a GPU is usable."""
    from . import cuda  # (the device layer sits above the profiler's: asked when called)
    return {ProfilerActivity.CPU, *([ProfilerActivity.CUDA] if cuda.is_available() else [])}


def kineto_available() -> bool:
    """False: tinygrad_like's profiler is its own (kernel timings from its events), not PyTorch's Kineto library."""
    return False


ExecutionTraceObserver = unsupported_class(
    "torch.profiler.ExecutionTraceObserver",
    "an execution trace (Chakra's graph of PyTorch's dispatcher ops) records aten operators, which tinygrad_like "
    "does not have; use torch.profiler.profile's export_chrome_trace for a timeline")


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """torch's profiler schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle, ``warmup`` and
    ``active`` recorded steps (the last one saves: ``on_trace_ready`` runs), ``repeat`` times (0: for ever)."""

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
                             f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
                             f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler writing each saved trace to ``dir_name`` as
    ``<worker_name>.<time_ns>.pt.trace.json[.gz]`` (worker_name defaults to ``<hostname>_<pid>``), as torch's."""
    def handler_fn(prof) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{_time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class Range(NamedTuple):
    """One ``record_function`` block: its label, start and end (on the events clock) and thread."""

    name: str
    start: float
    end: float
    thread: str


_running: weakref.WeakSet = weakref.WeakSet()  # the profiles recording now: record_function reports to them


class record_function:  # noqa: N801 - torch's name
    """Label a block (``with record_function("forward"):``) or a function (as a decorator): each running profile
    keeps the range in ``prof.ranges``, shows it in its table under "Ranges" and in its Chrome trace."""

    def __init__(self, name: str, args: str | None = None):
        self.name, self.args = name, args
        self._start: float | None = None

    def __enter__(self) -> record_function:
        self._start = _events.now()
        return self

    def __exit__(self, *exc) -> None:
        if self._start is not None and _running:
            done = Range(self.name, self._start, _events.now(), threading.current_thread().name)
            for prof in list(_running):
                prof.ranges.append(done)
        self._start = None

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped


class _KeyAverages(list):
    """What :meth:`profile.key_averages` returns: its rows, and ``.table()`` as torch's ``EventList`` has."""

    def __init__(self, rows, prof: profile):
        super().__init__(rows)
        self._prof = prof

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        text = self._prof.table(sort_by=sort_by or "total", row_limit=row_limit)
        return f"{header}\n{text}" if header else text


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

    def __init__(self, *, activities=None, schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[Any], Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None, custom_trace_id_callback=None,
                 post_processing_timeout_s: float | None = None, kinds: tuple[type, ...] | None = None):
        self.events: list[Any] = []
        self.threads: list[str] = []
        self.ranges: list[Range] = []
        self.kinds = tuple(kinds) if kinds is not None else None
        self.start_time: float | None = None
        self.end_time: float | None = None
        self._unsubscribe = None
        # torch's parameters: the activity list and the record_/with_ flags change nothing here (every kernel is
        # timed; shapes are always recorded); the schedule and on_trace_ready work as in torch
        self.activities = set(activities) if activities is not None else supported_activities()
        self.schedule, self.on_trace_ready = schedule, on_trace_ready
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self.step_num = 0
        self.current_action: ProfilerAction | None = None

    # ---- lifetime ----------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._unsubscribe is not None

    def start(self) -> profile:
        """Start recording (with a ``schedule``: when it asks to); a stopped profile may be started again and keeps
        what it had."""
        if self._unsubscribe is not None or self.current_action is not None:
            raise RuntimeError("this profile is already running (call stop() before start() again)")
        self.current_action = self.schedule(self.step_num) if self.schedule is not None else ProfilerAction.RECORD
        if self.current_action in _RECORDING:
            self._subscribe()
        return self

    def stop(self) -> profile:
        """Stop recording; nothing is recorded afterwards, and ``on_trace_ready`` runs if the profile was
        recording (as torch's). Stopping a stopped profile does nothing."""
        action, self.current_action = self.current_action, None
        if self._unsubscribe is not None:
            self._pause()
            if action in _RECORDING and self.on_trace_ready is not None:
                self.on_trace_ready(self)
        return self

    def step(self) -> None:
        """Mark the end of a training step: the ``schedule`` decides whether the next step is recorded; a finished
        RECORD_AND_SAVE step hands the trace to ``on_trace_ready`` and the next cycle starts afresh."""
        if self.current_action is None:  # (not started: torch counts the step all the same)
            self.step_num += 1
            return
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num) if self.schedule is not None else ProfilerAction.RECORD
        if prev == ProfilerAction.RECORD_AND_SAVE:
            self._pause()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        elif prev in _RECORDING and self.current_action not in _RECORDING:
            warnings.warn(f"Incorrect schedule: {prev.name} followed by {self.current_action.name}", stacklevel=2)
            self._pause()
        if self.current_action in _RECORDING and self._unsubscribe is None:
            if self.schedule is not None:  # a new cycle: its trace holds its own steps only
                self.events, self.threads, self.ranges = [], [], []
                self.start_time = None
            self._subscribe()

    def _subscribe(self) -> None:
        from .backends.cuda.runtime import runtimes_started  # no PyCUDA import: only asks what started
        for rt in runtimes_started():  # launches from before the profile are collected now: they are not its own
            rt.synchronize()
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
        _running.add(self)

    def _pause(self) -> None:
        if self._unsubscribe is not None:
            _running.discard(self)
            from .backends.cuda.runtime import runtimes_started  # no PyCUDA import: only asks what started
            for rt in runtimes_started():  # a sync point: launches still in flight become KernelTimed events now
                rt.synchronize()
            unsubscribe, self._unsubscribe = self._unsubscribe, None
            unsubscribe()
            self.end_time = _events.now()

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

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> list[KernelStat]:
        """Kernels grouped by (name, device): calls, total, mean, min, max, share; largest total first. The list
        also has torch's ``.table(sort_by=..., row_limit=...)``."""
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
        return _KeyAverages(rows, self)

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
        if self.ranges:
            out += ["", "Ranges (record_function):", *self._range_lines()]
        return "\n".join(out)

    def _range_lines(self) -> list[str]:
        groups: dict[str, list[float]] = {}
        for r in self.ranges:
            groups.setdefault(r.name, []).append(r.end - r.start)
        width = max(len(n) for n in groups)
        rows = sorted(groups.items(), key=lambda kv: -sum(kv[1]))
        return [f"{name:<{width}}  {len(secs):>5} calls  {format_time(sum(secs)):>10} total" for name, secs in rows]

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
        for r in self.ranges:
            spans.append(((f"{r.thread} · " if several else "") + "record_function", r.start, r.end - r.start,
                          r.name, "user_annotation", {}))
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

    def export_chrome_trace(self, path, use_python_export: bool = False) -> str:
        """Write the trace as JSON to ``path`` (gzipped if it ends in ``.gz``, as torch; open it in
        https://ui.perfetto.dev); returns the path."""
        path = os.fspath(path)
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "wt", encoding="utf-8") as f:
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
