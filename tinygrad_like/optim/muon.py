"""Muon: momentum SGD whose update for a weight matrix is orthogonalized by a Newton-Schulz iteration.

PyTorch's ``torch.optim.Muon`` (Keller Jordan's algorithm), step for step: the Nesterov momentum update is
replaced by an approximation of ``U V^T`` (its SVD with the singular values set to about 1), computed in
bfloat16 by five steps of a quintic Newton-Schulz iteration, then scaled for the matrix's shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..creation import zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, check_nonnegative, check_number, lerp_

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int,
                               eps: float) -> Tensor:
    """An approximately orthogonal matrix with ``grad``'s singular vectors (``U S' V^T``, ``S'`` near 1), bfloat16."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho = grad.bfloat16()
    tall = grad.shape[0] > grad.shape[1]
    if tall:  # iterate on the wide orientation: the Gram matrix is the smaller one
        ortho = ortho.T
    # torch's bfloat16 norm sums in float32 and rounds once; a sum in bfloat16 would be a few ulp off
    ortho = ortho / ortho.float().norm().bfloat16().clamp(min=eps)
    for _ in range(ns_steps):
        gram = ortho @ ortho.T
        gram_update = gram.addmm(gram, gram, beta=b, alpha=c)
        ortho = ortho.addmm(gram_update, ortho, beta=a)
    return ortho.T if tall else ortho


def adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape: tuple[int, ...]) -> float:
    """The learning rate scaled for a ``(A, B)`` matrix: ``sqrt(max(1, A/B))`` ("original"), or
    ``0.2 sqrt(max(A, B))`` ("match_rms_adamw", to reuse AdamW's learning rate)."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """``torch.optim.Muon``: for the 2-D weights of hidden layers (use AdamW for biases and embeddings).

    ``B = momentum B + (1 - momentum) g`` (a lerp); the update is ``lerp(g, B, momentum)`` with ``nesterov``,
    else ``B``; it is orthogonalized (:func:`zeropower_via_newtonschulz`), the weights decay by
    ``1 - lr * weight_decay`` and move by ``-adjust_lr(lr) * update``. State per parameter:
    ``momentum_buffer``.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True)
    >>> opt = tl.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> tuple(opt.state[w]["momentum_buffer"].shape)
    (2, 2)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                                       DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        lr = check_number("lr", group["lr"], where)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}{where}")
        for name, words in (("momentum", "momentum"), ("weight_decay", "weight decay")):
            if not 0.0 <= check_number(name, group[name], where):
                raise ValueError(f"{words} should be >= 0 but is: {group[name]}{where}")
        check_nonnegative(group, where, "eps")
        fn = group["adjust_lr_fn"]
        if fn is not None and fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {fn} is not supported{where}")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a ``.grad`` (others are skipped)."""
        loss = self._run_closure(closure)
        checked = self._checked_grads()  # all of them, before anything changes
        for gi, group in enumerate(self.param_groups):
            lr, weight_decay, momentum = group["lr"], group["weight_decay"], group["momentum"]
            for p, grad in checked[gi]:
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = zeros_like(grad)
                buf = lerp_(state["momentum_buffer"], grad, 1 - momentum)
                update = lerp_(grad.clone(), buf, momentum) if group["nesterov"] else buf
                update = zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                    group["eps"])
                p.mul_(1 - lr * weight_decay)
                p.add_(update.to(p.dtype), alpha=-adjust_lr(lr, group["adjust_lr_fn"], tuple(p.shape)))
        return loss
