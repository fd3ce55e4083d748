"""The ten dtypes and PyTorch's type-promotion rules for them.

``bfloat16`` has no NumPy dtype of its own: its arrays use ``ml_dtypes.bfloat16`` (the JAX team's NumPy extension
dtypes), whose elementwise ufuncs compute each element in float32 and round, as torch's CPU kernels do.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ._format import STYLE as _STYLE


class DType:
    """A tensor element type. Singletons: compare with ``is`` or ``==``.

    ``category`` (0 bool, 1 integer, 2 floating) and ``rank`` (order inside the category) give PyTorch's
    promotion; two dtypes of one rank that are not the same (uint8/int8, float16/bfloat16) promote to ``tie``
    (a plain rank order cannot say that uint8 + int8 is int16).

    ``pycat`` is the highest Python-number category (as ``scalar_category``) that a NumPy op on this dtype's
    arrays takes as it is: a number above it goes through ``ops._util.operands``' slow path, which wraps an
    integer into range (uint8 + 300 wraps, as in torch; NumPy would raise) and rounds a number for bfloat16
    (NumPy would give float32). int32 and int64 keep the fast path (``int32 + 2**40`` is NumPy's OverflowError,
    where torch wraps: rare, and the check would cost every ``int + number``).

    ``float_via``: the dtype a float array is cast to on its way to this one, for the integer dtypes narrower
    than int32; None for a direct cast. C++ leaves a float -> integer conversion out of range undefined; what
    torch's compiled casts do on x86 (checked against torch 2.13 there) is a truncating conversion to a wider
    integer, whose low bits are kept: to int8 and int16 through int32 (out of int32's range, and NaN, give
    INT32_MIN, whose low bits are 0: 1e10 -> 0, 65536.0 -> 0 in int16, 300.7 -> 44 in int8), to uint8 through
    int64 (a float64 2**32 + 5 -> 5; -1.5 -> 255). NumPy's casts are the same conversions on x86 (its direct
    cast to int16 is not: 1e10 -> -7168); on ARM both saturate instead. ``acc``: the dtype ``sum`` accumulates
    in: int64 for bool and the integers (their sum is int64, as in torch), float32 for bfloat16 (rounded back
    after, as torch's CPU kernel; NumPy would round every partial sum to bfloat16), else None."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "category", "rank", "pycat", "tie", "is_signed",
                 "float_via", "acc")

    def __init__(self, name: str, np_dtype, category: int, rank: int, pycat: int | None = None):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == 2
        self.category = category  # 0 bool, 1 integer, 2 floating
        self.rank = rank  # order inside the category
        self.pycat = category if pycat is None else pycat
        self.tie: DType | None = None  # what a different dtype of the same category and rank promotes with it to
        self.is_signed = name != "bool" and name != "uint8"
        self.float_via = (np.dtype(np.int64 if name == "uint8" else np.int32) if category == 1 and self.itemsize < 4
                          else None)
        self.acc: DType | None = None  # (set below, once the dtypes exist)

    def __repr__(self) -> str:
        return f"{_STYLE.package}.{self.name}"  # (torch.float32 under the torch alias)

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = DType("bool", np.bool_, 0, 0)
uint8 = DType("uint8", np.uint8, 1, 1, pycat=0)
int8 = DType("int8", np.int8, 1, 1, pycat=0)
int16 = DType("int16", np.int16, 1, 2, pycat=0)
int32 = DType("int32", np.int32, 1, 3)
int64 = DType("int64", np.int64, 1, 4)
float16 = DType("float16", np.float16, 2, 1)
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, 2, 1, pycat=0)
float32 = DType("float32", np.float32, 2, 2)
float64 = DType("float64", np.float64, 2, 3)
for _d in (bool_, uint8, int8, int16, int32, int64):
    _d.acc = int64
bfloat16.acc = float32
uint8.tie = int8.tie = int16  # torch.promote_types(uint8, int8) is int16
float16.tie = bfloat16.tie = float32  # and (float16, bfloat16) is float32

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
INTEGER = (uint8, int8, int16, int32, int64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
                 "short": int16})
_BF16_NP = bfloat16.np
_RANGE = {d: (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max)) for d in INTEGER}

default_float = float32


