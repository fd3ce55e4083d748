"""Linear algebra besides the products (those are in :mod:`.products`): vector and matrix norms, distances
(``dist``, ``cdist``), the singular value decomposition (``svd``; ``tl.linalg`` builds ``svdvals``, ``cond`` and the
spectral norms on it), cross products, diagonals (a view and its embedding, ``diag``, ``trace``, ``fill_diagonal_``)
and ``tril_indices``/``triu_indices``.

The nodes are the diagonal view, its embedding and scatter, the vector norm, the cross product and the SVD; the
matrix norms, ``dist`` and ``cdist`` compose them with existing ops, so their gradients are those ops' gradients.
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..device import factory_device
from ..layout import Layout, broadcast_shapes, normalize_dim, normalize_dims
from ..tensor_base import TensorBase
from ._linalg_host import LinAlgError
from ._util import check_same_device, free_functions
from .elementwise import where
from .indexing import IndexPut, native_index
from .movement import ViewFunction
from .products import _need_tensor

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = ["norm", "dist", "cdist", "cross", "trace", "diag", "diagonal", "diag_embed", "diagflat", "diagonal_scatter",
           "tril_indices", "triu_indices", "svd", "frobenius_norm", "nuclear_norm"]


# ---- diagonals ------------------------------------------------------------------------------
def diagonal_layout(lay: Layout, offset: int, dim1: int, dim2: int) -> Layout:
    """The layout of ``diagonal(offset, dim1, dim2)`` over ``lay`` (dims non-negative and distinct): ``dim1`` and
    ``dim2`` go, and a last dim walks the diagonal with the sum of their strides."""
    shape, strides, off = lay.shape, lay.strides, lay.offset
    n1, n2 = shape[dim1], shape[dim2]
    if offset >= 0:
        size = max(0, min(n1, n2 - offset))
        if size:
            off += offset * strides[dim2]
    else:
        size = max(0, min(n1 + offset, n2))
        if size:
            off -= offset * strides[dim1]
    keep = [i for i in range(len(shape)) if i != dim1 and i != dim2]
    return Layout(tuple([shape[i] for i in keep]) + (size,),
                  tuple([strides[i] for i in keep]) + (strides[dim1] + strides[dim2],), off)


class Diagonal(ViewFunction):
    """``x.diagonal(offset, dim1, dim2)``: a view (same storage and version counter, as in torch)."""

    __slots__ = ("offset", "dim1", "dim2")

    def layout(self, x, offset, dim1, dim2):
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2
        return diagonal_layout(x._layout, offset, dim1, dim2)

    def backward(self, g):
        return DiagEmbed.apply(g, self.in_shape, self.offset, self.dim1, self.dim2), None, None, None


class DiagEmbed(Function):
    """Zeros of ``shape`` with ``x`` on the diagonal ``(offset, dim1, dim2)`` (``x``'s last dim walks it): the
    backward of :class:`Diagonal`, ``diag_embed`` and ``diag`` of a vector. Its own backward takes that diagonal."""

    __slots__ = ("offset", "dim1", "dim2")

    def forward(self, x, shape, offset, dim1, dim2):
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2
        be = x._dev.backend
        out = x._wrap(be.full(shape, 0, x.dtype), x._dev)
        if x.numel():
            be.assign(out._view(diagonal_layout(out._layout, offset, dim1, dim2))._x, x._x)
        return out

    def backward(self, g):
        return g.diagonal(self.offset, self.dim1, self.dim2), None, None, None, None


class DiagonalScatter(Function):
    """``diagonal_scatter``: a copy of ``x`` whose diagonal ``(offset, dim1, dim2)`` holds ``src`` (cast to ``x``'s
    dtype). The gradient of ``x`` is ``g`` with that diagonal zeroed, the gradient of ``src`` is ``g``'s diagonal."""

    __slots__ = ("offset", "dim1", "dim2")

    def forward(self, x, src, offset, dim1, dim2):
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2
        be = x._dev.backend
        out = x._wrap(be.copy(x._x), x._dev)
        if src.numel():
            v = src._x if src.dtype is x.dtype else be.cast(src._x, x.dtype)
            be.assign(out._view(diagonal_layout(out._layout, offset, dim1, dim2))._x, v)
        return out

    def backward(self, g):
        o, d1, d2 = self.offset, self.dim1, self.dim2
        gs = g.diagonal(o, d1, d2)
        gx = DiagonalScatter.apply(g, gs.new_zeros(gs.shape), o, d1, d2) if self.next[0] is not None else None
        return gx, (gs if self.next[1] is not None else None), None, None, None


# ---- norms ----------------------------------------------------------------------------------
class VectorNorm(Function):
    """``linalg.vector_norm(x, ord, dims, keepdim)``; ``dims`` non-negative, all of them for a full reduction.

    The gradient is torch's, case by case: 0 where the norm is 0 (ord >= 1), ties of the inf-norm share it evenly,
    ord 0 has none (zeros)."""

    __slots__ = ("ord", "dims", "keepdim", "in_shape")
    save_output = True

    def forward(self, x, ord, dims, keepdim):
        self.ord, self.dims, self.keepdim, self.in_shape = ord, dims, keepdim, x.shape
        be = x._dev.backend
        xx = x._x
        ax = None if len(dims) == x.ndim else dims
        if ord != 0 and _grad_mode.enabled and x.requires_grad:
            self.save_for_backward(x)
        if ord == 2:
            return be.sqrt(be.sum(be.mul(xx, xx), ax, keepdim))
        if ord == 1:
            return be.sum(be.abs(xx), ax, keepdim)
        if ord == math.inf or ord == -math.inf:
            if any(x.shape[d] == 0 for d in dims):
                raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
                                   f"operation does not have an identity (shape {x.shape}, dims {dims})")
            return (be.max if ord > 0 else be.min)(be.abs(xx), ax, keepdim)
        if ord == 0:
            return be.sum(be.cast(be.ne(xx, 0), x.dtype), ax, keepdim)
        return be.pow(be.sum(be.pow(be.abs(xx), ord), ax, keepdim), 1.0 / ord)

    def backward(self, g):
        saved = self.saved_tensors
        p = self.ord
        if p == 0:
            return g.new_zeros(self.in_shape), None, None, None
        x, y = saved
        if not self.keepdim and x.ndim:  # the reduced dims back as size 1, to broadcast against x
            kept = tuple([1 if i in self.dims else n for i, n in enumerate(x.shape)])
            g, y = g.reshape(kept), y.reshape(kept)
        if p == 1:
            return x.sign() * g, None, None, None
        if p == math.inf or p == -math.inf:
            xa = x.abs()
            mask = ((xa == y) | xa.isnan()).to(x.dtype)
            return x.sign() * (g / mask.sum(self.dims, keepdim=True)) * mask, None, None, None
        if p < 1:  # (|x|^(p-1) is inf at 0: 0 there, as torch's masked_fill; computed on 1 to stay finite)
            zero = x == 0
            scaled = where(zero, 0.0, where(zero, 1.0, x.abs()) ** (p - 1))
            return x.sign() * scaled * g * y ** (1 - p), None, None, None
        zero = y == 0  # (a zero norm has a zero gradient, as torch's: divided by 1 there to stay finite)
        y = where(zero, 1.0, y)
        if p == 2:
            return where(zero, 0.0, x / y) * g, None, None, None
        scale = where(zero, 0.0, g / y ** (p - 1))
        if p < 2:
            return x.sign() * x.abs() ** (p - 1) * scale, None, None, None
        return x * x.abs() ** (p - 2) * scale, None, None, None


