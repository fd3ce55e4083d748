"""Helpers shared by the ``nn.functional`` families (activations, dropout, linear, normalization, distances, losses,
attention): the check that an argument is a tensor, and the write of a result into its input (``inplace=True``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..tensor_base import TensorBase

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor


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
