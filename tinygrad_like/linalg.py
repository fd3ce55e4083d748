"""``tl.linalg``: ``torch.linalg``: norms, cross and dot products, diagonals, matrix products, the
decompositions (SVD, QR, Cholesky, LU, LDL^T, eigh, eig) and the solvers, inverses and determinants built on
them. NumPy's LAPACK computes the factorizations (on the host, for any device); every result torch
differentiates is differentiable here. ``eig`` and ``eigvals`` return real tensors, and raise NotImplementedError
for a matrix with complex eigenvalues (there is no complex dtype here; torch returns complex tensors).

>>> import tinygrad_like as tl
>>> tl.linalg.vector_norm(tl.tensor([3.0, 4.0])).item()
5.0
"""

from __future__ import annotations

from math import prod

from . import dtypes
from .layout import normalize_dim
from .ops import _linalg_host as _host
from .ops import decompositions as _dec
from .ops import solvers as _sol
from .ops.linalg import LinAlgError, _cross, _matrix_norm, _svd, _svdvals, _vector_norm
from .ops.products import _need_tensor
from .ops.reduce import matmul
from .tensor import Tensor

__all__ = ["norm", "vector_norm", "matrix_norm", "cross", "vecdot", "matmul", "diagonal", "multi_dot",
           "matrix_power", "svd", "svdvals", "cond", "LinAlgError", "cholesky", "cholesky_ex", "det", "eig", "eigh",
           "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve",
           "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp", "matrix_rank", "pinv", "qr",
           "slogdet", "solve", "solve_ex", "solve_triangular", "tensorinv", "tensorsolve", "vander"]


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """``sum(|x|^ord) ^ (1/ord)`` over ``dim`` (all elements by default); ``ord`` inf/-inf: max/min of ``|x|``;
    0: the count of non-zeros. ``dtype``: the input is converted to it first."""
    _need_tensor(x, "linalg.vector_norm", "x")
    _no_out(out, "vector_norm")
    return _vector_norm(x, ord, dim, keepdim, dtype)


