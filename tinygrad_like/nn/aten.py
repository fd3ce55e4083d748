"""The layer functions at ``torch``'s top level (``torch.conv2d``, ``torch.batch_norm``, ``torch.lstm``,
``torch.native_layer_norm``, ...), with torch's own positional orders: those of its C++ operators, which differ
from ``torch.nn.functional``'s in places (``torch.embedding(weight, indices)``, losses taking ``reduction`` as the
int 0 / 1 / 2 for none / mean / sum, ``torch.batch_norm`` taking ``weight`` before the running statistics, the RNN
functions taking a flat list of weights). Each is built on the ``nn.functional`` twin, so values and gradients are
the same. The ``batch_norm_*`` functions are the per-process statistics steps of synchronized batch norm.

>>> import tinygrad_like as tl
>>> x = tl.tensor([[1.0, 2.0, 3.0]])
>>> out, mean, rstd = tl.native_layer_norm(x, [3], None, None, 1e-5)
>>> mean.shape, round(mean.item(), 4)
(tl.Size([1, 1]), 2.0)
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..functions import cat, stack
from ..ops import conv as _conv
from ..ops import ctc as _ctc
from ..ops import distance as _distance
from ..ops import dropout as _dropout
from ..ops import embedding as _embedding
from ..ops import grid as _grid
from ..ops import loss as _loss
from ..ops import normalization as _norm
from ..ops import pooling as _pool
from ..ops.activation import celu, celu_, hardshrink, prelu, rrelu, rrelu_, selu, selu_, threshold, threshold_
from ..ops.linear import bilinear, linear
from ..ops.movement import pad as _pad
from ..ops.resample import channel_shuffle, native_channel_shuffle, pixel_shuffle, pixel_unshuffle
from ..tensor import Tensor
from ..unsupported import SPARSE, unsupported_function
from .rnn import _gru_step, _lstm_step, _rnn_step
from .utils.parametrizations import norm_except_dim

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout", "alpha_dropout_",
    "avg_pool1d", "batch_norm", "bilinear", "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle",
    "constant_pad_nd", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "convolution", "cosine_embedding_loss", "cosine_similarity", "ctc_loss", "dropout",
    "dropout_", "embedding", "embedding_bag", "embedding_renorm_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "feature_dropout", "feature_dropout_", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "group_norm", "gru",
    "gru_cell", "hardshrink", "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "lstm", "lstm_cell",
    "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "native_batch_norm",
    "native_channel_shuffle", "native_dropout", "native_group_norm", "native_layer_norm", "native_norm",
    "norm_except_dim", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu",
    "rms_norm", "rnn_relu", "rnn_relu_cell", "rnn_tanh", "rnn_tanh_cell", "rrelu", "rrelu_", "selu", "selu_",
    "threshold", "threshold_", "triplet_margin_loss", "batch_norm_stats", "batch_norm_elemt",
    "batch_norm_gather_stats", "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
    "batch_norm_backward_elemt", "batch_norm_update_stats",
]

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction) -> str:
    """torch's C++ operators take the reduction as an int (0 none, 1 mean, 2 sum); a string is taken too. Called
    without it, torch's top-level losses reduce nothing (the default is 0, unlike ``nn.functional``'s 'mean')."""
    if isinstance(reduction, str):
        return reduction
    if reduction not in _REDUCTION:
        raise ValueError(f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction!r}")
    return _REDUCTION[reduction]


# ---- convolution, pooling, padding -----------------------------------------------------------------------------------
conv1d, conv2d, conv3d = _conv.conv1d, _conv.conv2d, _conv.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = (_conv.conv_transpose1d, _conv.conv_transpose2d,
                                                        _conv.conv_transpose3d)
conv_tbc = _conv.conv_tbc


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation, transposed: bool,
                output_padding, groups: int) -> Tensor:
    """Any convolution by its spatial rank (``weight.ndim - 2``), direct or transposed, as ``torch.convolution``."""
    nd = weight.ndim - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, got shape {tuple(weight.shape)}")
    if transposed:
        fn = (conv_transpose1d, conv_transpose2d, conv_transpose3d)[nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = (conv1d, conv2d, conv3d)[nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def constant_pad_nd(input: Tensor, pad, value: float = 0) -> Tensor:
    """Constant padding, ``pad`` listing (before, after) widths from the last dim backwards (negative crops)."""
    return _pad(input, tuple(pad), "constant", value)


def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """``F.max_pool1d`` (an empty ``stride`` means the kernel size, as torch's operator)."""
    return _pool.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):
    """``F.max_pool1d(..., return_indices=True)``: the maxima and their indices."""
    return _pool.max_pool1d_with_indices(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """``F.max_pool2d``."""
    return _pool.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """``F.max_pool3d``."""
    return _pool.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def avg_pool1d(input: Tensor, kernel_size, stride=(), padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """``F.avg_pool1d``."""
    return _pool.avg_pool1d(input, kernel_size, stride or None, padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """``F.adaptive_avg_pool1d``."""
    return _pool.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size):
    """``F.adaptive_max_pool1d`` with its indices (torch's operator returns both)."""
    return _pool.adaptive_max_pool1d(input, output_size, True)


# ---- normalization ---------------------------------------------------------------------------------------------------
def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool = True) -> Tensor:
    """``F.batch_norm`` in torch's operator order (weight and bias before the running statistics)."""
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    """``F.instance_norm`` in torch's operator order."""
    return _norm.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:
    """``F.layer_norm``."""
    return _norm.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    """``F.group_norm``."""
    return _norm.group_norm(input, num_groups, weight, bias, eps)


rms_norm = _norm.rms_norm


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                      running_var: Tensor | None, training: bool, momentum: float, eps: float):
    """``(output, save_mean, save_invstd)``: batch norm and the batch's statistics it saved (empty in eval mode),
    the running statistics updated in place when training."""
    out = _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = input.new_zeros((0,))
        return out, empty, empty
    dims = [0, *range(2, input.ndim)]
    with grad_mode.no_grad():
        x = input.detach()
        mean = x.mean(dims)
        var = ((x - mean.reshape(1, -1, *([1] * (input.ndim - 2)))) ** 2).mean(dims)
        invstd = (var + eps).rsqrt()
    return out, mean, invstd


