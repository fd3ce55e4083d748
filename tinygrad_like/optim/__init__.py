"""Optimizers (``SGD``, ``Adam``, ``AdamW``) and learning-rate schedules, shaped like ``torch.optim``.

Every update is an in-place write that bumps the parameter's storage version and records the
line of ``opt.step()`` that made it, so the storage inspector and autograd's stale-tensor check
see optimizer steps like any other write.
"""

from . import lr_scheduler
from .adam import Adam, AdamW
from .lr_scheduler import LRScheduler
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "LRScheduler", "lr_scheduler"]
