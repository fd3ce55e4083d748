"""Factories: ``tensor``, ``zeros``, ``ones``, ``full``, ``arange``, ``rand`` ... and ``*_like``."""

from __future__ import annotations

import numbers

import numpy as np

from . import dtypes
from .backends.numpy_backend import NumpyBackend
from .device import CPU, factory_device
from .layout import Layout
from .random import default_generator
from .storage import Storage
from .tensor import Tensor, _new, _shape_args, wrap_native
from .tensor_base import _made


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    return _made(t, requires_grad)


def _infer_dtype(arr: np.ndarray, data) -> dtypes.DType:
    k = arr.dtype.kind
    if k == "b":
        return dtypes.bool_
    if k in "iu":
        return dtypes.from_numpy(arr.dtype) if isinstance(data, np.ndarray) and arr.dtype in (
            np.int32, np.int64, np.int16, np.int8, np.uint8) else dtypes.int64
    if k == "f" or arr.dtype == dtypes.bfloat16.np:
        if isinstance(data, np.ndarray) and arr.dtype in (np.float16, np.float32, np.float64, dtypes.bfloat16.np):
            return dtypes.from_numpy(arr.dtype)
        return dtypes.default_float
    raise TypeError(f"can't convert data of type {arr.dtype} to a tensor; expected numbers, bools, nested "
                    f"lists of them, or a NumPy array")


