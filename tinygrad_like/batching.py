"""``vmap``: a function of one example mapped over a batch dimension, as ``torch.vmap`` (``torch.func.vmap``).

torch vectorizes by rewriting each op for the batch; tinygrad_like runs the function once per example and stacks
the results, which gives the same values and gradients (and is as slow as a Python loop). ``in_dims`` and
``out_dims`` follow torch: an int or None per argument (nested like the arguments: tuples, lists, dicts), and
``randomness`` is 'error' (a random op inside raises, as torch), 'different' or 'same'.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .tensor_base import TensorBase

__all__ = ["vmap"]


def _broadcast_dims(dims, tree, what: str):
    """``dims`` (an int, None, or a structure matching ``tree``) spread to every leaf of ``tree``."""
    if dims is None or isinstance(dims, int):
        if isinstance(tree, (tuple, list)):
            return type(tree)(_broadcast_dims(dims, t, what) for t in tree)
        if isinstance(tree, dict):
            return {k: _broadcast_dims(dims, v, what) for k, v in tree.items()}
        return dims
    if isinstance(tree, (tuple, list)) and isinstance(dims, (tuple, list)):
        if len(dims) != len(tree):
            raise ValueError(f"vmap: {what} {dims!r} has {len(dims)} entries but the structure it describes has "
                             f"{len(tree)}")
        return type(tree)(_broadcast_dims(d, t, what) for d, t in zip(dims, tree))
    if isinstance(tree, dict) and isinstance(dims, dict):
        return {k: _broadcast_dims(dims.get(k), v, what) for k, v in tree.items()}
    raise ValueError(f"vmap: {what} {dims!r} is not compatible with the structure of the inputs")


def _leaves(tree, dims):
    if isinstance(tree, (tuple, list)):
        for t, d in zip(tree, dims):
            yield from _leaves(t, d)
    elif isinstance(tree, dict):
        for k in tree:
            yield from _leaves(tree[k], dims[k])
    else:
        yield tree, dims


def _select(tree, dims, i: int):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_select(t, d, i) for t, d in zip(tree, dims))
    if isinstance(tree, dict):
        return {k: _select(v, dims[k], i) for k, v in tree.items()}
    if dims is None:
        return tree
    return tree.select(dims, i)


def _stack(results: list, out_dims, n: int):
    first = results[0]
    if isinstance(first, (tuple, list)):
        dims = _broadcast_dims(out_dims, first, "out_dims")
        return type(first)(_stack([r[j] for r in results], dims[j], n) for j in range(len(first)))
    if isinstance(first, dict):
        dims = _broadcast_dims(out_dims, first, "out_dims")
        return {k: _stack([r[k] for r in results], dims[k], n) for k in first}
    if out_dims is None:
        return first
    from .ops.movement import stack  # (the ops sit above the tensor layer: needed only when a batch is stacked)
    if not isinstance(first, TensorBase):
        if isinstance(first, (int, float, bool)):
            from .creation import tensor  # (as above)
            results = [tensor(r) for r in results]
        else:
            raise ValueError(f"vmap: the function must return tensors (or tuples, lists, dicts of them), got "
                             f"{type(first).__name__}")
    d = out_dims if out_dims >= 0 else out_dims + results[0].ndim + 1
    return stack(results, d)


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over dim ``in_dims`` of its arguments; the results stacked along ``out_dims``."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    if not callable(func):
        raise TypeError(f"vmap: func must be callable, got {type(func).__name__}")

    @functools.wraps(func)
    def mapped(*args: Any, **kwargs: Any):
        if isinstance(in_dims, (tuple, list)) and len(in_dims) != len(args):
            raise ValueError(f"vmap(f, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of inputs: it has {len(in_dims)} entries for {len(args)} arguments")
        dims = _broadcast_dims(tuple(in_dims) if isinstance(in_dims, list) else in_dims, args, "in_dims")
        sizes = set()
        for leaf, d in _leaves(args, dims):
            if d is None:
                continue
            if not isinstance(leaf, TensorBase):
                raise ValueError(f"vmap: got in_dim={d} for an input that is not a Tensor ({type(leaf).__name__});"
                                 f" use None for inputs that are not mapped")
            if not -leaf.ndim <= d < leaf.ndim:
                raise ValueError(f"vmap: got in_dim={d} for an input but the input is of dimension {leaf.ndim}")
            sizes.add(leaf.shape[d])
        if not sizes:
            raise ValueError("vmap: at least one input must be a Tensor mapped over a dim (an in_dim that is not "
                             "None)")
        if len(sizes) > 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sorted(sizes)} for the mapped dimension")
        n = sizes.pop()
        from . import random as _random  # (needed only for randomness='same')
        state = _random.get_rng_state() if randomness == "same" else None
        results = []
        if randomness == "error":
            _random._REFUSING.append("vmap: called random operation while in randomness error mode. Please either "
                                     "use the 'same' or 'different' randomness flags on vmap or perform the "
                                     "randomness operation out of vmap")
        try:
            for i in range(n):
                if state is not None:
                    _random.set_rng_state(state)
                results.append(func(*_select(args, dims, i), **kwargs))
        finally:
            if randomness == "error":
                _random._REFUSING.pop()
        if n == 0:
            raise ValueError("vmap: the mapped dimension has size 0")
        return _stack(results, out_dims, n)

    return mapped
