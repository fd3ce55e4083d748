"""Views (share storage and version counter) and copying movement ops (cat, pad, flip, ...)."""

from __future__ import annotations

from ..autograd.engine import sum_to
from ..autograd.function import Function
from ..layout import normalize_dim
from . import _util


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
    __slots__ = ("dims",)

    def forward(self, x, dims):  # (not layout(): the backend permutes the input's array, cheaper than a new view)
        self.in_shape = x._x.shape
        lay = x._layout
        self.dims = dims = lay.permutation(dims)
        return x._view(lay.permuted(dims), x._dev.backend.permute(x._x, dims))

    def backward(self, g):
        inv = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inv[d] = i
        return g.permute(tuple(inv)), None


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
        from ..dtypes import result_type
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