def is_float_np(np_dtype) -> bool:
    """A NumPy dtype of floats, bfloat16 included (ml_dtypes' bfloat16 is of kind 'V', not 'f')."""
    return np_dtype.kind == "f" or np_dtype == _BF16_NP


def finfo(dt: DType):
    """NumPy's ``finfo`` for a floating DType, bfloat16 included (``np.finfo`` refuses ml_dtypes' bfloat16)."""
    return ml_dtypes.finfo(dt.np)


def _by_name(name: str) -> DType:
    return _BY_NAME[name]


def from_numpy(np_dtype) -> DType:
    """The DType for a NumPy dtype, or a clear error naming the supported ones."""
    try:
        d = _BY_NP.get(np.dtype(np_dtype))
    except TypeError:  # (NumPy's "Cannot interpret ... as a data type")
        raise TypeError(f"expected a dtype (one of {', '.join(x.name for x in ALL)}), got {np_dtype!r}") from None
    if d is None:
        raise TypeError(f"unsupported dtype {np.dtype(np_dtype)}; tinygrad_like supports "
                        f"{', '.join(x.name for x in ALL)}")
    return d


def to_dtype(x) -> DType:
    """Accept a DType, a name ('float32'), a NumPy dtype or a Python type (float, int, bool). A dtype of torch's
    that tinygrad_like names but cannot compute in (complex, quantized, ...: :class:`ShellDType`) raises
    ``NotImplementedError`` saying why."""
    if isinstance(x, DType):
        return x
    if isinstance(x, ShellDType):
        raise x.unsupported()
    if x is complex:
        raise SHELLS["complex64"].unsupported()
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
    if a.rank != b.rank:
        return a if a.rank > b.rank else b
    return a if a is b else a.tie


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


def checked_int(value: int, dt: DType) -> int:
    """``value`` for a fill of the integer dtype ``dt`` (``full``, ``fill_``, ``masked_fill``, ``clamp``, ``where``,
    an exponent), as torch converts it: inside the range as it is; for uint8, -255..-1 wrap as in C (``fill_(-1)``
    gives 255); anything else is an error (where ``uint8_tensor + 300`` wraps instead: see ``ops._util``)."""
    lo, hi = _RANGE[dt]
    if lo <= value <= hi:
        return value
    if not dt.is_signed and -hi <= value < 0:
        return value + hi + 1
    raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow: {value} is outside "
                       f"{lo}..{hi}")


def fill_value(value, dt: DType):
    """A Python number written into an integer tensor (a fill, a bound, a masked value, an element of
    ``tensor([...])``, a ``linspace`` end, ``addcmul``'s value), converted as torch converts a number (c10's checked
    conversion): an int as by :func:`checked_int`; a float must be finite and inside the dtype's range as it is
    (uint8 takes no negative float: -0.5 and -1.0 are errors where the int -1 gives 255), then it is truncated
    (``fill_(1.7)`` gives 1); anything else as it is."""
    if dt.category == 1 and (type(value) is int or type(value) is float):
        if type(value) is float:
            lo, hi = _RANGE[dt]
            if not lo <= value <= hi:  # (NaN and the infinities too)
                raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow: {value} is "
                                   f"outside {lo}..{hi}")
            return int(value)
        return checked_int(value, dt)
    return value


def get_default_dtype() -> DType:
    return default_float


def set_default_dtype(d) -> None:
    """Set the dtype of float literals and factories (float32 or float64 usually; any float dtype, as in
    PyTorch)."""
    global default_float
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype expects a floating dtype, got {d.name}")
    default_float = d


# ---- the rest of torch's dtypes: names a program can mention, not compute in ------------------------------------
def _is_complex(self: DType) -> bool:
    return False


def _to_real(self: DType) -> DType:
    return self


def _to_complex(self: DType):
    """torch's complex counterpart of a float dtype; tinygrad_like names the complex dtypes but cannot compute in them,
    so the answer is a :class:`ShellDType`."""
    partner = {"float16": "complex32", "float32": "complex64", "float64": "complex128"}.get(self.name)
    if partner is None:
        raise RuntimeError(f"Unknown Complex ScalarType for {self.name}: only float16, float32 and float64 have one")
    return SHELLS[partner]


