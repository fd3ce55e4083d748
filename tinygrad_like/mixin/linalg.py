"""Tensor methods: mm/bmm/addmm, outer/dot, einsum, norms, distances, diagonals."""

from __future__ import annotations

import math
import warnings
from collections import namedtuple
from typing import TYPE_CHECKING

from .. import dtypes
from ..autograd import grad_mode
from ..layout import broadcast_shapes, normalize_dim, normalize_dims
from ..ops import linalg as L
from ..ops import reduce as R
from ..tensor_base import TensorBase

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


def _need_tensor(x, op: str, arg: str) -> None:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{op}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _no_bool(op: str, *ts) -> None:
    for t in ts:
        if t.dtype is dtypes.bool_:
            raise NotImplementedError(f'"{op}" not implemented for \'Bool\' tensors (as in torch); convert with '
                                      f'.int() or .float() first')


def _same_dtype(op: str, *named) -> None:
    """``named``: (name, tensor) pairs that must share one dtype (torch does not promote in its BLAS ops)."""
    first = named[0][1].dtype
    if any(t.dtype is not first for _, t in named):
        got = ", ".join(f"{n} {t.dtype.name}" for n, t in named)
        raise RuntimeError(f"{op}: expected all operands to have the same dtype, but got {got}; convert one with "
                           f".to(dtype) first (torch does not promote here)")


def _scalars(dt, beta, alpha):
    """``beta`` and ``alpha`` as the op uses them: an integer tensor truncates them to integers (as torch does)."""
    if not dt.is_floating_point:
        return int(beta), int(alpha)
    return beta, alpha


def _fits(input, shape: tuple, op: str) -> None:
    """``input`` must broadcast to the product's ``shape`` (not the other way): torch's expand error otherwise."""
    try:
        input._layout.expand(shape)
    except RuntimeError as e:
        raise RuntimeError(f"{op}: {e}") from None


def _check_mm(a, b, op: str, names=("mat1", "mat2")) -> None:
    for name, t in zip(names, (a, b)):
        if t.ndim != 2:
            raise RuntimeError(f"{op}: {name} must be a matrix, got {t.ndim}-D tensor of shape {tuple(t.shape)}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"{names[0]} and {names[1]} shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")


def _check_bmm(a, b, op: str) -> None:
    for name, t in (("batch1", a), ("batch2", b)):
        if t.ndim != 3:
            raise RuntimeError(f"{op}: {name} must be a 3D tensor, got {t.ndim}-D tensor of shape {tuple(t.shape)}")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(f"{op}: Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}] (batch1 has shape "
                           f"{tuple(a.shape)}, batch2 {tuple(b.shape)})")


def _check_mv(mat, vec, op: str, n_input=None) -> None:
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"{op}: vector + matrix @ vector expected, got {1 if n_input is None else n_input}, "
                           f"{mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({mat.shape[0]}), mat ({mat.shape[0]}x{mat.shape[1]}), vec "
                           f"({vec.shape[0]})")


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
    return L.VectorNorm.apply(x, float(ord), normalize_dims(dim, x.ndim), keepdim)


# ---- singular value decomposition ------------------------------------------------------------------
linalg_svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_svd_result.__doc__ = "``linalg.svd``'s result, as ``torch.return_types.linalg_svd``: ``(U, S, Vh)``."
svd_result = namedtuple("svd", ["U", "S", "V"])
svd_result.__doc__ = "``torch.svd``'s result, as ``torch.return_types.svd``: ``(U, S, V)`` (V, not its transpose)."


def _check_svd(A, op: str = "linalg.svd") -> None:
    """torch's checks of an SVD's input: a (batch of) float32/float64 matrices. (LAPACK's own failure, on NaN
    entries, is raised as :class:`~..ops.linalg.LinAlgError`; inf entries give NaN results, as in torch.)"""
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {A.dtype.name}")
    if A.dtype not in (dtypes.float32, dtypes.float64):
        raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for '{A.dtype.name}' (as in torch): convert "
                                  f"with .float() first")


def _svd(A, full_matrices: bool, op: str = "linalg.svd"):
    """``(U, S, Vh)``; while recording, one :class:`~..ops.linalg.Svd` node whose packed output they are views of."""
    _check_svd(A, op)
    full = bool(full_matrices)
    if _grad_mode.enabled and A.requires_grad:
        return linalg_svd_result(*L.svd_parts(L.Svd.apply(A, full), A.shape[-2], A.shape[-1], full))
    u, s, vh = L.svd_native(A, full)
    dev = A._dev
    return linalg_svd_result(A._wrap(u, dev), A._wrap(s, dev), A._wrap(vh, dev))


