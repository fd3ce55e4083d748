"""Indexing: ``t[i]`` and ``t[i] = v`` (basic indices make views, index tensors and masks pick copies), gather,
scatter_add, index_select, masked_fill and nonzero; their graph nodes, Tensor methods (:class:`IndexingMixin`) and
free functions (``tl.gather``, ``tl.one_hot``, ...). Writing at indices (scatter, index_add, index_put...) is in
:mod:`.scatter`."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import dtypes
from ..autograd import grad_mode, view_history
from ..autograd.function import Function
from ..layout import broadcast_shapes, normalize_dim
from ..tensor_base import TensorBase
from . import _util
from ._util import free_functions
from .comparison import MaskedFill
from .inplace import _refuse_shared_elements
from .movement import Slice

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = ["one_hot", "gather", "scatter_add", "index_select", "masked_fill", "nonzero"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

_INDEX_DTYPES = (dtypes.int64, dtypes.int32)


def _check_index(index, what: str, x=None):
    """``index`` is an integer tensor (on ``x``'s device, when ``x`` is given)."""
    if not isinstance(index, TensorBase):
        raise TypeError(f"{what}: index must be a Tensor of dtype int64, got {type(index).__name__}")
    if index.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"{what}(): Expected dtype int64 for index, got {index.dtype.name}")
    if x is not None:
        _util.check_index_device(x, index, what)


def _check_bounds(index, n: int, what: str, dim: int, exc: type = IndexError) -> None:
    """Out-of-range indices raise here, naming the value, rather than deep inside a kernel (``exc``: the type torch
    raises for this op)."""
    if index.numel():
        ix = index.numpy()
        bad = ix[(ix < -n) | (ix >= n)]
        if bad.size:
            raise exc(f"{what}: index {int(bad.reshape(-1)[0])} is out of bounds for dimension {dim} "
                             f"with size {n}")


class Gather(Function):
    __slots__ = ("dim", "in_shape")

    def forward(self, x, dim, index):
        _check_index(index, "gather", x)
        dim = normalize_dim(dim, max(x.ndim, 1))
        if index.ndim != x.ndim:
            raise RuntimeError(f"gather: index tensor must have the same number of dimensions as input "
                               f"({index.ndim} vs {x.ndim}; input shape {x.shape}, index shape {index.shape})")
        for d in range(x.ndim):
            if d != dim and index.shape[d] > x.shape[d]:
                raise RuntimeError(f"gather: size of index {index.shape} must not exceed input {x.shape} in "
                                   f"dimension {d} (only dim={dim} may be larger)")
        _check_bounds(index, x.shape[dim] if x.ndim else 1, "gather", dim, RuntimeError)
        self.dim, self.in_shape = dim, x._x.shape
        self.save_for_backward(index)
        return x._dev.backend.gather(x._x, dim, index._x)

    def backward(self, g):
        (index,) = self.saved_tensors
        zeros = g.new_zeros(self.in_shape)
        return zeros.scatter_add(self.dim, index, g), None, None


class ScatterAdd(Function):
    __slots__ = ("dim",)

    def forward(self, x, dim, index, src):
        _check_index(index, "scatter_add", x)
        dim = normalize_dim(dim, max(x.ndim, 1))
        if index.ndim != x.ndim or src.ndim != x.ndim:
            raise RuntimeError(f"scatter_add: index {index.shape}, src {src.shape} and self {x.shape} must "
                               f"have the same number of dimensions")
        for d in range(x.ndim):
            if index.shape[d] > src.shape[d] or (d != dim and index.shape[d] > x.shape[d]):
                raise RuntimeError(f"scatter_add: index {index.shape} must not be larger than src {src.shape} "
                                   f"in any dim, nor than self {x.shape} outside dim {dim}")
        _check_bounds(index, x.shape[dim] if x.ndim else 1, "scatter_add", dim, RuntimeError)
        if src.dtype is not x.dtype:
            raise RuntimeError(f"scatter_add(): Expected self.dtype to be equal to src.dtype ({x.dtype.name} vs "
                               f"{src.dtype.name})")
        self.dim = dim
        self.save_for_backward(index)
        return x._dev.backend.scatter_add(x._x, dim, index._x, src._x)

    def backward(self, g):
        (index,) = self.saved_tensors
        return g, None, None, g.gather(self.dim, index)


