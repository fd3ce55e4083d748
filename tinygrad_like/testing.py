"""``torch.testing``: compare tensors with dtype-aware tolerances (``assert_close``) and make random test inputs
(``make_tensor``).

``assert_close`` follows torch's rules and words: the default ``rtol``/``atol`` of the inputs' dtypes (0 and 0, an
exact comparison, for integers and booleans), the attribute checks (shape, device, dtype, stride) before the values,
containers compared item by item, and torch's ``AssertionError`` text:

>>> import tinygrad_like as tl
>>> from tinygrad_like.testing import assert_close
>>> assert_close(tl.tensor([1.0, 2.0, 3.0]), tl.tensor([1.0, 2.5, 3.0]))
Traceback (most recent call last):
...
AssertionError: Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 1 / 3 (33.3%)
Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

import cmath
import collections.abc
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from . import dtypes
from .creation import empty, randint, tensor
from .tensor import Tensor
from .unsupported import TORCHSCRIPT, unsupported_class

__all__ = ["FileCheck", "assert_allclose", "assert_close", "make_tensor"]

FileCheck = unsupported_class("torch.testing.FileCheck", TORCHSCRIPT)

# torch's default (rtol, atol) per dtype; every other dtype compares exactly
_DTYPE_PRECISIONS = {dtypes.float16: (1e-3, 1e-5), dtypes.bfloat16: (1.6e-2, 1e-5), dtypes.float32: (1.3e-6, 1e-5),
                     dtypes.float64: (1e-7, 1e-7)}
_NUMBER_DTYPES = {bool: dtypes.bool_, int: dtypes.int64, float: dtypes.float64}


class _Mismatch(Exception):
    """A failed comparison on its way out: the exception type, the message and the item's place in containers."""

    def __init__(self, type_: type[Exception], msg: str, id_: tuple = ()):
        super().__init__(msg)
        self.type, self.msg, self.id = type_, msg, id_

    def to_error(self, msg: str | Callable[[str], str] | None) -> Exception:
        if isinstance(msg, str):
            return self.type(msg)
        generated = self.msg
        if self.id:
            generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
        return self.type(msg(generated) if callable(msg) else generated)


def _tolerances(dts, rtol, atol) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_DTYPE_PRECISIONS.get(d, (0.0, 0.0)) for d in dts]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_msg(kind: str, diff, idx, tol, equality: bool) -> str:
    msg = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
    return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"


def _mismatch_msg(identifier: str, extra: str, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    equality = rtol == 0 and atol == 0
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += _diff_msg("absolute", abs_diff, abs_idx, atol, equality)
    msg += _diff_msg("relative", rel_diff, rel_idx, rtol, equality)
    return msg.strip()


def _scalar_msg(actual, expected, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = math.inf if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff, None,
                         rtol)


def _isclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """torch.isclose on host arrays: exact equality (infinities included), else |a - b| <= atol + rtol |b|."""
    if a.dtype == np.bool_ or (rtol == 0 and atol == 0):
        close = a == b
    else:
        if not np.issubdtype(a.dtype, np.floating) or a.dtype.itemsize < 4:
            a, b = a.astype(np.float64 if not np.issubdtype(a.dtype, np.floating) else np.float32), b.astype(
                np.float64 if not np.issubdtype(b.dtype, np.floating) else np.float32)
        with np.errstate(all="ignore"):
            err = np.abs(a - b)
            close = (a == b) | (np.isfinite(err) & (err <= atol + rtol * np.abs(b)))
    if equal_nan and np.issubdtype(a.dtype, np.floating):
        close = close | (np.isnan(a) & np.isnan(b))
    return close


def _compare_arrays(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> str | None:
    """None when close, else torch's message (its scalar form for 0-d values)."""
    matches = _isclose(a, b, rtol, atol, equal_nan)
    if matches.all():
        return None
    if a.ndim == 0:
        return _scalar_msg(a.item(), b.item(), rtol, atol)
    total, n = int(matches.size - matches.sum()), matches.size
    extra = f"Mismatched elements: {total} / {n} ({total / n:.1%})"
    fa, fb, fm = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    if not np.issubdtype(fa.dtype, np.floating):
        fa, fb = fa.astype(np.int64), fb.astype(np.int64)
    elif fa.dtype.itemsize < 4:  # (half precision: compute the differences in float32, as readable numbers)
        fa, fb = fa.astype(np.float32), fb.astype(np.float32)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(fa - fb)
        abs_diff[fm] = 0
        rel_diff = abs_diff / np.abs(fb)
        rel_diff[fm] = 0
    ia, ir = _argmax(abs_diff), _argmax(rel_diff)
    where = lambda i: tuple(int(k) for k in np.unravel_index(i, matches.shape))  # noqa: E731
    return _mismatch_msg("Tensor-likes", extra, abs_diff[ia].item(), where(ia), atol, rel_diff[ir].item(), where(ir),
                         rtol)


def _argmax(x: np.ndarray) -> int:
    """torch.max's index: the first maximum, a NaN counting as the largest."""
    nan = np.isnan(x) if np.issubdtype(x.dtype, np.floating) else None
    if nan is not None and nan.any():
        return int(np.argmax(nan))
    return int(np.argmax(x))


def _is_tensor_like(x) -> bool:
    return isinstance(x, (Tensor, np.ndarray))


def _is_number(x) -> bool:
    return isinstance(x, (int, float, complex, np.number)) and not isinstance(x, bool)


def _compare_tensors(actual, expected, *, allow_subclasses, rtol, atol, equal_nan, check_device, check_dtype,
                     check_stride, id_) -> None:
    numpy_pair = isinstance(actual, np.ndarray)
    if numpy_pair != isinstance(expected, np.ndarray) or (not allow_subclasses and type(actual) is not type(expected)):
        raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                                   f"{type(expected)}.", id_)
    if numpy_pair:
        actual, expected = tensor(actual), tensor(expected)

    def attribute(name, a, b):
        raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {b}.", id_)

    if actual.shape != expected.shape:
        attribute("shape", actual.shape, expected.shape)
    if check_stride and actual.stride() != expected.stride():
        attribute("stride()", actual.stride(), expected.stride())
    if check_device and str(actual.device) != str(expected.device):
        attribute("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        attribute("dtype", actual.dtype, expected.dtype)
    rtol, atol = _tolerances((actual.dtype, expected.dtype), rtol, atol)
    common = actual.dtype if actual.dtype == expected.dtype else dtypes.result_type(actual, expected)
    a = actual.detach().cpu().to(common).numpy()
    b = expected.detach().cpu().to(common).numpy()
    msg = _compare_arrays(np.asarray(a), np.asarray(b), rtol, atol, equal_nan)
    if msg is not None:
        raise _Mismatch(AssertionError, msg, id_)


def _compare_numbers(actual, expected, *, rtol, atol, equal_nan, check_dtype, id_) -> None:
    actual = actual.item() if isinstance(actual, np.number) else actual
    expected = expected.item() if isinstance(expected, np.number) else expected
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id_)
    rtol, atol = _tolerances([_NUMBER_DTYPES.get(type(v), dtypes.float64) for v in (actual, expected)], rtol, atol)
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rtol, atol), id_)


