"""Linear solvers and the factorizations they rest on: ``solve``, ``inv``, ``det``/``slogdet``/``logdet``, the
triangular solves, Cholesky (``cholesky``, ``cholesky_solve``, ``cholesky_inverse``), LU (``lu_factor``, ``lu``,
``lu_solve``, ``lu_unpack``) and LDL^T (``ldl_factor``, ``ldl_solve``), with torch's ``_ex`` forms that report a
failure in ``info`` instead of raising.

NumPy's LAPACK computes every result on the host (as the SVD's), for any device. The nodes are few: a general
solve, a triangular solve, the determinant, the log of its absolute value, Cholesky and LU. Their backwards are
PyTorch's formulas (``FunctionsManual.cpp``) written with Tensor ops, solves included, so higher derivatives work;
``inv``, ``lu_solve``, ``cholesky_solve`` and the rest compose them.
"""

from __future__ import annotations

import warnings
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..layout import broadcast_shapes
from . import _linalg_host as H
from ._linalg_host import LinAlgError, check_matrix, check_same, host, native, no_out, wrap
from .elementwise import where
from .products import _need_tensor

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state

__all__ = ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse", "lu", "lu_solve",
           "lu_unpack", "triangular_solve", "solve", "lstsq", "eig", "symeig"]


def _result(name: str, fields: list, doc: str):
    t = namedtuple(name, fields)
    t.__doc__ = f"``{doc}``'s result, as ``torch.return_types.{name}``: ``({', '.join(fields)})``."
    return t


slogdet_result = _result("slogdet", ["sign", "logabsdet"], "torch.slogdet")
linalg_slogdet_result = _result("linalg_slogdet", ["sign", "logabsdet"], "linalg.slogdet")
linalg_inv_ex_result = _result("linalg_inv_ex", ["inverse", "info"], "linalg.inv_ex")
linalg_solve_ex_result = _result("linalg_solve_ex", ["result", "info"], "linalg.solve_ex")
linalg_cholesky_ex_result = _result("linalg_cholesky_ex", ["L", "info"], "linalg.cholesky_ex")
linalg_lu_factor_result = _result("linalg_lu_factor", ["LU", "pivots"], "linalg.lu_factor")
linalg_lu_factor_ex_result = _result("linalg_lu_factor_ex", ["LU", "pivots", "info"], "linalg.lu_factor_ex")
linalg_lu_result = _result("linalg_lu", ["P", "L", "U"], "linalg.lu")
lu_unpack_result = _result("lu_unpack", ["P", "L", "U"], "torch.lu_unpack")
lu_with_info_result = _result("_lu_with_info", ["LU", "pivots", "info"], "torch.lu")
triangular_solve_result = _result("triangular_solve", ["solution", "cloned_coefficient"], "torch.triangular_solve")
linalg_ldl_factor_result = _result("linalg_ldl_factor", ["LD", "pivots"], "linalg.ldl_factor")
linalg_ldl_factor_ex_result = _result("linalg_ldl_factor_ex", ["LD", "pivots", "info"], "linalg.ldl_factor_ex")


def _info(like, info) -> Tensor:
    return wrap(like, np.asarray(info, np.int32), dtypes.int32)


def _eye(like, n: int, bat: tuple = ()) -> Tensor:
    return wrap(like, np.broadcast_to(np.eye(n), bat + (n, n)))


def _expand_batch(A, B):
    """``A`` and ``B`` expanded to their common batch dims (the expand's backward sums broadcast gradients)."""
    try:
        bat = broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError as e:
        raise RuntimeError(f"The batch dimensions of A {tuple(A.shape)} and B {tuple(B.shape)} do not broadcast: "
                           f"{e}") from None
    if tuple(A.shape[:-2]) != bat:
        A = A.expand(bat + tuple(A.shape[-2:]))
    if tuple(B.shape[:-2]) != bat:
        B = B.expand(bat + tuple(B.shape[-2:]))
    return A, B


