"""What the math op modules (rounding, division, transcendental, arithmetic, comparison, bitwise) share: torch's
refusals (a dtype with no kernel, an argument that is not a tensor), NumPy's broadcasting error in torch's words, the
zero gradient of a step function, and the small callables their operators, in-place methods and free functions use."""

from __future__ import annotations

from ..tensor_base import TensorBase
from ._util import broadcast_error, is_number


def not_implemented(op: str, dt) -> NotImplementedError:
    """What torch raises for a dtype an op has no kernel for (e.g. ``"floor" not implemented for 'Bool'``)."""
    return NotImplementedError(f"\"{op}\" not implemented for '{dt.name}' tensors (as in torch)")


def need_tensor(x, op: str, arg: str = "other", pos: int = 2) -> None:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")


def run_binary(a, b, op: str, fn, xa, xb):
    """``fn(xa, xb)`` with NumPy's broadcasting error turned into torch's RuntimeError, naming the shapes."""
    try:
        return fn(xa, xb)
    except ValueError:
        raise broadcast_error(a, b, op) from None


def zero_grad(g):
    """A zero gradient (torch's ``zeros_like(grad)``; the engine sums it to the input's shape)."""
    return g.new_zeros(g.shape)


def not_operand(other) -> bool:
    """Neither a tensor nor a number: the operator returns NotImplemented (Python then tries the other side)."""
    return not isinstance(other, TensorBase) and not is_number(other)


def call_method(x, name: str):
    """What an in-place method without arguments runs (its ``_inplace`` calls ``fn(x, other)``: here ``other`` is
    the name of the out-of-place method). A plain function, no closure."""
    return getattr(x, name)()


def first_operand(input, other, op: str):
    """A free function's first operand as a tensor: a Python number there becomes a 0-d tensor (of ``input op
    other``'s dtype), as torch's ``remainder``, ``floor_divide``, ``xlogy`` and the bitwise functions take it."""
    if isinstance(input, TensorBase):
        return input
    if isinstance(other, TensorBase):
        left = other._left_number(input)
        if left is not None:
            return left
    raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor or Number, not {type(input).__name__}")