def _compare(actual, expected, id_: tuple, **options) -> None:
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", id_)
        return
    if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if bool(actual) is not bool(expected):
            raise _Mismatch(AssertionError, f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", id_)
        return
    if _is_tensor_like(actual) and _is_tensor_like(expected):
        _compare_tensors(actual, expected, id_=id_, **options)
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, rtol=options["rtol"], atol=options["atol"],
                         equal_nan=options["equal_nan"], check_dtype=options["check_dtype"], id_=id_)
        return
    sequence = (lambda x: isinstance(x, Sequence) and not isinstance(x, str))
    if sequence(actual) and sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                            id_)
        for i, (a, b) in enumerate(zip(actual, expected)):
            _compare(a, b, (*id_, i), **options)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        ka, kb = set(actual.keys()), set(expected.keys())
        if ka != kb:
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {sorted(kb - ka)}\n"
                                            f"Additional keys in the actual mapping: {sorted(ka - kb)}", id_)
        try:
            keys = sorted(ka)
        except TypeError:  # (keys of mixed types: the mapping's own order)
            keys = list(actual.keys())
        for k in keys:
            _compare(actual[k], expected[k], (*id_, k), **options)
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                               f"{type(expected)}.", id_)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close: ``|actual - expected| <= atol + rtol *
    |expected|`` elementwise, with torch's default tolerances per dtype (exact for integers and booleans).

    Tensors (and NumPy arrays with NumPy arrays), Python numbers, and sequences or mappings of them compare; a string
    ``msg`` replaces the message, a callable one receives it and returns the message to raise.
    """
    __tracebackhide__ = True
    try:
        _compare(actual, expected, (), allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=check_device, check_dtype=check_dtype, check_stride=check_stride)
    except _Mismatch as m:
        raise m.to_error(msg) from None


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (as in torch since 1.12): ``assert_close`` with looser defaults and dtype promotion."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        precisions = {dtypes.float16: (1e-3, 1e-3), dtypes.float32: (1e-4, 1e-5), dtypes.float64: (1e-5, 1e-8)}
        pairs = [precisions.get(d, (0.0, 0.0)) for d in (actual.dtype, expected.dtype)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format=None) -> Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)`` (torch's defaults per dtype: [-9, 9)
    for floating types, [-9, 10) for signed and [0, 10) for unsigned integers, {False, True} for bool)."""
    dt = dtypes.to_dtype(dtype)

    def limits(lowest, highest, default_low, default_high):
        lo = default_low if low is None else low
        hi = default_high if high is None else high
        if any(isinstance(v, float) and math.isnan(v) for v in (lo, hi)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
        if lo == hi and dt.is_floating_point:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                          "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                          FutureWarning, stacklevel=3)
        elif lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        elif hi < lowest or lo >= highest:
            raise ValueError(f"The value interval specified by `low` and `high` is [{lo}, {hi}), but {dt} only "
                             f"supports [{lowest}, {highest})")
        lo, hi = min(max(lo, lowest), highest), min(max(hi, lowest), highest)
        return (math.ceil(lo), math.ceil(hi)) if not dt.is_floating_point else (lo, hi)

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and not dt.is_floating_point:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dt}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice the last dimension, then every other element: a strided view with distinct values
        shape = (*shape[:-1], 2 * shape[-1])
    if dt == dtypes.bool_:
        lo, hi = limits(0, 2, 0, 2)
        result = randint(lo, hi, shape, dtype=dtypes.int64, device=device).to(dt)
    elif not dt.is_floating_point:
        info = np.iinfo(dt.np)
        lo, hi = limits(int(info.min), int(info.max) + (1 if dt != dtypes.int64 else 0), -9, 10)
        result = randint(lo, hi, shape, dtype=dt, device=device)
    else:
        info = dtypes.finfo(dt)
        lo, hi = limits(float(info.min), float(info.max), -9, 9)
        result = empty(shape, dtype=dt, device=device)
        result = result.uniform_(lo / 2, hi / 2).mul_(2) if hi - lo >= float(info.max) else result.uniform_(lo, hi)
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        fill = 1 if not dt.is_floating_point else float(dtypes.finfo(dt).tiny)
        result = result.masked_fill(result == 0, fill)
    if dt.is_floating_point:
        result.requires_grad_(requires_grad)
    return result
