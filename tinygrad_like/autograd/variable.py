"""``torch.autograd.Variable``: the name from before tensors carried autograd themselves.

``Variable(t, requires_grad=True)`` returns a plain tensor that shares ``t``'s data, detached from its graph, as
torch's does; ``isinstance(x, Variable)`` is True for every tensor.

>>> import tinygrad_like as tl
>>> v = tl.autograd.Variable(tl.ones(2), requires_grad=True)
>>> v, isinstance(v, tl.Tensor), isinstance(tl.zeros(1), tl.autograd.Variable)
(tensor([1., 1.], requires_grad=True), True, True)
"""

from __future__ import annotations

import warnings
from typing import Any

from ..creation import empty
from ..tensor import Tensor

__all__ = ["Variable"]


class VariableMeta(type):
    """Makes ``Variable(...)`` return a tensor and ``isinstance(x, Variable)`` mean ``isinstance(x, Tensor)``."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)

    def __call__(cls, data: Tensor | None = None, requires_grad: bool = False, volatile: bool = False) -> Tensor:
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            out = empty(0)
        elif isinstance(data, Tensor):
            out = data.detach()
        else:
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return out.requires_grad_(requires_grad) if requires_grad else out


class Variable(metaclass=VariableMeta):
    """``Variable(data, requires_grad=False, volatile=False)``: ``data`` detached, as a tensor (see the module)."""
