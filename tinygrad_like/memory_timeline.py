"""Where the memory goes: the bytes of every storage alive over a span of code, by what they are for.

``with tl.memory_timeline(model=net, optimizer=opt) as mem:`` records every storage allocated and freed inside the
block (and the storages alive when it starts), each with

- its **category**: ``parameters``, ``gradients``, ``optimizer state`` (of the given model and optimizer),
  ``saved for backward`` (a graph node keeps it for its backward), ``inputs and data`` (made outside any op, e.g.
  a batch), ``outputs`` (an op's result that outlives the phase that made it and nobody saved, e.g. the loss),
  ``temporaries`` (made by an op, or by backward, and freed before that phase ended);
- where it came from: the graph node (op) whose forward or backward made it, the module path that ran it
  (``blocks.3.attn``, with ``model=``), the user's line, and the phase (forward, backward, optimizer);
- and, on a device with a buffer pool (``cuda``, ``cuda-emu``, ``sim``), the pool's cached-but-free bytes at each
  step, as one more category, ``pool cache (free)``.

A device tensor read on the host (``print``, ``.numpy()``, ``.item()``, ``.tolist()``, an op that falls back to the
host) is downloaded whole -- the storage, not just the view read -- into a host copy that the storage keeps (its
"mirror", see :mod:`.storage`; ``.cpu()`` copies into a new tensor and keeps none): those bytes are counted on ``cpu``
as ``host copies``, from the download until the mirror or the storage is dropped. The copies between a device and
the host are events of their own, listed in ``mem.transfers``: downloads (``d2h``), uploads of a host write (``h2d``)
and ``.to(device)``'s uploads into a new storage. Not marked: the upload of a result an op computed on the host (a
host fallback; chapter 05's census counts those).

``mem.series()`` gives bytes alive per category at each event (the x axis is the event index; ``mem.times`` the
clock), ``mem.peak`` the peak and what was alive there, ``mem.alive_at(i)`` the storages alive after event ``i``.
``MemoryTimelineView`` (in ``widgets``) draws it.

What is counted: a storage's bytes once, however many tensors view it, on its home device (a ``cpu`` tensor's
NumPy array; a device tensor's buffer, not its host mirror). What is not: memory no tensor owns (NumPy's scratch
inside one primitive, a device kernel's workspace, Python objects). While nobody records, none of this costs
anything: storages are watched for their death only while someone listens for ``StorageFreed``.
"""

from __future__ import annotations

import bisect
import gc
import weakref
from dataclasses import dataclass, field

import numpy as np

from . import events, sites, storage

__all__ = ["memory_timeline", "MemoryTimeline", "Allocation", "Transfer", "CATEGORIES"]

#: the categories, in the order a stacked plot draws them (bottom first)
CATEGORIES = ("parameters", "optimizer state", "gradients", "saved for backward", "outputs", "temporaries",
              "inputs and data", "host copies", "pool cache (free)")
_KINDS = (events.StorageAllocated, events.StorageFreed, events.OpRecorded, events.VersionBump,
          events.StorageStateChanged)


@dataclass
class Allocation:
    """One storage's life: allocated at event ``start`` (-1: alive before the recording began), freed at event
    ``end`` (None: still alive when it ended)."""

    storage_id: int
    device: str
    dtype: str
    nbytes: int
    start: int
    end: int | None = None
    phase: str = "other"        # "forward", "backward", "optimizer" or "other" (outside any op)
    op: str | None = None       # the graph node whose forward or backward made it
    node_seq: int | None = None
    module: str | None = None   # the module path that ran it ("blocks.3.attn"), when scopes are recorded
    line: str | None = None     # the user's line ("cell In[4], line 3" or "train.py:12 in step")
    category: str = "inputs and data"
    saved_by: str | None = None  # the node that saved it for backward ("MulBackward0 #12")
    name: str | None = None     # a parameter's, gradient's or optimizer state's name
    node_ref: object = field(default=None, repr=False)  # a weak reference to the node that made it

    @property
    def node(self):
        """The graph node that made it (its forward or backward), or None (none, or garbage by now)."""
        return None if self.node_ref is None else self.node_ref()

    @property
    def who(self) -> str:
        """What made it, in a learner's words: the op and module, else the line."""
        if self.op and self.module:
            return f"{self.op} in {self.module}"
        if self.op or self.module:
            return self.op or f"module {self.module}"  # (an op run without recording, e.g. under no_grad)
        return self.line or "before the recording"