def native_layer_norm(input: Tensor, normalized_shape, weight: Tensor | None, bias: Tensor | None, eps: float):
    """``(output, mean, rstd)``, the statistics shaped ``input.shape[:axis] + (1,) * len(normalized_shape)``."""
    shape = tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else (normalized_shape,)
    out = _norm.layer_norm(input, shape, weight, bias, eps)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    with grad_mode.no_grad():
        x = input.detach()
        mean = x.mean(dims, keepdim=True)
        rstd = (((x - mean) ** 2).mean(dims, keepdim=True) + eps).rsqrt()
    return out, mean, rstd


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int, HxW: int,
                      group: int, eps: float):
    """``(output, mean, rstd)`` of group norm, the statistics of shape (N, group)."""
    out = _norm.group_norm(input, group, weight, bias, eps)
    with grad_mode.no_grad():
        x = input.detach().reshape(N, group, -1)
        mean = x.mean(-1)
        rstd = (((x - mean.unsqueeze(-1)) ** 2).mean(-1) + eps).rsqrt()
    return out, mean, rstd


# torch runs native_norm on sparse tensors only (a dense CPU tensor raises): here there are no sparse tensors
native_norm = unsupported_function("torch.native_norm", SPARSE)


# ---- the synchronized batch norm's per-process steps (one process: the world is this batch) -------------------------
def _channel_view(t: Tensor, ndim: int) -> Tensor:
    return t.reshape(1, -1, *([1] * (ndim - 2)))


def batch_norm_stats(input: Tensor, eps: float):
    """``(mean, invstd)`` of each channel of this process's batch."""
    dims = [0, *range(2, input.ndim)]
    mean = input.mean(dims)
    var = ((input - _channel_view(mean, input.ndim)) ** 2).mean(dims)
    return mean, (var + eps).rsqrt()


def batch_norm_elemt(input: Tensor, weight: Tensor | None, bias: Tensor | None, mean: Tensor, invstd: Tensor,
                     eps: float) -> Tensor:
    """Normalise ``input`` with given per-channel statistics, then scale and shift."""
    out = (input - _channel_view(mean, input.ndim)) * _channel_view(invstd, input.ndim)
    if weight is not None:
        out = out * _channel_view(weight, input.ndim)
    if bias is not None:
        out = out + _channel_view(bias, input.ndim)
    return out


