"""torch's control-flow and asynchronous helpers, run eagerly: ``cond`` (``torch.cond``: an if/else a compiler can
trace), ``fork`` and ``wait`` (``torch.jit.fork``'s futures) and ``Future``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .tensor_base import TensorBase

__all__ = ["cond", "fork", "wait", "Future"]


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