@dataclass
class Transfer:
    """One copy between a device storage and its host mirror, at event ``index``: ``"d2h"`` (a download: the host
    read it) or ``"h2d"`` (an upload of what the host wrote, at the device's next use)."""

    index: int
    storage_id: int
    device: str
    direction: str
    nbytes: int
    seconds: float
    line: str | None = None  # the user's line that caused it


class _Forward:
    """The subscriber of a recording: calls it through a weak reference, so a recording nobody holds any more is
    collected (and its finalizer unsubscribes) instead of recording for good."""

    __slots__ = ("ref",)

    def __init__(self, recorder: MemoryTimeline):
        self.ref = weakref.ref(recorder)

    def __call__(self, event) -> None:
        r = self.ref()
        if r is not None:
            r._on_event(event)


# module scopes are recorded while any recording runs (a count, so that overlapping recordings restore the setting
# that was there before the first one, whatever order they stop in)
_scope_users = [0, False]


def _scopes_on() -> None:
    if _scope_users[0] == 0:
        _scope_users[1] = sites.record_scopes(True)
    _scope_users[0] += 1


def _scopes_off() -> None:
    _scope_users[0] -= 1
    if _scope_users[0] == 0:
        sites.record_scopes(_scope_users[1])


class MemoryTimeline:
    """A recording of storage lives (see the module docstring). Use ``tl.memory_timeline(...)`` as a context
    manager; ``model`` and ``optimizer`` name parameters, gradients and optimizer state (held weakly); ``lines``
    records the user's line of each allocation (a stack walk each, on by default); ``max_events`` ends a recording
    that grew that long (``truncated`` then says so)."""

    def __init__(self, model=None, optimizer=None, *, lines: bool = True, name: str = "",
                 max_events: int = 500_000):
        self._model = None if model is None else weakref.ref(model)
        opts = optimizer if isinstance(optimizer, (list, tuple)) else ([] if optimizer is None else [optimizer])
        self._optimizers = [weakref.ref(o) for o in opts]
        self.lines = lines
        self.name = name
        self.max_events = max_events
        self.truncated = False
        self.allocations: dict[int, Allocation] = {}  # storage id -> its life (in allocation order)
        self.times: list[float] = []                   # the clock at each event
        self.phases: list[str] = []                    # the phase at each event
        self.pool_cached: dict[str, list[int]] = {}    # device -> its pool's cached-free bytes after each event
        self.host_copies: list[Allocation] = []        # device storages' host mirrors (on "cpu"), each life once
        self.transfers: list[Transfer] = []            # every copy between a device and the host
        self._open_copies: dict[int, Allocation] = {}  # storage id -> its host mirror alive now
        self._pool_start: dict[str, int] = {}          # device -> cached-free bytes when its first event came
        self._saved: dict[int, str] = {}
        self._grads: dict[int, str] = {}  # storage id -> the parameter it was the gradient of (noted when seen)
        self._grads_noted = False
        self._unsubscribe = None
        self._modules: dict[int, str] = {}
        self._pools: dict[str, object] = {}
        self._classified_at = -1
        self.started = self.stopped = None

    # ---- recording ---------------------------------------------------------------------------------------
    def __enter__(self) -> MemoryTimeline:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> MemoryTimeline:
        if self._unsubscribe is not None:
            raise RuntimeError("this memory timeline is recording already")
        if self.stopped is not None:
            raise RuntimeError("a memory timeline records once: make a new one with tl.memory_timeline()")
        model = self._model() if self._model is not None else None
        if model is not None:
            self._modules = {id(m): (n or type(m).__name__) for n, m in model.named_modules()}
        unsubscribe = events.subscribe(_Forward(self), kinds=_KINDS)  # (before the scan: eager storages)
        self._unsubscribe = unsubscribe
        self._finalizer = weakref.finalize(self, unsubscribe)  # (a recording dropped while it runs stops)
        _scopes_on()  # (module paths: the scope each op runs in)
        self._finalizer_scopes = weakref.finalize(self, _scopes_off)
        self.started = events.now()
        for st in _scan_storages():  # (once: no registry kept after)
            self.allocations[st.id] = Allocation(st.id, str(st.device), st.dtype.name, st.nbytes, -1)
            if st.dev is not None and st.host is not None:
                self._open_copy(st.id, st.nbytes, -1, "other", None)
            events.watch_free(st)
        self._note_grads()  # (a loop's zero_grad() may free the last step's gradients first thing)
        return self

    def stop(self) -> MemoryTimeline:
        if self._unsubscribe is None:
            return self
        self._finalizer()  # (unsubscribes, once)
        self._finalizer_scopes()
        self._unsubscribe = None
        self.stopped = events.now()
        self._sample_pools()
        self._note_grads()
        self._classify()
        return self

    @property
    def recording(self) -> bool:
        return self._unsubscribe is not None

    def _sample_pools(self) -> None:
        """The pools' cached bytes now, as the value after the last event (a storage's buffer goes back to its pool
        only after the event that says it died, so each event's value is read when the next one comes)."""
        for device, pool in self._pools.items():
            values = self.pool_cached.get(device)
            if values:
                values[-1] = getattr(pool, "cached", 0)

    def _event(self, phase: str) -> int:
        if len(self.times) >= self.max_events:
            self.truncated = True
            self.stop()
            return len(self.times) - 1
        self._sample_pools()
        before = self.phases[-1] if self.phases else None
        self.times.append(events.now())
        self.phases.append(phase)
        i = len(self.times) - 1  # (taken after appending: a free that fires meanwhile gets an index of its own)
        for device, pool in self._pools.items():
            values = self.pool_cached.setdefault(device, [])
            if not values:
                self._pool_start[device] = getattr(pool, "cached", 0)
            values += [values[-1] if values else self._pool_start[device]] * (i + 1 - len(values))
        if phase == "backward":
            self._grads_noted = False  # (the next optimizer step notes the gradients this backward made)
        elif before == "backward":
            self._note_grads()  # (backward ended: the gradients of the parameters are what it left)
        return i

    def _on_event(self, e) -> None:
        kind = type(e)
        if kind is events.StorageAllocated:
            ctx = sites.context
            node = ctx.node
            # (a tensor made inside a module's forward outside any op, such as positions from arange: forward too)
            phase = ("optimizer" if ctx.optimizer is not None else "backward" if ctx.backward else
                     "forward" if node is not None or ctx.scope else "other")
            if e.device not in self._pools and e.device != "cpu":
                self._pools[e.device] = _pool_of(e.device)
            a = Allocation(e.storage_id, e.device, e.dtype, e.nbytes, self._event(phase), phase=phase)
            if node is not None:
                a.op, a.node_seq, a.node_ref = node.name, getattr(node, "seq", None), weakref.ref(node)
            a.module = self._module_path(ctx.scope)
            if self.lines:
                site = sites.user_site()
                a.line = None if site is None else site.label
            self.allocations[e.storage_id] = a
        elif kind is events.StorageFreed:
            a = self.allocations.get(e.storage_id)
            if a is not None and a.end is None:
                a.end = self._event(self._phase_now())
                copy = self._open_copies.pop(e.storage_id, None)
                if copy is not None:  # (its host mirror dies with it)
                    copy.end = a.end
        elif kind is events.StorageStateChanged:
            self._on_state(e)
        elif kind is events.VersionBump:
            # an optimizer writes its parameters: the gradients it reads are the parameters' now (a step need
            # allocate nothing, and zero_grad() may drop them before the recording ends)
            if sites.context.optimizer is not None and not self._grads_noted:
                self._grads_noted = True
                self._note_grads()
        elif kind is events.OpRecorded:
            node = e.node
            label = f"{node.name} #{getattr(node, 'seq', '?')}"
            out = self.allocations.get(e.output_id) if e.output_id is not None else None
            # (the result is made after the forward returned: the allocation just before this event; a view or an
            # in-place op's result is an older storage, which keeps what made it)
            if out is not None and out.op is None and 0 <= out.start == len(self.times) - 1:
                out.op, out.node_seq, out.node_ref = node.name, getattr(node, "seq", None), weakref.ref(node)
                out.phase = "forward" if out.phase == "other" else out.phase
                self.phases[out.start] = out.phase
            for t in getattr(node, "saved", None) or ():
                st = getattr(t, "_st", None)
                if st is not None:
                    self._saved.setdefault(st.id, label)

    def _phase_now(self) -> str:
        """The phase of an event that is not an allocation (a free, a copy): the op's, else the phase goes on (a free
        between two ops, when Python drops a tensor)."""
        ctx = sites.context
        phase = ("optimizer" if ctx.optimizer is not None else "backward" if ctx.backward else
                 "forward" if ctx.node is not None else None)
        return phase if phase is not None else (self.phases[-1] if self.phases else "other")

    def _on_state(self, e) -> None:
        """A storage's residency changed: a copy between device and host, and a host mirror made or dropped."""
        sid = e.storage_id
        has_copy = sid in self._open_copies
        if e.direction is None and has_copy == (e.residency == "both"):
            return  # (only a dirty side changed: no bytes moved, none made or freed)
        phase = self._phase_now()
        i = self._event(phase)
        if self.truncated:  # (this event ended the recording: its categories are settled)
            return
        site = sites.user_site() if self.lines else None
        line = None if site is None else site.label
        home = self.allocations.get(sid)
        if e.direction:
            self.transfers.append(Transfer(i, sid, home.device if home else "?", e.direction, e.nbytes, e.seconds,
                                           line))
        if e.residency == "both" and not has_copy:
            self._open_copy(sid, e.nbytes or (home.nbytes if home else 0), i, phase, line)
        elif e.residency != "both" and has_copy:
            self._open_copies.pop(sid).end = i

    def _open_copy(self, sid: int, nbytes: int, index: int, phase: str, line: str | None) -> None:
        home = self.allocations.get(sid)
        copy = Allocation(sid, "cpu", home.dtype if home else "?", nbytes, index, phase=phase, line=line,
                          category="host copies")
        self._open_copies[sid] = copy
        self.host_copies.append(copy)

    def _module_path(self, scope) -> str | None:
        if not scope:
            return None
        names = self._modules
        for entry in reversed(scope):  # (the innermost module the model names)
            name = names.get(id(entry))
            if name is not None:
                return name
        last = scope[-1]
        return getattr(last, "name", None) or type(last).__name__

    # ---- categories ----------------------------------------------------------------------------------------
    def _note_grads(self) -> None:
        """Remember which storages are the parameters' gradients now: ``zero_grad()`` (set to None) may drop them
        before the recording ends, and they are gradients all the same."""
        model = self._model() if self._model is not None else None
        named = list(model.named_parameters()) if model is not None else []
        for ref in self._optimizers:
            opt = ref()
            if opt is not None:
                named += [("", p) for g in opt.param_groups for p in g["params"]]
        names = {id(p): n for n, p in named if n}
        for _, p in named:
            g = p.grad
            if g is not None:
                self._grads.setdefault(g._storage.id, names.get(id(p), "parameter") + ".grad")

    def _named(self) -> dict[int, tuple[str, str]]:
        """Storage id -> (category, name) for the model's parameters and gradients and the optimizers' state."""
        out: dict[int, tuple[str, str]] = {}
        model = self._model() if self._model is not None else None
        params = list(model.named_parameters()) if model is not None else []
        for name, p in params:
            out.setdefault(p._storage.id, ("parameters", name))
        for name, p in params:
            if p.grad is not None:
                out.setdefault(p.grad._storage.id, ("gradients", name + ".grad"))
        names = {id(p): n for n, p in params}
        for sid, label in self._grads.items():
            out.setdefault(sid, ("gradients", label))
        for ref in self._optimizers:
            opt = ref()
            if opt is None:
                continue
            for group in opt.param_groups:
                for p in group["params"]:
                    out.setdefault(p._storage.id, ("parameters", names.get(id(p), "parameter")))
                    if p.grad is not None:
                        out.setdefault(p.grad._storage.id, ("gradients", names.get(id(p), "parameter") + ".grad"))
                    for key, value in opt.state.get(p, {}).items():
                        if hasattr(value, "_storage"):
                            label = f"{type(opt).__name__} {key} of {names.get(id(p), 'a parameter')}"
                            out.setdefault(value._storage.id, ("optimizer state", label))
        return out

    def _classify(self) -> None:
        """Give every allocation its category from what is known now (at the end; while recording, provisionally,
        whenever the recording is read)."""
        named = self._named()
        spans = self.phase_spans()
        span_starts = [lo for lo, _, _ in spans]
        # events in a phase other than "other" before each index: an "other" allocation freed with none of them in
        # between died in the statement that made it (an op run without recording, e.g. under no_grad)
        busy = np.concatenate([[0], np.cumsum([p != "other" for p in self.phases])])
        for a in self.allocations.values():
            hit = named.get(a.storage_id)
            if hit is not None:
                a.category, a.name = hit
            elif a.storage_id in self._saved:
                a.category, a.saved_by = "saved for backward", self._saved[a.storage_id]
            elif a.start < 0:
                a.category = "inputs and data"
            elif a.phase == "other":
                a.category = "temporaries" if a.end is not None and busy[a.end] == busy[a.start] else \
                    "inputs and data"
            elif a.phase == "optimizer":
                a.category = "optimizer state" if a.end is None else "temporaries"
            else:
                span_end = spans[bisect.bisect_right(span_starts, a.start) - 1][1]
                a.category = "temporaries" if a.end is not None and a.end <= span_end else "outputs"
        for copy in self.host_copies:
            home = self.allocations.get(copy.storage_id)
            what = home and (home.name or (f"a {home.op} result" if home.op else None))
            copy.name = f"host copy of {what or f'storage {copy.storage_id}'}" + (f" ({home.device})" if home else "")
        self._classified_at = len(self.times)

    def _fresh(self) -> None:
        """While recording, classify what came since the last read (categories are settled at ``stop()``)."""
        if self.recording and self._classified_at != len(self.times):
            self._classify()

    # ---- reading ---------------------------------------------------------------------------------------------
    def _lives(self):
        """Every recorded allocation: the storages, then their host copies."""
        yield from self.allocations.values()
        yield from self.host_copies

    def __len__(self) -> int:
        return len(self.times)

    def phase_spans(self) -> list[tuple[int, int, str]]:
        """``(first, last, phase)`` for each run of events in one phase ("other" runs included)."""
        spans: list[tuple[int, int, str]] = []
        for i, p in enumerate(self.phases):
            if spans and spans[-1][2] == p:
                spans[-1] = (spans[-1][0], i, p)
            else:
                spans.append((i, i, p))
        return spans

    @property
    def devices(self) -> list[str]:
        """The devices that hold recorded storages, the one with the most bytes allocated first."""
        total: dict[str, int] = {}
        for a in self._lives():
            total[a.device] = total.get(a.device, 0) + a.nbytes
        return sorted(total, key=lambda d: -total[d])

    def _default_device(self) -> str:
        model = self._model() if self._model is not None else None
        if model is not None:
            for p in model.parameters():
                return str(p.device)
        return self.devices[0] if self.devices else "cpu"

    def series(self, device: str | None = None) -> dict[str, np.ndarray]:
        """Bytes alive on ``device`` (default: the model's, else the busiest) after each event, per category
        (:data:`CATEGORIES`; arrays of ``len(self) + 1``: index 0 is before the first event)."""
        self._fresh()
        device = device or self._default_device()
        n = len(self)
        delta = {c: np.zeros(n + 1, np.int64) for c in CATEGORIES}
        for a in self._lives():
            if a.device != device:
                continue
            d = delta[a.category]
            d[a.start + 1] += a.nbytes  # (start -1: alive at index 0)
            if a.end is not None:
                d[a.end + 1] -= a.nbytes
        out = {c: np.cumsum(d) for c, d in delta.items()}
        cached = self.pool_cached.get(device)
        if cached is not None:  # (before the device's first event, what its pool held then)
            first = len(self) - len(cached)
            out["pool cache (free)"] = np.asarray([self._pool_start.get(device, 0)] * (first + 1) + cached, np.int64)
        return out

    def totals(self, device: str | None = None) -> np.ndarray:
        return sum(self.series(device).values())

    @property
    def peak(self) -> Peak:
        """The event after which the most bytes were alive on the default device (see :meth:`peak_on`)."""
        return self.peak_on(None)

    def peak_on(self, device: str | None) -> Peak:
        """The event after which the most bytes were alive on ``device`` (storages only, not a pool's cache), with
        the storages alive then."""
        device = device or self._default_device()
        s = self.series(device)
        total = sum(v for c, v in s.items() if c != "pool cache (free)")
        i = int(np.argmax(total))
        return Peak(index=i - 1, bytes=int(total[i]), device=device, alive=self.alive_at(i - 1, device))

    def alive_at(self, index: int, device: str | None = None) -> list[Allocation]:
        """The storages alive right after event ``index`` (-1: when the recording began), largest first."""
        self._fresh()
        device = device or self._default_device()
        alive = [a for a in self._lives()
                 if a.device == device and a.start <= index and (a.end is None or a.end > index)]
        return sorted(alive, key=lambda a: -a.nbytes)

    def span(self, module: str) -> tuple[int, int]:
        """``(first, last)``: the events of the allocations made inside module ``module`` (a path such as ``"h.1"``;
        its submodules' included) -- e.g. ``by_category(last)`` minus ``by_category(first - 1)`` is what one block's
        forward left alive."""
        def within(path: str | None) -> bool:
            return path is not None and (path == module or path.startswith(module + "."))
        inside = [a.start for a in self.allocations.values() if a.start >= 0 and within(a.module)]
        if not inside:
            known = sorted({a.module for a in self.allocations.values() if a.module})
            raise KeyError(f"no allocation was made inside module {module!r}; modules seen: {known[:12]}"
                           + (" (pass model= to tl.memory_timeline to name them by path)" if not self._modules else ""))
        return min(inside), max(inside)

    def by_category(self, index: int, device: str | None = None) -> dict[str, int]:
        """Bytes alive right after event ``index``, per category."""
        out = dict.fromkeys(CATEGORIES, 0)
        for a in self.alive_at(index, device):
            out[a.category] += a.nbytes
        return out

    def summary(self) -> str:
        p = self.peak
        if self.truncated:
            name = f" {self.name}" if self.name else ""
            return f"memory timeline{name}: stopped at {len(self):,} events (max_events)"
        cats = self.by_category(p.index)
        rows = [f"  {c:<20} {_fmt(b):>10}" for c, b in cats.items() if b]
        head = (f"memory timeline{' ' + self.name if self.name else ''}: {len(self):,} events, "
                f"{len(self.allocations):,} storages; peak {_fmt(p.bytes)} on {p.device} after event {p.index}")
        top = [f"  largest at the peak: {_fmt(a.nbytes)} {a.category}"
               f"{' (' + (a.saved_by or a.name or a.who) + ')'}" for a in p.alive[:3]]
        moved = self.transfer_totals()
        copies = [f"  copies: {n:,} {'to the host (d2h)' if d == 'd2h' else 'to the device (h2d)'}, {_fmt(b)}"
                  for d, (n, b) in moved.items() if n]
        return "\n".join([head, *rows, *top, *copies])

    def transfer_totals(self, device: str | None = None) -> dict[str, tuple[int, int]]:
        """``{"d2h": (count, bytes), "h2d": (count, bytes)}``: the copies between the host and ``device`` (None: any
        device)."""
        out = {"d2h": (0, 0), "h2d": (0, 0)}
        for t in self.transfers:
            if device is None or t.device == device:
                n, b = out[t.direction]
                out[t.direction] = (n + 1, b + t.nbytes)
        return out

    def __repr__(self) -> str:
        state = "recording" if self.recording else f"{len(self):,} events"
        return f"<MemoryTimeline {state}, {len(self.allocations):,} storages>"


