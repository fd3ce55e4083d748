"""Kernel timings without a synchronisation per launch.

Each launch is bracketed by two CUDA events recorded on the stream; nothing waits for them then. At
a synchronisation point (``tl.cuda.synchronize()``, a download to the host, the end of a profile) the
pending records are read back, oldest first, and each becomes a ``KernelTimed`` event with its name,
grid, block, shapes and bytes. Records whose end event has not completed stay pending.

The event factory is injected so this is tested without a GPU; on the GPU it is ``pycuda.driver.Event``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ... import events
from ...sites import launch_context


@dataclass(slots=True)
class LaunchRecord:
    name: str
    grid: tuple
    block: tuple
    shapes: tuple
    nbytes: int
    host_start: float
    start: object
    end: object
    node_ref: object = None  # (weakly) the graph node that launched it, and the phase: read at launch
    phase: str | None = None  # (see sites.launch_context)


class LaunchTimer:
    """Records launches while someone listens to ``events``; ``collect()`` turns finished ones into events."""

    def __init__(self, make_event, device_name: str = "cuda:0", max_pending: int = 100_000):
        self._make_event = make_event
        self._device = device_name
        self._pending: deque[LaunchRecord] = deque()
        self._max_pending = max_pending
        self.dropped = 0

    def begin(self, stream=None):
        """Record and return the start event (call before the launch)."""
        ev = self._make_event()
        ev.record(stream)
        return ev

    def end(self, start, name: str, grid: tuple, block: tuple, shapes: tuple, nbytes: int, stream=None) -> None:
        """Record the end event and queue the launch (call right after it)."""
        ev = self._make_event()
        ev.record(stream)
        if len(self._pending) >= self._max_pending:  # nobody collects: keep memory bounded, count the loss
            self._pending.popleft()
            self.dropped += 1
        self._pending.append(LaunchRecord(name, grid, block, shapes, nbytes, events.now(), start, ev,
                                          *launch_context()))

    @property
    def pending(self) -> int:
        return len(self._pending)

    def collect(self, wait: bool = False) -> int:
        """Emit ``KernelTimed`` for every finished launch, oldest first; ``wait`` synchronises on the last one
        first (so everything recorded so far is finished). Returns how many were emitted."""
        if wait and self._pending:
            self._pending[-1].end.synchronize()
        n = 0
        while self._pending:
            rec = self._pending[0]
            if not rec.end.query():
                break
            self._pending.popleft()
            seconds = rec.end.time_since(rec.start) / 1000.0  # CUDA events measure milliseconds
            if events.ACTIVE:
                events.emit(events.KernelTimed(rec.name, self._device, rec.host_start, seconds, rec.shapes,
                                               rec.nbytes, rec.grid, rec.block, rec.node_ref, rec.phase))
            n += 1
        return n
