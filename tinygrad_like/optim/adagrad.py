"""Adagrad: per-element steps divided by the root of the sum of all past squared gradients.

Written with ordinary in-place tensor ops (versioned writes, any backend); the arithmetic is
PyTorch's single-tensor Adagrad, step for step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import full_like
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, check_impl_flags, check_nonnegative

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """``torch.optim.Adagrad``: ``s += g^2``, ``p -= lr / (1 + (t-1) lr_decay) * g / (sqrt(s) + eps)``.

    ``initial_accumulator_value`` is where ``s`` starts; ``weight_decay`` adds ``weight_decay * p`` to
    the gradient (L2); ``maximize`` ascends. As in torch the state (``step``, an int here, and
    ``sum``) is created for every parameter when the optimizer is built, so it is in ``state_dict()``
    before the first step. ``foreach=`` and ``fused=`` are accepted and kept in the groups, as torch
    does, but change nothing; ``differentiable=True`` is refused.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = tl.optim.Adagrad([w], lr=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first step is lr * sign(g)
    >>> w, opt.state[w]["sum"]
    (tensor([ 0.5000, -1.5000], requires_grad=True), tensor([ 4., 16.]))
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        check_nonnegative(group, where, "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")
        check_impl_flags(group, where)

    def _init_state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["sum"] = full_like(p, group["initial_accumulator_value"])
        return state

    def share_memory(self) -> None:
        """torch moves the ``sum`` buffers to shared memory for multiprocessing; one process here: nothing to do."""

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p, grad in checked[gi]:
                state = self._init_state(p, group)  # (a group added after construction)
                state["step"] += 1
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad + p * weight_decay
                clr = lr / (1 + (state["step"] - 1) * lr_decay)
                state_sum = state["sum"]
                state_sum.add_(grad * grad)
                std = state_sum.sqrt() + eps
                p.add_(grad / std, alpha=-clr)
        return loss