def _records(*ts) -> bool:
    return _grad_mode.enabled and any(t.requires_grad for t in ts)


# ---- general solve ------------------------------------------------------------------------------
def _np_solve(a: np.ndarray, b: np.ndarray):
    """``(X, info)`` for ``A X = B`` (same batch dims): LAPACK's gesv; a singular matrix's X is what its LU gives
    (inf/nan), and info its first zero pivot, as torch's ``_ex`` forms report."""
    try:
        return np.linalg.solve(a, b), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        pass
    lu, piv, info = H.lu_factor(a)
    perm = H.permutation(piv, a.shape[-1])
    pb = np.take_along_axis(b, perm[..., None], -2)
    x = H.solve_triangular(lu, H.solve_triangular(lu, pb, False, True), True, False)
    good = info == 0
    if good.any():
        try:
            x[good] = np.linalg.solve(a[good], b[good])
        except np.linalg.LinAlgError:
            pass
    if not (info > 0).any():  # (LAPACK met an exact zero where this LU's rounding did not: name the last pivot)
        info = np.where(np.isfinite(x).all((-2, -1)), 0, a.shape[-1]).astype(np.int32)
    return x, info


class LinalgSolveEx(Function):
    """``X`` with ``A X = B`` (same batch dims, B a batch of matrices). With ``gB = A^-T g``: ``gA = -gB X^T``."""

    save_output = True

    def forward(self, A, B, X):
        if _records(A, B):
            self.save_for_backward(A)
        return native(A, X)

    def backward(self, g):
        A, X = self.saved_tensors
        gB = _solve_raw(A.mT, g)
        gA = -(gB @ X.mT) if self.next[0] is not None else None
        return gA, (gB if self.next[1] is not None else None), None


class LinalgInvEx(LinalgSolveEx):
    """``A^-1``: the solve of ``A X = I`` (torch's node name for it)."""


def _solve_raw(A, B):
    """``A^-1 B`` for A and B of the same batch dims, B a matrix; a singular A raises torch's LinAlgError."""
    x, info = _np_solve(host(A), host(B))
    if (info > 0).any():
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    return LinalgSolveEx.apply(A, B, x)


def _solve(A, B, left: bool, op: str, check_errors: bool):
    check_matrix(A, op)
    _need_tensor(B, op, "B")
    check_same(A, B, op)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        if not left:
            raise RuntimeError(f"{op}: Vector broadcasting of the left hand side is not supported for left=False. In "
                               f"this case {op} is equivalent to B / A.squeeze(-1)")
        B = B.unsqueeze(-1)
    n = A.shape[-1]
    if left and B.shape[-2] != n or not left and B.shape[-1] != n:
        rows, cols = (B.shape[-2], B.shape[-1]) if left else (B.shape[-1], B.shape[-2])
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {rows}x{cols})")
    if not left:
        A, B = A.mT, B.mT
    A, B = _expand_batch(A, B)
    x, info = _np_solve(host(A), host(B))
    if check_errors and (info > 0).any():
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    X = LinalgSolveEx.apply(A, B, x)
    if not left:
        X = X.mT
    return (X.squeeze(-1) if vector else X), info


def _inv(A, op: str, check_errors: bool):
    check_matrix(A, op)
    n = A.shape[-1]
    bat = tuple(A.shape[:-2])
    x, info = _np_solve(host(A), np.broadcast_to(np.eye(n), bat + (n, n)))
    if check_errors and (info > 0).any():
        raise LinAlgError(H.batch_message(op, info, lambda i: f"The diagonal element {i} is zero, the inversion "
                                                              f"could not be completed because the input matrix is "
                                                              f"singular."))
    return LinalgInvEx.apply(A, _eye(A, n, bat), x), info


