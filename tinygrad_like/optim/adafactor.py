"""Adafactor: Adam-like steps whose second moment of a matrix is stored factored, one row and one column vector.

The arithmetic is PyTorch's single-tensor Adafactor (``torch.optim.Adafactor``, Shazeer & Stern, without
first moment), step for step, with its relative step size ``alpha = max(eps2, RMS(p)) * min(lr, 1/sqrt(t))``
and its update clipping by ``d``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import dtypes
from ..creation import zeros_like
from .optimizer import Optimizer, ParamsT, check_number, lerp_

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """``torch.optim.Adafactor``.

    For a parameter of 2 or more dimensions the second moment is the outer product of a running row mean
    (``row_var``, last dimension reduced) and column mean (``col_var``, second-to-last reduced) of ``g^2``,
    divided by the row factor's mean: memory ``O(rows + cols)`` instead of ``O(rows * cols)``. A vector keeps
    a full ``variance``. The running means decay with ``beta2_t = 1 - t^beta2_decay``. ``eps = (eps1, eps2)``:
    ``eps1`` (None: the dtype's machine epsilon) floors the variance, ``eps2`` floors the parameter RMS in the
    relative step size. ``weight_decay`` is decoupled (``p *= 1 - lr * weight_decay``). State per parameter:
    ``step`` (an int) and ``row_var``/``col_var`` or ``variance``. ``foreach=`` is accepted and changes nothing.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    >>> opt = tl.optim.Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> tuple(opt.state[w]["row_var"].shape), tuple(opt.state[w]["col_var"].shape)
    ((2, 1), (1, 2))
    """

    _state_shaped_like_params = False  # the row and column factors are not

    def __init__(self, params: ParamsT, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        lr = check_number("lr", group["lr"], where)
        beta2_decay = check_number("beta2_decay", group["beta2_decay"], where)
        eps = group["eps"]
        if not isinstance(eps, (tuple, list)) or len(eps) != 2:
            raise TypeError(f"eps must be a pair (eps1 or None, eps2), got {eps!r}{where}")
        eps1 = None if eps[0] is None else check_number("eps[0]", eps[0], where)
        eps2 = check_number("eps[1]", eps[1], where)
        d = check_number("d", group["d"], where)
        weight_decay = check_number("weight_decay", group["weight_decay"], where)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}{where}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}{where}")
        if eps1 is not None and not 0.0 <= eps1:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps1}{where}")
        if not 0.0 <= eps2:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps2}{where}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}{where}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}{where}")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, beta2_decay, d, weight_decay = group["lr"], group["beta2_decay"], group["d"], group["weight_decay"]
            eps1, eps2 = group["eps"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    if grad.ndim > 1:
                        state["row_var"] = grad.new_zeros((*grad.shape[:-1], 1))
                        state["col_var"] = grad.new_zeros((*grad.shape[:-2], 1, grad.shape[-1]))
                    else:
                        state["variance"] = zeros_like(grad)
                if group["maximize"]:
                    grad = -grad
                if eps1 is None:  # torch sets it from the first parameter and keeps it for the group's others
                    eps1 = float(dtypes.finfo(p.dtype).eps)
                state["step"] += 1
                step = float(state["step"])
                one_minus_beta2_t = step ** beta2_decay
                rho_t = min(lr, 1 / (step ** 0.5))
                alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho_t
                if weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)
                if grad.ndim > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.shape[-1])
                    lerp_(row_var, row_mean, one_minus_beta2_t)
                    col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.shape[-2])
                    lerp_(col_var, col_mean, one_minus_beta2_t)
                    var_estimate = row_var @ col_var
                    var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                else:
                    variance = state["variance"]
                    lerp_(variance, grad * grad, one_minus_beta2_t)
                    var_estimate = variance.clone()
                update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
                update.mul_(grad)
                denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
                p.add_(update, alpha=-alpha / denom)
        return loss