def matrix_norm(input: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """'fro' (Frobenius), 1/-1 (max/min column sum of ``|A|``), inf/-inf (max/min row sum) over the two dims
    ``dim``; 'nuc' (the sum of the singular values), 2 and -2 (the largest and the smallest one)."""
    _need_tensor(input, "linalg.matrix_norm", "input")
    _no_out(out, "matrix_norm")
    return _matrix_norm(input, ord, dim, keepdim, dtype)


def norm(input: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """torch.linalg.norm: a matrix norm over two dims (``dim`` a pair, or a 2-D input with ``ord`` given), else a
    vector norm (``ord`` None: the 2-norm of all elements, or over the one dim given)."""
    _need_tensor(input, "linalg.norm", "input")
    _no_out(out, "norm")
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    elif ord is not None:
        if input.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{input.ndim}D.")
        dims = tuple(range(input.ndim))
    else:
        dims = None
    if dims is not None and len(dims) == 2:
        return _matrix_norm(input, "fro" if ord is None else ord, dims, keepdim, dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: Order {ord} not supported for a vector norm (the input is "
                           f"{input.ndim}-D, dim {dim}); use a number")
    return _vector_norm(input, 2 if ord is None else ord, dims, keepdim, dtype, "linalg.norm")


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out=None) -> Tensor:
    _need_tensor(input, "linalg.cross", "input"), _need_tensor(other, "linalg.cross", "other")
    _no_out(out, "cross")
    return _cross(input, other, dim)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """``sum(x * y, dim)`` with broadcasting (real tensors: no conjugation)."""
    _need_tensor(x, "linalg.vecdot", "x"), _need_tensor(y, "linalg.vecdot", "y")
    _no_out(out, "vecdot")
    for t in (x, y):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                               f"{t.dtype.name}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but x has dtype {x.dtype.name} "
                           f"and y has dtype {y.dtype.name}")
    p = x * y
    return p.sum(normalize_dim(dim, p.ndim))


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    _need_tensor(A, "linalg.diagonal", "A")
    return A.diagonal(offset, dim1, dim2)


def multi_dot(tensors, *, out=None) -> Tensor:
    """``A @ B @ C ...`` (the first may be a vector, as may the last), multiplied left to right."""
    _no_out(out, "multi_dot")
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        _need_tensor(t, "linalg.multi_dot", f"tensors[{i}]")
        want = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in want:
            raise RuntimeError(f"multi_dot(): tensor {i} must be {' or '.join(f'{n}D' for n in want)} but got "
                               f"{t.ndim}D")
    out_t = tensors[0]
    for t in tensors[1:]:
        out_t = out_t @ t
    return out_t


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A @ A @ ... @ A`` (``|n|`` factors, by repeated squaring; ``n = 0``: the identity; negative ``n``: of the
    inverse)."""
    _need_tensor(A, "linalg.matrix_power", "A")
    return A.matrix_power(n)


def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None):
    """``(U, S, Vh)`` with ``A = U @ diag(S) @ Vh`` for the matrices in the last two dims, singular values in
    descending order (NumPy's LAPACK gesdd, as torch's CPU SVD; the signs of the singular vectors are LAPACK's).
    ``full_matrices``: U is m x m and Vh n x n, else m x k and k x n (k = min(m, n)). The gradient is torch's; it is
    well defined where the singular values are distinct (and, when U or Vh are used on a non-square A, nonzero).

    >>> import tinygrad_like as tl
    >>> U, S, Vh = tl.linalg.svd(tl.tensor([[3.0, 0.0], [0.0, -4.0]]))
    >>> S.tolist(), (U @ S.diag() @ Vh).tolist()
    ([4.0, 3.0], [[3.0, 0.0], [0.0, -4.0]])
    """
    _need_tensor(A, "linalg.svd", "A")
    _no_out(out, "svd")
    _no_driver(driver, "svd")
    return _svd(A, full_matrices)


def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    """The singular values of the matrices in the last two dims, descending; the gradient is ``U diag(g) Vh``."""
    _need_tensor(A, "linalg.svdvals", "A")
    _no_out(out, "svdvals")
    _no_driver(driver, "svdvals")
    return _svdvals(A)


def cond(A: Tensor, p=None, *, out=None) -> Tensor:
    """The condition number: in the 2-norm (``p`` None or 2: largest / smallest singular value; -2: the inverse),
    of the matrices in the last two dims (any shape); the other orders (square matrices) are ``norm(A, p) *
    norm(inv(A), p)``, inf where A is singular (as torch)."""
    _need_tensor(A, "linalg.cond", "A")
    _no_out(out, "cond")
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if isinstance(p, str) or (p is not None and p not in (2, -2)):
        if p not in ("fro", "nuc", 1, -1, float("inf"), float("-inf")):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
        m, n = A.shape[-2], A.shape[-1]
        if m != n:
            raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are {m} by {n} "
                               f"matrices")
        inv_a, info = _sol._inv(A, "linalg.cond", False)
        out = _matrix_norm(A, p, (-2, -1), False, None) * _matrix_norm(inv_a, p, (-2, -1), False, None)
        if (info > 0).any():
            out = out.masked_fill(_host.wrap(A, info > 0, dtypes.bool_), float("inf"))
        return out
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as input. Got {A.dtype.name}")
    if A.numel() == 0:  # (torch's: zeros, one per matrix)
        return A._wrap(A._dev.backend.full(tuple(A.shape[:-2]), 0, A.dtype), A._dev)
    s = _svdvals(A)
    s_max, s_min = s[..., 0], s[..., -1]
    return s_min / s_max if p == -2 else s_max / s_min


def _no_driver(driver, name: str) -> None:
    if driver is not None:
        raise RuntimeError(f"torch.linalg.{name}: keyword argument `driver=` is only supported on CUDA inputs with "
                           f"cuSOLVER backend.")


def _no_out(out, name: str) -> None:
    if out is not None:
        raise NotImplementedError(f"linalg.{name}: out= is not supported; assign the result instead")


# ---- solvers, inverses, determinants ----------------------------------------------------------------------
def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``); B a (batch of) matrices, or of vectors when it has
    A's shape without the last dim. Batch dims broadcast. A singular A raises LinAlgError."""
    _need_tensor(A, "linalg.solve", "A")
    _no_out(out, "solve")
    return _sol._solve(A, B, left, "linalg.solve", True)[0]


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out=None):
    """``(result, info)``: :func:`solve`, reporting a singular matrix in ``info`` (its first zero pivot)."""
    _need_tensor(A, "linalg.solve_ex", "A")
    _no_out(out, "solve_ex")
    x, info = _sol._solve(A, B, left, "linalg.solve_ex", check_errors)
    return _sol.linalg_solve_ex_result(x, _sol._info(A, info))


def inv(A: Tensor, *, out=None) -> Tensor:
    """The inverse of the (batch of) square matrices; a singular one raises LinAlgError."""
    _need_tensor(A, "linalg.inv", "A")
    _no_out(out, "inv")
    return _sol._inv(A, "linalg.inv", True)[0]


def inv_ex(A: Tensor, *, check_errors: bool = False, out=None):
    """``(inverse, info)``: :func:`inv`, reporting a singular matrix in ``info`` (its first zero pivot)."""
    _need_tensor(A, "linalg.inv_ex", "A")
    _no_out(out, "inv_ex")
    x, info = _sol._inv(A, "linalg.inv_ex", check_errors)
    return _sol.linalg_inv_ex_result(x, _sol._info(A, info))


def det(A: Tensor, *, out=None) -> Tensor:
    _need_tensor(A, "linalg.det", "A")
    _no_out(out, "det")
    return _sol._det(A)


def slogdet(A: Tensor, *, out=None):
    """``(sign, logabsdet)`` of the determinant (sign 0 and logabsdet -inf for a singular matrix)."""
    _need_tensor(A, "linalg.slogdet", "A")
    _no_out(out, "slogdet")
    return _sol.linalg_slogdet_result(*_sol._slogdet(A))


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
                     out=None) -> Tensor:
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``) for a triangular A (only its ``upper`` or lower
    triangle is read; ``unitriangular``: its diagonal is taken as ones). A zero on the diagonal gives inf/nan."""
    _need_tensor(A, "linalg.solve_triangular", "A")
    _no_out(out, "solve_triangular")
    return _sol._solve_triangular(A, B, upper, left, unitriangular)


def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """The inverse of ``A`` for :func:`tensordot` over its first ``ind`` dims: ``A.shape[ind:] + A.shape[:ind]``."""
    _need_tensor(A, "linalg.tensorinv", "A")
    _no_out(out, "tensorinv")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    outer, inner = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if prod(outer) != prod(inner):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {prod(inner)} != {prod(outer)}")
    return inv(A.reshape(prod(outer), prod(inner))).reshape(inner + outer)


def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) == B`` (``dims``: A's dims moved to the end first)."""
    _need_tensor(A, "linalg.tensorsolve", "A"), _need_tensor(B, "linalg.tensorsolve", "B")
    _no_out(out, "tensorsolve")
    if dims is not None:
        dims = [normalize_dim(d, A.ndim) for d in dims]
        A = A.permute([d for d in range(A.ndim) if d not in dims] + dims)
    xs = tuple(A.shape[B.ndim:])
    if prod(A.shape[:B.ndim]) != prod(xs) or tuple(A.shape[:B.ndim]) != tuple(B.shape):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {prod(xs)} != {prod(A.shape[:B.ndim])}")
    return solve(A.reshape(B.numel(), prod(xs)), B.reshape(B.numel())).reshape(xs)


