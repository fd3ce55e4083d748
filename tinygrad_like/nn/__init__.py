"""``tl.nn``: modules, parameters, initialisations and the functional API, shaped like ``torch.nn``.

>>> import tinygrad_like as tl
>>> model = tl.nn.Sequential(tl.nn.Linear(64, 32), tl.nn.ReLU(), tl.nn.Linear(32, 10))
>>> model
Sequential(
  (0): Linear(in_features=64, out_features=32, bias=True)
  (1): ReLU()
  (2): Linear(in_features=32, out_features=10, bias=True)
)
"""

from . import functional, init, utils
from .containers import ModuleDict, ModuleList, Sequential
from .layers import *  # noqa: F403 - every layer, activation and loss module
from .layers import __all__ as _layers
from .module import Module, Parameter

__all__ = ["Module", "Parameter", "Sequential", "ModuleList", "ModuleDict", "functional", "init", "utils",
           *_layers]
