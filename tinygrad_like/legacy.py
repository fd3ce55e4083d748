"""PyTorch's names from before dtypes, and its type tests: ``torch.FloatTensor`` ... ``torch.BoolTensor``,
``is_tensor``, ``is_storage``, ``as_tensor``.

A legacy class makes a tensor of its dtype from sizes (``LongTensor(3)``, ``FloatTensor(2, 3)``) or from data
(``LongTensor([1, 2])``), and ``isinstance(x, FloatTensor)`` asks whether ``x`` is a float32 CPU tensor, as in
torch. The tensors made are ordinary :class:`~tinygrad_like.Tensor` objects.

>>> import tinygrad_like as tl
>>> tl.LongTensor([1, 2]), tl.FloatTensor(2, 3).shape, isinstance(tl.zeros(2), tl.FloatTensor)
(tensor([1, 2]), tl.Size([2, 3]), True)
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import creation
from .compat import Size
from .device import get_device
from .dtypes import DType, to_dtype
from .ops.conversion import TYPE_NAMES
from .storage import Storage
from .tensor import Tensor

__all__ = ["is_tensor", "is_storage", "as_tensor", *TYPE_NAMES.values()]


def _sizes(args: tuple) -> list[int] | None:
    """The sizes in ``FloatTensor(2, 3)`` or ``FloatTensor(torch.Size([2, 3]))``; None when the arguments are data."""
    if len(args) == 1 and isinstance(args[0], Size):
        return list(args[0])
    if any(isinstance(a, (Tensor, bool, float, str)) for a in args):
        return None
    try:
        return [operator.index(a) for a in args]
    except TypeError:
        return None


class tensortype(type):  # noqa: N801 - torch's name for the metaclass of its legacy classes
    """The metaclass of ``FloatTensor`` and its kin: calling one makes a tensor; ``isinstance`` checks the dtype."""

    dtype: DType

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj._dev.type == "cpu"

    def __call__(cls, *args, device=None) -> Tensor:
        name = f"torch.{cls.__name__}"
        if not args:
            return creation.empty(0, dtype=cls.dtype, device=device)
        sizes = _sizes(args)
        if sizes is not None:
            negative = [s for s in sizes if s < 0]
            if negative:
                raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {sizes}")
            # torch leaves the memory uninitialized; here it is zeros, so that a run is reproducible
            return creation.zeros(*sizes, dtype=cls.dtype, device=device)
        if len(args) > 1:
            raise TypeError(f"{name}() takes sizes (ints) or one sequence of data, got {len(args)} arguments of "
                            f"types {[type(a).__name__ for a in args]}")
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype is not cls.dtype:
                raise TypeError(f"{name}(tensor) expects a tensor of dtype {cls.dtype.name}, got {data.dtype.name}: "
                                f"convert it with tensor.type({name!r})")
            return data.detach()  # (as torch: a new tensor that shares the data)
        if isinstance(data, str) or not isinstance(data, (list, tuple, np.ndarray)):
            what = "invalid data type" if isinstance(data, str) else "data must be a sequence (got"
            raise TypeError(f"{name}(): {what} {type(data).__name__!r}{')' if what.endswith('(got') else ''}; "
                            f"expected sizes (ints) or a sequence of numbers")
        return creation.tensor(data, dtype=cls.dtype, device=device)

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_class(name: str, dtype: DType) -> tensortype:
    doc = (f"torch.{name}: ``{name}(*sizes)`` is a {dtype.name} tensor of those sizes (zeros here; torch leaves it "
           f"uninitialized), ``{name}(data)`` one holding the data; ``isinstance(x, {name})`` is True for a "
           f"{dtype.name} CPU tensor.")
    return tensortype(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False, "__doc__": doc,
                                 "__module__": __name__})


FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, \
    BoolTensor = (_legacy_class(name, dt) for dt, name in TYPE_NAMES.items())


def is_tensor(obj: Any, /) -> bool:
    """True if ``obj`` is a tensor."""
    return isinstance(obj, Tensor)


def is_storage(obj: Any, /) -> bool:
    """True if ``obj`` is a storage (what a tensor's ``.storage`` holds its bytes in)."""
    return isinstance(obj, Storage)


def as_tensor(data: Any, dtype: DType | None = None, device=None) -> Tensor:
    """``data`` as a tensor, sharing its memory where it can: a tensor already of that dtype and device is returned
    as it is (a cast or a move otherwise, recorded by autograd); a NumPy array of a matching dtype on the CPU is
    shared, as with :func:`from_numpy`; anything else is copied, as with :func:`tensor`."""
    dtype = None if dtype is None else to_dtype(dtype)
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray) and (device is None or get_device(device).type == "cpu"):
        try:
            shared = creation.from_numpy(data)
        except (TypeError, ValueError):  # (a NumPy dtype tensors do not have: copy and convert instead)
            shared = None
        if shared is not None and (dtype is None or shared.dtype is dtype):
            return shared
    return creation.tensor(data, dtype=dtype, device=device)
