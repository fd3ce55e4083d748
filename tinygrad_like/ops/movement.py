"""Moving elements: views, which share the input's storage and version counter (reshape, permute, expand,
slicing...), and copying movement ops (cat, pad, flip, repeat, tril/triu...); their Tensor methods
(:class:`MovementMixin`) and free functions (``tl.cat``, ``tl.stack``, ``tl.reshape``, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..autograd import grad_mode
from ..autograd.engine import sum_to
from ..autograd.function import Function
from ..dtypes import DType, result_type
from ..layout import Layout, broadcast_shapes, infer_shape, normalize_dim
from ..tensor_base import TensorBase, _numel, _shape_args, _shape_args_neg
from . import _util
from ._util import free_functions

if TYPE_CHECKING:  # (annotations only: the concrete class is built from the families)
    from ..tensor import Tensor

__all__ = ["cat", "concat", "concatenate", "stack", "pad", "broadcast_tensors", "reshape", "permute", "transpose",
           "squeeze", "unsqueeze", "flatten", "unflatten", "expand", "broadcast_to", "split", "chunk", "narrow",
           "unbind", "clone", "flip", "repeat", "tril", "triu", "as_strided", "as_strided_", "as_strided_copy",
           "alias_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy", "select_copy", "slice_copy",
           "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy",
           "unfold_copy", "unsqueeze_copy", "view_copy"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class ViewFunction(Function):
    """A node whose output is a view: ``layout`` gives the output's Layout over the input's storage."""

    __slots__ = ("in_shape",)
    returns_fresh = True

    def forward(self, x, *args):
        self.in_shape = x._x.shape
        return x._view(self.layout(x, *args))

    def layout(self, x, *args):
        raise NotImplementedError(f"{type(self).__name__}.layout")


class Reshape(ViewFunction):
    __slots__ = ()

    def layout(self, x, shape):
        lay = x._layout.view(shape)
        if lay is None:
            raise RuntimeError(f"view size is not compatible with input tensor's size and stride (shape "
                               f"{x.shape}, strides {x._layout.strides}): at least one dimension spans "
                               f"across two contiguous subspaces. Use .reshape(...) instead.")
        return lay

    def backward(self, g):
        return g.reshape(self.in_shape), None


class Permute(ViewFunction):
    """``permute``, and ``transpose``/``t`` (``kind``: torch's node name for the method the learner called, which
    torch names its node after: ``TransposeBackward0``, ``TBackward0``; None: ``PermuteBackward0``)."""

    __slots__ = ("dims",)

    def forward(self, x, dims, kind=None):  # (not layout(): the backend permutes the input's array, cheaper)
        self.in_shape = x._x.shape
        lay = x._layout
        self.dims = dims = lay.permutation(dims)
        return x._view(lay.permuted(dims), x._dev.backend.permute(x._x, dims))

    def backward(self, g):
        inv = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inv[d] = i
        return (g.permute(tuple(inv)),) + (None,) * (len(self.next) - 1)


_TRANSPOSE = "TransposeBackward0"


def _named_slices(outs: tuple, src, kind: str) -> tuple:
    """Name the slice nodes just made for ``outs`` after the op the learner called, as torch names its node
    (``SplitBackward0`` for ``split``/``chunk``, ``UnbindBackward0``): the views then show ``Split``, not
    ``Slice``. (torch makes one node with several outputs; ours are one slice each.)"""
    before = src.grad_fn
    for t in outs:
        g = t.grad_fn
        if g is not None and g is not before and isinstance(g, Slice):
            g.__class__ = Slice._variant(kind)
    return outs


class Expand(ViewFunction):
    __slots__ = ()

    def layout(self, x, shape):
        return x._layout.expand(shape)

    def backward(self, g):
        return sum_to(g, self.in_shape), None


class Squeeze(ViewFunction):
    __slots__ = ()

    def layout(self, x, dim):
        return x._layout.squeeze(dim)

    def backward(self, g):
        return g.reshape(self.in_shape), None


class Unsqueeze(ViewFunction):
    __slots__ = ()

    def layout(self, x, dim):
        return x._layout.unsqueeze(dim)

    def backward(self, g):
        return g.reshape(self.in_shape), None


class Slice(ViewFunction):
    """Basic indexing: ints, slices, None, Ellipsis."""

    __slots__ = ("index",)

    def layout(self, x, index):
        self.index = index
        return x._layout.getitem(index)

    def backward(self, g):
        return EmbedSlice.apply(g, self.in_shape, self.index), None


class EmbedSlice(Function):
    """Zeros of ``shape`` with ``g`` written at a basic ``index`` (backward of slicing)."""

    __slots__ = ("index",)

    def forward(self, g, shape, index):
        self.index = index
        be = g._dev.backend
        out = be.full(shape, 0, g.dtype)
        be.setitem(out, index, g._x)
        return out

    def backward(self, gg):
        return gg[self.index], None, None


class Contiguous(Function):
    __slots__ = ()

    def forward(self, x):
        return x._dev.backend.copy(x._x)

    def backward(self, g):
        return (g,)


class Clone(Contiguous):
    __slots__ = ()


class Cat(Function):
    __slots__ = ("dim", "sizes", "dtypes")

    def forward(self, first, *rest):
        tensors, dim = (first,) + rest[:-1], rest[-1]
        nd = max(t.ndim for t in tensors)
        if nd == 0:
            raise RuntimeError("zero-dimensional tensor cannot be concatenated")
        ri = next(i for i, t in enumerate(tensors) if t.ndim == nd)  # (legacy empty 1-D pieces are skipped)
        ref = tensors[ri]
        dim = normalize_dim(dim, nd)
        dt = result_type(*tensors)
        for i, t in enumerate(tensors):
            if t._dev is not ref._dev:
                _util.check_same_device(ref, t, "cat")
            if t.ndim != nd and t.shape != (0,):
                raise RuntimeError(f"cat: tensors must have the same number of dimensions: tensor {ri} has shape "
                                   f"{ref.shape} and tensor {i} has shape {t.shape}")
            if t.ndim == nd and any(t.shape[d] != ref.shape[d] for d in range(nd) if d != dim):
                raise RuntimeError(f"cat: sizes of tensors must match except in dimension {dim}: tensor {ri} has "
                                   f"shape {ref.shape} and tensor {i} has shape {t.shape}")
        self.dim = dim
        self.sizes = tuple(t.shape[dim] if t.ndim == nd else None for t in tensors)  # None: a skipped empty
        self.dtypes = tuple(t.dtype for t in tensors)
        be = ref._dev.backend
        xs = [t._x if t.dtype is dt else be.cast(t._x, dt) for t in tensors if t.ndim == nd]
        return be.cat(xs, dim)

    def backward(self, g):
        out, start = [], 0
        for n, dt in zip(self.sizes, self.dtypes):
            if n is None:  # a legacy empty 1-D piece: its gradient is empty too
                out.append(g.new_zeros((0,), dtype=dt))
                continue
            part = g.narrow(self.dim, start, n)
            out.append(part if part.dtype is dt else part.to(dt))  # each input's gradient in its own dtype
            start += n
        return (*out, None)


class Stack(Cat):
    """``stack`` as one node, as torch records it (``StackBackward0``): a recurrent layer stacks one output per time
    step, and one Unsqueeze node per step plus a Cat would fill its drawing. Forward is Cat's over the inputs viewed
    with the new dim; each input's gradient is its slice of ``g``, without that dim."""

    __slots__ = ()

    def forward(self, first, *rest):
        *tensors, dim = (first, *rest)
        with grad_mode.no_grad():  # (the views are forward's own: no nodes for them)
            viewed = [t.unsqueeze(dim) for t in tensors]
        return super().forward(*viewed, dim)

    def backward(self, g):
        *parts, _ = super().backward(g)
        return (*(p.squeeze(self.dim) for p in parts), None)


