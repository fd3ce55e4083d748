"""Adam and AdamW, each step one call of the backend's fused ``adam_step`` primitive per parameter.

The fused primitive reads the gradient once and writes the parameter and both moment buffers in
place (one kernel on a GPU instead of a dozen small ones). Because it writes native arrays behind
the tensors' backs, the optimizer then marks each written tensor with ``_wrote("adam_step")``:
its storage version bumps (so a graph that saved the old weights refuses to backpropagate) and
the user's ``opt.step()`` line is recorded as the write site.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import zeros_like
from .optimizer import Optimizer, ParamsT, check_betas, check_impl_flags, check_number

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """``torch.optim.Adam``: per-element steps scaled by running moments of the gradient.

    ``m = b1 m + (1-b1) g``, ``v = b2 v + (1-b2) g^2``, ``p -= lr / (1-b1^t) * m / (sqrt(v / (1-b2^t)) + eps)``.
    ``weight_decay`` is L2 (added to the gradient) unless ``decoupled_weight_decay=True``, which
    shrinks the weights directly (that is :class:`AdamW`). ``amsgrad`` uses the running maximum of
    ``v``; ``maximize`` ascends. State per parameter: ``step`` (an int), ``exp_avg``, ``exp_avg_sq``
    and, with amsgrad, ``max_exp_avg_sq``. ``foreach=``, ``fused=`` and ``capturable=`` are accepted
    and kept in the groups as torch does, but change nothing here (every step is already one fused
    primitive per parameter); ``differentiable=True`` is refused.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tl.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()                  # the first Adam step moves each weight by about lr
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    >>> opt.state[w]["step"], w.storage.bumps[-1].op
    (1, 'adam_step')
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        lr = check_number("lr", group["lr"], where)
        eps = check_number("eps", group["eps"], where)
        weight_decay = check_number("weight_decay", group["weight_decay"], where)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}{where}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}{where}")
        check_betas(group["betas"], where)
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}{where}")
        check_impl_flags(group, where)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One fused update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, amsgrad, maximize = group["weight_decay"], group["amsgrad"], group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                if amsgrad and "max_exp_avg_sq" not in state:  # also when amsgrad is switched on later
                    state["max_exp_avg_sq"] = zeros_like(p)
                state["step"] += 1
                if maximize:
                    grad = -grad
                m, v = state["exp_avg"], state["exp_avg_sq"]
                vmax = state["max_exp_avg_sq"] if amsgrad else None
                p._dev.backend.adam_step(p._x, grad._x, m._x, v._x, state["step"], lr, beta1, beta2, eps,
                                         weight_decay, decoupled, None if vmax is None else vmax._x)
                for t in (p, m, v) if vmax is None else (p, m, v, vmax):
                    t._wrote("adam_step")
        return loss


class AdamW(Adam):
    """``torch.optim.AdamW``: Adam with decoupled weight decay, ``p *= 1 - lr * weight_decay`` each step.

    Unlike L2 in Adam, the decay is not rescaled by the adaptive denominator, so every weight
    shrinks at the same rate (Loshchilov & Hutter). Note the default ``weight_decay=1e-2``.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tl.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = tl.zeros(2)        # no gradient signal: only the decay acts
    >>> opt.step()
    >>> w
    tensor([ 0.9500, -0.9500], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
