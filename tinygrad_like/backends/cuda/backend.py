"""The CUDA backend: the primitive protocol of ``NumpyBackend`` on device memory, with our kernels.

Every primitive takes and returns :class:`CudaArray` views (Python numbers where the CPU backend takes
them) and launches ``kernel_src`` kernels through the runtime, without waiting for them. A primitive
that has no kernel here (or a dtype the kernels do not cover, such as float64) runs on the host: its
device operands are downloaded, ``NumpyBackend`` computes, the results are uploaded. That keeps every
program running on ``cuda``, and it is never silent: each such call is counted in ``fallbacks`` and,
while someone listens, reported as a ``KernelTimed`` event named ``host:<primitive>``.

Kernel times are measured by CUDA events (``runtime.LaunchTimer``) and reported at sync points, so
the device does not wrap this backend in ``TimedBackend`` (``times_itself``).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from ... import events
from ...dtypes import from_numpy as from_numpy_dtype
from ...dtypes import int64
from ...layout import broadcast_shapes, contiguous_strides
from ...sites import launch_context
from ..numpy_backend import NumpyBackend
from ..protocol import IN_PLACE, PRIMITIVES
from .array import CudaArray, DeviceBuffer
from .attention import CudaAttention
from .autotune import Autotuner, shape_class, sources_hash

_SFX = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.int64): "i64",
        np.dtype(np.int32): "i32", np.dtype(np.bool_): "bool"}
_FLOAT = (np.dtype(np.float32), np.dtype(np.float16))
_MAXDIM = 8
THREADS = 256

UNARY = {"neg": 0, "abs": 1, "sign": 2, "exp": 3, "log": 4, "sqrt": 5, "rsqrt": 6, "sin": 7, "cos": 8,
         "tanh": 9, "sigmoid": 10, "relu": 11, "erf": 12, "identity": 26, "add_s": 32, "sub_s": 33,
         "rsub_s": 34, "mul_s": 35, "div_s": 36, "rdiv_s": 37, "pow_s": 38, "rpow_s": 39, "max_s": 40,
         "min_s": 41, "clamp": 42, "softplus": 45, "gelu": 22, "gelu_tanh": 23}
UNARY_INT = frozenset({"neg", "abs", "sign", "identity", "add_s", "sub_s", "rsub_s", "mul_s", "max_s", "min_s",
                       "clamp"})
BINARY = {"add": 0, "sub": 1, "mul": 2, "div": 3, "pow": 4, "maximum": 5, "minimum": 6, "relu_backward": 7,
          "tanh_backward": 8, "sigmoid_backward": 9}
BINARY_INT = frozenset({"add", "sub", "mul", "maximum", "minimum"})
COMPARE = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5, "logical_and": 6, "logical_or": 7,
           "logical_xor": 8}
PREDICATE = {"isnan": 0, "isinf": 1, "isfinite": 2, "logical_not": 3, "nonzero": 4}
# a scalar on the right / on the left of a binary op -> the unary op with a scalar argument
SCALAR_RIGHT = {"add": "add_s", "sub": "sub_s", "mul": "mul_s", "div": "div_s", "pow": "pow_s",
                "maximum": "max_s", "minimum": "min_s"}
SCALAR_LEFT = {"add": "add_s", "sub": "rsub_s", "mul": "mul_s", "div": "rdiv_s", "pow": "rpow_s",
               "maximum": "max_s", "minimum": "min_s"}
RED_SUM, RED_MAX, RED_MIN, RED_ARGMAX, RED_ARGMIN = range(5)


def _is_arr(x) -> bool:
    return type(x) is CudaArray


def _too_many_dims(*xs) -> bool:
    """More dims than an EwLayout holds: such ops run on the host."""
    return max((x.ndim for x in xs if type(x) is CudaArray), default=0) > _MAXDIM


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def broadcast_strides(a: CudaArray, shape: tuple) -> tuple:
    """``a``'s strides when read over ``shape`` (0 on broadcast dims)."""
    lead = len(shape) - a.ndim
    return (0,) * lead + tuple(0 if n == 1 and m != 1 else s
                               for n, m, s in zip(a.shape, shape[lead:], a.strides))


def ew_layout(shape: tuple, strides: tuple) -> tuple:
    """The 18 fields of an ``EwLayout`` (8 shape, 8 strides, ndim, pad)."""
    nd = len(shape)
    return (*shape, *(1,) * (_MAXDIM - nd), *strides, *(0,) * (_MAXDIM - nd), nd, 0)


def _scalar_type(dtype) -> type:
    return float if dtype in _FLOAT else int


