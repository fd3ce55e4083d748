"""torch's control-flow and asynchronous helpers, run eagerly: ``cond`` (``torch.cond``: an if/else a compiler can
trace), ``fork`` and ``wait`` (``torch.jit.fork``'s futures), ``Future``, and the CPU's ``Stream`` and ``Event``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .device import get_device
from .tensor_base import TensorBase

__all__ = ["cond", "fork", "wait", "Future", "Stream", "Event"]


def cond(pred, true_fn: Callable, false_fn: Callable, operands: tuple | list = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; ``pred`` is a bool, a number or a
    one-element tensor (as torch)."""
    if isinstance(pred, TensorBase):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got a tensor of shape "
                               f"{tuple(pred.shape)}")
        pred = bool(pred.item())
    elif not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {type(pred).__name__}")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple or list, got {type(operands).__name__}")
    return (true_fn if pred else false_fn)(*operands)


class Future:
    """The result of an asynchronous computation. Here every computation has finished when its Future is made
    (``fork`` runs eagerly), or it is completed with ``set_result``."""

    def __init__(self, *, devices=None):
        self._done, self._value, self._error = False, None, None
        self._callbacks: list[Callable] = []

    def done(self) -> bool:
        return self._done

    def wait(self) -> Any:
        if not self._done:
            raise RuntimeError("Future.wait(): the future has no result yet, and nothing here will ever set one "
                               "(computations run eagerly: call set_result first)")
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> Any:
        return self.wait()

    def set_result(self, result: Any) -> None:
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._done, self._value = True, result
        for cb in self._callbacks:
            cb(self)

    def set_exception(self, result: BaseException) -> None:
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._done, self._error = True, result
        for cb in self._callbacks:
            cb(self)

    def then(self, callback: Callable) -> Future:
        nxt = Future()

        def run(fut: Future) -> None:
            try:
                nxt.set_result(callback(fut))
            except Exception as e:  # (the next future carries the callback's error, as torch's)
                nxt.set_exception(e)

        if self._done:
            run(self)
        else:
            self._callbacks.append(run)
        return nxt

    def add_done_callback(self, callback: Callable) -> None:
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)


def fork(func: Callable, *args: Any, **kwargs: Any) -> Future:
    """Run ``func(*args, **kwargs)`` now and return a completed :class:`Future` of its result (torch.jit.fork runs
    it eagerly too when not scripted)."""
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as e:
        fut.set_exception(e)
    return fut


def wait(future: Future) -> Any:
    """The value of a :class:`Future`."""
    if not isinstance(future, Future):
        raise TypeError(f"wait(): expected a Future, got {type(future).__name__}")
    return future.wait()


_NO_EVENTS = "cpu backend doesn't support events."


def _cpu_device(device, what: str):
    d = get_device("cpu" if device is None else device)
    if d.type != "cpu":
        raise RuntimeError(f"torch.{what}({str(device)!r}): only the CPU's {what.lower()} exists at the top level "
                           f"here; for CUDA use tl.cuda's streams and events")
    return d


class Stream:
    """torch.Stream on the CPU: one in-order stream, always idle (every op has finished when it returns); as in
    torch, recording an event on it is refused (the CPU backend has no events)."""

    def __init__(self, device=None, *, priority: int = 0):
        self.device = _cpu_device(device, "Stream")
        self.device_type, self.device_index, self.stream_id = 0, -1, 0

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def wait_event(self, event) -> None:
        return None

    def wait_stream(self, stream) -> None:
        raise RuntimeError(_NO_EVENTS)

    def record_event(self, event=None):
        raise RuntimeError(_NO_EVENTS)

    def is_capturing(self) -> bool:
        return False

    @property
    def native_handle(self):
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash(("cpu", self.stream_id))

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __repr__(self) -> str:
        return "torch.Stream device_type=cpu, device_index=-1, stream_id=0"


class Event:
    """torch.Event on the CPU: it can be made, queried and waited on (always complete); recording it is refused,
    as torch's CPU backend refuses it."""

    def __init__(self, device=None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        self.device = _cpu_device(device, "Event")
        self.enable_timing = enable_timing
        self.event_id = 0

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def wait(self, stream=None) -> None:
        return None

    def record(self, stream=None) -> None:
        raise RuntimeError(_NO_EVENTS)

    def elapsed_time(self, end_event: Event) -> float:
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise RuntimeError(_NO_EVENTS)

    def __repr__(self) -> str:
        return "torch.Event device_type=cpu, device_index=-1, event_flag=0, event_id=0"
