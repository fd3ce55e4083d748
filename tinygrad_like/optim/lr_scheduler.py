"""Learning-rate schedules that rewrite ``group["lr"]`` in an optimizer's param groups each epoch.

The formulas and their floating-point order are PyTorch's (``torch.optim.lr_scheduler``), so a
schedule gives bit-for-bit the same learning rates: ``CosineAnnealingLR`` in particular uses the
recursive form, which differs from the closed form by rounding and, past ``T_max``, keeps going
round the cosine. Call ``scheduler.step()`` after ``optimizer.step()``, once per epoch.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from .optimizer import Optimizer, check_number

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR"]

_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. Call them in the opposite order: "
    "`optimizer.step()` before `lr_scheduler.step()`. Otherwise the first value of the learning rate "
    "schedule is skipped.")
_EPOCH_WARNING = (
    "The epoch parameter in `scheduler.step()` is deprecated (as in PyTorch). Call `scheduler.step()` "
    "without arguments; to resume, load the scheduler's state_dict.")


class LRScheduler:
    """Base class: sets each group's ``initial_lr``, counts ``last_epoch``, and applies ``get_lr()``.

    Constructing a scheduler performs its first step (epoch 0), which writes the starting learning
    rates into the optimizer, as in PyTorch. Subclasses implement :meth:`get_lr` (the next rates,
    usually from the current ones) and may add ``_get_closed_form_lr``.

    >>> import tinygrad_like as tl
    >>> w = tl.zeros(1, requires_grad=True)
    >>> opt = tl.optim.SGD([w], lr=1.0)
    >>> class Halve(tl.optim.lr_scheduler.LRScheduler):
    ...     def get_lr(self):
    ...         return [g["lr"] / 2 if self.last_epoch > 0 else g["lr"] for g in self.optimizer.param_groups]
    >>> sched = Halve(opt)
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    >>> sched.get_last_lr(), sched.last_epoch, opt.param_groups[0]["initial_lr"]
    ([0.125], 3, 1.0)
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if isinstance(last_epoch, bool) or not isinstance(last_epoch, numbers.Integral) or last_epoch < -1:
            raise ValueError(f"last_epoch must be an int >= -1, got {last_epoch!r}")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a "
                                   f"scheduler with last_epoch >= 0: load the optimizer's state_dict first "
                                   f"(or start with last_epoch=-1 for a fresh run)")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = int(last_epoch)
        self._get_lr_called_within_step = False
        self._is_initial = True
        self._step_count = 0
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates for epoch ``last_epoch`` (called by :meth:`step`; use :meth:`get_last_lr`)."""
        raise NotImplementedError(f"{type(self).__name__}.get_lr")

    def get_last_lr(self) -> list[float]:
        """The learning rates the last :meth:`step` set, one per param group."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and write the new learning rates into the optimizer's param groups."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                warnings.warn(_EPOCH_WARNING, UserWarning, stacklevel=2)
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _warn_if_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=3)

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (which has a state_dict of its own)."""
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (load the optimizer's own state_dict separately)."""
        self.__dict__.update({k: (list(v) if isinstance(v, list) else v) for k, v in state_dict.items()})

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, last_lr={self._last_lr})"


class StepLR(LRScheduler):
    """Multiply each group's learning rate by ``gamma`` every ``step_size`` epochs.

    >>> import tinygrad_like as tl
    >>> opt = tl.optim.SGD([tl.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tl.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, numbers.Integral) or step_size <= 0:
            raise ValueError(f"step_size must be a positive integer, got {step_size!r}")
        self.step_size = int(step_size)
        self.gamma = check_number("gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal each learning rate from its initial value to ``eta_min`` along half a cosine over ``T_max``.

    Recursive, as in PyTorch: each rate is computed from the current one, so changes made to
    ``group["lr"]`` from outside carry on; past ``T_max`` the rate climbs back up (period ``2 T_max``).

    >>> import tinygrad_like as tl
    >>> opt = tl.optim.SGD([tl.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tl.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.0)
    >>> lrs = []
    >>> for _ in range(6):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.8536, 0.5, 0.1464, 0.0, 0.1464, 0.5]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if isinstance(T_max, bool) or not isinstance(T_max, numbers.Real) or not T_max > 0:
            raise ValueError(f"T_max must be a positive number of epochs, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = check_number("eta_min", eta_min)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_outside_step()
        groups, eta_min, T_max, epoch = self.optimizer.param_groups, self.eta_min, self.T_max, self.last_epoch
        if self._is_initial:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and epoch > 0:  # resuming at last_epoch > 0: closed form once
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(epoch * math.pi / T_max)) / 2
                    for base_lr in self.base_lrs]
        if (epoch - 1 - T_max) % (2 * T_max) == 0:  # at the bottom the ratio below would be 0/0
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * epoch / T_max)) / (1 + math.cos(math.pi * (epoch - 1) / T_max))
                * (group["lr"] - eta_min) + eta_min for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]