class Flip(Function):
    __slots__ = ("dims",)

    def forward(self, x, dims):
        self.dims = dims = tuple(normalize_dim(d, max(x.ndim, 1)) for d in dims)
        return x._dev.backend.flip(x._x, dims if x.ndim else ())

    def backward(self, g):
        return g.flip(self.dims), None


class Pad(Function):
    """Constant padding; ``pad`` is PyTorch's (last_lo, last_hi, prev_lo, prev_hi, ...)."""

    __slots__ = ("widths",)

    def forward(self, x, pad, value):
        if len(pad) % 2 or len(pad) // 2 > x.ndim:
            raise RuntimeError(f"pad: padding length must be even and at most 2*ndim={2 * x.ndim}, got {len(pad)}")
        widths = [(0, 0)] * x.ndim
        for i in range(len(pad) // 2):
            widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
        if any(lo < 0 or hi < 0 for lo, hi in widths):
            raise NotImplementedError("pad: negative padding (cropping) is not supported; slice instead")
        self.widths = tuple(widths)
        return x._dev.backend.pad(x._x, self.widths, value)

    def backward(self, g):
        idx = tuple(slice(lo, g.shape[d] - hi) for d, (lo, hi) in enumerate(self.widths))
        return g[idx], None, None


class Repeat(Function):
    __slots__ = ("reps", "in_shape")

    def forward(self, x, reps):
        if len(reps) < x.ndim:
            raise RuntimeError(f"Number of dimensions of repeat dims ({len(reps)}) can not be smaller than "
                               f"number of dimensions of tensor ({x.ndim})")
        self.reps, self.in_shape = reps, x._x.shape
        return x._dev.backend.tile(x._x, reps)

    def backward(self, g):
        shape = (1,) * (len(self.reps) - len(self.in_shape)) + self.in_shape
        split = []
        for r, n in zip(self.reps, shape):
            split += [r, n]
        g = g.reshape(tuple(split)).sum(tuple(range(0, len(split), 2)))
        return g.reshape(self.in_shape), None


class Tri(Function):
    __slots__ = ("k", "upper")

    def forward(self, x, k, upper):
        if x.ndim < 2:
            raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least 2 dimensions, "
                               f"got shape {x.shape}")
        self.k, self.upper = k, upper
        be = x._dev.backend
        return be.triu(x._x, k) if upper else be.tril(x._x, k)

    def backward(self, g):
        return Tri.apply(g, self.k, self.upper), None, None


