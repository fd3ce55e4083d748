"""Rprop: resilient backpropagation, steps that grow while the gradient keeps its sign and shrink when it flips.

Written with ordinary in-place tensor ops (each write bumps the storage version and records the user's
``opt.step()`` line); the arithmetic is PyTorch's single-tensor Rprop, step for step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import full_like, ones_like, zeros_like
from ..functions import where
from .optimizer import Optimizer, ParamsT, check_impl_flags, check_nonnegative, check_number

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """``torch.optim.Rprop``: each weight has its own step size, which only the gradient's sign adjusts.

    Per element: if the gradient kept its sign since the last step, the step size is multiplied by ``etas[1]``
    (> 1); if it flipped, by ``etas[0]`` (< 1) and that element's gradient counts as 0 this step (no move);
    the step size stays in ``step_sizes = (min, max)``. The weight then moves by ``-sign(g) * step_size``.
    ``lr`` is the initial step size. State per parameter: ``step`` (an int), ``prev`` (the last gradient
    used) and ``step_size``. ``foreach=`` and ``capturable=`` are accepted and change nothing;
    ``differentiable=True`` is refused.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = tl.optim.Rprop([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()              # the first step moves each weight by lr against its gradient's sign
    >>> w
    tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        check_nonnegative(group, where, "lr")
        etas, sizes = group["etas"], group["step_sizes"]
        for name, pair in (("etas", etas), ("step_sizes", sizes)):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"{name} must be a pair of numbers, got {pair!r}{where}")
            for i, v in enumerate(pair):
                check_number(f"{name}[{i}]", v, where)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}{where}")
        check_impl_flags(group, where)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p, grad in checked[gi]:
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(p, group["lr"])
                state["step"] += 1
                if group["maximize"]:
                    grad = -grad
                prev, step_size = state["prev"], state["step_size"]
                sign = (grad * prev).sign()
                # the factors as tensors of p's dtype: a Python float in where() would be rounded to float32
                factor = where(sign > 0, full_like(sign, etaplus), where(sign < 0, full_like(sign, etaminus),
                                                                        ones_like(sign)))
                step_size.mul_(factor).clamp_(step_size_min, step_size_max)
                grad = where(sign < 0, zeros_like(grad), grad)  # a flipped sign: no move, and no flip next step
                p.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss
