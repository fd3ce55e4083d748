"""Autograd: graph nodes (:class:`Function`), the stepping engine, ``grad`` and ``gradcheck``.

:class:`Function` has two styles: ours (the instance is the node, ``forward(self, ...)``) and PyTorch's
context style (``@staticmethod forward(ctx, ...)``; see :mod:`.ctx_function`). ``functional`` holds
``jacobian``/``hessian``/``vjp``/``jvp``/``vhp``/``hvp``.
"""

from importlib import import_module

from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .grad_mode import (enable_grad, enforce_grad_layout_policy, is_grad_enabled, no_grad, set_grad_enabled,
                        set_multithreading_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck, jacobians
from .inference import inference_mode, is_inference_mode_enabled

# The names below load on first use (PEP 562). This package is imported before anything in it, and tensor_base
# needs its lowest module, grad_mode: importing the nodes, the engine or the user API here, eagerly, would pull
# tensor_base, the ops and Tensor in underneath tensor_base itself (an import cycle through the whole core).
_LAZY = {
    "Function": "function", "SavedTensorsFreedError": "function", "VersionMismatchError": "function",
    "Step": "engine", "backward_steps": "engine",
    "backward": "api", "grad": "api",
    "FunctionCtx": "ctx_function", "once_differentiable": "ctx_function",
    "functional": "functional", "Variable": "variable", "forward_ad": "forward_ad",
    "NestedIOFunction": "nested_io", "graph": "graph",
}


def __getattr__(name: str):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(f"{__name__}.{where}")
    value = module if name == where else getattr(module, name)
    globals()[name] = value  # (once: later reads find it without coming here)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["Function", "Step", "backward_steps", "grad", "backward", "gradcheck", "jacobians", "GradcheckError",
           "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "VersionMismatchError",
           "SavedTensorsFreedError", "FunctionCtx", "once_differentiable", "inference_mode",
           "is_inference_mode_enabled", "functional", "Variable", "detect_anomaly", "set_detect_anomaly",
           "gradgradcheck", "set_multithreading_enabled", "enforce_grad_layout_policy", "forward_ad",
           "NestedIOFunction", "graph"]
