"""``Storage`` owns a tensor's bytes: a host copy, a device copy, or both.

State machine (``residency`` / ``dirty``)::

    cpu-home storage:    residency "cpu", dirty None, always.
    device-home storage: "gpu"  --host read-->  "both", dirty None   (download: d2h)
                         "both" --device write--> dirty "gpu"        (host mirror stale)
                         "both" --host write--> dirty "cpu"          (device copy stale;
                                                 uploaded at the device's next op: h2d)
                         "both" --drop_host()--> "gpu"

``version`` counts in-place writes (shared by every view of the storage); each bump remembers the
user's line that caused it. ``fence`` is pending device work (a CUDA event) or ``None``.
"""

from __future__ import annotations

import itertools
import weakref
from collections import deque
from typing import TYPE_CHECKING

from . import events
from .sites import user_site

if TYPE_CHECKING:
    from .device import Device
    from .dtypes import DType

_next_id = itertools.count(1).__next__

# A weak registry: refs without callbacks (cheaper than a WeakSet on the hot path), compacted
# whenever the list doubles, so dead entries cost amortised O(1) and bounded memory.
_registry: list[weakref.ref] = []
_ref = weakref.ref
_compact_at = 1024


def _compact() -> None:
    global _compact_at
    _registry[:] = [r for r in _registry if r() is not None]
    _compact_at = max(1024, 2 * len(_registry))


def live_storages() -> list[Storage]:
    """Every storage still alive (the registry holds them weakly: listing keeps nothing alive)."""
    _compact()
    return [s for s in (r() for r in _registry) if s is not None]


class Bump:
    """One version bump: which version it produced, by which op, at which user line."""

    __slots__ = ("version", "op", "site")

    def __init__(self, version: int, op: str, site):
        self.version, self.op, self.site = version, op, site

    def __repr__(self) -> str:
        return f"<v{self.version} by {self.op} at {self.site}>"


class Storage:
    """The bytes behind one or more tensors (views share a storage and its version counter)."""

    __slots__ = ("id", "device", "dtype", "numel", "host", "dev", "dirty", "version", "fence", "bumps",
                 "name", "__weakref__")

    def __init__(self, device: Device, dtype: DType, numel: int, host=None, dev=None):
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
        _registry.append(_ref(self))
        if len(_registry) >= _compact_at:
            _compact()
        if events.ACTIVE:
            events.emit(events.StorageAllocated(self.id, str(device), dtype.name, self.nbytes, events.now()))

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
        """Record one in-place write: increments ``version`` and remembers the user's line."""
        self.version += 1
        site = user_site()
        if self.bumps is None:
            self.bumps = deque(maxlen=16)
        self.bumps.append(Bump(self.version, op, site))
        if events.ACTIVE:
            events.emit(events.VersionBump(self.id, self.version, op, site, events.now()))

    def bumps_since(self, version: int) -> list[Bump]:
        """Recorded bumps that moved the version past ``version`` (oldest first)."""
        return [b for b in (self.bumps or ()) if b.version > version]

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
