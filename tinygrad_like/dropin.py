"""Run a PyTorch program on tinygrad_like: ``tinygrad_like`` under the name ``torch``.

Two supported forms:

1. ``import tinygrad_like as torch`` at the top of the program. Attribute access then goes through
   tinygrad_like: ``torch.nn.Linear``, ``torch.nn.functional.relu``, ``torch.optim.Adam``,
   ``torch.utils.data.DataLoader``, ``torch.autograd.grad``, ``torch.cuda.is_available()``... But an
   ``import`` statement naming ``torch`` (``import torch.nn as nn``, ``from torch.utils.data import
   DataLoader``) asks Python's import system for the package ``torch``: it finds the real PyTorch if it is
   installed, or fails if not. For such programs use form 2.

2. Install the alias, then import as usual: every ``import torch...`` statement, in the program and in any
   module it imports, gets tinygrad_like::

       import tinygrad_like
       tinygrad_like.install_as_torch()
       import torch, torch.nn as nn, torch.nn.functional as F
       from torch.utils.data import DataLoader

   or, for a program you do not want to edit, ``python -m tinygrad_like.run program.py [args...]``.

``install_as_torch()`` registers ``torch`` and its common submodules (``torch.nn``, ``torch.nn.functional``,
``torch.optim``, ``torch.optim.lr_scheduler``, ``torch.utils.data`` ...) in ``sys.modules``, and a finder that
maps any other ``torch.X`` to ``tinygrad_like.X`` on first import (a name tinygrad_like lacks is a
ModuleNotFoundError naming it), and switches printing to torch's style (``torch.Size([3])``, ``torch.float32``;
the project's own style prints ``(3,)`` and ``tinygrad_like.float32``). It refuses when the real PyTorch is
already imported in this process (the two would mix); :func:`uninstall_torch_alias` takes the alias out again.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

from ._format import use_torch_style

__all__ = ["install_as_torch", "uninstall_torch_alias", "is_installed"]

_ALIAS = "torch"
# The PyTorch whose public surface tinygrad_like follows (tests/torch_census): under the alias ``torch.__version__`` is
# this version with tinygrad_like's own as a local tag ("2.13.0+tinygrad.like.0.1.0"), so that libraries that compare
# torch's version (torchviz, torchinfo, einops) take the paths of a current torch.
TORCH_API_VERSION = "2.13.0"
_TARGET = "tinygrad_like"
# registered eagerly (attribute imports such as ``import torch.nn.functional as F`` look them up directly)
_EAGER = ("nn", "nn.functional", "nn.init", "nn.utils", "nn.modules", "optim", "optim.lr_scheduler", "utils",
          "utils.data", "utils.data.dataloader", "utils.data.dataset", "utils.data.sampler", "utils.checkpoint",
          "autograd", "autograd.functional", "autograd.graph", "utils.hooks", "cuda", "cuda.amp", "backends",
          "backends.cuda", "backends.cudnn", "backends.mps", "amp", "accelerator", "random", "nn.parallel",
          "distributed", "jit", "onnx", "special", "serialization")


def _resolve(rest: str) -> types.ModuleType | None:
    """``tinygrad_like.<rest>``: a real submodule, or a module-valued attribute (``cuda.amp``); None if neither."""
    name = f"{_TARGET}.{rest}" if rest else _TARGET
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is None or not (name == e.name or name.startswith(e.name + ".")):
            raise  # (a module that exists failed to import something else: show that error)
    parent, _, leaf = name.rpartition(".")
    try:
        mod = importlib.import_module(parent)
    except ModuleNotFoundError:
        return None
    obj = getattr(mod, leaf, None)
    return obj if isinstance(obj, types.ModuleType) else None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module: types.ModuleType):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        spec = getattr(self.module, "_tl_spec", None)
        if spec is not None:  # (the import system set the alias's spec on the real module: put its own back)
            module.__spec__ = spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """``torch.X`` -> ``tinygrad_like.X`` for submodules not registered up front."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_ALIAS + "."):
            return None
        mod = _resolve(fullname[len(_ALIAS) + 1:])
        if mod is None:
            raise ModuleNotFoundError(f"No module named {fullname!r}: tinygrad_like (installed as 'torch') has no "
                                      f"{_TARGET}.{fullname[len(_ALIAS) + 1:]}", name=fullname)
        if "_tl_spec" not in mod.__dict__:
            mod._tl_spec = mod.__spec__
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(mod),
                                              is_package=hasattr(mod, "__path__"))


_finder = _AliasFinder()


def is_installed() -> bool:
    return sys.modules.get(_ALIAS) is sys.modules.get(_TARGET) and _finder in sys.meta_path


def install_as_torch() -> types.ModuleType:
    """Make ``import torch`` (and every ``torch.*`` submodule import) give tinygrad_like; returns the module."""
    current = sys.modules.get(_ALIAS)
    target = importlib.import_module(_TARGET)
    if current is not None and current is not target:
        raise RuntimeError("install_as_torch(): the real PyTorch is already imported in this process, and the two "
                           "would mix. Install the alias before anything imports torch (first lines of the "
                           "program), or run the program with `python -m tinygrad_like.run program.py`.")
    sys.modules[_ALIAS] = target
    if not target.__version__.startswith(TORCH_API_VERSION):  # (torch.__version__: torch's, ours as a local tag)
        target.__version__ = f"{TORCH_API_VERSION}+tinygrad.like.{target.__version__}"
    use_torch_style(True)  # print as torch: torch.Size([3]), dtype=torch.float64 (see the README, "Printing")
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    for rest in _EAGER:
        mod = _resolve(rest)
        if mod is not None:
            sys.modules.setdefault(f"{_ALIAS}.{rest}", mod)
    return target


def uninstall_torch_alias() -> None:
    """Remove the alias (``torch`` and every ``torch.*`` entry that is a tinygrad_like module) and the finder."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    use_torch_style(False)
    target = sys.modules.get(_TARGET)
    if target is not None and target.__version__.startswith(TORCH_API_VERSION + "+"):
        target.__version__ = target.__version__.rpartition("tinygrad.like.")[2]
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        mod = sys.modules[name]
        if getattr(mod, "__name__", "").split(".")[0] == _TARGET:
            del sys.modules[name]
