"""torch.distributed's subpackages that need several processes (FSDP, RPC, elastic launch, pipelining, DTensor,
distributed checkpoints...): importable, so that a program that only imports them runs; each name in them is a clear
error when used.

Under the alias ``import torch.distributed.fsdp`` and ``import torch.distributed.elastic.multiprocessing.errors``
work (a finder makes any module below one of these on import); a CamelCase name in them is a class that raises when
constructed (so ``isinstance`` and annotations work), any other name a function that raises when called. The few
names that do their job in one process are real (``elastic.multiprocessing.errors.record``).
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable
from typing import Any

from ..unsupported import DISTRIBUTED, MARK, unsupported_class, unsupported_function

# torch 2.13's subpackages of torch.distributed that have no working counterpart here
NAMES = ("algorithms", "argparse_util", "autograd", "c10d_logger", "checkpoint", "collective_utils", "config",
         "debug", "device_mesh", "elastic", "flight_recorder", "fsdp", "launch", "launcher", "logging_handlers", "nn",
         "optim", "pipelining", "remote_device", "rpc", "run", "tensor", "utils")


class UnsupportedModule(types.ModuleType):
    """A module of torch.distributed that cannot work in one process: its names are clear errors."""

    def __init__(self, name: str):
        super().__init__(name, f"Not supported: {DISTRIBUTED}.")
        self.__path__: list[str] = []  # (a package, so that ``import <name>.<child>`` looks for children)
        self.__file__ = __file__  # (where it is made; tools that locate a module's file find this one)
        self.__spec__ = importlib.machinery.ModuleSpec(name, _loader, origin=__file__, is_package=True)
        setattr(self, MARK, DISTRIBUTED)
        for real_name, obj in _REAL.get(name, {}).items():
            setattr(self, real_name, obj)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        qualname = f"{self.__name__}.{name}".replace("tinygrad_like", "torch", 1)
        child = (unsupported_class if name[0].isupper() else unsupported_function)(qualname, DISTRIBUTED)
        setattr(self, name, child)
        return child


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> UnsupportedModule:
        return UnsupportedModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Any module below an :class:`UnsupportedModule` is one too."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not isinstance(sys.modules.get(fullname.rpartition(".")[0]), UnsupportedModule):
            return None
        return importlib.machinery.ModuleSpec(fullname, _loader, origin=__file__, is_package=True)


def record(fn: Callable) -> Callable:
    """``elastic.multiprocessing.errors.record``: torchrun's decorator that writes an error file for the launcher
    when ``fn`` raises; with no launcher (one process) it calls ``fn`` and lets its error through, as torch's."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


_REAL: dict[str, dict[str, Any]] = {"tinygrad_like.distributed.elastic.multiprocessing.errors": {"record": record}}
_loader = _Loader()
_finder = _Finder()


def module(name: str) -> UnsupportedModule:
    """The unsupported module ``name`` (``tinygrad_like.distributed.fsdp``), registered in ``sys.modules`` so that
    imports of it and of its children find it (through a finder on ``sys.meta_path`` that answers only for them)."""
    if _finder not in sys.meta_path:
        sys.meta_path.append(_finder)
    made = sys.modules.get(name)
    if not isinstance(made, UnsupportedModule):
        made = sys.modules[name] = UnsupportedModule(name)
    return made