class CudaBackend(CudaAttention):
    """Device memory and kernels; anything without a kernel runs on the host and is counted in ``fallbacks``."""

    name = "cuda"
    is_host = False
    times_itself = True
    # cross_entropy's backward state reads the logits themselves (not a private copy of the log-probabilities):
    # the CrossEntropy node then version-checks them
    cross_entropy_reads_logits = True

    def __init__(self, runtime):
        self.rt = runtime
        self.pool = runtime.pool
        self.cap = 32 * max(1, runtime.sm_count)
        self.fallbacks: Counter = Counter()
        self._host = NumpyBackend()
        self._device_name = f"{runtime.device_type}:{runtime.device_index}"
        # kernel variants timed at first use per shape class (not on an emulated device: its times mean nothing)
        self.tuner = Autotuner(f"{runtime.name} ({runtime.sm_count} SMs)",
                               None if getattr(runtime.drv, "EMULATED", False) else self._time_launch,
                               version=sources_hash("matmul.cu", "matmul.cuh"))

    # ---- launching ----------------------------------------------------------------------------
    def _grid(self, n: int) -> tuple:
        return (max(1, min(-(-n // THREADS), self.cap)), 1, 1)

    def _rows_launch(self, rows: int, cols: int) -> tuple:
        """Row kernels (softmax, layer norm, cross-entropy): a warp per row up to 1024 columns, else a block."""
        if cols <= 1024:
            return "warp", (max(1, min(-(-rows // 8), self.cap)), 1, 1)
        return "block", (max(1, min(rows, self.cap)), 1, 1)

    # Softmax / layer norm rows held in registers (the *_reg_* kernels): floats per thread and per array, as
    # SM_FWD_REG / SM_BWD_REG in softmax.cu and LN_FWD_REG / LN_BWD_REG in layernorm.cu; at most 1024 threads.
    ROW_REG = {"softmax_fwd": 16, "softmax_bwd": 8, "layernorm_fwd": 16, "layernorm_bwd": 8}
    ROW_REG_MIN_THREADS = 128
    ROW_REG_MAX_GRID = 1 << 20

    def _rows_reg_launch(self, kernel: str, rows: int, cols: int) -> tuple:
        """Softmax / layer-norm row kernels -> (kind, grid, block): "warp" (a warp per row) up to 1024 columns;
        "reg" (a block per row holding it in registers, read once: nt threads, the smallest multiple of 32 of
        at least ROW_REG_MIN_THREADS with nt * ROW_REG[kernel] >= cols) while such a block has at most 1024
        threads; else "block" (256 threads per row, several passes over it)."""
        per_thread = self.ROW_REG[kernel]
        if cols > 1024 and cols <= 1024 * per_thread:
            nt = min(1024, max(self.ROW_REG_MIN_THREADS, -(-cols // (32 * per_thread)) * 32))
            return "reg", (max(1, min(rows, self.ROW_REG_MAX_GRID)), 1, 1), (nt, 1, 1)
        kind, grid = self._rows_launch(rows, cols)
        return kind, grid, (THREADS, 1, 1)

    def _time_launch(self, launch) -> float:
        """Seconds that ``launch()``'s kernels take on the device (CUDA events around it; waits for them)."""
        start, end = self.rt.drv.Event(), self.rt.drv.Event()
        start.record()
        launch()
        end.record()
        end.synchronize()
        return end.time_since(start) / 1e3

    def _launch(self, kernel: str, grid: tuple, args: tuple, shapes: tuple = (), nbytes: int = 0) -> None:
        self.rt.launch(kernel, grid, (THREADS, 1, 1), args, shapes=shapes, nbytes=nbytes)

    def _empty(self, shape: tuple, dtype) -> CudaArray:
        dtype = np.dtype(dtype)
        n = _prod(shape)
        return CudaArray(DeviceBuffer(self.pool, n * dtype.itemsize), tuple(shape), contiguous_strides(shape), 0,
                         dtype)

    # ---- memory -------------------------------------------------------------------------------
    def alloc(self, numel: int, dtype) -> DeviceBuffer:
        return DeviceBuffer(self.pool, numel * dtype.itemsize)

    @staticmethod
    def view(buf: DeviceBuffer, layout, dtype) -> CudaArray:
        return CudaArray(buf, layout.shape, layout.strides, layout.offset, dtype.np)

    def adopt(self, r):
        """A primitive's result -> (its buffer, a contiguous view from offset 0 of it)."""
        if not _is_arr(r):
            r = self.from_numpy(np.asarray(r))
        elif not (r.is_contiguous and r.offset == 0):
            r = self.contiguous(r)
        return r.buf, r.with_layout(r.shape, contiguous_strides(r.shape), 0)

    def upload(self, host) -> DeviceBuffer:
        host = np.asarray(host, order="C")
        buf = DeviceBuffer(self.pool, host.nbytes)
        if host.nbytes:
            self.rt.drv.memcpy_htod(buf.address, host)
        return buf

    def from_numpy(self, arr) -> CudaArray:
        arr = np.asarray(arr, order="C")
        return CudaArray(self.upload(arr), arr.shape, contiguous_strides(arr.shape), 0, arr.dtype)

    def upload_into(self, host, buf: DeviceBuffer) -> None:
        host = np.asarray(host, order="C")
        if host.nbytes:
            self.rt.drv.memcpy_htod(buf.address, host)

    def download(self, buf: DeviceBuffer, numel: int, dtype):
        out = np.empty(numel, dtype.np)
        self.download_into(buf, out)
        return out

    def download_into(self, buf: DeviceBuffer, host) -> None:
        if host.nbytes:
            self.rt.drv.memcpy_dtoh(host, buf.address)  # waits for the queued kernels: a sync point
        self.rt.timer.collect()

    def to_numpy(self, x: CudaArray):
        """A host copy of ``x`` (any view), with its shape."""
        if not x.is_contiguous:
            if x.dtype in _SFX and x.ndim <= _MAXDIM:
                x = self.contiguous(x)
            else:  # no copy kernel for this dtype: fetch the span the view covers, take the view on the host
                lo, hi = self._span(x)
                span = np.empty(hi - lo if x.size else 0, x.dtype)
                if span.nbytes:
                    self.rt.drv.memcpy_dtoh(span, x.ptr + lo * x.itemsize)
                view = np.lib.stride_tricks.as_strided(span[-lo:] if x.size else span, x.shape,
                                                       tuple(s * x.itemsize for s in x.strides))
                return np.array(view, copy=True)
        out = np.empty(x.shape, x.dtype)
        if out.nbytes:
            self.rt.drv.memcpy_dtoh(out, x.ptr)
        self.rt.timer.collect()
        return out

    def wait(self, fence) -> None:
        if fence is not None:
            fence.synchronize()

    # ---- views of temporaries -----------------------------------------------------------------
    def reshape(self, x: CudaArray, shape) -> CudaArray:
        shape = tuple(shape) if not isinstance(shape, int) else (shape,)
        if -1 in shape:
            known = _prod(n for n in shape if n != -1)
            shape = tuple(x.size // known if n == -1 else n for n in shape) if known else shape
        if _prod(shape) != x.size:
            raise ValueError(f"cannot reshape array of size {x.size} into shape {shape}")
        if not x.is_contiguous:
            x = self.contiguous(x)
        return x.with_layout(shape, contiguous_strides(shape))

    @staticmethod
    def swap_last(x: CudaArray) -> CudaArray:
        s, st = list(x.shape), list(x.strides)
        s[-1], s[-2], st[-1], st[-2] = s[-2], s[-1], st[-2], st[-1]
        return x.with_layout(tuple(s), tuple(st))

    @staticmethod
    def broadcast_to(x: CudaArray, shape) -> CudaArray:
        shape = tuple(shape)
        return x.with_layout(shape, broadcast_strides(x, shape))

    @staticmethod
    def permute(x: CudaArray, dims) -> CudaArray:
        return x.with_layout(tuple(x.shape[d] for d in dims), tuple(x.strides[d] for d in dims))

    # ---- copies, casts, fills -----------------------------------------------------------------
    def _copy_into(self, out: CudaArray, x: CudaArray) -> None:
        """out[...] = cast(x) with x broadcast over out's shape; out may be any non-overlapping view."""
        n = out.size
        if n == 0:
            return
        ks, kd = _SFX[x.dtype], _SFX[out.dtype]
        if out.is_contiguous and x.is_contiguous and x.shape == out.shape:
            aligned = int(out.ptr % (4 * out.itemsize) == 0 and x.ptr % (4 * x.itemsize) == 0)
            self._launch(f"copy_cast_contig_{ks}_{kd}", self._grid(n), (out.ptr, x.ptr, n, aligned),
                         (out.shape,), n * (out.itemsize + x.itemsize))
            return
        if out.ndim > _MAXDIM:
            raise ValueError(f"CUDA copies support at most {_MAXDIM} dims, got {out.ndim}")
        lx = ew_layout(out.shape, broadcast_strides(x, out.shape))
        lo = ew_layout(out.shape, out.strides)
        self._launch(f"copy_cast_{ks}_{kd}", self._grid(n), (out.ptr, x.ptr, *lo, *lx, n),
                     (out.shape, x.shape), n * (out.itemsize + x.itemsize))

    def contiguous(self, x: CudaArray, dtype=None) -> CudaArray:
        out = self._empty(x.shape, x.dtype if dtype is None else dtype)
        if x.dtype not in _SFX or out.dtype not in _SFX or x.ndim > _MAXDIM:  # (the host's cast: float -> uint8 wraps)
            host = self._host.cast(self.to_numpy(x), from_numpy_dtype(out.dtype))
            self.upload_into(host, out.buf)
            return out
        self._copy_into(out, x)
        return out

    def copy(self, x: CudaArray) -> CudaArray:
        return self.contiguous(x)

    def cast(self, x: CudaArray, dtype) -> CudaArray:
        return self.contiguous(x, dtype.np)

    def scale(self, y: CudaArray, s) -> None:
        """``y *= s`` for a number ``s``: the elementwise kernel, written back into ``y``."""
        self.assign(y, self.mul(y, s))

    def axpy(self, y: CudaArray, x: CudaArray, alpha) -> None:
        """``y += alpha * x``: the elementwise kernels (a product, a sum), written back into ``y``."""
        self.assign(y, self.add(y, x if alpha == 1 else self.mul(x, alpha)))

    def assign(self, dst: CudaArray, src) -> None:
        """In-place write of ``src`` (broadcast, cast) into the view ``dst``."""
        if not _is_arr(src):
            src = self._scalar(src, dst.dtype)
        try:
            ok = broadcast_shapes(dst.shape, src.shape) == dst.shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"could not broadcast input array from shape {src.shape} into shape {dst.shape}")
        if src.buf is dst.buf:  # the two may overlap (t[1:] = t[:-1]): read everything before writing
            src = self.contiguous(src)
        if (dst.dtype in _SFX and src.dtype in _SFX and dst.ndim <= _MAXDIM
                and not any(s == 0 and n > 1 for n, s in zip(dst.shape, dst.strides))):
            self._copy_into(dst, src)
        else:  # no kernel for the dtype, or a destination with repeated elements: written in order on the host
            self._write_view(dst, np.broadcast_to(self.to_numpy(src).astype(dst.dtype), dst.shape))

    def _scalar(self, value, dtype) -> CudaArray:
        return self.full((), value, from_numpy_dtype(dtype))

    def full(self, shape, value, dtype) -> CudaArray:
        shape = tuple(shape)
        npdt = np.dtype(dtype.np)
        out = self._empty(shape, npdt)
        n = out.size
        if n == 0:
            return out
        sfx = _SFX.get(npdt)
        if sfx in ("f32", "f16"):
            self._launch(f"fill_{sfx}", self._grid(n), (out.ptr, float(value), n), (shape,), out.nbytes)
        elif sfx in ("i64", "i32"):
            self._launch(f"arange_{sfx}", self._grid(n), (out.ptr, int(value), 0, n), (shape,), out.nbytes)
        else:  # bool and the dtypes without kernels: a host-made block (one upload)
            self.upload_into(np.full(shape, value, npdt), out.buf)
        return out

    def arange(self, start, end, step, dtype) -> CudaArray:
        n = max(0, math.ceil((end - start) / step))
        npdt = np.dtype(dtype.np)
        sfx = _SFX.get(npdt)
        out = self._empty((n,), npdt)
        if n and sfx in ("f32", "f16"):
            self._launch(f"arange_{sfx}", self._grid(n), (out.ptr, float(start), float(step), n), ((n,),), out.nbytes)
        elif n and sfx in ("i64", "i32") and all(float(v).is_integer() for v in (start, step)):
            self._launch(f"arange_{sfx}", self._grid(n), (out.ptr, int(start), int(step), n), ((n,),), out.nbytes)
        elif n:
            self.upload_into(self._host.arange(start, end, step, dtype), out.buf)
        return out

    # ---- movement ops as strided copies: no kernel of their own, each is copy_cast over views ----------
    @staticmethod
    def _copyable(*xs: CudaArray) -> bool:
        return all(x.dtype in _SFX and x.ndim <= _MAXDIM for x in xs)

    @staticmethod
    def _narrow(a: CudaArray, axis: int, start: int, n: int) -> CudaArray:
        """``a[..., start:start+n, ...]`` along ``axis``: a view."""
        shape = a.shape[:axis] + (n,) + a.shape[axis + 1:]
        return a.with_layout(shape, a.strides, a.offset + start * a.strides[axis])

    def cat(self, xs, axis):
        xs = list(xs)
        ref = xs[0] if xs else None
        if (ref is None or not self._copyable(*xs) or any(x.dtype != ref.dtype or x.ndim != ref.ndim for x in xs)
                or not ref.ndim):
            return self._fallback("cat", (xs, axis))
        axis %= ref.ndim
        shape = list(ref.shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        out = self._empty(tuple(shape), ref.dtype)
        start = 0
        for x in xs:
            if x.size:
                self._copy_into(self._narrow(out, axis, start, x.shape[axis]), x)
            start += x.shape[axis]
        return out

    def flip(self, x, axes):
        if not self._copyable(x):
            return self._fallback("flip", (x, axes))
        strides, offset = list(x.strides), x.offset
        for a in {a % x.ndim for a in axes} if x.ndim else ():
            if x.shape[a] > 1:  # read the axis backwards: start at its last element, step back
                offset += (x.shape[a] - 1) * strides[a]
                strides[a] = -strides[a]
        return self.contiguous(x.with_layout(x.shape, tuple(strides), offset))

    def pad(self, x, widths, value):
        if not self._copyable(x) or any(lo < 0 or hi < 0 for lo, hi in widths):
            return self._fallback("pad", (x, widths, value))
        shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, widths))
        out = self.full(shape, value, from_numpy_dtype(x.dtype))
        if x.size:
            inner = out.with_layout(x.shape, out.strides, sum(lo * s for (lo, _), s in zip(widths, out.strides)))
            self._copy_into(inner, x)
        return out

    def eye(self, n, m, dtype):
        out = self.full((n, m), 0, dtype)
        k = min(n, m)
        if k and out.dtype in _SFX:  # the diagonal is a 1-D view with stride m + 1
            self._copy_into(out.with_layout((k,), (m + 1,), 0), self._scalar(1, out.dtype))
        elif k:
            return self._fallback("eye", (n, m, dtype))
        return out

    def _triangle(self, name: str, x, k: int):
        """``tril``/``triu``: ``where(col <= row + k, x, 0)`` (or ``>=``) from two aranges and one compare."""
        if not self._copyable(x) or x.ndim < 2:
            return self._fallback(name, (x, k))
        n, m = x.shape[-2:]
        rows = self.arange(k, n + k, 1, int64)  # row + k, as a column
        cols = self.arange(0, m, 1, int64)
        keep = self._compare("le" if name == "tril" else "ge", self.reshape(cols, (1, m)), self.reshape(rows, (n, 1)))
        return self.where(keep, x, self._scalar(0, x.dtype))

    def tril(self, x, k):
        return self._triangle("tril", x, k)

    def triu(self, x, k):
        return self._triangle("triu", x, k)

    def roll(self, x, shifts, axes):
        if not self._copyable(x):
            return self._fallback("roll", (x, shifts, axes))
        if axes is None:  # over the flattened tensor
            return self.reshape(self.roll(self.reshape(x, (-1,)), shifts, (0,)), x.shape)
        shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        for s, a in zip(shifts, axes):  # one axis at a time: two copies, the tail to the front and the head after it
            a %= x.ndim
            n = x.shape[a]
            s = s % n if n else 0
            out = self._empty(x.shape, x.dtype)
            if x.size:
                if s:
                    self._copy_into(self._narrow(out, a, 0, s), self._narrow(x, a, n - s, s))
                self._copy_into(self._narrow(out, a, s, n - s), self._narrow(x, a, 0, n - s))
            x = out
        return x if x.is_contiguous else self.contiguous(x)

    def tile(self, x, reps):
        reps = tuple(reps)
        nd = max(len(reps), x.ndim)
        if not self._copyable(x) or 2 * nd > _MAXDIM:
            return self._fallback("tile", (x, reps))
        reps = (1,) * (nd - len(reps)) + reps
        dims = (1,) * (nd - x.ndim) + x.shape
        xstr = (0,) * (nd - x.ndim) + x.strides
        out = self._empty(tuple(r * d for r, d in zip(reps, dims)), x.dtype)
        if out.size:  # out as (r0, d0, r1, d1, ...), x broadcast over the r's
            ostr = out.strides
            o = out.with_layout(tuple(v for r, d in zip(reps, dims) for v in (r, d)),
                                tuple(v for d, s in zip(dims, ostr) for v in (d * s, s)), 0)
            xv = x.with_layout(tuple(v for d in dims for v in (1, d)), tuple(v for s in xstr for v in (0, s)))
            self._copy_into(o, xv)
        return out

    # ---- elementwise --------------------------------------------------------------------------
    def _unary(self, op: str, x: CudaArray, a=0, b=0, out_dtype=None) -> CudaArray:
        sfx = _SFX.get(x.dtype)
        if sfx is None or sfx == "bool" or (sfx in ("i64", "i32") and op not in UNARY_INT) or x.ndim > _MAXDIM:
            return None
        out = self._empty(x.shape, x.dtype if out_dtype is None else out_dtype)
        n = out.size
        if n == 0:
            return out
        st = _scalar_type(x.dtype)
        a, b = st(a), st(b)
        code = UNARY[op]
        if x.is_contiguous:
            aligned = int(out.ptr % (4 * out.itemsize) == 0 and x.ptr % (4 * x.itemsize) == 0)
            self._launch(f"ew_unary_contig_{sfx}", self._grid(n), (out.ptr, x.ptr, n, a, b, code, aligned),
                         (x.shape,), 2 * out.nbytes)
        else:
            self._launch(f"ew_unary_{sfx}", self._grid(n), (out.ptr, x.ptr, *ew_layout(x.shape, x.strides), n, a, b,
                                                            code), (x.shape,), 2 * out.nbytes)
        return out

    def _nary(self, kind: str, code: int, out_dtype, *xs: CudaArray) -> CudaArray:
        """One launch of ew_<kind>: binary, compare or where over broadcast operands."""
        shape = broadcast_shapes(*(x.shape for x in xs))
        sfx = _SFX[xs[-1].dtype]
        out = self._empty(shape, out_dtype)
        n = out.size
        if n == 0:
            return out
        nbytes = out.nbytes + sum(x.nbytes for x in xs)
        shapes = tuple(x.shape for x in xs)
        ptrs = tuple(x.ptr for x in xs)
        tail = () if kind == "where" else (code,)
        if all(x.shape == shape and x.is_contiguous for x in xs):
            aligned = int(all(p % (4 * x.itemsize) == 0 for p, x in zip((out.ptr, *ptrs), (out, *xs))))
            self._launch(f"ew_{kind}_contig_{sfx}", self._grid(n), (out.ptr, *ptrs, n, *tail, aligned), shapes, nbytes)
        else:
            if len(shape) > _MAXDIM:
                raise ValueError(f"CUDA elementwise ops support at most {_MAXDIM} dims, got {len(shape)}")
            lays = tuple(f for x in xs for f in ew_layout(shape, broadcast_strides(x, shape)))
            self._launch(f"ew_{kind}_{sfx}", self._grid(n), (out.ptr, *ptrs, *lays, n, *tail), shapes, nbytes)
        return out

    def _binary(self, op: str, x, y):
        xa, ya = _is_arr(x), _is_arr(y)
        arr = x if xa else y
        sfx = _SFX.get(arr.dtype)
        if _too_many_dims(x, y) or sfx is None or sfx == "bool" or (sfx in ("i64", "i32") and op not in BINARY_INT):
            return self._fallback(op, (x, y))
        if xa and ya:
            if x.dtype != y.dtype:
                return self._fallback(op, (x, y))
            return self._nary("binary", BINARY[op], x.dtype, x, y)
        if op not in SCALAR_RIGHT:
            return self._fallback(op, (x, y))
        scalar = y if xa else x
        if sfx in ("i64", "i32") and not (isinstance(scalar, (int, np.integer)) or float(scalar).is_integer()):
            return self._fallback(op, (x, y))
        r = self._unary(SCALAR_RIGHT[op] if xa else SCALAR_LEFT[op], arr, scalar)
        return r if r is not None else self._fallback(op, (x, y))

    def _compare(self, op: str, x, y):
        if not _is_arr(x):
            x = self._scalar(x, y.dtype)
        if not _is_arr(y):
            y = self._scalar(y, x.dtype)
        if x.dtype != y.dtype or x.dtype not in _SFX or _too_many_dims(x, y):
            return self._fallback(op, (x, y))
        return self._nary("compare", COMPARE[op], np.bool_, x, y)

    def _predicate(self, op: str, x: CudaArray):
        if x.dtype not in _SFX or x.ndim > _MAXDIM:
            return self._fallback("ne", (x, 0)) if op == "nonzero" else self._fallback(op, (x,))
        out = self._empty(x.shape, np.bool_)
        n = out.size
        if n:
            sfx = _SFX[x.dtype]
            if x.is_contiguous:
                aligned = int(out.ptr % 4 == 0 and x.ptr % (4 * x.itemsize) == 0)
                self._launch(f"ew_predicate_contig_{sfx}", self._grid(n), (out.ptr, x.ptr, n, PREDICATE[op], aligned),
                             (x.shape,), n + x.nbytes)
            else:
                self._launch(f"ew_predicate_{sfx}", self._grid(n),
                             (out.ptr, x.ptr, *ew_layout(x.shape, x.strides), n, PREDICATE[op]), (x.shape,),
                             n + x.nbytes)
        return out

    def where(self, cond, x, y, /):
        like = x if _is_arr(x) else y
        if not _is_arr(like):
            return self._fallback("where", (cond, x, y))
        if not _is_arr(x):
            x = self._scalar(x, like.dtype)
        if not _is_arr(y):
            y = self._scalar(y, like.dtype)
        if cond.dtype != np.bool_:
            cond = self._predicate("nonzero", cond)
        if x.dtype != y.dtype or x.dtype not in _SFX or _too_many_dims(cond, x, y):
            return self._fallback("where", (cond, x, y))
        return self._nary("where", 0, x.dtype, cond, x, y)

    def clip(self, x, lo, hi, /):
        if _is_arr(lo) or _is_arr(hi):
            return self._fallback("clip", (x, lo, hi))
        if x.dtype not in _FLOAT:
            return self._fallback("clip", (x, lo, hi))
        r = self._unary("clamp", x, -math.inf if lo is None else lo, math.inf if hi is None else hi)
        return r if r is not None else self._fallback("clip", (x, lo, hi))

    def softplus(self, x, beta, threshold):
        r = self._unary("softplus", x, beta, threshold) if x.dtype in _FLOAT else None
        return r if r is not None else self._fallback("softplus", (x, beta, threshold))

    def elementwise_chain(self, chain, arrays, params=()):
        """A chain's formula (``backends/chains.py``) as the launches of its steps' elementwise kernels (one fused
        kernel generated from the formula is for the GPU issue: the CPU's is ``chains.Chain.c_source``)."""
        return chain.run(self, arrays, params)

    def gelu(self, x, approximate, keep):
        """One launch of the elementwise kernel's gelu; no state (the backward composes its formula from kernels)."""
        r = self._unary("gelu" if approximate == "none" else "gelu_tanh", x) if x.dtype in _FLOAT else None
        return (r, None) if r is not None else self._fallback("gelu", (x, approximate, keep))

    def gelu_backward(self, g, x, state, approximate):
        """``g * gelu'(x)``: the state (gelu' from the host fallback's forward) times g, or gelu' composed from
        elementwise kernels (the NumPy backend's formulas)."""
        if state is not None:
            return self.mul(g, state) if state.dtype == g.dtype else self._fallback("gelu_backward",
                                                                                   (g, x, state, approximate))
        if x.dtype not in _FLOAT or g.dtype != x.dtype:
            return self._fallback("gelu_backward", (g, x, state, approximate))
        if approximate == "tanh":
            c, k = math.sqrt(2 / math.pi), 0.044715
            t = self.tanh(self.mul(self.add(x, self.mul(self.mul(self.mul(x, x), x), k)), c))
            dk = self.mul(self.add(self.mul(self.mul(x, x), 3 * k), 1), c)
            right = self.mul(self.mul(self.mul(x, 0.5), self.sub(1, self.mul(t, t))), dk)
            d = self.add(self.mul(self.add(t, 1), 0.5), right)
        else:
            cdf = self.mul(self.add(self.erf(self.mul(x, 1 / math.sqrt(2))), 1), 0.5)
            pdf = self.mul(self.exp(self.mul(self.mul(x, x), -0.5)), 1 / math.sqrt(2 * math.pi))
            d = self.add(cdf, self.mul(x, pdf))
        return self.mul(g, d)

    # ---- reductions ---------------------------------------------------------------------------
    @staticmethod
    def _axes(axis, ndim: int) -> tuple:
        if axis is None:
            return tuple(range(ndim))
        if isinstance(axis, (int, np.integer)):
            axis = (axis,)
        return tuple(sorted(a % ndim for a in axis)) if ndim else ()

    def _rows(self, x: CudaArray, axes: tuple):
        """x as (outer, R, inner) with strides (so, sr, si): a contiguous copy with the reduced axes last
        unless they already form one contiguous run."""
        nd = x.ndim
        if x.is_contiguous and axes and axes == tuple(range(axes[0], axes[-1] + 1)):
            first, last = axes[0], axes[-1] + 1
            outer, r, inner = _prod(x.shape[:first]), _prod(x.shape[first:last]), _prod(x.shape[last:])
            return x, outer, r, inner
        kept = tuple(d for d in range(nd) if d not in axes)
        xc = self.contiguous(self.permute(x, kept + axes))
        return xc, _prod(x.shape[d] for d in kept), _prod(x.shape[d] for d in axes), 1

    def _reduce(self, op: int, x: CudaArray, axis, keepdims: bool, want_values=True, want_index=False):
        axes = self._axes(axis, x.ndim)
        out_shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape)) if keepdims else \
            tuple(n for d, n in enumerate(x.shape) if d not in axes)
        xr, outer, r, inner = self._rows(x, axes)
        nout = outer * inner
        sfx = _SFX[x.dtype]
        vals = self._empty(out_shape, x.dtype) if want_values else None
        idx = self._empty(out_shape, np.int64) if want_index else None
        if nout == 0:
            return vals, idx
        if r == 0:
            if op != RED_SUM:
                raise ValueError("zero-size array to reduction operation which has no identity")
            self._launch(f"fill_{sfx}", self._grid(nout), (vals.ptr, 0.0, nout))
            return vals, idx
        vp = vals.ptr if vals is not None else 0
        ip = idx.ptr if idx is not None else 0
        view = (outer, r, inner, r * inner, inner, 1)
        shapes, nbytes = (x.shape,), x.nbytes
        if inner > 1 or r <= 8:
            self._launch(f"reduce_cols_{sfx}", self._grid(nout), (xr.ptr, vp, ip, *view, op), shapes, nbytes)
        elif r <= 1024:
            self._launch(f"reduce_warp_{sfx}", (max(1, min(-(-nout // 8), self.cap)), 1, 1),
                         (xr.ptr, vp, ip, *view, op), shapes, nbytes)
        elif nout >= self.cap // 4 or r <= 16384:
            self._launch(f"reduce_block_{sfx}", (min(nout, self.cap), 1, 1), (xr.ptr, vp, ip, *view, op), shapes,
                         nbytes)
        else:
            chunk = 16384
            nchunks = -(-r // chunk)
            pv = self._empty((nout * nchunks,), np.float32)
            pi = self._empty((nout * nchunks,), np.int64) if op != RED_SUM else None
            self._launch(f"reduce_partial_{sfx}", (min(nout * nchunks, self.cap), 1, 1),
                         (xr.ptr, pv.ptr, pi.ptr if pi else 0, *view, chunk, nchunks, op), shapes, nbytes)
            self._launch(f"reduce_finish_{sfx}", (max(1, min(-(-nout // 8), self.cap)), 1, 1),
                         (pv.ptr, pi.ptr if pi else 0, vp, ip, nout, nchunks, op), shapes, nbytes)
        return vals, idx

    def sum(self, x, axis, keepdims, dtype=None):
        if dtype is not None and np.dtype(dtype.np) != x.dtype:
            if np.dtype(dtype.np) not in _FLOAT or x.dtype not in _SFX:
                return self._fallback("sum", (x, axis, keepdims, dtype))
            x = self.cast(x, dtype)
        if x.dtype not in _FLOAT:
            return self._fallback("sum", (x, axis, keepdims, dtype))
        return self._reduce(RED_SUM, x, axis, keepdims)[0]

    def max(self, x, axis, keepdims):
        if x.dtype not in _FLOAT:
            r = self._extreme_i64(x, axis, keepdims, 1)
            return r if r is not None else self._fallback("max", (x, axis, keepdims))
        return self._reduce(RED_MAX, x, axis, keepdims)[0]

    def min(self, x, axis, keepdims):
        if x.dtype not in _FLOAT:
            r = self._extreme_i64(x, axis, keepdims, 0)
            return r if r is not None else self._fallback("min", (x, axis, keepdims))
        return self._reduce(RED_MIN, x, axis, keepdims)[0]

    def _extreme_i64(self, x, axis, keepdims, which: int) -> CudaArray | None:
        """The smallest (``which`` 0) or largest (1) element of a whole int64 array, exactly (``reduce_minmax_i64``:
        the range checks of indices); None for other dtypes, partial reductions or an empty array."""
        if x.dtype != np.int64 or x.size == 0 or len(self._axes(axis, x.ndim)) != x.ndim:
            return None
        x = x if x.is_contiguous else self.contiguous(x)
        blocks = max(1, min(-(-x.size // THREADS), self.cap))
        part = self._empty((2 * blocks,), np.int64)
        self._launch("reduce_minmax_i64", (blocks, 1, 1), (x.ptr, x.size, part.ptr, 0), (x.shape,), x.nbytes)
        out = part
        if blocks > 1:
            out = self._empty((2,), np.int64)
            self._launch("reduce_minmax_i64", (1, 1, 1), (part.ptr, 2 * blocks, out.ptr, 1))
        shape = (1,) * x.ndim if keepdims else ()
        return out.with_layout(shape, (0,) * len(shape), out.offset + which)

    def argmax(self, x, axis, keepdims):
        if x.dtype not in _FLOAT or (axis is None and keepdims):
            return self._fallback("argmax", (x, axis, keepdims))
        return self._reduce(RED_ARGMAX, x, axis, keepdims, want_values=False, want_index=True)[1]

    def argmin(self, x, axis, keepdims):
        if x.dtype not in _FLOAT or (axis is None and keepdims):
            return self._fallback("argmin", (x, axis, keepdims))
        return self._reduce(RED_ARGMIN, x, axis, keepdims, want_values=False, want_index=True)[1]

    def _any_all(self, op: int, x, axis, keepdims):
        as_float = self.cast(self._predicate("nonzero", x), from_numpy_dtype(np.float32))
        return self.cast(self._reduce(op, as_float, axis, keepdims)[0], from_numpy_dtype(np.bool_))

    def any(self, x, axis, keepdims):
        if x.size == 0:
            return self._fallback("any", (x, axis, keepdims))
        return self._any_all(RED_MAX, x, axis, keepdims)

    def all(self, x, axis, keepdims):
        if x.size == 0:
            return self._fallback("all", (x, axis, keepdims))
        return self._any_all(RED_MIN, x, axis, keepdims)

    # ---- matmul -------------------------------------------------------------------------------
    def _batch_stride(self, a: CudaArray, bshape: tuple):
        """(a with batch dims broadcast to bshape, one batch stride) or None if they do not collapse."""
        nb = a.ndim - 2
        lead = len(bshape) - nb
        st = (0,) * lead + tuple(0 if n == 1 and m != 1 else s
                                 for n, m, s in zip(a.shape[:nb], bshape[lead:], a.strides[:nb]))
        dims = [(n, s) for n, s in zip(bshape, st) if n != 1]
        if all(s == 0 for _, s in dims):
            return a, 0
        if any(s == 0 for _, s in dims):
            return None
        for (_n0, s0), (n1, s1) in zip(dims, dims[1:]):
            if s0 != n1 * s1:
                return None
        return a, dims[-1][1]

    def matmul(self, a, b, /):
        if a.dtype != b.dtype or a.dtype not in _FLOAT or a.ndim == 0 or b.ndim == 0:
            return self._fallback("matmul", (a, b))
        va, vb = a.ndim == 1, b.ndim == 1
        if va:
            a = a.with_layout((1, a.shape[0]), (0, a.strides[0]))
        if vb:
            b = b.with_layout((b.shape[0], 1), (b.strides[0], 0))
        m, k = a.shape[-2:]
        k2, n = b.shape[-2:]
        if k != k2:
            raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size {k2} is "
                             f"different from {k})")
        bshape = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        batch = _prod(bshape)
        out = self._empty(bshape + (m, n), a.dtype)
        if m and n and batch:
            pa = self._batch_stride(a, bshape)
            if pa is None:
                a = self.contiguous(a.with_layout(bshape + (m, k), broadcast_strides(a, bshape + (m, k))))
                pa = (a, m * k)
            pb = self._batch_stride(b, bshape)
            if pb is None:
                b = self.contiguous(b.with_layout(bshape + (k, n), broadcast_strides(b, bshape + (k, n))))
                pb = (b, k * n)
            (a, sab), (b, sbb) = pa, pb
            if self._tensor_cores(a, b, m, n, k, sab, sbb):
                self.rt.launch("gemm_f16_tc_f16", (-(-n // 64), -(-m // 64), min(batch, 65535)), (128, 1, 1),
                               (out.ptr, a.ptr, b.ptr, m, n, k, batch, sab, sbb, m * n, 1.0, 0.0),
                               shapes=(a.shape, b.shape), nbytes=a.nbytes + b.nbytes + out.nbytes)
                return self._matmul_shape(out, va, vb)
            grid = (-(-n // 128), -(-m // 128), min(batch, 65535))
            args = (out.ptr, a.ptr, b.ptr, m, n, k, batch, a.strides[-2], a.strides[-1], sab,
                    b.strides[-2], b.strides[-1], sbb, n, 1, m * n, 1.0, 0.0)

            def launch(name: str) -> None:
                self.rt.launch(name, grid, (256, 1, 1), args, shapes=(a.shape, b.shape),
                               nbytes=a.nbytes + b.nbytes + out.nbytes)

            name, ran = f"gemm_{_SFX[a.dtype]}", False
            if a.dtype == np.float32 and self._vector_loads(a, b, n, k, sab, sbb):
                name, ran = self.tuner.choose("gemm_f32", shape_class(m, n, k, batch),
                                              [(v, lambda v=v: launch(v)) for v in ("gemm_f32_vec", "gemm_f32")])
            if not ran:
                launch(name)
        return self._matmul_shape(out, va, vb)

    @staticmethod
    def _vector_loads(a: CudaArray, b: CudaArray, n: int, k: int, sab: int, sbb: int) -> bool:
        """gemm_f32_vec's preconditions (matmul.cu): row-major operands whose rows, batches and bases are 16-byte
        aligned, K and N multiples of 4."""
        return (a.strides[-1] == 1 and b.strides[-1] == 1 and k % 4 == 0 and n % 4 == 0 and a.strides[-2] % 4 == 0
                and b.strides[-2] % 4 == 0 and sab % 4 == 0 and sbb % 4 == 0 and a.ptr % 16 == 0 and b.ptr % 16 == 0)

    @staticmethod
    def _matmul_shape(out: CudaArray, va: bool, vb: bool) -> CudaArray:
        shape = out.shape
        if va:
            shape = shape[:-2] + shape[-1:]
        if vb:
            shape = shape[:-1]
        return out if shape == out.shape else out.with_layout(shape, contiguous_strides(shape))

    @staticmethod
    def _tensor_cores(a: CudaArray, b: CudaArray, m: int, n: int, k: int, sab: int, sbb: int) -> bool:
        """The WMMA kernel's preconditions (matmul.cu): float16, row-major operands, sizes multiples of 16,
        16-byte aligned bases and batch strides multiple of 8 elements."""
        return (a.dtype == np.float16 and m % 16 == 0 and n % 16 == 0 and k % 16 == 0 and k > 0
                and a.strides[-2:] == (k, 1) and b.strides[-2:] == (n, 1) and a.ptr % 16 == 0 and b.ptr % 16 == 0
                and sab % 8 == 0 and sbb % 8 == 0)

    # ---- softmax family ----------------------------------------------------------------------
    def _last_axis(self, x: CudaArray, axis: int):
        axis %= x.ndim
        perm = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
        xc = x if (axis == x.ndim - 1 and x.is_contiguous) else self.contiguous(self.permute(x, perm))
        return xc, perm

    def _unpermute(self, y: CudaArray, perm: tuple) -> CudaArray:
        if perm == tuple(range(len(perm))):
            return y
        inv = tuple(perm.index(d) for d in range(len(perm)))
        return self.contiguous(self.permute(y, inv))

    def _softmax_fwd(self, name, x, axis, log: int):
        if x.dtype not in _FLOAT or x.ndim == 0 or x.size == 0:
            return self._fallback(name, (x, axis))
        xc, perm = self._last_axis(x, axis)
        cols = xc.shape[-1]
        rows = xc.size // cols
        y = self._empty(xc.shape, x.dtype)
        kind, grid, block = self._rows_reg_launch("softmax_fwd", rows, cols)
        self.rt.launch(f"softmax_fwd_{kind}_{_SFX[x.dtype]}", grid, block, (y.ptr, xc.ptr, rows, cols, log),
                       shapes=(x.shape,), nbytes=2 * x.nbytes)
        return self._unpermute(y, perm)

    def _softmax_bwd(self, name, g, y, axis, log: int):
        if y.dtype not in _FLOAT or g.dtype != y.dtype or y.ndim == 0 or y.size == 0 or g.shape != y.shape:
            return self._fallback(name, (g, y, axis))
        yc, perm = self._last_axis(y, axis)
        gc, _ = self._last_axis(g, axis)
        cols = yc.shape[-1]
        rows = yc.size // cols
        dx = self._empty(yc.shape, y.dtype)
        kind, grid, block = self._rows_reg_launch("softmax_bwd", rows, cols)
        self.rt.launch(f"softmax_bwd_{kind}_{_SFX[y.dtype]}", grid, block, (dx.ptr, yc.ptr, gc.ptr, rows, cols, log),
                       shapes=(y.shape,), nbytes=3 * y.nbytes)
        return self._unpermute(dx, perm)

    def softmax(self, x, axis):
        return self._softmax_fwd("softmax", x, axis, 0)

    def log_softmax(self, x, axis):
        return self._softmax_fwd("log_softmax", x, axis, 1)

    def softmax_backward(self, g, y, axis):
        return self._softmax_bwd("softmax_backward", g, y, axis, 0)

    def log_softmax_backward(self, g, y, axis):
        return self._softmax_bwd("log_softmax_backward", g, y, axis, 1)

    # ---- fused nn primitives ------------------------------------------------------------------
    def cross_entropy(self, logits, target, weight, ignore_index: int, smoothing: float):
        """Per-row loss; the rest is this backend's own state for ``cross_entropy_backward``."""
        ok = (logits.dtype in _FLOAT and logits.ndim == 2 and target.dtype == np.int64 and
              (weight is None or weight.dtype == logits.dtype))
        if not ok:
            return self._fallback("cross_entropy", (logits, target, weight, ignore_index, smoothing))
        x = logits if logits.is_contiguous else self.contiguous(logits)
        t = target if target.is_contiguous else self.contiguous(target)
        w = None if weight is None else (weight if weight.is_contiguous else self.contiguous(weight))
        rows, cols = x.shape
        loss = self._empty((rows,), x.dtype)
        lse = self._empty((rows,), np.float32)
        asum = self._empty((rows,), np.float32)
        if rows and cols:
            kind, grid = self._rows_launch(rows, cols)
            self._launch(f"cross_entropy_fwd_{kind}_{_SFX[x.dtype]}", grid,
                         (loss.ptr, lse.ptr, asum.ptr, x.ptr, t.ptr, w.ptr if w is not None else 0, rows, cols,
                          int(ignore_index), float(smoothing)), (x.shape,), x.nbytes)
        state = _CEState(x, t, w, lse, int(ignore_index), float(smoothing))
        return loss, state, None, asum

    def cross_entropy_backward(self, g, logp, a, a_sum):
        """The logits' gradient; ``logp`` is the state ``cross_entropy`` returned in its place (the host fallback's
        log-probabilities otherwise)."""
        if not isinstance(logp, _CEState):
            return self._fallback("cross_entropy_backward", (g, logp, a, a_sum))
        state = logp
        x = state.logits
        rows, cols = x.shape
        if g.dtype != x.dtype:
            g = self.cast(g, from_numpy_dtype(x.dtype))
        if not g.is_contiguous:
            g = self.contiguous(g)
        dx = self._empty(x.shape, x.dtype)
        n = rows * cols
        if n:
            self._launch(f"cross_entropy_bwd_{_SFX[x.dtype]}", self._grid(n),
                         (dx.ptr, x.ptr, state.target.ptr, state.weight.ptr if state.weight is not None else 0,
                          state.lse.ptr, a_sum.ptr, g.ptr, 1 if g.size == rows else 0, rows, cols,
                          state.ignore_index, state.smoothing), (x.shape,), 2 * x.nbytes)
        return dx

    def cross_entropy_coefs(self, logp, a, a_sum):
        """The dense coefficients ``a`` (for a differentiable backward): built on the host from the state."""
        if not isinstance(logp, _CEState):  # (the host fallback's state: dense already, or made dense there)
            return (a, a_sum) if a is not None else self._fallback("cross_entropy_coefs", (logp, a, a_sum))
        s = logp
        self.fallbacks["cross_entropy_coefs"] += 1
        logits = self.to_numpy(s.logits)
        target = self.to_numpy(s.target)
        weight = None if s.weight is None else self.to_numpy(s.weight)
        _, logp_h, a, a_sum = self._host.cross_entropy(logits, target, weight, s.ignore_index, s.smoothing)
        a, a_sum = self._host.cross_entropy_coefs(logp_h, a, a_sum)  # (dense, whichever way the host computed)
        return self.from_numpy(a), self.from_numpy(a_sum)

    def adam_step(self, param, grad, exp_avg, exp_avg_sq, step: int, lr: float, beta1: float, beta2: float,
                  eps: float, weight_decay: float, decoupled: bool, max_exp_avg_sq=None) -> None:
        arrs = (param, grad, exp_avg, exp_avg_sq) + (() if max_exp_avg_sq is None else (max_exp_avg_sq,))
        state_ok = all(a.dtype == np.float32 for a in arrs[2:])
        if (param.dtype not in _FLOAT or grad.dtype != param.dtype or not state_ok or
                not all(a.is_contiguous and a.shape == param.shape for a in arrs)):
            return self._fallback("adam_step", (param, grad, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps,
                                                weight_decay, decoupled, max_exp_avg_sq))
        f32 = np.float32
        h = (f32(1 - beta1), f32(beta2), f32(1 - beta2), f32(weight_decay),
             f32(1 - lr * weight_decay) if decoupled else f32(1.0), f32(lr / (1 - beta1 ** step)),
             f32(math.sqrt(1 - beta2 ** step)), f32(eps))
        n = param.size
        if n:
            self._launch(f"adam_{_SFX[param.dtype]}", self._grid(n),
                         (param.ptr, grad.ptr, exp_avg.ptr, exp_avg_sq.ptr,
                          0 if max_exp_avg_sq is None else max_exp_avg_sq.ptr, *map(float, h), int(bool(decoupled)),
                          n), (param.shape,), 5 * param.nbytes)

    # ---- convolution and pooling (NCHW, contiguous) -------------------------------------------
    def _geom(self, x_shape, kernel, stride, padding, dilation, oh, ow, count_include_pad=0, divisor=0) -> tuple:
        n, c, h, w = x_shape
        return (n, c, h, w, *kernel, oh, ow, *stride, *padding, *dilation, count_include_pad, divisor)

    @staticmethod
    def _out_hw(x_shape, kernel, stride, padding, dilation) -> tuple:
        return tuple((x_shape[2 + i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
                     for i in range(2))

    def im2col(self, x, kernel, stride, padding, dilation):
        if x.dtype not in _FLOAT or x.ndim != 4:
            return self._fallback("im2col", (x, kernel, stride, padding, dilation))
        x = x if x.is_contiguous else self.contiguous(x)
        n, c = x.shape[:2]
        oh, ow = self._out_hw(x.shape, kernel, stride, padding, dilation)
        cols = self._empty((n, c * kernel[0] * kernel[1], oh * ow), x.dtype)
        if cols.size:
            self._launch(f"im2col_{_SFX[x.dtype]}", self._grid(cols.size),
                         (x.ptr, cols.ptr, *self._geom(x.shape, kernel, stride, padding, dilation, oh, ow), cols.size),
                         (x.shape,), x.nbytes + cols.nbytes)
        return cols

    def col2im(self, cols, shape, kernel, stride, padding, dilation):
        if cols.dtype not in _FLOAT:
            return self._fallback("col2im", (cols, shape, kernel, stride, padding, dilation))
        cols = cols if cols.is_contiguous else self.contiguous(cols)
        oh, ow = self._out_hw(shape, kernel, stride, padding, dilation)
        x = self._empty(tuple(shape), cols.dtype)
        if x.size:
            self._launch(f"col2im_{_SFX[cols.dtype]}", self._grid(x.size),
                         (cols.ptr, x.ptr, *self._geom(shape, kernel, stride, padding, dilation, oh, ow), x.size),
                         (cols.shape,), x.nbytes + cols.nbytes)
        return x

    def conv2d(self, x, weight, bias, stride, padding, dilation):
        """im2col, then one batched GEMM (weights broadcast over the batch) straight into (N, OC, OH*OW)."""
        if x.dtype not in _FLOAT or weight.dtype != x.dtype:
            return self._fallback("conv2d", (x, weight, bias, stride, padding, dilation))
        cols = self.im2col(x, weight.shape[2:], stride, padding, dilation)
        oc = weight.shape[0]
        n = x.shape[0]
        oh, ow = self._out_hw(x.shape, weight.shape[2:], stride, padding, dilation)
        w2 = self.reshape(weight, (oc, -1))
        out = self.matmul(w2, cols)  # (N, OC, OH*OW)
        if bias is not None:
            out = self.add(out, self.reshape(bias, (oc, 1)))
        return self.reshape(out, (n, oc, oh, ow)), cols

    def conv2d_backward(self, g, cols, weight, x_shape, stride, padding, dilation, need_x, need_w, need_b):
        if (need_w and not _is_arr(cols)) or g.dtype not in _FLOAT:  # (the input's gradient reads no columns)
            return self._fallback("conv2d_backward", (g, cols, weight, x_shape, stride, padding, dilation, need_x,
                                                      need_w, need_b))
        n, oc, oh, ow = g.shape
        g3 = self.reshape(g, (n, oc, oh * ow))
        gw = gb = gx = None
        if need_w:
            per_image = self.matmul(g3, self.swap_last(cols))  # (N, OC, C*KH*KW)
            gw = self.reshape(self.sum(per_image, 0, False), weight.shape)
        if need_b:
            gb = self.sum(g3, (0, 2), False)
        if need_x:
            w2t = self.swap_last(self.reshape(weight, (oc, -1)))  # (C*KH*KW, OC), a strided view
            gcols = self.matmul(w2t, g3)  # (N, C*KH*KW, OH*OW)
            gx = self.col2im(gcols, x_shape, weight.shape[2:], stride, padding, dilation)
        return gx, gw, gb

    def _maxpool(self, x, kernel, stride, padding, dilation):
        x = x if x.is_contiguous else self.contiguous(x)
        oh, ow = self._out_hw(x.shape, kernel, stride, padding, dilation)
        out = self._empty((*x.shape[:2], oh, ow), x.dtype)
        idx = self._empty(out.shape, np.int64)
        if out.size:
            self._launch(f"maxpool2d_{_SFX[x.dtype]}", self._grid(out.size),
                         (x.ptr, out.ptr, idx.ptr, *self._geom(x.shape, kernel, stride, padding, dilation, oh, ow),
                          out.size), (x.shape,), x.nbytes + out.nbytes)
        return out, idx

    def max_pool2d(self, x, kernel, stride, padding, dilation):
        """(out, indices): the indices (h * W + w in each plane) are the state the backward routes by."""
        if x.dtype not in _FLOAT or x.ndim != 4:
            return self._fallback("max_pool2d", (x, kernel, stride, padding, dilation))
        return self._maxpool(x, kernel, stride, padding, dilation)

    def max_pool2d_indices(self, x, out, kernel, stride, padding, dilation):
        if x.dtype not in _FLOAT or x.ndim != 4:
            return self._fallback("max_pool2d_indices", (x, out, kernel, stride, padding, dilation))
        return self._maxpool(x, kernel, stride, padding, dilation)[1]

    def max_pool2d_backward(self, g, x, out, state, kernel, stride, padding, dilation):
        if not _is_arr(state) or g.dtype not in _FLOAT:
            return self._fallback("max_pool2d_backward", (g, x, out, state, kernel, stride, padding, dilation))
        g = g if g.is_contiguous else self.contiguous(g)
        oh, ow = out.shape[2:]
        dx = self._empty(x.shape, g.dtype)
        if dx.size:
            self._launch(f"maxpool2d_backward_{_SFX[g.dtype]}", self._grid(dx.size),
                         (g.ptr, state.ptr, dx.ptr, *self._geom(x.shape, kernel, stride, padding, dilation, oh, ow),
                          dx.size), (g.shape,), g.nbytes + dx.nbytes)
        return dx

    # ---- layer norm ---------------------------------------------------------------------------
    def layer_norm(self, x, axes: tuple, eps: float):
        """(x-hat, mean, state): the state (x, mean, rstd) is what ``layer_norm_backward`` takes as ``rstd``."""
        if x.dtype not in _FLOAT or not axes or x.size == 0:
            return self._fallback("layer_norm", (x, axes, eps))
        x = x if x.is_contiguous else self.contiguous(x)
        cols = _prod(x.shape[a] for a in axes)
        rows = x.size // cols
        y = self._empty(x.shape, x.dtype)
        mean = self._empty((rows,), np.float32)
        rstd = self._empty((rows,), np.float32)
        kind, grid, block = self._rows_reg_launch("layernorm_fwd", rows, cols)
        self.rt.launch(f"layernorm_fwd_{kind}_{_SFX[x.dtype]}", grid, block,
                       (y.ptr, mean.ptr, rstd.ptr, x.ptr, 0, 0, rows, cols, float(eps)), shapes=(x.shape,),
                       nbytes=2 * x.nbytes)
        return y, mean, _LNState(x, mean, rstd, rows, cols)

    def layer_norm_backward(self, g, xhat, rstd, axes: tuple):
        if not isinstance(rstd, _LNState) or g.dtype != rstd.x.dtype:
            return self._fallback("layer_norm_backward", (g, xhat, rstd, axes))
        st = rstd
        g = g if g.is_contiguous else self.contiguous(g)
        dx = self._empty(st.x.shape, g.dtype)
        kind, grid, block = self._rows_reg_launch("layernorm_bwd", st.rows, st.cols)
        self.rt.launch(f"layernorm_bwd_{kind}_{_SFX[g.dtype]}", grid, block,
                       (dx.ptr, g.ptr, st.x.ptr, 0, st.mean.ptr, st.rstd.ptr, st.rows, st.cols), shapes=(g.shape,),
                       nbytes=3 * g.nbytes)
        return dx

    # ---- random -------------------------------------------------------------------------------
    def dropout_mask(self, gen, shape: tuple, p: float, dtype):
        """keep / (1 - p) per element from the generator's Philox stream, drawn on the device.

        The kernel reads NumPy's own Philox stream from the generator's (key, counter), so the first mask
        after a seed equals the CPU backend's; the host generator is then advanced past the blocks used.
        A generator holding buffered words (after odd-sized host draws) is served on the host instead."""
        npdt = np.dtype(dtype.np)
        bg = gen.np_generator().bit_generator
        st = bg.state
        if (npdt not in _FLOAT or not 0 <= p < 1 or st.get("bit_generator") != "Philox" or st["has_uint32"]
                or st["buffer_pos"] != 4):
            return self._fallback("dropout_mask", (gen, shape, p, dtype))
        mask = self.full(shape, 1.0, dtype)
        n = mask.size
        if n:
            key, ctr = st["state"]["key"], st["state"]["counter"]
            nblocks = (n - 1) // 8 + 1
            self._launch(f"philox_dropout_{_SFX[npdt]}", (max(1, min(-(-nblocks // THREADS), self.cap)), 1, 1),
                         (mask.ptr, mask.ptr, 0, *map(int, key), *map(int, ctr), 0, n, float(p),
                          float(1.0 / (1.0 - p))), (tuple(shape),), 2 * mask.nbytes)
            bg.advance(nblocks)
        return mask

    # ---- gather / scatter-add / index-select (int64 indices) -----------------------------------
    @staticmethod
    def _index_layout(index: CudaArray, a: CudaArray, b: CudaArray | None, axis: int) -> tuple:
        nd = index.ndim
        pad = _MAXDIM - nd
        return (*index.shape, *(1,) * pad, *a.strides, *(0,) * pad,
                *(b.strides if b is not None else (0,) * nd), *(0,) * pad, nd, axis, a.shape[axis])

    def _wrapped(self, index: CudaArray, n: int) -> CudaArray:
        """Indices in [-n, n) made non-negative (the kernels read only [0, n)), contiguous."""
        neg = self._compare("lt", index, 0)
        return self.where(neg, self._unary("add_s", index, n), index)

    def _index_ok(self, x, index, axis) -> bool:
        return (x.dtype in _FLOAT and index.dtype == np.int64 and 0 < x.ndim <= _MAXDIM
                and index.ndim == x.ndim)

    def gather(self, x, axis, index):
        if not self._index_ok(x, index, axis):
            return self._fallback("gather", (x, axis, index))
        axis %= x.ndim
        index = self._wrapped(index, x.shape[axis])
        out = self._empty(index.shape, x.dtype)
        if out.size:
            self._launch(f"gather_{_SFX[x.dtype]}", self._grid(out.size),
                         (x.ptr, index.ptr, out.ptr, *self._index_layout(index, x, None, axis), out.size),
                         (x.shape, index.shape), 2 * out.nbytes + index.nbytes)
        return out

    def scatter_add(self, x, axis, index, src):
        if not self._index_ok(x, index, axis) or src.dtype != x.dtype or src.ndim != x.ndim:
            return self._fallback("scatter_add", (x, axis, index, src))
        axis %= x.ndim
        index = self._wrapped(index, x.shape[axis])
        out = self.contiguous(x)
        if index.size:
            self._launch(f"scatter_add_{_SFX[x.dtype]}", self._grid(index.size),
                         (out.ptr, index.ptr, src.ptr, *self._index_layout(index, out, src, axis), index.size),
                         (x.shape, index.shape), 2 * out.nbytes + index.nbytes)
        return out

    def index_select(self, x, axis, index):
        if x.dtype not in _FLOAT or index.dtype != np.int64 or x.ndim == 0 or index.ndim != 1:
            return self._fallback("index_select", (x, axis, index))
        axis %= x.ndim
        x = x if x.is_contiguous else self.contiguous(x)
        index = self._wrapped(index, x.shape[axis])
        shape = x.shape[:axis] + (index.shape[0],) + x.shape[axis + 1:]
        out = self._empty(shape, x.dtype)
        if out.size:
            self._launch(f"index_select_{_SFX[x.dtype]}", self._grid(out.size),
                         (x.ptr, index.ptr, out.ptr, x.shape[axis], index.shape[0], _prod(x.shape[axis + 1:]),
                          out.size), (x.shape, index.shape), 2 * out.nbytes)
        return out

    def index_add(self, shape, dtype, index, g):
        """Zeros of ``shape`` plus ``g`` at ``index``; on the device for the one-axis form index_select's
        backward uses, (:, ..., idx, :, ...) with a 1-D int64 ``idx``."""
        idx = index if isinstance(index, tuple) else (index,)
        arrays = [d for d, i in enumerate(idx) if _is_arr(i)]
        full = all(_is_arr(i) or i == slice(None) for i in idx)
        if (not full or len(arrays) != 1 or len(idx) != len(shape) or g.dtype not in _FLOAT
                or idx[arrays[0]].ndim != 1 or idx[arrays[0]].dtype != np.int64 or np.dtype(dtype.np) != g.dtype):
            return self._fallback("index_add", (shape, dtype, index, g))
        axis = arrays[0]
        ind = self._wrapped(idx[axis], shape[axis])
        g = g if g.is_contiguous else self.contiguous(g)
        out = self.full(tuple(shape), 0.0, dtype)
        if g.size:
            self._launch(f"index_add_{_SFX[g.dtype]}", self._grid(g.size),
                         (out.ptr, ind.ptr, g.ptr, shape[axis], ind.shape[0], _prod(shape[axis + 1:]), g.size),
                         (tuple(shape), g.shape), 2 * g.nbytes)
        return out

    # ---- basic indexing (ints, slices, None, Ellipsis): strided views, no copy ----------------
    @staticmethod
    def _basic_view(x: CudaArray, index):
        """The view ``x[index]`` for a basic index, or None if the index has arrays in it."""
        idx = index if isinstance(index, tuple) else (index,)
        if any(not (i is None or i is Ellipsis or isinstance(i, slice) or
                    (isinstance(i, (int, np.integer)) and not isinstance(i, bool))) for i in idx):
            return None
        n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
        if n_real > x.ndim or sum(1 for i in idx if i is Ellipsis) > 1:
            return None
        if Ellipsis in idx:
            k = idx.index(Ellipsis)
            idx = idx[:k] + (slice(None),) * (x.ndim - n_real) + idx[k + 1:]
        else:
            idx = idx + (slice(None),) * (x.ndim - n_real)
        shape, strides, offset, d = [], [], x.offset, 0
        for i in idx:
            if i is None:
                shape.append(1)
                strides.append(0)
                continue
            n, st = x.shape[d], x.strides[d]
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                length = len(range(start, stop, step))
                shape.append(length)
                strides.append(st * step)
                if length:
                    offset += start * st
            else:
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
                offset += (i % n) * st
            d += 1
        return x.with_layout(tuple(shape), tuple(strides), offset)

    def setitem(self, x, index, value):
        view = self._basic_view(x, index)
        if view is None or (_is_arr(value) and value.dtype != x.dtype):
            return self._fallback("setitem", (x, index, value))
        self.assign(view, value)

    def index(self, x, index):
        view = self._basic_view(x, index)
        if view is None:
            return self._fallback("index", (x, index))
        return self.contiguous(view)

    # ---- host fallback ------------------------------------------------------------------------
    def _span(self, x: CudaArray) -> tuple:
        """(first, end) element offsets from ``x.ptr`` of the buffer range the view touches."""
        lo = sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
        hi = sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) + 1
        return lo, hi

    def _write_view(self, dst: CudaArray, host) -> None:
        """Write a host array into the device view ``dst`` (any strides, repeated elements included)."""
        host = np.asarray(host, dtype=dst.dtype, order="C")
        if dst.size == 0:
            return
        if dst.is_contiguous:
            self.rt.drv.memcpy_htod(dst.ptr, host)
            return
        if dst.dtype in _SFX and dst.ndim <= _MAXDIM and not any(s == 0 and n > 1 for n, s in
                                                                   zip(dst.shape, dst.strides)):
            self._copy_into(dst, self.from_numpy(host.reshape(dst.shape)))
            return
        lo, hi = self._span(dst)  # read the span, write the view into it in order, put the span back
        span = np.empty(hi - lo, dst.dtype)
        self.rt.drv.memcpy_dtoh(span, dst.ptr + lo * dst.itemsize)
        view = np.lib.stride_tricks.as_strided(span[-lo:], dst.shape, tuple(s * dst.itemsize for s in dst.strides))
        np.copyto(view, host.reshape(dst.shape))
        self.rt.drv.memcpy_htod(dst.ptr + lo * dst.itemsize, span)

    def _to_host(self, v, seen: list):
        if _is_arr(v):
            h = self.to_numpy(v)
            seen.append((v, h))
            return h
        if isinstance(v, tuple):
            return tuple(self._to_host(e, seen) for e in v)
        if isinstance(v, list):
            return [self._to_host(e, seen) for e in v]
        return v

    def _to_device(self, r):
        if isinstance(r, (np.ndarray, np.generic)):
            return self.from_numpy(np.asarray(r))
        if isinstance(r, tuple):
            return tuple(self._to_device(e) for e in r)
        return r

    def _fallback(self, name: str, args: tuple):
        """Run NumpyBackend's ``name`` on host copies; write back the operands it modifies in place."""
        self.fallbacks[name] += 1
        t0 = events.now()
        seen: list = []
        host_args = self._to_host(args, seen)
        r = getattr(self._host, name)(*host_args)
        written = [args[i] for i in IN_PLACE.get(name, ()) if i < len(args)]
        for dev_arr, host in seen:
            if any(dev_arr is w for w in written):
                self._write_view(dev_arr, host)
        out = self._to_device(r)
        if events.ACTIVE:
            nbytes = sum(h.nbytes for _, h in seen)
            events.emit(events.KernelTimed(f"host:{name}", self._device_name, t0, events.now() - t0,
                                           tuple(d.shape for d, _ in seen), nbytes, None, None, *launch_context()))
        return out

    def __getattr__(self, name: str):
        """Any primitive of the protocol without a kernel here: the host fallback."""
        p = PRIMITIVES.get(name)
        if p is None or p.device_only or not callable(getattr(NumpyBackend, name, None)):
            raise AttributeError(name)

        def fallback(*args):
            return self._fallback(name, args)

        fallback.__name__ = name
        self.__dict__[name] = fallback
        return fallback




class _LNState:
    __slots__ = ("x", "mean", "rstd", "rows", "cols")

    def __init__(self, x, mean, rstd, rows, cols):
        self.x, self.mean, self.rstd, self.rows, self.cols = x, mean, rstd, rows, cols


class _CEState:
    __slots__ = ("logits", "target", "weight", "lse", "ignore_index", "smoothing")

    def __init__(self, logits, target, weight, lse, ignore_index, smoothing):
        self.logits, self.target, self.weight, self.lse = logits, target, weight, lse
        self.ignore_index, self.smoothing = ignore_index, smoothing


def _binary_primitive(op: str):
    def primitive(self, x, y, /):
        return self._binary(op, x, y)
    return primitive


def _backward_primitive(op: str):
    """relu/tanh/sigmoid_backward: the binary kernel, with the NumPy backend's parameter names (g, y)."""
    def primitive(self, g, y):
        return self._binary(op, g, y)
    return primitive


def _compare_primitive(op: str):
    def primitive(self, x, y, /):
        return self._compare(op, x, y)
    return primitive


def _predicate_primitive(op: str):
    def primitive(self, x, /):
        return self._predicate(op, x)
    return primitive


def _unary_primitive(op: str):
    def primitive(self, x, /):
        r = self._unary(op, x) if (x.dtype in _FLOAT or op in UNARY_INT) else None
        return r if r is not None else self._fallback(op, (x,))
    return primitive


def _install_elementwise() -> None:
    """add/sub/..., the unary math, comparisons and predicates: one method each, with the signature the protocol
    gives it (``signatures.Backend``)."""
    installs = [(op, _backward_primitive if op.endswith("_backward") else _binary_primitive) for op in BINARY]
    installs += [(op, _compare_primitive) for op in COMPARE]
    installs += [(op, _predicate_primitive) for op in ("isnan", "isinf", "isfinite", "logical_not")]
    installs += [(op, _unary_primitive) for op in ("neg", "abs", "sign", "exp", "log", "sqrt", "rsqrt", "sin", "cos",
                                                   "tanh", "sigmoid", "relu", "erf")]
    for op, make in installs:
        fn = make(op)
        fn.__name__, fn.__qualname__ = op, f"CudaBackend.{op}"
        setattr(CudaBackend, op, fn)


_install_elementwise()
