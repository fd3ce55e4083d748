"""Padding modules: constant (and zero), reflection, replication and circular, in 1, 2 and 3 dims, as PyTorch's.

``padding`` is an int (the same on every side) or a tuple (left, right[, top, bottom[, front, back]]); each
module calls ``tl.nn.functional.pad`` with its mode.

>>> import tinygrad_like as tl
>>> tl.nn.ReflectionPad1d(2)(tl.arange(4.0).reshape(1, 1, 4))
tensor([[[2., 1., 0., 1., 2., 3., 2., 1.]]])
"""

from __future__ import annotations

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]


def _ntuple(padding, n: int) -> tuple:
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (padding,) * (2 * n)
    return tuple(padding)


class _Pad(Module):
    _dims = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPad):
    _dims = 1


class ConstantPad2d(_ConstantPad):
    _dims = 2


class ConstantPad3d(_ConstantPad):
    _dims = 3


class _ZeroPad(_ConstantPad):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad):
    _dims = 1


class ZeroPad2d(_ZeroPad):
    _dims = 2


class ZeroPad3d(_ZeroPad):
    _dims = 3


class ReflectionPad1d(_Pad):
    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_Pad):
    _dims, _mode = 2, "reflect"


class ReflectionPad3d(_Pad):
    _dims, _mode = 3, "reflect"


class ReplicationPad1d(_Pad):
    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_Pad):
    _dims, _mode = 2, "replicate"


class ReplicationPad3d(_Pad):
    _dims, _mode = 3, "replicate"


class CircularPad1d(_Pad):
    _dims, _mode = 1, "circular"


class CircularPad2d(_Pad):
    _dims, _mode = 2, "circular"


class CircularPad3d(_Pad):
    _dims, _mode = 3, "circular"