@dataclass
class Peak:
    index: int
    bytes: int
    device: str
    alive: list = field(default_factory=list)


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _pool_of(device: str):
    """The buffer pool of a device backend (``cuda``, ``cuda-emu``, ``sim``), or None."""
    from .device import get_device  # (the device layer sits above this module)

    try:
        backend = get_device(device).raw_backend
    except Exception:  # noqa: BLE001 - a device without a pool simply has none
        return None
    return getattr(backend, "pool", None)


def _scan_storages() -> list:
    """Every storage alive now, like ``storage.live_storages()``, but without starting the registry that keeps it
    cheap to ask again (which makes every later tensor's storage at once): a recording asks once, at its start.
    Tensors whose storage was not made yet get it now."""
    if storage._tracking:
        return storage.live_storages()
    from .tensor_base import TensorBase  # (tensor_base is a higher layer than storage: imported when asked)
    objects = gc.get_objects()
    found = {id(o): o for o in objects if type(o) is storage.Storage}
    for o in objects:
        if issubclass(type(o), TensorBase):  # (not isinstance: some objects compute __class__)
            st = o._storage  # (made now if need be)
            found[id(st)] = st
    return sorted(found.values(), key=lambda st: st.id)


def memory_timeline(model=None, optimizer=None, *, lines: bool = True, name: str = "",
                    max_events: int = 500_000) -> MemoryTimeline:
    """``with tl.memory_timeline(model=net, optimizer=opt) as mem: ...``: record where the memory goes (see
    :mod:`tinygrad_like.memory_timeline`)."""
    return MemoryTimeline(model, optimizer, lines=lines, name=name, max_events=max_events)
