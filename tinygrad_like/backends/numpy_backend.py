"""The CPU backend: every primitive is a NumPy call on host arrays.

A backend is an object whose attributes are the primitives the Tensor API is composed from, as the table in
``protocol.py`` lists them: memory (alloc, views, transfers), elementwise ops with broadcasting, reductions,
matmul, movement copies, creation, random numbers, indexing, the fused primitives (softmax/log-softmax forward and
backward here, the neural-network ones in ``numpy_nn``) and the optimizer updates. Every primitive returns a
*fresh* array (never a view of an input: storages must not alias), except those the table says write in place.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import is_float_np
from . import blas_threads, cpu_kernels, numpy_special
from ._malloc import tune_glibc_malloc
from .numpy_attention import NumpyAttentionPrimitives
from .numpy_linalg import NumpyLinalgPrimitives
from .numpy_math import NumpyMathPrimitives
from .numpy_nn import NumpyNNPrimitives, elementwise_compiled, masked, relu
from .numpy_recurrent import NumpyRecurrentPrimitives
from .numpy_shaping import NumpyShapingPrimitives
from .numpy_sorting import NumpySortingPrimitives

tune_glibc_malloc()

_add_reduce, _max_reduce, _min_reduce = np.add.reduce, np.maximum.reduce, np.minimum.reduce


def _fresh(r):
    """Primitives must return a new C-contiguous ndarray (NumPy gives scalars for 0-d results)."""
    if type(r) is not np.ndarray:
        return np.asarray(r)
    return r


def _sign(x, /):
    """-1, 0 or 1; 0 for NaN, as torch's (NumPy's sign of NaN is NaN)."""
    r = _fresh(np.sign(x))
    if is_float_np(r.dtype):
        np.copyto(r, 0, where=np.isnan(r))
    return r


def _sigmoid(x, /):
    # exp of -|x| never overflows
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _softplus(x, beta, threshold):
    bx = x * beta
    out = np.where(bx > threshold, x, np.logaddexp(0, bx) / beta)
    return out.astype(x.dtype, copy=False)


_CHAIN_MIN = 4096  # elements: from here an elementwise chain runs as its compiled loop (the ctypes call, ~3 us,
# costs more than a few NumPy passes below)
_AXPY_MIN = 32768  # below this many elements the kernel's call costs what NumPy's two passes in cache take


def _axpy_compiled(y: np.ndarray, x: np.ndarray, alpha: float) -> bool:
    """``y += x * alpha`` as one compiled pass (``kernel_src/cpu/optim.c``), bit for bit NumPy's product then sum;
    False where it does not apply (small, non-contiguous, mixed dtypes, no compiler): NumPy then does it.
    perf: 0.5-0.6x of NumPy's time on the MLP's 0.26-0.4M-element weights (benchmarks/cpu_kernels.py --only optim),
    where SGD's six updates took 8% of the step."""
    if y.size < _AXPY_MIN or x.shape != y.shape or x.dtype != y.dtype or not (
            y.flags.c_contiguous and x.flags.c_contiguous):
        return False
    k = cpu_kernels.typed_kernel("axpy", y.dtype)
    if k is None:
        return False
    k(y.size, y.ctypes.data, x.ctypes.data, alpha)
    cpu_kernels.launched("axpy")
    return True


_BLAS_SUM_MIN = 4096  # below this many elements NumPy's own reduction is cheaper than a matmul with ones


def _sum_keep(x, axis):
    """``np.sum(x, axis, keepdims=True)``; over the last axis of a float32/float64 array, a product with ones: BLAS,
    where NumPy's reduction runs an inner loop per row (4-10x slower over rows of 32 or 64)."""
    if x.size >= _BLAS_SUM_MIN and x.dtype.char in "fd" and axis in (-1, x.ndim - 1):
        return np.matmul(x, np.ones(x.shape[-1], x.dtype))[..., None]
    return np.sum(x, axis=axis, keepdims=True)


