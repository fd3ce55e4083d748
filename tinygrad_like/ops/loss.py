"""Losses as functions (``cross_entropy``, ``nll_loss``, ``mse_loss``, ...), with PyTorch's arguments (the
deprecated ``size_average`` / ``reduce`` included), and the nodes of the softmax cross-entropy.

Cross-entropy of class indices is one fused node (:class:`CrossEntropy`) whose fused backward runs as a node of its
own (:class:`CrossEntropyBackward`); its own ``backward`` is written with Tensor ops, so ``create_graph=True``
differentiates it again. The other losses are composed from Tensor ops.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> F.mse_loss(tl.tensor([1.0, 2.0]), tl.tensor([1.0, 4.0]))
tensor(2.)
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function, VersionMismatchError
from ..tensor_base import TensorBase
from ._nn_args import _check_tensor, _const
from ._util import check_index_device
from .distance import pairwise_distance
from .elementwise import where
from .linear import linear
from .reduce import SoftmaxBackward

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

__all__ = [
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "smooth_l1_loss", "huber_loss", "kl_div", "margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "soft_margin_loss", "hinge_embedding_loss", "gaussian_nll_loss", "poisson_nll_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_with_distance_loss",
    "linear_cross_entropy", "LinearCrossEntropyOptions",
]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class CrossEntropy(Function):
    """Per-row softmax cross-entropy of (N, C) logits against class indices, in one pass.

    Label smoothing, class weights and ``ignore_index`` are folded into per-row coefficients
    ``a`` so that the gradient is ``g * (softmax * sum(a) - a)``.
    """

    __slots__ = ("logp", "coef", "coef_sum", "ignore_index", "smoothing", "logits", "logits_version")

    def forward(self, logits, target, weight, ignore_index, smoothing):
        be = logits._dev.backend
        self.ignore_index, self.smoothing = ignore_index, smoothing
        loss, self.logp, self.coef, self.coef_sum = be.cross_entropy(
            logits._x, target._x, None if weight is None else weight._x, ignore_index, smoothing)
        # The gradient reads the log-probabilities kept privately (as torch keeps log_softmax's result), so the
        # logits may be written in place after the loss. Only a graph of the backward (create_graph), or a backend
        # whose kept state is the logits themselves, reads the logits: those paths check their version by hand.
        self.save_for_backward()
        self.logits, self.logits_version = logits, logits._version
        return loss

    def _check_logits(self) -> None:
        logits = self.logits
        if logits._version != self.logits_version:
            st = logits._storage
            raise VersionMismatchError(self, 0, logits, self.logits_version, st.version,
                                       st.bumps_since(self.logits_version))

    def backward(self, g):
        self.saved_tensors  # noqa: B018 - raises if freed by an earlier backward
        if _grad_mode.enabled or getattr(g._dev.backend, "cross_entropy_reads_logits", False):
            self._check_logits()
        return CrossEntropyBackward.apply(g, self.logits, self), None, None, None, None

    def release(self) -> None:
        super().release()
        self.logp = self.coef = self.coef_sum = self.logits = None


class CrossEntropyBackward(Function):
    """``g * (softmax(logits) * sum(a) - a)`` per row, as one fused kernel from what the loss's forward kept.
    Its inputs are the incoming gradient and the logits, so a graph of it reaches the logits' history."""

    __slots__ = ("coef", "coef_sum")

    def forward(self, g, logits, loss: CrossEntropy):
        be = g._dev.backend
        if _grad_mode.enabled:
            self.save_for_backward(g, logits)
            self.coef, self.coef_sum = be.cross_entropy_coefs(loss.logp, loss.coef, loss.coef_sum)
        return be.cross_entropy_backward(g._x, loss.logp, loss.coef, loss.coef_sum)

    def backward(self, gg):
        g, logits = self.saved_tensors
        dev = gg._dev
        coef, coef_sum = gg._wrap(self.coef, dev), gg._wrap(self.coef_sum, dev).unsqueeze(1)
        p = logits.softmax(1)
        gg_g = (gg * (p * coef_sum - coef)).sum(1)
        gg_logits = SoftmaxBackward.apply(gg * g.unsqueeze(1) * coef_sum, p, 1)
        return gg_g, gg_logits, None


# ---- the reductions and argument checks the losses share ------------------------------------------------------------
_REDUCTIONS = ("none", "mean", "sum")


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


