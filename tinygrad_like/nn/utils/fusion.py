"""Folding an eval-mode BatchNorm into the convolution or linear layer before it (one layer at inference):
``fuse_conv_bn_eval``, ``fuse_linear_bn_eval`` and the weight arithmetic they share."""

from __future__ import annotations

import copy

from ...tensor import Tensor
from ..module import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` whose weight and bias include ``bn``'s normalisation (both must be in eval mode)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval: the BatchNorm must track running statistics")
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None, transpose: bool = False):
    """``conv_w * bn_w / sqrt(var + eps)`` per output channel and the matching bias, as Parameters."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = bn_rm.new_zeros(bn_rm.shape)
    if bn_w is None:
        bn_w = bn_rm.new_ones(bn_rm.shape)
    if bn_b is None:
        bn_b = bn_rm.new_zeros(bn_rm.shape)
    rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = [1, -1] + [1] * (conv_w.ndim - 2) if transpose else [-1, 1] + [1] * (conv_w.ndim - 2)
    w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(w_dtype)
    b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(b_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` whose weight and bias include ``bn``'s normalisation (both in eval mode)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or bn.num_features must be 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_linear_bn_eval: the BatchNorm must track running statistics")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor, bn_b: Tensor):
    """``linear_w * bn_w / sqrt(var + eps)`` per output row and the matching bias, as Parameters."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = bn_rm.new_zeros(bn_rm.shape)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    w = linear_w * scale.unsqueeze(-1).to(w_dtype)
    b = ((linear_b - bn_rm) * scale + bn_b).to(b_dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)
