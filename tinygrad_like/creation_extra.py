"""More of torch's factories: ``range``, ``scalar_tensor``, ``asarray``, ``frombuffer``, ``from_file``,
``empty_strided``, ``empty_permuted``, the window functions, ``vander``, ``cartesian_prod``, ``combinations``,
``block_diag``, ``unravel_index``, and the free functions ``fill``, ``fill_``, ``zero_``."""

from __future__ import annotations

import builtins
import itertools
import math
import warnings
from typing import Any

import numpy as np

from . import dtypes
from .creation import empty, from_numpy, full, tensor, zeros
from .ops.movement import cat, stack
from .ops.shaping import meshgrid
from .tensor import Tensor
from .tensor_base import TensorBase, _made

__all__ = ["range", "scalar_tensor", "asarray", "frombuffer", "from_file", "empty_strided", "empty_permuted",
           "bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window", "vander",
           "cartesian_prod", "combinations", "block_diag", "unravel_index", "fill", "fill_", "zero_"]


def _float_dtype(dtype) -> dtypes.DType:
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    return dt


def range(start: float = 0, end: float | None = None, step: float = 1, *, dtype=None, device=None,  # noqa: A001
          requires_grad: bool = False) -> Tensor:
    """Deprecated in torch: ``start .. end`` *inclusive*, in the default float dtype."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    vals = start + np.arange(n, dtype=np.float64) * step
    return tensor(vals, dtype=_float_dtype(dtype), device=device, requires_grad=requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of the number ``s`` (default dtype: the default float, whatever the number's type)."""
    return tensor(float(s) if not isinstance(s, bool) else s, dtype=_float_dtype(dtype), device=device,
                  requires_grad=requires_grad)


def asarray(obj: Any, *, dtype=None, device=None, copy: bool | None = None, requires_grad: bool = False) -> Tensor:
    """``obj`` as a tensor, sharing memory when it can (a tensor of the same dtype and device, a NumPy array) unless
    ``copy``; ``copy=False`` refuses a conversion that would have to copy."""
    if isinstance(obj, TensorBase):
        same = (dtype is None or dtypes.to_dtype(dtype) is obj.dtype) and (device is None or str(device) ==
                                                                            str(obj.device))
        if same and not copy:  # (the same memory; a requires_grad request gets an alias, leaving obj as it is)
            return obj if not requires_grad else obj.detach().requires_grad_(True)
        if copy is False:
            raise ValueError("asarray(): can't alias the tensor with copy=False: its dtype or device differs")
        t = obj.to(dtype=dtype, device=device) if not same else obj.clone()
        return t.detach().requires_grad_(requires_grad) if requires_grad else t.detach()
    if isinstance(obj, np.ndarray) and not copy:
        dt = None if dtype is None else dtypes.to_dtype(dtype)
        if (dt is None or dt.np == obj.dtype) and (device is None or str(device) == "cpu"):
            try:
                t = from_numpy(obj)
            except (TypeError, ValueError):
                t = None
            if t is not None:
                return _made(t, requires_grad)
        if copy is False:
            raise ValueError("asarray(): can't alias the array with copy=False: it needs a conversion")
    elif copy is False and not isinstance(obj, np.ndarray):
        mv = memoryview(obj) if hasattr(obj, "__buffer__") or isinstance(obj, (bytes, bytearray)) else None
        if mv is None:
            raise ValueError(f"asarray(): can't alias a {type(obj).__name__} with copy=False")
        return frombuffer(obj, dtype=dtype or dtypes.get_default_dtype(), requires_grad=requires_grad)
    return tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)


def frombuffer(buffer: Any, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-d tensor sharing the memory of an object of the buffer protocol (bytes, bytearray, array.array...)."""
    dt = dtypes.to_dtype(dtype)
    mv = memoryview(buffer)
    nbytes = mv.nbytes
    if offset < 0 or offset >= nbytes and nbytes:
        raise ValueError(f"both buffer length ({nbytes}) and offset ({offset}) must be positive, with offset "
                         f"inside the buffer")
    avail = (nbytes - offset) // dt.itemsize
    if count < 0:
        if (nbytes - offset) % dt.itemsize:
            raise ValueError(f"buffer length ({nbytes - offset} bytes after offset {offset}) must be a multiple of "
                             f"element size ({dt.itemsize})")
        count = avail
    elif count > avail:
        raise ValueError(f"requested buffer length ({count} * {dt.itemsize} bytes) after offset ({offset}) must not "
                         f"be greater than actual buffer length ({nbytes})")
    if count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    arr = np.frombuffer(buffer, dtype=dt.np, count=count, offset=offset)
    if not arr.flags.writeable:  # (bytes: read-only; torch warns and shares it anyway)
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor.",
                      UserWarning, stacklevel=2)
        arr = arr.copy()
    return _made(from_numpy(arr), requires_grad)


def from_file(filename: str, shared: bool | None = None, size: int | None = 0, *, dtype=None, layout=None,
              device=None, pin_memory: bool | None = False, requires_grad: bool = False) -> Tensor:
    """A 1-d tensor of ``size`` elements read from a binary file. With ``shared`` the tensor maps the file (writes
    go to it), else it holds a copy."""
    dt = _float_dtype(dtype)
    n = int(size or 0)
    if shared:
        arr = np.memmap(filename, dtype=dt.np, mode="r+", shape=(n,))
        return _made(from_numpy(np.asarray(arr)), requires_grad)
    arr = np.fromfile(filename, dtype=dt.np, count=n)
    if arr.size < n:
        raise RuntimeError(f"from_file(): the file {filename!r} holds {arr.size} elements of {dt.name}, fewer than "
                           f"size={n}")
    return tensor(arr, dtype=dt, device=device, requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` with the given strides over a storage just large enough (zero-filled here: torch leaves
    it uninitialized)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes and {len(stride)} strides")
    need = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = zeros(need, dtype=dtype, device=device)
    t = base.as_strided(size, stride, 0)
    return _made(t, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` whose dims lie in memory in the order ``physical_layout`` (outermost first)."""
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError(f"physical_layout {list(order)} is not a permutation of the {len(size)} dims")
    phys = empty(*[size[d] for d in order], dtype=dtype, device=device)
    inv = [0] * len(order)
    for i, d in enumerate(order):
        inv[d] = i
    return _made(phys.permute(inv), requires_grad)




# ---- window functions: torch's formulas, computed in float64 and rounded to the dtype -----------------------------
def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad, fn) -> Tensor:
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dt = _float_dtype(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt.name}")
    if window_length == 0:
        return empty(0, dtype=dt, device=device, requires_grad=requires_grad)
    if window_length == 1:
        return full((1,), 1.0, dtype=dt, device=device, requires_grad=requires_grad)
    n = window_length + 1 if periodic else window_length
    vals = fn(np.arange(n, dtype=np.float64), n)[:window_length]
    return tensor(vals, dtype=dt, device=device, requires_grad=requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1 - np.abs(2 * k / (n - 1) - 1))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.42 - 0.5 * np.cos(2 * np.pi * k / (n - 1)) + 0.08 * np.cos(4 * np.pi * k / (n - 1)))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype=None, layout=None, device=None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: alpha - beta * np.cos(2 * np.pi * k / (n - 1)))


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.5 - 0.5 * np.cos(2 * np.pi * k / (n - 1)))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, layout=None,
                  device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: np.i0(beta * np.sqrt(np.clip(1 - ((k - (n - 1) / 2) / ((n - 1) / 2)) ** 2, 0, None)))
                   / np.i0(beta))