# ---- triangular solve ---------------------------------------------------------------------------------
class LinalgSolveTriangular(Function):
    """``X`` with ``A X = B`` for a triangular A (same batch dims). ``gB = A^-T g`` (a triangular solve of the other
    triangle) and ``gA = -gB X^T``, on A's triangle (off its diagonal with ``unitriangular``)."""

    __slots__ = ("upper", "unit")
    save_output = True

    def forward(self, A, B, upper, unit, X):
        self.upper, self.unit = upper, unit
        if _records(A, B):
            self.save_for_backward(A)
        return native(A, X)

    def backward(self, g):
        A, X = self.saved_tensors
        gB = _tri(A.mT, g, not self.upper, True, self.unit)
        gA = None
        if self.next[0] is not None:
            gA = -(gB @ X.mT)
            gA = gA.triu(1 if self.unit else 0) if self.upper else gA.tril(-1 if self.unit else 0)
        return gA, (gB if self.next[1] is not None else None), None, None, None


def _tri(A, B, upper: bool, left: bool = True, unit: bool = False):
    """``A^-1 B`` (``left``) or ``B A^-1`` for a triangular A; batch dims broadcast."""
    if not left:
        return _tri(A.mT, B.mT, not upper, True, unit).mT
    A, B = _expand_batch(A, B)
    return LinalgSolveTriangular.apply(A, B, upper, unit, H.solve_triangular(host(A), host(B), upper, unit))


def _solve_triangular(A, B, upper, left, unitriangular, op="linalg.solve_triangular"):
    check_matrix(A, op)
    _need_tensor(B, op, "B")
    if B.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    check_same(A, B, op)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    return _tri(A, B, bool(upper), left, unitriangular)


# ---- determinants -------------------------------------------------------------------------------------
class LinalgDet(Function):
    """``det(A)``. Its gradient is ``g`` times the adjugate's transpose: ``det(A) A^-T`` where A is invertible,
    else (as torch) from the SVD, ``det(U) det(V) U diag(prod_{j != i} s_j) V^T``; the SVD's form is taken
    wherever A is numerically singular (its det and inverse are then rounding noise), so a singular A gets its
    adjugate (torch's first-order backward gives zeros there, its double backward the adjugate)."""

    save_output = True

    def forward(self, A, d):
        if _records(A):
            self.save_for_backward(A)
        return native(A, d)

    def backward(self, g):
        A, d = self.saved_tensors
        g = g.unsqueeze(-1).unsqueeze(-1)
        if A.shape[-1] == 0:
            return A.new_zeros(A.shape), None
        s = np.linalg.svd(host(A), compute_uv=False)
        if (s[..., -1] > s[..., 0] * np.finfo(s.dtype).eps * A.shape[-1] * 16).all():  # (well away from singular)
            return g * d.unsqueeze(-1).unsqueeze(-1) * _inv(A, "linalg.det", True)[0].mT, None
        from .linalg import _svd  # (linalg's norms and cond use these solvers: a module-level import is a cycle)
        U, S, Vh = _svd(A, False)
        k = S.shape[-1]
        sgn = wrap(A, np.linalg.det(host(U)) * np.linalg.det(host(Vh)))
        off = where(wrap(A, np.eye(k, dtype=bool), dtypes.bool_), 1.0, S.unsqueeze(-2).expand(S.shape + (k,)))
        return (g * sgn.unsqueeze(-1).unsqueeze(-1)) * ((U * off.prod(-1).unsqueeze(-2)) @ Vh), None


class LinalgSlogdet(Function):
    """``log|det(A)|``, with the gradient ``g A^-T``."""

    def forward(self, A, logabs):
        if _records(A):
            self.save_for_backward(A)
        return native(A, logabs)

    def backward(self, g):
        (A,) = self.saved_tensors
        return g.unsqueeze(-1).unsqueeze(-1) * _inv(A, "linalg.slogdet", True)[0].mT, None


def _det(A, op="linalg.det"):
    check_matrix(A, op)
    return LinalgDet.apply(A, np.linalg.det(host(A)))


