"""Small helpers shared by the op modules: operand promotion and un-broadcasting gradients."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dtypes import result_type, scalar_category
from ..tensor_base import TensorBase


def check_same_device(a, b, op: str) -> None:
    raise RuntimeError(f"{op}: expected all tensors to be on the same device, but found tensors on "
                       f"{a._dev} and {b._dev}; move one with .to(device) first")


def check_index_device(x, index, op: str, what: str = "index") -> None:
    """An index (or target, or repeats) tensor must live on the input's device, as in torch: say so by name."""
    if index._dev is not x._dev:
        raise RuntimeError(f"{op}(): expected {what} on {x._dev}, the device of the tensor it indexes, but got it "
                           f"on {index._dev}; move it with .to('{x._dev}')")


def operands(a, b, op: str):
    """Native operands of a binary op after PyTorch's type promotion, and the result dtype."""
    if isinstance(b, TensorBase):
        if a._dev is not b._dev:
            check_same_device(a, b, op)
        if a.dtype is b.dtype:
            return a._x, b._x, a.dtype
        dt = result_type(a, b)
        xa = a._x if a.dtype is dt else a._dev.backend.cast(a._x, dt)
        xb = b._x if b.dtype is dt else b._dev.backend.cast(b._x, dt)
        return xa, xb, dt
    if isinstance(b, np.generic):  # (before the Python numbers: np.float64 is a float subclass, and NumPy would
        # promote with its own dtype, where torch treats a NumPy number as a Python number)
        if b.ndim == 0 and b.dtype.kind in "biuf":
            return operands(a, b.item(), op)
    elif isinstance(b, (int, float)):
        if scalar_category(b) <= a.dtype.category:
            return a._x, b, a.dtype
        dt = result_type(a, b)
        return a._dev.backend.cast(a._x, dt), b, dt
    raise TypeError(f"{op}: unsupported operand type {type(b).__name__}; expected a Tensor or a Python number")


def float_operands(a, b, op: str):
    """Like :func:`operands` but integer results become the default float (true division)."""
    xa, xb, dt = operands(a, b, op)
    if not dt.is_floating_point:
        dt = dtypes.default_float
        be = a._dev.backend
        xa = be.cast(xa, dt)
        if isinstance(b, TensorBase):
            xb = be.cast(xb, dt)
    return xa, xb, dt


def sum_to(g, shape: tuple):
    """Reduce a broadcast gradient back to ``shape`` (the inverse of broadcasting)."""
    gs = g.shape
    if gs == shape:
        return g
    lead = len(gs) - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape) if n == 1 and gs[i + lead] != 1)
    if axes:
        g = g.sum(axes, keepdim=True)
    return g.reshape(shape) if g.shape != shape else g