class IndexSelect(Function):
    __slots__ = ("dim", "in_shape")

    def forward(self, x, dim, index):
        _check_index(index, "index_select", x)
        if index.ndim > 1:
            raise IndexError(f"index_select(): Index is supposed to be a vector, got shape {index.shape}")
        dim = normalize_dim(dim, max(x.ndim, 1))
        _check_bounds(index, x.shape[dim] if x.ndim else 1, "index_select", dim)
        self.dim, self.in_shape = dim, x._x.shape
        self.save_for_backward(index)
        return x._dev.backend.index_select(x._x, dim, x._dev.backend.reshape(index._x, (-1,)))

    def backward(self, g):
        (index,) = self.saved_tensors
        idx = [slice(None)] * len(self.in_shape)
        idx[self.dim] = index.reshape(-1)
        return IndexAdd.apply(g, self.in_shape, tuple(idx)), None, None


class Index(Function):
    """Advanced indexing ``x[idx]`` with integer/boolean tensors (a copy, as in NumPy/PyTorch)."""

    __slots__ = ("index", "in_shape")

    def forward(self, x, index):
        self.index, self.in_shape = index, x._x.shape
        _save_index(self, index)
        try:
            return x._dev.backend.index(x._x, native_index(index))
        except IndexError as e:
            raise_index_error(e, x.shape)

    def backward(self, g):
        self.saved_tensors  # noqa: B018 - refuses index tensors written in place since the forward
        return IndexAdd.apply(g, self.in_shape, self.index), None


class IndexAdd(Function):
    """Zeros of ``shape`` plus ``g`` accumulated at an advanced index (duplicates add up)."""

    __slots__ = ("index",)

    def forward(self, g, shape, index):
        self.index = index
        _save_index(self, index)
        return g._dev.backend.index_add(shape, g.dtype, native_index(index), g._x)

    def backward(self, gg):
        self.saved_tensors  # noqa: B018 - the version check of the index tensors
        return gg[self.index], None, None


class IndexPut(Function):
    """``out = x.clone(); out[index] = value`` (value a tensor or number): the graph of ``x[i] = v``."""

    __slots__ = ("index",)

    def forward(self, x, index, value):
        self.index = index
        _save_index(self, index)
        be = x._dev.backend
        out = be.copy(x._x)
        if isinstance(value, TensorBase):
            if value._dev is not x._dev:
                _util.check_same_device(x, value, "setitem")
            v = value._x
        else:
            v = value
        try:
            be.setitem(out, native_index(index), v)
        except (ValueError, IndexError) as e:
            raise_index_error(e, x.shape, value, index)
        return out

    def backward(self, g):
        self.saved_tensors  # noqa: B018 - the version check of the index tensors
        gx = IndexPut.apply(g, self.index, 0.0) if self.next[0] is not None else None
        gv = g[self.index] if self.next[2] is not None else None  # (summed to the value's shape by the engine)
        return gx, None, gv


def raise_index_error(e: Exception, shape: tuple, value=None, index=None):
    """NumPy's error from reading (``value`` None) or writing at an advanced index, in torch's words and type."""
    msg = str(e)
    if isinstance(e, IndexError) and "out of bounds" in msg:
        raise IndexError(msg.replace(" axis ", " dimension ")) from None
    if isinstance(e, IndexError) and "indexing arrays could not be broadcast" in msg:
        shapes = msg.split("shapes", 1)[-1].strip()
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}") \
            from None
    if value is None:
        raise IndexError(f"invalid index for a tensor of shape {list(shape)}: {msg}") from None
    vs = list(value.shape) if isinstance(value, TensorBase) else "a number"
    raise RuntimeError(f"shape mismatch: cannot assign a value of shape {vs} to a tensor of shape {list(shape)} at "
                       f"index {index!r}: {msg}") from None


def _save_index(node: Function, index) -> None:
    """Save the index's tensors with their versions: backward reads them, so a write into one before backward
    must be refused (as PyTorch does), not send the gradient to the wrong elements."""
    T = TensorBase
    if isinstance(index, T):
        node.save_for_backward(index)
    elif isinstance(index, tuple):
        ts = tuple(i for i in index if isinstance(i, T))
        if ts:
            node.save_for_backward(*ts)


