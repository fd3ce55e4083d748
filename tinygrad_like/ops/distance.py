"""Distances and similarities as functions: ``cosine_similarity`` and ``pairwise_distance``, composed from Tensor
ops.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> F.pairwise_distance(tl.tensor([[3.0, 4.0]]), tl.tensor([[0.0, 0.0]]), eps=0.0)
tensor([5.])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..layout import broadcast_shapes
from ._nn_args import _check_tensor

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1/|x1| * x2/|x2|)`` over ``dim`` (broadcasting), each norm clamped below at ``eps`` without
    changing its gradient, as PyTorch's."""
    _check_tensor(x1, "cosine_similarity", "x1")
    _check_tensor(x2, "cosine_similarity", "x2")
    try:
        shape = broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise RuntimeError(f"cosine_similarity: x1 of shape {list(x1.shape)} and x2 of shape {list(x2.shape)} "
                           f"cannot be broadcast together") from None
    a, b = x1.expand(shape), x2.expand(shape)
    n1, n2 = a.norm(2, dim, keepdim=True), b.norm(2, dim, keepdim=True)
    n1 = n1 + (n1.detach().clamp_min(eps) - n1.detach())  # clamped value, unclamped gradient (torch's no_grad clamp_)
    n2 = n2 + (n2.detach().clamp_min(eps) - n2.detach())
    return ((a / n1) * (b / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim."""
    _check_tensor(x1, "pairwise_distance", "x1")
    _check_tensor(x2, "pairwise_distance", "x2")
    nd = max(x1.ndim, x2.ndim)
    if nd == 0:
        raise RuntimeError("pairwise_distance: expected at least 1-D inputs, got two 0-d tensors")
    d = x1 - x2 + eps
    return d.norm(p, -1, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between all pairs of rows of an (N, M) ``input``, the upper triangle of the distance
    matrix flattened row by row (N*(N-1)/2 values)."""
    _check_tensor(input, "pdist")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(input.shape[0], 1)
    if len(i) == 0:
        return input.new_zeros((0,))
    diff = input[i.tolist()] - input[j.tolist()]
    return diff.norm(p, -1)
