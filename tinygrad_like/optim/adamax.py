"""Adamax: Adam with the infinity norm, ``u = max(b2 u, |g| + eps)``, in place of the squared moment.

Written with ordinary in-place tensor ops (versioned writes, any backend); the arithmetic is
PyTorch's single-tensor Adamax, step for step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import zeros_like
from .optimizer import Optimizer, ParamsT, check_betas, check_impl_flags, check_nonnegative, lerp_

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """``torch.optim.Adamax`` (Kingma & Ba, section 7): ``p -= lr / (1 - b1^t) * m / u``.

    ``m = b1 m + (1-b1) g`` and ``u = max(b2 u, |g| + eps)``. ``weight_decay`` adds
    ``weight_decay * p`` to the gradient (L2); ``maximize`` ascends. State per parameter: ``step``
    (an int), ``exp_avg`` and ``exp_inf``. ``foreach=`` and ``capturable=`` are accepted and kept in
    the groups, as torch does, but change nothing; ``differentiable=True`` is refused.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = tl.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first step is lr * sign(g)
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        check_nonnegative(group, where, "lr", "eps")
        check_betas(group["betas"], where)
        check_nonnegative(group, where, "weight_decay")
        check_impl_flags(group, where)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p)
                    state["exp_inf"] = zeros_like(p)
                state["step"] += 1
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad + p * weight_decay
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                lerp_(exp_avg, grad, 1 - beta1)
                exp_inf.mul_(beta2)
                exp_inf.copy_(exp_inf.maximum(grad.abs() + eps))
                clr = lr / (1 - beta1 ** state["step"])
                p.add_(exp_avg / exp_inf, alpha=-clr)
        return loss
