"""Spatial transformers: ``affine_grid`` (the sampling grid of an affine map) and ``grid_sample`` (read an input at
a grid of normalized coordinates), in 2-D and 3-D.

Both are composed from Tensor ops, so gradients reach the input, the grid and the affine matrix: a sample is a
weighted sum of the input at the corners around its coordinates (a gather), the weights computed from the
coordinates. Padding modes map coordinates as torch maps them (``border`` clamps them, ``reflection`` folds them
back), so their gradients are torch's too (zero where clamped, negated where folded).

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> theta = tl.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
>>> x = tl.arange(4.0).reshape(1, 1, 2, 2)
>>> F.grid_sample(x, F.affine_grid(theta, [1, 1, 2, 2], align_corners=False), align_corners=False)
tensor([[[[0., 1.],
          [2., 3.]]]])
"""

from __future__ import annotations

import itertools
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ._nn_args import _check_tensor, _const
from .elementwise import where

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _align(align_corners, stacklevel: int = 3) -> bool:
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=stacklevel)
        return False
    return bool(align_corners)


def _base_coords(n: int, align_corners: bool) -> np.ndarray:
    if n <= 1:
        return np.zeros(max(n, 0))
    c = np.linspace(-1.0, 1.0, n)
    return c if align_corners else c * (n - 1) / n


def affine_grid(theta: Tensor, size: list[int], align_corners: bool | None = None) -> Tensor:
    """The (N, H, W, 2) (or (N, D, H, W, 3)) grid of ``theta @ [x, y, (z,) 1]`` over the output's normalized
    coordinates, for ``grid_sample``; ``theta`` is (N, 2, 3) (or (N, 3, 4))."""
    _check_tensor(theta, "affine_grid", "theta")
    align_corners = _align(align_corners)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {tuple(theta.shape)}.")
        spatial = size[2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {tuple(theta.shape)}.")
        spatial = size[2:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise ValueError(f"Expected theta's batch size {theta.shape[0]} to equal size[0] = {size[0]}")
    nd = len(spatial)
    axes = [_base_coords(s, align_corners) for s in spatial]  # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [mesh[i] for i in reversed(range(nd))]  # x (width) first, as torch's grids
    base = np.stack([*cols, np.ones(mesh[0].shape)], -1).reshape(-1, nd + 1).astype(theta.dtype.np)
    grid = _const(base, theta).matmul(theta.transpose(1, 2))  # (N, prod(spatial), nd)
    return grid.reshape(size[0], *spatial, nd)


def _unnormalize(coord, size: int, align_corners: bool):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low: int, twice_high: int):
    if twice_low == twice_high:
        return coord * 0
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    c = (coord - lo).abs()
    flips = (c / span).floor().detach()
    extra = c - flips * span
    even = (flips.remainder(2) == 0)
    return where(even, extra + lo, span - extra + lo)


def _source_coord(coord, size: int, padding_mode: str, align_corners: bool):
    c = _unnormalize(coord, size, align_corners)
    if padding_mode == "border":
        c = c.clamp(0, size - 1)
    elif padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = c.clamp(0, size - 1)
    return c


_A = -0.75  # the cubic convolution's parameter (torch's, as OpenCV's)


def _cubic_coeffs(t):
    """The four cubic-convolution weights of the taps at -1, 0, 1, 2 around a point at fraction ``t``."""
    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _bicubic(flat, g, spatial, padding_mode: str, align_corners: bool):
    """Bicubic sampling of 2-D input as torch's: 4 x 4 taps around the unnormalized point (not clamped itself), each
    tap's integer coordinates mapped by the padding mode, zero outside."""
    raw = [_unnormalize(g[:, :, 1 - d], spatial[d], align_corners) for d in range(2)]  # y (height), then x
    lows = [r.detach().floor() for r in raw]
    coeffs = [_cubic_coeffs(r - lo) for r, lo in zip(raw, lows)]
    out = None
    for i in range(4):
        for j in range(4):
            parts = []
            for d, k in ((0, i), (1, j)):
                c, size = lows[d] + (k - 1), spatial[d]
                if padding_mode == "border":
                    c = c.clamp(0, size - 1)
                elif padding_mode == "reflection":
                    c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
                    c = c.clamp(0, size - 1)
                parts.append(c)
            term = _gather(flat, parts, spatial, coeffs[0][i] * coeffs[1][j])
            out = term if out is None else out + term
    return out


def _gather(flat, idx_parts, spatial, weight):
    """``weight`` times the input at integer coordinates ``idx_parts`` (one tensor per dim, outermost first), zero
    where a coordinate falls outside; ``flat`` is (N, C, prod(spatial)), the parts (N, L)."""
    n, c, _ = flat.shape
    inside = None
    index = None
    for part, size in zip(idx_parts, spatial):
        ok = (part >= 0) & (part <= size - 1)
        inside = ok if inside is None else inside & ok
        p = part.clamp(0, size - 1)
        index = p if index is None else index * size + p
    index = index.long()
    vals = flat.gather(2, index.unsqueeze(1).expand(n, c, index.shape[1]))
    w = where(inside, weight, weight.new_zeros(()))
    return vals * w.unsqueeze(1)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample (N, C, H, W) ``input`` at (N, Ho, Wo, 2) ``grid`` (x then y, in [-1, 1]) by ``bilinear``, ``nearest``
    or ``bicubic`` interpolation; 5-D inputs take (N, Do, Ho, Wo, 3) grids (trilinear or nearest)."""
    _check_tensor(input, "grid_sample")
    _check_tensor(grid, "grid_sample", "grid")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align_corners = _align(align_corners)
    nd = input.ndim - 2
    if nd not in (2, 3) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected a 4D or 5D input and a grid of the same dimensionality, "
                           f"but got input with sizes {tuple(input.shape)} and grid with sizes {tuple(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise ValueError("grid_sample(): bicubic interpolation only supports 4D input")
    n, c = input.shape[:2]
    spatial = tuple(input.shape[2:])
    if grid.shape[0] != n or grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension and the input's "
                           f"batch size {n}, but got grid with sizes {tuple(grid.shape)}")
    out_sp = tuple(grid.shape[1:-1])
    g = grid.reshape(n, -1, nd)
    # the grid lists x (the last spatial dim) first: coordinate k of a sample belongs to spatial dim nd-1-k
    coords = [_source_coord(g[:, :, nd - 1 - d], spatial[d], padding_mode, align_corners) for d in range(nd)]
    flat = input.reshape(n, c, -1)
    if mode == "bicubic":
        out = _bicubic(flat, g, spatial, padding_mode, align_corners)
    elif mode == "nearest":
        parts = [co.detach().round() for co in coords]
        out = _gather(flat, parts, spatial, coords[0] * 0 + 1)  # (a zero gradient for the grid, as torch)
    else:
        lows = [co.detach().floor() for co in coords]
        out = None
        for corner in itertools.product((0, 1), repeat=nd):
            parts, weight = [], None
            for d, bit in enumerate(corner):
                frac = coords[d] - lows[d]
                w = frac if bit else 1 - frac
                weight = w if weight is None else weight * w
                parts.append(lows[d] + bit)
            term = _gather(flat, parts, spatial, weight)
            out = term if out is None else out + term
    return out.reshape(n, c, *out_sp)