# ---- combinatorics ---------------------------------------------------------------------------------------------
def _input(x, fn: str) -> Tensor:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803 - torch's name
    """The Vandermonde matrix: columns ``x**(N-1), ..., x, 1`` (reversed with ``increasing``)."""
    _input(x, "vander")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if n == 0:
        return x.new_zeros(x.shape[0], 0, dtype=x.dtype if x.dtype.category else dtypes.int64)
    dt = x.dtype if x.dtype.category else dtypes.int64
    cols = [x.new_ones(x.shape[0], dtype=dt)]
    xx = x.to(dt)
    for _ in builtins.range(1, n):
        cols.append(cols[-1] * xx)
    out = stack(cols, 1)
    return out if increasing else out.flip(1)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-d tensor, as rows (a 1-d tensor for a single input)."""
    for t in tensors:
        _input(t, "cartesian_prod")
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """``itertools.combinations`` (or ``combinations_with_replacement``) of a 1-d tensor's elements, as rows."""
    _input(input, "combinations")
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_zeros(0)
    make = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(make(builtins.range(input.shape[0]), r))
    if not rows:
        return input.new_zeros(0, r)
    idx = tensor(rows, dtype=dtypes.int64, device=input.device)
    return input[idx.reshape(-1)].reshape(len(rows), r)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-d or 2-d) on the diagonal of a block matrix, zeros elsewhere."""
    mats = []
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):
            raise TypeError(f"block_diag(): argument 'tensors' must be tuple of Tensors, not {type(t).__name__}")
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
        mats.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not mats:
        return zeros(1, 0)
    dt = dtypes.result_type(*[m.reshape(1, -1) for m in mats])
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    out_rows, c = [], 0
    for m in mats:
        left = m.new_zeros(m.shape[0], c, dtype=dt)
        right = m.new_zeros(m.shape[0], cols - c - m.shape[1], dtype=dt)
        out_rows.append(cat([left, m.to(dt), right], 1))
        c += m.shape[1]
    out = cat(out_rows, 0)
    assert out.shape[0] == rows
    return out


def unravel_index(indices: Tensor, shape) -> tuple:
    """The coordinates in a tensor of ``shape`` of flat ``indices`` (negative ones count from the end)."""
    if not isinstance(indices, TensorBase):
        raise TypeError(f"expected 'indices' to be a tensor, but got {type(indices).__name__}")
    if indices.dtype.category != 1:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype.name}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    n = math.prod(shape)
    idx = indices.to(dtypes.int64)
    if idx.numel():
        lo, hi = int(idx.min().item()), int(idx.max().item())
        if lo < -n or hi >= n:
            raise RuntimeError(f"'indices' must be in range [{-n}, {n - 1}]")
    idx = idx % max(n, 1)
    out = []
    for s in reversed(shape):
        out.append(idx % s if s else idx)
        idx = idx // s if s else idx
    return tuple(reversed(out))


# ---- in-place fills as free functions -----------------------------------------------------------------------------
def fill(input: Tensor, value) -> Tensor:  # noqa: A002
    """A tensor of ``input``'s shape, dtype and device filled with ``value`` (a number or a 0-d tensor)."""
    _input(input, "fill")
    with_grad = isinstance(value, TensorBase) and value.requires_grad
    if with_grad:  # (the gradient flows to a 0-d tensor value, as in torch)
        return value.to(input.dtype).expand(input.shape).clone()
    out = input.detach().clone()
    return out.fill_(value)


def fill_(input: Tensor, value) -> Tensor:  # noqa: A002
    return _input(input, "fill_").fill_(value)


def zero_(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "zero_").zero_()