DType.is_complex = property(_is_complex, doc="False: every dtype tinygrad_like computes in is real.")
DType.to_real = _to_real
DType.to_complex = _to_complex


class ShellDType:
    """A dtype of torch's that tinygrad_like can name but not compute in (complex, quantized, float8, sub-byte
    integers, bit fields, uint16/32/64). Its attributes answer as torch's do; making a tensor of it raises
    ``NotImplementedError`` saying why (:func:`to_dtype`)."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_complex", "is_signed", "family")

    def __init__(self, name: str, itemsize: int, family: str, *, floating: bool = False, complex_: bool = False,
                 signed: bool = True):
        self.name, self.itemsize, self.family = name, itemsize, family
        self.is_floating_point, self.is_complex, self.is_signed = floating, complex_, signed

    def __repr__(self) -> str:
        return f"{_STYLE.package}.{self.name}"  # (torch.float32 under the torch alias)

    def __reduce__(self):
        return (_shell_by_name, (self.name,))

    def to_real(self):
        real = {"complex32": float16, "complex64": float32, "complex128": float64}.get(self.name)
        return self if real is None else real

    def to_complex(self):
        if self.is_complex:
            return self
        raise RuntimeError(f"Unknown Complex ScalarType for {self.name}")

    def unsupported(self) -> NotImplementedError:
        return NotImplementedError(f"tinygrad_like cannot make tensors of dtype {self.name}: {_WHY[self.family]}")


_WHY = {
    "complex": "complex numbers are not supported (every tensor is real; torch.real/conj/angle of a real tensor "
               "work as in torch)",
    "quantized": "quantized tensors are not supported; it computes in floating point and integer dtypes only",
    "float8": "8-bit and 4-bit floating point dtypes are not supported (no kernel computes in them here); use "
              "bfloat16 or float16",
    "subbyte": "sub-byte integer dtypes (int1..int7, uint1..uint7) are torch's placeholders for packed kernels, "
               "which tinygrad_like does not have; use int8 or uint8",
    "bits": "bit-field dtypes (bits8, bits16, ...) are torch's opaque storage types, with no arithmetic",
    "wide_uint": "uint16, uint32 and uint64 are not supported (torch's own support for them is limited to storage: "
                 "it cannot add or promote them); use int32 or int64",
}


def _shells() -> dict:
    s: dict = {}

    def add(name, size, family, **kw):
        s[name] = ShellDType(name, size, family, **kw)

    add("complex32", 4, "complex", complex_=True)
    add("complex64", 8, "complex", complex_=True)
    add("complex128", 16, "complex", complex_=True)
    for name in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                 "float4_e2m1fn_x2"):
        add(name, 1, "float8", floating=True, signed=name != "float8_e8m0fnu")
    add("qint8", 1, "quantized")
    add("quint8", 1, "quantized", signed=False)
    add("qint32", 4, "quantized")
    add("quint4x2", 1, "quantized", signed=False)
    add("quint2x4", 1, "quantized", signed=False)
    for i in range(1, 8):
        add(f"int{i}", 1, "subbyte")
        add(f"uint{i}", 1, "subbyte", signed=False)
    for name in ("bits8", "bits16", "bits1x8", "bits2x4", "bits4x2"):
        add(name, 2 if name == "bits16" else 1, "bits", signed=False)
    add("uint16", 2, "wide_uint", signed=False)
    add("uint32", 4, "wide_uint", signed=False)
    add("uint64", 8, "wide_uint", signed=False)
    s["cfloat"], s["cdouble"], s["chalf"] = s["complex64"], s["complex128"], s["complex32"]
    s["bit"] = s["uint1"]  # (torch.bit is torch.uint1)
    return s


SHELLS = _shells()


def _shell_by_name(name: str) -> ShellDType:
    return SHELLS[name]


class _DTypeMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, (DType, ShellDType))


class dtype(metaclass=_DTypeMeta):  # noqa: N801 - torch's name for the class of its dtypes
    """torch.dtype: ``isinstance(x, torch.dtype)`` holds for every dtype object (those tinygrad_like computes in and
    the ones it only names); as in torch, it cannot be instantiated."""

    def __new__(cls):
        raise TypeError("cannot create 'torch.dtype' instances")