def batch_norm_gather_stats_with_counts(input: Tensor, mean: Tensor, invstd: Tensor, running_mean: Tensor | None,
                                        running_var: Tensor | None, momentum: float, eps: float, counts: Tensor):
    """Combine per-process ``(mean, invstd)`` rows (one per process, ``counts`` samples each) into the global
    statistics, updating the running ones (with the unbiased variance) in place."""
    counts = counts.to(mean.dtype).reshape(-1, 1)
    total = counts.sum()
    g_mean = (mean * counts).sum(0) / total
    var_n = 1 / (invstd * invstd) - eps
    g_var = ((var_n + (mean - g_mean) ** 2) * counts).sum(0) / total
    with grad_mode.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(g_mean * momentum)
        if running_var is not None:
            n = float(total)
            running_var.mul_(1 - momentum).add_(g_var * (n / max(n - 1, 1)) * momentum)
    return g_mean, (g_var + eps).rsqrt()


def batch_norm_gather_stats(input: Tensor, mean: Tensor, invstd: Tensor, running_mean: Tensor | None,
                            running_var: Tensor | None, momentum: float, eps: float, count: int):
    """``batch_norm_gather_stats_with_counts`` with the same ``count`` for every process."""
    counts = mean.new_full((mean.shape[0],), float(count))
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum, eps, counts)


def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
                            momentum: float):
    """``(mean, var)`` of each channel (biased), the running statistics updated in place (unbiased variance)."""
    dims = [0, *range(2, input.ndim)]
    mean = input.mean(dims)
    var = ((input - _channel_view(mean, input.ndim)) ** 2).mean(dims)
    n = input.numel() // input.shape[1]
    with grad_mode.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var * (n / max(n - 1, 1)) * momentum)
    return mean, var


def batch_norm_backward_reduce(grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor,
                               weight: Tensor | None, input_g: bool, weight_g: bool, bias_g: bool):
    """``(sum_dy, sum_dy_xmu, grad_weight, grad_bias)`` per channel: the reductions of batch norm's backward."""
    dims = [0, *range(2, input.ndim)]
    xmu = input - _channel_view(mean, input.ndim)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * xmu).sum(dims)
    grad_weight = sum_dy_xmu * invstd if weight_g else None
    grad_bias = sum_dy if bias_g else None
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out: Tensor, input: Tensor, mean: Tensor, invstd: Tensor,
                              weight: Tensor | None, sum_dy: Tensor, sum_dy_xmu: Tensor, count: Tensor) -> Tensor:
    """The input gradient of batch norm from the reduced sums (over all processes' ``count`` samples)."""
    n = float(count.sum()) if isinstance(count, Tensor) else float(count)
    nd = input.ndim
    mean_dy = _channel_view(sum_dy / n, nd)
    mean_dy_xmu = _channel_view(sum_dy_xmu / n, nd)
    inv = _channel_view(invstd, nd)
    xmu = input - _channel_view(mean, nd)
    scale = inv if weight is None else inv * _channel_view(weight, nd)
    return (grad_out - mean_dy - xmu * inv * inv * mean_dy_xmu) * scale


# ---- dropout ---------------------------------------------------------------------------------------------------------
def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.dropout(input, p, training=train)``."""
    return _dropout.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``dropout`` written into ``input``."""
    return _dropout.dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout of whole channels (dim 1) of (N, C, *), as ``F.dropout2d`` / ``dropout3d``."""
    return _dropout._dropout_impl(input, p, train, False, "feature_dropout", feature=True, alpha=False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``feature_dropout`` written into ``input``."""
    return _dropout._dropout_impl(input, p, train, True, "feature_dropout_", feature=True, alpha=False)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.alpha_dropout`` (SELU-preserving dropout)."""
    return _dropout.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``alpha_dropout`` written into ``input``."""
    return _dropout.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.feature_alpha_dropout``."""
    return _dropout.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``feature_alpha_dropout`` written into ``input``."""
    return _dropout.feature_alpha_dropout(input, p, train, inplace=True)


def native_dropout(input: Tensor, p: float, train: bool | None):
    """``(output, mask)``: dropout and the boolean mask of the kept elements (all kept when not training)."""
    if not train or p == 0:
        return input.clone(), input.new_ones(input.shape).bool()
    keep = input.new_empty(input.shape).bernoulli_(1 - p).bool()
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * keep.to(input.dtype) * scale, keep