# ---- the losses ------------------------------------------------------------------------------------------------------
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
    loss = CrossEntropy.apply(logits, flat, weight, ignore_index, float(label_smoothing))
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
    safe = flat._wrap(np.where(keep, t, 0).astype(np.int64), flat._dev)
    coef = keep.astype(logp.dtype.np)
    if weight is not None:
        coef = coef * weight.detach().numpy()[np.where(keep, t, 0)]
    picked = logp.gather(1, safe.unsqueeze(1)).squeeze(1)
    loss = -picked * flat._wrap(coef.astype(logp.dtype.np), flat._dev)
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
    """BCE of sigmoid(input), computed stably as (1 - t) x + (1 + (pw - 1) t) softplus(-x), in one graph node
    (torch's ``BinaryCrossEntropyWithLogitsBackward0``)."""
    _check_tensor(input, "binary_cross_entropy_with_logits")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    _same_shape(input, target, "binary_cross_entropy_with_logits")
    return BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight, reduction)


def _bce_with_logits(x, t, weight, pos_weight):
    """The unreduced loss, in Tensor ops: ``(1 - t) x + (1 + (pw - 1) t) softplus(-x)``, weighted."""
    sp = (-x).softplus()  # log(1 + exp(-x)), exact to float rounding (linear past the threshold)
    loss = (1 - t) * x + (sp if pos_weight is None else (1 + (pos_weight - 1) * t) * sp)
    return loss if weight is None else loss * weight


class BinaryCrossEntropyWithLogits(Function):
    """The loss of ``binary_cross_entropy_with_logits`` as one node: its gradient is ``(1 + (pw - 1) t) sigmoid(x)
    - pw t`` for the logits (``sigmoid(x) - t`` without ``pos_weight``) and ``(pw - 1) softplus(-x) - x`` for the
    target, weighted and scaled by the reduction."""

    __slots__ = ("reduction", "n")

    def forward(self, x, t, weight, pos_weight, reduction):
        self.reduction, self.n = reduction, x.numel()
        with grad_mode.no_grad():
            out = _reduce(_bce_with_logits(x, t, weight, pos_weight), reduction)
        if _grad_mode.enabled:
            self.save_for_backward(x, t, weight, pos_weight)
        return out._x

    def backward(self, g):
        x, t, weight, pos_weight = self.saved_tensors
        for name, w in (("weight", weight), ("pos_weight", pos_weight)):
            if w is not None and w.requires_grad:
                raise RuntimeError(f"the derivative for '{name}' is not implemented.")
        if self.reduction == "mean":
            g = g / self.n
        gx = gt = None
        if x.requires_grad:
            sig = x.sigmoid()
            gx = sig - t if pos_weight is None else (1 + (pos_weight - 1) * t) * sig - pos_weight * t
            gx = (gx if weight is None else gx * weight) * g
        if t.requires_grad:
            gt = -x if pos_weight is None else (pos_weight - 1) * (-x).softplus() - x
            gt = (gt if weight is None else gt * weight) * g
        return gx, gt, None, None, None


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


