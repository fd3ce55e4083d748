"""Views and in-place writes, as in PyTorch: a view always reads its base's *current* history.

A view shares its base's storage. When the base is written in place with autograd (``y.zero_()``,
``a.add_(b)`` with ``b`` requiring grad), the base gets a new ``grad_fn``; every live view of it then gets
a :class:`ViewOfBase` node over that new history (PyTorch's ``AsStridedBackward``), so ``v.sum().backward()``
sends its gradient through the write, and a view of a base that did not require grad starts requiring it.

When a *view* is written in place with autograd (``y[0:2].mul_(3)``), the base's new history is a
:class:`WriteThroughView` node (PyTorch's ``CopySlices``): the written elements come from the in-place
op's result, the others from the base's old history. Then every view of the base, the written one
included, is re-read from that node.

Both nodes know where the view's elements sit in the base: ``positions``, an int64 tensor of the view's
shape holding flat (row-major) indices into the base.

>>> import tinygrad_like as tl
>>> x = tl.tensor([1.0, 2.0], requires_grad=True)
>>> y = x * 2
>>> v = y[0:1]
>>> _ = y.zero_()
>>> v.grad_fn.name
'ViewOfBase'
>>> v.sum().backward(); x.grad.tolist()
[0.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..device import CPU
from .function import Function, record


class ViewOfBase(Function):
    """A view re-read from its base after the base got a new history: the gradient lands at ``positions``."""

    __slots__ = ("base_shape", "positions")

    def backward(self, g):
        from ..ops.indexing import IndexAdd  # (ops.indexing is a higher layer: a module-level import would be a cycle)

        numel = int(np.prod(self.base_shape, dtype=np.int64))
        flat = IndexAdd.apply(g.reshape(-1), (numel,), (self.positions.reshape(-1),))
        return (flat.reshape(self.base_shape),)


class WriteThroughView(Function):
    """The base after an in-place write through one of its views: the old values outside the view, the
    written ones (the in-place op's result, ``next[1]``) inside it."""

    __slots__ = ("base_shape", "positions")

    def backward(self, g):
        from ..ops.indexing import IndexPut  # (ops.indexing is a higher layer: a module-level import would be a cycle)

        flat = g.reshape(-1)
        where = (self.positions.reshape(-1),)
        old = IndexPut.apply(flat, where, 0.0).reshape(self.base_shape)  # the written elements lost their past
        written = flat[self.positions]
        return old, written


def positions(view, base) -> np.ndarray:
    """Flat (row-major) indices into ``base`` of each element of ``view`` (both over one storage)."""

    n = view._storage.numel
    every = np.arange(n, dtype=np.int64)
    be = CPU.backend
    in_view = be.view(every, view._layout, dtypes.int64)
    in_base = be.view(every, base._layout, dtypes.int64)
    where = np.full(n, -1, dtype=np.int64)
    where[in_base.reshape(-1)] = np.arange(in_base.size, dtype=np.int64)
    out = where[in_view]
    if out.size and int(out.min()) < 0:  # cannot happen for views made from the base; a guard, not a path
        raise RuntimeError("internal error: a view reaches storage elements its base does not hold")
    return out


def _positions_tensor(view, base):
    from ..creation import tensor  # (creation is a higher layer: a module-level import would be a cycle)

    return tensor(positions(view, base), device=base._dev)


def refresh_views(base) -> None:
    """Give every live view of ``base`` (a root tensor whose history just changed) a node over it."""
    views = base._storage.views
    if not views:
        return
    alive = []
    for ref in views:
        v = ref()
        if v is None:
            continue
        alive.append(ref)
        if v._base is base:
            node = ViewOfBase()
            node.base_shape, node.positions = base._x.shape, _positions_tensor(v, base)
            record(node, (base,), v)
    base._storage.views = alive


def write_through_view(view, result) -> None:
    """After ``result`` was written into ``view``: the base's new history, then every view re-read from it."""
    base = view._base
    node = WriteThroughView()
    node.base_shape, node.positions = base.shape, _positions_tensor(view, base)
    record(node, (base, result), base)
    refresh_views(base)


class OverlappingWrite(Function):
    """The history of a tensor written through a view whose elements share memory (after ``expand``): the
    values are right, but no gradient can say which of the aliased writes won, so backward refuses (torch
    refuses there too, at backward time)."""

    __slots__ = ("shape",)

    def backward(self, g):
        raise RuntimeError(f"unsupported operation: more than one element of the written-to tensor (shape "
                           f"{list(self.shape)}) refers to a single memory location, so the gradient of this "
                           f"in-place write is undefined. Please clone() the tensor before writing to it.")


def unusable_history(view, value, op: str) -> None:
    """After a write through a self-overlapping view with autograd: a history whose backward refuses."""
    from ..tensor import Tensor  # (tensor is a higher layer: a module-level import would be a cycle)

    base = view._base if view._base is not None else view
    node = OverlappingWrite()
    node.shape = view.shape
    record(node, (base, value if isinstance(value, Tensor) else None), base)
    refresh_views(base)
