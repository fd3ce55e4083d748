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
(1, 3)
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..functions import cat, one_hot, pad  # noqa: F401 - re-exported: F.one_hot, F.pad as in PyTorch
from ..ops import nn as N
from ..random import default_generator
from ..tensor import Tensor, wrap_native

_grad = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = [
    "linear", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "dropout", "layer_norm",
    "batch_norm", "embedding", "one_hot", "pad", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "relu", "leaky_relu", "gelu", "silu",
    "sigmoid", "tanh", "softplus", "elu", "softmax", "log_softmax",
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
def relu(input: Tensor) -> Tensor:
    return input.relu()


def leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return input.leaky_relu(negative_slope)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return input.gelu(approximate)


def silu(input: Tensor) -> Tensor:
    return input.silu()


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return input.softplus(beta, threshold)


def elu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return input.elu(alpha)


def softmax(input: Tensor, dim: int) -> Tensor:
    return input.softmax(dim)


def log_softmax(input: Tensor, dim: int) -> Tensor:
    return input.log_softmax(dim)


# ---- layers -----------------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` with weight of shape (out_features, in_features)."""
    _check_tensor(input, "linear")
    if weight.ndim != 2 or (input.ndim and input.shape[-1] != weight.shape[1]):
        raise RuntimeError(f"linear: input of shape {input.shape} has {input.shape[-1] if input.ndim else 0} "
                           f"features but weight of shape {weight.shape} expects {weight.shape[-1]} "
                           f"(the last dim of the input must equal in_features)")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"linear: expected the input and the weight to have the same dtype, but got "
                           f"{input.dtype.name} != {weight.dtype.name} (as torch; convert one with .to())")
    if bias is not None and bias.shape not in ((weight.shape[0],), ()):
        raise RuntimeError(f"linear: the bias has shape {bias.shape} but the weight has {weight.shape[0]} output "
                           f"features; expected a bias of shape ({weight.shape[0]},)")
    if input.ndim == 0 or input.dtype is not weight.dtype or (bias is not None and (
            bias.dtype is not weight.dtype or bias.shape != (weight.shape[0],))):
        out = input @ weight.T  # the general path: promotion, broadcasting, and their errors
        return out if bias is None else out + bias
    if input.ndim == 1:
        return N.Linear.apply(input.unsqueeze(0), weight, bias).squeeze(0)
    return N.Linear.apply(input, weight, bias)