# ---- the probabilistic and multi-class margin losses -----------------------------------------------------------------
def _clamped_below(x: Tensor, eps: float) -> Tensor:
    """``x`` clamped at ``eps`` in value with the gradient of ``x`` itself (torch clamps a clone under no_grad)."""
    return x + (x.clamp(min=eps) - x).detach()


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """``0.5 * (log(var) + (input - target)**2 / var)`` (+ ``0.5 * log(2*pi)`` when ``full``), var clamped at eps."""
    _check_reduction(reduction, "gaussian_nll_loss")
    if not isinstance(var, TensorBase):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.new_full(input.shape, float(var))
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError(f"var is of incorrect size: got {tuple(var.shape)} for input of size "
                             f"{tuple(input.shape)}; expected the input's shape, or it with its last dim 1 or gone")
    if bool((var.detach() < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = _clamped_below(var, eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of ``target ~ Poisson(rate)``: ``exp(input) - target * input`` (rate = exp(input)),
    or ``input - target * log(input + eps)``; ``full`` adds Stirling's term where target > 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "poisson_nll_loss")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = target > 1
        t = where(big, target, target.new_ones(()))  # (the term is masked where target <= 1: keep log() finite)
        stirling = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + where(big, stirling, stirling.new_zeros(()))
    return _reduce(loss, reduction)


def _class_rows(input, target, fn: str):
    """(C,) or (N, C) input and its (N,) int64 target -> 2-D input, 1-D target, whether it was unbatched."""
    if input.ndim not in (1, 2):
        raise RuntimeError(f"{fn}: expected a 1-D or 2-D input (C) or (N, C), got shape {tuple(input.shape)}")
    unbatched = input.ndim == 1
    x = input.unsqueeze(0) if unbatched else input
    t = target.reshape(-1)
    if t.dtype.is_floating_point or t.dtype is dtypes.bool_:
        raise RuntimeError(f"{fn}: expected an integer target of class indices, got {t.dtype.name}")
    if t.shape[0] != x.shape[0]:
        raise RuntimeError(f"{fn}: inconsistent target size: got {tuple(target.shape)} for input of shape "
                           f"{tuple(input.shape)}")
    return x, t, unbatched


def _per_sample(loss, reduction: str, unbatched: bool):
    if reduction == "none" and unbatched:
        return loss.reshape(())
    return _reduce(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """Multi-class hinge: ``sum_{j != y} max(0, margin - x[y] + x[j])**p * weight[y] / C`` per sample."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "multi_margin_loss")
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x, t, unbatched = _class_rows(input, target, "multi_margin_loss")
    n, c = x.shape
    tn = t.numpy().astype(np.int64)
    if ((tn < 0) | (tn >= c)).any():
        raise IndexError(f"multi_margin_loss: target out of range: each must be in [0, {c - 1}], got {tn.tolist()}")
    other = _const((np.arange(c)[None, :] != tn[:, None]).astype(x.dtype.np), x)
    x_y = x.gather(1, t.reshape(-1, 1))
    h = (margin - x_y + x).clamp_min(0)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight.gather(0, t).reshape(-1, 1)
    return _per_sample((h * other).sum(1) / c, reduction, unbatched)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``sum_{j in targets} sum_{i not in targets} max(0, 1 - (x[j] - x[i])) / C``; each row of ``target`` lists
    the sample's classes up to its first -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "multilabel_margin_loss")
    if input.ndim not in (1, 2) or target.shape != input.shape:
        raise RuntimeError(f"multilabel_margin_loss: expected input and target of the same shape (C) or (N, C), got "
                           f"{tuple(input.shape)} and {tuple(target.shape)}")
    unbatched = input.ndim == 1
    x = input.reshape(1, -1) if unbatched else input
    tn = target.numpy().reshape(x.shape).astype(np.int64)
    n, c = x.shape
    count = np.zeros((n, c))
    for row in range(n):
        for j in tn[row]:
            if j < 0:
                break
            if j >= c:
                raise IndexError(f"multilabel_margin_loss: target {j} out of range [0, {c - 1}]")
            count[row, j] += 1
    pairs = count[:, :, None] * (count == 0)[:, None, :]  # (N, j target, i not target)
    h = (1 - x.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)
    loss = (h * _const(pairs.astype(x.dtype.np), x)).sum((1, 2)) / c
    return _per_sample(loss, reduction, unbatched)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Per-class binary cross-entropy with logits, averaged over the classes (the last dim)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "multilabel_soft_margin_loss")
    loss = target * (-input).softplus(1.0, 20.0) + (1 - target) * input.softplus(1.0, 20.0)  # -log(sigmoid(+-x))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.shape[-1]
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance function (pairwise_distance by default)."""
    _check_reduction(reduction, "triplet_margin_with_distance_loss")
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
    a, pos, neg = anchor.ndim, positive.ndim, negative.ndim
    if not a == pos == neg:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pos}D, and negative {neg}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# ---- the linear layer and cross-entropy in one call ------------------------------------------------------------------
@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """torch's configuration of the chunked ``linear_cross_entropy`` (never materialising the full logits). Here it
    is accepted and recorded, and the reference path runs: the values are the same, only memory differs."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``: a classifier head and its loss.
    ``linear_weight`` is (num_classes, *out_features, in_features) (K-dimensional losses for extra dims)."""
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    rows = math.prod(out_features, start=num_classes)
    w2 = linear_weight.reshape(rows, in_features)
    b2 = None if linear_bias is None else linear_bias.reshape(rows)
    logits = linear(input, w2, b2).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)