def native_index(index):
    """Replace Tensors inside an index tuple by their native arrays."""
    T = TensorBase
    if isinstance(index, T):
        return index._x
    if isinstance(index, tuple):
        return tuple(i._x if isinstance(i, T) else i for i in index)
    return index


class IndexingMixin:
    """Tensor methods for indexing: ``t[i]``, ``t[i] = v``, gather/scatter, masked_fill."""

    __slots__ = ()

    # ---- indexing ----------------------------------------------------------------------------
    def __getitem__(self, index) -> Tensor:
        basic, adv = _normalize_index(index, self)
        if adv is None:
            return Slice.apply(self, basic)
        # torch's rule: ints, slices and None make a view first; the index tensors then pick from that view
        return Index.apply(self if basic is None else Slice.apply(self, basic), adv)

    def __setitem__(self, index, value) -> None:
        basic, adv = _normalize_index(index, self)
        if adv is None:
            self._put(basic, False, value, index)
        elif basic is None:
            self._put(adv, True, value, index)
        else:  # a write through the view of the basic part (torch's order: its history is the view's)
            self[basic]._put(adv, True, value, index)

    def _put(self, idx, advanced: bool, value, index) -> None:
        """``self[idx] = value`` for ``idx`` all basic or all advanced (``index``: the user's, for messages)."""
        if isinstance(value, (list, tuple, np.ndarray)):
            value = self._from_value(value)
        if isinstance(value, TensorBase) and value._dev is not self._dev:
            _util.check_same_device(self, value, "setitem")
        self._check_inplace("__setitem__", overlap_ok=True)
        if self._lay is not None and 0 in self._lay.strides:  # only the written region must not share elements
            with grad_mode.no_grad():
                region = self._lay if advanced else self[idx]._lay
            _refuse_shared_elements(region, "__setitem__")
        needs_graph = _grad_mode.enabled and (self.requires_grad or
                                              (isinstance(value, TensorBase) and value.requires_grad))
        overlapping = self._lay is not None and any(s == 0 and n > 1 for n, s in zip(self._lay.shape,
                                                                                     self._lay.strides))
        if needs_graph and not overlapping:
            if isinstance(value, TensorBase) and value.dtype is not self.dtype:
                value = value.to(self.dtype)
            self._rebase(IndexPut.apply(self._graph_input(), idx, value), "__setitem__")
            return
        v = value
        if isinstance(value, TensorBase):
            v = value._x if value.dtype is self.dtype else self._dev.backend.cast(value._x, self.dtype)
        elif not isinstance(value, (int, float, bool)):
            raise TypeError(f"can't assign a {type(value).__name__} to a tensor; expected a Tensor or a number")
        try:
            self._dev.backend.setitem(self._x, native_index(idx), v)
        except (ValueError, IndexError) as e:
            raise_index_error(e, self.shape, value, index)
        self._wrote("__setitem__")
        if needs_graph:  # a tensor whose elements share memory (expand): the values are written, as in torch,
            view_history.unusable_history(self, value, "__setitem__")  # and a backward through it is refused

    def gather(self, dim: int, index: Tensor) -> Tensor:
        return Gather.apply(self, dim, index)

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        return ScatterAdd.apply(self, dim, index, src)

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        return IndexSelect.apply(self, dim, index)

    def masked_fill(self, mask: Tensor, value) -> Tensor:
        return MaskedFill.apply(self, mask, value)

    def nonzero(self, *, as_tuple: bool = False):
        """The indices of the nonzero elements: an (n, ndim) int64 tensor, or (``as_tuple``) one 1-d tensor per
        dim. A 0-d tensor counts as 1-d for the tuple, and as 0-d for the matrix (shape (n, 0)), as in torch."""
        be = self._dev.backend
        x = self._x if self.ndim else be.reshape(self._x, (1,))
        out = self._wrap(be.nonzero(x), self._dev)
        if as_tuple:
            return tuple(out[:, i] for i in range(out.shape[1]))
        return out if self.ndim else out[:, :0]