# ---- lookups ---------------------------------------------------------------------------------------------------------
def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """``F.embedding(indices, weight)`` in torch's operator order (weight first; ``padding_idx=-1``: none)."""
    return _embedding.embedding(indices, weight, None if padding_idx == -1 else padding_idx, None, 2.0,
                                scale_grad_by_freq, sparse)


_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False, mode: int = 0,
                  sparse: bool = False, per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None):
    """``F.embedding_bag`` in torch's operator order (``mode`` 0 / 1 / 2 for sum / mean / max) for 1-D ``indices``
    with ``offsets``; returns torch's four tensors: the output, then its CPU kernel's bookkeeping (the bag of each
    index, each bag's size, and in max mode the row each maximum came from), as torch fills them per mode."""
    mode_name = mode if isinstance(mode, str) else _BAG_MODES[mode]
    out = _embedding.embedding_bag(indices, weight, offsets, None, 2.0, scale_grad_by_freq, mode_name, sparse,
                                   per_sample_weights, include_last_offset, padding_idx)
    flat = indices.numpy(force=True).reshape(-1).astype(np.int64)
    offs = offsets.numpy(force=True).reshape(-1).astype(np.int64)
    n_bags = out.shape[0]
    bounds = np.append(offs[:n_bags], len(flat))
    sizes = np.diff(bounds)
    long = offsets.new_zeros((0,)).long()
    bag_of = np.repeat(np.arange(n_bags), sizes)
    if mode_name == "sum":  # (torch's fast float32 / float16 sum kernel leaves the bag of each index out)
        zeros = long.new_zeros((n_bags,))
        fast = weight.dtype in (dtypes.float32, dtypes.float16)
        return out, long if fast else long.new_tensor(bag_of), zeros, zeros.clone()
    if mode_name == "mean":
        size_t = long.new_tensor(sizes)
        return out, long.new_tensor(bag_of), size_t, size_t.clone()
    rows = weight.detach().numpy(force=True)
    max_idx = np.zeros((n_bags, rows.shape[1]), dtype=np.int64)
    for b in range(n_bags):
        members = flat[bounds[b]:bounds[b + 1]]
        if len(members):
            max_idx[b] = members[rows[members].argmax(0)]
    return out, long.new_tensor(bag_of), long.new_tensor(sizes), long.new_tensor(max_idx)


def embedding_renorm_(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """Rescale in place the rows of ``weight`` that ``indices`` names whose ``norm_type``-norm exceeds
    ``max_norm`` (what ``embedding(..., max_norm=)`` does before the lookup); returns ``weight``."""
    with grad_mode.no_grad():
        _embedding._renorm_(weight, indices, max_norm, norm_type)
    return weight


# ---- spatial transformers ----------------------------------------------------------------------------------------
def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """``F.affine_grid`` (``align_corners`` required, as torch's operator)."""
    return _grid.affine_grid(theta, list(size), align_corners)


_GRID_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_GRID_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``F.grid_sample`` with torch's operator codes (mode 0 / 1 / 2: bilinear / nearest / bicubic; padding 0 / 1 /
    2: zeros / border / reflection)."""
    return _grid.grid_sample(input, grid, _GRID_MODES[interpolation_mode], _GRID_PADDING[padding_mode],
                             align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 4-D input."""
    if input.ndim != 4:
        raise RuntimeError(f"grid_sampler_2d: expected a 4-D input, got {input.ndim}-D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 5-D input."""
    if input.ndim != 5:
        raise RuntimeError(f"grid_sampler_3d: expected a 5-D input, got {input.ndim}-D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


# ---- distances and losses, in torch's operator order --------------------------------------------------------------
cosine_similarity = _distance.cosine_similarity
pairwise_distance = _distance.pairwise_distance
pdist = _distance.pdist


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    return _loss.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                  pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    return _loss.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:
    return _loss.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:
    return _loss.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    return _loss.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    return _loss.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    return _loss.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    return _ctc.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction),
                         zero_infinity)


