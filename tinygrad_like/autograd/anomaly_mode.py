"""Anomaly detection (``torch.autograd.detect_anomaly``): find the op whose backward made a NaN, and where it ran.

While it is on, the backward engine hands every node to :func:`run_node`: if the node's backward raises, or
(with ``check_nan``) returns a gradient holding NaN, the error names the node as torch's does ("Function
'DivBackward0' returned nan values in its 1th output.") and a warning first shows the line of the forward call
that made the node ("Error detected in DivBackward0. Traceback of forward call that caused the error: ...").
That line comes from the nodes' recorded origins (:mod:`tinygrad_like.sites`), which anomaly mode switches on
for as long as it is on, as torch records forward tracebacks only in anomaly mode. Process-wide, as torch's.

>>> import tinygrad_like as tl, warnings
>>> x = tl.tensor([0.0, 1.0], requires_grad=True)
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     with tl.autograd.detect_anomaly():
...         try:
...             (x / x).sum().backward()
...         except RuntimeError as e:
...             print(e)
Function 'DivBackward0' returned nan values in its 1th output.
"""

from __future__ import annotations

import functools
import linecache
import re
import warnings
from typing import Any

from .. import sites

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]


class _State:
    enabled = False  # read by the engine once per node
    check_nan = True
    origins_before: bool | None = None  # sites.record_origins's setting before anomaly mode turned it on


state = _State()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks every backward output for NaN."""
    return state.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch anomaly detection on or off (``torch.set_anomaly_enabled``)."""
    enabled = bool(enabled)
    if enabled and not state.enabled:
        state.origins_before = sites.record_origins(True)  # forward sites, for the warning
    elif not enabled and state.enabled and state.origins_before is not None:
        sites.record_origins(state.origins_before)
        state.origins_before = None
    state.enabled, state.check_nan = enabled, bool(check_nan)


class _Switch:
    """A context manager that is also a decorator (torch's ``_DecoratorContextManager``)."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        raise NotImplementedError


class detect_anomaly(_Switch):
    """Inside, backward errors and NaN gradients name their node and the forward line that made it."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def clone(self) -> detect_anomaly:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return detect_anomaly(self.check_nan)


class set_detect_anomaly(_Switch):
    """``set_detect_anomaly(True)`` switches anomaly detection on, as a call or as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        self.mode, self.check_nan = mode, check_nan
        set_anomaly_enabled(mode, check_nan=check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        set_anomaly_enabled(self.prev, check_nan=self.prev_check_nan)

    def __call__(self, fn):
        set_anomaly_enabled(self.prev, check_nan=self.prev_check_nan)  # as a decorator: only while fn runs
        return super().__call__(fn)

    def clone(self) -> set_detect_anomaly:
        return set_detect_anomaly(self.mode, self.check_nan)


def node_name(node: Any) -> str:
    """torch's name for a node: ``DivBackward0`` for a built-in op, ``<Name>Backward`` for a custom Function."""
    custom = getattr(node, "_forward_cls", None)
    if custom is not None:
        return f"{custom.__name__}Backward"
    name = getattr(node, "name", None)
    name = name() if callable(name) else name
    name = name if isinstance(name, str) and name else type(node).__name__
    if not re.search(r"Backward\d+$", name):
        name = name.removesuffix("Backward") + "Backward0"
    return name


def _warn_forward_site(node: Any) -> None:
    origin = getattr(node, "origin", None)
    site = getattr(origin, "site", None) if origin is not None else None
    if site is None:
        where = ("No forward pass information available. Enable detect anomaly during forward pass for more "
                 "information.")
    else:
        filename, lineno, function = site.filename, site.lineno, site.function
        where = f'  File "{filename}", line {lineno}, in {function}'
        code = linecache.getline(filename, lineno).strip()
        if code:
            where += f"\n    {code}"
    warnings.warn(f"Error detected in {node_name(node)}. Traceback of forward call that caused the error:\n{where}",
                  stacklevel=2)


def run_node(node: Any, g: Any) -> Any:
    """``node.backward(g)`` under anomaly detection: a failure or a NaN output names the node and its forward."""
    try:
        grads = node.backward(g)
    except Exception:
        _warn_forward_site(node)
        raise
    if state.check_nan:
        for i, gi in enumerate(grads if type(grads) is tuple else (grads,)):
            if gi is not None and gi.dtype.is_floating_point and bool(gi.isnan().any()):
                _warn_forward_site(node)
                raise RuntimeError(f"Function '{node_name(node)}' returned nan values in its {i}th output.")
    return grads
