"""Pooling: the fused max-pool node and its backward, and ``tl.nn.functional``'s max/avg pooling in 1-D, 2-D
and 3-D (padding, dilation, ``ceil_mode``, ``count_include_pad``, ``divisor_override``, ``return_indices``),
adaptive average and max pooling, and max unpooling.

Max pooling is the fused :class:`MaxPool2d` node (1-D pooling is 2-D pooling of height 1); ``ceil_mode``'s extra
last window reads a -inf edge added at the end. Its backward is a fused node of its own
(:class:`MaxPool2dBackward`) whose own ``backward`` is written with Tensor ops. Average pooling is im2col and a mean
over the taps, divided as torch divides (the taps inside the padded input, or only the real ones). Adaptive max
pooling gathers each window's taps (windows of unequal size repeat their last tap) and takes the max, or is plain
max pooling when the windows tile the input. Max unpooling scatters into zeros.

3-D pooling is 2-D pooling twice, because a box window is separable: first over (H, W) for every depth slice, then
over (D, 1) of that result (depth as the height of a 2-D pooling whose width is the OH*OW positions). For max pooling
the first winner in row-major order, and a window's last NaN, stay the ones torch picks: each pass picks them within
its own dims. The divisor of average pooling is the product of the per-dim window lengths, as torch counts it.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> x = tl.arange(10.0).reshape(1, 1, 10)
>>> F.max_pool1d(x, 3, ceil_mode=True)
tensor([[[2., 5., 8., 9.]]])
>>> F.avg_pool1d(x, 4, padding=1, count_include_pad=False)
tensor([[[1.0000, 4.5000, 8.0000]]])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ._nn_args import _check_tensor_at, _const, _is_int, _ntuple
from .conv import Im2Col
from .movement import pad as _constant_pad

if TYPE_CHECKING:  # (annotations only: the Tensor class sits above the ops)
    from ..tensor import Tensor

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d",
           "lp_pool3d", "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class MaxPool2d(Function):
    """Max over windows. Backward finds each window's (first) maximum again from the saved input
    and output, which is cheaper than keeping an index per output element, unless the backend kept
    a cheaper record of the winners (``state``, opaque here)."""

    __slots__ = ("kernel", "stride", "padding", "dilation", "state", "out")

    def forward(self, x, kernel, stride, padding, dilation):
        self.kernel, self.stride, self.padding, self.dilation = kernel, stride, padding, dilation
        be = x._dev.backend
        out, self.state = be.max_pool2d(x._x, kernel, stride, padding, dilation)
        if _grad_mode.enabled and x.requires_grad:
            # Backward finds the winners from the input and the maxima: keep a private copy of the maxima (a
            # quarter of the input for 2x2 windows), as torch keeps its indices, so the output itself may be
            # written in place before backward.
            self.save_for_backward(x)
            self.out = be.copy(out)
        return out

    def backward(self, g):
        (x,) = self.saved_tensors
        return MaxPool2dBackward.apply(g, x, self), None, None, None, None

    def release(self) -> None:
        super().release()
        self.state = self.out = None


class MaxPool2dBackward(Function):
    """Each output gradient sent to the input position its window's maximum came from (overlaps summed), as one
    fused kernel. Its own gradient picks ``gg`` at those positions; its derivative in ``x`` is zero (as in
    PyTorch: the winners are constant almost everywhere)."""

    __slots__ = ("kernel", "stride", "padding", "dilation", "out")

    def forward(self, g, x, pool: MaxPool2d):
        self.kernel, self.stride, self.padding, self.dilation = pool.kernel, pool.stride, pool.padding, pool.dilation
        self.out = pool.out
        if _grad_mode.enabled:
            self.save_for_backward(x)
        return g._dev.backend.max_pool2d_backward(g._x, x._x, pool.out, pool.state, pool.kernel, pool.stride,
                                                  pool.padding, pool.dilation)

    def backward(self, gg):
        (x,) = self.saved_tensors
        be = gg._dev.backend
        idx = gg._wrap(be.max_pool2d_indices(x._x, self.out, self.kernel, self.stride, self.padding,
                                               self.dilation), gg._dev)
        picked = gg.flatten(2).gather(2, idx.flatten(2)).reshape(idx.shape)
        return picked, gg.new_zeros(x.shape), None


# ---- argument helpers -----------------------------------------------------------------------------------
def _pool_input(input, nd: int, fn: str):
    """(N, C, *spatial) or unbatched (C, *spatial) -> a 4-D tensor (5-D for 3-D pooling), and what to undo at the
    end."""
    _check_tensor_at(input, fn)
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 3:
            raise RuntimeError(f"{fn}: non-empty 4D or 5D (batch mode) tensor expected for input, got shape "
                               f"{input.shape}")
        if nd == 1:
            raise RuntimeError(f"{fn}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                               f"input, but got:{list(input.shape)}")
        raise RuntimeError(f"{fn}: non-empty 3D or 4D (batch mode) tensor expected for input, got shape "
                           f"{input.shape}")
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    if nd == 1:
        x = x.unsqueeze(2)
    if any(s == 0 for s in x.shape[1:]):
        raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive length, but input has a "
                           f"shape of {list(input.shape)}")
    return x, unbatched


def _pool_output(out, nd: int, unbatched: bool):
    """Undo ``_pool_input``: drop 1-D pooling's height and an unbatched input's batch dim."""
    if nd == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def _pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """torch's pooling_output_shape: floor or ceil, and in ceil mode no window that starts past the input."""
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_args(kernel_size, stride, padding, dilation, nd: int, fn: str):
    k = _ntuple(kernel_size, nd, "kernel_size", fn)
    empty_stride = stride is None or (isinstance(stride, (tuple, list)) and not stride)
    s = k if empty_stride else _ntuple(stride, nd, "stride", fn)
    p, d = _ntuple(padding, nd, "padding", fn), _ntuple(dilation, nd, "dilation", fn)
    if min(k) < 1:
        raise RuntimeError(f"{fn}: kernel_size must be greater than zero, but got {k}")
    if min(s) < 1:
        raise RuntimeError(f"{fn}: stride must be greater than zero, but got {s}")
    if min(d) < 1:
        raise RuntimeError(f"{fn}: dilation must be greater than zero, but got {d}")
    if min(p) < 0:
        raise RuntimeError(f"{fn}: pad must be non-negative, but got pad: {p}")
    for pi, ki, di in zip(p, k, d):
        if pi > ((ki - 1) * di + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                               f"kernel_size={ki} and dilation={di} ({fn}: padding {p} must be at most half of "
                               f"the kernel size {k})")
    if nd == 1:  # as a 2-D pooling of height 1
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    return k, s, p, d