def _svdvals(A, op: str = "linalg.svd"):
    """The singular values, descending. Differentiable through the reduced SVD (its gradient is U diag(gS) Vh)."""
    if _grad_mode.enabled and A.requires_grad:
        return _svd(A, False, op).S
    _check_svd(A, op)
    return A._wrap(L.svd_native(A, None), A._dev)


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


class LinalgMixin:
    """Tensor methods: mm/bmm/addmm, outer/dot, einsum, norms, distances, diagonals."""

    __slots__ = ()

    # ---- products ------------------------------------------------------------------------------
    def mm(self, mat2) -> Tensor:
        _need_tensor(mat2, "mm", "mat2")
        if self.ndim != 2:
            raise RuntimeError(f"mm: self must be a matrix, got {self.ndim}-D tensor of shape {tuple(self.shape)}")
        if mat2.ndim != 2:
            raise RuntimeError(f"mm: mat2 must be a matrix, got {mat2.ndim}-D tensor of shape {tuple(mat2.shape)}")
        _check_mm(self, mat2, "mm")
        _same_dtype("mm", ("self", self), ("mat2", mat2))
        _no_bool("mm", self)
        return R.Matmul.apply(self, mat2)

    def bmm(self, mat2) -> Tensor:
        _need_tensor(mat2, "bmm", "mat2")
        _check_bmm(self, mat2, "bmm")
        _same_dtype("bmm", ("self", self), ("mat2", mat2))
        _no_bool("bmm", self)
        return R.Matmul.apply(self, mat2)

    def mv(self, vec) -> Tensor:
        _need_tensor(vec, "mv", "vec")
        _check_mv(self, vec, "mv")
        _same_dtype("mv", ("self", self), ("vec", vec))
        _no_bool("mv", self)
        return R.Matmul.apply(self, vec)

    def dot(self, tensor) -> Tensor:
        _need_tensor(tensor, "dot", "tensor")
        return _dot(self, tensor, "dot")

    def vdot(self, other) -> Tensor:
        """``conj(self) . other``; tensors here are real, so this is :meth:`dot`."""
        _need_tensor(other, "vdot", "other")
        return _dot(self, other, "vdot")

    def inner(self, other) -> Tensor:
        _need_tensor(other, "inner", "other")
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        if self.shape[-1] != other.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                               f"{list(self.shape)} and {list(other.shape)}")
        _same_dtype("inner", ("self", self), ("other", other))
        from ..functions_linalg import tensordot
        return tensordot(self, other, ([-1], [-1]))

    def outer(self, vec2) -> Tensor:
        _need_tensor(vec2, "outer", "vec2")
        for name, t in (("self", self), ("vec2", vec2)):
            if t.ndim != 1:
                raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
        return self.unsqueeze(1) * vec2

    ger = outer

    def kron(self, other) -> Tensor:
        """The Kronecker product: block ``(i, j, ...)`` of the result is ``self[i, j, ...] * other``."""
        _need_tensor(other, "kron", "other")
        nd = max(self.ndim, other.ndim)
        sa = (1,) * (nd - self.ndim) + tuple(self.shape)
        sb = (1,) * (nd - other.ndim) + tuple(other.shape)
        a = self.reshape(tuple(x for n in sa for x in (n, 1)))
        b = other.reshape(tuple(x for n in sb for x in (1, n)))
        return (a * b).reshape(tuple(m * n for m, n in zip(sa, sb)))

    # ---- beta * input + alpha * product ----------------------------------------------------------
    def addmm(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
        _need_tensor(mat1, "addmm", "mat1"), _need_tensor(mat2, "addmm", "mat2")
        _check_mm(mat1, mat2, "addmm")
        return _addmul(self, mat1, mat2, beta, alpha, False, (mat1.shape[0], mat2.shape[1]), "addmm")

    def addmv(self, mat, vec, *, beta=1, alpha=1) -> Tensor:
        _need_tensor(mat, "addmv", "mat"), _need_tensor(vec, "addmv", "vec")
        _check_mv(mat, vec, "addmv", self.ndim)
        return _addmul(self, mat, vec, beta, alpha, False, (mat.shape[0],), "addmv")

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        _need_tensor(batch1, "baddbmm", "batch1"), _need_tensor(batch2, "baddbmm", "batch2")
        _check_bmm(batch1, batch2, "baddbmm")
        shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
        return _addmul(self, batch1, batch2, beta, alpha, False, shape, "baddbmm")

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        _need_tensor(batch1, "addbmm", "batch1"), _need_tensor(batch2, "addbmm", "batch2")
        _check_bmm(batch1, batch2, "addbmm")
        return _addmul(self, batch1, batch2, beta, alpha, True, (batch1.shape[1], batch2.shape[2]), "addbmm")

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
        return self._add_product_("addmm_", self.addmm, mat1, mat2, beta, alpha)

    def addmv_(self, mat, vec, *, beta=1, alpha=1) -> Tensor:
        return self._add_product_("addmv_", self.addmv, mat, vec, beta, alpha)

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        return self._add_product_("baddbmm_", self.baddbmm, batch1, batch2, beta, alpha)

    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        return self._add_product_("addbmm_", self.addbmm, batch1, batch2, beta, alpha)

    def _add_product_(self, op: str, fn, a, b, beta, alpha) -> Tensor:
        """The in-place spelling: the out-of-place result written back (a version bump; with autograd, this
        tensor's new history, as every in-place op here)."""
        self._check_inplace(op)
        records = _grad_mode.enabled and (self.requires_grad or getattr(a, "requires_grad", False)
                                     or getattr(b, "requires_grad", False))
        if records:  # (the node does not keep its input: nothing to clone before the write)
            result = fn(a, b, beta=beta, alpha=alpha)
        else:
            with grad_mode.no_grad():
                result = fn(a, b, beta=beta, alpha=alpha)
        if result.shape != self.shape:
            raise RuntimeError(f"{op}: output with shape {tuple(self.shape)} doesn't match the broadcast shape "
                               f"{tuple(result.shape)}")
        if records:
            self._rebase(result, op)
        else:
            self._dev.backend.assign(self._x, result._x)
            self._wrote(op)
        return self

    def matrix_power(self, n: int) -> Tensor:
        from ..linalg import matrix_power
        return matrix_power(self, n)

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
            return L.Diagonal.apply(self, offset, d1, d2)
        return self._view(L.diagonal_layout(self._layout, offset, d1, d2))

    def diagonal_scatter(self, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """A copy of this tensor with ``src`` written on the diagonal that :meth:`diagonal` would view."""
        _need_tensor(src, "diagonal_scatter", "src")
        nd = self.ndim
        d1, d2 = normalize_dim(dim1, nd), normalize_dim(dim2, nd)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        want = L.diagonal_layout(self._layout, offset, d1, d2).shape
        if tuple(src.shape) != want:
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                               f"slice size = {list(want)}")
        if src._dev is not self._dev:
            from ..ops._util import check_same_device
            check_same_device(self, src, "diagonal_scatter")
        return L.DiagonalScatter.apply(self, src, offset, d1, d2)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        nd = self.ndim + 1
        d1, d2 = normalize_dim(dim1, nd), normalize_dim(dim2, nd)
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        n = self.shape[-1] + abs(offset)
        shape = list(self.shape[:-1])
        for d in sorted((d1, d2)):
            shape.insert(d, n)
        return L.DiagEmbed.apply(self, tuple(shape), offset, d1, d2)

    def diag(self, diagonal: int = 0) -> Tensor:
        if self.ndim == 1:
            n = self.shape[0] + abs(diagonal)
            return L.DiagEmbed.apply(self, (n, n), diagonal, 0, 1)
        if self.ndim == 2:
            return self.diagonal(diagonal).clone()
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")

    def diagflat(self, offset: int = 0) -> Tensor:
        return self.reshape(-1).diag(offset)

    def trace(self) -> Tensor:
        if self.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
        return self.diagonal().sum()


def _dot(a, b, op: str):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"{op}: 1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                           f"the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op} : expected both vectors to have same dtype, but found {a.dtype.name} and "
                           f"{b.dtype.name}")
    _no_bool(op, a)
    return R.Matmul.apply(a, b)


def _addmul(input, m1, m2, beta, alpha, batch_sum: bool, shape: tuple, op: str):
    _need_tensor(input, op, "input")
    _same_dtype(op, ("input", input), ("first factor", m1), ("second factor", m2))
    _no_bool(op, input)
    for t in (m1, m2):
        if t._dev is not input._dev:
            from ..ops._util import check_same_device
            check_same_device(input, t, op)
    _fits(input, shape, op)
    beta, alpha = _scalars(input.dtype, beta, alpha)
    return L.AddMatmul.apply(input, m1, m2, beta, alpha, batch_sum)


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
        from ..ops._util import check_same_device
        check_same_device(a, b, "linalg.cross")
    return L.Cross.apply(a, b, d)
