"""ASGD: stochastic gradient descent with a decaying step and a running (Polyak-Ruppert) average of the weights.

Written with ordinary in-place tensor ops; the arithmetic is PyTorch's single-tensor ASGD, step for step,
including its scalar state ``eta`` and ``mu`` kept as 0-d tensors of torch's scalar dtype (float32, or
float64 when that is the default dtype), so their rounding is torch's too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes
from ..creation import tensor, zeros_like
from .optimizer import Optimizer, ParamsT, check_impl_flags, check_nonnegative, check_number

__all__ = ["ASGD"]


def scalar_dtype() -> dtypes.DType:
    """torch's dtype for an optimizer's scalar state: float64 when that is the default dtype, else float32."""
    return dtypes.float64 if dtypes.get_default_dtype() is dtypes.float64 else dtypes.float32


class ASGD(Optimizer):
    """``torch.optim.ASGD``: averaged SGD (Polyak & Juditsky).

    Each step: ``p *= 1 - lambd * eta``; ``p -= eta * g``; the average ``ax`` follows ``p`` (copied while
    ``mu == 1``, else ``ax += mu (p - ax)``); then ``eta = lr / (1 + lambd lr t)^alpha`` and
    ``mu = 1 / max(1, t - t0)``, so averaging starts after ``t0`` steps. ``weight_decay`` adds
    ``weight_decay * p`` to the gradient. State per parameter: ``step`` (an int), ``eta``, ``mu`` (0-d
    tensors) and ``ax`` (the averaged weights, which ``swa_utils`` or the caller may copy into the model).

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = tl.optim.ASGD([w], lr=0.1, lambd=0.0)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        check_nonnegative(group, where, "lr", "weight_decay")
        for name in ("lambd", "alpha", "t0"):
            check_number(name, group[name], where)
        check_impl_flags(group, where)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            weight_decay = group["weight_decay"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["eta"] = tensor(lr, dtype=scalar_dtype())
                    state["mu"] = tensor(1.0, dtype=scalar_dtype())
                    state["ax"] = zeros_like(p)
                if group["maximize"]:
                    grad = -grad
                state["step"] += 1
                step = state["step"]
                if weight_decay != 0:
                    grad = grad + p * weight_decay
                eta, mu, ax = state["eta"].item(), state["mu"].item(), state["ax"]
                p.mul_(1 - lambd * eta)
                p.add_(grad, alpha=-eta)
                if mu != 1:
                    ax.add_((p - ax).mul_(mu))
                else:
                    ax.copy_(p)
                # as torch: each new value is a tensor of the default dtype first, then copied into the state
                state["eta"].copy_(tensor(lr / ((1 + lambd * lr * step) ** alpha)))
                state["mu"].copy_(tensor(1 / max(1, step - t0)))
        return loss
