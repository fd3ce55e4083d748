"""SparseAdam: Adam that updates only the rows a sparse gradient names (an ``Embedding(sparse=True)``'s rows looked up).

There are no sparse tensors here: ``Embedding(sparse=True)`` gives a dense gradient whose rows are zero
except the ones looked up. So this SparseAdam takes a dense gradient and treats its nonzero rows (first-dimension
slices with any nonzero element) as the sparse gradient's indices: the moments and weights of the other rows stay
as they are, which is what torch's SparseAdam does with the sparse gradient of the same lookup. (torch refuses a
dense gradient with a RuntimeError; here it cannot tell the two apart.) A row that was looked up but whose gradient
is exactly zero counts as not looked up (torch would decay its moments): the one place the two can differ.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..creation import zeros_like
from .optimizer import Optimizer, ParamsT, check_betas, check_number

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """``torch.optim.SparseAdam``: lazy Adam for embedding tables, only the looked-up rows move.

    For the rows ``I`` with a gradient: ``m[I] += (1-b1)(g - m[I])``, ``v[I] += (1-b2)(g^2 - v[I])``,
    ``p[I] -= lr sqrt(1-b2^t)/(1-b1^t) * m[I] / (sqrt(v[I]) + eps)``; other rows keep their moments (no decay,
    unlike Adam). State per parameter: ``step`` (an int), ``exp_avg``, ``exp_avg_sq``.

    >>> import tinygrad_like as tl
    >>> emb = tl.nn.Embedding(4, 2, sparse=True)
    >>> opt = tl.optim.SparseAdam(emb.parameters(), lr=0.1)
    >>> before = emb.weight.detach().clone()
    >>> emb(tl.tensor([1])).sum().backward()
    >>> opt.step()
    >>> [bool((emb.weight[i] != before[i]).any()) for i in range(4)]
    [False, True, False, False]
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        lr = check_number("lr", group["lr"], where)
        eps = check_number("eps", group["eps"], where)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}{where}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}{where}")
        check_betas(group["betas"], where)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of the gradient's nonzero rows of every parameter that has a ``.grad``."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                state["step"] += 1
                if group["maximize"]:
                    grad = -grad
                rows = grad != 0
                if grad.ndim > 1:  # a row is in the sparse gradient if any of its elements is
                    rows = rows.flatten(1).any(dim=1).reshape((-1,) + (1,) * (grad.ndim - 1))
                if not bool(rows.any()):
                    continue  # torch skips a gradient with no values (the step still counts)
                mask = rows.to(p.dtype)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.add_((grad - exp_avg).mul_(1 - beta1).mul_(mask))
                exp_avg_sq.add_((grad * grad - exp_avg_sq).mul_(1 - beta2).mul_(mask))
                denom = exp_avg_sq.sqrt().add_(eps)
                step = state["step"]
                step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
                p.add_((exp_avg / denom).mul_(-step_size).mul_(mask))
        return loss
