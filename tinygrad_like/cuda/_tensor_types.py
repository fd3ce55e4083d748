"""``torch.cuda.FloatTensor`` and its kin: the legacy CUDA tensor types, and the CUDA storage names.

``isinstance(x, torch.cuda.FloatTensor)`` asks whether ``x`` is a float32 CUDA tensor; calling one makes a tensor on
"cuda" (as ``torch.FloatTensor`` does on the CPU), and raises ``TypeError`` without CUDA, as PyTorch's. The storage
classes are names only (tinygrad_like's storage is not built from Python).
"""

from __future__ import annotations

import inspect
from typing import Any

from ..backends.cuda.probe import probe
from ..dtypes import DType
from ..legacy import tensortype
from ..ops.conversion import TYPE_NAMES
from ..tensor import Tensor
from ..unsupported import STORAGE, unsupported_class

TENSOR_TYPES = tuple(TYPE_NAMES.values())
STORAGES = ("FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage", "IntStorage",
            "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage", "ComplexFloatStorage",
            "ComplexDoubleStorage")


class cudatensortype(tensortype):  # noqa: N801 - the metaclass of torch.cuda's legacy classes
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj._dev.type == "cuda"

    def __call__(cls, *args, device=None) -> Tensor:
        status = probe()
        if not status.available:
            raise TypeError(f"type torch.cuda.{cls.__name__} not available: CUDA is not available: {status.reason}")
        return super().__call__(*args, device="cuda" if device is None else device)

    def __repr__(cls) -> str:
        return f"<class 'torch.cuda.{cls.__name__}'>"


def _tensor_type(name: str, dtype: DType) -> cudatensortype:
    doc = (f"torch.cuda.{name}: ``{name}(*sizes)`` or ``{name}(data)`` is a {dtype.name} tensor on \"cuda\"; "
           f"``isinstance(x, torch.cuda.{name})`` is True for a {dtype.name} CUDA tensor.")
    return cudatensortype(name, (), {"dtype": dtype, "is_cuda": True, "is_sparse": False, "__doc__": doc,
                                     "__module__": "tinygrad_like.cuda"})


tensor_types = {name: _tensor_type(name, dt) for dt, name in TYPE_NAMES.items()}
storages = {name: unsupported_class(f"torch.cuda.{name}", STORAGE) for name in STORAGES}
for _storage in storages.values():  # (torch's parameters, so inspect.signature reads as torch's)
    _storage.__signature__ = inspect.signature(lambda *args, wrap_storage=None, dtype=None, device=None,
                                               _internal=False: None)
