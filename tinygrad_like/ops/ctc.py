"""Connectionist temporal classification: ``ctc_loss``, the negative log likelihood of a target sequence summed over
all its alignments to the (longer) input sequence, by the forward-backward recursion in log space.

The recursion runs on the host in float64, one sample at a time and vectorised over the extended target (the
target with a blank between and around its labels). The gradient is torch's: ``exp(log_probs) - posterior`` per
class (the gradient with respect to the logits of a ``log_softmax``, which is what ``log_probs`` is in practice), so
that a graph ``log_softmax -> ctc_loss`` gives the same gradients as torch's.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> lp = tl.tensor([[[0.5, 0.5]], [[0.5, 0.5]]]).log()   # T=2, N=1, C=2
>>> round(F.ctc_loss(lp, tl.tensor([[1]]), [2], [1], reduction="sum").item(), 4)  # 3 alignments of 1/4 each
0.2877
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..autograd.function import Function
from ..tensor_base import TensorBase
from ._nn_args import _const

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

__all__ = ["ctc_loss"]

_NEG_INF = -np.inf


def _logaddexp(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = np.logaddexp(out, x)
    return out


def _sample(lp: np.ndarray, target: np.ndarray, blank: int):
    """The negative log likelihood of one sample's ``target`` under its (T, C) ``lp``, and torch's gradient."""
    t_len, c = lp.shape
    ext = np.full(2 * len(target) + 1, blank, dtype=np.int64)
    ext[1::2] = target
    s_len = len(ext)
    skip = np.zeros(s_len, dtype=bool)  # s may come from s-2: a label differing from the label two before
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    alpha = np.full((t_len, s_len), _NEG_INF)
    beta = np.full((t_len, s_len), _NEG_INF)
    if t_len == 0:
        return (np.inf if len(target) else 0.0), np.zeros_like(lp)
    alpha[0, 0] = lp[0, blank]
    if s_len > 1:
        alpha[0, 1] = lp[0, ext[1]]
    for t in range(1, t_len):
        prev = alpha[t - 1]
        one = np.concatenate(([_NEG_INF], prev[:-1]))
        two = np.where(skip, np.concatenate(([_NEG_INF, _NEG_INF], prev[:-2])), _NEG_INF)
        alpha[t] = _logaddexp(prev, one, two) + lp[t, ext]
    beta[-1, -1] = lp[-1, blank]
    if s_len > 1:
        beta[-1, -2] = lp[-1, ext[-2]]
    skip_next = np.concatenate((skip[2:], [False, False]))  # s+2 may come from s
    for t in range(t_len - 2, -1, -1):
        nxt = beta[t + 1]
        one = np.concatenate((nxt[1:], [_NEG_INF]))
        two = np.where(skip_next, np.concatenate((nxt[2:], [_NEG_INF, _NEG_INF])), _NEG_INF)
        beta[t] = _logaddexp(nxt, one, two) + lp[t, ext]
    ends = alpha[-1, -1] if s_len == 1 else np.logaddexp(alpha[-1, -1], alpha[-1, -2])
    nll = -ends
    ab = alpha + beta
    lcab = np.full((t_len, c), _NEG_INF)
    for s in range(s_len):
        lcab[:, ext[s]] = np.logaddexp(lcab[:, ext[s]], ab[:, s])
    with np.errstate(invalid="ignore", over="ignore"):
        grad = np.exp(lp) - np.exp(lcab + nll - lp)
    return nll, grad


class CTCLoss(Function):
    """Per-sample CTC negative log likelihoods of (T, N, C) log-probabilities; torch's gradient is kept."""

    __slots__ = ("grad", "shape")

    def forward(self, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        lp = log_probs.numpy(force=True).astype(np.float64)
        t_max, n, _ = lp.shape
        losses = np.zeros(n)
        grad = np.zeros_like(lp)
        offset = 0
        for b in range(n):
            tl_b, il_b = int(target_lengths[b]), int(input_lengths[b])
            if targets.ndim == 1:
                target = targets[offset:offset + tl_b]
                offset += tl_b
            else:
                target = targets[b, :tl_b]
            nll, g = _sample(lp[:il_b, b], target, blank)
            if zero_infinity and np.isinf(nll):
                nll, g = 0.0, np.zeros_like(g)
            losses[b] = nll
            grad[:il_b, b] = g
        self.grad = grad.astype(log_probs.dtype.np)
        self.save_for_backward()
        return _const(losses.astype(log_probs.dtype.np), log_probs)._x

    def backward(self, g):
        self.saved_tensors  # noqa: B018 - raises if an earlier backward freed the gradient
        return g.reshape(1, -1, 1) * _const(self.grad, g), None, None, None, None, None

    def release(self) -> None:
        super().release()
        self.grad = None


def _lengths(v, n: int, name: str) -> np.ndarray:
    arr = v.numpy(force=True) if isinstance(v, TensorBase) else np.asarray(v)
    arr = arr.reshape(-1)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"ctc_loss: {name} must be integers, got {arr.dtype}")
    if len(arr) != n:
        raise RuntimeError(f"ctc_loss: expected {name} to have {n} entries (one per sample), got {len(arr)}")
    return arr.astype(np.int64)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor, target_lengths: Tensor, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """CTC loss of (T, N, C) (or unbatched (T, C)) log-probabilities against (N, S) padded or 1-D concatenated
    targets; ``reduction='mean'`` divides each loss by its target length, then averages over the batch."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of shape (T, N, C) or (T, C), got {tuple(log_probs.shape)}")
    t_max, n, c = lp.shape
    tg = targets.numpy(force=True).astype(np.int64)
    if unbatched and tg.ndim == 1:
        tg = tg.reshape(1, -1)
    il = _lengths(input_lengths, n, "input_lengths")
    tl_ = _lengths(target_lengths, n, "target_lengths")
    if not 0 <= blank < c:
        raise RuntimeError(f"ctc_loss: blank must be in label range [0, {c}), got {blank}")
    if (il > t_max).any() or (il < 0).any():
        raise RuntimeError(f"ctc_loss: expected input_lengths in [0, {t_max}] (the input's length), got {il.tolist()}")
    if tg.ndim == 2 and (tl_ > tg.shape[1]).any():
        raise RuntimeError(f"ctc_loss: a target length exceeds the targets' padded length {tg.shape[1]}")
    losses = CTCLoss.apply(lp, tg, il, tl_, int(blank), bool(zero_infinity))
    if reduction == "none":
        return losses.reshape(()) if unbatched else losses
    if reduction == "sum":
        return losses.sum()
    return (losses / _const(np.maximum(tl_, 1).astype(losses.dtype.np), losses)).mean()
