"""Padding: ``tl.nn.functional.pad`` (torch's ``torch.nn.functional.pad``), in its four modes.

'constant' is the constant pad of ``tl.pad``; 'reflect', 'replicate' and 'circular' gather each padded dim with
``index_select`` at positions computed here, so their gradient sums into the positions that were copied. Negative
padding crops first, in every mode.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> F.pad(tl.arange(3.0).reshape(1, 3), (2, 1), mode="reflect")
tensor([[2., 1., 0., 1., 2., 1.]])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..tensor_base import TensorBase
from .movement import pad as _functions_pad

if TYPE_CHECKING:  # (annotations only: the Tensor class sits above the ops)
    from ..tensor import Tensor

__all__ = ["pad"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_index(n: int, lo: int, hi: int, mode: str):
    """Source positions of a dim of size ``n`` padded by (lo, hi) (either may be negative: cropping)."""
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        i = np.abs(i)
        i = np.where(i > n - 1, 2 * (n - 1) - i, i)
    elif mode == "replicate":
        i = np.clip(i, 0, n - 1)
    else:  # circular
        i = np.mod(i, n)
    return i.astype(np.int64)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the trailing dims: ``pad`` is (last_lo, last_hi, prev_lo, prev_hi, ...), as in PyTorch.

    'constant' fills with ``value`` (0 by default); 'reflect' mirrors without repeating the edge, 'replicate'
    repeats the edge, 'circular' wraps around. The non-constant modes gather each padded dim with
    ``index_select``, so their gradient sums into the positions that were copied.
    """
    if not isinstance(input, TensorBase):
        raise TypeError(f"pad(): argument 'input' must be Tensor, not {type(input).__name__}")
    pad = tuple(pad)
    if not all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in pad):
        raise TypeError(f"pad(): argument 'pad' must be tuple of ints, but found {pad!r}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    k = len(pad) // 2
    if mode != "constant" and (k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2)):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
                                  f"Supported combinations for non-constant padding:\n"
                                  f"  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                                  f"  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                                  f"  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if any(p < 0 for p in pad):  # negative padding crops; every mode crops first (circular then wraps the rest)
        idx = [slice(None)] * input.ndim
        for j in range(k):
            n = input.shape[input.ndim - 1 - j]
            lo, hi = max(-pad[2 * j], 0), max(-pad[2 * j + 1], 0)
            if lo + hi > n:
                raise RuntimeError(f"narrow(): length must be non-negative. (The input size {n}, cropped by negative "
                                   f"padding {-lo} and {-hi} in dimension {input.ndim - 1 - j}, would have a "
                                   f"negative size.)")
            idx[input.ndim - 1 - j] = slice(lo, n - hi)
        input = input[tuple(idx)]
        pad = tuple(max(p, 0) for p in pad)
    if mode == "constant":
        return _functions_pad(input, pad, "constant", 0.0 if value is None else value)
    out = input
    for j in range(k):
        d = input.ndim - 1 - j
        lo, hi = int(pad[2 * j]), int(pad[2 * j + 1])
        if lo == 0 and hi == 0:
            continue
        n = input.shape[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {d} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError(f"Padding value causes wrapping around more than once: padding ({lo}, {hi}) at "
                               f"dimension {d} of input {list(input.shape)}")
        if n == 0:
            raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
                               f"other non-zero dimensions for input, but got: {list(input.shape)}")
        idx = input._wrap(_pad_index(n, lo, hi, mode), input._dev) if input._dev.backend.is_host else \
            input._wrap(input._dev.backend.from_numpy(_pad_index(n, lo, hi, mode)), input._dev)
        out = out.index_select(d, idx)
    return out

