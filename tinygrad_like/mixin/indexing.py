"""Tensor methods for indexing: ``t[i]``, ``t[i] = v``, gather/scatter, masked_fill."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..autograd import grad_mode, view_history
from ..ops import _util
from ..ops import elementwise as E
from ..ops import indexing as I
from ..ops import movement as M
from ..tensor_base import TensorBase, _shape_args
from .inplace import _refuse_shared_elements

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class IndexingMixin:
    """Tensor methods for indexing: ``t[i]``, ``t[i] = v``, gather/scatter, masked_fill."""

    __slots__ = ()

    # ---- indexing ----------------------------------------------------------------------------
    def __getitem__(self, index) -> Tensor:
        idx, advanced = _normalize_index(index, self)
        if not advanced:
            return M.Slice.apply(self, idx)
        return I.Index.apply(self, idx)

    def __setitem__(self, index, value) -> None:
        idx, advanced = _normalize_index(index, self)
        if isinstance(value, (list, tuple, np.ndarray)):
            value = self._from_value(value)
        if isinstance(value, TensorBase) and value._dev is not self._dev:
            _util.check_same_device(self, value, "setitem")
        self._check_inplace("__setitem__", overlap_ok=True)
        if self._lay is not None and 0 in self._lay.strides:  # only the written region must not share elements
            with grad_mode.no_grad():
                region = self._lay if advanced else self[index]._lay
            _refuse_shared_elements(region, "__setitem__")
        needs_graph = _grad.enabled and (self.requires_grad or
                                              (isinstance(value, TensorBase) and value.requires_grad))
        overlapping = self._lay is not None and any(s == 0 and n > 1 for n, s in zip(self._lay.shape,
                                                                                     self._lay.strides))
        if needs_graph and not overlapping:
            if isinstance(value, TensorBase) and value.dtype is not self.dtype:
                value = value.to(self.dtype)
            self._rebase(I.IndexPut.apply(self._graph_input(), idx, value), "__setitem__")
            return
        v = value
        if isinstance(value, TensorBase):
            v = value._x if value.dtype is self.dtype else self._dev.backend.cast(value._x, self.dtype)
        elif not isinstance(value, (int, float, bool)):
            raise TypeError(f"can't assign a {type(value).__name__} to a tensor; expected a Tensor or a number")
        try:
            self._dev.backend.setitem(self._x, I.native_index(idx), v)
        except (ValueError, IndexError) as e:
            vs = value.shape if isinstance(value, TensorBase) else "a number"
            raise RuntimeError(f"cannot assign a value of shape {vs} to tensor of shape {self.shape} at index "
                               f"{index!r}: {e}") from None
        self._wrote("__setitem__")
        if needs_graph:  # a tensor whose elements share memory (expand): the values are written, as in torch,
            view_history.unusable_history(self, value, "__setitem__")  # and a backward through it is refused

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return I.Gather.apply(self, dim, index)

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return I.ScatterAdd.apply(self, dim, index, src)

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return I.IndexSelect.apply(self, dim, index)

    def masked_fill(self, mask: Tensor, value) -> Tensor:
        return E.MaskedFill.apply(self, mask, value)

    def flip(self, *dims) -> Tensor:
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return M.Flip.apply(self, dims)

    def repeat(self, *reps) -> Tensor:
        return M.Repeat.apply(self, _shape_args(reps))

    def tril(self, diagonal: int = 0) -> Tensor:
        return M.Tri.apply(self, diagonal, False)

    def triu(self, diagonal: int = 0) -> Tensor:
        return M.Tri.apply(self, diagonal, True)


def _normalize_index(index, t: Tensor) -> tuple[Any, bool]:
    """Return (index tuple, is_advanced). Lists and arrays become int64/bool tensors."""
    if not isinstance(index, tuple):
        index = (index,)
    out, advanced = [], False
    for i in index:
        if isinstance(i, (bool, np.bool_)):
            raise IndexError("indexing with a Python bool is not supported; use a bool tensor mask")
        if isinstance(i, (int, np.integer)):
            out.append(int(i))
        elif i is None or i is Ellipsis or isinstance(i, slice):
            if isinstance(i, slice):
                for v in (i.start, i.stop, i.step):
                    if v is not None and not isinstance(v, (int, np.integer)):
                        if isinstance(v, TensorBase) and v.numel() == 1 and not v.dtype.is_floating_point:
                            continue
                        raise TypeError(f"slice indices must be integers or None, got {type(v).__name__}")
                i = slice(*(int(v) if v is not None else None for v in (i.start, i.stop, i.step)))
            out.append(i)
        elif isinstance(i, TensorBase):
            if i.dtype.is_floating_point:
                raise IndexError(f"tensors used as indices must be long, int or bool tensors, got {i.dtype.name}")
            if i._dev is not t._dev:
                raise IndexError(f"indices should be on the same device as the indexed tensor ({t._dev}), "
                                 f"got {i._dev}")
            out.append(i)
            advanced = True
        elif isinstance(i, (list, np.ndarray)):
            from ..creation import tensor
            arr = np.asarray(i)
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int or bool tensors, got floats")
            out.append(tensor(arr if arr.dtype == np.bool_ else arr.astype(np.int64), device=t._dev))
            advanced = True
        else:
            raise IndexError(f"unsupported index type {type(i).__name__}; expected int, slice, None, ..., "
                             f"or an integer/bool tensor")
    if advanced:
        _check_masks(out, t.shape)
    return tuple(out), advanced


def _check_masks(index: list, shape: tuple) -> None:
    """A bool mask must have the shape of the dims it selects (torch's message, not NumPy's)."""
    def width(i) -> int:
        if i is None or i is Ellipsis:
            return 0
        return i.ndim if isinstance(i, TensorBase) and i.dtype.name == "bool" else 1
    used = sum(width(i) for i in index)
    dim = 0
    for i in index:
        if i is Ellipsis:
            dim += max(0, len(shape) - used)
            continue
        if isinstance(i, TensorBase) and i.dtype.name == "bool":
            for k, n in enumerate(i.shape):
                if dim + k >= len(shape) or shape[dim + k] != n:
                    have = shape[dim + k] if dim + k < len(shape) else None
                    raise IndexError(f"The shape of the mask {list(i.shape)} at index {k} does not match the shape "
                                     f"of the indexed tensor {list(shape)} at index {dim + k}"
                                     + ("" if have is not None else " (the tensor has fewer dims)"))
        dim += width(i)
