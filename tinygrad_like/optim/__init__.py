"""Optimizers and learning-rate schedules, shaped like ``torch.optim``.

``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``, ``NAdam``, ``RAdam``,
``Rprop``, ``ASGD``, ``Adafactor``, ``SparseAdam``, ``Muon``, ``LBFGS``, the schedules in :mod:`.lr_scheduler`
and weight averaging in :mod:`.swa_utils`. Every update is an in-place write that bumps the
parameter's storage version and records the line of ``opt.step()`` that made it, so the storage
inspector and autograd's stale-tensor check see optimizer steps like any other write.
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adafactor import Adafactor
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .lr_scheduler import LRScheduler
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam
from .stateless import swap_in_optimizer_params_and_state

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "Adafactor", "SparseAdam", "Muon", "LBFGS", "LRScheduler", "lr_scheduler",
           "swa_utils", "swap_in_optimizer_params_and_state"]
