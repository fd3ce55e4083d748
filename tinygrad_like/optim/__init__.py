"""Optimizers and learning-rate schedules, shaped like ``torch.optim``.

``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``, ``RAdam``,
and the schedules in :mod:`.lr_scheduler`. Every update is an in-place write that bumps the
parameter's storage version and records the line of ``opt.step()`` that made it, so the storage
inspector and autograd's stale-tensor check see optimizer steps like any other write.
"""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .lr_scheduler import LRScheduler
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "LRScheduler", "lr_scheduler"]