def _normalize_index(index, t: Tensor) -> tuple[Any, Any]:
    """An index as torch reads it: ``(basic, adv)``.

    ``basic``: a tuple of ints, slices, None and ``...`` for a view (:class:`~.movement.Slice`), or None when no
    view is needed. ``adv``: None (no index tensor), or a tuple of ``slice(None)`` and int64/bool tensors that picks
    from that view. Lists, tuples inside the index, ranges and NumPy arrays become index tensors; a 0-d integer
    tensor is an int; a Python bool adds a dim of size 1 (True) or 0 (False). As in torch, ints select before the
    index tensors pick, so the picked dims go where the index tensors stand when they are next to each other once
    the ints are gone (``x[0, :, [1, 2]]`` has shape ``(x.shape[1], 2)``), else first.
    """
    if type(index) is not tuple:
        if isinstance(index, TensorBase) and index.ndim and not index.dtype.is_floating_point and \
                index._dev is t._dev:  # (the common advanced case, an embedding lookup: one index tensor)
            if index.dtype.name == "bool":
                _check_masks([index], t.shape)
                return None, (index,)
            if index.dtype is dtypes.int64 or index.dtype is dtypes.int32:
                return None, (index,)  # (uint8, int8, int16 go the general way: see _index_dtype)
        if isinstance(index, tuple):
            index = tuple(index)
        elif type(index) is list and _sequence_as_tuple(index):
            index = tuple(index)
        else:
            index = (index,)
    for i in index:
        tp = type(i)
        if tp is slice:
            if not (_plain(i.start) and _plain(i.stop) and _plain(i.step)):
                break
        elif tp is not int and i is not None and i is not Ellipsis:
            break
    else:
        return index, None  # (the common case: ints, plain slices, None and ...)
    return _split_index(index, t)


def _plain(v) -> bool:
    return v is None or type(v) is int


def _sequence_as_tuple(index: list) -> bool:
    """torch's (and old NumPy's) rule: a short list holding a tensor, a sequence, a slice, None or ``...`` is a
    tuple of indices, not one index (torch warns that this will change)."""
    if len(index) >= 32:
        return False
    for i in index:
        if isinstance(i, (TensorBase, list, tuple, range, slice, np.ndarray)) or i is None or i is Ellipsis:
            warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
                          "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
                          "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error "
                          "or a different result", UserWarning, stacklevel=4)
            return True
    return False


def _index_on(i, x):
    """An index tensor on ``x``'s device: a CPU one is copied there (torch accepts CPU indices for any device)."""
    if not i._dev.is_host:
        raise IndexError(f"indices should be either on cpu or on the same device as the indexed tensor ({x._dev}), "
                         f"got {i._dev}")
    return i.to(x._dev)


def _index_tensor(i, t: Tensor):
    """A list, tuple, range or array used as an index -> an int64 (or bool) tensor on ``t``'s device, as torch
    converts it (numbers are truncated to integers)."""
    from ..creation import tensor  # (creation sits above the ops: a module-level import would be a cycle)
    try:
        arr = np.asarray(i)
    except (ValueError, TypeError):
        raise IndexError(f"could not convert the index {i!r} to a tensor of indices") from None
    if arr.dtype.kind not in "biuf":
        raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors, got an index of "
                         f"{arr.dtype} elements")
    if isinstance(i, np.ndarray) and arr.dtype.kind == "f":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors, got floats")
    return tensor(arr if arr.dtype == np.bool_ else arr.astype(np.int64), device=t._dev)


