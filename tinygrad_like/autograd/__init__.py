"""Autograd: graph nodes (:class:`Function`), the stepping engine, ``grad`` and ``gradcheck``.

:class:`Function` has two styles: ours (the instance is the node, ``forward(self, ...)``) and PyTorch's
context style (``@staticmethod forward(ctx, ...)``; see :mod:`.ctx_function`). ``functional`` holds
``jacobian``/``hessian``/``vjp``/``jvp``/``vhp``/``hvp``.
"""

from .engine import Step, backward_steps
from .function import Function, SavedTensorsFreedError, VersionMismatchError
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, jacobians
from .api import backward, grad
from .ctx_function import FunctionCtx, once_differentiable
from .inference import inference_mode, is_inference_mode_enabled
from . import functional

__all__ = ["Function", "Step", "backward_steps", "grad", "backward", "gradcheck", "jacobians", "GradcheckError",
           "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "VersionMismatchError",
           "SavedTensorsFreedError", "FunctionCtx", "once_differentiable", "inference_mode",
           "is_inference_mode_enabled", "functional"]