def _slogdet(A, op="linalg.slogdet"):
    check_matrix(A, op)
    sign, logabs = np.linalg.slogdet(host(A))
    return wrap(A, sign), LinalgSlogdet.apply(A, logabs)


# ---- Cholesky -------------------------------------------------------------------------------------------
def _np_cholesky(a: np.ndarray):
    """``(L, info)``: LAPACK potrf (lower). A matrix that is not positive-definite stops at the first failing
    leading minor ``info``, its partial result kept as LAPACK leaves it (the failed diagonal value in place)."""
    try:
        L = np.linalg.cholesky(a)
        if not np.isnan(np.diagonal(L, 0, -2, -1)).any():  # (NumPy lets NaN through; LAPACK's potrf stops there)
            return L, np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        pass
    n = a.shape[-1]
    flat = np.tril(a).reshape((-1, n, n)).copy()
    info = np.zeros(flat.shape[0], np.int32)
    for b, w in enumerate(flat):
        for j in range(n):
            ajj = w[j, j] - w[j, :j] @ w[j, :j]
            if not ajj > 0:
                w[j, j], info[b] = ajj, j + 1
                break
            w[j, j] = ajj = np.sqrt(ajj)
            w[j + 1:, j] = (w[j + 1:, j] - w[j + 1:, :j] @ w[j, :j]) / ajj
    return flat.reshape(a.shape), info.reshape(a.shape[:-2])


class LinalgCholeskyEx(Function):
    """``L`` (lower) with ``A = L L^T``. The gradient (PyTorch's, after Murray 2016): with ``phi = tril(L^T g)``
    and its diagonal halved, ``S = L^-T phi L^-1`` and ``gA = (S + S^T) / 2``."""

    save_output = True

    def forward(self, A, L):
        return native(A, L)

    def backward(self, g):
        (L,) = self.saved_tensors
        phi = (L.mT @ g).tril()
        phi = phi - 0.5 * phi.diagonal(0, -2, -1).diag_embed()
        S = _tri(L.mT, _tri(L.mT, phi, True).mT, True).mT
        return 0.5 * (S + S.mT), None


def _cholesky(A, upper: bool, op: str, check_errors: bool):
    check_matrix(A, op)
    L, info = _np_cholesky(host(A))
    if check_errors and (info > 0).any():
        raise LinAlgError(H.batch_message(op, info, lambda i: f"The factorization could not be completed because "
                                                              f"the input is not positive-definite (the leading "
                                                              f"minor of order {i} is not positive-definite)."))
    out = LinalgCholeskyEx.apply(A, L)
    return (out.mT if upper else out), info


def _cholesky_solve(B, L, upper: bool, op="cholesky_solve"):
    _need_tensor(B, op, "input"), _need_tensor(L, op, "input2")
    check_matrix(L, op, "input2")
    if B.ndim < 2:
        raise RuntimeError(f"{op}: b should have at least 2 dimensions, but has {B.ndim} dimensions instead")
    check_same(L, B, op)
    # (a solve with A = L L^T, not two triangular solves: torch differentiates L as a full matrix through A)
    A, B = _expand_batch(L.mT @ L if upper else L @ L.mT, B)
    return _solve_raw(A, B)


# ---- LU ---------------------------------------------------------------------------------------------------
def _perm_matrix(like, perm: np.ndarray) -> Tensor:
    """``P`` with ``P^T A = A[perm]`` (rows), in ``like``'s dtype."""
    m = perm.shape[-1]
    return wrap(like, np.swapaxes(np.eye(m)[perm], -1, -2))


def _lu_parts(LU, m: int, n: int):
    """``(L, U)`` of a packed LU: L ``m x k`` with its unit diagonal, U ``k x n`` (k = min(m, n))."""
    k = min(m, n)
    L = LU.narrow(-1, 0, k).tril(-1) + wrap(LU, np.eye(m, k))
    return L, LU.narrow(-2, 0, k).triu()