def _split_index(index: tuple, t: Tensor) -> tuple[Any, Any]:
    items, used, n_ellipsis, masks = [], 0, 0, False
    for i in index:
        if isinstance(i, (bool, np.bool_)):
            items.append(("bool", bool(i)))
            continue
        if isinstance(i, (int, np.integer)):
            items.append(("int", int(i)))
        elif i is None or i is Ellipsis:
            items.append(("none" if i is None else "...", None))
            n_ellipsis += i is Ellipsis
            continue
        elif isinstance(i, slice):
            items.append(("slice", _slice(i)))
        else:
            if isinstance(i, TensorBase):
                i = _index_dtype(i)
                if i._dev is not t._dev:
                    i = _index_on(i, t)
            elif isinstance(i, (list, tuple, range, np.ndarray)):
                i = _index_tensor(i, t)
            else:
                raise IndexError(f"unsupported index type {type(i).__name__}; expected int, slice, None, ..., a "
                                 f"list or an integer/bool tensor")
            is_bool = i.dtype.name == "bool"
            if i.ndim == 0:
                items.append(("bool", bool(i.item())) if is_bool else ("int", int(i.item())))
                used += 0 if is_bool else 1
                continue
            items.append(("tensor", i))
            used += i.ndim if is_bool else 1
            masks = masks or is_bool
            continue
        used += 1
    if used > t.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t.ndim} (got {used})")
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    basic, adv, view, have_adv = [], [], False, False
    full = slice(None)
    for kind, v in items:
        if kind == "int":
            basic.append(v)
            view = True
        elif kind == "slice":
            basic.append(v)
            adv.append(full)
            view = view or v != full
        elif kind == "none":
            basic.append(None)
            adv.append(full)
            view = True
        elif kind == "...":
            k = t.ndim - used
            basic += [full] * k
            adv += [full] * k
        elif kind == "bool":  # a new dim of size 1, picked whole (True) or not at all (False)
            from ..creation import tensor  # (creation sits above the ops: a module-level import would be a cycle)
            basic.append(None)
            adv.append(tensor([0] if v else [], dtype=dtypes.int64, device=t._dev))
            view = have_adv = True
        else:
            basic += [full] * (v.ndim if v.dtype.name == "bool" else 1)
            adv.append(v)
            have_adv = True
    if not have_adv:
        return tuple(basic), None
    while adv and adv[-1] is full:
        adv.pop()
    if masks:
        _check_masks(adv, t._layout.getitem(tuple(basic)).shape if view else t.shape)
    return (tuple(basic) if view else None), tuple(adv)


def _index_dtype(i):
    """An index tensor as torch takes it: int64, int32 and bool as they are; uint8 as a bool mask, with torch's
    deprecation warning (a uint8 index *selects* where it is nonzero, it does not pick positions; torch 2.13
    raises for it in an assignment, ``x[mask_u8] = v``, which here does what ``x[mask_u8]`` reads); other dtypes
    refused with torch's error, except as a 0-d tensor, which is an int."""
    dt = i.dtype
    if dt is dtypes.uint8:
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                      UserWarning, stacklevel=5)
        return i.bool()
    if dt.is_floating_point or (i.ndim and dt not in (dtypes.int64, dtypes.int32, dtypes.bool_)):
        raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors, got {dt.name}")
    return i


def _slice(i: slice) -> slice:
    for v in (i.start, i.stop, i.step):
        if v is not None and not isinstance(v, (int, np.integer)):
            if isinstance(v, TensorBase) and v.numel() == 1 and not v.dtype.is_floating_point:
                continue
            raise TypeError(f"slice indices must be integers or None or have an __index__ method, got "
                            f"{type(v).__name__}")
    return slice(*(int(v) if v is not None else None for v in (i.start, i.stop, i.step)))


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


def _bool_mask(mask, op: str, message: str | None):
    if not isinstance(mask, TensorBase):
        raise TypeError(f"{op}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(message or f"{op}_ only supports boolean masks, but got mask with dtype {mask.dtype.name}")
    return mask


def _broadcast(a: tuple, b: tuple, op: str) -> tuple:
    try:
        return broadcast_shapes(a, b)
    except ValueError:
        raise RuntimeError(f"{op}: the mask of shape {list(b)} cannot be broadcast with the tensor's shape "
                           f"{list(a)}") from None


# ---- free functions ---------------------------------------------------------------------------------------
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Integer class indices -> int64 one-hot vectors (last dim of size ``num_classes``)."""
    if tensor.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f"one_hot is only applicable to index tensor of dtype int64, got {tensor.dtype.name}")
    from ..creation import arange  # (creation sits above the ops: a module-level import would be a cycle)
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1 if tensor.numel() else 0
    if tensor.numel() and (int(tensor.min().item()) < 0 or int(tensor.max().item()) >= num_classes):
        raise RuntimeError(f"one_hot: class values must be in [0, {num_classes}), got "
                           f"[{int(tensor.min().item())}, {int(tensor.max().item())}]")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.long().unsqueeze(-1) == classes).long()


gather, scatter_add, index_select, masked_fill, nonzero = free_functions(
    IndexingMixin, "gather", "scatter_add", "index_select", "masked_fill", "nonzero")
