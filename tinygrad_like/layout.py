"""Shape, strides and offset: how a tensor's elements sit inside its storage.

Every view op is a pure function from one :class:`Layout` to another, so the same algebra serves
NumPy and CUDA storages. Strides and offsets count elements, not bytes. Broadcasting follows NumPy.

>>> lay = Layout.contiguous((2, 3))
>>> lay.strides
(3, 1)
>>> lay.permute((1, 0)).strides
(1, 3)
"""

from __future__ import annotations

from math import prod

_CONTIG: dict[tuple, tuple] = {}


def contiguous_strides(shape: tuple) -> tuple:
    """Row-major strides for ``shape`` (memoised: this runs for every new tensor)."""
    s = _CONTIG.get(shape)
    if s is None:
        acc, out = 1, []
        for n in reversed(shape):
            out.append(acc)
            acc *= max(n, 1)
        s = _CONTIG[shape] = tuple(reversed(out))
        if len(_CONTIG) > 4096:
            _CONTIG.clear()
    return s


def normalize_dim(dim: int, ndim: int, what: str = "dim") -> int:
    """Wrap a negative dim and check its range with PyTorch's wording."""
    if type(dim) is int and -ndim <= dim < ndim:  # the common case, first (a hot path of every view and reduction)
        return dim + ndim if dim < 0 else dim
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{what} must be an int, got {type(dim).__name__}")
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim + ndim if dim < 0 else dim


def normalize_dims(dim, ndim: int) -> tuple:
    """``None`` or ``()`` -> all dims (PyTorch's reductions); int or sequence -> sorted unique
    non-negative dims. A 0-d tensor accepts dim 0 or -1 and has no dim to reduce: ``()``."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        d = normalize_dim(dim, ndim)
        return (d,) if ndim else ()
    dims = tuple(normalize_dim(d, ndim) for d in dim)
    if not dims or not ndim:
        return tuple(range(ndim))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {tuple(dim)} appears multiple times in the list of dims")
    return tuple(sorted(dims))


def broadcast_shapes(*shapes: tuple) -> tuple:
    """NumPy's broadcasting rule, with an error that shows every shape and the failing dim."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            if len(s) >= -i:
                n = s[i]
                if n != 1:
                    if size != 1 and n != size:
                        raise ValueError(
                            f"shapes {' and '.join(str(tuple(x)) for x in shapes)} cannot be broadcast: "
                            f"at dim {i} sizes {size} and {n} differ and neither is 1 "
                            f"(rule: trailing dims must be equal or 1)")
                    size = n
        out.append(size)
    return tuple(out)


def infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve one ``-1`` in a requested shape; explain a size mismatch."""
    shape = tuple(shape)
    if -1 not in shape:  # the common case: every size given, checked in one pass
        n = 1
        for s in shape:
            if type(s) is not int or s < 0:
                break
            n *= s
        else:
            if n == numel:
                return shape
    for n in shape:
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"shape must be a sequence of ints, got {shape!r}")
    neg = [i for i, n in enumerate(shape) if n == -1]
    if len(neg) > 1:
        raise RuntimeError(f"only one dimension can be inferred, got shape {shape}")
    if any(n < -1 for n in shape):
        raise RuntimeError(f"invalid shape dimension in {shape}")
    if neg:
        rest = prod(n for n in shape if n != -1)
        if rest == 0 or numel % rest:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[: neg[0]] + (numel // rest,) + shape[neg[0] + 1:]
    if prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class Layout:
    """An immutable (shape, strides, offset) triple; each view op returns a new one."""

    __slots__ = ("shape", "strides", "offset")

    def __init__(self, shape: tuple, strides: tuple, offset: int = 0):
        self.shape = shape
        self.strides = strides
        self.offset = offset

    @staticmethod
    def contiguous(shape: tuple, offset: int = 0) -> Layout:
        return Layout(shape, contiguous_strides(shape), offset)

    def __repr__(self) -> str:
        return f"Layout(shape={self.shape}, strides={self.strides}, offset={self.offset})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented  # (torch.strided answers: every Layout is a strided one)
        return (self.shape, self.strides, self.offset) == (other.shape, other.strides, other.offset)

    __hash__ = None  # type: ignore[assignment]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return prod(self.shape)

    def is_contiguous(self) -> bool:
        """Row-major with no gaps; size-1 dims may have any stride (as in PyTorch)."""
        expected = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n == 0:
                return True
            if n != 1 and s != expected:
                return False
            expected *= n
        return True

    def span(self) -> tuple[int, int]:
        """Lowest and one-past-highest element index touched (for bounds checks)."""
        if 0 in self.shape:
            return self.offset, self.offset
        hi = self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides))
        return self.offset, hi + 1

    # ---- view algebra -------------------------------------------------------------------
    def permutation(self, dims) -> tuple:
        """``dims`` as non-negative dims, checked to be a permutation of this layout's dims."""
        nd = len(self.shape)
        out = [normalize_dim(d, nd) for d in dims]
        if len(out) != nd or len(set(out)) != nd:
            raise RuntimeError(f"permute(): dims {tuple(out)} must be a permutation of 0..{nd - 1} "
                               f"for a tensor of shape {self.shape}")
        return tuple(out)

    def permute(self, dims: tuple) -> Layout:
        return self.permuted(self.permutation(dims))

    def permuted(self, dims: tuple) -> Layout:
        """The layout with its dims in the order ``dims`` (already a checked :meth:`permutation`)."""
        shape, strides = self.shape, self.strides
        if len(dims) == 2:  # (a matrix's transpose: the common case, without building lists)
            i, j = dims
            return Layout((shape[i], shape[j]), (strides[i], strides[j]), self.offset)
        return Layout(tuple([shape[d] for d in dims]), tuple([strides[d] for d in dims]), self.offset)

    def transpose(self, d0: int, d1: int) -> Layout:
        nd = len(self.shape)
        if nd == 0:
            normalize_dim(d0, 0), normalize_dim(d1, 0)
            return self
        d0, d1 = normalize_dim(d0, nd), normalize_dim(d1, nd)
        order = list(range(nd))
        order[d0], order[d1] = order[d1], order[d0]
        return self.permute(tuple(order))

    def expand(self, shape: tuple) -> Layout:
        shape = tuple(shape)
        nd, nn = len(self.shape), len(shape)
        if nd == 0:  # (a scalar to any shape, as a full reduction's gradient is put back)
            for n in shape:
                if type(n) is not int or n < 0:
                    break
            else:
                return Layout(shape, (0,) * nn, self.offset)
        if nn < nd:
            raise RuntimeError(f"expand: the number of sizes provided ({nn}) must be greater or equal to the "
                               f"number of dimensions in the tensor ({nd}); tensor shape {self.shape}")
        lead = nn - nd
        out_shape, out_strides = [], []
        for i, want in enumerate(shape):
            if i < lead:
                if want < 0:
                    raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension {i}")
                out_shape.append(want)
                out_strides.append(0)
                continue
            have, st = self.shape[i - lead], self.strides[i - lead]
            if want == -1:
                want = have
            if have == want:
                out_shape.append(have)
                out_strides.append(st)
            elif have == 1:
                out_shape.append(want)
                out_strides.append(0)
            else:
                raise RuntimeError(
                    f"The expanded size of the tensor ({want}) must match the existing size ({have}) at "
                    f"non-singleton dimension {i}.  Target sizes: {list(shape)}.  Tensor sizes: {list(self.shape)}")
        return Layout(tuple(out_shape), tuple(out_strides), self.offset)

    def squeeze(self, dim=None) -> Layout:
        nd = len(self.shape)
        if dim is None:
            dims = set(range(nd))
        else:  # squeeze(()) squeezes nothing, unlike a reduction over ()
            dims = set(normalize_dims(dim, nd)) if nd and dim not in ((), []) else set()
        keep = [i for i in range(nd) if not (i in dims and self.shape[i] == 1)]
        return Layout(tuple(self.shape[i] for i in keep), tuple(self.strides[i] for i in keep), self.offset)

    def unsqueeze(self, dim: int) -> Layout:
        nd = len(self.shape)
        d = normalize_dim(dim, nd + 1)
        st = self.strides[d] * self.shape[d] if d < nd else 1
        return Layout(self.shape[:d] + (1,) + self.shape[d:], self.strides[:d] + (st,) + self.strides[d:],
                      self.offset)

    def view(self, shape: tuple) -> Layout | None:
        """Reshape without copying, or ``None`` when the strides make that impossible."""
        shape = infer_shape(shape, self.numel)
        if self.is_contiguous():
            return Layout.contiguous(shape, self.offset)
        # PyTorch's computeStride: split old dims into chunks of contiguous memory.
        old_shape, old_strides = self.shape, self.strides
        if 0 in old_shape:
            return Layout.contiguous(shape, self.offset)
        new_strides = [0] * len(shape)
        view_d = len(shape) - 1
        chunk_base_stride = old_strides[-1] if old_strides else 1
        tensor_numel, view_numel = 1, 1
        for tensor_d in range(len(old_shape) - 1, -1, -1):
            tensor_numel *= old_shape[tensor_d]
            if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                                 old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
                while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                    new_strides[view_d] = view_numel * chunk_base_stride
                    view_numel *= shape[view_d]
                    view_d -= 1
                if view_numel != tensor_numel:
                    return None
                if tensor_d > 0:
                    chunk_base_stride = old_strides[tensor_d - 1]
                    tensor_numel, view_numel = 1, 1
        if view_d != -1:
            return None
        return Layout(shape, tuple(new_strides), self.offset)

    def getitem(self, index: tuple) -> Layout:
        """Basic indexing: ints, slices with positive steps, ``None`` and ``...``."""
        shape, strides, offset = self.shape, self.strides, self.offset
        n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
        if n_real > len(shape):
            raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {n_real})")
        if sum(1 for i in index if i is Ellipsis) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        out_shape, out_strides = [], []
        d = 0
        for item in index:
            if item is Ellipsis:
                skip = len(shape) - n_real
                out_shape.extend(shape[d:d + skip])
                out_strides.extend(strides[d:d + skip])
                d += skip
            elif item is None:  # PyTorch unsqueezes here: the stride spans the next (unindexed) dim
                out_shape.append(1)
                out_strides.append(shape[d] * strides[d] if d < len(shape) else 1)
            elif isinstance(item, slice):
                n = shape[d]
                start, stop, step = item.indices(n)
                if step <= 0:
                    raise ValueError("step must be greater than zero (negative steps are not supported; "
                                     "use .flip(dim) for a reversed copy)")
                length = max(0, (stop - start + step - 1) // step)
                if length:
                    offset += start * strides[d]
                out_shape.append(length)
                out_strides.append(strides[d] * step)
                d += 1
            else:  # int
                n = shape[d]
                i = item
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for dimension {d} with size {n}")
                offset += (i + n if i < 0 else i) * strides[d]
                d += 1
        out_shape.extend(shape[d:])
        out_strides.extend(strides[d:])
        return Layout(tuple(out_shape), tuple(out_strides), offset)