class LinalgLuFactorEx(Function):
    """The packed ``LU`` of ``P A = L U`` (partial pivoting; P a constant of the forward). The backward is
    PyTorch's ``linalg_lu_backward`` for square, wide and tall A, from L's strictly lower and U's upper part of
    the packed gradient."""

    __slots__ = ("P", "pivot")
    save_output = True

    def forward(self, A, LU, P, pivot):
        self.P, self.pivot = P, pivot
        return native(A, LU)

    def backward(self, g):
        (LU,) = self.saved_tensors
        m, n = LU.shape[-2], LU.shape[-1]
        k = min(m, n)
        L, U = _lu_parts(LU, m, n)
        gL, gU = g.narrow(-1, 0, k).tril(-1), g.narrow(-2, 0, k).triu()
        if m <= n:
            U1, gU1 = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
            gA = _tri(U1.mT, (L.mT @ gL - gU @ U.mT).tril(-1), False, left=False)
            if m < n:
                from .movement import cat  # (movement's cat, used here only: imported where needed)
                gA = cat([gA + gU1, gU.narrow(-1, k, n - k)], -1)
            else:
                gA = gA + gU1
            gA = _tri(L.mT, gA, True, True, True)
        else:
            L1, gL1 = L.narrow(-2, 0, k), gL.narrow(-2, 0, k)
            gA = _tri(L1.mT, (gU @ U.mT - L.mT @ gL).triu(), True, True, True)
            from .movement import cat  # (movement's cat, used here only: imported where needed)
            gA = cat([gA + gL1, gL.narrow(-2, k, m - k)], -2)
            gA = _tri(U.mT, gA, False, left=False)
        return (self.P @ gA if self.pivot else gA), None, None, None


def _lu_factor(A, pivot: bool, op: str, check_errors: bool):
    check_matrix(A, op, square=False)
    a = host(A)
    lu, piv, info = H.lu_factor(a, pivot)
    if not pivot and (info > 0).any() and check_errors:
        raise LinAlgError(f"{op}: LU without pivoting met a zero pivot (U[{int(info.max())},{int(info.max())}] is "
                          f"zero)")
    P = _perm_matrix(A, H.permutation(piv, A.shape[-2])) if pivot else None
    LU = LinalgLuFactorEx.apply(A, lu, P, pivot)
    return LU, _info(A, piv), info


def _lu_unpack(LU, pivots, unpack_data=True, unpack_pivots=True, op="lu_unpack"):
    _need_tensor(LU, op, "LU_data"), _need_tensor(pivots, op, "LU_pivots")
    if LU.ndim < 2:
        raise RuntimeError(f"{op}: LU_data must have at least 2 dimensions (got {LU.ndim})")
    m, n = LU.shape[-2], LU.shape[-1]
    if pivots.dtype is not dtypes.int32:
        raise RuntimeError(f"{op}: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. Note: this "
                           f"function is intended to be used with the output produced by torch.linalg.lu_factor")
    empty = LU.new_zeros((0,))
    L, U = _lu_parts(LU, m, n) if unpack_data else (empty, empty)
    P = _perm_matrix(LU, H.permutation(host(pivots), m)) if unpack_pivots else empty
    return P, L, U


def _lu_solve(LU, pivots, B, left: bool, adjoint: bool, op="linalg.lu_solve"):
    check_matrix(LU, op, "LU")
    _need_tensor(B, op, "B"), _need_tensor(pivots, op, "pivots")
    check_same(LU, B, op)
    if B.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if pivots.shape[-1] != n:
        raise RuntimeError(f"{op}: Expected pivots to have {n} entries (the LU's size), got {pivots.shape[-1]}")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _lu_solve(LU, pivots, B.mT, True, not adjoint, op).mT
    P = _perm_matrix(LU, H.permutation(host(pivots), n))
    L, U = _lu_parts(LU, n, n)
    if adjoint:  # A^T X = B, A = P L U:  X = P L^-T U^-T B
        return P @ _tri(L.mT, _tri(U.mT, B, False), True, True, True)
    return _tri(U, _tri(L, P.mT @ B, False, True, True), True)


