"""The six dtypes and PyTorch's type-promotion rules for them."""

from __future__ import annotations

import numpy as np


class DType:
    """A tensor element type. Singletons: compare with ``is`` or ``==``."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "category", "rank")

    def __init__(self, name: str, np_dtype, category: int, rank: int):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == 2
        self.category = category  # 0 bool, 1 integer, 2 floating
        self.rank = rank  # order inside the category

    def __repr__(self) -> str:
        return f"tinygrad_like.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = DType("bool", np.bool_, 0, 0)
int32 = DType("int32", np.int32, 1, 1)
int64 = DType("int64", np.int64, 1, 2)
float16 = DType("float16", np.float16, 2, 1)
float32 = DType("float32", np.float32, 2, 2)
float64 = DType("float64", np.float64, 2, 3)

ALL = (bool_, int32, int64, float16, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64, "int": int32})

default_float = float32


def _by_name(name: str) -> DType:
    return _BY_NAME[name]


def from_numpy(np_dtype) -> DType:
    """The DType for a NumPy dtype, or a clear error naming the supported ones."""
    d = _BY_NP.get(np.dtype(np_dtype))
    if d is None:
        raise TypeError(f"unsupported dtype {np.dtype(np_dtype)}; tinygrad_like supports "
                        f"{', '.join(x.name for x in ALL)}")
    return d


def to_dtype(x) -> DType:
    """Accept a DType, a name ('float32'), a NumPy dtype or a Python type (float, int, bool)."""
    if isinstance(x, DType):
        return x
    if x is float:
        return default_float
    if x is int:
        return int64
    if x is bool:
        return bool_
    if isinstance(x, str) and x in _BY_NAME:
        return _BY_NAME[x]
    try:
        return from_numpy(x)
    except TypeError:
        raise
    except Exception:
        raise TypeError(f"expected a dtype (one of {', '.join(d.name for d in ALL)}), got {x!r}") from None


_CAT_DEFAULT = {0: bool_, 1: int64, 2: None}  # float default is read at call time


def _higher(a: DType, b: DType) -> DType:
    if a.category != b.category:
        return a if a.category > b.category else b
    return a if a.rank >= b.rank else b


def scalar_category(x) -> int:
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return 1
    return 2


def result_type(*operands) -> DType:
    """PyTorch's promotion: dimensioned tensors > zero-dim tensors > Python scalars, by category.

    A lower-priority group only matters when it has a higher category (bool < int < float) than
    everything above it; e.g. ``int32_tensor + 2.5 -> float32`` and ``float16_tensor + 2.5 -> float16``.
    """
    dim = zero = None
    scal_cat = -1
    for x in operands:
        dt = getattr(x, "dtype", None)
        if isinstance(dt, DType):
            if x.ndim:
                dim = dt if dim is None else _higher(dim, dt)
            else:
                zero = dt if zero is None else _higher(zero, dt)
        else:
            scal_cat = max(scal_cat, scalar_category(x))
    res = dim
    if zero is not None and (res is None or zero.category > res.category):
        res = zero
    if scal_cat >= 0 and (res is None or scal_cat > res.category):
        res = _CAT_DEFAULT[scal_cat] or default_float
    return res


def get_default_dtype() -> DType:
    return default_float


def set_default_dtype(d) -> None:
    """Set the dtype of float literals and factories (float32 or float64, as in PyTorch)."""
    global default_float
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype expects a floating dtype, got {d.name}")
    default_float = d
