"""Tensor methods that move elements: views (reshape, permute, expand, slicing...) and copies (cat, flip...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..autograd import grad_mode
from ..dtypes import DType
from ..layout import infer_shape, normalize_dim
from ..ops import movement as M
from ..tensor_base import _numel, _shape_args_neg

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


_SWAP = (1, 0)


class MovementMixin:
    """Tensor methods that move elements: views (reshape, permute, expand, slicing...) and copies (cat, flip...)."""

    __slots__ = ()

    # ---- views -------------------------------------------------------------------------------
    def view(self, *shape) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], DType):
            raise NotImplementedError("view(dtype) reinterpretation is not supported; use .to(dtype)")
        return M.Reshape.apply(self, _shape_args_neg(shape))

    def reshape(self, *shape) -> Tensor:
        shape = infer_shape(_shape_args_neg(shape), self.numel())
        if shape == self._x.shape:
            return self if self.grad_fn is None and not self.requires_grad else M.Reshape.apply(self, shape)
        lay = self._layout.view(shape)
        if lay is None:
            return M.Reshape.apply(self.contiguous(), shape)
        return M.Reshape.apply(self, shape) if self._records() else self._view(lay)

    def permute(self, *dims) -> Tensor:
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        if self._records():
            return M.Permute.apply(self, dims)
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
            return M.Permute.apply(self, ())
        d0, d1 = normalize_dim(dim0, nd), normalize_dim(dim1, nd)
        order = list(range(nd))
        order[d0], order[d1] = order[d1], order[d0]
        order = tuple(order)
        if self._records():
            return M.Permute.apply(self, order)
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
        return self.T

    def expand(self, *shape) -> Tensor:
        shape = _shape_args_neg(shape)
        return M.Expand.apply(self, shape) if self._records() else self._view(self._layout.expand(shape))

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def broadcast_to(self, shape) -> Tensor:
        return self.expand(tuple(shape))

    def squeeze(self, dim=None) -> Tensor:
        return M.Squeeze.apply(self, dim) if self._records() else self._view(self._layout.squeeze(dim))

    def unsqueeze(self, dim: int) -> Tensor:
        return M.Unsqueeze.apply(self, dim) if self._records() else self._view(self._layout.unsqueeze(dim))

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
        from ..layout import infer_shape
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
        return M.Contiguous.apply(self)

    def clone(self) -> Tensor:
        return M.Clone.apply(self)

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
        return tuple(out)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        n = self.shape[normalize_dim(dim, self.ndim)]
        if n == 0:  # any number of empty chunks adds up to 0: torch gives ``chunks`` of them
            return self.split([0] * chunks, dim)
        return self.split(-(-n // chunks), dim)

    def unbind(self, dim: int = 0) -> tuple:
        d = normalize_dim(dim, self.ndim)
        return tuple(self[(slice(None),) * d + (i,)] for i in range(self.shape[d]))
