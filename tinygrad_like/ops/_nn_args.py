"""Argument helpers shared by the convolution, pooling, resampling and embedding functions of
``tl.nn.functional``: integer checks, int-or-tuple arguments, the tensor check with torch's wording, and NumPy
constants on a tensor's device."""

from __future__ import annotations

import numpy as np

from ..tensor_base import TensorBase


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _ntuple(v, n: int, name: str, fn: str = "") -> tuple:
    """An int or a sequence of ``n`` ints -> a tuple of ``n`` ints (a 1-sequence is repeated, as torch's)."""
    if _is_int(v):
        return (int(v),) * n
    if isinstance(v, (tuple, list)) and all(_is_int(i) for i in v):
        if len(v) == n:
            return tuple(int(i) for i in v)
        if len(v) == 1:
            return (int(v[0]),) * n
    where = f"{fn}(): " if fn else ""
    raise TypeError(f"{where}argument '{name}' must be an int or a tuple of {n} ints, but got {v!r}")


def _check_tensor(x, fn: str, arg: str = "input") -> None:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be Tensor, not {type(x).__name__}")


def _const(arr, like: TensorBase) -> TensorBase:
    """A NumPy constant on ``like``'s device."""
    dev = like._dev
    return like._wrap(arr if dev.backend.is_host else dev.backend.from_numpy(arr), dev)
