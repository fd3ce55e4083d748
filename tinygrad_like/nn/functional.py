"""``tl.nn.functional``: layers and losses as functions, with PyTorch's names and arguments.

Convolution is im2col + one matrix multiply; max-pool, layer norm, softmax cross-entropy and
dropout are single fused primitives (see ``tinygrad_like.ops.nn``); the rest is composed from
Tensor ops, so every function here is differentiable (twice, with ``create_graph=True``).

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> logits = tl.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
>>> loss = F.cross_entropy(logits, tl.tensor([0]))
>>> round(loss.item(), 4)
0.2413
>>> loss.backward(); logits.grad.shape
tl.Size([1, 3])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..functions import cat, one_hot  # noqa: F401 - re-exported: F.one_hot as in PyTorch
from ..functions import pad as _functions_pad  # noqa: F401 - the name stays in dir(F), as it was
from ..layout import broadcast_shapes
from ..ops import nn as N
from ..ops import nn_extra as NX
from ..ops._util import check_index_device
from ..ops.conv import (  # noqa: F401
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from ..ops.elementwise import where
from ..ops.embedding import embedding, embedding_bag  # noqa: F401
from ..ops.padding import _PAD_MODES, _pad_index, pad  # noqa: F401 - F.pad (and its helpers, as before)
from ..ops.pooling import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ..ops.resample import (  # noqa: F401
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from ..random import default_generator
from ..tensor import Tensor, wrap_native

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = [
    "linear", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "dropout", "layer_norm",
    "batch_norm", "embedding", "one_hot", "pad", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "relu", "relu_", "leaky_relu", "gelu", "silu",
    "sigmoid", "tanh", "softplus", "elu", "softmax", "log_softmax",
    # activations
    "softmin", "hardtanh", "relu6", "hardsigmoid", "hardswish", "selu", "celu", "mish", "softsign", "logsigmoid",
    "tanhshrink", "softshrink", "hardshrink", "threshold", "glu", "prelu", "rrelu",
    # their in-place forms, and the other dropouts
    "leaky_relu_", "elu_", "selu_", "celu_", "hardtanh_", "threshold_", "rrelu_", "dropout1d", "dropout2d",
    "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    # normalization, distances
    "group_norm", "instance_norm", "rms_norm", "normalize", "cosine_similarity", "pairwise_distance", "bilinear",
    # losses
    "smooth_l1_loss", "huber_loss", "kl_div", "margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "soft_margin_loss", "hinge_embedding_loss",
    # attention
    "scaled_dot_product_attention", "multi_head_attention_forward",
    # convolution, pooling, resampling, patches, lookups (functional_conv, _pool, _resample, _sparse)
    "conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold", "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "max_unpool1d",
    "max_unpool2d", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
    "pixel_unshuffle", "embedding_bag",
    # 3-D pooling (functional_pool)
    "max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "max_unpool3d",
]

_REDUCTIONS = ("none", "mean", "sum")


# ---- argument checks shared by the layers ------------------------------------------------------
def _pair(v, name: str) -> tuple:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v), int(v)
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(i, (int, np.integer)) for i in v):
        return int(v[0]), int(v[1])
    raise TypeError(f"{name} must be an int or a pair of ints, got {v!r}")


def _check_tensor(x, fn: str, arg: str = "input") -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _image_batch(x, fn: str):
    """Accept (N, C, H, W) or an unbatched (C, H, W); return the 4-D tensor and whether we added N."""
    _check_tensor(x, fn)
    if x.ndim == 3:
        return x.unsqueeze(0), True
    if x.ndim != 4:
        raise RuntimeError(f"{fn}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got shape {x.shape}")
    return x, False


def _check_reduction(reduction: str, fn: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's deprecated ``size_average`` / ``reduce`` arguments, mapped to ``reduction`` (with its warning)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "none" if not reduce else "mean" if size_average else "sum"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  UserWarning, stacklevel=3)
    return ret


def _weighted(loss, weight, input=None):
    if weight is None:
        return loss
    if input is not None and weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    return loss * weight


def _weighted_reduce(loss, weight, reduction: str, input):
    """mse/l1 with a ``weight``: its 'mean' is the weighted mean (divided by the sum of the weights), as torch's."""
    if weight is None or reduction != "mean":
        return _reduce(_weighted(loss, weight, input), reduction)
    return _weighted(loss, weight, input).sum() / weight.sum()


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _same_shape(input, target, fn: str) -> None:
    if input.shape != target.shape:
        raise ValueError(f"{fn}: target shape {target.shape} must match input shape {input.shape} "
                         f"(no broadcasting: it is almost always a bug)")


