"""Adadelta: steps scaled by the ratio of running RMS of past updates to running RMS of gradients.

Written with ordinary in-place tensor ops (versioned writes, any backend); the arithmetic is
PyTorch's single-tensor Adadelta, step for step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import zeros_like
from .optimizer import Optimizer, ParamsT, check_impl_flags, check_nonnegative, check_number

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """``torch.optim.Adadelta`` (Zeiler 2012): a step size that needs no tuning (``lr=1.0`` scales it).

    ``v = rho v + (1-rho) g^2``, ``d = sqrt(u + eps) / sqrt(v + eps) * g``, ``u = rho u + (1-rho) d^2``,
    ``p -= lr * d``. ``weight_decay`` adds ``weight_decay * p`` to the gradient (L2); ``maximize``
    ascends. State per parameter: ``step`` (an int), ``square_avg`` and ``acc_delta``. ``foreach=`` and
    ``capturable=`` are accepted and kept in the groups, as torch does, but change nothing;
    ``differentiable=True`` is refused.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = tl.optim.Adadelta([w])
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w                       # the first steps are tiny: about sqrt(eps / (1 - rho)) per weight
    tensor([ 0.9968, -1.9968], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        check_nonnegative(group, where, "lr")
        if not 0.0 <= check_number("rho", group["rho"], where) <= 1.0:
            raise ValueError(f"Invalid rho value: {group['rho']}{where}")
        check_nonnegative(group, where, "eps", "weight_decay")
        check_impl_flags(group, where)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                state["step"] += 1
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad + p * weight_decay
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
                std = (square_avg + eps).sqrt()
                delta = (acc_delta + eps).sqrt() / std * grad
                acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
