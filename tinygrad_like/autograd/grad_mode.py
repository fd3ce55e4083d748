"""Whether ops record the autograd graph: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

Per thread, as in PyTorch: each thread starts with grad enabled, and a ``no_grad`` block (or a backward pass,
which runs without recording) in one thread leaves the others alone. Ops read ``state.enabled`` (a
``threading.local``; ~40 ns a read).
"""

from __future__ import annotations

import functools
import threading


class _State(threading.local):
    enabled = True  # the class attribute is each new thread's starting value


#: This thread's grad mode: read by every op, switched by the context managers below and by the engine.
state = _State()


def __getattr__(name: str):
    if name == "enabled":  # the old module-level flag, read-only: this thread's mode
        return state.enabled
    if name in ("inference_mode", "is_inference_mode_enabled"):  # (torch.autograd.grad_mode has them too)
        from . import inference  # (inference imports this module's state: a module-level import would be a cycle)
        return getattr(inference, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_grad_enabled() -> bool:
    return state.enabled


class _GradMode:
    mode = True

    def __init__(self):
        self._prev: list[bool] = []

    def __enter__(self):
        self._prev.append(state.enabled)
        state.enabled = self.mode
        return self

    def __exit__(self, *exc):
        state.enabled = self._prev.pop()
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

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if orig_func is None:
            return self
        self.__init__()
        return self(orig_func)


class no_grad(_NoParam):
    """Ops inside do not record the graph (``with tl.no_grad(): ...``)."""

    mode = False

    def __init__(self) -> None:  # (torch's signature: no_grad() takes nothing; @no_grad bare goes through __new__)
        super().__init__()


class enable_grad(_NoParam):
    """Turn recording back on inside a ``no_grad`` block."""

    mode = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` works both as a call and as a context manager."""

    def __init__(self, mode: bool):
        super().__init__()
        self.mode = bool(mode)
        self._prev.append(state.enabled)
        state.enabled = self.mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        state.enabled = self._prev.pop()
        return False

    def __call__(self, fn):
        """As a decorator: undo the switch the call itself made; switch only while ``fn`` runs."""
        state.enabled = self._prev.pop()
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class _Flag:
    """A switch set when constructed and restored on exit; also a decorator (torch's form of
    ``set_multithreading_enabled`` and ``enforce_grad_layout_policy``)."""

    _value = True  # this class's current setting (process-wide here)

    def __init__(self, mode: bool) -> None:
        cls = type(self)
        self.prev = cls._value
        cls._value = bool(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        type(self)._value = self.prev

    def __call__(self, fn):
        type(self)._value = self.prev  # as a decorator: only while fn runs
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)(mode):
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)(self.mode)


class set_multithreading_enabled(_Flag):
    """Whether backward may run on several threads. The engine here always runs one node at a time on the
    calling thread, so the setting is kept (and restored) but changes nothing, as for a CPU-only torch graph."""

    def __init__(self, mode: bool) -> None:
        super().__init__(mode)


class enforce_grad_layout_policy(_Flag):
    """Whether an accumulated ``.grad`` must have its parameter's strides. The engine here has no layout
    contract to enforce or relax (a leaf's gradient is a fresh tensor, never a view of another), so the setting
    is kept and restored but changes nothing."""

    def __init__(self, enable: bool = True) -> None:
        super().__init__(enable)


def is_multithreading_enabled() -> bool:
    """The last ``set_multithreading_enabled`` setting (True by default)."""
    return set_multithreading_enabled._value