_SWAP = (1, 0)


class AsStrided(ViewFunction):
    """A view with explicit sizes, strides and storage offset. Its gradient adds each output element's gradient
    into the storage position it reads, then reads those sums back at the input's positions (torch's backward)."""

    __slots__ = ("out_lay", "in_lay", "numel")

    def layout(self, x, lay):
        self.in_lay, self.out_lay, self.numel = x._layout, lay, x._storage.numel
        return lay

    def backward(self, g):
        buf = np.zeros(self.numel, dtype=g.dtype.np)
        np.add.at(buf, _positions(self.out_lay).ravel(), np.asarray(g.numpy()).ravel())
        out = np.ascontiguousarray(buf[_positions(self.in_lay)])
        return g._wrap(out if g._dev.is_host else g._dev.backend.from_numpy(out), g._dev), None


def _positions(lay) -> np.ndarray:
    """The storage position of every element of a layout."""
    pos = np.full(lay.shape, lay.offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(lay.shape, lay.strides)):
        shape = [1] * len(lay.shape)
        shape[d] = n
        pos = pos + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return pos


def strided_layout(x, size, stride, storage_offset, op: str = "as_strided") -> Layout:
    """The Layout ``as_strided`` makes over ``x``'s storage, checked as torch checks it."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes and {len(stride)} strides")
    if any(s < 0 for s in size):
        raise RuntimeError(f"{op}: negative sizes are not allowed, got size {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{op}: negative strides are not supported at the moment, got strides {list(stride)}")
    offset = x._layout.offset if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    have = x._storage.numel
    if need > have:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {x.dtype.itemsize} requiring a storage size of {need * x.dtype.itemsize} are "
                           f"out of bounds for storage of size {have * x.dtype.itemsize}")
    return Layout(size, stride, offset)


class MovementMixin:
    """Tensor methods that move elements: views (reshape, permute, expand, slicing...) and copies (cat, flip...)."""

    __slots__ = ()

    # ---- views -------------------------------------------------------------------------------
    def view(self, *shape) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], DType):
            raise NotImplementedError("view(dtype) reinterpretation is not supported; use .to(dtype)")
        return Reshape.apply(self, _shape_args_neg(shape))

    def reshape(self, *shape) -> Tensor:
        shape = infer_shape(_shape_args_neg(shape), self.numel())
        if shape == self._x.shape:
            return self if self.grad_fn is None and not self.requires_grad else Reshape.apply(self, shape)
        lay = self._layout.view(shape)
        if lay is None:
            return Reshape.apply(self.contiguous(), shape)
        return Reshape.apply(self, shape) if self._records() else self._view(lay)

    def permute(self, *dims) -> Tensor:
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        if self._records():
            return Permute.apply(self, dims)
        lay = self._layout
        dims = lay.permutation(dims)
        return self._view(lay.permuted(dims), self._dev.backend.permute(self._x, dims))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        nd = self._x.ndim
        if nd == 2 and not self._records():  # (a matrix's transpose, as every matmul backward takes it)
            if normalize_dim(dim0, 2) == normalize_dim(dim1, 2):
                return self._view(self._layout, self._x)
            return self._view(self._layout.permuted(_SWAP), self._dev.backend.permute(self._x, _SWAP))
        if nd == 0:
            normalize_dim(dim0, 0), normalize_dim(dim1, 0)
            return Permute.apply(self, (), _TRANSPOSE)
        d0, d1 = normalize_dim(dim0, nd), normalize_dim(dim1, nd)
        order = list(range(nd))
        order[d0], order[d1] = order[d1], order[d0]
        order = tuple(order)
        if self._records():
            return Permute.apply(self, order, _TRANSPOSE)
        return self._view(self._layout.permuted(order), self._dev.backend.permute(self._x, order))

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return self.transpose(axis0, axis1)

    def movedim(self, source, destination) -> Tensor:
        """Move dims ``source`` to positions ``destination`` (ints or sequences), keeping the others' order."""
        src = (source,) if isinstance(source, int) else tuple(source)
        dst = (destination,) if isinstance(destination, int) else tuple(destination)
        if len(src) != len(dst):
            raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                               f"contain the same number of dims as destination ({list(dst)} dims)")
        nd = self.ndim
        src, dst = tuple(normalize_dim(d, nd) for d in src), tuple(normalize_dim(d, nd) for d in dst)
        if len(set(src)) != len(src) or len(set(dst)) != len(dst):
            raise RuntimeError(f"movedim: repeated dim in source {list(src)} or destination {list(dst)}")
        order = [None] * nd
        for s_, d_ in zip(src, dst):
            order[d_] = s_
        rest = iter(d for d in range(nd) if d not in src)
        return self.permute(tuple(o if o is not None else next(rest) for o in order))

    def t(self) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        if self.ndim == 2 and self._records():
            return Permute.apply(self, _SWAP, "TBackward0")
        return self.T

    def expand(self, *shape) -> Tensor:
        shape = _shape_args_neg(shape)
        return Expand.apply(self, shape) if self._records() else self._view(self._layout.expand(shape))

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def broadcast_to(self, shape) -> Tensor:
        return self.expand(tuple(shape))

    def squeeze(self, dim=None) -> Tensor:
        return Squeeze.apply(self, dim) if self._records() else self._view(self._layout.squeeze(dim))

    def unsqueeze(self, dim: int) -> Tensor:
        return Unsqueeze.apply(self, dim) if self._records() else self._view(self._layout.unsqueeze(dim))

    def _records(self) -> bool:
        """Whether an op on this tensor records a graph node. A view op that records none is just the view (its
        node would only carry the layout), which keeps views cheap inside a plain backward's formulas."""
        return self.requires_grad and _grad_mode.enabled

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        if self.ndim == 0:
            return self.reshape(1)
        s, e = normalize_dim(start_dim, self.ndim), normalize_dim(end_dim, self.ndim)
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        shp = self.shape
        return self.reshape(shp[:s] + (_numel(shp[s:e + 1]),) + shp[e + 1:])

    def unflatten(self, dim: int, sizes) -> Tensor:
        d = normalize_dim(dim, self.ndim)
        sizes = infer_shape(tuple(sizes), self.shape[d])
        return self.reshape(self.shape[:d] + sizes + self.shape[d + 1:])

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        if self.ndim == 0:
            raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
        d = normalize_dim(dim, self.ndim)
        n, start, length = self.shape[d], int(start), int(length)  # (start may be a 0-d integer tensor)
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if not -n <= start <= n:
            raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
        if start < 0:
            start += n
        if start + length > n:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def contiguous(self) -> Tensor:
        if self._layout.is_contiguous():
            return self
        return Contiguous.apply(self)

    def clone(self) -> Tensor:
        return Clone.apply(self)

    def split(self, split_size_or_sections, dim: int = 0) -> tuple:
        d = normalize_dim(dim, self.ndim)
        n = self.shape[d]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step < 0:
                raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
            if step == 0 and n:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
            sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != n:
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                                   f"size at dimension {d}), but got split_sizes={sizes}")
        out, start = [], 0
        for s in sizes:
            out.append(self.narrow(d, start, s))
            start += s
        kind = "SplitBackward0" if isinstance(split_size_or_sections, int) else "SplitWithSizesBackward0"
        return _named_slices(tuple(out), self, kind)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        n = self.shape[normalize_dim(dim, self.ndim)]
        if n == 0:  # any number of empty chunks adds up to 0: torch gives ``chunks`` of them
            return self.split([0] * chunks, dim)
        return self.split(-(-n // chunks), dim)

    def unbind(self, dim: int = 0) -> tuple:
        d = normalize_dim(dim, self.ndim)
        return _named_slices(tuple(self[(slice(None),) * d + (i,)] for i in range(self.shape[d])), self,
                             "UnbindBackward0")

    # ---- copies: flips, repetitions, triangles -----------------------------------------------
    def flip(self, *dims) -> Tensor:
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return Flip.apply(self, dims)

    def repeat(self, *reps) -> Tensor:
        return Repeat.apply(self, _shape_args(reps))

    def tril(self, diagonal: int = 0) -> Tensor:
        return Tri.apply(self, diagonal, False)

    def triu(self, diagonal: int = 0) -> Tensor:
        return Tri.apply(self, diagonal, True)

    def tril_(self, diagonal: int = 0) -> Tensor:
        return self._inplace("tril_", lambda x, _: x.tril(diagonal), None)

    def triu_(self, diagonal: int = 0) -> Tensor:
        return self._inplace("triu_", lambda x, _: x.triu(diagonal), None)

    # ---- views with explicit strides, and the in-place forms of the views ---------------------------------------
    def as_strided(self, size, stride, storage_offset=None) -> Tensor:
        """A view of this tensor's storage with the given sizes, strides and offset (default: this tensor's)."""
        lay = strided_layout(self, size, stride, storage_offset)
        return AsStrided.apply(self, lay) if self._records() else self._view(lay)

    def _restride_(self, view: Tensor, op: str) -> Tensor:
        """Give this tensor the layout (and, under autograd, the history) of ``view``, a view of it: the in-place
        view ops (``t_``, ``transpose_``, ``squeeze_``...) change the tensor object itself, as in torch."""
        if self.requires_grad and self.grad_fn is None and _grad_mode.enabled:
            raise RuntimeError(f"a leaf Variable that requires grad is being used in an in-place operation "
                               f"({op}).")
        self._lay, self._x = view._layout, view._x
        if view.grad_fn is not None:
            self.grad_fn = view.grad_fn
        return self

    def as_strided_(self, size, stride, storage_offset=None) -> Tensor:
        return self._restride_(self.as_strided(size, stride, storage_offset), "as_strided_")

    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        return self._restride_(self.transpose(dim0, dim1), "transpose_")

    def swapaxes_(self, axis0: int, axis1: int) -> Tensor:
        return self._restride_(self.transpose(axis0, axis1), "swapaxes_")

    def swapdims_(self, dim0: int, dim1: int) -> Tensor:
        return self._restride_(self.transpose(dim0, dim1), "swapdims_")

    def t_(self) -> Tensor:
        return self._restride_(self.t(), "t_")

    def squeeze_(self, dim=None) -> Tensor:
        return self._restride_(self.squeeze(dim), "squeeze_")

    def unsqueeze_(self, dim: int) -> Tensor:
        return self._restride_(self.unsqueeze(dim), "unsqueeze_")


# ---- free functions ---------------------------------------------------------------------------------------
def _tensors(tensors, op: str) -> tuple:
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError(f"{op}(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):
            raise TypeError(f"{op}(): expected a sequence of Tensors, but element {i} is {type(t).__name__}")
    return tensors


def cat(tensors, dim: int = 0) -> Tensor:
    tensors = _tensors(tensors, "cat")
    return Cat.apply(*tensors, dim)


concat = concatenate = cat


def stack(tensors, dim: int = 0) -> Tensor:
    tensors = _tensors(tensors, "stack")
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {shape} at entry 0 and "
                               f"{t.shape} at entry {i}")
    return Stack.apply(*tensors, normalize_dim(dim, len(shape) + 1))


def pad(input: Tensor, pad, mode: str = "constant", value: float = 0.0) -> Tensor:
    if mode != "constant":
        raise NotImplementedError(f"pad: only mode='constant' is implemented, got {mode!r}")
    return Pad.apply(input, tuple(pad), value)


def broadcast_tensors(*tensors) -> tuple:
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


(reshape, permute, transpose, squeeze, unsqueeze, flatten, unflatten, expand, broadcast_to, split, chunk, narrow,
 unbind, clone, flip, repeat, tril, triu) = free_functions(
    MovementMixin, "reshape", "permute", "transpose", "squeeze", "unsqueeze", "flatten", "unflatten", "expand",
    "broadcast_to", "split", "chunk", "narrow", "unbind", "clone", "flip", "repeat", "tril", "triu")

(as_strided, as_strided_) = free_functions(MovementMixin, "as_strided", "as_strided_")


# ---- torch's *_copy functions: the view op's result as a new tensor (what a compiler emits in place of a view) ----
def _copying(name: str, view):
    def fn(input, *args, **kwargs):
        if not isinstance(input, TensorBase):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        out = view(input, *args, **kwargs)
        return tuple(o.clone() for o in out) if isinstance(out, tuple) else out.clone()
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name[:-5]}``'s result as a new tensor, sharing no storage with ``input``."
    return fn


def _slice(input, dim: int = 0, start=None, end=None, step: int = 1):
    d = normalize_dim(dim, input.ndim)
    return input[(slice(None),) * d + (slice(start, end, step),)]


as_strided_copy = _copying("as_strided_copy", lambda x, size, stride, storage_offset=None: x.as_strided(
    size, stride, storage_offset))
alias_copy = _copying("alias_copy", lambda x: x.view(x.shape))
detach_copy = _copying("detach_copy", lambda x: x.detach())
diagonal_copy = _copying("diagonal_copy", lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2))
expand_copy = _copying("expand_copy", lambda x, size, *, implicit=False: x.expand(size))
permute_copy = _copying("permute_copy", lambda x, dims: x.permute(dims))
select_copy = _copying("select_copy", lambda x, dim, index: x.select(dim, index))
slice_copy = _copying("slice_copy", _slice)
split_copy = _copying("split_copy", lambda x, split_size, dim=0: x.split(split_size, dim))
split_with_sizes_copy = _copying("split_with_sizes_copy", lambda x, split_sizes, dim=0: x.split_with_sizes(
    split_sizes, dim))
squeeze_copy = _copying("squeeze_copy", lambda x, dim=None: x.squeeze(dim))
t_copy = _copying("t_copy", lambda x: x.t())
transpose_copy = _copying("transpose_copy", lambda x, dim0, dim1: x.transpose(dim0, dim1))
unbind_copy = _copying("unbind_copy", lambda x, dim=0: x.unbind(dim))
unfold_copy = _copying("unfold_copy", lambda x, dimension, size, step: x.unfold(dimension, size, step))
unsqueeze_copy = _copying("unsqueeze_copy", lambda x, dim: x.unsqueeze(dim))
view_copy = _copying("view_copy", lambda x, size: x.view(size))
