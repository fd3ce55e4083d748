"""``Storage`` owns a tensor's bytes: a host copy, a device copy, or both.

State machine (``residency`` / ``dirty``)::

    cpu-home storage:    residency "cpu", dirty None, always.
    device-home storage: "gpu"  --host read-->  "both", dirty None   (download: d2h)
                         "both" --device write--> dirty "gpu"        (host mirror stale)
                         "both" --host write--> dirty "cpu"          (device copy stale;
                                                 uploaded at the device's next op: h2d)
                         "both" --drop_host()--> "gpu"

``version`` counts in-place writes (shared by every view of the storage); each bump remembers the
user's line that caused it (and the optimizer, inside ``step()``); repeats of one write are counted in
one record rather than stored again (the records: :mod:`.write_history`). ``fence`` is pending device work
(a CUDA event) or ``None``.
"""

from __future__ import annotations

import gc
import itertools
import weakref
from collections import deque
from typing import TYPE_CHECKING

from . import events
from .sites import context, user_site
from .write_history import Bump, Write, summarize_writes  # noqa: F401 - Write and summarize_writes: read from here

if TYPE_CHECKING:
    from .device import Device
    from .dtypes import DType

_next_id = itertools.count(1).__next__

# A weak registry: refs without callbacks (cheaper than a WeakSet), compacted whenever the list doubles, so dead
# entries cost amortised O(1) and bounded memory. It is kept only once a tool has asked for the live storages
# (``_tracking``): until then a new storage costs no registration (about a twentieth of a small op), and the first
# :func:`live_storages` finds the storages already alive through the garbage collector (each one is GC-tracked).
_registry: list[weakref.ref] = []
_ref = weakref.ref
_compact_at = 1024
_tracking = False
#: ``[True]`` while every new tensor gets its storage at once (a tool lists storages, or an observer listens for
#: allocations); otherwise a fresh op result on the host makes it on first use (``TensorBase._storage``).
eager = [False]


def _update_eager(active: bool | None = None) -> None:
    eager[0] = _tracking or (events.ACTIVE if active is None else active)


events.on_activation(_update_eager)


def _compact() -> None:
    global _compact_at
    _registry[:] = [r for r in _registry if r() is not None]
    _compact_at = max(1024, 2 * len(_registry))


def live_storages() -> list[Storage]:
    """Every storage still alive, oldest first (the registry holds them weakly: listing keeps nothing alive)."""
    global _tracking
    if not _tracking:
        _tracking = True  # (set first: a storage made while we scan registers itself)
        _update_eager()
        objects = gc.get_objects()
        _materialize_lazy(objects)  # (the storages it makes register themselves)
        found = [o for o in objects if type(o) is Storage]
        known = {id(s) for s in (r() for r in _registry) if s is not None}
        _registry[:0] = [_ref(o) for o in sorted(found, key=_by_id) if id(o) not in known]
    _compact()
    return sorted((s for s in (r() for r in _registry) if s is not None), key=_by_id)


def _materialize_lazy(objects) -> None:
    """Give every live tensor whose storage was not made yet its storage, so a listing sees all of them."""
    from .tensor_base import TensorBase  # (tensor_base is a higher layer: a module-level import would be a cycle)
    for o in objects:
        if issubclass(type(o), TensorBase) and o._st is None:  # (not isinstance: some objects compute __class__)
            o._storage  # noqa: B018  (the property makes it)


def live_storage_count() -> int:
    """How many storages are alive: a cheap question (no sorting, no list) for a view deciding whether to look again,
    since a storage dies without an event."""
    if not _tracking:
        return len(live_storages())
    return sum(1 for r in _registry if r() is not None)


def _by_id(s: Storage) -> int:
    return s.id


