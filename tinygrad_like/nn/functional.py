"""``tl.nn.functional``: layers and losses as functions, with PyTorch's names and arguments.

Convolution is im2col + one matrix multiply; max-pool, linear, layer norm, softmax cross-entropy, attention
and dropout are single fused primitives; the rest is composed from Tensor ops, so every function here is
differentiable (twice, with ``create_graph=True``). Each family lives with its graph nodes in
``tinygrad_like.ops`` (``activation``, ``dropout``, ``linear``, ``normalization``, ``distance``, ``loss``,
``attention``, ``conv``, ``pooling``, ``resample``, ``embedding``, ``padding``); this module gathers them under
PyTorch's names.

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

from ..functions import cat, one_hot  # noqa: F401 - re-exported: F.one_hot as in PyTorch
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
from ..ops.distance import cosine_similarity, pairwise_distance
from ..ops.dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from ..ops.embedding import embedding, embedding_bag  # noqa: F401
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
    # convolution, pooling, resampling, patches, lookups (ops/conv.py, pooling.py, resample.py, embedding.py)
    "conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold", "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "max_unpool1d",
    "max_unpool2d", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
    "pixel_unshuffle", "embedding_bag",
    # 3-D pooling (ops/pooling.py)
    "max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "max_unpool3d",
]
