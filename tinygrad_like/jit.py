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

import builtins
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any

from .nn.module import Module
from .unsupported import TORCHSCRIPT, unsupported_class, unsupported_function

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "script_method", "interface", "annotate", "fork", "wait", "freeze", "optimize_for_inference", "save",
           "load", "ScriptModule", "ScriptFunction", "Final", "Attribute", "CompilationUnit", "Error", "Future",
           "enable_onednn_fusion", "onednn_fusion_enabled", "export_opnames", "isinstance", "script_if_tracing",
           "set_fusion_strategy", "strict_fusion"]

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


class Future:
    """torch's ``Future``: a value that :func:`fork` produced (already, since it runs at once) or one set later."""

    def __init__(self, *, devices: list | None = None) -> None:
        self._done, self._value, self._error, self._callbacks = False, None, None, []

    def done(self) -> bool:
        return self._done

    def set_result(self, result: Any) -> None:
        self._finish(result, None)

    def set_exception(self, result: BaseException) -> None:
        self._finish(None, result)

    def _finish(self, value: Any, error: BaseException | None) -> None:
        if self._done:
            raise RuntimeError("Future can only be marked completed once")
        self._done, self._value, self._error = True, value, error
        for callback in self._callbacks:
            callback(self)

    def wait(self) -> Any:
        """The value (raises the exception that was set). There is no other thread to wait for here."""
        if not self._done:
            raise RuntimeError("Future.wait(): the future has no result and nothing here will set one (fork runs "
                               "at once, so only set_result can)")
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> Any:
        return self.wait()

    def then(self, callback: Callable[[Future], Any]) -> Future:
        """A future of ``callback(self)``, run when this one completes."""
        result = Future()

        def run(fut: Future) -> None:
            try:
                result.set_result(callback(fut))
            except Exception as e:  # (torch passes the callback's error on to the new future)
                result.set_exception(e)
        self.add_done_callback(run)
        return result

    def add_done_callback(self, callback: Callable[[Future], None]) -> None:
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)


def fork(func: Callable, *args, **kwargs) -> Future:
    """Runs ``func`` now; :func:`wait` gives its result."""
    future = Future()
    future.set_result(func(*args, **kwargs))
    return future


def wait(future: Future) -> Any:
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


class Error(Exception):
    """torch's TorchScript interpreter error, as a name to catch (nothing here raises it: code runs as Python)."""


CompilationUnit = unsupported_class("torch.jit.CompilationUnit", TORCHSCRIPT + "; a CompilationUnit compiles "
                                    "TorchScript source strings, so write the functions in Python instead")
export_opnames = unsupported_function("torch.jit.export_opnames", TORCHSCRIPT + "; there is no scripted module "
                                      "whose operator names could be listed")
export_opnames.__signature__ = inspect.signature(lambda m: None)  # (torch's parameters, for inspect.signature)

_fusion = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled: bool) -> None:
    """Record the switch (nothing is fused: ops run one at a time)."""
    _fusion["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _fusion["onednn"]


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Record the fuser's strategy (nothing is fused here); returns the previous one, as torch's."""
    for kind, depth in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
        if not builtins.isinstance(depth, int):
            raise TypeError(f"set_fusion_strategy: the depth of {kind} must be an int, got {type(depth).__name__}")
    previous, _fusion["strategy"] = _fusion["strategy"], list(strategy)
    return previous


class strict_fusion:  # noqa: N801 - torch's name
    """``with torch.jit.strict_fusion():`` asks the compiler to fuse the block; running eagerly, there is nothing to
    check (as torch outside scripting)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def script_if_tracing(fn: Callable) -> Callable:
    """Returns ``fn`` itself: nothing is traced here."""
    return fn


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001 - torch's name
    """``isinstance`` that also checks container contents: ``list[int]``, ``dict[str, Tensor]``, ``tuple[int, str]``,
    ``Optional[T]``; a container type must name its contents, as in torch."""
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if target_type in (list, dict, tuple, typing.List, typing.Dict, typing.Tuple, typing.Optional):  # noqa: UP006
        name = getattr(target_type, "__name__", None) or getattr(target_type, "_name", str(target_type))
        raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a contained type, e.g. "
                           f"{name}[int]")
    if origin is None:
        if target_type is float:  # (as torch's: an int is not a float)
            return builtins.isinstance(obj, float)
        return builtins.isinstance(obj, target_type)
    if origin is list:
        return builtins.isinstance(obj, list) and all(isinstance(x, args[0]) for x in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(isinstance(k, args[0]) and isinstance(v, args[1])
                                                      for k, v in obj.items())
    if origin is tuple:
        return (builtins.isinstance(obj, tuple) and len(obj) == len(args)
                and all(isinstance(x, t) for x, t in zip(obj, args)))
    if origin in (typing.Union, types.UnionType):
        return any(obj is None if t is type(None) else isinstance(obj, t) for t in args)
    return builtins.isinstance(obj, origin)
