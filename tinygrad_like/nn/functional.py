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

import enum as _enum
import functools as _functools

from ..functions import cat, one_hot  # noqa: F401 - re-exported: F.one_hot as in PyTorch
from ..ops.activation import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
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
    conv_tbc,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from ..ops.ctc import ctc_loss
from ..ops.distance import cosine_similarity, pairwise_distance, pdist
from ..ops.dropout import alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout
from ..ops.embedding import embedding, embedding_bag  # noqa: F401
from ..ops.grid import affine_grid, grid_sample
from ..ops.linear import bilinear, linear
from ..ops.loss import (
    _REDUCTIONS,  # noqa: F401 - nn.loss uses it as F._REDUCTIONS
    _legacy_reduction,  # noqa: F401 - nn.loss uses it as F._legacy_reduction
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    linear_cross_entropy,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ..ops.normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
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
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
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
    channel_shuffle,
    interpolate,
    native_channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from ..tensor import Tensor
from ..unsupported import MARK as _MARK
from ..unsupported import unsupported_function as _unsupported_function

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
    # spatial transformers, CTC, the other losses, pooling and shuffles
    "affine_grid", "grid_sample", "ctc_loss", "gaussian_nll_loss", "poisson_nll_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_with_distance_loss",
    "linear_cross_entropy", "gumbel_softmax", "local_response_norm", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "channel_shuffle", "native_channel_shuffle", "pdist", "conv_tbc",
    # torch's helpers and the float8 GEMMs
    "Tensor", "assert_int_or_pair", "boolean_dispatch", "has_torch_function", "has_torch_function_unary",
    "has_torch_function_variadic", "handle_torch_function", "ScalingType", "SwizzleType", "scaled_mm", "grouped_mm",
    "scaled_grouped_mm",
]



# ---- torch's helpers that live in nn.functional ----------------------------------------------------------------------
def assert_int_or_pair(arg: list[int], arg_name: str, message: str) -> None:
    """torch's argument check: ``arg`` is an int or a pair, else an AssertionError of ``message``."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls ``if_true`` or ``if_false`` by the boolean argument ``arg_name`` (at ``arg_index``),
    as torch builds ``max_pool2d`` from its ``return_indices`` forms."""
    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    fn.__doc__ = if_true.__doc__ or if_false.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


# ``__torch_function__`` overrides: tinygrad_like's tensors have no such protocol, so no argument ever overrides.
def has_torch_function(relevant_args) -> bool:
    """False: no tensor here carries a ``__torch_function__`` override."""
    return False


def has_torch_function_unary(input) -> bool:
    """False (see :func:`has_torch_function`)."""
    return False


def has_torch_function_variadic(*args) -> bool:
    """False (see :func:`has_torch_function`)."""
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call ``public_api`` itself: with no overrides, torch's dispatch comes to that."""
    return public_api(*args, **kwargs)


class ScalingType(_enum.Enum):
    """The scaling recipes of torch's float8 ``scaled_mm`` (kept for the names; the GEMMs are unsupported)."""

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(_enum.Enum):
    """The scale layouts of torch's float8 ``scaled_mm``."""

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


_FLOAT8 = ("float8 and grouped GEMMs are fused CUDA kernels of recent GPUs (Hopper and later); tinygrad_like has no "
           "float8 dtypes or such kernels: use matmul (or bmm per group) in a floating point dtype")


def _with_signature(fn):
    """``fn``'s signature (torch's) on the clear error of the same name (so the census sees torch's parameters)."""
    err = _unsupported_function(f"torch.nn.functional.{fn.__name__}", _FLOAT8)

    def unsupported(*args, **kwargs):
        return err(*args, **kwargs)

    _functools.update_wrapper(unsupported, fn)
    setattr(unsupported, _MARK, getattr(err, _MARK))
    return unsupported


@_with_signature
def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None, swizzle_b=None,
              bias=None, output_dtype=None, contraction_dim=(), use_fast_accum: bool = False):
    """Not supported: a float8 GEMM with scales (see the error)."""


@_with_signature
def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Not supported: a grouped GEMM kernel (see the error)."""


@_with_signature
def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
                      swizzle_b=None, bias=None, offs=None, output_dtype=None, contraction_dim=(),
                      use_fast_accum: bool = False):
    """Not supported: a float8 grouped GEMM (see the error)."""
