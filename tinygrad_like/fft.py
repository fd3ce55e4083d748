"""``torch.fft``: the sample frequencies (``fftfreq``, ``rfftfreq``) and the spectrum reorderings (``fftshift``,
``ifftshift``) work on real tensors; the transforms themselves produce or consume complex tensors, which
tinygrad_like does not have, so each raises ``NotImplementedError`` saying so.

>>> import tinygrad_like as tl
>>> tl.fft.fftfreq(5)
tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
>>> tl.fft.fftshift(tl.arange(5))
tensor([3, 4, 0, 1, 2])
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .creation import tensor
from .ops.shaping import roll
from .tensor import Tensor
from .unsupported import COMPLEX, unsupported_function

__all__ = ["Tensor", "fftfreq", "rfftfreq", "fftshift", "ifftshift", *(
    "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft hfft2 ihfft2 hfftn ihfftn".split())]

# every transform: its input or its output (or both) is complex
for _name in __all__[5:]:
    globals()[_name] = unsupported_function(f"torch.fft.{_name}", COMPLEX)
del _name


def _frequencies(values: np.ndarray, n: int, d: float, dtype, device, requires_grad: bool) -> Tensor:
    """``values / (n * d)`` in ``dtype`` (the default float dtype if None): torch scales the integer ramp by
    ``1 / (n * d)`` in the result's dtype, and so do we, so the results agree bit for bit."""
    dt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"fftfreq: expected a floating point dtype, got {dt}")
    with np.errstate(divide="ignore", invalid="ignore"):  # (n = 0: rfftfreq's one entry is 0 * inf = nan, as torch)
        scale = np.float64(1.0) / np.float64(n * d)
        out = values.astype(dt.np) * np.dtype(dt.np).type(scale)
    return tensor(out, dtype=dt, device=device, requires_grad=requires_grad)


def fftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an FFT of length ``n`` with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    if out is not None:
        raise TypeError("fftfreq(): out= is not supported by tinygrad_like; use the returned tensor")
    ramp = np.concatenate([np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)]) if n > 0 else np.zeros(0)
    return _frequencies(ramp, n, d, dtype, device, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``rfft`` of length ``n``: ``[0, 1, ..., n // 2] / (d * n)``."""
    if out is not None:
        raise TypeError("rfftfreq(): out= is not supported by tinygrad_like; use the returned tensor")
    return _frequencies(np.arange(n // 2 + 1), n, d, dtype, device, requires_grad)


def _dims(input: Tensor, dim) -> list[int]:
    if dim is None:
        return list(range(input.ndim))
    return [dim] if isinstance(dim, int) else list(dim)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Move the zero frequency to the centre: roll each dimension in ``dim`` (all if None) by ``size // 2``."""
    dims = _dims(input, dim)
    if not dims:
        return input.clone()
    return roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of :func:`fftshift`: roll each dimension by ``(size + 1) // 2``."""
    dims = _dims(input, dim)
    if not dims:
        return input.clone()
    return roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)