# ---- cross product ----------------------------------------------------------------------------
class Cross(Function):
    """``linalg.cross(a, b, dim)`` of 3-vectors (same dtype, same ndim, the other dims broadcast). Its gradients
    are cross products again: ``b x g`` for ``a`` and ``g x a`` for ``b``."""

    __slots__ = ("dim",)

    def forward(self, a, b, dim):
        self.dim = dim
        if _grad_mode.enabled:
            ra, rb = a.requires_grad, b.requires_grad
            if ra or rb:
                self.save_for_backward(a if rb else None, b if ra else None)
        return a._dev.backend.cross(a._x, b._x, dim)

    def backward(self, g):
        a, b = self.saved_tensors
        return (None if b is None else Cross.apply(b, g, self.dim),
                None if a is None else Cross.apply(g, a, self.dim), None)


# ---- singular value decomposition -------------------------------------------------------------------
def svd_native(A, full_matrices: bool | None):
    """The backend's SVD of ``A`` (``full_matrices`` None: the singular values alone), LAPACK's failure (NaN in the
    input) raised as torch raises it."""
    be = A._dev.backend
    try:
        return be.svdvals(A._x) if full_matrices is None else be.svd(A._x, full_matrices)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.svd: The algorithm failed to converge because the input matrix contained "
                          "non-finite values.") from None


