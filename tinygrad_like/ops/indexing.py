"""Gather/scatter, index_select and advanced (integer/boolean tensor) indexing."""

from __future__ import annotations

from .. import dtypes
from ..autograd.function import Function
from ..layout import normalize_dim
from ..tensor_base import TensorBase
from . import _util


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