# ---- Cholesky, LU, LDL^T ----------------------------------------------------------------------------------
def cholesky(A: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """``L`` with ``A = L L^T`` for symmetric positive-definite A (its lower triangle read; ``upper``: ``U = L^T``);
    otherwise LinAlgError, naming the first leading minor that is not positive-definite."""
    _need_tensor(A, "linalg.cholesky", "A")
    _no_out(out, "cholesky")
    return _sol._cholesky(A, upper, "linalg.cholesky", True)[0]


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    """``(L, info)``: :func:`cholesky`, reporting a failure in ``info`` (the order of the failing minor)."""
    _need_tensor(A, "linalg.cholesky_ex", "A")
    _no_out(out, "cholesky_ex")
    L, info = _sol._cholesky(A, upper, "linalg.cholesky", check_errors)
    return _sol.linalg_cholesky_ex_result(L, _sol._info(A, info))


def _need_pivot(pivot: bool, op: str) -> None:
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented on the CPU")


def lu_factor(A: Tensor, *, pivot: bool = True, out=None):
    """``(LU, pivots)``: ``P A = L U`` packed (L's unit diagonal implied) and LAPACK's 1-based int32 pivots. A zero
    pivot raises (as torch: lu_solve would divide by it); :func:`lu_factor_ex` reports it instead."""
    _need_tensor(A, "linalg.lu_factor", "A")
    _no_out(out, "lu_factor")
    _need_pivot(pivot, "linalg.lu_factor")
    LU, piv, info = _sol._lu_factor(A, pivot, "linalg.lu_factor", True)
    if (info > 0).any():
        i = int(info.reshape(-1)[(info.reshape(-1) > 0).argmax()])
        raise RuntimeError(f"torch.linalg.lu_factor: U[{i},{i}] is zero and using it on lu_solve would result in a "
                           f"division by zero. If you still want to perform the factorization, consider calling "
                           f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _sol.linalg_lu_factor_result(LU, piv)


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out=None):
    _need_tensor(A, "linalg.lu_factor_ex", "A")
    _no_out(out, "lu_factor_ex")
    _need_pivot(pivot, "linalg.lu_factor")
    LU, piv, info = _sol._lu_factor(A, pivot, "linalg.lu_factor_ex", False)
    if check_errors and (info > 0).any():
        raise LinAlgError(_host.batch_message("linalg.lu_factor_ex", info, lambda i: f"The factorization could not "
                                              f"be completed because U[{i},{i}] is zero."))
    return _sol.linalg_lu_factor_ex_result(LU, piv, _sol._info(A, info))


def lu(A: Tensor, *, pivot: bool = True, out=None):
    """``(P, L, U)`` with ``A = P L U`` (L ``m x k`` unit lower, U ``k x n`` upper, k = min(m, n))."""
    _need_tensor(A, "linalg.lu", "A")
    _no_out(out, "lu")
    _need_pivot(pivot, "linalg.lu_factor")
    LU, piv, _ = _sol._lu_factor(A, pivot, "linalg.lu", False)
    return _sol.linalg_lu_result(*_sol._lu_unpack(LU, piv))


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False, out=None) -> Tensor:
    """``X`` with ``A X = B`` from :func:`lu_factor`'s result (``adjoint``: ``A^T X = B``; ``left=False``:
    ``X A = B``)."""
    _need_tensor(LU, "linalg.lu_solve", "LU")
    _no_out(out, "lu_solve")
    return _sol._lu_solve(LU, pivots, B, left, adjoint)


