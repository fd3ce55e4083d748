"""``skip_init``: a module whose parameters the caller will overwrite. torch builds it on the meta device and then
allocates empty (uninitialised) storage, to save the cost of the initialisation. Here the module is built normally:
its values are initialised where torch's are garbage, which a caller that overwrites them cannot tell apart."""

from __future__ import annotations

import inspect

from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """An instance of ``module_cls(*args, **kwargs)`` (on ``device``), its parameters to be overwritten."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
