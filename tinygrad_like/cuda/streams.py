"""``tl.cuda.streams`` (``torch.cuda.Stream``, ``Event``, ``stream(...)``): the one stream our kernels run on.

The CUDA backend launches every kernel, in order, on the device's default stream. A :class:`Stream` here is that
stream: ``current_stream()`` and ``default_stream()`` return it, ``with torch.cuda.stream(s):`` runs the block on
it (so code written for side streams stays correct, only not concurrent), and ``synchronize()`` waits for it.
An :class:`Event` is a real CUDA event: ``record``, ``synchronize``, ``query`` and ``elapsed_time`` as PyTorch's.
Without CUDA, making either raises, as PyTorch's; ``stream(None)`` and ``set_stream(None)`` are no-ops everywhere.
"""

from __future__ import annotations

from typing import Any

from ..unsupported import unsupported_class, unsupported_function
from ._base import checked_index, need_cuda, runtime, with_params

__all__ = ["Stream", "Event", "ExternalStream", "StreamContext", "stream", "current_stream", "default_stream",
           "set_stream", "get_stream_from_external", "is_current_stream_capturing"]

ONE_STREAM = ("tinygrad_like's CUDA backend launches every kernel on the device's default stream; a stream made "
              "elsewhere (another library's, or one from a raw pointer) cannot carry its work")


class Stream:
    """The device's default stream (the one every kernel of ours runs on). ``priority`` is recorded."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device_index = checked_index(device, "Stream()")
        self.priority = int(priority)
        self.cuda_stream = 0  # (the default stream's handle)

    @property
    def device(self):
        # (waits: tl.device is built after tl.cuda's modules)
        from ..device import get_device as make_device

        return make_device(f"cuda:{self.device_index}")

    def synchronize(self) -> None:
        """Wait for everything queued on the stream."""
        runtime(start=True).synchronize()

    def query(self) -> bool:
        """Whether all queued work is done (answered by waiting for it: the stream is the device's only one)."""
        self.synchronize()
        return True

    def wait_event(self, event: Event) -> None:
        """Later work waits for ``event``: on one stream it already does."""

    def wait_stream(self, stream: Stream) -> None:
        """Later work waits for ``stream``'s: on one stream it already does."""

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.device_index == self.device_index

    def __hash__(self) -> int:
        return hash(("cuda-stream", self.device_index))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:{self.device_index} cuda_stream=0x0>"


class Event:
    """A CUDA event: ``record()`` it on the stream, ``synchronize()`` waits for it, ``elapsed_time(end)`` is the
    milliseconds between two (``enable_timing`` and the others are recorded)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 external: bool = False) -> None:
        need_cuda("Event()")
        self.enable_timing, self.blocking, self.interprocess, self.external = (enable_timing, blocking,
                                                                             interprocess, external)
        self._event = None

    def record(self, stream: Stream | None = None) -> None:
        rt = runtime(start=True)
        if self._event is None:
            self._event = rt.drv.Event()
        self._event.record(None)  # (the default stream: the only one)

    def synchronize(self) -> None:
        if self._event is not None:
            self._event.synchronize()

    def query(self) -> bool:
        return self._event is None or bool(self._event.query())

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream`` wait for this event: on one stream, work after it already does."""

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to ``end_event`` (both recorded, ``end_event`` complete)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._event is None or end_event._event is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return float(end_event._event.time_since(self._event))

    def __repr__(self) -> str:
        return f"<torch.cuda.Event {'recorded' if self._event is not None else 'uninitialized'}>"


def current_stream(device: Any = None) -> Stream:
    return Stream(device)


def default_stream(device: Any = None) -> Stream:
    return Stream(device)


def set_stream(stream: Stream | None) -> None:
    """Make ``stream`` current: every stream here is the default one, so there is nothing to switch."""
    if stream is not None and not isinstance(stream, Stream):
        raise TypeError(f"set_stream expects a torch.cuda.Stream or None, got {type(stream).__name__}")


class StreamContext:
    """``with StreamContext(s):`` runs the block on ``s`` (the default stream here); ``None`` is a no-op."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        set_stream(self.stream)

    def __exit__(self, *exc: object) -> None:
        return None


def stream(stream: Stream | None) -> StreamContext:
    """``with torch.cuda.stream(s):``: see :class:`StreamContext`."""
    return StreamContext(stream)


def is_current_stream_capturing() -> bool:
    """False: nothing here captures CUDA graphs (see ``not_implemented.md``: CUDAGraph)."""
    return False


ExternalStream = with_params(unsupported_class("torch.cuda.streams.ExternalStream", ONE_STREAM),
                             lambda stream_ptr, device=None, **kwargs: None)
get_stream_from_external = with_params(unsupported_function("torch.cuda.get_stream_from_external", ONE_STREAM),
                                       lambda data_ptr, device=None: None)
