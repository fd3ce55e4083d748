"""RMSprop: steps divided by a running root-mean-square of the gradient (Hinton's lecture 6e).

Written with ordinary in-place tensor ops, so every write bumps the storage version and records the
user's ``opt.step()`` line like any other in-place op, and it runs on any backend. The arithmetic is
PyTorch's single-tensor RMSprop, step for step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import zeros_like
from .optimizer import Optimizer, ParamsT, check_impl_flags, check_nonnegative, lerp_

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """``torch.optim.RMSprop``: ``v = alpha v + (1 - alpha) g^2``, ``p -= lr * g / (sqrt(v) + eps)``.

    ``centered`` subtracts the square of the running mean gradient from ``v`` (an estimate of the
    variance); ``momentum > 0`` accumulates ``g / (sqrt(v) + eps)`` in a buffer and steps by it;
    ``weight_decay`` adds ``weight_decay * p`` to the gradient (L2); ``maximize`` ascends. State per
    parameter: ``step`` (an int), ``square_avg``, and ``momentum_buffer`` / ``grad_avg`` when those
    options are on. ``foreach=`` and ``capturable=`` are accepted and kept in the groups, as torch
    does, but change nothing; ``differentiable=True`` is refused.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = tl.optim.RMSprop([w], lr=0.01, alpha=0.9)
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first step is about lr / sqrt(1 - alpha) per weight
    >>> w
    tensor([ 0.9684, -1.9684], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        check_nonnegative(group, where, "lr", "eps", "momentum", "weight_decay", "alpha")
        check_impl_flags(group, where)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
            weight_decay, centered, maximize = group["weight_decay"], group["centered"], group["maximize"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["square_avg"] = zeros_like(p)
                if momentum > 0 and "momentum_buffer" not in state:  # also when switched on later
                    state["momentum_buffer"] = zeros_like(p)
                if centered and "grad_avg" not in state:
                    state["grad_avg"] = zeros_like(p)
                state["step"] += 1
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad + p * weight_decay
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
                if centered:
                    grad_avg = lerp_(state["grad_avg"], grad, 1 - alpha)
                    avg = (square_avg - grad_avg * grad_avg).sqrt() + eps
                else:
                    avg = square_avg.sqrt() + eps
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).add_(grad / avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.add_(grad / avg, alpha=-lr)
        return loss
