"""torch's questions about dtypes: ``finfo``, ``iinfo``, ``promote_types``, ``can_cast``, ``result_type``,
``typename``, and the predicates ``is_signed``, ``is_nonzero``, ``is_same_size``, ``is_conj``, ``is_neg``,
``is_inference`` as free functions."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from . import dtypes
from .dtypes import DType, ShellDType
from .tensor_base import TensorBase

__all__ = ["finfo", "iinfo", "promote_types", "can_cast", "result_type", "typename", "is_signed", "is_nonzero",
           "is_same_size", "is_conj", "is_neg", "is_inference", "get_device", "is_distributed",
           "cudnn_is_acceptable"]


def _dtype(x, what: str) -> DType:
    if isinstance(x, ShellDType):
        raise TypeError(f"{what}: tinygrad_like cannot compute in {x.name} ({x.unsupported()})")
    if not isinstance(x, DType):
        raise TypeError(f"{what}: expected a dtype, got {type(x).__name__}")
    return x


class finfo:  # noqa: N801 - torch's name
    """Machine limits of a floating dtype (default: the default dtype), as ``torch.finfo``."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type: DType | None = None):  # noqa: A002 - torch's parameter name
        dt = dtypes.get_default_dtype() if type is None else _dtype(type, "finfo")
        if not dt.is_floating_point:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            f"'{dt.name}' (got an integer or bool dtype)")
        fi = ml_dtypes.finfo(dt.np)
        self.bits = dt.itemsize * 8
        self.eps, self.max, self.min = float(fi.eps), float(fi.max), float(fi.min)
        self.tiny = self.smallest_normal = float(fi.smallest_normal)
        self.resolution = 10.0 ** -int(fi.precision)  # (torch's: exactly 10**-precision)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - torch's name
    """Limits of an integer (or bool) dtype, as ``torch.iinfo``."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: DType):  # noqa: A002 - torch's parameter name
        dt = _dtype(type, "iinfo")
        if dt.is_floating_point:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            f"'{dt.name}'")
        self.bits = dt.itemsize * 8
        if dt is dtypes.bool_:
            self.min, self.max = 0, 1
        else:
            ii = np.iinfo(dt.np)
            self.min, self.max = int(ii.min), int(ii.max)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def promote_types(type1: DType, type2: DType) -> DType:
    """The smallest dtype both ``type1`` and ``type2`` convert to without loss of category (torch's table)."""
    return dtypes._higher(_dtype(type1, "promote_types"), _dtype(type2, "promote_types"))


def can_cast(from_: DType, to: DType) -> bool:
    """torch's casting rule for in-place ops and ``out=``: no cast to a lower category (float to integer, anything
    but bool to bool)."""
    a, b = _dtype(from_, "can_cast"), _dtype(to, "can_cast")
    return a.category <= b.category


def result_type(tensor: Any, other: Any) -> DType:
    """The dtype an arithmetic op on ``tensor`` and ``other`` (tensors or Python numbers) gives."""
    for x in (tensor, other):
        if not isinstance(x, (TensorBase, bool, int, float)):
            raise TypeError(f"result_type(): expected a Tensor or a number, got {type(x).__name__}")
    return dtypes.result_type(tensor, other)


def typename(obj: Any) -> str:
    """``'torch.FloatTensor'`` for a tensor (its legacy type name); a class's qualified name otherwise."""
    if isinstance(obj, TensorBase):
        return obj.type()
    module, name = "", None
    if isinstance(obj, type):
        module, name = getattr(obj, "__module__", "") or "", obj.__qualname__
    else:
        module, name = getattr(obj.__class__, "__module__", "") or "", obj.__class__.__qualname__
    if module in ("", "builtins"):
        return name
    if module.startswith("tinygrad_like"):  # (under the torch alias torch's names are what a program compares with)
        module = "torch" + module[len("tinygrad_like"):]
    return f"{module}.{name}"


def _tensor(x, fn: str) -> TensorBase:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def is_signed(input: TensorBase) -> bool:  # noqa: A002
    return _tensor(input, "is_signed").is_signed()


def is_nonzero(input: TensorBase) -> bool:  # noqa: A002
    return _tensor(input, "is_nonzero").is_nonzero()


def is_same_size(input: TensorBase, other: TensorBase) -> bool:  # noqa: A002
    return _tensor(input, "is_same_size").is_same_size(other)


def is_conj(input: TensorBase) -> bool:  # noqa: A002
    return _tensor(input, "is_conj").is_conj()


def is_neg(input: TensorBase) -> bool:  # noqa: A002
    return _tensor(input, "is_neg").is_neg()


def is_inference(input: TensorBase) -> bool:  # noqa: A002
    return _tensor(input, "is_inference").is_inference()


def get_device(input: TensorBase) -> int:  # noqa: A002
    """-1 for a CPU tensor, else its device's index."""
    return _tensor(input, "get_device").get_device()


def is_distributed(input: TensorBase) -> bool:  # noqa: A002
    return _tensor(input, "is_distributed").is_distributed()


def cudnn_is_acceptable(input: TensorBase) -> bool:  # noqa: A002
    """Whether cuDNN would take this tensor: never here (tinygrad_like has no cuDNN), as torch on a CPU tensor."""
    _tensor(input, "cudnn_is_acceptable")
    return False