def svd_sizes(m: int, n: int, full_matrices: bool) -> tuple:
    """``(k, ku, kv)``: the number of singular values, U's columns and Vh's rows of an ``m x n`` matrix."""
    k = min(m, n)
    return (k, m, n) if full_matrices else (k, k, k)


def svd_parts(packed, m: int, n: int, full_matrices: bool) -> tuple:
    """``(U, S, Vh)`` as views of :class:`Svd`'s packed output (or of its gradient): its last dim holds, per
    matrix, U's ``m * ku`` entries, the ``k`` singular values, then Vh's ``kv * n`` entries."""
    k, ku, kv = svd_sizes(m, n, full_matrices)
    bat = tuple(packed.shape[:-1])
    a = m * ku
    return (packed.narrow(-1, 0, a).reshape(bat + (m, ku)), packed.narrow(-1, a, k),
            packed.narrow(-1, a + k, kv * n).reshape(bat + (kv, n)))


class Svd(Function):
    """``linalg.svd(A, full_matrices)``: ``A = U diag(S) Vh`` for the matrices in the last two dims.

    One node for the three results: its output packs each matrix's U, S and Vh along one last dim, and U, S, Vh
    are views of it (:func:`svd_parts`), so the gradients of whichever the loss reads meet in this one backward.
    The backward is PyTorch's ``svd_backward`` (its ``FunctionsManual.cpp``), which assumes distinct singular values
    (and a full-rank A when it is not square) wherever U or Vh are used: with ``E_ij = S_j^2 - S_i^2``,

        gA = U [ (skew(U^T gU) S + S skew(Vh gVh^T)) / E + diag(gS) ] Vh
             + (I - U U^T) gU S^-1 Vh      (m > n)
             + U S^-1 gVh (I - Vh^T Vh)    (m < n)

    With ``full_matrices`` only U's first k columns and Vh's first k rows take part (the rest is not unique), as in
    torch. Where a gradient term is exactly 0 it stays 0 (PyTorch skips the terms of outputs the loss does not read,
    so that svdvals and the norms built on it have a gradient at repeated or zero singular values too)."""

    __slots__ = ("m", "n", "full_matrices")
    save_output = True

    def forward(self, A, full_matrices):
        m, n = A.shape[-2], A.shape[-1]
        self.m, self.n, self.full_matrices = m, n, full_matrices
        be = A._dev.backend
        u, s, vh = svd_native(A, full_matrices)
        k, ku, kv = svd_sizes(m, n, full_matrices)
        bat = tuple(A.shape[:-2])
        return be.cat([be.reshape(u, bat + (m * ku,)), s, be.reshape(vh, bat + (kv * n,))], -1)

    def backward(self, g):
        (packed,) = self.saved_tensors
        m, n, full = self.m, self.n, self.full_matrices
        U, S, Vh = svd_parts(packed, m, n, full)
        gU, gS, gVh = svd_parts(g, m, n, full)
        k = S.shape[-1]
        if full:
            U, gU, Vh, gVh = U.narrow(-1, 0, k), gU.narrow(-1, 0, k), Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
        Ut, V = U.mT, Vh.mT
        UhgU = Ut @ gU
        VhgV = Vh @ gVh.mT
        S2 = S * S
        from ..creation import eye  # (creation sits above the ops: a module-level import would be a cycle)
        # (1 on the diagonal, as torch's: the skew parts are exactly 0 there)
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye(k, dtype=S.dtype, device=S.device)
        num = (UhgU - UhgU.mT) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VhgV - VhgV.mT)
        inner = num / where(num == 0, 1.0, E) + gS.diag_embed()  # (0 stays 0 where E is 0: no 0/0)
        if m > n:
            gUSinv = gU / where(gU == 0, 1.0, S.unsqueeze(-2))
            gA = (U @ inner + gUSinv - U @ (Ut @ gUSinv)) @ Vh
        elif m < n:
            SinvgVh = gVh / where(gVh == 0, 1.0, S.unsqueeze(-1))
            gA = U @ (inner @ Vh + SinvgVh - (SinvgVh @ V) @ Vh)
        else:
            gA = U @ (inner @ Vh)
        return gA, None