class Storage:
    """The bytes behind one or more tensors (views share a storage and its version counter)."""

    __slots__ = ("id", "device", "dtype", "numel", "host", "dev", "dirty", "version", "fence", "bumps",
                 "name", "views", "__weakref__")

    def __init__(self, device: Device, dtype: DType, numel: int, host=None, dev=None, announce: bool = True):
        self.id = _next_id()
        self.device = device
        self.dtype = dtype
        self.numel = numel
        self.host = host  # flat NumPy array, or None
        self.dev = dev  # backend buffer, or None for cpu-home storages
        self.dirty = None  # None (in sync), "cpu" (host newer) or "gpu" (device newer)
        self.version = 0
        self.fence = None
        self.bumps = None  # deque of recent Bump records, made on first bump
        self.name = None  # owner name where known, e.g. "fc1.weight"
        self.views = None  # weak references to the view tensors made over it (see autograd.view_history)
        if _tracking:
            _registry.append(_ref(self))
            if len(_registry) >= _compact_at:
                _compact()
        # (not announced: the storage of a tensor made earlier, while nobody listened, made now on first use; its
        # bytes were allocated then, and an observer reading tensors must not set off events by reading them)
        if events.ACTIVE:
            if announce and events.wants(events.StorageAllocated):
                events.emit(events.StorageAllocated(self.id, str(device), dtype.name, self.nbytes, events.now()))
            if events.wants_named(events.StorageFreed):
                events.watch_free(self)

    def __getstate__(self):
        """Pickling and deep copies: the slots, less ``views`` (weak references to the tensors viewing it, which
        pickle cannot save and a copy must not share: views made of the copy register themselves)."""
        return None, {name: getattr(self, name) for name in self.__slots__
                      if name not in ("views", "__weakref__") and hasattr(self, name)}

    def __setstate__(self, state) -> None:
        """A copy is a storage of its own: a new id, no views yet, listed among the live storages."""
        for name, value in state[1].items():
            setattr(self, name, value)
        self.id = _next_id()
        self.views = None
        if _tracking:
            _registry.append(_ref(self))
        if events.ACTIVE:  # (a copy is new memory: a deep copy of a model made while a memory timeline records)
            if events.wants(events.StorageAllocated):
                events.emit(events.StorageAllocated(self.id, str(self.device), self.dtype.name, self.nbytes,
                                                    events.now()))
            if events.wants_named(events.StorageFreed):
                events.watch_free(self)

    def __repr__(self) -> str:
        return (f"Storage(id={self.id}, device={self.device}, dtype={self.dtype.name}, numel={self.numel}, "
                f"residency={self.residency!r}, dirty={self.dirty!r}, version={self.version})")

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    @property
    def residency(self) -> str:
        if self.dev is None:
            return "cpu"
        return "gpu" if self.host is None else "both"

    # ---- versions ---------------------------------------------------------------------
    def bump(self, op: str) -> None:
        """Record one in-place write: increments ``version`` and remembers the user's line.

        A write that repeats the newest record (op, site, optimizer) extends it instead of adding one,
        so the 16 records kept are 16 distinct runs, however many steps a training loop made.
        """
        v = self.version = self.version + 1
        site = context.write_site
        if site is None:
            site = user_site()
        opt = context.optimizer
        bumps = self.bumps
        if bumps is None:
            bumps = self.bumps = deque(maxlen=16)
        last = bumps[-1] if bumps else None
        if last is not None and last.op == op and last.optimizer == opt and last.site == site:
            last.version = v  # (versions only move through here, so the run stays contiguous)
        else:
            bumps.append(Bump(v, op, site, opt))
        if events.ACTIVE and events.wants(events.VersionBump):
            events.emit(events.VersionBump(self.id, v, op, site, events.now()))

    def bumps_since(self, version: int) -> list[Bump]:
        """Copies of the records that moved the version past ``version`` (oldest first).

        A run that started at or before ``version`` is trimmed to its writes after it (its
        ``first_version`` moves up, so its ``count`` counts only those). Writes older than the kept
        records are not listed: compare the counts' sum with ``self.version - version``.
        """
        return [Bump(b.version, b.op, b.site, b.optimizer, max(b.first_version, version + 1))
                for b in (self.bumps or ()) if b.version > version]

    def writes_since(self, version: int) -> list[Write]:
        """The distinct writes since ``version``, each once with its count (see :func:`summarize_writes`)."""
        return summarize_writes(self.bumps_since(version))

    # ---- residency transitions ----------------------------------------------------------
    def _changed(self, direction, nbytes: int, seconds: float) -> None:
        if events.ACTIVE:
            events.emit(events.StorageStateChanged(self.id, self.residency, self.dirty, direction, nbytes,
                                                   seconds, events.now()))

    def host_array(self):
        """The flat host copy, downloading it first if the device copy is newer."""
        if self.dev is None:
            return self.host
        if self.host is None or self.dirty == "gpu":
            t0 = events.now()
            backend = self.device.raw_backend  # memory ops: never timed, never wait for pending uploads
            self.sync()
            if self.host is None:
                self.host = backend.download(self.dev, self.numel, self.dtype)
            else:
                backend.download_into(self.dev, self.host)
            self.dirty = None
            self._changed("d2h", self.nbytes, events.now() - t0)
        return self.host

    def device_buffer(self):
        """The device copy, uploading the host copy first if it is newer."""
        if self.dirty == "cpu":
            t0 = events.now()
            self.device.raw_backend.upload_into(self.host, self.dev)
            self.dirty = None
            self.device.pending.discard(self)
            self._changed("h2d", self.nbytes, events.now() - t0)
        return self.dev

    def mark_host_write(self) -> None:
        """The host copy was written: a device-home storage's device copy is now stale."""
        if self.dev is not None and self.dirty != "cpu":
            self.dirty = "cpu"
            self.device.mark_pending(self)
            self._changed(None, 0, 0.0)

    def mark_device_write(self) -> None:
        """The device copy was written: a host mirror, if any, is now stale."""
        if self.host is not None and self.dev is not None and self.dirty != "gpu":
            if self.dirty == "cpu":  # a write that bypassed the device's backend: never leave it pending
                self.device.pending.discard(self)
            self.dirty = "gpu"
            self._changed(None, 0, 0.0)

    def drop_host(self) -> None:
        """Free the host mirror of a device-home storage (uploading first if it is newer)."""
        if self.dev is not None and self.host is not None:
            self.device_buffer()
            self.host = None
            self.dirty = None
            self._changed(None, 0, 0.0)

    def sync(self) -> None:
        """Wait for pending device work on this storage (its fence)."""
        if self.fence is not None:
            self.device.raw_backend.wait(self.fence)
            self.fence = None
