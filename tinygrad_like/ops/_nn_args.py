"""Argument helpers shared by the ``nn.functional`` families: integer and int-or-tuple arguments, the checks that an
argument is a tensor, NumPy constants on a tensor's device, and the write of a result into its input
(``inplace=True``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..tensor_base import TensorBase

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor


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


def _check_tensor_at(x, fn: str, arg: str = "input") -> None:
    """The tensor check of the convolution, pooling, resampling and embedding functions (torch's wording, with the
    argument's position)."""
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be Tensor, not {type(x).__name__}")


def _const(arr, like: TensorBase) -> TensorBase:
    """A NumPy constant on ``like``'s device."""
    dev = like._dev
    return like._wrap(arr if dev.backend.is_host else dev.backend.from_numpy(arr), dev)


def _check_tensor(x, fn: str, arg: str = "input") -> None:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


# ``inplace=True`` writes the result into ``input`` and returns ``input`` itself, as torch: through the Tensor's own
# in-place machinery (``InplaceMixin._inplace``: the checks on leaves and aliasing, a version bump, the history moved
# onto ``input``). The ``*_`` functions are the same writes under torch's names.
def _write(input: Tensor, op: str, fn) -> Tensor:
    """``fn(input)`` written into ``input`` as the in-place op ``op``; returns ``input``."""
    return input._inplace(op, _call_on, fn)


def _call_on(x: Tensor, fn) -> Tensor:
    return fn(x)