# ---- norms, the SVD and cross products as the methods and tl.linalg compute them -------------------
def _vector_norm(x, ord, dim, keepdim, dtype, op: str = "linalg.vector_norm"):
    if isinstance(ord, str) or isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"{op}(): argument 'ord' must be a number, not {type(ord).__name__}")
    if dtype is not None:
        dtype = dtypes.to_dtype(dtype)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {x.dtype.name}")
    if dtype is not None and dtype is not x.dtype:
        if not dtype.is_floating_point:
            raise RuntimeError(f"{op}: dtype should be floating point, got {dtype.name}")
        x = x.to(dtype)
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
        if not dim:
            dim = None
    return VectorNorm.apply(x, float(ord), normalize_dims(dim, x.ndim), keepdim)


# ---- singular value decomposition ------------------------------------------------------------------
linalg_svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_svd_result.__doc__ = "``linalg.svd``'s result, as ``torch.return_types.linalg_svd``: ``(U, S, Vh)``."
svd_result = namedtuple("svd", ["U", "S", "V"])
svd_result.__doc__ = "``torch.svd``'s result, as ``torch.return_types.svd``: ``(U, S, V)`` (V, not its transpose)."


def _check_svd(A, op: str = "linalg.svd") -> None:
    """torch's checks of an SVD's input: a (batch of) float32/float64 matrices. (LAPACK's own failure, on NaN
    entries, is raised as :class:`LinAlgError`; inf entries give NaN results, as in torch.)"""
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {A.dtype.name}")
    if A.dtype not in (dtypes.float32, dtypes.float64):
        raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for '{A.dtype.name}' (as in torch): convert "
                                  f"with .float() first")


def _svd(A, full_matrices: bool, op: str = "linalg.svd"):
    """``(U, S, Vh)``; while recording, one :class:`Svd` node whose packed output they are views of."""
    _check_svd(A, op)
    full = bool(full_matrices)
    if _grad_mode.enabled and A.requires_grad:
        return linalg_svd_result(*svd_parts(Svd.apply(A, full), A.shape[-2], A.shape[-1], full))
    u, s, vh = svd_native(A, full)
    dev = A._dev
    return linalg_svd_result(A._wrap(u, dev), A._wrap(s, dev), A._wrap(vh, dev))


def _svdvals(A, op: str = "linalg.svd"):
    """The singular values, descending. Differentiable through the reduced SVD (its gradient is U diag(gS) Vh)."""
    if _grad_mode.enabled and A.requires_grad:
        return _svd(A, False, op).S
    _check_svd(A, op)
    return A._wrap(svd_native(A, None), A._dev)


