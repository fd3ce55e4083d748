"""The CPU backend's fused primitives for neural networks (mixed into ``NumpyBackend``).

Each one replaces a chain of small ops with one pass over the data, and each has a CUDA twin in
``kernel_src/``: im2col/col2im (convolution as one matrix multiply), max-pool with indices,
layer norm, softmax cross-entropy, dropout masks from the counter-based generator, and the Adam
update. Like every primitive they return fresh arrays, except the optimizer steps, which write
into the parameter and state arrays they are given (the caller bumps the versions).
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import blas_threads, cpu_kernels


def _windows(xp, kh: int, kw: int, stride: tuple, dilation: tuple, oh: int, ow: int):
    """A (N, C, OH, OW, KH, KW) strided view of the padded input ``xp``: every kernel window."""
    n, c = xp.shape[:2]
    s0, s1, s2, s3 = xp.strides
    return as_strided(xp, (n, c, oh, ow, kh, kw),
                      (s0, s1, s2 * stride[0], s3 * stride[1], s2 * dilation[0], s3 * dilation[1]), writeable=False)


def out_size(size: int, k: int, stride: int, padding: int, dilation: int) -> int:
    """Output length of a sliding window (PyTorch's formula, floor mode)."""
    return (size + 2 * padding - dilation * (k - 1) - 1) // stride + 1


def _pad(x, padding: tuple, value):
    ph, pw = padding
    if not ph and not pw:
        return x
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


def _sliding(x, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, fill):
    """Every kernel window of ``x`` padded with ``fill``: a (N, C, OH, OW, KH, KW) strided view."""
    h, w = x.shape[2:]
    oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
    return _windows(_pad(x, padding, fill), kernel[0], kernel[1], stride, dilation, oh, ow)


def _add_taps(c6, size: tuple, stride: tuple, padding: tuple, dilation: tuple):
    """The adjoint of taking windows: ``c6`` is (A, B, KH, KW, OH, OW); each tap's values are added back
    into the (A, B, H, W) pixels they were read from (padding cropped)."""
    a, b, kh, kw, oh, ow = c6.shape
    (h, w), (sh, sw), (ph, pw), (dh, dw) = size, stride, padding, dilation
    acc = np.zeros((a, b, h + 2 * ph, w + 2 * pw), c6.dtype)
    for i in range(kh):
        rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            acc[:, :, rows, j * dw: j * dw + sw * (ow - 1) + 1: sw] += c6[:, :, i, j]
    return acc[:, :, ph: ph + h, pw: pw + w]


_ZEROS = {}


def _zero(dtype):
    """A cached 0-d zero of ``dtype``: NumPy converts a Python 0 on every call otherwise."""
    z = _ZEROS.get(dtype)
    if z is None:
        z = _ZEROS[dtype] = np.zeros((), dtype)
    return z


def all_finite(a) -> bool:
    """Whether ``a`` holds no inf or NaN. For float32/64 one BLAS dot (a . a) answers it at about twice
    the speed of ``np.isfinite(a).all()``; an overflow to inf only sends the caller to its exact path."""
    if a.dtype in (np.float32, np.float64) and a.flags.c_contiguous and a.size:
        flat = a.reshape(-1)
        return math.isfinite(flat @ flat)
    return bool(np.isfinite(a).all())


_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_SMALL = 4096  # elements: below this, masked() selects with np.where (the crossover measured on a Xeon: ~4-5k)


def masked(g, mask, out=None, invert: bool = False):
    """``g`` where ``mask`` (where not ``mask`` with ``invert``) else +0.0, as PyTorch's backward formulas give it:
    an inf or NaN of ``g`` outside the mask gives 0, not NaN, and a negative ``g`` gives +0.0, not -0.0.

    Done on the bits, with no float arithmetic: the mask widened to the float's width and turned into all-ones or
    all-zeros words, then ANDed with ``g``'s bits (about twice the speed of ``g * mask`` and its clean-ups, and
    many times that of ``np.where`` on large arrays). Up to a few thousand elements ``np.where`` is the faster of the
    two (one call instead of five): the select is exact either way."""
    ut = _UINT.get(g.dtype.itemsize)
    if ut is None or g.dtype.kind != "f" or g.size <= _SMALL:
        exact = np.where(mask, _zero(g.dtype), g) if invert else np.where(mask, g, _zero(g.dtype))
        if out is None:
            return exact
        np.copyto(out, exact)
        return out
    words = np.broadcast_to(mask, g.shape).view(np.uint8).astype(ut)  # 1 where the mask is set
    if invert:
        words -= ut(1)  # set -> 0, unset -> all ones
    else:
        np.negative(words, out=words)  # set -> all ones, unset -> 0
    np.bitwise_and(words, g.view(ut), out=words)
    r = words.view(g.dtype)
    if out is None:
        return r
    np.copyto(out, r)
    return out


_PIECE = 512  # columns per piece of a long product (see _gemm_nt)


def _gemm_nt(a, b):
    """``a @ b.T`` for a convolution's weight gradient: (M, K) by (N, K), where K (every output position of the
    batch) is far longer than M and N (channels, channels x taps). BLAS runs one such product at a fraction of its
    speed (8 x 53,760 by 9 x 53,760: 0.5 ms); cut K into pieces of ``_PIECE``, multiplied as a batch and summed, it
    is about 3x faster. Larger M x N take the one product (there the pieces cost more than they save)."""
    m, k = a.shape
    n = b.shape[0]
    pieces = k // _PIECE
    if m * n > 8192 or pieces < 8:
        return blas_threads.matmul(a, b.T)
    head = pieces * _PIECE
    part = np.matmul(b[:, :head].reshape(n, pieces, _PIECE).transpose(1, 0, 2),
                     a[:, :head].reshape(m, pieces, _PIECE).transpose(1, 2, 0))  # (pieces, N, M)
    r = part.sum(0)
    if head < k:
        r += b[:, head:] @ a[:, head:].T
    return np.ascontiguousarray(r.T)


def _wide_geometry(x_shape: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
    """The wide-grid plan for a stride-1 convolution, or None when it does not pay: the extra columns
    cost (Wp - OW) / OW more GEMM work and memory, so only up to half again is accepted (a 3x3 kernel
    with padding 1 on a 28-wide image costs 7%; a dilation of 15 would cost 15x)."""
    if stride != (1, 1):
        return None
    geo = _WideGeometry(x_shape, kernel, padding, dilation)
    return geo if geo.ow > 0 and 2 * (geo.wp - geo.ow) <= geo.ow else None


class _WideGeometry:
    """Where a stride-1 convolution reads its taps when each padded image plane is one flat row.

    With stride 1, tap (i, j) of every output position (oh, ow) reads pixel (oh + i*dh, ow + j*dw) of
    the padded plane; computing outputs on the *wide* grid (OH, Wp) instead of (OH, OW) makes that
    read, over all positions at once, one contiguous run of OH*Wp values starting at i*dh*Wp + j*dw.
    The copies into and out of the columns then move long runs instead of OW-long rows (3-5x
    faster on small images). The Wp - OW extra columns per row are computed and thrown away.
    """

    __slots__ = ("n", "c", "h", "w", "kh", "kw", "ph", "pw", "dh", "dw", "hp", "wp", "oh", "ow", "plane")

    def __init__(self, x_shape: tuple, kernel: tuple, padding: tuple, dilation: tuple):
        self.n, self.c, self.h, self.w = x_shape
        (self.kh, self.kw), (self.ph, self.pw), (self.dh, self.dw) = kernel, padding, dilation
        self.hp, self.wp = self.h + 2 * self.ph, self.w + 2 * self.pw
        self.oh, self.ow = self.hp - self.dh * (self.kh - 1), self.wp - self.dw * (self.kw - 1)
        # the last tap's run ends (kw - 1) * dw values past the plane: keep that much zero tail
        self.plane = self.hp * self.wp + self.dw * (self.kw - 1)

    def taps(self):
        """The start offset of each tap's run, in (i, j) order."""
        return [i * self.dh * self.wp + j * self.dw for i in range(self.kh) for j in range(self.kw)]

    def crop(self, flat):
        """(A, B, plane) -> the (A, B, H, W) unpadded image inside it (a view)."""
        a, b = flat.shape[:2]
        return flat[:, :, :self.hp * self.wp].reshape(a, b, self.hp, self.wp)[
            :, :, self.ph: self.ph + self.h, self.pw: self.pw + self.w]


def _conv_geometry(x_shape: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, oh: int, ow: int):
    """The geometry array the kernels of ``kernel_src/cpu/conv.c`` read: n c h w kh kw sh sw ph pw dh dw oh ow."""
    return np.array([*x_shape, *kernel, *stride, *padding, *dilation, oh, ow], np.int64)


def _conv_kernel(name: str, a):
    """The compiled ``conv.c`` kernel ``name`` for a non-empty C-contiguous float32/float64 array ``a``, else None."""
    return cpu_kernels.typed_kernel(name, a.dtype) if a.flags.c_contiguous and a.size else None


def _wide_cols(x, geo: _WideGeometry):
    """(C*KH*KW, N*OH*Wp) columns of a stride-1 convolution on the wide grid (see :class:`_WideGeometry`)."""
    n, c = geo.n, geo.c
    xp = np.zeros((n, c, geo.plane), x.dtype)
    geo.crop(xp)[...] = x
    it = xp.itemsize
    run = geo.oh * geo.wp
    win = as_strided(xp, (c, geo.kh, geo.kw, n, run), (xp.strides[1], geo.dh * geo.wp * it, geo.dw * it,
                                                       xp.strides[0], it), writeable=False)
    return np.ascontiguousarray(win).reshape(c * geo.kh * geo.kw, n * run)


def _wide_col2im(gcols, geo: _WideGeometry, n: int):
    """The adjoint of :func:`_wide_cols`: add each tap's run back, then crop to (N, C, H, W)."""
    run = geo.oh * geo.wp
    g5 = gcols.reshape(geo.c, geo.kh * geo.kw, n, run)
    acc = np.zeros((geo.c, n, geo.plane), gcols.dtype)
    for t, start in enumerate(geo.taps()):
        acc[:, :, start: start + run] += g5[:, t]
    return np.ascontiguousarray(geo.crop(acc).transpose(1, 0, 2, 3))


def _compiled_im2col(x, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, images_first: bool):
    """General columns from ``conv.c`` (None where it does not run): (N, C*KH*KW, OH*OW) with ``images_first``
    (the Im2Col node's layout), else the convolution's (C*KH*KW, N*OH*OW)."""
    k = _conv_kernel("im2col", x)
    if k is None:
        return None
    n, c, h, w = x.shape
    oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
    taps, plane = kernel[0] * kernel[1], oh * ow
    if images_first:
        cols = np.empty((n, c * taps, plane), x.dtype)
        strides = (c * taps * plane, taps * plane, plane)
    else:
        cols = np.empty((c * taps, n * plane), x.dtype)
        strides = (plane, taps * n * plane, n * plane)
    if cols.size:
        k(_conv_geometry(x.shape, kernel, stride, padding, dilation, oh, ow).ctypes.data, x.ctypes.data,
          cols.ctypes.data, *strides)
    return cols


_DIRECT_MAX_TAPS = 288  # C*KH*KW: up to here a direct convolution (conv_direct.c) beats im2col + BLAS ...
_DIRECT_CHANNELS = (3, 32)  # ... for this many output channels (see _direct_ok) ...
_DIRECT_CORES = 2  # ... on this many cores (the kernel runs on one, BLAS's products on all of them)


def _direct_ok(x: np.ndarray, weight_shape: tuple, stride: tuple, padding: tuple, dilation: tuple) -> bool:
    """Whether ``conv_direct.c`` runs this convolution: stride and dilation 1, float32/float64, output rows of 8
    pixels or more (the kernel computes 2 vectors of pixels at once), 3 to 32 output channels and at most 288 taps
    per output (C*KH*KW). There the GEMM is thin and OpenBLAS slow (about 30 GFLOP/s). Measured on 120 convolutions
    (batch 16-64, 14-32 pixels, 1-32 channels in, 8-64 out, 3x3; forward and input gradient), the direct kernel
    took 0.13-1.25x of im2col + BLAS's time on the 81 inside these bounds (1-3 of them above 1 in two runs), and
    up to 1.66x outside them: with many output channels it reads the input once per 4 of them, and with one or two
    its 4-channel tile idles (``benchmarks/cpu_kernels.py --only direct_sweep``; the CNN benchmark's own:
    ``--only direct_conv``).

    Those were 2 cores. The kernel runs on one and BLAS on all, so on a larger machine (not measured) it keeps to
    products up to twice the size the BLAS policy already runs on one thread (m*n*k 32M: the CNN's are 4-15M)."""
    if not (stride == (1, 1) and dilation == (1, 1) and x.dtype.char in "fd" and x.size > 0):
        return False
    oc, taps = weight_shape[0], weight_shape[1] * weight_shape[2] * weight_shape[3]
    oh, ow = x.shape[2] + 2 * padding[0] - weight_shape[2] + 1, x.shape[3] + 2 * padding[1] - weight_shape[3] + 1
    small = oc * taps * x.shape[0] * oh * ow <= 2 * blas_threads.LARGE_MNK
    return (_DIRECT_CHANNELS[0] <= oc <= _DIRECT_CHANNELS[1] and taps <= _DIRECT_MAX_TAPS and ow >= 8
            and (small or (os.cpu_count() or 1) <= _DIRECT_CORES) and cpu_kernels.available())


def _direct_conv(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, padding: tuple) -> np.ndarray | None:
    """``conv_direct.c``'s stride-1 convolution of ``x`` (N, C, H, W) with ``weight`` (OC, C, KH, KW) and ``padding``,
    plus ``bias``: (N, OC, OH, OW); None where the kernel cannot be had (the caller runs the GEMM)."""
    k = cpu_kernels.typed_kernel("conv_direct", x.dtype)
    if k is None:
        return None
    n, c, h, w = x.shape
    oc, _, kh, kw = weight.shape
    (ph, pw), block = padding, 64 // x.itemsize  # (two 32-byte vectors of pixels per tile row)
    oh, ow = h + 2 * ph - kh + 1, w + 2 * pw - kw + 1
    hp, wp = h + 2 * ph, -(-ow // block) * block + kw - 1  # rows long enough for whole vectors
    xp = np.zeros((n, c, hp, wp), x.dtype)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    ocp = -(-oc // 4) * 4  # the tile's four output channels: pad the weights with zeros
    wq = np.zeros((ocp, c, kh, kw), x.dtype)
    wq[:oc] = weight
    out = np.empty((n, oc, oh, ow), x.dtype)
    geo = np.array([n, c, hp, wp, ocp, kh, kw, oh, ow, oc], np.int64)
    b = None if bias is None else np.ascontiguousarray(bias, x.dtype)
    k(geo.ctypes.data, xp.ctypes.data, wq.ctypes.data, None if b is None else b.ctypes.data, out.ctypes.data)
    return out


class _DeferredCols:
    """The im2col columns a direct convolution's forward did not build: the weight's gradient builds them from the
    input, if it is asked for (the graph node keeps this in place of the columns)."""

    __slots__ = ("x", "kernel", "stride", "padding", "dilation")

    def __init__(self, x: np.ndarray, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple) -> None:
        self.x, self.kernel, self.stride, self.padding, self.dilation = x, kernel, stride, padding, dilation

    def build(self) -> np.ndarray:
        return _columns(self.x, self.kernel, self.stride, self.padding, self.dilation)[0]


def _columns(x: np.ndarray, kernel: tuple, stride: tuple, padding: tuple,
             dilation: tuple) -> tuple[np.ndarray, int, int, int]:
    """The columns of a convolution as :meth:`NumpyNNPrimitives.conv2d`'s GEMM reads them, with (OH, OW) and the
    length of an output row on their grid (Wp on the wide grid of a stride-1 convolution, else OW)."""
    n = x.shape[0]
    geo = _wide_geometry(x.shape, kernel, stride, padding, dilation)
    if geo is not None:
        return _wide_cols(x, geo), geo.oh, geo.ow, geo.wp
    oh = out_size(x.shape[2], kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(x.shape[3], kernel[1], stride[1], padding[1], dilation[1])
    cols = _compiled_im2col(x, kernel, stride, padding, dilation, images_first=False)
    if cols is None:
        win = _sliding(x, kernel, stride, padding, dilation, 0)
        cols = np.ascontiguousarray(win.transpose(1, 4, 5, 0, 2, 3)).reshape(x.shape[1] * kernel[0] * kernel[1],
                                                                             n * oh * ow)
    elif cols.size:
        cpu_kernels.launched("im2col+gemm")  # (the columns from conv.c, the product from BLAS)
    return cols, oh, ow, ow


_POOL_C_MIN_OW = 32  # output columns: a strided pool this wide runs its forward in pool.c (4-5x NumPy's strided
# maximum on (8, 64, 112, 112), 3x3 / 2); on narrower rows the compiled loop over each row's windows loses


def _compiled_pool(x, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
    """(out, argmax) from ``pool.c`` by PyTorch's rule, ``argmax`` an int32 array of flat indices h * W + w in the
    plane (the backward's state, and return_indices'), or None where the kernel does not run."""
    k = cpu_kernels.typed_kernel("max_pool2d_fwd", x.dtype) if x.size else None
    n, c, h, w = x.shape
    if k is None or h * w >= 2 ** 31:
        return None
    oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
    x = np.ascontiguousarray(x)
    out, argmax = np.empty((n, c, oh, ow), x.dtype), np.empty((n, c, oh, ow), np.int32)
    if out.size:
        geo = np.array([n * c, h, w, oh, ow, *kernel, *stride, *padding, *dilation], np.int64)
        k(geo.ctypes.data, x.ctypes.data, out.ctypes.data, argmax.ctypes.data)
    return out, argmax


def _pairs_pool_applies(x, kernel, stride, padding, dilation) -> bool:
    """The 2x2 / stride-2 float32 pooling of most CNNs, on an even-width contiguous input (native
    little-endian: the even column must be the low half of each uint64)."""
    return (kernel == (2, 2) and stride == (2, 2) and padding == (0, 0) and dilation == (1, 1)
            and x.dtype == np.float32 and x.shape[3] % 2 == 0 and x.flags.c_contiguous and _LITTLE_ENDIAN)


_LOW32, _SHIFT32 = np.uint64(0xFFFFFFFF), np.uint64(32)
_LITTLE_ENDIAN = sys.byteorder == "little"


def _max_pool_pairs(x):
    """2x2 max-pool without strided arithmetic (NumPy's strided loops run ~9x slower than contiguous).

    Each pair of neighbouring float32 columns is one little-endian uint64, so two contiguous integer
    passes split the even (low half) and odd (high half) columns. The max of each pair, then of each
    pair of rows, gives the output; the two "second one wins" masks are kept for backward. As in
    PyTorch, ties go to the first tap in row-major order and a window holding NaN to its last NaN.
    """
    n, c, h, w = x.shape
    rows = x[:, :, : h - h % 2]
    pairs = rows.view(np.uint64)
    left = (pairs & _LOW32).astype(np.uint32).view(np.float32)
    right = (pairs >> _SHIFT32).astype(np.uint32).view(np.float32)
    right_wins = right > left
    colmax = np.maximum(left, right)
    top, bottom = colmax[:, :, 0::2], colmax[:, :, 1::2]
    bottom_wins = bottom > top
    out = np.maximum(top, bottom)
    if not all_finite(out):  # PyTorch's rule "val > max or isnan(val)": the last NaN of a window wins
        right_wins |= np.isnan(right)
        bottom_wins |= np.isnan(bottom)
    return out, (right_wins, bottom_wins)


def _max_pool_pairs_backward(g, x_shape, state):
    """The adjoint of :func:`_max_pool_pairs`: rows first, then each value shifted into its uint64 half."""
    right_wins, bottom_wins = state
    n, c, h, w = x_shape
    k = cpu_kernels.kernel("max_pool2x2_pairs_bwd_f32") if g.dtype == np.float32 else None
    if k is not None:  # (pool.c: one scatter of each window's gradient; ~3x faster than the passes below)
        gx = np.empty(x_shape, g.dtype)
        k(n * c, h, w, np.ascontiguousarray(g).ctypes.data, right_wins.ctypes.data, bottom_wins.ctypes.data,
          gx.ctypes.data)
        cpu_kernels.launched("max_pool2x2_bwd")
        return gx
    per_row = np.empty(right_wins.shape, g.dtype)  # (N, C, 2*OH, OW): each window's gradient on its winning row
    if all_finite(g):  # the fast products, then one contiguous pass turning their -0.0s into 0.0
        np.multiply(g, ~bottom_wins, out=per_row[:, :, 0::2])
        np.multiply(g, bottom_wins, out=per_row[:, :, 1::2])
        per_row += _zero(per_row.dtype)
    else:
        masked(g, ~bottom_wins, out=per_row[:, :, 0::2])
        masked(g, bottom_wins, out=per_row[:, :, 1::2])
    bits = per_row.view(np.uint32).astype(np.uint64)
    bits <<= right_wins.view(np.uint8) * np.uint8(32)  # the odd column is the high half of the pair
    dx = bits.view(np.float32)
    if h % 2:
        full = np.zeros(x_shape, g.dtype)
        full[:, :, : h - 1] = dx
        return full
    return dx.reshape(x_shape)


_COMPILED_MIN = 32768  # elements: from here an activation pass runs compiled (activation.c), ~2x NumPy's at 400k;
# at 16k tanh's and sigmoid's backward were even, and below the ctypes call (~3 us) costs more than it saves


def elementwise_compiled(name: str, x, *same):
    """``name``'s compiled pass over ``x`` (and arrays ``same`` of its shape, dtype and layout) into a new array, or
    None where it does not run: small or non-contiguous arrays, other dtypes, no compiler (the caller runs NumPy)."""
    if x.size < _COMPILED_MIN:
        return None
    k = cpu_kernels.row_kernel(name, x, *same)
    if k is None:
        return None
    out = np.empty_like(x)
    k(x.size, *(a.ctypes.data for a in (x, *same)), out.ctypes.data)
    cpu_kernels.launched(name)
    return out


_RELU_BLOCK = 16384
_RELU_ZEROS = {}


def relu(x):
    """max(x, 0), NaN kept. NumPy's ``maximum`` against a scalar takes a slow non-SIMD loop (about 4x
    slower than against an array), so large contiguous inputs go block by block against a small
    cached block of zeros."""
    size = x.size
    if size <= _RELU_BLOCK or not x.flags.c_contiguous:
        return np.maximum(x, _zero(x.dtype))
    out = elementwise_compiled("relu_fwd", x)
    if out is not None:
        return out
    zeros = _RELU_ZEROS.get(x.dtype)
    if zeros is None:
        zeros = _RELU_ZEROS[x.dtype] = np.zeros(_RELU_BLOCK, x.dtype)
    out = np.empty_like(x)
    src, dst = x.reshape(-1), out.reshape(-1)
    for start in range(0, size, _RELU_BLOCK):
        stop = min(start + _RELU_BLOCK, size)
        np.maximum(src[start:stop], zeros[:stop - start], out=dst[start:stop])
    return out


class NumpyNNPrimitives:
    """Fused primitives; all static so the backend object stays stateless."""

    # ---- convolution as matrix multiply -------------------------------------------------------
    @staticmethod
    def im2col(x, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """(N, C, H, W) -> (N, C*KH*KW, OH*OW): one column per output position, one row per tap
        (the layout of the Im2Col graph node, which spells the convolution's double backward)."""
        cols = _compiled_im2col(x, kernel, stride, padding, dilation, images_first=True)
        if cols is not None:
            cpu_kernels.launched("im2col")
            return cols
        win = _sliding(x, kernel, stride, padding, dilation, 0)
        n, c, oh, ow, kh, kw = win.shape
        return np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kh * kw, oh * ow)

    @staticmethod
    def col2im(cols, shape: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """The adjoint of im2col: add every column entry back into the pixel it was read from."""
        n, c, h, w = shape
        oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
        ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
        k = _conv_kernel("col2im", cols)
        if k is not None:
            gx = np.empty(shape, cols.dtype)
            k(_conv_geometry(shape, kernel, stride, padding, dilation, oh, ow).ctypes.data, cols.ctypes.data,
              gx.ctypes.data, c * kernel[0] * kernel[1] * oh * ow, kernel[0] * kernel[1] * oh * ow, oh * ow)
            cpu_kernels.launched("col2im")
            return gx
        c6 = cols.reshape(n, c, *kernel, oh, ow)
        return np.ascontiguousarray(_add_taps(c6, (h, w), stride, padding, dilation))

    @staticmethod
    def conv2d(x, weight, bias, stride: tuple, padding: tuple, dilation: tuple):
        """Convolution as one GEMM: (OC, C*KH*KW) @ cols (C*KH*KW, N*OH*OW). Returns (out, cols);
        the columns are kept by the graph node so backward needs no second im2col (their layout is
        this backend's business: stride-1 convolutions keep the "wide" columns of :func:`_wide_cols`).
        A stride-1 convolution with few channels runs ``conv_direct.c`` instead (:func:`_direct_ok`) and returns
        :class:`_DeferredCols` in place of the columns: the weight's gradient builds them, if asked."""
        oc, n = weight.shape[0], x.shape[0]
        if _direct_ok(x, weight.shape, stride, padding, dilation):
            out = _direct_conv(x, weight, bias, padding)
            if out is not None:
                cpu_kernels.launched("conv_direct")
                return out, _DeferredCols(x, weight.shape[2:], stride, padding, dilation)
        cols, oh, ow, row = _columns(x, weight.shape[2:], stride, padding, dilation)
        # inf * 0 is a NaN as in torch, not a warning (on the wide grid it may land only in a dropped column)
        with np.errstate(invalid="ignore"):
            out = blas_threads.matmul(weight.reshape(oc, -1), cols)
        if bias is not None:
            out += bias[:, None]
        out = out.reshape(oc, n, oh, row)[:, :, :, :ow]
        return np.ascontiguousarray(out.transpose(1, 0, 2, 3)), cols

    @staticmethod
    def conv2d_backward(g, cols, weight, x_shape, stride: tuple, padding: tuple, dilation: tuple,
                        need_x: bool, need_w: bool, need_b: bool):
        """Gradients of :meth:`conv2d` for the inputs that need one: (gx, gweight, gbias)."""
        n, oc, oh, ow = g.shape
        c, kh, kw = weight.shape[1:]
        if isinstance(cols, _DeferredCols):
            cols = cols.build() if need_w else None
        # the input's gradient as a direct convolution: the padded g with the flipped weight (only for a finite
        # weight: an inf times the padding's zeros would be a NaN where no output reads the pixel)
        gx_direct, full = None, (kh - 1 - padding[0], kw - 1 - padding[1])
        if (need_x and min(full) >= 0 and _direct_ok(g, (c, oc, kh, kw), stride, full, dilation)
                and all_finite(weight)):
            flipped = np.ascontiguousarray(weight.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1])
            gx_direct = _direct_conv(np.ascontiguousarray(g), flipped, None, full)
            if gx_direct is not None and gx_direct.shape == tuple(x_shape):
                cpu_kernels.launched("conv_direct")
                if not (need_w or need_b):  # (the gradient on the GEMM's grid is for the other two only)
                    return gx_direct, None, None
                need_x = False
            else:
                gx_direct = None
        geo = _wide_geometry(x_shape, (kh, kw), stride, padding, dilation)
        wide = geo is not None
        if wide:
            g2 = np.empty((oc, n, oh, geo.wp), g.dtype)  # the gradient on the wide grid: 0 in the extra columns
            g2[..., :ow] = g.transpose(1, 0, 2, 3)
            g2[..., ow:] = 0
            g2 = g2.reshape(oc, -1)
        else:
            g2 = np.ascontiguousarray(g.transpose(1, 0, 2, 3)).reshape(oc, -1)  # (OC, N*OH*OW)
        gw = None
        if need_w:
            with np.errstate(invalid="ignore"):  # a NaN here is checked for right below
                gw = _gemm_nt(g2, cols)
            if wide and not all_finite(gw):
                # the extra columns hold real pixels times a zero gradient; an inf/NaN pixel there would
                # turn 0 * inf into NaN, so redo the product over the true output grid only
                narrow = cols.reshape(-1, n, oh, geo.wp)[..., :ow].reshape(cols.shape[0], -1)
                gw = np.ascontiguousarray(g.transpose(1, 0, 2, 3)).reshape(oc, -1) @ narrow.T
            gw = gw.reshape(weight.shape)
        # a GEMV over the (OC, positions) rows is ~2.5x faster than NumPy's strided sum over (N, H, W)
        gb = g2 @ np.ones(g2.shape[1], g2.dtype) if need_b else None
        gx = None
        if need_x:
            with np.errstate(invalid="ignore"):
                gcols = blas_threads.matmul(weight.reshape(oc, -1).T, g2)
            if wide:
                if not all_finite(weight):  # inf * (the 0 gradient of a dropped column) = NaN: clear those
                    gcols.reshape(-1, n, oh, geo.wp)[..., ow:] = 0
                gx = _wide_col2im(gcols, geo, n)
            else:
                k = _conv_kernel("col2im", gcols)
                if k is not None:  # (conv.c: the columns' layout read through its strides, summed in tap order)
                    gx = np.empty(x_shape, gcols.dtype)
                    k(_conv_geometry(x_shape, (kh, kw), stride, padding, dilation, oh, ow).ctypes.data,
                      gcols.ctypes.data, gx.ctypes.data, oh * ow, kh * kw * n * oh * ow, n * oh * ow)
                    cpu_kernels.launched("gemm+col2im")  # (col2im from conv.c, the products from BLAS)
                else:
                    c6 = gcols.reshape(c, kh, kw, n, oh, ow).transpose(0, 3, 1, 2, 4, 5)
                    # summed in the columns' (C, N) order, then one transposing copy to (N, C, H, W)
                    gx = np.ascontiguousarray(_add_taps(c6, x_shape[2:], stride, padding, dilation)
                                              .transpose(1, 0, 2, 3))
        return (gx if gx_direct is None else gx_direct), gw, gb

    # ---- pooling ------------------------------------------------------------------------------
    @staticmethod
    def max_pool2d(x, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """Max over each window. Returns (out, state): ``state`` is what :meth:`max_pool2d_backward`
        needs besides x and out (the argmax masks of the 2x2 fast path; the int32 argmax of ``pool.c``'s forward;
        None otherwise).

        The general path keeps a running ``maximum`` over the KH*KW taps (strided views, no copies)."""
        if _pairs_pool_applies(x, kernel, stride, padding, dilation):
            return _max_pool_pairs(x)
        ow = out_size(x.shape[3], kernel[1], stride[1], padding[1], dilation[1])
        if stride[1] > 1 and ow >= _POOL_C_MIN_OW:
            done = _compiled_pool(x, kernel, stride, padding, dilation)
            if done is not None:
                cpu_kernels.launched("max_pool2d_fwd")
                return done
        kh, kw = kernel
        win = _sliding(x, kernel, stride, padding, dilation, -np.inf)
        out = np.array(win[..., 0, 0])
        for i in range(kh):
            for j in range(kw):
                if i or j:
                    np.maximum(out, win[..., i, j], out=out)
        return out, None

    @staticmethod
    def _first_max_taps(x, out, kernel, stride, padding, dilation):
        """Yield (i, j, hit) per tap, ``hit`` marking the windows whose maximum is taken from that tap, by
        PyTorch's rule: the first maximum in row-major window order, except that a window holding NaN
        takes its last NaN. The last tap needs no comparison: it wins wherever no earlier one did."""
        kh, kw = kernel
        oh, ow = out.shape[2:]
        win = _windows(_pad(x, padding, -np.inf), kh, kw, stride, dilation, oh, ow)
        taps = [(i, j) for i in range(kh) for j in range(kw)]
        inside = None  # per tap, the windows where it is in bounds (a padding tap never wins: a window of -inf
        if any(padding):  # keeps its first in-bounds tap, as torch's loop, which skips the padding)
            h, w = x.shape[2:]
            rows, cols = np.arange(oh) * stride[0] - padding[0], np.arange(ow) * stride[1] - padding[1]
            inside = {(i, j): ((0 <= rows + i * dilation[0]) & (rows + i * dilation[0] < h))[:, None]
                      & ((0 <= cols + j * dilation[1]) & (cols + j * dilation[1] < w))[None, :] for i, j in taps}
        nan_windows = None if all_finite(out) else np.isnan(out)
        last_nan = {}
        if nan_windows is not None:  # from the last tap backwards, each NaN window claims its last NaN
            claimed = ~nan_windows
            for i, j in reversed(taps):
                hit = np.isnan(win[..., i, j]) & ~claimed
                claimed |= hit
                last_nan[i, j] = hit
        taken = None if nan_windows is None else nan_windows.copy()
        for i, j in taps:
            if (i, j) == taps[-1] and taken is not None:
                hit = ~taken
            else:
                hit = win[..., i, j] == out
                if inside is not None:
                    hit &= inside[i, j]
                if taken is None:
                    taken = hit.copy()
                else:
                    hit &= ~taken
                    taken |= hit
            if nan_windows is not None:
                hit |= last_nan[i, j]
            yield i, j, hit

    @staticmethod
    def max_pool2d_indices(x, out, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """For ``return_indices``: the flat input index (h * W + w) of each window's maximum."""
        done = _compiled_pool(x, kernel, stride, padding, dilation)
        if done is not None:
            cpu_kernels.launched("max_pool2d_fwd")
            return done[1].astype(np.int64)
        w_in = x.shape[3]
        oh, ow = out.shape[2:]
        idx = np.zeros(out.shape, np.int64)
        base_r = (np.arange(oh) * stride[0] - padding[0]).reshape(oh, 1)
        base_c = np.arange(ow) * stride[1] - padding[1]
        for i, j, hit in NumpyNNPrimitives._first_max_taps(x, out, kernel, stride, padding, dilation):
            flat = (base_r + i * dilation[0]) * w_in + base_c + j * dilation[1]
            np.copyto(idx, np.broadcast_to(flat, out.shape), where=hit)
        return idx

    @staticmethod
    def max_pool2d_backward(g, x, out, state, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """Send each output gradient to the input position its max came from (summing overlaps)."""
        if isinstance(state, tuple):
            return _max_pool_pairs_backward(g, x.shape, state)
        bwd = cpu_kernels.typed_kernel("max_pool2d_bwd", g.dtype) if g.size else None
        if state is None and bwd is not None:  # (the argmax costs a compiled forward: still 2-10x faster)
            done = _compiled_pool(x, kernel, stride, padding, dilation)
            state = None if done is None else done[1]
        if state is not None and bwd is not None:
            gx, (n, c, h, w), (oh, ow) = np.empty(x.shape, g.dtype), x.shape, out.shape[2:]
            bwd(n * c, h * w, oh * ow, np.ascontiguousarray(g).ctypes.data, state.ctypes.data, gx.ctypes.data)
            cpu_kernels.launched("max_pool2d_bwd")
            return gx
        # (here state is None, or an argmax from kernels turned off since forward: NumPy finds the argmax again)
        n, c, h, w = x.shape
        ph, pw = padding
        dx = np.zeros((n, c, h + 2 * ph, w + 2 * pw), g.dtype)
        dwin = as_strided(dx, (n, c, *out.shape[2:], *kernel),
                          (dx.strides[0], dx.strides[1], dx.strides[2] * stride[0], dx.strides[3] * stride[1],
                           dx.strides[2] * dilation[0], dx.strides[3] * dilation[1]))
        disjoint = all(s_ >= d * (k - 1) + 1 for s_, d, k in zip(stride, dilation, kernel))
        for i, j, hit in NumpyNNPrimitives._first_max_taps(x, out, kernel, stride, padding, dilation):
            if disjoint:  # windows do not overlap: each tap writes its own pixels
                masked(g, hit, out=dwin[..., i, j])
            else:
                dwin[..., i, j] += masked(g, hit)
        return np.ascontiguousarray(dx[:, :, ph: ph + h, pw: pw + w]) if ph or pw else dx

    # ---- normalization ------------------------------------------------------------------------
    @staticmethod
    def layer_norm(x, axes: tuple, eps: float):
        """Normalize over the trailing ``axes``: (y, mean, rstd), the last two kept for backward.

        The means over each row are matrix-vector products with ones (BLAS): NumPy's reductions over a short last
        axis run an inner loop per row and took ~4x longer on (512, 64)."""
        n = math.prod(x.shape[a] for a in axes)
        keep = x.shape[:x.ndim - len(axes)] + (1,) * len(axes)
        k = cpu_kernels.row_kernel("layer_norm_rows", x)
        if k is not None:  # (kernel_src/cpu/rows.c: three passes over each row, kept in cache)
            xhat, mean, rstd = np.empty_like(x), np.empty(keep, x.dtype), np.empty(keep, x.dtype)
            k(x.size // n, n, x.ctypes.data, eps, xhat.ctypes.data, mean.ctypes.data, rstd.ctypes.data)
            cpu_kernels.launched("layer_norm_fwd")
            return xhat, mean, rstd
        if not n or not x.size:
            mean = x.mean(axis=axes, keepdims=True)
            xc = x - mean
            rstd = 1.0 / np.sqrt(np.mean(xc * xc, axis=axes, keepdims=True) + eps)
            return xc * rstd, mean, rstd.astype(x.dtype, copy=False)
        xc = x.reshape(-1, n)
        ones = np.ones(n, x.dtype)
        mean = np.matmul(xc, ones)
        mean /= n
        xc = xc - mean[:, None]
        var = np.matmul(xc * xc, ones)
        var /= n
        var += eps
        rstd = np.sqrt(var, out=var)
        np.divide(1, rstd, out=rstd)
        xc *= rstd[:, None]
        return xc.reshape(x.shape), mean.reshape(keep), rstd.reshape(keep)

    @staticmethod
    def layer_norm_backward(g, xhat, rstd, axes: tuple):
        """Gradient of the normalization itself (before any affine weight), from x-hat and 1/std; row means as
        matrix-vector products (see layer_norm)."""
        shape = np.broadcast_shapes(g.shape, xhat.shape)
        n = math.prod(shape[a] for a in axes)
        k = cpu_kernels.row_kernel("layer_norm_backward_rows", g, xhat)
        if k is not None and rstd.flags.c_contiguous and rstd.size * n == g.size:
            out = np.empty_like(g)
            k(g.size // n, n, g.ctypes.data, xhat.ctypes.data, rstd.ctypes.data, out.ctypes.data)
            cpu_kernels.launched("layer_norm_bwd")
            return out
        if not n or not xhat.size or shape != xhat.shape:
            m = np.mean(g, axis=axes, keepdims=True)
            mx = np.mean(g * xhat, axis=axes, keepdims=True)
            return (g - m - xhat * mx) * rstd
        g2, xh = np.broadcast_to(g, shape).reshape(-1, n), xhat.reshape(-1, n)
        ones = np.ones(n, xh.dtype)
        m = np.matmul(g2, ones)
        m /= n
        mx = np.matmul(g2 * xh, ones)
        mx /= n
        out = g2 - m[:, None]
        out -= xh * mx[:, None]
        out *= rstd.reshape(-1, 1)
        return out.reshape(shape)

    # ---- softmax cross-entropy ----------------------------------------------------------------
    @staticmethod
    def cross_entropy(logits, target, weight, ignore_index: int, smoothing: float):
        """Per-row loss for class indices, and the coefficients its backward needs.

        loss_i = sum_k a_ik * (-log p_ik) with a_ik = (1 - s) w[y_i] [k = y_i] + s/C w[k]
        (zero for rows whose target is ``ignore_index``). Returns (loss, log p, a, sum_k a_ik). Without label
        smoothing, on contiguous float32/float64 logits, one compiled kernel (``kernel_src/cpu/cross_entropy.c``)
        computes it, and returns in place of log p a :class:`CrossEntropyState` (log p and the targets) and no dense
        ``a``: its backward reads the targets instead.
        """
        if not smoothing:
            done = _cross_entropy_compiled(logits, target, weight, ignore_index)
            if done is not None:
                return done
        n, c = logits.shape
        m = logits.max(axis=1, keepdims=True)
        z = logits - m
        e = np.exp(z)
        # (row sums as a product with ones where BLAS has the dtype: NumPy's reduction over short rows is slower)
        total = np.matmul(e, np.ones(c, e.dtype))[:, None] if e.dtype.char in "fd" and e.size else \
            e.sum(axis=1, keepdims=True)
        logp = z - np.log(total)
        keep = target != ignore_index
        safe = np.where(keep, target, 0)
        rows = np.arange(n)
        a = np.zeros((n, c), logits.dtype)
        wy = np.ones(n, logits.dtype) if weight is None else weight[safe]
        a[rows, safe] = (1.0 - smoothing) * wy
        if smoothing:
            a += (smoothing / c) * (np.ones(c, logits.dtype) if weight is None else weight)
        if not keep.all():
            a *= keep[:, None]
        if smoothing:  # a class with a -inf logit and no weight adds 0, not nan
            loss = -np.where(a != 0, a * logp, 0).sum(axis=1)
            return loss.astype(logits.dtype, copy=False), logp, a, a.sum(axis=1)
        a_y = a[rows, safe]  # one coefficient per row: the same sums, without the dense pass
        loss = -np.where(a_y != 0, a_y * logp[rows, safe], 0)
        return loss.astype(logits.dtype, copy=False), logp, a, a_y

    @staticmethod
    def cross_entropy_coefs(logp, a, a_sum):
        """The dense coefficients (a, sum_k a) for a differentiable backward (here: what forward returned, or made
        from the targets the compiled forward kept)."""
        if isinstance(logp, CrossEntropyState):
            a = np.zeros(logp.logp.shape, logp.logp.dtype)
            a[np.arange(a.shape[0]), np.where(a_sum != 0, logp.target, 0)] = a_sum
        return a, a_sum

    @staticmethod
    def cross_entropy_backward(g, logp, a, a_sum):
        """d loss_i / d logits_ic = p_ic * sum_k a_ik - a_ic, scaled by the incoming g_i."""
        if isinstance(logp, CrossEntropyState):
            return logp.backward(g, a_sum)
        return (np.exp(logp) * a_sum[:, None] - a) * g[:, None]

    # ---- dropout ------------------------------------------------------------------------------
    @staticmethod
    def dropout_mask(gen, shape: tuple, p: float, dtype):
        """Keep each element with probability 1 - p, scaled by 1/(1 - p); drawn from ``gen``."""
        draws = gen.np_generator().random(shape, dtype=np.float32)
        scale = np.asarray(1.0 / (1.0 - p), dtype.np)
        k = cpu_kernels.typed_kernel("dropout_mask", scale.dtype) if draws.size >= _COMPILED_MIN else None
        if k is not None:  # (activation.c: the compare, the cast and the scale in one pass)
            mask = np.empty(shape, dtype.np)
            k(draws.size, draws.ctypes.data, p, scale, mask.ctypes.data)
            cpu_kernels.launched("dropout_mask")
            return mask
        return (draws >= p).astype(dtype.np) * scale

    # ---- optimizer updates (in place) ---------------------------------------------------------
    @staticmethod
    def adam_step(param, grad, exp_avg, exp_avg_sq, step: int, lr: float, beta1: float, beta2: float,
                  eps: float, weight_decay: float, decoupled: bool, max_exp_avg_sq=None) -> None:
        """One Adam/AdamW update, written into ``param``, ``exp_avg`` and ``exp_avg_sq``.

        The arithmetic follows PyTorch's single-tensor Adam so results agree to float rounding. Where every array is
        one contiguous float32 or float64 block, one compiled pass does the same operations (``kernel_src/cpu/optim.c``,
        equal bit for bit).
        """
        if _adam_compiled(param, grad, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay, decoupled,
                          max_exp_avg_sq):
            return
        if weight_decay:
            if decoupled:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        exp_avg += (grad - exp_avg) * (1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias1 = 1 - beta1 ** step
        bias2_sqrt = (1 - beta2 ** step) ** 0.5
        second = exp_avg_sq
        if max_exp_avg_sq is not None:  # AMSGrad keeps the running maximum of the second moment
            np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            second = max_exp_avg_sq
        denom = np.sqrt(second) / bias2_sqrt + eps
        param -= (lr / bias1) * exp_avg / denom


def _adam_compiled(param, grad, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay, decoupled,
                   max_exp_avg_sq) -> bool:
    """Run ``adam_step`` as the compiled kernel where it applies (True), else leave it to NumPy (False)."""
    arrays = (param, grad, exp_avg, exp_avg_sq) + (() if max_exp_avg_sq is None else (max_exp_avg_sq,))
    dt = param.dtype
    if dt.char not in "fd" or not all(a.dtype == dt and a.flags.c_contiguous and a.shape == param.shape
                                      for a in arrays):
        return False
    k = cpu_kernels.kernel("adam_step_f32" if dt.char == "f" else "adam_step_f64")
    if k is None:
        return False
    # the scalars as NumPy would use them: combined in Python's float64, then (float32 arrays) rounded to float32
    k(param.size, param.ctypes.data, grad.ctypes.data, exp_avg.ctypes.data, exp_avg_sq.ctypes.data,
      None if max_exp_avg_sq is None else max_exp_avg_sq.ctypes.data, 1 - beta1, beta2, 1 - beta2,
      weight_decay, 1 - lr * weight_decay, lr / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5, eps,
      int(bool(decoupled)))
    cpu_kernels.launched("adam_step")
    return True


class CrossEntropyState:
    """What the compiled cross-entropy keeps for its backward: the log-probabilities and the class indices."""

    __slots__ = ("logp", "target", "kernel")

    def __init__(self, logp, target, kernel):
        self.logp, self.target, self.kernel = logp, target, kernel

    def backward(self, g, a_y):
        rows, cols = self.logp.shape
        g = np.asarray(g, self.logp.dtype)
        stride = 0 if g.ndim == 0 or g.strides == (0,) else 1
        g = np.ascontiguousarray(g.reshape(-1)[:1] if stride == 0 else g)
        out = np.empty_like(self.logp)
        self.kernel(rows, cols, self.logp.ctypes.data, self.target.ctypes.data, a_y.ctypes.data, g.ctypes.data,
                    stride, out.ctypes.data)
        cpu_kernels.launched("cross_entropy_bwd")
        return out


def _cross_entropy_compiled(logits, target, weight, ignore_index):
    """``cross_entropy`` without smoothing by the compiled kernels, or None where they do not apply."""
    dt = logits.dtype
    if dt.char not in "fd" or logits.ndim != 2 or not logits.size or (weight is not None and weight.dtype != dt):
        return None
    sfx = "f32" if dt.char == "f" else "f64"
    fwd, bwd = cpu_kernels.kernel(f"cross_entropy_fwd_{sfx}"), cpu_kernels.kernel(f"cross_entropy_bwd_{sfx}")
    if fwd is None or bwd is None:
        return None
    rows, cols = logits.shape
    x = np.ascontiguousarray(logits)
    t = np.ascontiguousarray(target, dtype=np.int64)
    w = None if weight is None else np.ascontiguousarray(weight)
    loss, logp, a_y = np.empty(rows, dt), np.empty_like(x), np.empty(rows, dt)
    fwd(rows, cols, x.ctypes.data, t.ctypes.data, None if w is None else w.ctypes.data, int(ignore_index),
        loss.ctypes.data, logp.ctypes.data, a_y.ctypes.data)
    cpu_kernels.launched("cross_entropy_fwd")
    return loss, CrossEntropyState(logp, t, bwd), None, a_y
