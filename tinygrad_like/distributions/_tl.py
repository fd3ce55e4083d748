"""The namespace the distribution modules compute with: ``tl.<name>`` is ``tinygrad_like.<name>`` (its special
functions, ``linalg``, samplers), plus the gamma sampler with a reparameterized gradient, which the core lacks
(:mod:`._special`), and a few of torch's private helpers under torch's names.

The distribution modules follow PyTorch's ``torch.distributions`` (BSD-3-Clause, Copyright (c) Meta Platforms, Inc.
and affiliates) formula for formula, so that values, shapes, constraints and errors agree with torch's; they write
``tl.x`` where torch's write ``torch.x``.
"""

from __future__ import annotations

import math
import types
from numbers import Number
from typing import Any

from ..compat import Size
from ..creation import arange
from ..dtypes import finfo as _finfo
from ..dtypes import get_default_dtype
from ..layout import broadcast_shapes
from ..tensor import Tensor
from . import _special

inf, nan = math.inf, math.nan
_Number = int | float | bool
_size = Size | list | tuple
_dtype = Any
Device = Any
SymInt = int
contiguous_format = None  # (every tensor here is contiguous-or-strided; the argument is accepted and ignored)

# the one sampler the core lacks (torch's private ``_standard_gamma``, with its reparameterized gradient)
_standard_gamma = _special.standard_gamma


def _is_all_true(t: Tensor) -> Tensor:
    return t.all()


def _get_tracing_state() -> bool:
    return False  # (no tracer: every program runs eagerly)


def _infer_size(a, b) -> Size:
    return Size(broadcast_shapes(a, b))


_C = types.SimpleNamespace(_get_tracing_state=_get_tracing_state, _infer_size=_infer_size)
jit = types.SimpleNamespace(script_if_tracing=lambda fn: fn, is_scripting=lambda: False)


def _root():
    import tinygrad_like  # (the finished package, looked up on use: it imports this package at its end)
    return tinygrad_like


def finfo(dtype=None):
    return _finfo(dtype or get_default_dtype())


def range(start, end, step=1, *, dtype=None, device=None):  # noqa: A001 - torch's (deprecated) name
    return arange(start, end + step / 2, step, dtype=dtype, device=device)


def __getattr__(name: str):
    """Everything else is tinygrad_like's own (``tl.where``, ``tl.Size``, ``tl.distributions``...)."""
    if name == "Number":
        return Number
    return getattr(_root(), name)
