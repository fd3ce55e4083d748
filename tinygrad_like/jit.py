"""``torch.jit``, run eagerly: ``script`` and ``trace`` return what they are given, the decorators leave a
function as it is, and ``is_scripting()`` / ``is_tracing()`` are False. Like :func:`tinygrad_like.compile`, this
keeps every op running one at a time, which is what the views show. ``save`` and ``load`` (TorchScript archives)
raise: save a ``state_dict`` with ``torch.save`` instead.

>>> import tinygrad_like as tl
>>> @tl.jit.script
... def double(x):
...     return 2 * x
>>> double(tl.ones(2)), tl.jit.is_scripting()
(tensor([2., 2.]), False)
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

from .nn.module import Module

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "script_method", "interface", "annotate", "fork", "wait", "freeze", "optimize_for_inference", "save",
           "load", "ScriptModule", "ScriptFunction", "Final", "Attribute"]

Final = typing.Final


class ScriptModule(Module):
    """torch's compiled module class, as a name (``isinstance(m, torch.jit.ScriptModule)``): nothing here is one,
    since :func:`script` returns the module it is given."""


class ScriptFunction:
    """torch's compiled function class, as a name: nothing here is one."""


def script(obj: Any, optimize: None = None, _frames_up: int = 0, _rcb: Callable | None = None,
           example_inputs: list | dict | None = None) -> Any:
    """Returns ``obj`` itself (a module, function or class), to run eagerly."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-05,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """Returns ``func`` itself, to run eagerly (the example inputs are not run)."""
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-05, strict=True,
                 _force_outplace=False, _module_class=None, _compilation_unit=None, example_inputs_is_kwarg=False,
                 _store_inputs=True):
    """Returns ``mod`` itself, to run eagerly."""
    return mod


def ignore(drop: Any = False, **kwargs):
    """``@ignore`` or ``@ignore(drop=True)``: leaves the function as it is (the compiler it hides it from never
    runs here)."""
    if callable(drop):  # (used bare: ``drop`` is the function)
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    return fn


def export(fn: Callable) -> Callable:
    return fn


def script_method(fn: Callable) -> Callable:
    return fn


def interface(obj: Any) -> Any:
    return obj


def is_scripting() -> bool:
    """False: code always runs eagerly here."""
    return False


def is_tracing() -> bool:
    """False: code always runs eagerly here."""
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    return the_value


class _Future:
    def __init__(self, value: Any):
        self.value = value

    def wait(self) -> Any:
        return self.value


def fork(func: Callable, *args, **kwargs) -> _Future:
    """Runs ``func`` now; :func:`wait` gives its result."""
    return _Future(func(*args, **kwargs))


def wait(future: _Future) -> Any:
    return future.wait()


def freeze(mod, preserved_attrs: list[str] | None = None, optimize_numerics: bool = True):
    return mod


def optimize_for_inference(mod, other_methods: list[str] | None = None):
    return mod


def Attribute(value: Any, type: Any = None) -> Any:  # noqa: N802, A002 - torch's names
    return value


def _no_archives(fn: str) -> NotImplementedError:
    return NotImplementedError(f"torch.jit.{fn}(): TorchScript archives are not supported by tinygrad_like (nothing "
                               f"is compiled). Save the weights with torch.save(model.state_dict(), path) and load "
                               f"them with model.load_state_dict(torch.load(path)).")


def save(m, f, _extra_files=None) -> None:
    raise _no_archives("save")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise _no_archives("load")
