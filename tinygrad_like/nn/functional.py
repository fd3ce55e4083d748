"""``tl.nn.functional``: layers and losses as functions, with PyTorch's names and arguments.

Convolution is im2col + one matrix multiply; max-pool, linear, layer norm, softmax cross-entropy, attention
and dropout are single fused primitives; the rest is composed from Tensor ops, so every function here is
differentiable (twice, with ``create_graph=True``). Each family lives with its graph nodes in
``tinygrad_like.ops`` (``activation``, ``dropout``, ``linear``, ``normalization``, ``distance``, ``loss``,
``attention``; convolution and pooling in ``nn``) or in ``functional_conv`` / ``_pool`` / ``_resample`` /
``_sparse``; this module gathers them under PyTorch's names.

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

import numpy as np

from ..functions import cat, one_hot  # noqa: F401 - re-exported: F.one_hot as in PyTorch
from ..functions import pad as _functions_pad
from ..ops._nn_args import _check_tensor
from ..ops.activation import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from ..ops.attention import (
    _canonical_mask,  # noqa: F401 - nn.transformer uses it as F._canonical_mask
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from ..ops.distance import cosine_similarity, pairwise_distance
from ..ops.dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from ..ops.linear import bilinear, linear
from ..ops.loss import (
    _REDUCTIONS,  # noqa: F401 - nn.loss uses it as F._REDUCTIONS
    _legacy_reduction,  # noqa: F401 - nn.loss uses it as F._legacy_reduction
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from ..ops.normalization import batch_norm, group_norm, instance_norm, layer_norm, normalize, rms_norm
from ..tensor import Tensor, wrap_native
from .functional_conv import (  # noqa: F401
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from .functional_pool import (  # noqa: F401
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
from .functional_resample import (  # noqa: F401
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from .functional_sparse import embedding, embedding_bag  # noqa: F401

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


# ---- padding ------------------------------------------------------------------------------------
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
    _check_tensor(input, "pad")
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
        idx = wrap_native(_pad_index(n, lo, hi, mode), input._dev) if input._dev.backend.is_host else \
            wrap_native(input._dev.backend.from_numpy(_pad_index(n, lo, hi, mode)), input._dev)
        out = out.index_select(d, idx)
    return out
