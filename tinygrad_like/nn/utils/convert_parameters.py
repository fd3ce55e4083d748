"""``parameters_to_vector`` and ``vector_to_parameters``: all of a model's parameters as one flat vector and back
(for optimizers and analyses that see the model as a point in R^n)."""

from __future__ import annotations

from collections.abc import Iterable

from ...functions import cat
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(param: Tensor, old):
    if old is not None and param.device != old:
        raise TypeError(f"Found two parameters on different devices, this is currently not supported: {old} and "
                        f"{param.device}")
    return param.device


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated, in iteration order (a new tensor in the autograd graph)."""
    device, vec = None, []
    for param in parameters:
        device = _check_device(param, device)
        vec.append(param.reshape(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Write consecutive slices of ``vec`` into the parameters' data (as torch, replacing ``.data``)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device, pointer = None, 0
    for param in parameters:
        device = _check_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].reshape(param.shape).detach().clone()
        pointer += n
