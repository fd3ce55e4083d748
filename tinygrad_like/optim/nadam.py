"""NAdam: Adam with Nesterov momentum and a warming-up momentum schedule (Dozat 2016).

Written with ordinary in-place tensor ops (versioned writes, any backend); the arithmetic is
PyTorch's single-tensor NAdam, step for step, including its ``mu_product`` state: a 0-d tensor of
the default float dtype (float32 unless the default is float64), so its rounding is torch's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes
from ..creation import tensor, zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, check_betas, check_impl_flags, check_nonnegative, lerp_

__all__ = ["NAdam"]


def scalar_dtype() -> dtypes.DType:
    """torch's dtype for scalar optimizer state: float64 if that is the default dtype, else float32."""
    return dtypes.float64 if dtypes.get_default_dtype() is dtypes.float64 else dtypes.float32


class NAdam(Optimizer):
    """``torch.optim.NAdam``: Adam whose step mixes the gradient and the next momentum (Nesterov).

    The momentum coefficient warms up, ``mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))``, and the
    bias correction uses the running product of the ``mu_t``. ``weight_decay`` adds
    ``weight_decay * p`` to the gradient (L2) unless ``decoupled_weight_decay=True`` (NAdamW), which
    shrinks the weights by ``1 - lr * weight_decay``; ``maximize`` ascends. State per parameter:
    ``step`` (an int), ``mu_product`` (a 0-d tensor, as in torch), ``exp_avg`` and ``exp_avg_sq``.
    ``foreach=`` and ``capturable=`` are accepted and kept in the groups, as torch does, but change
    nothing; ``differentiable=True`` is refused.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = tl.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()              # Nesterov: the first step is larger than lr
    >>> w
    tensor([ 0.8944, -1.8944], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        check_nonnegative(group, where, "lr", "eps")
        check_betas(group["betas"], where)
        check_nonnegative(group, where, "weight_decay", "momentum_decay")
        check_impl_flags(group, where)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, momentum_decay, maximize = group["weight_decay"], group["momentum_decay"], group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["mu_product"] = tensor(1.0, dtype=scalar_dtype(), device=p.device)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                mu_product = state["mu_product"]
                if not isinstance(mu_product, Tensor):  # a plain number from an older checkpoint
                    mu_product = state["mu_product"] = tensor(float(mu_product), dtype=scalar_dtype(),
                                                              device=p.device)
                state["step"] += 1
                step = state["step"]
                if maximize:
                    grad = -grad
                bias_correction2 = 1 - beta2 ** step
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad + p * weight_decay
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product.mul_(mu)  # in the state's own dtype, as torch rounds it
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
                denom = (exp_avg_sq / bias_correction2).sqrt() + eps
                mu_prod = mu_product.item()
                mu_product_next = mu_prod * mu_next
                p.add_(grad / denom, alpha=-lr * (1.0 - mu) / (1.0 - mu_prod))
                p.add_(exp_avg / denom, alpha=(-lr * mu_next) / (1.0 - mu_product_next))
        return loss
