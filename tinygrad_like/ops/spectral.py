"""The short-time Fourier transform of real signals, as torch's ``stft(..., return_complex=False)``: frames of the
(centered, padded) signal, windowed, times the real and imaginary DFT matrices, so that autograd comes from the
matmuls. tinygrad_like has no complex dtype: ``return_complex=True`` and ``istft`` (whose input torch requires to
be complex) raise, saying so."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..tensor_base import TensorBase
from .movement import stack
from .padding import pad as _pad

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = ["stft", "istft"]


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,  # noqa: A002
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None,
         align_to_window: bool | None = None) -> Tensor:
    """``(..., n_freq, n_frames, 2)``: the real and imaginary parts of each frame's DFT (1-d or 2-d ``input``)."""
    if not isinstance(input, TensorBase):
        raise TypeError(f"stft(): argument 'input' must be Tensor, not {type(input).__name__}")
    if return_complex is None:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if return_complex:
        raise NotImplementedError("stft(return_complex=True): complex tensors are not supported by tinygrad_like; "
                                  "pass return_complex=False for the real and imaginary parts in a last dim of 2")
    if align_to_window:
        raise NotImplementedError("stft(align_to_window=True) is not supported; leave it None")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got a tensor with {input.ndim} dimensions")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"stft: expected a tensor of floating point dtype, got {input.dtype.name}")
    warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                  "complex tensors for all inputs, and return_complex=False will raise an error.", UserWarning,
                  stacklevel=2)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if n_fft <= 0 or hop <= 0 or not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < n_fft, 0 < hop_length and 0 < win_length <= n_fft, but got "
                           f"n_fft={n_fft}, hop_length={hop}, win_length={win}")
    x = input.reshape(1, -1) if input.ndim == 1 else input
    if center:
        half = n_fft // 2
        x = _pad(x.unsqueeze(1), (half, half), mode=pad_mode).squeeze(1)
    if x.shape[-1] < n_fft:
        raise RuntimeError(f"stft: input of length {x.shape[-1]} (after padding) is shorter than n_fft={n_fft}")
    frames = x.unfold(-1, n_fft, hop)  # (B, n_frames, n_fft)
    if window is None:
        window = x.new_ones(win)
    elif window.ndim != 1 or window.shape[0] != win:
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {list(window.shape)}")
    if win < n_fft:
        left = (n_fft - win) // 2
        window = _pad(window.reshape(1, 1, -1), (left, n_fft - win - left)).reshape(-1)
    frames = frames * window.to(x.dtype)
    n_freq = n_fft // 2 + 1 if onesided is None or onesided else n_fft
    k = np.arange(n_freq, dtype=np.float64)
    n = np.arange(n_fft, dtype=np.float64)
    angle = 2 * np.pi * np.outer(n, k) / n_fft
    cos = x.new_tensor(np.cos(angle).astype(x.dtype.np))
    sin = x.new_tensor(np.sin(angle).astype(x.dtype.np))
    re, im = frames @ cos, -(frames @ sin)  # (B, n_frames, n_freq)
    out = stack([re.transpose(1, 2), im.transpose(1, 2)], -1)
    if normalized:
        out = out * float(n_fft) ** -0.5
    return out[0] if input.ndim == 1 else out


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,  # noqa: A002
          window: Tensor | None = None, center: bool = True, normalized: bool = False, onesided: bool | None = None,
          length: int | None = None, return_complex: bool = False) -> Tensor:
    """torch requires a complex input, which no tinygrad_like tensor is: this raises torch's error for a real one."""
    raise RuntimeError("istft requires a complex-valued input tensor (tinygrad_like's tensors are all real)")