def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None):
    """``(LD, pivots)``: LAPACK sytrf's Bunch-Kaufman ``A = P L D L^T P^T`` of a symmetric A (its lower triangle).
    No gradient (as torch)."""
    _need_tensor(A, "linalg.ldl_factor", "A")
    _no_out(out, "ldl_factor")
    LD, piv, _ = _sol._ldl_factor(A, hermitian, "torch.linalg.ldl_factor", True)
    return _sol.linalg_ldl_factor_result(LD, piv)


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):
    _need_tensor(A, "linalg.ldl_factor_ex", "A")
    _no_out(out, "ldl_factor_ex")
    return _sol.linalg_ldl_factor_ex_result(*_sol._ldl_factor(A, hermitian, "torch.linalg.ldl_factor_ex",
                                                              check_errors))


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out=None) -> Tensor:
    """``X`` with ``A X = B`` from :func:`ldl_factor`'s result (no gradient, as torch)."""
    op = "torch.linalg.ldl_solve"
    _need_tensor(LD, op, "LD"), _need_tensor(pivots, op, "pivots"), _need_tensor(B, op, "B")
    _no_out(out, "ldl_solve")
    _host.check_matrix(LD, op, "LD")
    if B.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    _host.check_same(LD, B, op)
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation AX = B ({LD.shape[-1]}x"
                           f"{LD.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    return _host.wrap(LD, _host.ldl_solve(_host.host(LD), _host.host(pivots), _host.host(B)))


# ---- QR, eigendecompositions, least squares ----------------------------------------------------------------
def qr(A: Tensor, mode: str = "reduced", *, out=None):
    """``(Q, R)``: ``mode`` 'reduced' (Q m x k, R k x n), 'complete' (Q m x m, R m x n) or 'r' (R alone, Q empty)."""
    _need_tensor(A, "linalg.qr", "A")
    _no_out(out, "qr")
    return _dec.linalg_qr_result(*_dec._qr(A, mode))


def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first n columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with v_i below A's diagonal (LAPACK's
    orgqr): the Q of :func:`torch.geqrf`'s result."""
    _no_out(out, "householder_product")
    return _dec._householder_product(A, tau)


