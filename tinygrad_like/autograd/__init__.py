"""Autograd: graph nodes (:class:`Function`), the stepping engine, ``grad`` and ``gradcheck``."""

from .engine import Step, backward_steps
from .function import Function, SavedTensorsFreedError, VersionMismatchError
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, jacobians
from .api import grad

__all__ = ["Function", "Step", "backward_steps", "grad", "gradcheck", "jacobians", "GradcheckError",
           "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "VersionMismatchError",
           "SavedTensorsFreedError"]
