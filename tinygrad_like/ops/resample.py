"""Resampling for ``tl.nn.functional``: ``interpolate`` (and its old names ``upsample``, ``upsample_nearest``,
``upsample_bilinear``), ``pixel_shuffle`` and ``pixel_unshuffle``.

``interpolate`` works one spatial dim at a time, as torch's CPU kernels do: every mode is separable. Nearest modes
pick one input position per output position (``index_select``); linear modes mix two neighbours and ``bicubic``
four, with weights computed exactly as torch computes them (in float32 for float32 tensors); ``area`` averages the
adaptive windows (one small matrix per dim). Gradients are the adjoints of those selections, so they sum where an
input position feeds several outputs. No node of its own: every mode is a composition of Tensor ops.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> F.interpolate(tl.tensor([[[1.0, 2.0]]]), scale_factor=2, mode="linear")
tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
>>> F.pixel_shuffle(tl.arange(8.0).reshape(1, 4, 1, 2), 2).shape
tl.Size([1, 1, 2, 4])
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ._nn_args import _check_tensor_at, _const, _is_int

if TYPE_CHECKING:  # (annotations only: the Tensor class sits above the ops)
    from ..tensor import Tensor

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
           "channel_shuffle", "native_channel_shuffle"]

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}


# ---- source positions, as torch's upsampling kernels compute them ----------------------------------------
def _scale(in_size: int, out_size: int, align_corners: bool, scale, ft):
    """torch's area_pixel_compute_scale / compute_scales_value, in the float type ``ft`` of the kernel."""
    if align_corners:
        return ft(in_size - 1) / ft(out_size - 1) if out_size > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(in_size) / ft(out_size)