def _conv_padding(padding, kernel: tuple, dilation: tuple, stride: tuple):
    """Resolve ``padding`` ('valid', 'same', int or pair) to (symmetric pair, extra right/bottom pad)."""
    if padding == "valid":
        return (0, 0), None
    if padding == "same":
        if stride != (1, 1):
            raise ValueError("conv2d: padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        left = tuple(t // 2 for t in total)
        extra = tuple(t - 2 * lo for t, lo in zip(total, left))
        return left, (extra if any(extra) else None)
    if isinstance(padding, str):
        raise ValueError(f"conv2d: padding must be 'valid', 'same', an int or a pair of ints, got {padding!r}")
    return _pair(padding, "padding"), None


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-D cross-correlation (PyTorch's conv2d): im2col, then one matrix multiply per group.

    ``weight`` is (out_channels, in_channels // groups, KH, KW); the result is (N, out_channels, OH, OW).
    """
    x, unbatched = _image_batch(input, "conv2d")
    _check_tensor(weight, "conv2d", "weight")
    if weight.ndim != 4:
        raise RuntimeError(f"conv2d: expected a 4-D weight (out_channels, in_channels/groups, kH, kW), got "
                           f"shape {weight.shape}")
    n, c, h, w = x.shape
    oc, icg, kh, kw = weight.shape
    if not isinstance(groups, int) or groups < 1 or c % groups or oc % groups:
        raise RuntimeError(f"conv2d: groups={groups} must be a positive int dividing in_channels={c} and "
                           f"out_channels={oc}")
    if icg * groups != c:
        raise RuntimeError(f"conv2d: input of shape {input.shape} has {c} channels, but weight of shape "
                           f"{weight.shape} with groups={groups} expects {icg * groups} input channels")
    if x.dtype is not weight.dtype:
        raise RuntimeError(f"conv2d: input dtype {x.dtype.name} and weight dtype {weight.dtype.name} must "
                           f"match; convert one with .to(dtype)")
    if bias is not None and bias.shape != (oc,):
        raise RuntimeError(f"conv2d: bias of shape {bias.shape} should be ({oc},), one per output channel")
    if bias is not None and bias.dtype is not weight.dtype:
        raise RuntimeError(f"conv2d: bias dtype {bias.dtype.name} must match the weight's {weight.dtype.name}")
    if kh < 1 or kw < 1:
        raise RuntimeError(f"conv2d: the kernel must be at least 1x1, got weight of shape {weight.shape}")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) < 1 or min(dilation) < 1:
        raise RuntimeError(f"conv2d: stride {stride} and dilation {dilation} must be positive")
    pad2, extra = _conv_padding(padding, (kh, kw), dilation, stride)
    if min(pad2) < 0:
        raise RuntimeError(f"conv2d: negative padding {pad2} is not supported")
    if extra is not None:  # 'same' with an even kernel: PyTorch pads the extra pixel at the end
        x = pad(x, (0, extra[1], 0, extra[0]))
        h, w = x.shape[2:]
    oh = (h + 2 * pad2[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * pad2[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"conv2d: the kernel ({kh}x{kw}, dilation {dilation}) is larger than the padded "
                           f"input ({h + 2 * pad2[0]}x{w + 2 * pad2[1]}); output size would be {oh}x{ow}")
    if groups == 1:
        out = N.Conv2d.apply(x, weight, bias, stride, pad2, dilation)
        return out.squeeze(0) if unbatched else out
    outs = []
    cg, ocg = c // groups, oc // groups
    for gi in range(groups):
        xg = x if groups == 1 else x[:, gi * cg:(gi + 1) * cg]
        wg = weight if groups == 1 else weight[gi * ocg:(gi + 1) * ocg]
        cols = N.Im2Col.apply(xg, (kh, kw), stride, pad2, dilation)  # (N, C*KH*KW, OH*OW)
        outs.append(wg.reshape(ocg, cg * kh * kw) @ cols)  # (N, OC, OH*OW): already channels-first
    out = outs[0] if groups == 1 else cat(outs, 1)
    if bias is not None:
        out = out + bias.reshape(oc, 1)
    out = out.reshape(n, oc, oh, ow)
    return out.squeeze(0) if unbatched else out


def _pool_args(kernel_size, stride, padding, dilation, fn: str):
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _pair(stride, "stride")
    p, d = _pair(padding, "padding"), _pair(dilation, "dilation")
    if min(k) < 1 or min(s) < 1 or min(d) < 1:
        raise RuntimeError(f"{fn}: kernel_size {k}, stride {s} and dilation {d} must be positive")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2 or min(p) < 0:
        raise RuntimeError(f"{fn}: padding {p} should be at least 0 and at most half of the kernel size {k}")
    return k, s, p, d


def _check_pool_output(x, k, s, p, d, fn: str):
    h, w = x.shape[2:]
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"{fn}: input of spatial size {h}x{w} is too small for kernel {k} (padding {p}, "
                           f"dilation {d}): the output would be {oh}x{ow}")


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over each window; with ``return_indices`` also the flat (h * W + w) input index of each max."""
    x, unbatched = _image_batch(input, "max_pool2d")
    if ceil_mode:
        raise NotImplementedError("max_pool2d: ceil_mode=True is not implemented; pad the input instead")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"max_pool2d: expected a floating point input, got {x.dtype.name}")
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, "max_pool2d")
    _check_pool_output(x, k, s, p, d, "max_pool2d")
    out = N.MaxPool2d.apply(x, k, s, p, d)
    if return_indices:
        idx = wrap_native(x._dev.backend.max_pool2d_indices(x._x, out._x, k, s, p, d), x._dev)
        return (out.squeeze(0), idx.squeeze(0)) if unbatched else (out, idx)
    return out.squeeze(0) if unbatched else out


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over each window (im2col per channel plane, then a mean over the taps)."""
    x, unbatched = _image_batch(input, "avg_pool2d")
    if ceil_mode:
        raise NotImplementedError("avg_pool2d: ceil_mode=True is not implemented; pad the input instead")
    k, s, p, d = _pool_args(kernel_size, stride, padding, 1, "avg_pool2d")
    _check_pool_output(x, k, s, p, d, "avg_pool2d")
    n, c, h, w = x.shape
    cols = N.Im2Col.apply(x.reshape(n * c, 1, h, w), k, s, p, d)  # (N*C, KH*KW, OH*OW)
    oh = (h + 2 * p[0] - k[0]) // s[0] + 1
    ow = (w + 2 * p[1] - k[1]) // s[1] + 1
    total = cols.sum(1)  # (N*C, OH*OW)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("avg_pool2d: divisor_override must not be zero")
        out = total / divisor_override
    elif count_include_pad or p == (0, 0):
        out = total / (k[0] * k[1])
    else:
        be = x._dev.backend
        ones = be.full((1, 1, h, w), 1, x.dtype)
        counts = be.sum(be.im2col(ones, k, s, p, d), 1, False)  # (1, OH*OW): real (unpadded) pixels per window
        out = total / wrap_native(counts, x._dev)
    out = out.reshape(n, c, oh, ow)
    return out.squeeze(0) if unbatched else out


def _adaptive_matrix(size: int, out: int, dtype, dev) -> Tensor:
    """Row i averages input positions [floor(i*size/out), ceil((i+1)*size/out)), as PyTorch does."""
    m = np.zeros((out, size), dtype.np)
    for i in range(out):
        lo, hi = (i * size) // out, -(-((i + 1) * size) // out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return wrap_native(m if dev.backend.is_host else dev.backend.from_numpy(m), dev)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Average-pool to a fixed ``output_size``: two small averaging matrices, left and right."""
    x, unbatched = _image_batch(input, "adaptive_avg_pool2d")
    h, w = x.shape[2:]
    if isinstance(output_size, (tuple, list)):
        oh, ow = (h if output_size[0] is None else output_size[0]), (w if output_size[1] is None else output_size[1])
    else:
        oh = ow = output_size
    oh, ow = _pair((oh, ow), "output_size")
    if oh < 1 or ow < 1:
        raise RuntimeError(f"adaptive_avg_pool2d: output_size must be positive, got {(oh, ow)}")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"adaptive_avg_pool2d: expected a floating point input, got {x.dtype.name}")
    if (oh, ow) == (1, 1):
        out = x.mean((2, 3), keepdim=True)
    else:
        out = _adaptive_matrix(h, oh, x.dtype, x._dev) @ x @ _adaptive_matrix(w, ow, x.dtype, x._dev).T
    return out.squeeze(0) if unbatched else out


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
            generator=None) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p); identity when not training.

    The mask comes from the seedable generator, so ``tl.manual_seed`` (and gradient checkpointing,
    which restores the generator's state) reproduces it exactly.
    """
    _check_tensor(input, "dropout")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if inplace:
        raise NotImplementedError("dropout(inplace=True) is not supported; use the out-of-place form")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"dropout: expected a floating point input, got {input.dtype.name}")
    return N.Dropout.apply(input, float(p), generator or default_generator)


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


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of ``weight`` picked by integer ``input`` (any shape); ``padding_idx``'s row gets no gradient."""
    _check_tensor(input, "embedding")
    if input.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"embedding: expected an integer index tensor (int64 or int32), got {input.dtype.name}")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got {weight.shape}")
    num = weight.shape[0]
    if input.numel():
        lo, hi = int(input.min().item()), int(input.max().item())
        if lo < 0 or hi >= num:
            raise IndexError(f"embedding: index out of range: indices span [{lo}, {hi}] but there are only {num} "
                             f"embeddings")
    w = weight
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += num
        if not 0 <= padding_idx < num:
            raise ValueError(f"embedding: padding_idx must be within [-{num}, {num}), got {padding_idx}")
        if weight.requires_grad and _grad.enabled:  # block the gradient of that one row
            keep = np.ones((num, 1), weight.dtype.np)
            keep[padding_idx] = 0
            k = wrap_native(keep, weight._dev)
            w = weight * k + (weight * (1 - k)).detach()
    return w.index_select(0, input.reshape(-1)).reshape(input.shape + (weight.shape[1],))


