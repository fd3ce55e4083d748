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
import warnings
from statistics import NormalDist

import numpy as np

from ..autograd import grad_mode
from ..creation import eye as _eye  # (private: nn.init's public names are torch's)
from ..creation import randperm as _randperm
from ..dtypes import float64
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "kaiming_uniform_",
           "kaiming_normal_", "xavier_uniform_", "xavier_normal_", "trunc_normal_", "orthogonal_", "eye_", "dirac_",
           "sparse_", "uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform",
           "kaiming_normal", "orthogonal", "sparse", "dirac", "eye"]

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
    """N(mean, std) truncated to ``[a, b]`` (absolute bounds), drawn as torch draws it: a uniform number between the
    normal CDF at ``a`` and at ``b``, through the inverse CDF, clamped to ``[a, b]``."""
    if not a <= b:
        raise ValueError(f"trunc_normal_: expected a <= b, got a={a}, b={b}")
    unit = NormalDist()
    lo, hi = unit.cdf((a - mean) / std), unit.cdf((b - mean) / std)
    with grad_mode.no_grad():
        u = tensor.new_empty(tensor.shape, dtype=float64).uniform_(lo, hi, generator=generator).numpy()
        x = np.clip(mean + std * _normal_ppf(u), a, b)
        return tensor.copy_(tensor.new_tensor(x))


def _normal_ppf(p: np.ndarray) -> np.ndarray:
    """The standard normal's inverse CDF, vectorised: Acklam's rational approximation (relative error < 1.2e-9,
    plenty for drawing weights), central region and the two tails."""
    a = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
         -3.066479806614716e+01, 2.506628277459239e+00)
    b = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
         -1.328068155288572e+01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
         4.374664141464968e+00, 2.938163982698783e+00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)
    p = np.clip(np.asarray(p, np.float64), 1e-300, 1.0 - 1e-16)
    q = p - 0.5
    r = q * q
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / \
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0)
    low = np.minimum(p, 1.0 - p)
    tail = low < 0.02425
    if tail.any():
        t = np.sqrt(-2.0 * np.log(low[tail]))
        xt = (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]) / \
             ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1.0)
        x[tail] = np.where(p[tail] < 0.5, xt, -xt)
    return x


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix (Saxe et al. 2013), as torch's: the Q of a Gaussian matrix's QR, its columns'
    signs fixed by R's diagonal; a tensor of more dims is filled as its (dim 0, rest) matrix."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
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

    with grad_mode.no_grad():
        return tensor.copy_(_eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta of a convolution's (3-, 4- or 5-D) weight: a 1 at the kernel's centre linking output channel
    ``d`` of each group to input channel ``d``, so the convolution passes as many channels through as it can."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = tensor.shape[0] // groups
    arr = np.zeros(tensor.shape, dtype=tensor.dtype.np)
    centre = tuple(s // 2 for s in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            arr[(g * per_group + d, d, *centre)] = 1
    with grad_mode.no_grad():
        return tensor.copy_(tensor.new_tensor(arr))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std) with ``ceil(sparsity * rows)`` random zeros in every column (Martens, 2010)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with grad_mode.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = _randperm(rows, generator=generator)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


def _make_deprecate(meth):
    """torch's deprecated spellings without the trailing underscore (each warns, then fills in place)."""
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"{old_name}(...): deprecated, see :func:`{new_name}`."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
