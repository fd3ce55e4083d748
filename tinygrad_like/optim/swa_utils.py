"""Stochastic weight averaging and exponential moving averages of a model's weights (``torch.optim.swa_utils``).

``AveragedModel`` keeps a copy of a model whose parameters are the running average (SWA's equal-weight mean, or
an EMA with ``get_ema_multi_avg_fn``) of the model's parameters at each ``update_parameters`` call; ``SWALR``
anneals every group's learning rate to a constant ``swa_lr``; ``update_bn`` recomputes BatchNorm statistics for
the averaged weights with one pass over the data. Each follows torch's arithmetic, so an averaged model's weights
equal torch's after the same updates.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

from ..autograd import grad_mode
from ..creation import tensor
from ..dtypes import int64
from ..nn.layers import _BatchNorm
from ..nn.module import Module
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer, lerp_

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """An in-place EMA over lists of tensors, ``ema = lerp(ema, current, 1 - decay)`` (``AveragedModel``'s
    ``multi_avg_fn``)."""
    _check_decay(decay)

    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        with grad_mode.no_grad():
            if ema_param_list[0].dtype.is_floating_point:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    lerp_(p_ema, p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """An in-place equal-weight running mean over lists of tensors: ``avg += (current - avg) / (n + 1)``."""

    def swa_update(averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST,
                   num_averaged: Tensor | int) -> None:
        with grad_mode.no_grad():
            n = num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                if p_avg.dtype.is_floating_point:
                    lerp_(p_avg, p_model, 1 / (n + 1))
                else:  # (torch's integer addcdiv is an error; the mean, truncated, is what it used to give)
                    p_avg.copy_(p_avg + (p_model - p_avg) / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The EMA of one tensor, returned: ``decay * ema + (1 - decay) * current`` (``AveragedModel``'s ``avg_fn``)."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with grad_mode.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The running mean of one tensor, returned: ``avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        with grad_mode.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters average the model's over ``update_parameters`` calls.

    Without ``avg_fn``/``multi_avg_fn`` the average is SWA's equal-weight mean; the first call copies the
    weights. ``use_buffers=True`` averages the buffers too (else they are copied from the model each call).
    ``n_averaged`` (a buffer) counts the calls. Calling it runs the averaged copy.

    >>> import tinygrad_like as tl
    >>> from tinygrad_like.optim.swa_utils import AveragedModel
    >>> lin = tl.nn.Linear(1, 1, bias=False)
    >>> swa = AveragedModel(lin)
    >>> for w in (1.0, 2.0, 6.0):
    ...     with tl.no_grad():
    ...         _ = lin.weight.fill_(w)
    ...     swa.update_parameters(lin)
    >>> swa.module.weight.item(), int(swa.n_averaged)
    (3.0, 3)
    """

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
                 multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Tensor | int], None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged copy."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and, with ``use_buffers``, buffers) into the average."""
        with grad_mode.no_grad():
            self._update(model)

    def _update(self, model: Module) -> None:
        own = (itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers
               else self.parameters())
        theirs = itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else model.parameters()
        own_detached, their_detached = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(own, theirs):
            p_model_ = p_model.detach().to(p_avg.device)
            own_detached.append(p_avg.detach())
            their_detached.append(p_model_)
            if copy_param:
                p_avg.detach().copy_(p_model_)
        n = int(self.n_averaged)
        if n > 0:
            if self.multi_avg_fn is not None:
                # torch groups the tensors by device and dtype (one device here)
                groups: dict[Any, tuple[list[Tensor], list[Tensor]]] = {}
                for a, b in zip(own_detached, their_detached):
                    mine, yours = groups.setdefault(a.dtype, ([], []))
                    mine.append(a)
                    yours.append(b)
                for mine, yours in groups.values():
                    self.multi_avg_fn(mine, yours, self.n_averaged)
            else:  # (torch on a CPU: one tensor at a time, the result copied in, so integer buffers truncate)
                avg_fn = self.avg_fn or get_swa_avg_fn()
                for p_avg, p_model in zip(own_detached, their_detached):
                    p_avg.copy_(avg_fn(p_avg, p_model, self.n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every BatchNorm's running statistics with one pass over ``loader`` (after averaging weights,
    the model's statistics belong to other weights). A batch that is a list or tuple uses its first element."""
    with grad_mode.no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None  # a cumulative average over the pass
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate from its current value to ``swa_lr`` over ``anneal_epochs`` epochs
    (``"cos"`` or ``"linear"``), then hold it there: the schedule SWA trains with while averaging.

    >>> import tinygrad_like as tl
    >>> w = tl.zeros(1, requires_grad=True)
    >>> opt = tl.optim.SGD([w], lr=1.0)
    >>> sched = tl.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs                         # half way after one epoch, then swa_lr
    [0.55, 0.1, 0.1]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float, anneal_epochs: int = 10,
                 anneal_strategy: Literal["cos", "linear"] = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        """The rates for this epoch: recover the rate the annealing started from, then move ``alpha`` of the way."""
        self._warn_if_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer and the annealing function (restored from its name)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
