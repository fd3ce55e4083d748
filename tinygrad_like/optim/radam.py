"""RAdam: Adam with the variance of its adaptive step rectified while few gradients are seen.

Written with ordinary in-place tensor ops (versioned writes, any backend); the arithmetic is
PyTorch's single-tensor RAdam, step for step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import zeros_like
from .optimizer import Optimizer, ParamsT, check_betas, check_impl_flags, check_nonnegative, lerp_

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """``torch.optim.RAdam`` (Liu et al. 2019): plain momentum SGD until the variance estimate is usable.

    With ``rho_inf = 2 / (1 - b2) - 1`` and ``rho_t = rho_inf - 2 t b2^t / (1 - b2^t)``, a step is
    ``lr * m_hat * r_t * sqrt(1 - b2^t) / (sqrt(v) + eps)`` once ``rho_t > 5`` and ``lr * m_hat``
    before. ``weight_decay`` adds ``weight_decay * p`` to the gradient (L2) unless
    ``decoupled_weight_decay=True``, which shrinks the weights by ``1 - lr * weight_decay``;
    ``maximize`` ascends. State per parameter: ``step`` (an int), ``exp_avg`` and ``exp_avg_sq``.
    ``foreach=`` and ``capturable=`` are accepted and kept in the groups, as torch does, but change
    nothing; ``differentiable=True`` is refused.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = tl.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()              # rho_1 = 1 <= 5: an un-adapted step, lr * g
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
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
            decoupled = group["decoupled_weight_decay"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                state["step"] += 1
                step = state["step"]
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad + p * weight_decay
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                bias_corrected_exp_avg = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive_lr = (bias_correction2 ** 0.5) / (exp_avg_sq.sqrt() + eps)
                    p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
                else:
                    p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
        return loss
