"""Lookups: the embedding-rows node and ``tl.nn.functional``'s ``embedding`` and ``embedding_bag``.

A plain embedding is ``weight.index_select(0, ids)``. With ``padding_idx`` or ``scale_grad_by_freq`` it is the
:class:`EmbeddingRows` node, whose backward skips the padding row's positions and divides by each index's count, as
torch's. ``max_norm`` renormalizes the referenced rows of the weight in place first (no gradient, a version bump), as
torch does. ``embedding_bag`` picks the rows of each bag (``padding_idx`` entries left out) and reduces them per bag:
``sum`` and ``mean`` by ``index_add`` (or one reshape and a sum for fixed-length 2-D input), ``max`` by
``scatter_reduce('amax')``; an empty bag gives zeros.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> w = tl.arange(12.0).reshape(6, 2)
>>> F.embedding_bag(tl.tensor([1, 2, 4, 5]), w, tl.tensor([0, 2]), mode="sum")
tensor([[ 6.,  8.],
        [18., 20.]])
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ._nn_args import _check_tensor_at, _const
from ._util import check_index_device

if TYPE_CHECKING:  # (annotations only: the Tensor class sits above the ops)
    from ..tensor import Tensor

__all__ = ["embedding", "embedding_bag"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class EmbeddingRows(Function):
    """Rows ``weight[idx]`` (shape ``idx.shape + (D,)``) with torch's embedding gradient: each position's gradient
    is added into its row, except at ``padding_idx`` (none), and divided by how often its index occurs in ``idx``
    when ``scale_grad_by_freq``. The backward is written with Tensor ops (``index_add``), so it differentiates
    again in the incoming gradient."""

    __slots__ = ("num", "padding_idx", "by_freq")

    def forward(self, weight, idx, padding_idx, by_freq):
        be = weight._dev.backend
        self.num, self.padding_idx, self.by_freq = weight.shape[0], padding_idx, by_freq
        if _grad_mode.enabled and weight.requires_grad:
            self.save_for_backward(idx)
        rows = be.index_select(weight._x, 0, be.reshape(idx._x, (-1,)))
        return be.reshape(rows, idx.shape + (weight.shape[1],))

    def backward(self, g):
        (idx,) = self.saved_tensors
        flat = idx.reshape(-1)
        g2 = g.reshape(-1, g.shape[-1])
        coef = None
        if self.padding_idx is not None:
            coef = (flat != self.padding_idx).to(g.dtype)
        if self.by_freq:
            ones = g.new_ones(flat.shape[0])
            counts = g.new_zeros(self.num).index_add(0, flat, ones)
            inv = 1.0 / counts.index_select(0, flat)
            coef = inv if coef is None else coef * inv
        if coef is not None:
            g2 = g2 * coef.unsqueeze(1)
        return g.new_zeros(self.num, g.shape[-1]).index_add(0, flat, g2), None, None, None


_INDEX = (dtypes.int64, dtypes.int32)


def _check_indices(input, fn: str, arg: str = "indices", pos: int = 1) -> None:
    if input.dtype not in _INDEX:
        raise RuntimeError(f"Expected tensor for argument #{pos} '{arg}' to have one of the following scalar types: "
                           f"Long, Int; but got {input.dtype.name} instead (while checking arguments for {fn})")


def _check_range(input, num: int, fn: str) -> None:
    if input.numel():
        lo, hi = int(input.min().item()), int(input.max().item())
        if lo < 0 or hi >= num:
            raise IndexError(f"index out of range in self ({fn}: indices span [{lo}, {hi}] but there are only "
                             f"{num} embeddings)")


def _renorm_(weight, input, max_norm: float, norm_type: float) -> None:
    """torch's embedding_renorm_: each referenced row whose norm exceeds ``max_norm`` is scaled down to it, in
    place and without gradient."""
    with grad_mode.no_grad():
        ids = input.reshape(-1).unique()
        rows = weight.index_select(0, ids)
        norms = rows.norm(norm_type, 1)
        scale = (max_norm / (norms + 1e-7)).where(norms > max_norm, 1.0)
        weight[ids] = rows * scale.unsqueeze(1).to(weight.dtype)


def _padding_index(padding_idx, num: int, fn: str):
    if padding_idx is None:
        return None
    if not -num <= padding_idx < num:
        if fn == "embedding":
            raise AssertionError(f"Padding_idx must be within num_embeddings (got {padding_idx} for {num} "
                                 f"embeddings)")
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, but got "
                           f"{padding_idx}")
    return padding_idx % num


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` (num_embeddings, embedding_dim) picked by integer ``input`` (any shape).

    ``padding_idx``'s row gets no gradient; ``max_norm`` renormalizes the rows used, in place; with
    ``scale_grad_by_freq`` each row's gradient is divided by how often it occurs in ``input``. ``sparse=True``
    is accepted and gives a dense gradient (there are no sparse tensors here)."""
    _check_tensor_at(input, "embedding")
    _check_tensor_at(weight, "embedding", "weight")
    _check_indices(input, "embedding")
    check_index_device(weight, input, "embedding", "input (the indices)")
    if weight.ndim != 2:
        raise RuntimeError(f"'weight' must be 2-D (num_embeddings, embedding_dim), got shape {weight.shape}")
    num = weight.shape[0]
    padding_idx = _padding_index(padding_idx, num, "embedding")
    _check_range(input, num, "embedding")
    if max_norm is not None:
        _renorm_(weight, input, max_norm, norm_type)
    if padding_idx is None and not scale_grad_by_freq:
        return weight.index_select(0, input.reshape(-1)).reshape(input.shape + (weight.shape[1],))
    return EmbeddingRows.apply(weight, input, padding_idx, bool(scale_grad_by_freq))