# ---- LDL^T ------------------------------------------------------------------------------------------------
def _ldl_factor(A, hermitian: bool, op: str, check_errors: bool):
    check_matrix(A, op)
    ld, piv, info = H.ldl_factor(host(A))
    if check_errors and (info > 0).any():
        raise LinAlgError(H.batch_message(op, info, lambda i: f"The factorization could not be completed because "
                                                              f"the block diagonal matrix D is exactly singular "
                                                              f"(D[{i},{i}] is zero)."))
    return wrap(A, ld), _info(A, piv), _info(A, info)


class SolversMixin:
    """Tensor methods: determinants, inverses, Cholesky, LU and triangular solves; the solvers torch removed
    (``solve``, ``lstsq``, ``eig``, ``symeig``) raise its RuntimeError."""

    __slots__ = ()

    def det(self) -> Tensor:
        return _det(self)

    def logdet(self) -> Tensor:
        """``log(det(A))``: NaN where the determinant is negative, -inf where it is 0 (as torch)."""
        sign, logabs = _slogdet(self, "logdet")
        return where(sign < 0, float("nan"), logabs)

    def slogdet(self):
        return slogdet_result(*_slogdet(self))

    def inverse(self) -> Tensor:
        return _inv(self, "linalg.inv", True)[0]

    def cholesky(self, upper: bool = False) -> Tensor:
        """The deprecated ``torch.cholesky`` (it warns, as torch): ``linalg.cholesky(A, upper=upper)``."""
        warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
                      "future PyTorch release.", UserWarning, stacklevel=2)
        return _cholesky(self, upper, "linalg.cholesky", True)[0]

    def cholesky_solve(self, input2, upper: bool = False) -> Tensor:
        """``X`` with ``A X = self`` for ``A = L L^T`` (``input2`` is L; ``upper``: it is U, ``A = U^T U``)."""
        return _cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: bool = False) -> Tensor:
        """``(L L^T)^-1`` from the Cholesky factor L (``upper``: ``(U^T U)^-1``)."""
        check_matrix(self, "cholesky_inverse", "input")
        A = self.mT @ self if upper else self @ self.mT
        return _solve_raw(A, _eye(self, self.shape[-1], tuple(self.shape[:-2])))

    def lu(self, pivot: bool = True, get_infos: bool = False):
        """The deprecated ``torch.lu``: ``(LU, pivots)`` and with ``get_infos`` their ``info`` too."""
        warnings.warn("torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
                      "will be removed in a future PyTorch release.", UserWarning, stacklevel=2)
        LU, piv, info = _lu_factor(self, pivot, "torch.lu", not get_infos)
        if get_infos:
            return lu_with_info_result(LU, piv, _info(self, info))
        return LU, piv

    def lu_solve(self, LU_data, LU_pivots) -> Tensor:
        """``X`` with ``A X = self``, A given by ``lu_factor``'s ``(LU_data, LU_pivots)``."""
        return _lu_solve(LU_data, LU_pivots, self, True, False, "lu_solve")

    def triangular_solve(self, A, upper: bool = True, transpose: bool = False, unitriangular: bool = False):
        """The deprecated ``torch.triangular_solve`` (it warns, as torch): ``(X, A.clone())`` with ``A X = self``
        (``transpose``: ``A^T X = self``)."""
        warnings.warn("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular and will be "
                      "removed in a future PyTorch release.", UserWarning, stacklevel=2)
        _need_tensor(A, "triangular_solve", "A")
        check_matrix(A, "triangular_solve")
        if self.ndim < 2:
            raise RuntimeError(f"triangular_solve: The input tensor b must have at least 2 dimensions, got "
                               f"{self.ndim}")
        check_same(A, self, "triangular_solve")
        M = A.mT if transpose else A
        return triangular_solve_result(_tri(M, self, bool(upper) != bool(transpose), True, unitriangular), A.clone())

    # ---- removed from torch: they raise as there ------------------------------------------------------
    def solve(self, other):
        raise RuntimeError("This function was deprecated since version 1.9 and is now removed. `torch.solve` is "
                           "deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments "
                           "reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
                           "`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = "
                           "torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")

    def lstsq(self, other):
        raise RuntimeError("This function was deprecated since version 1.9 and is now removed. `torch.lstsq` is "
                           "deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed "
                           "arguments and does not return the QR decomposition in the returned tuple (although it "
                           "returns other information about the problem).\n\nTo get the QR decomposition consider "
                           "using `torch.linalg.qr`.\n\nX = torch.lstsq(B, A).solution[:A.size(1)] should be "
                           "replaced with:\nX = torch.linalg.lstsq(A, B).solution")

    def eig(self, eigenvectors: bool = False):
        raise RuntimeError("This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` "
                           "returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
                           "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
                           "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be "
                           "replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")

    def symeig(self, eigenvectors: bool = False):
        raise RuntimeError("This function was deprecated since version 1.9 and is now removed. The default behavior "
                           "has changed from using the upper triangular portion of the matrix by default to using "
                           "the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced "
                           "with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
                           "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, "
                           "UPLO='U' if upper else 'L')")