# ---- losses -----------------------------------------------------------------------------------
def _class_indices_target(input, target, fn: str):
    """Validate (N, C, d1...) input against (N, d1...) integer target; return 2-D logits and 1-D target."""
    if target.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"{fn}: class-index targets must be int64 (or int32), got {target.dtype.name}; "
                           f"for class probabilities pass a float target of the input's shape")
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


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Softmax cross-entropy over dim 1 (dim 0 for an unbatched input).

    ``target`` holds class indices (int, shape (N, ...)) or class probabilities (float, the input's
    shape). Class indices go through one fused primitive (forward and backward).
    """
    _check_tensor(input, "cross_entropy")
    _check_tensor(target, "cross_entropy", "target")
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


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices, given log-probabilities over dim 1."""
    _check_tensor(input, "nll_loss")
    _check_tensor(target, "nll_loss", "target")
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


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    _check_tensor(input, "mse_loss")
    _check_reduction(reduction, "mse_loss")
    _same_shape(input, target, "mse_loss")
    d = input - target
    return _reduce(d * d, reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    _check_tensor(input, "l1_loss")
    _check_reduction(reduction, "l1_loss")
    _same_shape(input, target, "l1_loss")
    return _reduce((input - target).abs(), reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         reduction: str = "mean") -> Tensor:
    """BCE on probabilities; logs are clamped at -100 as in PyTorch so a 0 or 1 gives a finite loss."""
    _check_tensor(input, "binary_cross_entropy")
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
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """BCE of sigmoid(input), computed stably as (1 - t) x + (1 + (pw - 1) t) softplus(-x)."""
    _check_tensor(input, "binary_cross_entropy_with_logits")
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
