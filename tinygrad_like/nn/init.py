"""``tl.nn.init``: PyTorch's weight initialisations, drawing from the seedable generator.

Each function fills its tensor in place (under ``no_grad``, so it bumps the version like any
write) and returns it. The distributions and fan computations are PyTorch's; the random numbers
come from our own generator, so exact values differ from torch's for the same seed.

>>> import tinygrad_like as tl
>>> w = tl.empty(256, 128)
>>> _ = tl.nn.init.kaiming_uniform_(w, nonlinearity="relu")
>>> bound = (6 / 128) ** 0.5
>>> bool(w.abs().max() <= bound), round(w.std().item() / (bound / 3 ** 0.5), 1)
(True, 1.0)
"""

from __future__ import annotations

import math
from statistics import NormalDist

from ..autograd import grad_mode
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "kaiming_uniform_",
           "kaiming_normal_", "xavier_uniform_", "xavier_normal_", "trunc_normal_", "orthogonal_", "eye_"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended std multiplier for a nonlinearity (PyTorch's table)."""
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity!r}; expected one of linear, conv*, sigmoid, tanh, "
                     f"relu, leaky_relu, selu")


def _fans(t: Tensor) -> tuple[int, int]:
    if t.ndim < 2:
        raise ValueError(f"Fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
                         f"(got shape {t.shape})")
    receptive = 1
    for s in t.shape[2:]:
        receptive *= s
    return t.shape[1] * receptive, t.shape[0] * receptive


def _fan(t: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode {mode!r} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(t)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    with grad_mode.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    with grad_mode.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    with grad_mode.no_grad():
        return tensor.fill_(val)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None) -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan): He et al. 2015, keeps activations' variance through ReLUs."""
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None) -> Tensor:
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)): Glorot & Bengio 2010."""
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    """N(mean, std) truncated to ``[a, b]`` (absolute bounds, as torch's). Drawn by redrawing the values that fall
    outside, a few rounds; what is still outside then (a window far in a tail) comes from the inverse CDF."""
    if not a <= b:
        raise ValueError(f"trunc_normal_: expected a <= b, got a={a}, b={b}")
    with grad_mode.no_grad():
        tensor.normal_(mean, std, generator=generator)
        for _ in range(20):
            outside = (tensor < a) | (tensor > b)
            if not bool(outside.any()):
                return tensor
            fresh = tensor.new_empty(tensor.shape).normal_(mean, std, generator=generator)
            tensor.copy_(fresh.where(outside, tensor))
        dist = NormalDist(mean, std)
        lo, hi = dist.cdf(a), dist.cdf(b)
        u = tensor.new_empty(tensor.numel()).uniform_(0.0, 1.0, generator=generator).tolist()
        flat = tensor.reshape(-1)
        for i in outside.reshape(-1).nonzero().reshape(-1).tolist():
            p = min(max(lo + (hi - lo) * u[i], 1e-300), 1 - 1e-16)
            flat[i] = min(max(dist.inv_cdf(p), a), b)
        return tensor


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix (Saxe et al. 2013), as torch's: the Q of a Gaussian matrix's QR, its columns'
    signs fixed by R's diagonal; a tensor of more dims is filled as its (dim 0, rest) matrix."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    import numpy as np

    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with grad_mode.no_grad():
        flat = tensor.new_empty((rows, cols)).normal_(0.0, 1.0, generator=generator).numpy().astype(np.float64)
        if rows < cols:
            flat = flat.T
        q, r = np.linalg.qr(flat)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        tensor.copy_(tensor.new_tensor(q * gain).reshape(tensor.shape))
    return tensor


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (ones on the diagonal of a 2-D tensor), as torch's ``eye_``."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..creation import eye

    with grad_mode.no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