def _svd_norm(A, ord, d0: int, d1: int, keepdim: bool, dtype):
    """The matrix norms of singular values over dims ``(d0, d1)``: 'nuc' their sum, 2 the largest, -2 the smallest
    (torch's: the dims moved last, ``svdvals``, then a sum, amax or amin)."""
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype.name}")
    if dtype is not None:
        A = A.to(dtypes.to_dtype(dtype))
    s = _svdvals(A.permute([d for d in range(A.ndim) if d not in (d0, d1)] + [d0, d1]))
    if ord == "nuc":
        out = s.sum(-1)
    elif s.shape[-1] == 0:  # an empty matrix: 0 without history for ord 2, no minimum for -2 (as torch)
        if ord < 0:
            raise IndexError("amin(): Expected reduction dim -1 to have non-zero size.")
        out = A._wrap(A._dev.backend.full(s.shape[:-1], 0, s.dtype), A._dev)
    else:
        out = s.amax(-1) if ord > 0 else s.amin(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


def _matrix_norm(A, ord, dim, keepdim, dtype):
    """``linalg.matrix_norm``: 'fro' and the orders that are sums and maxima (1, -1, inf, -inf), and those of the
    singular values ('nuc', 2, -2)."""
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = normalize_dim(dim[0], A.ndim), normalize_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return _vector_norm(A, 2, (d0, d1), keepdim, dtype, "linalg.matrix_norm")
    if ord in ("nuc", 2, -2):
        return _svd_norm(A, ord, d0, d1, keepdim, dtype)
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype.name}")
    if dtype is not None:
        A = A.to(dtypes.to_dtype(dtype))
    # as torch: ord +-1 is the max/min column sum (sum over d0), ord +-inf the max/min row sum (sum over d1)
    sum_dim, pick_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
    s = A.abs().sum(sum_dim, keepdim=True)
    out = s.amax(pick_dim, keepdim=True) if ord > 0 else s.amin(pick_dim, keepdim=True)
    return out if keepdim else out.squeeze((d0, d1))


def _cross(a, b, dim):
    if a.ndim != b.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions (got shapes "
                           f"{tuple(a.shape)} and {tuple(b.shape)}).")
    d = normalize_dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"linalg.cross: expected both inputs to have the same dtype, but got {a.dtype.name} and "
                           f"{b.dtype.name} (torch does not promote here)")
    try:
        broadcast_shapes(a.shape, b.shape)
    except ValueError as e:
        raise RuntimeError(f"linalg.cross: {e}") from None
    if a._dev is not b._dev:
        check_same_device(a, b, "linalg.cross")
    return Cross.apply(a, b, d)


