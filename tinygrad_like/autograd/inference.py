"""``inference_mode``: ``no_grad`` under PyTorch's other name.

PyTorch's inference mode also marks the tensors made inside as *inference tensors* (no version counter,
refused later in autograd); here it is exactly ``no_grad`` (nothing is recorded) plus the flag that
``is_inference_mode_enabled()`` reads. Context manager and decorator, with or without parentheses, and
``inference_mode(False)`` to switch it off inside.

>>> import tinygrad_like as tl
>>> x = tl.ones(2, requires_grad=True)
>>> with tl.inference_mode():
...     y = x * 2
...     print(tl.is_inference_mode_enabled())
True
>>> y.requires_grad, tl.is_inference_mode_enabled()
(False, False)
"""

from __future__ import annotations

import functools
import threading

from .grad_mode import state as _grad_mode

__all__ = ["inference_mode", "is_inference_mode_enabled"]


class _State(threading.local):
    enabled = False


_state = _State()


def is_inference_mode_enabled() -> bool:
    return _state.enabled


class inference_mode:
    """``with tl.inference_mode():`` / ``@tl.inference_mode()`` / ``@tl.inference_mode``: no graph recorded."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # bare decorator: @tl.inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self._prev: list[tuple[bool, bool]] = []

    def __enter__(self):
        self._prev.append((_grad_mode.enabled, _state.enabled))
        if self.mode:
            _grad_mode.enabled = False
        _state.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _grad_mode.enabled, _state.enabled = self._prev.pop()
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper

    def clone(self) -> inference_mode:
        return inference_mode(self.mode)