def _sum_leading(x, axis, keepdims):
    """The sum over the leading axes of a C-contiguous float array as ``ones @ x`` (BLAS; 2-4x faster than
    ``np.add.reduce`` there, and no less accurate: NumPy sums a non-contiguous axis one row after another too);
    None for other axes or layouts."""
    nd = x.ndim
    if type(axis) is int:
        axes = (axis % nd,)
    elif type(axis) is tuple and all(type(a) is int for a in axis):
        axes = tuple(sorted(a % nd for a in axis))
    else:
        return None
    k = len(axes)
    if axes != tuple(range(k)) or k == nd or not x.flags.c_contiguous or not x.size:
        return None
    rest = x.shape[k:]
    rows = x.size // math.prod(rest)
    r = np.matmul(np.ones(rows, x.dtype), x.reshape(rows, -1))
    return r.reshape((1,) * k + rest if keepdims else rest)


def _last(x, axis) -> bool:
    return axis == x.ndim - 1 or axis == -1


def _by_rows(name: str, kernel, *arrays):
    """Run a compiled row kernel over the last axis: ``kernel(rows, cols, *inputs, out)``; returns ``out``."""
    x = arrays[0]
    out = np.empty_like(x)
    kernel(x.size // x.shape[-1], x.shape[-1], *(a.ctypes.data for a in arrays), out.ctypes.data)
    cpu_kernels.launched(name)
    return out


def _softmax(x, axis):
    k = cpu_kernels.row_kernel("softmax_rows", x) if _last(x, axis) else None
    if k is not None:  # (kernel_src/cpu/rows.c: one kernel, two passes over each row)
        return _by_rows("softmax_fwd", k, x)
    m = np.max(x, axis=axis, keepdims=True) if x.size else x
    e = np.exp(x - m)
    e /= _sum_keep(e, axis)
    return e


def _log_softmax(x, axis):
    k = cpu_kernels.row_kernel("log_softmax_rows", x) if _last(x, axis) else None
    if k is not None:
        return _by_rows("log_softmax_fwd", k, x)
    if not x.size:
        return x.copy()
    m = np.max(x, axis=axis, keepdims=True)
    s = x - m
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def _logsumexp(x, axis, keepdims):
    if not x.size:
        return _fresh(np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)))
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)
    s = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return _fresh(s if keepdims else np.squeeze(s, axis=axis).copy())


def _gather(x, axis, index):
    return np.take_along_axis(x, index, axis=axis)


def _scatter_add(x, axis, index, src):
    """out = x.copy(); out[index[i][j]][j] += src[i][j] along ``axis`` (duplicates add up)."""
    out = x.copy()
    idx = list(np.indices(index.shape, sparse=True))
    idx[axis] = index
    np.add.at(out, tuple(idx), src[tuple(slice(0, n) for n in index.shape)])
    return out