class LinalgMixin:
    """Tensor methods: norms, distances, the singular value decomposition, cross products, diagonals."""

    __slots__ = ()

    # ---- norms and distances ---------------------------------------------------------------------
    def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
        """torch.norm: ``p`` a number is a vector norm over ``dim`` (all elements by default); 'fro' is the 2-norm
        over ``dim`` (one or two dims, or all); 'nuc' or 'fro' over more dims go to :func:`linalg.matrix_norm`."""
        if isinstance(p, str):
            if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
                return _vector_norm(self, 2, dim, keepdim, dtype)
            return _matrix_norm(self, p, tuple(range(self.ndim)) if dim is None else dim, keepdim, dtype)
        return _vector_norm(self, 2.0 if p is None else p, dim, keepdim, dtype)

    def dist(self, other, p=2) -> Tensor:
        _need_tensor(other, "dist", "other")
        for t in (self, other):
            if not t.dtype.is_floating_point:
                raise RuntimeError(f"dist(): input dtype should be either floating point or complex. Got "
                                   f"{t.dtype.name} instead.")
        return _vector_norm(self - other, p, None, False, None, "dist")

    # ---- singular value decomposition -----------------------------------------------------------------
    def svd(self, some: bool = True, compute_uv: bool = True):
        """``torch.svd``: ``(U, S, V)`` with ``A = U diag(S) V^T`` (V itself, where ``linalg.svd`` gives its
        transpose Vh); ``some``: the reduced U (m x k) and V (n x k), else the full ones. Without ``compute_uv``
        only S is computed, and U and V are zeros (m x m and n x n), as in torch."""
        if self.ndim < 2:
            raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {self.ndim} dimensions "
                               f"instead")
        if not compute_uv:
            s = _svdvals(self)
            be, bat, (m, n) = self._dev.backend, tuple(self.shape[:-2]), self.shape[-2:]
            return svd_result(self._wrap(be.full(bat + (m, m), 0, self.dtype), self._dev), s,
                              self._wrap(be.full(bat + (n, n), 0, self.dtype), self._dev))
        u, s, vh = _svd(self, not some)
        return svd_result(u, s, vh.mT)

    # ---- cross product ------------------------------------------------------------------------------
    def cross(self, other, dim=None) -> Tensor:
        """torch.cross: without ``dim``, the first dim of size 3 (deprecated in torch, which warns; so do we)."""
        _need_tensor(other, "cross", "other")
        if dim is None:
            d = next((i for i, n in enumerate(self.shape) if n == 3), None)
            if d is None:
                raise RuntimeError(f"no dimension of size 3 in input (shape {tuple(self.shape)})")
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated. Please either pass the "
                          "dim explicitly or simply use linalg.cross.", UserWarning, stacklevel=2)
            dim = d
        return _cross(self, other, dim)

    # ---- diagonals ----------------------------------------------------------------------------------
    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """A view of the diagonal of the (dim1, dim2) planes, as the tensor's last dim (as in torch)."""
        nd = self.ndim
        d1, d2 = normalize_dim(dim1, nd), normalize_dim(dim2, nd)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        if self._records():
            return Diagonal.apply(self, offset, d1, d2)
        return self._view(diagonal_layout(self._layout, offset, d1, d2))

    def diagonal_scatter(self, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """A copy of this tensor with ``src`` written on the diagonal that :meth:`diagonal` would view."""
        _need_tensor(src, "diagonal_scatter", "src")
        nd = self.ndim
        d1, d2 = normalize_dim(dim1, nd), normalize_dim(dim2, nd)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        want = diagonal_layout(self._layout, offset, d1, d2).shape
        if tuple(src.shape) != want:
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                               f"slice size = {list(want)}")
        if src._dev is not self._dev:
            check_same_device(self, src, "diagonal_scatter")
        return DiagonalScatter.apply(self, src, offset, d1, d2)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        nd = self.ndim + 1
        d1, d2 = normalize_dim(dim1, nd), normalize_dim(dim2, nd)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        n = self.shape[-1] + abs(offset)
        shape = list(self.shape[:-1])
        for d in sorted((d1, d2)):
            shape.insert(d, n)
        return DiagEmbed.apply(self, tuple(shape), offset, d1, d2)

    def diag(self, diagonal: int = 0) -> Tensor:
        if self.ndim == 1:
            n = self.shape[0] + abs(diagonal)
            return DiagEmbed.apply(self, (n, n), diagonal, 0, 1)
        if self.ndim == 2:
            return self.diagonal(diagonal).clone()
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")

    def diagflat(self, offset: int = 0) -> Tensor:
        return self.reshape(-1).diag(offset)

    def trace(self) -> Tensor:
        if self.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
        return self.diagonal().sum()

    def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
        """Fill the main diagonal (elements ``[i, i, ...]``) in place. With ``wrap``, a tall matrix's diagonal
        starts again ``N + 1`` rows down after every ``N`` columns (NumPy's and PyTorch's ``wrap``)."""
        if self.ndim < 2:
            raise RuntimeError(f"dimensions must larger than 1 (fill_diagonal_ needs a tensor of at least 2 dims, "
                               f"got shape {self.shape})")
        if self.ndim > 2 and len(set(self.shape)) != 1:
            raise RuntimeError(f"all dimensions of input must be of equal length (fill_diagonal_ of a tensor with "
                               f"more than 2 dims; got shape {self.shape})")
        if isinstance(fill_value, TensorBase):
            if fill_value.numel() != 1:
                raise RuntimeError(f"fill_diagonal_: fill_value must be a number or a one-element tensor, got "
                                   f"shape {fill_value.shape}")
            fill_value = fill_value.item()
        n, m = self.shape[0], self.shape[1]
        if self.ndim == 2 and wrap and n > m + 1:
            flat = np.arange(0, n * m, m + 1)
            where = [flat // m, flat % m]
        else:
            diag = np.arange(min(self.shape))
            where = [diag] * self.ndim
        from ..creation import tensor  # (creation sits above the ops: a module-level import would be a cycle)
        idx = tuple(tensor(w.astype(np.int64), device=self._dev) for w in where)
        self._check_inplace("fill_diagonal_")
        if _grad_mode.enabled and self.requires_grad:
            self._rebase(IndexPut.apply(self._graph_input(), idx, fill_value), "fill_diagonal_")
            return self
        self._dev.backend.setitem(self._x, native_index(idx), fill_value)
        self._wrote("fill_diagonal_")
        return self


# ---- free functions (tl.<name>) ---------------------------------------------------------------------
dist, cross, trace, diag, diagonal, diagonal_scatter, diag_embed, diagflat = free_functions(
    LinalgMixin, "dist", "cross", "trace", "diag", "diagonal", "diagonal_scatter", "diag_embed", "diagflat")


# ---- norms and distances ----------------------------------------------------------------------------
def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, out=None, dtype=None) -> Tensor:
    if out is not None:
        raise NotImplementedError("norm: out= is not supported; assign the result instead")
    _need_tensor(input, "norm", "input")
    return input.norm(p, dim, keepdim, dtype)


