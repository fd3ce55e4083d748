"""Small names of torch's top level: the exception classes ``OutOfMemoryError`` and ``AcceleratorError``, the
classes ``memory_format`` and ``qscheme`` (of torch's layout and quantization-scheme constants), and the ``sym_*``
helpers, which on plain Python numbers compute what torch's do (sizes here are always plain ints)."""

from __future__ import annotations

import enum
import math
import sys
from typing import Any

from .layout import Layout

__all__ = ["OutOfMemoryError", "AcceleratorError", "FatalError", "AggregationType", "AVG", "SUM", "memory_format",
           "qscheme", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum", "sym_ite"]


class OutOfMemoryError(RuntimeError):
    """A device ran out of memory (torch.OutOfMemoryError, torch.cuda.OutOfMemoryError)."""


class AcceleratorError(RuntimeError):
    """An accelerator reported an error (torch.AcceleratorError)."""


class FatalError(Exception):
    """An unrecoverable error of torch's runtime (torch.FatalError: not a RuntimeError)."""


class AggregationType(enum.Enum):
    """How torch's monitoring counters aggregate (torch.AggregationType)."""

    SUM = 0
    AVG = 1


SUM, AVG = AggregationType.SUM, AggregationType.AVG


class _Constant:
    """One of torch's named constants of a class (``torch.contiguous_format``...)."""

    __slots__ = ("_name",)

    def __init__(self):
        raise TypeError(f"cannot create 'torch.{type(self).__name__}' instances")

    @classmethod
    def _named(cls, name: str):
        c = object.__new__(cls)
        c._name = name
        return c

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        return (_constant, (self._name,))


def _constant(name: str):
    """The named constant (what a pickle of one rebuilds)."""
    return getattr(sys.modules[__name__], name)


class memory_format(_Constant):  # noqa: N801 - torch's name
    """The class of torch's memory formats (``contiguous_format``, ``channels_last``...). tinygrad_like's tensors
    are laid out by their strides alone; the formats are names a program may pass."""


class _TensorLayout(_Constant):
    """torch's tensor layouts (``torch.strided``, ``torch.sparse_coo``...). Every tensor here is strided, and its
    ``layout`` is the project's richer :class:`~tinygrad_like.layout.Layout` (shape, strides, offset), which compares
    equal to ``strided``: ``x.layout == torch.strided`` holds as in torch."""

    def __eq__(self, other) -> bool:
        if isinstance(other, Layout):
            return self._name == "strided"
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = _Constant.__hash__


_TensorLayout.__name__ = _TensorLayout.__qualname__ = "layout"  # (torch's class name; not exported: tl.layout is
# the module of our Layout)


class qscheme(_Constant):  # noqa: N801 - torch's name
    """The class of torch's quantization schemes; tinygrad_like has no quantized tensors."""


def sym_int(a: Any) -> int:
    """``int(a)`` rounding toward zero (torch's SymInt helper on a plain number)."""
    return a if isinstance(a, int) else int(math.trunc(a))


def sym_float(a: Any) -> float:
    return float(a)


def sym_max(a: Any, b: Any):
    """The larger; a float when either is a float (as torch: ``sym_max(2, 3.5)`` is 3.5, ``sym_max(2.0, 1)`` 2.0)."""
    r = a if a >= b else b
    return float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_min(a: Any, b: Any):
    r = a if a <= b else b
    return float(r) if isinstance(a, float) or isinstance(b, float) else r


def sym_not(a: Any) -> bool:
    return not a


def sym_sqrt(a: Any) -> float:
    return math.sqrt(a)


def sym_sum(args) -> Any:
    """The sum of an iterable of numbers."""
    return sum(args)


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """``t if b else f``."""
    return t if b else f


# the constants themselves: torch's top level has them though its __all__ does not list them (so the census does not
# see them; programs and libraries use them: ``x.layout != torch.strided``, ``memory_format=torch.channels_last``)
_CONSTANTS = {
    _TensorLayout: ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged"),
    memory_format: ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"),
    qscheme: ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
              "per_channel_affine_float_qparams"),
}
for _cls, _names in _CONSTANTS.items():
    for _n in _names:
        globals()[_n] = _cls._named(_n)
        __all__.append(_n)