def _bags(input, offsets, per_sample_weights, include_last_offset: bool):
    """Flatten to (ids, bag of each id, number of bags, per-sample weights or None, fixed bag length or None)."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        b, length = input.shape
        psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
        bag = np.repeat(np.arange(b), length)
        return input.reshape(-1), bag, b, psw, length
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    _check_tensor_at(offsets, "embedding_bag", "offsets")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    _check_indices(offsets, "embedding_bag", "offsets", 3)
    n = input.shape[0]
    off = offsets.numpy().astype(np.int64)
    if off.size and off[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {off[0]}")
    if off.size and off[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{off[-1]}")
    if np.any(np.diff(off) < 0):
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, got {off.tolist()}")
    if include_last_offset:  # B + 1 offsets, the last one the end of the last bag (documented: the input's length)
        if off.size == 0:
            raise RuntimeError("embedding_bag: include_last_offset=True needs at least one offset")
        starts, ends, b = off[:-1], off[1:], off.size - 1
    else:
        starts, b = off, off.size
        ends = np.append(off[1:], n)
    bag = np.repeat(np.arange(b), ends - starts)
    if bag.size < n:  # positions past the last offset belong to no bag
        keep = _const(np.arange(bag.size), input)
        psw = None if per_sample_weights is None else per_sample_weights.index_select(0, keep)
        return input.index_select(0, keep), bag, b, psw, None
    return input, bag, b, per_sample_weights, None


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embeddings, without building the (bags, length, dim) tensor.

    ``input`` is 2-D (each row a bag of fixed length) or 1-D with ``offsets`` (each bag's start; with
    ``include_last_offset`` the last offset is the end). ``per_sample_weights`` (mode 'sum' only) scales each
    picked row; entries equal to ``padding_idx`` are left out of their bag (and of its count for 'mean')."""
    _check_tensor_at(input, "embedding_bag")
    _check_tensor_at(weight, "embedding_bag", "weight")
    if weight.dtype is dtypes.int64 and input.dtype.is_floating_point:
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    _check_indices(input, "embedding_bag")
    for t, what in ((input, "input (the indices)"), (offsets, "offsets"), (per_sample_weights, "per_sample_weights")):
        if t is not None:
            check_index_device(weight, t, "embedding_bag", what)
    ids, bag, b, psw, fixed = _bags(input, offsets, per_sample_weights, include_last_offset)
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    num, dim = weight.shape
    padding_idx = _padding_index(padding_idx, num, "embedding_bag")
    if ids.numel():
        v = ids.numpy()
        bad = np.flatnonzero((v < 0) | (v >= num))
        if bad.size:
            raise RuntimeError(f"Index {bad[0]} of input takes value {v[bad[0]]} which is not in the valid range "
                               f"[0, {num})")
    if max_norm is not None:
        _renorm_(weight, ids, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if psw is not None and psw.dtype is not weight.dtype:
        raise RuntimeError(f"embedding_bag: expected per_sample_weights of the weight's dtype {weight.dtype.name}, "
                           f"got {psw.dtype.name}")
    if padding_idx is not None:  # padding entries belong to no bag
        keep = ids.numpy() != padding_idx
        if not keep.all():
            pos = _const(np.flatnonzero(keep), ids)
            ids, bag, fixed = ids.index_select(0, pos), bag[keep], None
            psw = None if psw is None else psw.index_select(0, pos)
    rows = (weight.index_select(0, ids) if not scale_grad_by_freq else
            EmbeddingRows.apply(weight, ids, None, True))  # (M, D)
    if psw is not None:
        rows = rows * psw.unsqueeze(1)
    if fixed is not None and fixed > 0 and mode != "max":
        per = rows.reshape(b, fixed, dim)
        return per.sum(1) if mode == "sum" else per.mean(1)
    bag_t = _const(bag.astype(np.int64), weight)
    if mode == "max":
        index = bag_t.unsqueeze(1).expand(bag.size, dim)
        return weight.new_zeros(b, dim).scatter_reduce(0, index, rows, "amax", include_self=False)
    out = weight.new_zeros(b, dim).index_add(0, bag_t, rows)
    if mode == "mean":
        counts = np.maximum(np.bincount(bag, minlength=b), 1).astype(weight.dtype.np)
        out = out / _const(counts, weight).unsqueeze(1)
    return out