# ---- free functions (tl.<name>) -------------------------------------------------------------------------
def det(input: Tensor) -> Tensor:
    _need_tensor(input, "det", "input")
    return input.det()


def logdet(input: Tensor) -> Tensor:
    _need_tensor(input, "logdet", "input")
    return input.logdet()


def slogdet(input: Tensor):
    _need_tensor(input, "slogdet", "input")
    return input.slogdet()


def inverse(input: Tensor, *, out=None) -> Tensor:
    no_out(out, "inverse")
    _need_tensor(input, "inverse", "input")
    return input.inverse()


def cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    no_out(out, "cholesky")
    _need_tensor(input, "cholesky", "input")
    return input.cholesky(upper)


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False, *, out=None) -> Tensor:
    no_out(out, "cholesky_solve")
    return _cholesky_solve(B, L, upper)


def cholesky_inverse(L: Tensor, upper: bool = False, *, out=None) -> Tensor:
    no_out(out, "cholesky_inverse")
    _need_tensor(L, "cholesky_inverse", "L")
    return L.cholesky_inverse(upper)


def lu(*args, **kwargs):
    """``torch.lu(A, pivot=True, get_infos=False, out=None)``, deprecated: ``(LU, pivots[, infos])``."""
    if not args or not hasattr(args[0], "lu"):
        raise TypeError("lu(): argument 'A' must be Tensor")
    no_out(kwargs.pop("out", None), "lu")
    return args[0].lu(*args[1:], **kwargs)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:
    no_out(out, "lu_solve")
    return _lu_solve(LU_data, LU_pivots, b, True, False, "lu_solve")


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True, *, out=None):
    no_out(out, "lu_unpack")
    return lu_unpack_result(*_lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots))


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False,
                     *, out=None):
    no_out(out, "triangular_solve")
    _need_tensor(b, "triangular_solve", "b")
    return b.triangular_solve(A, upper, transpose, unitriangular)


# ---- removed from torch (they raise its RuntimeError, saying what replaced them) --------------------------------
def solve(input: Tensor, A: Tensor, *, out=None):
    return SolversMixin.solve(input, A)


def lstsq(input: Tensor, A: Tensor, *, out=None):
    return SolversMixin.lstsq(input, A)


def eig(self: Tensor, eigenvectors: bool = False, *, e=None, v=None):
    return SolversMixin.eig(self, eigenvectors)


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True, *, out=None):
    return SolversMixin.symeig(input, eigenvectors)