# ---- activations (the Tensor methods, in functional spelling) -------------------------------------
# ``inplace=True`` writes the result into ``input`` and returns ``input`` itself, as torch: through the Tensor's own
# in-place machinery (``InplaceMixin._inplace``: the checks on leaves and aliasing, a version bump, the history moved
# onto ``input``). The ``*_`` functions are the same writes under torch's names.
def _write(input: Tensor, op: str, fn) -> Tensor:
    """``fn(input)`` written into ``input`` as the in-place op ``op``; returns ``input``."""
    return input._inplace(op, _call_on, fn)


def _call_on(x: Tensor, fn) -> Tensor:
    return fn(x)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    """``relu`` written into ``input`` (a version bump), as ``torch.nn.functional.relu_``."""
    return input.relu_()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    if not inplace:
        return input.leaky_relu(negative_slope)
    _float_only(input, "leaky_relu")
    return _write(input, "leaky_relu_", lambda x: NX.LeakyReluInplace.apply(x, negative_slope))


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu`` written into ``input``, as ``torch.nn.functional.leaky_relu_``."""
    return leaky_relu(input, negative_slope, True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return input.gelu(approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    if not inplace:
        return input.silu()
    _float_only(input, "silu")
    return _write(input, "silu_", Tensor.silu)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return input.softplus(beta, threshold)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    if not inplace:
        return input.elu(alpha)
    _float_only(input, "elu")
    return _write(input, "elu_", lambda x: NX.EluInplace.apply(x, alpha, 1.0, 1.0))


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``elu`` written into ``input``, as ``torch.nn.functional.elu_``."""
    return elu(input, alpha, True)