# ---- recurrent layers as functions of a flat weight list ---------------------------------------------------------
def _layer_weights(params, has_biases: bool, num_layers: int, dirs: int) -> list:
    params = list(params)
    per = len(params) // (num_layers * dirs)
    if per * num_layers * dirs != len(params) or per not in ((4, 5) if has_biases else (2, 3)):
        raise RuntimeError(f"expected {num_layers * dirs} groups of {'4' if has_biases else '2'} weights (w_ih, w_hh"
                           f"{', b_ih, b_hh' if has_biases else ''}, and w_hr for projections), got {len(params)}")
    groups = []
    for i in range(0, len(params), per):
        g = params[i:i + per]
        w_ih, w_hh = g[0], g[1]
        b_ih, b_hh = (g[2], g[3]) if has_biases else (None, None)
        w_hr = g[-1] if per in (3, 5) else None
        groups.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return groups


def _run(mode: str, input: Tensor, hx: list, params, has_biases: bool, num_layers: int, dropout_p: float,
         train: bool, bidirectional: bool, batch_first: bool):
    dirs = 2 if bidirectional else 1
    groups = _layer_weights(params, has_biases, num_layers, dirs)
    unbatched = input.ndim == 2
    x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if batch_first else input)
    states = [h.unsqueeze(1) if unbatched else h for h in hx]
    finals: list[list[Tensor]] = [[] for _ in states]
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            w_ih, w_hh, b_ih, b_hh, w_hr = groups[layer * dirs + d]
            idx = layer * dirs + d
            st = [s[idx] for s in states]
            xp = linear(x, w_ih, b_ih)
            steps = range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])
            ys = [None] * x.shape[0]
            for t in steps:
                if mode == "LSTM":
                    st = list(_lstm_step(xp[t], st[0], st[1], w_hh, b_hh, w_hr))
                elif mode == "GRU":
                    st = [_gru_step(xp[t], st[0], w_hh, b_hh)]
                else:
                    st = [_rnn_step(xp[t], st[0], w_hh, b_hh, mode == "RNN_RELU")]
                ys[t] = st[0]
            outs.append(stack(ys))
            for k, s in enumerate(st):
                finals[k].append(s)
        x = outs[0] if dirs == 1 else cat(outs, -1)
        if dropout_p and train and layer < num_layers - 1:
            x = _dropout.dropout(x, dropout_p, True)
    out = x.squeeze(1) if unbatched else (x.transpose(0, 1) if batch_first else x)
    hs = [stack(f).squeeze(1) if unbatched else stack(f) for f in finals]
    return (out, *hs)


def lstm(input: Tensor, hx, params, has_biases: bool, num_layers: int, dropout: float, train: bool,
         bidirectional: bool, batch_first: bool):
    """``(output, h_n, c_n)`` of a multi-layer LSTM over ``input`` from ``hx = (h_0, c_0)`` with ``params`` the flat
    weight list of ``nn.LSTM`` (``_flat_weights``), as ``torch.lstm``."""
    return _run("LSTM", input, list(hx), params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def gru(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int, dropout: float, train: bool,
        bidirectional: bool, batch_first: bool):
    """``(output, h_n)`` of a multi-layer GRU with ``nn.GRU``'s flat weight list, as ``torch.gru``."""
    return _run("GRU", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def rnn_tanh(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int, dropout: float, train: bool,
             bidirectional: bool, batch_first: bool):
    """``(output, h_n)`` of a multi-layer Elman RNN (tanh), as ``torch.rnn_tanh``."""
    return _run("RNN_TANH", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def rnn_relu(input: Tensor, hx: Tensor, params, has_biases: bool, num_layers: int, dropout: float, train: bool,
             bidirectional: bool, batch_first: bool):
    """``(output, h_n)`` of a multi-layer Elman RNN (ReLU), as ``torch.rnn_relu``."""
    return _run("RNN_RELU", input, [hx], params, has_biases, num_layers, dropout, train, bidirectional, batch_first)


def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None):
    """One LSTM step: ``(h', c')`` from ``hx = (h, c)``."""
    h, c = hx
    return _lstm_step(linear(input, w_ih, b_ih), h, c, w_hh, b_hh, None)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """One GRU step."""
    return _gru_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """One Elman RNN step with tanh."""
    return _rnn_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh, False)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
                  b_hh: Tensor | None = None) -> Tensor:
    """One Elman RNN step with ReLU."""
    return _rnn_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh, True)

