"""Stochastic gradient descent with momentum, dampening, Nesterov, weight decay and ``maximize``.

Written with ordinary in-place tensor ops (``add_``, ``mul_``), so every write bumps the storage
version and records the user's ``opt.step()`` line like any other in-place op, and it runs on any
backend. The arithmetic is PyTorch's single-tensor SGD, step for step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .optimizer import Optimizer, ParamsT, check_impl_flags, check_number

__all__ = ["SGD"]


class SGD(Optimizer):
    """``torch.optim.SGD``: ``p -= lr * update`` where the update may carry momentum.

    With momentum ``mu`` the buffer starts as a copy of the first gradient, then
    ``buf = mu * buf + (1 - dampening) * g``; Nesterov uses ``g + mu * buf`` as the update.
    ``weight_decay`` adds ``weight_decay * p`` to the gradient (L2), ``maximize`` ascends.
    ``foreach=`` and ``fused=`` are accepted (and kept in the groups, as torch does) but change nothing:
    they pick how torch batches the same arithmetic. ``differentiable=True`` is refused.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = tl.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()      # grad = 2w
    ...     opt.step()
    >>> w
    tensor([0.4600, 0.9200], requires_grad=True)
    >>> opt.state[w]["momentum_buffer"]
    tensor([3.4000, 6.8000])
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        lr = check_number("lr", group["lr"], where)
        momentum = check_number("momentum", group["momentum"], where)
        dampening = check_number("dampening", group["dampening"], where)
        weight_decay = check_number("weight_decay", group["weight_decay"], where)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}{where}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}{where}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}{where}")
        if group["nesterov"] and (momentum <= 0 or dampening != 0):
            raise ValueError(f"Nesterov momentum requires a momentum and zero dampening (got momentum={momentum}, "
                             f"dampening={dampening}){where}")
        check_impl_flags(group, where)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
            for p, grad in checked[gi]:
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad + p * weight_decay
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = grad.detach().clone()
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    grad = grad + buf * momentum if nesterov else buf
                p.add_(grad, alpha=-lr)
        return loss