def _sizes(x, k, s, p, d, ceil_mode: bool, nd: int, fn: str):
    """The output size of every spatial dim of ``x``, then how far ceil mode's last window reaches past the padded
    input, per dim (``_sizes(...)[-1]``)."""
    spatial = x.shape[2:]
    outs = tuple(_pool_out_size(*a, ceil_mode) for a in zip(spatial, k, s, p, d))
    if min(outs) <= 0:
        c, lo = x.shape[1], len(spatial) - nd
        given, calc = "x".join(map(str, (c,) + spatial[lo:])), "x".join(map(str, (c,) + outs[lo:]))
        raise RuntimeError(f"Given input size: ({given}). Calculated output size: ({calc}). Output size is too small "
                           f"({fn}: input of spatial size {'x'.join(map(str, spatial))} is too small for kernel "
                           f"{k[lo:]}, padding {p[lo:]}, dilation {d[lo:]})")
    # in ceil mode the last window may reach past the padded input: how far, per dim
    extra = tuple(max(0, (o - 1) * si + di * (ki - 1) + 1 - (n + 2 * pi))
                  for o, si, di, ki, n, pi in zip(outs, s, d, k, spatial, p))
    return (*outs, extra)


# ---- max pooling ----------------------------------------------------------------------------------
def _max_pool2d(x, k, s, p, d, extra, return_indices: bool):
    """The fused 2-D max pooling of a 4-D ``x``, widened with -inf by ``extra`` at the ends (ceil mode); the indices
    (or None) are flat (h * W + w) over ``x`` itself."""
    w = x.shape[3]
    if any(extra):
        x = _constant_pad(x, (0, extra[1], 0, extra[0]), value=float("-inf"))
    pooled = MaxPool2d.apply(x, k, s, p, d)
    if not return_indices:
        return pooled, None
    idx = x._wrap(x._dev.backend.max_pool2d_indices(x._x, pooled._x, k, s, p, d), x._dev)
    if extra[1]:  # flat indices of the widened input -> of the input
        wp = w + extra[1]
        idx = idx // wp * w + idx % wp
    return pooled, idx