def _softmax_dim(input: Tensor, dim, fn: str) -> int:
    _check_tensor(input, fn)
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. Change the call to include dim=X "
                      f"as an argument.", UserWarning, stacklevel=3)
        return 0 if input.ndim in (0, 1, 3) else 1  # PyTorch's legacy rule for dim=None
    return dim


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    dim = _softmax_dim(input, dim, "softmax")
    return (input if dtype is None else input.to(dtype)).softmax(dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    dim = _softmax_dim(input, dim, "log_softmax")
    return (input if dtype is None else input.to(dtype)).log_softmax(dim)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-input, dim)``."""
    dim = _softmax_dim(input, dim, "softmin")
    return (-(input if dtype is None else input.to(dtype))).softmax(dim)


def _float_only(input, fn: str) -> None:
    _check_tensor(input, fn)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"{fn}: not implemented for {input.dtype.name} tensors (as in torch): expected a "
                                  f"floating point input; convert with .float() first")


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``clamp(input, min_val, max_val)``; the gradient is 1 strictly inside (min_val, max_val), else 0."""
    _check_tensor(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _write(input, "hardtanh_", lambda x: _hardtanh(x, min_val, max_val))
    return _hardtanh(input, min_val, max_val)


def _hardtanh(input: Tensor, min_val: float, max_val: float) -> Tensor:
    if not input.dtype.is_floating_point:
        return input.clamp(min_val, max_val).to(input.dtype)
    return NX.Hardtanh.apply(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``hardtanh`` written into ``input``, as ``torch.nn.functional.hardtanh_``."""
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, linear between."""
    _float_only(input, "hardsigmoid")
    return _write(input, "hardsigmoid_", NX.Hardsigmoid.apply) if inplace else NX.Hardsigmoid.apply(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (MobileNetV3)."""
    _float_only(input, "hardswish")
    return _write(input, "hardswish_", _hardswish) if inplace else _hardswish(input)


def _hardswish(x: Tensor) -> Tensor:
    return x * NX.Hardtanh.apply(x + 3.0, 0.0, 6.0) / 6.0


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants of Klambauer et al."""
    _float_only(input, "selu")
    if inplace:
        return _write(input, "selu_", lambda x: NX.EluInplace.apply(x, _SELU_ALPHA, _SELU_SCALE, 1.0))
    return input.elu(_SELU_ALPHA) * _SELU_SCALE


def selu_(input: Tensor) -> Tensor:
    """``selu`` written into ``input``, as ``torch.nn.functional.selu_``."""
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    _float_only(input, "celu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    if inplace:
        return _write(input, "celu_", lambda x: NX.EluInplace.apply(x, float(alpha), 1.0, 1.0 / alpha))
    return NX.Celu.apply(input, float(alpha))


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``celu`` written into ``input``, as ``torch.nn.functional.celu_``."""
    return celu(input, alpha, True)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    _float_only(input, "mish")
    return _write(input, "mish_", _mish) if inplace else _mish(input)


def _mish(x: Tensor) -> Tensor:
    return x * x.softplus(1.0, 20.0).tanh()


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: ``x`` where positive, else ``x * r``; in training ``r`` is drawn from U(lower, upper)
    for each element (from the seedable generator), in eval it is the mean slope ``(lower + upper) / 2``.
    (In training with ``inplace=True`` the node keeps the slopes, not its output: a later write to the result does
    not fail the backward here, where torch's, which keeps the output, refuses it.)"""
    _float_only(input, "rrelu")
    if lower > upper:
        raise RuntimeError(f"rrelu: lower bound should be less than or equal to the upper bound, got lower={lower} "
                           f"and upper={upper}")
    if not training:  # (as torch: leaky_relu with the mean slope, its in-place form keeping its output)
        slope = (lower + upper) / 2
        if inplace:
            return _write(input, "rrelu_", lambda x: NX.LeakyReluInplace.apply(x, slope))
        return input.leaky_relu(slope)
    with grad_mode.no_grad():  # the slopes: 1 where x > 0 (x kept), r elsewhere; they are also the gradient
        noise = where(input > 0, 1.0, input.new_empty(input.shape).uniform_(lower, upper))
    return _write(input, "rrelu_", lambda x: x * noise) if inplace else input * noise


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """``rrelu`` written into ``input``, as ``torch.nn.functional.rrelu_``."""
    return rrelu(input, lower, upper, training, True)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    _check_tensor(input, "softsign")
    return input / (input.abs() + 1)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, computed stably."""
    _float_only(input, "log_sigmoid")
    return -(-input).softplus(1.0, 20.0)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    _check_tensor(input, "tanhshrink")
    return input - input.tanh()


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, 0 between."""
    _float_only(input, "softshrink")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, 0.0))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    _float_only(input, "hardshrink")
    return where((input > lambd) | (input < -lambd), input, 0.0)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``."""
    _check_tensor(input, "threshold")
    if inplace:
        return _write(input, "threshold_", lambda x: NX.Threshold.apply(x, threshold, value))
    return NX.Threshold.apply(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``threshold`` written into ``input``, as ``torch.nn.functional.threshold_``."""
    _check_tensor(input, "threshold_")
    return _write(input, "threshold_", lambda x: NX.Threshold.apply(x, threshold, value))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the second half."""
    _check_tensor(input, "glu")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + input.ndim if dim < 0 else dim
    if not 0 <= d < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {dim})")
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = input.narrow(d, 0, n // 2), input.narrow(d, n // 2, n // 2)
    return a * b.sigmoid()


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, else ``weight * x``; ``weight`` has one value, or one per channel (dim 1)."""
    _check_tensor(input, "prelu")
    _check_tensor(weight, "prelu", "weight")
    n = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    w = weight.reshape(()) if n == 1 else weight.reshape((channels,) + (1,) * (input.ndim - 2))
    return where(input > 0, input, w * input)


# ---- layers -----------------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` with weight of shape (out_features, in_features); a 1-D weight (in_features,)
    gives ``input @ weight``, the last dim summed away, as torch. The bias is usually (out_features,); any bias that
    broadcasts to the output shape is added (torch refuses a few of those on its fused paths, e.g. a bias with a
    1-D weight and a 2-D input)."""
    _check_tensor(input, "linear")
    _check_tensor(weight, "linear", "weight")
    xs, ws = input._x.shape, weight._x.shape  # (the plain tuples: this runs once per layer per step)
    if not xs or not ws:
        raise RuntimeError(f"linear: both arguments need to be at least 1-D, but the input has shape {xs} and the "
                           f"weight {ws}")
    if len(ws) > 2:
        raise RuntimeError(f"linear: the weight must be 2-D (out_features, in_features) or 1-D (in_features,), got "
                           f"shape {ws}")
    if xs[-1] != ws[-1]:
        raise RuntimeError(f"linear: input of shape {xs} has {xs[-1]} features but weight of shape {ws} expects "
                           f"{ws[-1]} (the last dim of the input must equal in_features)")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"linear: expected the input and the weight to have the same dtype, but got "
                           f"{input.dtype.name} != {weight.dtype.name} (as torch; convert one with .to())")
    if len(ws) == 1:
        return _linear_1d(input, weight, bias)
    bs = None if bias is None else bias._x.shape
    if bs is not None and bs not in ((ws[0],), ()) and not _broadcasts_to(bs, xs[:-1] + ws[:1]):
        raise RuntimeError(f"linear: the bias has shape {bs} but the weight has {ws[0]} output features; expected "
                           f"a bias of shape ({ws[0]},) (or one that broadcasts to the output's {xs[:-1] + ws[:1]})")
    if bs is not None and (bias.dtype is not weight.dtype or bs != (ws[0],)):
        out = input @ weight.T  # the general path: promotion, broadcasting, and their errors
        return out if bias is None else out + bias
    if input.ndim == 1:
        return N.Linear.apply(input.unsqueeze(0), weight, bias).squeeze(0)
    return N.Linear.apply(input, weight, bias)


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """``shape`` broadcasts to ``target`` without changing it (what adding a bias may do to an output)."""
    try:
        return broadcast_shapes(target, shape) == tuple(target)
    except ValueError:
        return False


def _linear_1d(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``input @ weight`` (shape ``input.shape[:-1]``) plus a bias that broadcasts to that shape."""
    out = input @ weight
    if bias is None:
        return out
    _check_tensor(bias, "linear", "bias")
    if not _broadcasts_to(bias._x.shape, out._x.shape):
        raise RuntimeError(f"linear: with a 1-D weight the output has shape {out.shape}, and the bias of shape "
                           f"{bias.shape} does not broadcast to it; expected a bias of that shape or one that "
                           f"broadcasts to it (a single value: shape ())")
    return out + bias


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
            generator=None) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p); identity when not training.

    The mask comes from the seedable generator, so ``tl.manual_seed`` (and gradient checkpointing,
    which restores the generator's state) reproduces it exactly.
    """
    _check_dropout(input, p, "dropout")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _write(input, "dropout_", _times_zero) if inplace else _times_zero(input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"dropout: expected a floating point input, got {input.dtype.name}")
    gen = generator or default_generator
    if inplace:
        return _write(input, "dropout_", lambda x: N.Dropout.apply(x, float(p), gen))
    return N.Dropout.apply(input, float(p), gen)


def _check_dropout(input, p: float, fn: str) -> None:
    _check_tensor(input, fn)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _times_zero(x: Tensor) -> Tensor:
    """``p == 1``: everything dropped, as torch computes it (a product, so NaN and inf give NaN; dtype kept)."""
    return x * 0


_ALPHA_DROPOUT = 1.7580993408473766  # -SELU's negative saturation, scale * alpha: what a dropped unit is set to


def _dropout_impl(input: Tensor, p: float, training: bool, inplace: bool, fn: str, *, feature: bool,
                  alpha: bool, batched: bool = True) -> Tensor:
    """torch's ``_dropout_impl``: one keep/drop draw per element, or per channel (``feature``: a (N, C, 1, ...)
    mask; ``batched=False``: a (C, 1, ...) one). Kept values are scaled by 1/(1-p); with ``alpha`` the result is
    ``a * (x * keep + s * (keep - 1)) + a * s * p`` (``s`` = SELU's saturation, ``a`` chosen so that a SELU
    network keeps zero mean and unit variance)."""
    _check_dropout(input, p, fn)
    if p == 0.0 or not training or input.numel() == 0:
        return input
    if p == 1.0:
        return _write(input, fn + "_", _times_zero) if inplace else _times_zero(input)
    if feature and input.ndim < 2:
        raise RuntimeError(f"{fn}: feature dropout requires at least 2 dimensions in the input (N, C, ...), got "
                           f"shape {input.shape}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: expected a floating point input, got {input.dtype.name}")
    shape = input.shape if not feature else (input.shape[:2] if batched else input.shape[:1])
    shape = tuple(shape) + (1,) * (input.ndim - len(shape))
    with grad_mode.no_grad():
        keep = input.new_empty(shape).bernoulli_(1 - p)
        if alpha:
            a = 1.0 / math.sqrt((_ALPHA_DROPOUT * _ALPHA_DROPOUT * p + 1) * (1 - p))
            shift = (keep - 1) * (_ALPHA_DROPOUT * a) + _ALPHA_DROPOUT * a * p
            scale = keep * a
        else:
            scale = keep / (1 - p)
    if not alpha:
        return _write(input, fn + "_", lambda x: x * scale) if inplace else input * scale
    if inplace:  # (two writes, as torch's input.mul_(noise).add_(b))
        return input.mul_(scale).add_(shift)
    return input * scale + shift


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input with probability ``p``; the rest scaled by 1/(1-p)."""
    _check_dropout(input, p, "dropout1d")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           f"dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           f"channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _dropout_impl(input, p, training, inplace, "dropout1d", feature=True, alpha=False,
                         batched=input.ndim == 3)