def eigh(A: Tensor, UPLO: str = "L", *, out=None):
    """``(eigenvalues, eigenvectors)`` of a symmetric A (its ``UPLO`` triangle read), eigenvalues ascending."""
    _need_tensor(A, "linalg.eigh", "A")
    _no_out(out, "eigh")
    return _dec.linalg_eigh_result(*_dec._eigh(A, UPLO, "linalg.eigh"))


def eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    _need_tensor(A, "linalg.eigvalsh", "A")
    _no_out(out, "eigvalsh")
    return _dec._eigh(A, UPLO, "linalg.eigvalsh")[0]


def eig(A: Tensor, *, out=None):
    """``(eigenvalues, eigenvectors)`` of a general square A (LAPACK geev's order, unit-norm eigenvectors), as real
    tensors when every eigenvalue is real; NotImplementedError otherwise (there is no complex dtype here)."""
    _need_tensor(A, "linalg.eig", "A")
    _no_out(out, "eig")
    return _dec.linalg_eig_result(*_dec._eig(A, "linalg.eig"))


def eigvals(A: Tensor, *, out=None) -> Tensor:
    """The eigenvalues of :func:`eig` (real, or NotImplementedError)."""
    _need_tensor(A, "linalg.eigvals", "A")
    _no_out(out, "eigvals")
    return _dec._eig(A, "linalg.eigvals")[0]


def pinv(A: Tensor, rcond=None, hermitian: bool = False, *, atol=None, rtol=None, out=None) -> Tensor:
    """The Moore-Penrose pseudoinverse, from the SVD (``hermitian``: the eigendecomposition), singular values at
    most ``max(atol, rtol * s_max)`` dropped (``rtol`` defaults to ``eps * max(m, n)``). ``rcond``: torch's older
    spelling of ``rtol``."""
    _need_tensor(A, "linalg.pinv", "A")
    _no_out(out, "pinv")
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError("linalg.pinv: rcond is the older name of rtol; give one of rcond and atol/rtol")
        rtol = rcond
    return _dec._pinv(A, atol, rtol, hermitian)


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None, out=None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * s_max)`` (int64), as :func:`pinv` counts them.
    ``tol``: torch's older spelling of ``atol`` (with ``rtol`` 0)."""
    _need_tensor(A, "linalg.matrix_rank", "A")
    _no_out(out, "matrix_rank")
    if tol is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError("linalg.matrix_rank: tol is the older name of atol; give one of tol and atol/rtol")
        atol, rtol = tol, 0.0
    return _dec._matrix_rank(A, atol, rtol, hermitian)


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of ``min ||A X - B||``: the minimum-norm solution (from the
    pseudoinverse; ``rcond`` its relative threshold). As torch's CPU drivers: ``rank`` for all but 'gels',
    ``singular_values`` for 'gelsd' and 'gelss', ``residuals`` (squared, per column) when m > n, A has full rank
    and the driver is not 'gelsy' (the default); the others are empty."""
    _need_tensor(A, "linalg.lstsq", "A")
    return _dec._lstsq(A, B, rcond, driver)


def matrix_exp(A: Tensor) -> Tensor:
    """``exp(A) = sum_k A^k / k!`` (scaling and squaring with a Pade approximant)."""
    return _dec._matrix_exp(A)


def vander(x: Tensor, *, N=None) -> Tensor:
    """``[1, x, x^2, ..., x^(N-1)]`` along a new last dim (N defaults to x's last dim); batch dims kept."""
    _need_tensor(x, "linalg.vander", "x")
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    if N is not None and N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _dec._vander(x, N, "linalg.vander")