def frobenius_norm(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """torch's deprecated ``frobenius_norm(input, dim)``: the 2-norm over ``dim`` (``linalg.vector_norm(input, 2,
    dim, keepdim)``, which torch's warning recommends)."""
    _need_tensor(input, "frobenius_norm", "input")
    warnings.warn("frobenius_norm is deprecated and it is just left for JIT compatibility. Please use "
                  "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning, stacklevel=2)
    return input.norm(2, tuple(dim) if not isinstance(dim, int) else dim, keepdim)


def nuclear_norm(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """torch's deprecated ``nuclear_norm``: the sum of the singular values of the matrices over ``dim`` (the last
    two when not given), as ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``. Also ``nuclear_norm(input,
    keepdim)``, torch's other form."""
    from .. import linalg  # (tinygrad_like.linalg sits above the ops: asked only here)
    _need_tensor(input, "nuclear_norm", "input")
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    warnings.warn("nuclear_norm is deprecated and it is just left for JIT compatibility. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning, stacklevel=2)
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of ``x1`` (``B x P x M``) and each row of ``x2`` (``B x R x M``):
    ``B x P x R``; the batch dims broadcast. Computed from the differences (exact; ``compute_mode`` is accepted and
    ignored: torch's matrix-product shortcut for p=2 trades accuracy for speed)."""
    _need_tensor(x1, "cdist", "x1"), _need_tensor(x2, "cdist", "x2")
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {t.dtype.name}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values (got p={p})")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"cdist: expected both inputs to have the same dtype, but got {x1.dtype.name} and "
                           f"{x2.dtype.name}")
    try:
        broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    except ValueError as e:
        raise RuntimeError(f"cdist: the batch dims do not broadcast: {e}") from None
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if diff.shape[-1] == 0:  # (no columns: every distance is 0, as torch's; the inf-norm has no identity there)
        return diff.sum(-1)
    return _vector_norm(diff, p, -1, False, None, "cdist")


# ---- singular value decomposition ------------------------------------------------------------------
def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """``torch.svd``: ``(U, S, V)``, V itself (``linalg.svd`` gives its transpose); see ``Tensor.svd``."""
    if out is not None:
        raise NotImplementedError("svd: out= is not supported; assign the result instead")
    _need_tensor(input, "svd", "input")
    return input.svd(some, compute_uv)


# ---- index factories -------------------------------------------------------------------------------
def _tri_indices(kind: str, row: int, col: int, offset: int, dtype, device) -> Tensor:
    for name, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{name} must be non-negative, got {n}")
    dt = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    if dt.is_floating_point or dt is dtypes.bool_:
        raise NotImplementedError(f'"{kind}" not implemented for \'{dt.name}\': expected an integer dtype')
    dev = factory_device(device)
    from ..tensor import wrap_native  # (tensor sits above the ops, and no input tensor is here to wrap with)
    return wrap_native(getattr(dev.backend, kind)(row, col, offset, dt), dev)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """``2 x N`` int64: the row and column indices of the lower triangle of a ``row x col`` matrix (diagonal
    ``offset`` and below), in row-major order."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """``2 x N`` int64: the row and column indices of the upper triangle (diagonal ``offset`` and above)."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device)
