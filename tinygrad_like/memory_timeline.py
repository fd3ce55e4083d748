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

``mem.series()`` gives bytes alive per category at each event (the x axis is the event index; ``mem.times`` the
clock), ``mem.peak`` the peak and what was alive there, ``mem.alive_at(i)`` the storages alive after event ``i``.
``MemoryTimelineView`` (in ``widgets``) draws it.

What is counted: a storage's bytes once, however many tensors view it, on its home device (a ``cpu`` tensor's
NumPy array; a device tensor's buffer, not its host mirror). What is not: memory no tensor owns (NumPy's scratch
inside one primitive, a device kernel's workspace, Python objects). While nobody records, none of this costs
anything: storages are watched for their death only while someone listens for ``StorageFreed``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from . import events, sites, storage

__all__ = ["memory_timeline", "MemoryTimeline", "Allocation", "CATEGORIES"]

#: the categories, in the order a stacked plot draws them (bottom first)
CATEGORIES = ("parameters", "optimizer state", "gradients", "saved for backward", "outputs", "temporaries",
              "inputs and data", "pool cache (free)")
_KINDS = (events.StorageAllocated, events.StorageFreed, events.OpRecorded, events.VersionBump)


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


class MemoryTimeline:
    """A recording of storage lives (see the module docstring). Use ``tl.memory_timeline(...)`` as a context
    manager; ``model`` and ``optimizer`` name parameters, gradients and optimizer state (held weakly); ``lines``
    records the user's line of each allocation (a stack walk each, on by default)."""

    def __init__(self, model=None, optimizer=None, *, lines: bool = True, name: str = ""):
        self._model = None if model is None else weakref.ref(model)
        opts = optimizer if isinstance(optimizer, (list, tuple)) else ([] if optimizer is None else [optimizer])
        self._optimizers = [weakref.ref(o) for o in opts]
        self.lines = lines
        self.name = name
        self.allocations: dict[int, Allocation] = {}  # storage id -> its life (in allocation order)
        self.times: list[float] = []                   # the clock at each event
        self.phases: list[str] = []                    # the phase at each event
        self.pool_cached: list[int] = []               # a pool's cached-free bytes after each event (0 without)
        self._saved: dict[int, str] = {}
        self._grads: dict[int, str] = {}  # storage id -> the parameter it was the gradient of (seen at a phase end)
        self._grads_noted = False
        self._unsubscribe = None
        self._modules: dict[int, str] = {}
        self._pools: dict[str, object] = {}
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
        self._unsubscribe = events.subscribe(self._on_event, kinds=_KINDS)  # (before the scan: eager storages)
        self._unlisten = sites.listen(self) if self.lines else None
        self._scopes_before = sites.record_scopes(True)  # (module paths: the scope each op runs in)
        self.started = events.now()
        for st in storage.scan_storages():  # (once: no registry kept after, see scan_storages)
            self.allocations[st.id] = Allocation(st.id, str(st.device), st.dtype.name, st.nbytes, -1)
            storage.watch_free(st)
        return self

    def stop(self) -> MemoryTimeline:
        if self._unsubscribe is None:
            return self
        self._unsubscribe()
        self._unsubscribe = None
        if self._unlisten is not None:
            self._unlisten()
        sites.record_scopes(self._scopes_before)
        self.stopped = events.now()
        self._note_grads()
        self._classify()
        return self

    @property
    def recording(self) -> bool:
        return self._unsubscribe is not None

    def _event(self, phase: str) -> int:
        i = len(self.times)
        if self.phases and self.phases[-1] != phase:
            self._note_grads()  # (a phase ends: the gradients of the parameters are what backward left)
        self.times.append(events.now())
        self.phases.append(phase)
        self.pool_cached.append(sum(getattr(p, "cached", 0) for p in self._pools.values()))
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
                ctx = sites.context
                phase = ("optimizer" if ctx.optimizer is not None else "backward" if ctx.backward else
                         "forward" if ctx.node is not None else None)
                if phase is None:  # (a free between two ops, when Python drops a tensor: the phase goes on)
                    phase = self.phases[-1] if self.phases else "other"
                a.end = self._event(phase)
        elif kind is events.VersionBump:
            # an optimizer writes its parameters: the gradients it reads are the parameters' now (a step need
            # allocate nothing, and zero_grad() may drop them before the recording ends)
            if sites.context.optimizer is not None and not self._grads_noted:
                self._grads_noted = True
                self._note_grads()
            elif sites.context.optimizer is None:
                self._grads_noted = False
        elif kind is events.OpRecorded:
            node = e.node
            label = f"{node.name} #{getattr(node, 'seq', '?')}"
            out = self.allocations.get(e.output_id) if e.output_id is not None else None
            if out is not None and out.op is None:  # (the result is made after the forward returned)
                out.op, out.node_seq, out.node_ref = node.name, getattr(node, "seq", None), weakref.ref(node)
                out.phase = "forward" if out.phase == "other" else out.phase
                self.phases[out.start] = out.phase
            for t in getattr(node, "saved", None) or ():
                st = getattr(t, "_st", None)
                if st is not None:
                    self._saved.setdefault(st.id, label)

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
        named = self._named()
        ends = self._phase_ends()
        for a in self.allocations.values():
            hit = named.get(a.storage_id)
            if hit is not None:
                a.category, a.name = hit
            elif a.storage_id in self._saved:
                a.category, a.saved_by = "saved for backward", self._saved[a.storage_id]
            elif a.start < 0 or a.phase == "other":
                a.category = "inputs and data"
            elif a.phase == "optimizer":
                a.category = "optimizer state" if a.end is None else "temporaries"
            else:
                span_end = ends.get(a.start)
                a.category = "temporaries" if a.end is not None and (span_end is None or a.end <= span_end) \
                    else "outputs"

    def _phase_ends(self) -> dict[int, int]:
        """Event index -> the last event index of the phase span it lies in."""
        out, spans = {}, self.phase_spans()
        for lo, hi, _ in spans:
            for i in range(lo, hi + 1):
                out[i] = hi
        return out

    # ---- reading ---------------------------------------------------------------------------------------------
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
        for a in self.allocations.values():
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
        device = device or self._default_device()
        n = len(self)
        delta = {c: np.zeros(n + 1, np.int64) for c in CATEGORIES}
        for a in self.allocations.values():
            if a.device != device:
                continue
            d = delta[a.category]
            d[a.start + 1] += a.nbytes  # (start -1: alive at index 0)
            if a.end is not None:
                d[a.end + 1] -= a.nbytes
        out = {c: np.cumsum(d) for c, d in delta.items()}
        if device != "cpu":
            out["pool cache (free)"] = np.asarray([0, *self.pool_cached], np.int64)
        return out

    def totals(self, device: str | None = None) -> np.ndarray:
        return sum(self.series(device).values())

    @property
    def peak(self) -> Peak:
        """The event after which the most bytes were alive (storages only, not the pool's cache), with them."""
        device = self._default_device()
        s = self.series(device)
        total = sum(v for c, v in s.items() if c != "pool cache (free)")
        i = int(np.argmax(total))
        return Peak(index=i - 1, bytes=int(total[i]), device=device, alive=self.alive_at(i - 1, device))

    def alive_at(self, index: int, device: str | None = None) -> list[Allocation]:
        """The storages alive right after event ``index`` (-1: when the recording began), largest first."""
        device = device or self._default_device()
        alive = [a for a in self.allocations.values()
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
        cats = self.by_category(p.index)
        rows = [f"  {c:<20} {_fmt(b):>10}" for c, b in cats.items() if b]
        head = (f"memory timeline{' ' + self.name if self.name else ''}: {len(self):,} events, "
                f"{len(self.allocations):,} storages; peak {_fmt(p.bytes)} on {p.device} after event {p.index}")
        top = [f"  largest at the peak: {_fmt(a.nbytes)} {a.category}"
               f"{' (' + (a.saved_by or a.name or a.who) + ')'}" for a in p.alive[:3]]
        return "\n".join([head, *rows, *top])

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


def memory_timeline(model=None, optimizer=None, *, lines: bool = True, name: str = "") -> MemoryTimeline:
    """``with tl.memory_timeline(model=net, optimizer=opt) as mem: ...``: record where the memory goes (see
    :mod:`tinygrad_like.memory_timeline`)."""
    return MemoryTimeline(model, optimizer, lines=lines, name=name)