def _warn_unusual_rank(input: Tensor, spatial: int) -> None:
    """torch's deprecation warning for a ``dropout{spatial}d`` input that is neither batched nor unbatched."""
    fn, ranks = f"dropout{spatial}d", (spatial + 1, spatial + 2)
    if input.ndim not in ranks:
        warnings.warn(f"{fn}: Received a {input.ndim}-D input to {fn}, which is deprecated and will result in an "
                      f"error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that {fn} exists to provide channel-wise dropout on inputs with "
                      f"{spatial} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{ranks[0]}D or {ranks[1]}D inputs).", UserWarning, stacklevel=3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, H, W) input with probability ``p``; the rest scaled by 1/(1-p). A 3-D
    input is taken as (N, C, L), with torch's warning."""
    _check_dropout(input, p, "dropout2d")
    _warn_unusual_rank(input, 2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", UserWarning, stacklevel=2)
    return _dropout_impl(input, p, training, inplace, "dropout2d", feature=True, alpha=False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability ``p``; the rest scaled by
    1/(1-p)."""
    _check_dropout(input, p, "dropout3d")
    _warn_unusual_rank(input, 3)
    return _dropout_impl(input, p, training, inplace, "dropout3d", feature=True, alpha=False,
                         batched=input.ndim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped units take SELU's saturation value and the result is rescaled so that
    the mean and variance stay what they were (Klambauer et al.)."""
    return _dropout_impl(input, p, training, inplace, "alpha_dropout", feature=False, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels (dim 1 of an (N, C, ...) input)."""
    return _dropout_impl(input, p, training, inplace, "feature_alpha_dropout", feature=True, alpha=True)


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
    return N.LayerNorm.apply(input, weight, bias, len(ns), float(eps))


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


# ---- normalization ------------------------------------------------------------------------------
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
    return N.LayerNorm.apply(x, None, None, 1, float(eps))


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


# ---- distances and similarities -------------------------------------------------------------------
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1/|x1| * x2/|x2|)`` over ``dim`` (broadcasting), each norm clamped below at ``eps`` without
    changing its gradient, as PyTorch's."""
    _check_tensor(x1, "cosine_similarity", "x1")
    _check_tensor(x2, "cosine_similarity", "x2")
    try:
        shape = broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise RuntimeError(f"cosine_similarity: x1 of shape {list(x1.shape)} and x2 of shape {list(x2.shape)} "
                           f"cannot be broadcast together") from None
    a, b = x1.expand(shape), x2.expand(shape)
    n1, n2 = a.norm(2, dim, keepdim=True), b.norm(2, dim, keepdim=True)
    n1 = n1 + (n1.detach().clamp_min(eps) - n1.detach())  # clamped value, unclamped gradient (torch's no_grad clamp_)
    n2 = n2 + (n2.detach().clamp_min(eps) - n2.detach())
    return ((a / n1) * (b / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim."""
    _check_tensor(x1, "pairwise_distance", "x1")
    _check_tensor(x2, "pairwise_distance", "x2")
    nd = max(x1.ndim, x2.ndim)
    if nd == 0:
        raise RuntimeError("pairwise_distance: expected at least 1-D inputs, got two 0-d tensors")
    d = x1 - x2 + eps
    return d.norm(p, -1, keepdim=keepdim)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1 @ weight[o] @ input2 + bias[o]`` with weight (out, in1, in2)."""
    _check_tensor(input1, "bilinear", "input1")
    _check_tensor(input2, "bilinear", "input2")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out_features, in1_features, in2_features), got "
                           f"shape {list(weight.shape)}")
    o, i1, i2 = weight.shape
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    if input1.ndim == 0 or input1.shape[-1] != i1:
        got = input1.shape[-1] if input1.ndim else 0
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {got} but expected {i1}")
    if input2.ndim == 0 or input2.shape[-1] != i2:
        got = input2.shape[-1] if input2.ndim else 0
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {got} but expected {i2}")
    if bias is not None and bias.shape != (o,):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0] if bias.ndim else 0} "
                           f"but expected {o}")
    t = input1 @ weight.permute(1, 0, 2).reshape(i1, o * i2)  # (..., out * in2)
    out = (t.unflatten(-1, (o, i2)) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias


# ---- losses -----------------------------------------------------------------------------------
def _class_indices_target(input, target, fn: str):
    """Validate (N, C, d1...) input against (N, d1...) integer target; return 2-D logits and 1-D target."""
    check_index_device(input, target, fn, "target")
    if target.dtype is not dtypes.int64:  # torch takes int64, and uint8 for a (C,) or (N, C) input, nothing else
        if target.dtype is not dtypes.uint8:
            raise RuntimeError(f"{fn}: expected target dtype to be Long or Byte, but got {target.dtype.name} (class "
                               f"indices are int64, or uint8; for class probabilities pass a float target of the "
                               f"input's shape)")
        if input.ndim > 2:
            raise RuntimeError(f"{fn}: expected scalar type Long but found Byte (as in torch, a target for an input "
                               f"with dims after the class dim must be int64: use target.long())")
        target = target.long()
    if input.ndim == 1:
        if target.ndim != 0:
            raise ValueError(f"{fn}: an unbatched input of shape {input.shape} needs a 0-d target, got "
                             f"shape {target.shape}")
        return input.unsqueeze(0), target.reshape(1)
    want = (input.shape[0],) + input.shape[2:]
    if target.shape != want:
        raise ValueError(f"{fn}: expected target of shape {want} for input of shape {input.shape} (N, C, ...), "
                         f"got {target.shape}")
    c = input.shape[1]
    logits = input if input.ndim == 2 else input.movedim(1, -1).reshape(-1, c)
    return logits, target.reshape(-1)


def _check_classes(target, c: int, ignore_index: int, fn: str) -> None:
    t = target.numpy()
    bad = (t != ignore_index) & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"{fn}: target {int(t[bad][0])} is out of bounds for {c} classes (expected values in "
                         f"[0, {c}) or ignore_index={ignore_index})")


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy over dim 1 (dim 0 for an unbatched input).

    ``target`` holds class indices (int, shape (N, ...)) or class probabilities (float, the input's
    shape). Class indices go through one fused primitive (forward and backward).
    """
    _check_tensor(input, "cross_entropy")
    _check_tensor(target, "cross_entropy", "target")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if input.ndim == 0:
        raise ValueError("cross_entropy: input must have a class dimension, got a 0-d tensor")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"cross_entropy: expected floating point logits, got {input.dtype.name}")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if weight is not None and weight.shape != (c,):
        raise RuntimeError(f"cross_entropy: weight of shape {weight.shape} should be ({c},), one per class")
    if target.dtype.is_floating_point:
        if target.shape != input.shape:  # class indices given as floats (probabilities have the input's shape)
            raise RuntimeError(f"cross_entropy: expected target dtype to be Long or Byte, but got "
                               f"{target.dtype.name}: a target of shape {target.shape} holds class indices "
                               f"(use .long()); probabilities would have the input's shape {input.shape}")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    logits, flat = _class_indices_target(input, target, "cross_entropy")
    _check_classes(flat, c, ignore_index, "cross_entropy")
    if weight is not None and weight.dtype is not logits.dtype:
        weight = weight.to(logits.dtype)
    loss = N.CrossEntropy.apply(logits, flat, weight, ignore_index, float(label_smoothing))
    if reduction == "none":
        return loss.reshape(target.shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / _mean_denominator(flat, weight, ignore_index)


def _mean_denominator(flat_target, weight, ignore_index: int) -> float:
    """PyTorch's 'mean': the summed weight of the targets that count (nan when none do)."""
    t = flat_target.numpy()
    keep = t != ignore_index
    if weight is None:
        n = float(keep.sum())
    else:
        n = float(weight.detach().numpy().astype(np.float64)[t[keep]].sum())
    return n if n else math.nan


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    _same_shape(input, target, "cross_entropy")
    cdim = 1 if input.ndim > 1 else 0
    c = input.shape[cdim]
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / c
    logp = input.log_softmax(cdim)
    if weight is not None:
        logp = logp * weight.reshape((c,) + (1,) * (input.ndim - cdim - 1))
    return _reduce(-(target * logp).sum(cdim), reduction)  # 'mean' averages over every (N, d1, ...) position


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices, given log-probabilities over dim 1."""
    _check_tensor(input, "nll_loss")
    _check_tensor(target, "nll_loss", "target")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "nll_loss")
    logp, flat = _class_indices_target(input, target, "nll_loss")
    c = logp.shape[1]
    if weight is not None and weight.shape != (c,):
        raise RuntimeError(f"nll_loss: weight of shape {weight.shape} should be ({c},), one per class")
    _check_classes(flat, c, ignore_index, "nll_loss")
    t = flat.numpy()
    keep = t != ignore_index
    safe = wrap_native(np.where(keep, t, 0).astype(np.int64), flat._dev)
    coef = keep.astype(logp.dtype.np)
    if weight is not None:
        coef = coef * weight.detach().numpy()[np.where(keep, t, 0)]
    picked = logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    loss = -picked * wrap_native(coef.astype(logp.dtype.np), flat._dev)
    if reduction == "none":
        return loss.reshape(target.shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / _mean_denominator(flat, weight, ignore_index)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    _check_tensor(input, "mse_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "mse_loss")
    _same_shape(input, target, "mse_loss")
    d = input - target
    return _weighted_reduce(d * d, weight, reduction, input)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    _check_tensor(input, "l1_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "l1_loss")
    _same_shape(input, target, "l1_loss")
    return _weighted_reduce((input - target).abs(), weight, reduction, input)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """BCE on probabilities; logs are clamped at -100 as in PyTorch so a 0 or 1 gives a finite loss."""
    _check_tensor(input, "binary_cross_entropy")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "binary_cross_entropy")
    _same_shape(input, target, "binary_cross_entropy")
    x = input.detach().numpy()
    if x.size and (np.nanmin(x) < 0 or np.nanmax(x) > 1):
        raise RuntimeError("binary_cross_entropy: all elements of input should be between 0 and 1 (apply a "
                           "sigmoid first, or use binary_cross_entropy_with_logits)")
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """BCE of sigmoid(input), computed stably as (1 - t) x + (1 + (pw - 1) t) softplus(-x)."""
    _check_tensor(input, "binary_cross_entropy_with_logits")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    _same_shape(input, target, "binary_cross_entropy_with_logits")
    sp = (-input).softplus()  # log(1 + exp(-x)), exact to float rounding (linear past the threshold)
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _check_same_ndim(fn: str, **tensors) -> None:
    dims = {k: t.ndim for k, t in tensors.items()}
    if len(set(dims.values())) > 1:
        raise RuntimeError(f"{fn}: All input tensors should have same dimension but got sizes: "
                           + ", ".join(f"{k}: {list(t.shape)}" for k, t in tensors.items()))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input - target``; L1 at beta=0)."""
    _check_tensor(input, "smooth_l1_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "smooth_l1_loss")
    _same_shape(input, target, "smooth_l1_loss")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = input - target
    if beta == 0:
        return _reduce(d.abs(), reduction)
    a = d.abs()
    return _reduce(where(a < beta, d * d * (0.5 / beta), a - 0.5 * beta), reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    _check_tensor(input, "huber_loss")
    _check_reduction(reduction, "huber_loss")
    _same_shape(input, target, "huber_loss")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = input - target
    a = d.abs()
    return _reduce(_weighted(where(a < delta, d * d * 0.5, (a - 0.5 * delta) * delta), weight, input), reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """``target * (log(target) - input)`` pointwise (``input`` holds log-probabilities; 0 where target is 0);
    with ``log_target`` the target holds log-probabilities too. 'batchmean' divides the sum by the batch size."""
    _check_tensor(input, "kl_div")
    _check_tensor(target, "kl_div", "target")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS + ("batchmean",):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "margin_ranking_loss")
    _check_same_ndim("margin_ranking_loss", input1=input1, input2=input2, target=target)
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


_EMBED_EPS = 1e-12


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "cosine_embedding_loss")
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if td == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod = (input1 * input2).sum(td)
    m1 = (input1 * input1).sum(td) + _EMBED_EPS
    m2 = (input2 * input2).sum(td) + _EMBED_EPS
    cos = prod / (m1 * m2).sqrt()
    zero = cos.new_zeros(())
    out = where(target == 1, 1 - cos, zero) + where(target == -1, (cos - margin).clamp_min(0), zero)
    return _reduce(out, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with d the pairwise p-norm distance (``swap``: d(a, n) is the
    smaller of d(a, n) and d(p, n))."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "triplet_margin_loss")
    a, pos, neg = anchor.ndim, positive.ndim, negative.ndim
    if not a == pos == neg:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pos}D, and negative {neg}D inputs")
    if margin <= 0:
        raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "soft_margin_loss")
    _same_shape(input, target, "soft_margin_loss")
    return _reduce((-target * input).softplus(1.0, 20.0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """``input`` where target is 1, ``max(0, margin - input)`` where it is -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "hinge_embedding_loss")
    zero = input.new_zeros(())
    out = where(target != 1, (margin - input).clamp_min(0), zero) + where(target != -1, input, zero)
    return _reduce(out, reduction)


# ---- attention ----------------------------------------------------------------------------------
def _masked_softmax_safe(scores: Tensor) -> Tensor:
    """Softmax over the last dim where a row that is -inf everywhere gives zeros, not NaN (torch's math path of
    scaled_dot_product_attention)."""
    dead = (scores == -math.inf).all(-1, keepdim=True)
    if not bool(dead.any().item()):
        return scores.softmax(-1)
    return where(dead, 0.0, where(dead, 0.0, scores).softmax(-1))


_CAUSAL_MASKS: dict = {}


def _causal_mask(L: int, S: int, np_dtype, dev):
    """The additive causal mask of ``is_causal`` (0 where a query may attend, -inf after it: top-left aligned, as
    PyTorch), built once per shape, dtype and device (uploaded once to a device), never written."""
    key = (L, S, np.dtype(np_dtype), dev)
    m = _CAUSAL_MASKS.get(key)
    if m is None:
        m = np.triu(np.full((L, S), -np.inf, np_dtype), 1)
        m.flags.writeable = False
        if not dev.is_host:
            m = dev.backend.from_numpy(m)
        if len(_CAUSAL_MASKS) >= 64:
            _CAUSAL_MASKS.clear()
        _CAUSAL_MASKS[key] = m
    return m


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` over (..., L, E) queries and (..., S, E) keys.

    A bool ``attn_mask`` says which positions take part (True) and a float one is added to the scores;
    ``is_causal`` masks out the keys after each query (top-left aligned, as PyTorch). A query that may attend
    to nothing gets zeros. ``dropout_p`` drops attention weights (always, as PyTorch's function does: pass 0.0
    in eval)."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        _check_tensor(t, "scaled_dot_product_attention", name)
        if t.ndim < 2:
            raise RuntimeError(f"scaled_dot_product_attention: {name} must be at least 2-D (..., L, E), got shape "
                               f"{list(t.shape)}")
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{query.dtype.name} key.dtype: {key.dtype.name} and value.dtype: {value.dtype.name} "
                           f"instead.")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query of shape {list(query.shape)} and key of shape "
                           f"{list(key.shape)} must have the same embedding size (last dim)")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key of shape {list(key.shape)} and value of shape "
                           f"{list(value.shape)} must have the same sequence length (dim -2)")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa and query.ndim >= 3 and min(key.ndim, value.ndim) >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(f"Number of heads in key and value must divide the number of heads in query: query "
                               f"has {hq} heads, key {hk} and value {hv} (shapes {list(query.shape)}, "
                               f"{list(key.shape)}, {list(value.shape)})")
        if hk != hq:  # each key/value head serves hq // hk query heads, side by side
            key = key.repeat_interleave(hq // hk, -3)
        if hv != hq:
            value = value.repeat_interleave(hq // hv, -3)
    try:  # the batch dims (all but the last two) of the three must broadcast together
        broadcast_shapes(query._x.shape[:-2], key._x.shape[:-2], value._x.shape[:-2])
    except ValueError:
        raise RuntimeError(f"scaled_dot_product_attention: the batch dims of query {list(query.shape)}, key "
                           f"{list(key.shape)} and value {list(value.shape)} (all but the last two) do not "
                           f"broadcast") from None
    L, S = query.shape[-2], key.shape[-2]
    s = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if (dropout_p == 0.0 and attn_mask is None and query.dtype in (dtypes.float32, dtypes.float64)
            and query._dev is key._dev is value._dev):  # one fused node (the composed path below: the same math)
        mask = None
        if is_causal:
            mask = _causal_mask(L, S, query.dtype.np, query._dev)
        return N.ScaledDotProductAttention.apply(query, key, value, s, mask)
    scores = (query @ key.transpose(-2, -1)) * s
    if is_causal:
        keep = np.tril(np.ones((L, S), dtype=bool))
        scores = scores.masked_fill(wrap_native(keep if query._dev.backend.is_host else
                                                query._dev.backend.from_numpy(keep), query._dev).logical_not(),
                                    -math.inf)
        w = scores.softmax(-1)  # (row 0 keeps key 0: no row is empty)
    elif attn_mask is not None:
        if attn_mask.dtype is dtypes.bool_:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
        w = _masked_softmax_safe(scores)
    else:
        w = scores.softmax(-1)
    if dropout_p > 0.0:
        w = dropout(w, dropout_p, True)
    return w @ value


def _canonical_mask(mask, name: str, target_dtype):
    """A bool mask (True = masked out) as a float mask of 0 and -inf; a float mask as it is."""
    if mask is None:
        return None
    if mask.dtype is dtypes.bool_:
        return mask.new_zeros(mask.shape, dtype=target_dtype).masked_fill(mask, -math.inf)
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    if query.ndim == 3:
        if key.ndim != 3 or value.ndim != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None and attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.ndim}-D tensor instead")
        return True
    if query.ndim == 2:
        if key.ndim != 2 or value.ndim != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.ndim}-D and {value.ndim}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.ndim != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.ndim}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.ndim not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.ndim}-D tensor instead")
            if attn_mask.ndim == 3:
                want = (num_heads, query.shape[0], key.shape[0])
                if attn_mask.shape != want:
                    raise AssertionError(f"Expected `attn_mask` shape to be {want} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                         f"tensor")


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn: bool,
                                 dropout_p: float, out_proj_weight: Tensor, out_proj_bias, training: bool = True,
                                 key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """PyTorch's multi-head attention on (L, N, E) query and (S, N, E) key/value (or unbatched (L, E)).

    Returns ``(output, weights)``: weights (N, L, S) averaged over heads, or (N, heads, L, S), or None when
    ``need_weights`` is False (then the attention runs through :func:`scaled_dot_product_attention`)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint says the mask is causal: scaled_dot_product_attention builds it
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
        is_causal = False
    # input projections
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        b = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        w = in_proj_weight.chunk(3)
        q, k, v = linear(query, w[0], b[0]), linear(key, w[1], b[1]), linear(value, w[2], b[2])
    else:
        b = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = linear(query, q_proj_weight, b[0]), linear(key, k_proj_weight, b[1]), \
            linear(value, v_proj_weight, b[2])
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = cat([v, bias_v.expand(1, bsz, embed_dim)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v)
    if add_zero_attn:
        k = cat([k, k.new_zeros((bsz * num_heads, 1, head_dim))], 1)
        v = cat([v, v.new_zeros((bsz * num_heads, 1, head_dim))], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = (q * math.sqrt(1.0 / head_dim)) @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            return out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else \
            attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    return (out, None) if is_batched else (out.squeeze(1), None)