def _nearest_index(in_size: int, out_size: int, scale, exact: bool):
    dst = np.arange(out_size)
    if not exact:
        if out_size == in_size:
            return None
        if out_size == 2 * in_size:
            return dst >> 1
    s = _scale(in_size, out_size, False, scale, np.float32)  # the nearest kernels compute in float
    if exact:  # floorf((dst + 0.5) * scale): a double product, rounded to float, then floored
        src = np.floor(((dst + 0.5) * np.float64(s)).astype(np.float32))
    else:
        src = np.floor(dst.astype(np.float32) * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def _linear_taps(in_size: int, out_size: int, align_corners: bool, scale, ft):
    """(i0, i1, w0, w1) per output position, or None when the sizes are equal (torch copies)."""
    if out_size == in_size:
        return None
    s = _scale(in_size, out_size, align_corners, scale, ft)
    dst = np.arange(out_size).astype(ft)
    src = s * dst if align_corners else np.maximum(s * (dst + ft(0.5)) - ft(0.5), ft(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    w1 = np.clip(src - i0.astype(ft), ft(0), ft(1)).astype(ft)
    i1 = i0 + (i0 < in_size - 1)
    return (i0, i1), (ft(1) - w1, w1)


_A = -0.75  # torch's bicubic constant


def _cubic_taps(in_size: int, out_size: int, align_corners: bool, scale, ft):
    s = _scale(in_size, out_size, align_corners, scale, ft)
    dst = np.arange(out_size).astype(ft)
    src = s * dst if align_corners else s * (dst + ft(0.5)) - ft(0.5)
    i = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    t = np.clip(src - i.astype(ft), ft(0), ft(1)).astype(ft)
    a = ft(_A)

    def conv1(x):
        return ((a + ft(2)) * x - (a + ft(3))) * x * x + ft(1)

    def conv2(x):
        return ((a * x - ft(5) * a) * x + ft(8) * a) * x - ft(4) * a

    weights = (conv2(t + ft(1)), conv1(t), conv1(ft(1) - t), conv2(ft(2) - t))
    index = tuple(np.clip(i - 1 + j, 0, in_size - 1) for j in range(4))
    return index, weights


def _along(x: Tensor, dim: int, index, weights):
    """sum_j weights[j] * x.index_select(dim, index[j]), the weights broadcast along ``dim``."""
    shape = (-1,) + (1,) * (x.ndim - 1 - dim)
    out = None
    for idx, w in zip(index, weights):
        term = x.index_select(dim, _const(idx, x)) * _const(np.ascontiguousarray(w, x.dtype.np), x).reshape(shape)
        out = term if out is None else out + term
    return out


def _area_matrix(size: int, out: int, like) -> Tensor:
    m = np.zeros((out, size), like.dtype.np)
    for i in range(out):
        lo, hi = (i * size) // out, -(-((i + 1) * size) // out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return _const(m, like)


# ---- interpolate ----------------------------------------------------------------------------------------
def _output_sizes(input, size, scale_factor, recompute_scale_factor, mode):
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 f"Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 f"(o1, o2, ...,oK) format.")
            if not all(_is_int(s) for s in size):
                raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}")
            out = [int(s) for s in size]
        else:
            if not _is_int(size):
                raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {type(size)}")
            out = [int(size)] * dim
    elif scale_factor is not None:
        out = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of "
                                 f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                                 f"format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out is None:
        recompute_scale_factor = True
    if out is None:  # floor(in * scale) in double, as torch's compute_output_size
        out = [int(math.floor(float(n) * s)) for n, s in zip(input.shape[2:], scales)]
    if recompute_scale_factor:
        scales = None
    if scales is None:
        scales = [None] * dim
    return out, scales


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize (N, C, L), (N, C, H, W) or (N, C, D, H, W) to ``size`` or by ``scale_factor``, as torch's.

    ``mode``: 'nearest' (torch's legacy floor rule), 'nearest-exact' (pixel centres), 'linear' (3-D),
    'bilinear' (4-D), 'bicubic' (4-D), 'trilinear' (5-D), 'area' (adaptive average). ``align_corners`` (linear
    modes only) maps the corner pixels' centres onto each other instead of their outer edges. ``antialias`` is not
    supported."""
    _check_tensor_at(input, "interpolate")
    if mode not in _MODES:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear "
                             "| bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    need = _LINEAR.get(mode)
    if need is not None and input.ndim != need:
        want = {3: "linear", 4: "bilinear", 5: "trilinear"}
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {need}D input"
                                  + ("" if mode == "bicubic" else f" (use mode='{want[input.ndim]}')"))
    out_sizes, scales = _output_sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported (resize without it, or blur first)")
    if min(out_sizes) <= 0 or 0 in input.shape[2:]:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"{tuple(input.shape[2:])} output {tuple(out_sizes)}")
    if not input.dtype.is_floating_point and mode != "nearest" and mode != "nearest-exact":
        raise NotImplementedError(f"\"upsample_{mode}\" not implemented for '{input.dtype.name}'")
    ft = np.float64 if input.dtype is dtypes.float64 else np.float32
    x = input
    for i, (n_in, n_out, sc) in enumerate(zip(input.shape[2:], out_sizes, scales)):
        d = 2 + i
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_index(n_in, n_out, sc, mode == "nearest-exact")
            if idx is not None:
                x = x.index_select(d, _const(idx, x))
        elif mode == "area":
            if n_in != n_out:
                x = (x.movedim(d, -1) @ _area_matrix(n_in, n_out, x).T).movedim(-1, d)
        elif mode == "bicubic":
            x = _along(x, d, *_cubic_taps(n_in, n_out, align_corners, sc, ft))
        else:
            taps = _linear_taps(n_in, n_out, align_corners, sc, ft)
            if taps is not None:
                x = _along(x, d, *taps)
    return x * 1 if x is input else x  # always a new tensor, as torch's


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None):
    """Deprecated in torch in favour of :func:`interpolate` (with a warning); the same here."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None):
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- pixel shuffle --------------------------------------------------------------------------------------
def _factor(v, fn: str, name: str) -> int:
    if not _is_int(v):
        raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(v).__name__}")
    if v <= 0:
        raise RuntimeError(f"{fn} expects a positive {name}, but got {v}")
    return int(v)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r): each group of r * r channels becomes an r x r block."""
    _check_tensor_at(input, "pixel_shuffle")
    r = _factor(upscale_factor, "pixel_shuffle", "upscale_factor")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    b = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    order = tuple(range(b)) + (b, b + 3, b + 1, b + 4, b + 2)
    return x.permute(order).reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W): the inverse of :func:`pixel_shuffle`."""
    _check_tensor_at(input, "pixel_unshuffle")
    r = _factor(downscale_factor, "pixel_unshuffle", "downscale_factor")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    *lead, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    b = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    order = tuple(range(b)) + (b, b + 2, b + 4, b + 1, b + 3)
    return x.permute(order).reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of (N, C, *) from ``groups`` groups (ShuffleNet): channel ``g*(C/g) + i`` moves to
    ``i*g + g``'s place, i.e. (N, g, C/g, *) transposed to (N, C/g, g, *)."""
    _check_tensor_at(input, "channel_shuffle")
    if not _is_int(groups) or groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"sizes {list(input.shape)}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle`` (torch's native kernel of it)."""
    return channel_shuffle(input, groups)