def _index_add(shape, dtype, index, g):
    """Zeros of ``shape`` with ``g`` added at an advanced ``index`` (the backward of indexing).

    Whole rows picked by one integer array (an embedding's, an index_select's backward): the compiled
    ``index_add_rows`` kernel (``kernel_src/cpu/embedding.c``: the rows added in the order of the ids, as
    ``np.add.at`` adds them); without it, into few rows, a one-hot matrix product (BLAS), ~4x faster than
    ``np.add.at`` for 512 ids into 65 rows of 64."""
    out = np.zeros(shape, dtype.np)
    whole = slice(None)
    if type(index) is tuple and index and type(index[0]) is np.ndarray and index[0].ndim == 1 \
            and index[0].dtype.kind in "iu" and all(type(i) is slice and i == whole for i in index[1:]) \
            and out.dtype.char in "fd" and g.shape == index[0].shape + tuple(shape[1:]) and index[0].size:
        ids = index[0]
        in_range = ids.min() >= -shape[0] and ids.max() < shape[0]  # (else np.add.at raises its IndexError)
        if in_range:
            k = cpu_kernels.kernel("index_add_rows_f32" if out.dtype.char == "f" else "index_add_rows_f64")
            if k is not None and g.dtype == out.dtype:
                ids = np.ascontiguousarray(np.where(ids < 0, ids + shape[0], ids), dtype=np.int64)
                g = np.ascontiguousarray(g)
                k(ids.size, ids.ctypes.data, out.size // max(shape[0], 1), g.ctypes.data, out.ctypes.data)
                cpu_kernels.launched("embedding_bwd")
                return out
        if in_range and shape[0] * ids.size <= 8 * g.size:
            onehot = np.zeros((shape[0], ids.size), out.dtype)
            onehot[ids, np.arange(ids.size)] = 1
            np.matmul(onehot, g.reshape(ids.size, -1), out=out.reshape(shape[0], -1))
            return out
    np.add.at(out, index, g)
    return out


def _setitem(x, index, value):
    x[index] = value


def _cumsum(x, axis):
    return np.cumsum(x, axis=axis, dtype=x.dtype)


class NumpyBackend(NumpyNNPrimitives, NumpyMathPrimitives, NumpySortingPrimitives, NumpyLinalgPrimitives,
                   NumpyShapingPrimitives, numpy_special.NumpySpecialPrimitives,
                   NumpyAttentionPrimitives, NumpyRecurrentPrimitives):
    """Host memory and NumPy primitives. Subclassed by tests for a second memory space."""

    name = "numpy"
    is_host = True

    # ---- memory -------------------------------------------------------------------------
    @staticmethod
    def alloc(numel: int, dtype):
        return np.empty(numel, dtype.np)

    @staticmethod
    def view(buf, layout, dtype):
        """The native array for ``layout`` over ``buf`` (a flat host array)."""
        isz = dtype.itemsize
        strides = tuple(s * isz for s in layout.strides)
        try:
            return np.ndarray(layout.shape, dtype.np, buf, layout.offset * isz, strides)
        except ValueError:
            if 0 not in layout.shape:
                raise
            # an empty view may start past the end of its storage (zeros(2, 0)[1], as in PyTorch)
            return np.ndarray(layout.shape, dtype.np, buf, 0, strides)

    @staticmethod
    def adopt(r):
        """Turn a primitive's result into (flat buffer, C-contiguous native array)."""
        if type(r) is not np.ndarray:
            r = np.asarray(r)
        elif not r.flags.c_contiguous:
            r = np.ascontiguousarray(r)
        return r, r

    @staticmethod
    def from_numpy(arr):
        return np.asarray(arr, order="C")  # keeps 0-d arrays 0-d

    @staticmethod
    def to_numpy(x):
        return x

    def wait(self, fence) -> None:  # NumPy work is synchronous
        return None

    # ---- elementwise --------------------------------------------------------------------
    add = staticmethod(np.add)
    sub = staticmethod(np.subtract)
    mul = staticmethod(np.multiply)
    div = staticmethod(np.true_divide)
    pow = staticmethod(np.power)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)
    eq = staticmethod(np.equal)
    ne = staticmethod(np.not_equal)
    lt = staticmethod(np.less)
    le = staticmethod(np.less_equal)
    gt = staticmethod(np.greater)
    ge = staticmethod(np.greater_equal)
    logical_and = staticmethod(np.logical_and)
    logical_or = staticmethod(np.logical_or)
    logical_xor = staticmethod(np.logical_xor)
    logical_not = staticmethod(np.logical_not)
    bitwise_and = staticmethod(np.bitwise_and)  # integer & | ^ (the CUDA backend runs them as host fallbacks)
    bitwise_or = staticmethod(np.bitwise_or)
    bitwise_xor = staticmethod(np.bitwise_xor)
    neg = staticmethod(np.negative)
    abs = staticmethod(np.abs)
    sign = staticmethod(_sign)
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    sqrt = staticmethod(np.sqrt)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    tanh = staticmethod(np.tanh)
    erf = staticmethod(numpy_special.erf)  # NumPy has none: ours, vectorised (numpy_special)
    sigmoid = staticmethod(_sigmoid)
    softplus = staticmethod(_softplus)
    where = staticmethod(np.where)
    clip = staticmethod(np.clip)
    isnan = staticmethod(np.isnan)

    @staticmethod
    def rsqrt(x, /):
        return 1 / np.sqrt(x)

    @staticmethod
    def relu(x, /):
        return relu(x)

    # ---- fused backward helpers (one pass instead of two or three elementwise ops) --------
    @staticmethod
    def relu_backward(g, y):
        # ~(y <= 0) rather than y > 0 so that NaN outputs pass the gradient through, as in PyTorch
        done = elementwise_compiled("relu_bwd", g, y)
        return done if done is not None else masked(g, np.less_equal(y, 0), invert=True)

    @staticmethod
    def tanh_backward(g, y):
        done = elementwise_compiled("tanh_bwd", g, y)
        return done if done is not None else g * (1 - y * y)

    @staticmethod
    def sigmoid_backward(g, y):
        done = elementwise_compiled("sigmoid_bwd", g, y)
        return done if done is not None else g * y * (1 - y)

    @staticmethod
    def elementwise_chain(chain, arrays: tuple, params: tuple = ()):
        """``chain``'s formula (``backends/chains.py``) over ``arrays`` of one shape: one compiled C loop where they
        are float32/float64 arrays of one dtype and at least ``_CHAIN_MIN`` elements, else the formula's steps as
        NumPy calls (the reference the loop is tested against)."""
        x = arrays[0]
        sfx = cpu_kernels.suffix(x.dtype)
        if sfx and x.size >= _CHAIN_MIN and all(a.shape == x.shape and a.dtype == x.dtype for a in arrays[1:]):
            k = cpu_kernels.chain_kernel(chain, sfx)
            if k is not None:  # (a strided or broadcast input, as sum's gradient, costs one copy: still fewer passes)
                arrays = tuple(np.ascontiguousarray(a) for a in arrays)
                out, pd = np.empty(x.shape, x.dtype), np.array(params or (0.0,), np.float64)
                k(x.size, *(a.ctypes.data for a in arrays), out.ctypes.data, pd.ctypes.data)
                cpu_kernels.launched(chain.name)
                return out
        return chain.run(NumpyBackend, arrays, params)

    # ---- shape helpers on temporaries (results that no storage owns yet) ----------------
    @staticmethod
    def reshape(x, shape):
        return x.reshape(shape)

    @staticmethod
    def swap_last(x):
        return np.swapaxes(x, -1, -2)

    @staticmethod
    def permute(x, dims):
        return x.transpose(dims)

    @staticmethod
    def broadcast_to(x, shape):
        return np.broadcast_to(x, shape)

    # ---- casts, copies, fills -----------------------------------------------------------
    @staticmethod
    def cast(x, dtype):
        if dtype.float_via is not None and x.dtype.kind not in "biu":  # float -> int8/uint8/int16: see DType
            x = x.astype(dtype.float_via)
        return x.astype(dtype.np, copy=True)

    @staticmethod
    def copy(x):
        return np.array(x, copy=True, order="C")

    @staticmethod
    def full(shape, value, dtype):
        return np.full(shape, value, dtype.np)

    @staticmethod
    def arange(start, end, step, dtype):
        return np.arange(start, end, step).astype(dtype.np, copy=False)

    @staticmethod
    def linspace(start, end, steps, dtype):
        return np.linspace(start, end, steps).astype(dtype.np, copy=False)

    @staticmethod
    def eye(n, m, dtype):
        return np.eye(n, m, dtype=dtype.np)

    @staticmethod
    def assign(dst, src):
        """In-place write of ``src`` (broadcast) into the view ``dst``."""
        np.copyto(dst, src, casting="unsafe")

    setitem = staticmethod(_setitem)

    @staticmethod
    def scale(y, s) -> None:
        """``y *= s`` in place, for a number ``s`` (``mul_`` by a number outside autograd: SGD's momentum)."""
        np.multiply(y, s, out=y, casting="unsafe")

    @staticmethod
    def axpy(y, x, alpha) -> None:
        """``y += alpha * x`` in place (``add_``/``sub_`` outside autograd, an SGD step): a product and an in-place
        sum, instead of a product, a sum into a new array and a copy back. Rounded twice, as ``y + x * alpha``
        (torch's kernel fuses the two: results may differ from its in the last place).

        Not SciPy's BLAS ``axpy``, though it is one pass and rounds as torch does: its OpenBLAS keeps a thread
        pool of its own, which spins beside NumPy's and made a whole MLP step 2.5x slower here."""
        alpha = float(alpha)  # (a NumPy scalar would make NumPy's product float64 only on the NumPy path)
        if alpha == 1:
            np.add(y, x, out=y)
        elif alpha == -1:
            np.subtract(y, x, out=y)
        elif not _axpy_compiled(y, x, alpha):
            np.add(y, np.multiply(x, alpha), out=y)

    # ---- reductions and scans -----------------------------------------------------------
    # ufunc.reduce directly: np.sum's Python wrapper costs twice the reduction on small arrays
    @staticmethod
    def sum(x, axis, keepdims, dtype=None):
        if (x.size >= _BLAS_SUM_MIN and axis is not None and x.ndim > 1 and x.dtype.char in "fd"
                and (dtype is None or dtype.np == x.dtype)):
            r = _sum_leading(x, axis, keepdims)
            if r is not None:
                return r
        return _add_reduce(x, axis, None if dtype is None else dtype.np, None, keepdims)

    @staticmethod
    def max(x, axis, keepdims):
        return _fresh(_max_reduce(x, axis, None, None, keepdims))

    @staticmethod
    def min(x, axis, keepdims):
        return _fresh(_min_reduce(x, axis, None, None, keepdims))

    @staticmethod
    def argmax(x, axis, keepdims):
        return _fresh(np.argmax(x, axis=axis, keepdims=keepdims)).astype(np.int64, copy=False)

    @staticmethod
    def argmin(x, axis, keepdims):
        return _fresh(np.argmin(x, axis=axis, keepdims=keepdims)).astype(np.int64, copy=False)

    cumsum = staticmethod(_cumsum)

    @staticmethod
    def any(x, axis, keepdims):
        return _fresh(np.any(x, axis=axis, keepdims=keepdims))

    @staticmethod
    def all(x, axis, keepdims):
        return _fresh(np.all(x, axis=axis, keepdims=keepdims))

    # ---- matmul and fused ---------------------------------------------------------------
    matmul = staticmethod(blas_threads.matmul)  # np.matmul, on one BLAS thread when mid-sized (blas_threads.py)
    softmax = staticmethod(_softmax)
    logsumexp = staticmethod(_logsumexp)
    log_softmax = staticmethod(_log_softmax)

    @staticmethod
    def softmax_backward(g, y, axis):
        k = cpu_kernels.row_kernel("softmax_backward_rows", g, y) if _last(g, axis) else None
        if k is not None:
            return _by_rows("softmax_bwd", k, g, y)
        return y * (g - _sum_keep(g * y, axis))

    @staticmethod
    def log_softmax_backward(g, y, axis):
        k = cpu_kernels.row_kernel("log_softmax_backward_rows", g, y) if _last(g, axis) else None
        if k is not None:
            return _by_rows("log_softmax_bwd", k, g, y)
        return g - np.exp(y) * np.sum(g, axis=axis, keepdims=True)

    # ---- movement and indexing ----------------------------------------------------------
    @staticmethod
    def cat(xs, axis):
        return np.concatenate(xs, axis=axis)

    @staticmethod
    def flip(x, axes):
        return np.flip(x, axis=axes).copy()

    @staticmethod
    def pad(x, widths, value):
        return np.pad(x, widths, mode="constant", constant_values=value)

    @staticmethod
    def tile(x, reps):
        return np.tile(x, reps)

    @staticmethod
    def tril(x, k):
        return np.tril(x, k)

    @staticmethod
    def triu(x, k):
        return np.triu(x, k)

    gather = staticmethod(_gather)
    scatter_add = staticmethod(_scatter_add)

    @staticmethod
    def index_select(x, axis, index):
        return np.take(x, index, axis=axis)

    @staticmethod
    def index(x, index):
        return np.array(x[index], copy=True)

    index_add = staticmethod(_index_add)

    @staticmethod
    def nonzero(x):
        return np.stack(np.nonzero(x), axis=-1).astype(np.int64)

    # ---- random (a Philox counter-based generator, reproducible from seed and offset) ----
    @staticmethod
    def uniform(gen, shape, low, high, dtype):
        return gen.np_generator().uniform(low, high, size=shape).astype(dtype.np)

    @staticmethod
    def normal(gen, shape, mean, std, dtype):
        return (gen.np_generator().standard_normal(size=shape) * std + mean).astype(dtype.np)

    @staticmethod
    def randint(gen, shape, low, high, dtype):
        return gen.np_generator().integers(low, high, size=shape).astype(dtype.np)

    @staticmethod
    def randperm(gen, n, dtype):
        return gen.np_generator().permutation(n).astype(dtype.np)