def _check_nested(data, depth: int = 0, shape: list | None = None) -> None:
    """Explain ragged nested lists the way PyTorch does."""
    if shape is None:
        shape = []
    if isinstance(data, (list, tuple)):
        if len(shape) <= depth:
            shape.append(len(data))
        elif shape[depth] != len(data):
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {len(data)})")
        for d in data:
            _check_nested(d, depth + 1, shape)
    elif isinstance(data, Tensor):
        pass
    elif not isinstance(data, (numbers.Number, np.generic)):
        raise TypeError(f"can't convert {type(data).__name__} to a tensor element; expected a number or bool")


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a *copy* of ``data`` (numbers, nested lists, NumPy arrays or tensors).

    >>> tensor([[1, 2], [3, 4]]).dtype
    tinygrad_like.int64
    """
    dev = factory_device(device)
    if isinstance(data, Tensor):
        arr = np.array(data._host(), copy=True)
    else:
        if isinstance(data, (list, tuple)):
            _check_nested(data)
            if any(isinstance(d, Tensor) for d in data):
                data = [d._host() if isinstance(d, Tensor) else d for d in data]
        arr = np.array(data, copy=True)
    dt = dtypes.to_dtype(dtype) if dtype is not None else (
        data.dtype if isinstance(data, Tensor) else _infer_dtype(arr, data))
    if arr.dtype.kind not in "biuf" and arr.dtype != dtypes.bfloat16.np:
        raise TypeError(f"can't convert data of type {arr.dtype} to a tensor")
    if dt.category == 1 and not isinstance(data, (np.ndarray, Tensor)):
        _check_fits(arr, data, dt)
    arr = np.asarray(NumpyBackend.cast(arr, dt) if arr.dtype != dt.np else arr, order="C")  # (0-d stays 0-d)
    t = wrap_native(arr if dev is CPU else dev.backend.from_numpy(arr), dev)
    return _finish(t, requires_grad)


def _check_fits(arr: np.ndarray, data, dt: dtypes.DType) -> None:
    """Numbers written out for an integer tensor must fit it, as torch converts each (``dtypes.fill_value``:
    ``tensor([300], dtype=uint8)``, ``tensor([-1.7], dtype=uint8)``, ``tensor([nan], dtype=int8)`` are errors
    there, not 44, 255, 0); an array's or a tensor's values are cast (and wrap) instead."""
    if not arr.size or arr.dtype.kind not in "iuf":
        return
    lo, hi = dtypes._RANGE[dt]
    if arr.dtype.kind == "f":
        if not ((arr >= lo) & (arr <= hi)).all():  # (NaN fails too) each number by its own type: a list that
            for v in _numbers(data):  # mixes ints and floats came as floats, and uint8 takes the int -1, not -1.0
                dtypes.fill_value(v, dt)
        return
    lo = -hi if not dt.is_signed else lo  # (torch lets -255..-1 wrap into uint8, as C does)
    if arr.min() < lo or arr.max() > hi:
        bad = arr[(arr < lo) | (arr > hi)].flat[0]
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow: {bad.item()} is "
                           f"outside {lo}..{hi}")


def _numbers(data):
    """The numbers of nested lists (as Python numbers; NumPy ones and arrays taken apart), in order."""
    if isinstance(data, (list, tuple)):
        for d in data:
            yield from _numbers(d)
    elif isinstance(data, np.ndarray):
        yield from (v.item() for v in data.flat)
    else:
        yield data.item() if isinstance(data, np.generic) else data


def from_numpy(arr: np.ndarray) -> Tensor:
    """A CPU tensor that *shares memory* with ``arr`` (writes show through both ways)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    dt = dtypes.from_numpy(arr.dtype)
    isz = arr.itemsize
    if any(s < 0 for s in arr.strides):
        raise ValueError("At least one stride in the given numpy array is negative; from_numpy cannot share "
                         "it. Use np.ascontiguousarray(arr) (a copy) first.")
    if any(s % isz for s in arr.strides):
        raise ValueError("from_numpy needs strides that are multiples of the element size")
    if arr.flags.c_contiguous:
        flat, layout = arr, Layout.contiguous(arr.shape)
    else:
        span = 1 + sum((n - 1) * (s // isz) for n, s in zip(arr.shape, arr.strides)) if arr.size else 0
        flat = np.lib.stride_tricks.as_strided(arr, shape=(span,), strides=(isz,))
        layout = Layout(arr.shape, tuple(s // isz for s in arr.strides), 0)
    t = _new(Tensor)
    t._st = Storage(CPU, dt, flat.size, host=flat)
    t._lay, t._dev, t.dtype = layout, CPU, dt
    t._x = CPU.backend.view(flat, layout, dt) if not arr.flags.c_contiguous else arr
    t._requires_grad, t.grad, t.grad_fn, t._hooks, t._base = False, None, None, None, None
    return t


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dtype = {0: dtypes.bool_, 1: dtypes.int64}.get(dtypes.scalar_category(fill_value), dtypes.default_float)
    dt, dev = dtypes.to_dtype(dtype), factory_device(device)
    fill_value = dtypes.fill_value(fill_value, dt)
    return _finish(wrap_native(dev.backend.full(_shape_args((size,)), fill_value, dt), dev), requires_grad)


def _filled(value, size, dtype, device, requires_grad) -> Tensor:
    dt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.default_float
    dev = factory_device(device)
    return _finish(wrap_native(dev.backend.full(_shape_args(size), value, dt), dev), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _filled(0, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _filled(1, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uninitialised in PyTorch; zero-filled here so that results never depend on stale memory."""
    return _filled(0, size, dtype, device, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and larger bound inconsistent with step sign (start={start}, "
                           f"end={end}, step={step})")
    if dtype is None:
        dtype = dtypes.int64 if all(isinstance(v, int) for v in (start, end, step)) else dtypes.default_float
    dt, dev = dtypes.to_dtype(dtype), factory_device(device)
    return _finish(wrap_native(dev.backend.arange(start, end, step, dt), dev), requires_grad)


def _endpoints(fn: str, start, end, steps, dtype):
    """linspace/logspace arguments as torch reads them: numbers or 0-d tensors; an integer ``dtype`` converts the
    endpoints to it first, as torch does (checked and truncated: ``dtypes.fill_value``)."""
    vals = []
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor):
            if v.ndim:
                raise RuntimeError(f"{fn}(): argument '{name}' must be a number or a 0-dimensional tensor, got a "
                                   f"tensor of shape {list(v.shape)}")
            v = v.item()
        if not isinstance(v, numbers.Real):
            raise TypeError(f"{fn}(): argument '{name}' must be a number, not {type(v).__name__}")
        vals.append(v)
    if isinstance(steps, Tensor):
        steps = steps.item()
    if not isinstance(steps, numbers.Integral) or isinstance(steps, bool):
        raise TypeError(f"{fn}(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError(f"{fn}: number of steps must be non-negative, got {steps}")
    dt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.default_float
    if not dt.is_floating_point:  # as torch converts a number (300 is an error for uint8, -1 gives 255), the
        n = min(int(steps), 2)  # endpoints it reads: none for no steps, the start alone for one
        vals = [dtypes.fill_value(v if type(v) in (bool, int, float) else
                                  int(v) if isinstance(v, numbers.Integral) else float(v), dt) for v in vals[:n]]
        vals += [vals[0] if vals else 0] * (2 - n)
    return vals[0], vals[1], int(steps), dt


def linspace(start, end, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included."""
    start, end, steps, dt = _endpoints("linspace", start, end, steps, dtype)
    dev = factory_device(device)
    return _finish(wrap_native(dev.backend.linspace(start, end, steps, dt), dev), requires_grad)


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``: ``steps`` values evenly spaced on a log scale."""
    start, end, steps, dt = _endpoints("logspace", start, end, steps, dtype)
    dev = factory_device(device)
    return _finish(wrap_native(dev.backend.logspace(start, end, steps, base, dt), dev), requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    dt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.default_float
    dev = factory_device(device)
    return _finish(wrap_native(dev.backend.eye(n, n if m is None else m, dt), dev), requires_grad)


def _random(kind: str, size, dtype, device, requires_grad, generator, *args) -> Tensor:
    dt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.default_float
    if kind != "randint" and not dt.is_floating_point:
        raise RuntimeError(f"{kind}: expected a floating point dtype, got {dt.name}")
    dev = factory_device(device)
    gen = generator or default_generator
    shape = _shape_args(size)
    host = getattr(CPU.backend, kind if kind != "rand" else "uniform")(gen, shape, *args, dt)
    t = wrap_native(host if dev is CPU else dev.backend.from_numpy(host), dev)
    return _finish(t, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad: bool = False, generator=None) -> Tensor:
    """Uniform on [0, 1), from the seedable default generator (``tl.manual_seed``)."""
    return _random("rand", size, dtype, device, requires_grad, generator, 0.0, 1.0)


def randn(*size, dtype=None, device=None, requires_grad: bool = False, generator=None) -> Tensor:
    return _random("normal", size, dtype, device, requires_grad, generator, 0.0, 1.0)


def randint(low, high=None, size=None, *, dtype=None, device=None, generator=None,
            requires_grad: bool = False) -> Tensor:
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size' (e.g. randint(10, (3,)))")
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"randint: expected low < high, got low={low} high={high}")
    return _random("randint", (tuple(size),), dtype or dtypes.int64, device, requires_grad, generator, low, high)


def randperm(n: int, *, dtype=None, device=None, generator=None, requires_grad: bool = False) -> Tensor:
    dt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.int64
    dev = factory_device(device)
    host = CPU.backend.randperm(generator or default_generator, n, dt)
    return _finish(wrap_native(host if dev is CPU else dev.backend.from_numpy(host), dev), requires_grad)


def _like(fn, t: Tensor, dtype, device, requires_grad, *args):
    return fn(*args, t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def zeros_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(zeros, t, dtype, device, requires_grad)


def ones_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(ones, t, dtype, device, requires_grad)


def empty_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(empty, t, dtype, device, requires_grad)


def full_like(t: Tensor, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device,
                requires_grad=requires_grad)


def rand_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(rand, t, dtype, device, requires_grad)


def randn_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(randn, t, dtype, device, requires_grad)


def randint_like(t: Tensor, low, high=None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return randint(low, high, t.shape, dtype=dtype or t.dtype, device=device or t.device,
                   requires_grad=requires_grad)
