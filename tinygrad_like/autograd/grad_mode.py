"""Whether ops record the autograd graph: ``no_grad``, ``enable_grad``, ``set_grad_enabled``."""

from __future__ import annotations

import functools

#: Read by every op; flipped by the context managers below (process-wide, not per thread).
enabled = True


def is_grad_enabled() -> bool:
    return enabled


class _GradMode:
    mode = True

    def __init__(self):
        self._prev: list[bool] = []

    def __enter__(self):
        global enabled
        self._prev.append(enabled)
        enabled = self.mode
        return self

    def __exit__(self, *exc):
        global enabled
        enabled = self._prev.pop()
        return False

    def __call__(self, fn):
        """Also usable as a decorator, as in PyTorch."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class _NoParam(_GradMode):
    """Also usable as a bare decorator, ``@tl.no_grad`` without parentheses (as in PyTorch 2)."""

    def __new__(cls, fn=None):
        self = super().__new__(cls)
        if fn is None:
            return self
        self.__init__()
        return self(fn)


class no_grad(_NoParam):
    """Ops inside do not record the graph (``with tl.no_grad(): ...``)."""

    mode = False


class enable_grad(_NoParam):
    """Turn recording back on inside a ``no_grad`` block."""

    mode = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` works both as a call and as a context manager."""

    def __init__(self, mode: bool):
        global enabled
        super().__init__()
        self.mode = bool(mode)
        self._prev.append(enabled)
        enabled = self.mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global enabled
        enabled = self._prev.pop()
        return False

    def __call__(self, fn):
        """As a decorator: undo the switch the call itself made; switch only while ``fn`` runs."""
        global enabled
        enabled = self._prev.pop()
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper
