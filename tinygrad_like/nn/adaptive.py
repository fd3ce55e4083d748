"""``AdaptiveLogSoftmaxWithLoss`` (Grave et al., 2016): a softmax over a large vocabulary, split into a head of
frequent classes and clusters of rarer ones, each cluster behind a smaller projection, as torch's.

>>> import tinygrad_like as tl
>>> asm = tl.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8])
>>> out = asm(tl.randn(5, 8), tl.tensor([0, 3, 5, 9, 7]))
>>> out.output.shape, out.loss.shape, asm.log_prob(tl.randn(2, 8)).detach().exp().sum(1).round(decimals=4)
(tl.Size([5]), tl.Size([]), tensor([1., 1.]))
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numpy as np

from ..functions import cat
from ..tensor import Tensor
from . import functional as F
from .containers import ModuleList, Sequential
from .layers import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of targets under an adaptive softmax; ``forward`` returns ``(output, loss)``."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        targ_dim = target_.ndim
        if targ_dim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")
        elif targ_dim == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        t = target.numpy(force=True).astype(np.int64)
        if t.size and (t.min() < 0 or t.max() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{t.min()}, {t.max()}] were found. ")
        gather = t.copy()
        rows, values = [], []
        bounds = [0] + self.cutoffs
        for i in range(1, len(bounds) - 1):
            lo, hi = bounds[i], bounds[i + 1]
            idx = np.nonzero((t >= lo) & (t < hi))[0]
            if idx.size == 0:
                continue
            gather[idx] = self.shortlist_size + i - 1
            cluster_logprob = F.log_softmax(self.tail[i - 1](input[idx.tolist()]), dim=1)
            rel = target.new_tensor(t[idx] - lo).unsqueeze(1)
            rows.append(idx)
            values.append(cluster_logprob.gather(1, rel).squeeze(1))
        short = np.nonzero(t < self.shortlist_size)[0]
        if short.size:
            rows.append(short)
            values.append(input.new_zeros((short.size,)))
        order = np.argsort(np.concatenate(rows), kind="stable") if rows else np.zeros(0, dtype=np.int64)
        output = cat(values)[order.tolist()] if values else input.new_zeros((0,))
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, target.new_tensor(gather).unsqueeze(1)).reshape(-1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """The log-probabilities of all ``n_classes`` classes, (N, n_classes) or (n_classes,)."""
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (the argmax of ``log_prob``)."""
        return self.log_prob(input).argmax(dim=-1)
