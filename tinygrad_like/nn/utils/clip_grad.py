"""Gradient clipping, as ``torch.nn.utils.clip_grad``: ``clip_grad_norm_`` and ``clip_grad_value_``.

Clipping rescales ``.grad`` in place (bumping each gradient's version), between ``backward()``
and ``optimizer.step()``. The norm is computed and applied with tensor ops, never a round trip to
the host, so it stays on the parameters' device; only ``error_if_nonfinite=True`` reads it back. ``foreach`` is
accepted for torch's signatures: there is one implementation (torch's choice between a loop and fused kernels).
"""

from __future__ import annotations

import math
import numbers
import types
import warnings
from collections.abc import Iterable

from ...autograd import grad_mode
from ...creation import tensor
from ...functions import stack
from ...tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]

TensorOrTensors = Tensor | Iterable[Tensor]


def _as_list(tensors: TensorOrTensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _number(name: str, value) -> float:
    if isinstance(value, str):
        return float(value)  # 'inf' as PyTorch accepts it
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def _vector_norm(t: Tensor, p: float) -> Tensor:
    """``torch.linalg.vector_norm(t, p)`` over all elements, as a 0-d tensor of ``t``'s dtype."""
    if p == 2.0:
        return (t * t).sum().sqrt()
    if p == 1.0:
        return t.abs().sum()
    if p == math.inf:
        return t.abs().amax()
    if p == -math.inf:
        return t.abs().amin()
    if p == 0.0:
        return (t != 0).sum().to(t.dtype)
    return (t.abs() ** p).sum() ** (1.0 / p)


def get_total_norm(tensors: TensorOrTensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` as if concatenated into one vector (a 0-d tensor).

    Like PyTorch, it is the norm of the per-tensor norms, which equals the norm of the concatenation
    for every p (and avoids building the concatenation).
    """
    tensors = _as_list(tensors)
    p = _number("norm_type", norm_type)
    if not tensors:
        return tensor(0.0)
    with grad_mode.no_grad():
        first = tensors[0]
        norms = [_vector_norm(t, p) for t in tensors]
        dtype = max((n.dtype for n in norms), key=lambda d: d.itemsize)
        total = _vector_norm(stack([n.to(first.device).to(dtype) for n in norms]), p)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {p} for gradients from `parameters` is non-finite, so it "
                           f"cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           f"norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale every ``.grad`` by ``min(max_norm / (total_norm + 1e-6), 1)`` in place (a given norm)."""
    max_norm = _number("max_norm", max_norm)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with grad_mode.no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Rescale the gradients so that their total ``norm_type``-norm is at most ``max_norm``.

    Returns the total norm *before* clipping (a 0-d tensor), which is worth logging: spikes show
    instability. As in PyTorch every gradient is multiplied, by exactly 1.0 when the norm is small
    enough (so values are unchanged but versions bump). ``norm_type`` may be ``float('inf')``.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([3.0, 4.0], requires_grad=True)
    >>> w.grad = tl.tensor([3.0, 4.0])
    >>> tl.nn.utils.clip_grad_norm_([w], max_norm=1.0)
    tensor(5.)
    >>> w.grad
    tensor([0.6000, 0.8000])
    """
    if isinstance(parameters, types.GeneratorType):
        parameters = list(parameters)
        if not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters: TensorOrTensors, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place.

    >>> import tinygrad_like as tl
    >>> w = tl.zeros(3, requires_grad=True)
    >>> w.grad = tl.tensor([-2.0, 0.5, 3.0])
    >>> tl.nn.utils.clip_grad_value_([w], 1.0)
    >>> w.grad
    tensor([-1.0000,  0.5000,  1.0000])
    """
    clip_value = _number("clip_value", clip_value)
    with grad_mode.no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)



def clip_grad_norm(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated spelling of :func:`clip_grad_norm_` (warns, as torch's)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
