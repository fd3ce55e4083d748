"""Normalization as functions: ``layer_norm`` (one fused :class:`LayerNorm` node each way, with a fused
:class:`LayerNormBackward`), ``batch_norm``, ``group_norm``, ``instance_norm``, ``rms_norm`` and ``normalize``.

The fused backward runs as a node of its own whose own ``backward`` is written with Tensor ops: the formula
``loss.backward()`` runs is the one ``create_graph=True`` records and differentiates again.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> F.layer_norm(tl.tensor([[1.0, 2.0, 3.0]]), (3,))
tensor([[-1.2247,  0.0000,  1.2247]])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ._nn_args import _check_tensor, _const
from ._util import in_float32, rounded
from .movement import pad

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

__all__ = ["layer_norm", "batch_norm", "group_norm", "instance_norm", "rms_norm", "normalize", "local_response_norm"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class LayerNorm(Function):
    """Normalization over the trailing dims, then ``* weight + bias`` (either may be absent)."""

    __slots__ = ("axes", "eps", "xhat", "rstd", "has_weight", "has_bias")

    def forward(self, x, weight, bias, ndim, eps):
        be = x._dev.backend
        self.axes = tuple(range(x.ndim - ndim, x.ndim))
        self.eps = eps
        xhat, _, self.rstd = be.layer_norm(in_float32(x), self.axes, eps)
        self.xhat = xhat
        self.has_weight, self.has_bias = weight is not None, bias is not None
        self.save_for_backward(x, weight) if weight is not None else self.save_for_backward(x)
        y = xhat
        if weight is not None:
            y = be.mul(y, weight._x)
        if bias is not None:
            y = be.add(y, bias._x)
        if y is xhat and _grad_mode.enabled and x.requires_grad:  # no affine part: when a backward will read x-hat, the
            y = be.copy(xhat)  # output must not be that array (an in-place op on it); else nothing keeps it
        return rounded(x, y)  # (bfloat16: the statistics were computed in float32)

    def _statistics(self, x):
        """x-hat and 1/std as tensors for the formulas below: x-hat as forward kept it; or, when a graph of the
        backward is recorded (``create_graph``), both computed again with Tensor ops so that their dependence on
        ``x`` is recorded (the fused kernel itself always reads what forward kept: the same values)."""
        if not _grad_mode.enabled:
            return x._wrap(self.xhat, x._dev), None
        xc = x - x.mean(self.axes, keepdim=True)
        rstd = ((xc * xc).mean(self.axes, keepdim=True) + self.eps).rsqrt()
        return xc * rstd, rstd

    def backward(self, g):
        """The normalization's gradient (a fused node); the weight's ``g * xhat`` and the bias's ``g``, which the
        engine sums over the batch dims the weight and bias were broadcast over."""
        saved = self.saved_tensors
        xhat, rstd = self._statistics(saved[0])
        gxh = g * saved[1] if self.has_weight else g
        gx = LayerNormBackward.apply(gxh, xhat, rstd, self.axes, (self.xhat, self.rstd)) if self.next[0] is not None \
            else None
        gw = g * xhat if self.has_weight and self.next[1] is not None else None
        gb = g if self.has_bias and self.next[2] is not None else None
        return gx, gw, gb, None, None

    def release(self) -> None:
        super().release()
        self.xhat = self.rstd = None


class LayerNormBackward(Function):
    """``rstd * (g - mean(g) - xhat * mean(g * xhat))`` over the normalized axes: the gradient of the
    normalization itself (before any affine weight), as one fused kernel that reads the statistics the layer
    norm's forward kept (``kept``: its native x-hat and 1/std, held here too, since the layer norm's node lets them
    go when its backward is done). ``xhat`` and ``rstd`` are the same statistics as tensors, inputs only when a
    graph of this node is recorded (its own gradient, written with Tensor ops, reads them); else None."""

    __slots__ = ("axes", "kept")

    def forward(self, g, xhat, rstd, axes, kept):
        self.axes, self.kept = axes, kept
        if _grad_mode.enabled:
            self.save_for_backward(g, xhat, rstd)
        return g._dev.backend.layer_norm_backward(g._x, kept[0], kept[1], axes)

    def backward(self, gg):
        g, xhat, rstd = self.saved_tensors
        ax = self.axes
        m1, m2 = g.mean(ax, keepdim=True), (g * xhat).mean(ax, keepdim=True)
        # the map g -> gx is rstd times a symmetric projection: its adjoint is this same node
        gg_g = LayerNormBackward.apply(gg, xhat, rstd, ax, self.kept)
        gg_xhat = -rstd * (gg * m2 + g * (gg * xhat).mean(ax, keepdim=True))
        gg_rstd = (gg * (g - m1 - xhat * m2)).sum(ax, keepdim=True)
        return gg_g, gg_xhat, gg_rstd, None, None

    def release(self) -> None:
        super().release()
        self.kept = None


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims (one fused primitive each way)."""
    _check_tensor(input, "layer_norm")
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not ns or input.shape[input.ndim - len(ns):] != ns or len(ns) > input.ndim:
        raise RuntimeError(f"layer_norm: normalized_shape {list(ns)} must match the trailing dims of the input "
                           f"of shape {input.shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != ns:
            raise RuntimeError(f"layer_norm: {name} of shape {t.shape} must have the normalized shape {ns}")
        if t is not None and t.dtype is not input.dtype:
            raise RuntimeError(f"layer_norm: {name} dtype {t.dtype.name} must match the input's {input.dtype.name}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"layer_norm: expected a floating point input, got {input.dtype.name}")
    return LayerNorm.apply(input, weight, bias, len(ns), float(eps))


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float | None = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dim 1) over the batch and spatial dims.

    In training the batch statistics are used and the running ones updated in place (unbiased
    variance, as PyTorch); in eval the running statistics are used.
    """
    _check_tensor(input, "batch_norm")
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected at least 2-D input (N, C, ...), got shape {input.shape}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.shape != (c,):
            raise RuntimeError(f"batch_norm: {name} of shape {t.shape} should be ({c},), one per channel")
    axes = (0,) + tuple(range(2, input.ndim))
    shape = (1, c) + (1,) * (input.ndim - 2)
    if training:
        count = input.numel() // c
        if count <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when training, got input "
                             f"of shape {input.shape}")
        mean = input.mean(axes, keepdim=True)
        xc = input - mean
        var = (xc * xc).mean(axes, keepdim=True)
        if running_mean is not None or running_var is not None:
            m = 0.1 if momentum is None else momentum
            with grad_mode.no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - m).add_(mean.detach().reshape(c) * m)
                if running_var is not None:
                    running_var.mul_(1 - m).add_(var.detach().reshape(c) * (m * count / (count - 1)))
        out = xc * (var + eps).rsqrt()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm: running_mean and running_var are needed when training=False")
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _affine(out, weight, bias, channel_dim: int = 1):
    """``out * weight + bias`` with per-channel (dim ``channel_dim``) weight and bias."""
    shape = (-1,) + (1,) * (out.ndim - channel_dim - 1)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _normalize_last(x, eps: float):
    """(x - mean) / sqrt(var + eps) over the last dim, biased variance: the fused layer-norm node, no affine part."""
    return LayerNorm.apply(x, None, None, 1, float(eps))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalize (N, C, ...) over each group of ``C // num_groups`` channels and the spatial dims."""
    _check_tensor(input, "group_norm")
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"group_norm: expected a floating point input, got {input.dtype.name}")
    if input.numel() == 0:
        return _affine(input * 1, weight, bias)
    out = _normalize_last(input.reshape(n, num_groups, -1), eps).reshape(input.shape)
    return _affine(out, weight, bias)


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) of (N, C, ...) over its spatial dims.

    With ``use_input_stats`` the instance statistics are used, and ``running_mean`` / ``running_var`` (when
    given) move towards their batch average (unbiased variance), as PyTorch's; else the running ones are used.
    """
    _check_tensor(input, "instance_norm")
    if input.ndim < 2:
        raise ValueError(f"instance_norm: expected at least 2-D input (N, C, ...), got shape {input.shape}")
    n, c = input.shape[0], input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.shape != (c,):
            raise RuntimeError(f"instance_norm: {name} of shape {t.shape} should be ({c},), one per channel")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"instance_norm: expected a floating point input, got {input.dtype.name}")
    spatial = input.numel() // max(n * c, 1)
    if use_input_stats:
        if spatial <= 1 and input.numel():
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{list(input.shape)}")
        flat = input.reshape(n, c, -1)
        out = _normalize_last(flat, eps).reshape(input.shape)
        if running_mean is not None or running_var is not None:
            with grad_mode.no_grad():
                xd = flat.detach()
                mean = xd.mean(2)
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.mean(0) * momentum)
                if running_var is not None:
                    var = ((xd - mean.unsqueeze(2)) ** 2).sum(2) / (spatial - 1)
                    running_var.mul_(1 - momentum).add_(var.mean(0) * momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("instance_norm: Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        shape = (c,) + (1,) * (input.ndim - 2)
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    return _affine(out, weight, bias)


def _finfo_eps(dtype) -> float:
    return float(dtypes.finfo(dtype).eps)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims (eps: the dtype's
    machine epsilon when None)."""
    _check_tensor(input, "rms_norm")
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not ns or len(ns) > input.ndim or input.shape[input.ndim - len(ns):] != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [*, "
                           f"{', '.join(map(str, ns))}], but got input of size{list(input.shape)}")
    if weight is not None and weight.shape != ns:
        raise RuntimeError(f"rms_norm: weight of shape {weight.shape} must have the normalized shape {ns}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"rms_norm: expected a floating point input, got {input.dtype.name}")
    axes = tuple(range(input.ndim - len(ns), input.ndim))
    low = input.dtype is dtypes.float16 or input.dtype is dtypes.bfloat16  # (in float32, as torch's: its gradient
    x = input.float() if low else input  # has a difference that half precision would cancel away; eps too)
    e = _finfo_eps(x.dtype) if eps is None else eps
    out = x * ((x * x).mean(axes, keepdim=True) + e).rsqrt()
    out = out if weight is None else out * weight
    return out.to(input.dtype) if low else out


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    """``input / max(||input||_p over dim, eps)``."""
    _check_tensor(input, "normalize")
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not supported; use the returned tensor")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps)
    return input / denom


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """``x / (k + alpha/size * sum of x**2 over ``size`` neighbouring channels) ** beta`` (AlexNet's LRN); the
    window is centred on the channel, zero-padded at the ends, as torch's."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    widths = [0, 0] * (input.ndim - 2) + [size // 2, (size - 1) // 2]
    padded = pad(sq, tuple(widths))
    c = input.shape[1]
    total = padded.narrow(1, 0, c)
    for i in range(1, size):
        total = total + padded.narrow(1, i, c)
    div = (total / size * alpha + k).pow(beta)
    return input / div


# ---- Lua torch's cross-channel LRN (nn.CrossMapLRN2d) ------------------------------------------------------------
def _cross_map_windows(channels: int, size: int) -> np.ndarray:
    """The (C, C) counts of which squared channels torch's running-sum CrossMapLRN2d adds into each channel's
    scale (its recursion, quirks included: at channel ``pre_pad`` it does not yet drop channel 0)."""
    pre_pad = int((size - 1) / 2 + 1)
    m = np.zeros((channels, channels))
    m[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        m[c] = m[c - 1]
        if c < channels - pre_pad + 1:
            m[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            m[c, c - pre_pad] -= 1
    return m


class CrossMapLRN2d(Function):
    """``x * (k + alpha/size * window sum of x**2) ** -beta`` over channels of (N, C, H, W), on the host, with
    torch's own backward formula (the gradient of a centred window, which its forward's recursion only nearly is)."""

    __slots__ = ("scale", "out", "x", "size", "alpha", "beta")

    def forward(self, input, size, alpha, beta, k):
        x = input.numpy(force=True)
        n, c, h, w = x.shape
        m = _cross_map_windows(c, size).astype(x.dtype)
        scale = np.einsum("cd,ndhw->nchw", m, x * x) * (alpha / size) + k
        out = x * scale ** -beta
        self.scale, self.out, self.x = scale, out, x
        self.size, self.alpha, self.beta = size, alpha, beta
        self.save_for_backward()
        return _const(out.astype(x.dtype), input)._x

    def backward(self, g):
        self.saved_tensors  # noqa: B018 - raises if an earlier backward freed the kept arrays
        go = g.numpy(force=True)
        size, c = self.size, self.x.shape[1]
        grad = self.scale ** -self.beta * go
        ratio = go * self.out / self.scale
        inverse_pre_pad = int(size - (size - 1) / 2)
        padded = np.zeros((ratio.shape[0], c + size - 1, *ratio.shape[2:]), dtype=ratio.dtype)
        padded[:, inverse_pre_pad:inverse_pre_pad + c] = ratio
        window = np.stack([padded[:, ch:ch + size].sum(1) for ch in range(c)], 1)
        grad = grad - (2 * self.alpha * self.beta / size) * self.x * window
        return _const(grad.astype(self.x.dtype), g), None, None, None, None

    def release(self) -> None:
        super().release()
        self.scale = self.out = self.x = None


def cross_map_lrn2d(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> Tensor:
    """Lua torch's LRN across the channels of a 4-D input (``nn.CrossMapLRN2d``'s computation)."""
    if input.ndim != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
    return CrossMapLRN2d.apply(input, int(size), float(alpha), float(beta), float(k))