def _then_depth(x, first, pool2d):
    """3-D pooling of ``x`` (N, C, D, H, W) as two 2-D ones: ``first`` = (out, idx) of the pooling of (N, C*D, H, W)
    over (H, W); ``pool2d(t)`` pools (N, C, D, OH*OW) over depth. Returns (out, flat d * H * W + h * W + w indices
    or None)."""
    n, c, dd, h, w = x.shape
    y, idx_hw = first
    oh, ow = y.shape[2:]
    out, idx_d = pool2d(y.reshape(n, c, dd, oh * ow))  # idx_d: d * (OH*OW) + j, the column j its own
    od = out.shape[2]
    out = out.reshape(n, c, od, oh, ow)
    if idx_d is None:
        return out, None
    depth = idx_d // (oh * ow)
    hw = idx_hw.reshape(n, c, dd, oh * ow).gather(2, depth)  # the (H, W) winner in the depth slice that won
    return out, (depth * (h * w) + hw).reshape(n, c, od, oh, ow)


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd: int, fn: str):
    x, unbatched = _pool_input(input, nd, fn)
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, nd, fn)
    extra = _sizes(x, k, s, p, d, ceil_mode, nd, fn)[-1]
    dtype = x.dtype
    if dtype is dtypes.bool_:
        raise NotImplementedError(f"{fn}: \"max_pool{max(nd, 2)}d\" not implemented for 'Bool'")
    if not dtype.is_floating_point:  # integers pool exactly as float64 (|values| < 2**53) and come back
        x = x.to(dtypes.float64)
    if nd == 3:
        n, c, dd, h, w = x.shape
        first = _max_pool2d(x.reshape(n, c * dd, h, w), k[1:], s[1:], p[1:], d[1:], extra[1:], return_indices)
        out, idx = _then_depth(x, first, lambda t: _max_pool2d(t, (k[0], 1), (s[0], 1), (p[0], 0), (d[0], 1),
                                                               (extra[0], 0), return_indices))
    else:
        out, idx = _max_pool2d(x, k, s, p, d, extra, return_indices)
    if not dtype.is_floating_point:
        out = out.to(dtype)
    if not return_indices:
        return _pool_output(out, nd, unbatched)
    return _pool_output(out, nd, unbatched), _pool_output(idx, nd, unbatched)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over each window of (N, C, L) or (C, L); with ``return_indices`` also each maximum's position in L."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d")


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over each window of (N, C, H, W) or (C, H, W); with ``return_indices`` also the flat (h * W + w)
    input index of each maximum. Ties go to the first tap in row-major order, a window holding NaN to its last
    NaN, as in torch."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over each window of (N, C, D, H, W) or (C, D, H, W); with ``return_indices`` also the flat
    (d * H * W + h * W + w) input index of each maximum. Two fused 2-D poolings (see the module's docstring)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3, "max_pool3d")


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# ---- average pooling ------------------------------------------------------------------------------
def _divisor(size: int, out: int, k: int, s: int, p: int, include_pad: bool):
    """Per output position along one dim: the window's length inside the padded input (``include_pad``) or inside
    the input itself, as torch's avg_pool kernels count it."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, size + p)
    pool = end - start
    real = np.minimum(end, size) - np.maximum(start, 0)
    return pool if include_pad else real


def _window_sums(x, k, s, p):
    """Sums over the windows of the last two dims of a 4-D ``x``: im2col of every channel plane, summed over taps."""
    n, c, h, w = x.shape
    cols = Im2Col.apply(x.reshape(n * c, 1, h, w), k, s, p, (1, 1))  # (N*C, KH*KW, OH*OW)
    oh, ow = (_pool_out_size(*a, False) for a in zip((h, w), k, s, p, (1, 1)))
    return cols.sum(1).reshape(n, c, oh, ow)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd, fn):
    x, unbatched = _pool_input(input, nd, fn)
    k, s, p, d = _pool_args(kernel_size, stride, padding, 1, nd, fn)
    if divisor_override is not None and (not _is_int(divisor_override) or divisor_override == 0):
        raise RuntimeError(f"{fn}: divisor must be not zero, got divisor_override={divisor_override!r}")
    *outs, extra = _sizes(x, k, s, p, d, ceil_mode, nd, fn)
    dtype = x.dtype
    if dtype is dtypes.bool_:
        raise NotImplementedError(f"{fn}: \"avg_pool{max(nd, 2)}d\" not implemented for 'Bool'")
    if not dtype.is_floating_point:  # torch divides integer sums with truncation
        x = x.to(dtypes.float64)
    spatial = x.shape[2:]
    n, c = x.shape[:2]
    if any(extra):
        widths = []
        for e in reversed(extra):
            widths += [0, e]
        x = _constant_pad(x, tuple(widths))
    if nd == 3:  # (H, W) windows of every depth slice, then (D, 1) windows of those sums
        dp, hp, wp = x.shape[2:]
        y = _window_sums(x.reshape(n, c * dp, hp, wp), k[1:], s[1:], p[1:])
        total = _window_sums(y.reshape(n, c, dp, -1), (k[0], 1), (s[0], 1), (p[0], 0))
    else:
        total = _window_sums(x, k, s, p)
    total = total.reshape(n, c, -1)
    if divisor_override is not None:
        out = total / divisor_override
    elif not any(extra) and (count_include_pad or not any(p)):
        out = total / int(np.prod(k))
    else:
        div = np.ones(1)
        for a in zip(spatial, outs, k, s, p):
            div = np.multiply.outer(div, _divisor(*a, count_include_pad))
        out = total / _const(div.reshape(-1).astype(x.dtype.np), x)
    out = out.reshape(n, c, *outs)
    if not dtype.is_floating_point:
        out = out.trunc().to(dtype)
    return _pool_output(out, nd, unbatched)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Mean over each window of (N, C, L) or (C, L)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d")


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over each window of (N, C, H, W) or (C, H, W): im2col per channel plane, a sum over the taps, then a
    division by the window's size (with the padding, or without it), or by ``divisor_override``."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
                     "avg_pool2d")


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over each window of (N, C, D, H, W) or (C, D, H, W): window sums over (H, W), then over depth, divided
    as ``avg_pool2d`` divides (the divisor the product of the per-dim window lengths)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3,
                     "avg_pool3d")


# ---- adaptive pooling -----------------------------------------------------------------------------
def _adaptive_sizes(x, output_size, nd: int, fn: str) -> tuple:
    spatial = x.shape[-nd:]
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != nd:
            raise ValueError(f"{fn}: output_size must be an int or a tuple of {nd}, got {output_size!r}")
        sizes = tuple(sp if o is None else o for sp, o in zip(spatial, output_size))
    else:
        sizes = (output_size,) * nd
    sizes = _ntuple(sizes, nd, "output_size", fn)
    if min(sizes) < 0:
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received "
                           f"{list(sizes)}")
    if min(sizes) == 0:
        raise RuntimeError(f"{fn}: output_size must be positive, got {sizes}")
    return (1,) + sizes if nd == 1 else sizes


def _adaptive_matrix(size: int, out: int, like) -> Tensor:
    """Row i averages input positions [floor(i*size/out), ceil((i+1)*size/out)), as PyTorch does."""
    m = np.zeros((out, size), like.dtype.np)
    for i in range(out):
        lo, hi = (i * size) // out, -(-((i + 1) * size) // out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return _const(m, like)


def _adaptive_avg(input, output_size, nd: int, fn: str):
    x, unbatched = _pool_input(input, nd, fn)
    sizes = _adaptive_sizes(x, output_size, nd, fn)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{fn}\" not implemented for '{x.dtype.name}' (expected a floating point "
                                  f"input)")
    if nd == 3:  # one averaging matrix per dim whose size changes
        if sizes == (1, 1, 1):
            out = x.mean((2, 3, 4), keepdim=True)
        else:
            out = x
            for dim, (n_in, n_out) in enumerate(zip(x.shape[2:], sizes), 2):
                if n_in != n_out:
                    out = (out.movedim(dim, -1) @ _adaptive_matrix(n_in, n_out, x).T).movedim(-1, dim)
        return _pool_output(out, nd, unbatched)
    oh, ow = sizes
    h, w = x.shape[2:]
    if (oh, ow) == (1, 1):
        out = x.mean((2, 3), keepdim=True)
    elif oh == h:
        out = x @ _adaptive_matrix(w, ow, x).T
    else:
        out = _adaptive_matrix(h, oh, x) @ x @ _adaptive_matrix(w, ow, x).T
    return _pool_output(out, nd, unbatched)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Average-pool (N, C, L) or (C, L) to length ``output_size`` (one averaging matrix)."""
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average-pool to a fixed ``output_size`` (an int, or a pair whose None entries keep the input's size): two
    small averaging matrices, left and right."""
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average-pool (N, C, D, H, W) or (C, D, H, W) to a fixed ``output_size`` (an int, or a triple whose None
    entries keep the input's size): one small averaging matrix per dim."""
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_taps(size: int, out: int):
    """(out, kmax) input positions of each adaptive window, a short window repeating its last position."""
    i = np.arange(out)
    start, end = (i * size) // out, -(-((i + 1) * size) // out)
    kmax = int((end - start).max())
    return np.minimum(start[:, None] + np.arange(kmax)[None], end[:, None] - 1).astype(np.int64)


def _adaptive_max(input, output_size, return_indices: bool, nd: int, fn: str):
    x, unbatched = _pool_input(input, nd, fn)
    sizes = _adaptive_sizes(x, output_size, nd, fn)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{fn}\" not implemented for '{x.dtype.name}' (expected a floating point "
                                  f"input)")
    if nd == 3:
        n, c, dd, h, w = x.shape
        first = _adaptive_max2d(x.reshape(n, c * dd, h, w), sizes[1:], return_indices)
        out, idx = _then_depth(x, first, lambda t: _adaptive_max2d(t, (sizes[0], t.shape[3]), return_indices))
    else:
        out, idx = _adaptive_max2d(x, sizes, return_indices)
    if not return_indices:
        return _pool_output(out, nd, unbatched)
    return _pool_output(out, nd, unbatched), _pool_output(idx, nd, unbatched)


def _adaptive_max2d(x, sizes: tuple, return_indices: bool):
    """Adaptive max pooling of a 4-D ``x`` to ``sizes``: (out, flat h * W + w indices or None)."""
    oh, ow = sizes
    n, c, h, w = x.shape
    if h % oh == 0 and w % ow == 0:  # equal windows that tile the input: plain max pooling
        k = (h // oh, w // ow)
        out = MaxPool2d.apply(x, k, k, (0, 0), (1, 1))
        idx = None
        if return_indices:
            idx = x._wrap(x._dev.backend.max_pool2d_indices(x._x, out._x, k, k, (0, 0), (1, 1)), x._dev)
    else:
        rows, cols = _adaptive_taps(h, oh), _adaptive_taps(w, ow)
        kh, kw = rows.shape[1], cols.shape[1]
        taps = x.index_select(2, _const(rows.reshape(-1), x)).index_select(3, _const(cols.reshape(-1), x))
        taps = taps.reshape(n, c, oh, kh, ow, kw).permute(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, kh * kw)
        out, which = taps.max(-1)
        idx = None
        if return_indices:  # window tap -> flat input index h * W + w
            flat = (rows[:, None, :, None] * w + cols[None, :, None, :]).reshape(oh, ow, kh * kw)
            table = _const(flat, x).expand(n, c, oh, ow, kh * kw)
            idx = table.gather(4, which.unsqueeze(-1)).squeeze(-1)
    return out, idx


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max-pool (N, C, L) or (C, L) to length ``output_size``; with ``return_indices`` also each maximum's
    position."""
    return _adaptive_max(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max-pool to a fixed ``output_size``; with ``return_indices`` also the flat (h * W + w) input index of each
    maximum."""
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max-pool (N, C, D, H, W) or (C, D, H, W) to a fixed ``output_size``; with ``return_indices`` also the flat
    (d * H * W + h * W + w) input index of each maximum."""
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    return adaptive_max_pool3d(input, output_size, True)


# ---- max unpooling --------------------------------------------------------------------------------
def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd: int, fn: str):
    _check_tensor_at(input, fn)
    _check_tensor_at(indices, fn, "indices")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}: Expected {nd + 1}D or {nd + 2}D input, got shape {input.shape}")
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    if indices.dtype is not dtypes.int64:
        raise RuntimeError(f"{fn}: elements in indices should be type int64 but got: {indices.dtype.name}")
    k = _ntuple(kernel_size, nd, "kernel_size", fn)
    s = k if stride is None else _ntuple(stride, nd, "stride", fn)
    p = _ntuple(padding, nd, "padding", fn)
    spatial = input.shape[-nd:]
    default = tuple((i - 1) * si - 2 * pi + ki for i, si, pi, ki in zip(spatial, s, p, k))
    if output_size is None:
        size = default
    else:
        size = tuple(output_size)
        if len(size) == nd + 2 or (len(size) == nd + 1 and input.ndim == nd + 1):
            size = size[-nd:]
        if len(size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for o, dflt, si in zip(size, default, s):
            if not dflt - si < o < dflt + si:
                raise ValueError(f"invalid output_size \"{list(size)}\" (dim {size.index(o)} must be between "
                                 f"{dflt - si} and {dflt + si})")
    numel = int(np.prod(size))
    lead = input.shape[:-nd]
    x = input.reshape(*lead, -1)
    ix = indices.reshape(*lead, -1)
    if ix.numel():
        lo, hi = int(ix.min().item()), int(ix.max().item())
        if lo < 0 or hi >= numel:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(map(str, size))})")
    out = x.new_zeros(*lead, numel).scatter(-1, ix, x)
    return out.reshape(*lead, *size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of ``max_pool1d``: each value put back at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of ``max_pool2d``: each value put back at its flat (h * W + w) index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of ``max_pool3d``: each value put back at its flat (d * H * W + h * W + w) index, zeros
    elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


# ---- power-average pooling ----------------------------------------------------------------------------
def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode: bool, nd: int, fn: str):
    """torch's composition: ``(sign(a) * relu(|a|) * prod(k)) ** (1/p)`` with ``a`` the average of ``x ** p``."""
    k = _ntuple(kernel_size, nd, "kernel_size", fn)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    out = pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(int(np.prod(k))).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: int | float, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    """The p-norm of each window, ``(sum x**p) ** (1/p)`` (max pooling at p = inf, sum pooling at p = 1)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(input: Tensor, norm_type: int | float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """The p-norm of each 2-D window."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")


def lp_pool3d(input: Tensor, norm_type: int | float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """The p-norm of each 3-D window."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, "lp_pool3d")


# ---- fractional max pooling ------------------------------------------------------------------------------
def _intervals(sample: float, in_size: int, out_size: int, k: int, np_dtype) -> np.ndarray:
    """torch's pseudo-random window starts: ``int((i + u) * alpha) - int(u * alpha)``, the last at the end."""
    seq = np.empty(out_size, dtype=np.int64)
    if out_size > 1:
        alpha = np_dtype.type(in_size - k) / np_dtype.type(out_size - 1)
        u = np_dtype.type(sample)
        for i in range(out_size - 1):
            seq[i] = int(np_dtype.type(i + u) * alpha) - int(u * alpha)
    seq[out_size - 1] = in_size - k
    return seq


def _fractional(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, nd: int, fn: str):
    x, unbatched = _pool_input(input, nd, fn)
    k = _ntuple(kernel_size, nd, "kernel_size", fn)
    spatial = tuple(x.shape[2:])
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
        if len(ratio) == 1:
            ratio = tuple(ratio) * nd
        outs = tuple(int(s * float(r)) for s, r in zip(spatial, ratio))
    else:
        outs = _ntuple(output_size, nd, "output_size", fn)
    for o, kk, s in zip(outs, k, spatial):
        if o + kk - 1 > s:
            raise RuntimeError(f"{fn}(): pool size {kk} too large relative to input size {s} for output size {o} "
                               f"(output_size + kernel_size - 1 must be at most the input size)")
    n, c = x.shape[:2]
    if _random_samples is None:
        _random_samples = x.new_empty((n, c, nd)).uniform_()
    samples = _random_samples.detach().numpy(force=True)
    if samples.shape != (n, c, nd):
        raise RuntimeError(f"{fn}(): expect _random_samples to be of shape {(n, c, nd)}, got {samples.shape}")
    # torch's sample order: width first for 2-D; time, height, width for 3-D
    order = (1, 0) if nd == 2 else (0, 1, 2)
    taps = np.stack(np.meshgrid(*[np.arange(kk) for kk in k], indexing="ij"), -1).reshape(-1, nd)
    strides = np.cumprod((1,) + spatial[:0:-1])[::-1]  # row-major strides of the spatial dims
    index = np.empty((n, c, int(np.prod(outs)), len(taps)), dtype=np.int64)
    dtype = np.dtype(x.dtype.np) if x.dtype.is_floating_point else np.dtype(np.float32)
    for b in range(n):
        for ch in range(c):
            starts = [_intervals(samples[b, ch, order[d]], spatial[d], outs[d], k[d], dtype) for d in range(nd)]
            grid = np.stack(np.meshgrid(*starts, indexing="ij"), -1).reshape(-1, 1, nd) + taps[None]
            index[b, ch] = (grid * strides).sum(-1)
    flat = x.reshape(n, c, -1)
    cand_index = _const(index.reshape(n, c, -1), flat)
    cand = flat.gather(2, cand_index).reshape(n, c, -1, len(taps))
    out, which = cand.max(-1)
    out = out.reshape(n, c, *outs)
    out = out.squeeze(0) if unbatched else out
    if not return_indices:
        return out
    idx = cand_index.reshape(n, c, -1, len(taps)).gather(3, which.unsqueeze(-1)).reshape(n, c, *outs)
    return out, (idx.squeeze(0) if unbatched else idx)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples: Tensor | None = None):
    """Max over pseudo-random (overlapping) windows that shrink (N, C, H, W) to ``output_size`` (or to
    ``output_ratio`` of it); returns the output and the flat indices of the maxima."""
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 2,
                       "fractional_max_pool2d")


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Fractional max pooling (Graham, 2014) of (N, C, H, W) or (C, H, W); the indices too if ``return_indices``."""
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2,
                       "fractional_max_pool2d")


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples: Tensor | None = None):
    """``fractional_max_pool2d_with_indices`` over (N, C, T, H, W)."""
    return _fractional(input, kernel_size, output_size, output_ratio, True, _random_samples, 3,
                       "fractional_max_pool3d")


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W)."""
    return _fractional(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3,
                       "fractional_max_pool3d")
