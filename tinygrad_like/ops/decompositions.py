"""The decompositions that are not solvers: QR (``qr``, ``geqrf``, ``householder_product``/``orgqr``, ``ormqr``),
the symmetric and the general eigendecomposition (``eigh``, ``eigvalsh``, ``eig``, ``eigvals``, ``lobpcg``), the
pseudoinverse and least squares (``pinv``, ``lstsq``, ``matrix_rank``), the matrix exponential and Vandermonde
matrices.

NumPy's LAPACK computes the factorizations on the host, as for the solvers. The nodes are QR, eigh, eig and pinv,
with PyTorch's backward formulas written with Tensor ops; the Householder products, ``matrix_exp`` (Higham's
scaling and squaring with a degree-13 Pade approximant), ``lstsq`` and ``vander`` compose existing ops.

There is no complex dtype here: ``eig`` and ``eigvals`` return real tensors when every eigenvalue is real, and
raise NotImplementedError (saying so) when one is not. torch returns complex tensors in both cases.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..tensor_base import TensorBase
from ._linalg_host import check_matrix, host, native, pack, unpack, wrap
from .elementwise import where
from .products import _need_tensor
from .solvers import _eye, _records, _solve_raw, _tri

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state

__all__ = ["qr", "geqrf", "orgqr", "ormqr", "pinverse", "matrix_exp", "vander", "lobpcg"]

qr_result = namedtuple("qr", ["Q", "R"])
qr_result.__doc__ = "``torch.qr``'s result, as ``torch.return_types.qr``: ``(Q, R)``."
linalg_qr_result = namedtuple("linalg_qr", ["Q", "R"])
linalg_qr_result.__doc__ = "``linalg.qr``'s result, as ``torch.return_types.linalg_qr``: ``(Q, R)``."
geqrf_result = namedtuple("geqrf", ["a", "tau"])
geqrf_result.__doc__ = "``torch.geqrf``'s result, as ``torch.return_types.geqrf``: ``(a, tau)``."
linalg_eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_eigh_result.__doc__ = "``linalg.eigh``'s result: ``(eigenvalues, eigenvectors)``."
linalg_eig_result = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_eig_result.__doc__ = "``linalg.eig``'s result: ``(eigenvalues, eigenvectors)`` (real here; see the module)."
linalg_lstsq_result = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_lstsq_result.__doc__ = "``linalg.lstsq``'s result: ``(solution, residuals, rank, singular_values)``."


def _skew_div(num, L):
    """``num / (L_j - L_i)`` off the diagonal (0 where ``num`` is 0, so repeated eigenvalues the loss does not
    reach cost nothing), 0 on it."""
    E = L.unsqueeze(-2) - L.unsqueeze(-1)
    off = num * (1 - wrap(L, np.eye(L.shape[-1])))
    return off / where(off == 0, 1.0, E)


# ---- QR -------------------------------------------------------------------------------------------
class LinalgQr(Function):
    """``(Q, R)`` packed in one output (views of it, as the SVD's). The backward is PyTorch's (after Walter and
    Seeger): for m >= n, with ``M = R gR^T - gQ^T Q``, ``gA = (gQ + Q copyltu(M)) R^-T``; a wide A = [X | Y]
    takes X's from that with ``gQ + Y gV^T`` and Y's as ``Q gV``."""

    __slots__ = ("m", "n", "mode")
    save_output = True

    def forward(self, A, q, r, mode):
        self.m, self.n, self.mode = A.shape[-2], A.shape[-1], mode
        return native(A, pack([r] if mode == "r" else [q, r], tuple(A.shape[:-2])))

    def _parts(self, t):
        m, n = self.m, self.n
        kq = m if self.mode == "complete" else min(m, n)
        if self.mode == "r":
            return None, unpack(t, [(kq, n)])[0]
        return unpack(t, [(m, kq), (kq, n)])

    def backward(self, g):
        if self.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                               "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
        if self.mode == "complete" and self.m > self.n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        (packed,) = self.saved_tensors
        Q, R = self._parts(packed)
        gQ, gR = self._parts(g)
        m, n = self.m, self.n
        if m >= n:
            return _qr_back(Q, R, gQ, gR), None, None, None
        from .movement import cat  # (movement's cat, used here only)
        U, V, gU, gV = R.narrow(-1, 0, m), R.narrow(-1, m, n - m), gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
        Y = Q @ V
        return cat([_qr_back(Q, U, gQ + Y @ gV.mT, gU), Q @ gV], -1), None, None, None


def _qr_back(Q, R, gQ, gR):
    M = R @ gR.mT - gQ.mT @ Q
    sym = M.tril() + M.tril(-1).mT
    return _tri(R.mT, gQ + Q @ sym, False, left=False)


def _qr(A, mode: str, op: str = "linalg.qr"):
    check_matrix(A, op, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    a = host(A)
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    out = LinalgQr.apply(A, q, r, mode)
    node = LinalgQr.__new__(LinalgQr)
    node.m, node.n, node.mode = A.shape[-2], A.shape[-1], mode
    Q, R = node._parts(out)
    return (A.new_zeros((0,)) if mode == "r" else Q), R


def _householder(A, tau, X, transpose: bool = False):
    """``H_1 H_2 ... H_k X`` (``transpose``: ``H_k ... H_1 X``) for the reflectors ``H_i = I - tau_i v_i v_i^T``
    stored below A's diagonal (``v_i``'s leading 1 implied), as LAPACK's orgqr/ormqr; composed of Tensor ops."""
    m = A.shape[-2]
    V = A.tril(-1) + wrap(A, np.eye(m, A.shape[-1]))
    order = range(tau.shape[-1]) if transpose else range(tau.shape[-1] - 1, -1, -1)
    for i in order:
        v = V.narrow(-1, i, 1)
        X = X - tau.narrow(-1, i, 1).unsqueeze(-1) * (v @ (v.mT @ X))
    return X


def _householder_product(A, tau, op="torch.linalg.householder_product"):
    _need_tensor(A, op, "input"), _need_tensor(tau, op, "tau")
    check_matrix(A, op, "input", square=False)
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{op}: tau dtype {tau.dtype.name} does not match input dtype {A.dtype.name}")
    return _householder(A, tau, _eye(A, m, tuple(A.shape[:-2])).narrow(-1, 0, n))


# ---- eigendecompositions -----------------------------------------------------------------------------------
class LinalgEigh(Function):
    """``(L, V)`` of a symmetric matrix, packed. PyTorch's backward: ``gA = V (diag(gL) + skew(V^T gV) / E) V^T``
    with ``E_ij = L_j - L_i``."""

    save_output = True

    def forward(self, A, w, v):
        return native(A, pack([w, v], tuple(A.shape[:-2])))

    def backward(self, g):
        (packed,) = self.saved_tensors
        n = int(round((-1 + math.sqrt(1 + 4 * packed.shape[-1])) / 2))
        L, V = unpack(packed, [(n,), (n, n)])
        gL, gV = unpack(g, [(n,), (n, n)])
        VhgV = V.mT @ gV
        inner = _skew_div(0.5 * (VhgV - VhgV.mT), L) + gL.diag_embed()
        return V @ (inner @ V.mT), None, None


class LinalgEig(Function):
    """``(L, V)`` of a general matrix with real eigenvalues, packed. PyTorch's backward: with ``VhgV = V^T gV``
    projected (its diagonal's share along V^T V taken out, as V's columns have norm 1),
    ``gA = V^-T (diag(gL) + VhgV / E) V^T``."""

    save_output = True

    def forward(self, A, w, v):
        return native(A, pack([w, v], tuple(A.shape[:-2])))

    def backward(self, g):
        (packed,) = self.saved_tensors
        n = int(round((-1 + math.sqrt(1 + 4 * packed.shape[-1])) / 2))
        L, V = unpack(packed, [(n,), (n, n)])
        gL, gV = unpack(g, [(n,), (n, n)])
        VhgV = V.mT @ gV
        VhgV = VhgV - V.mT @ (V * VhgV.diagonal(0, -2, -1).unsqueeze(-2))
        inner = _skew_div(VhgV, L) + gL.diag_embed()
        return _solve_raw(V.mT, inner @ V.mT), None, None


def _eigh(A, UPLO: str, op: str):
    check_matrix(A, op)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{op}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    a = host(A)
    try:
        w, v = np.linalg.eigh(a, UPLO=UPLO)
    except np.linalg.LinAlgError:
        from ._linalg_host import LinAlgError  # (raised only here)
        raise LinAlgError(f"{op}: The algorithm failed to converge because the input matrix is ill-conditioned or "
                          f"has too many repeated eigenvalues (or contains non-finite values).") from None
    out = LinalgEigh.apply(A, w, v)
    n = A.shape[-1]
    return unpack(out, [(n,), (n, n)])


def _eig(A, op: str):
    check_matrix(A, op)
    a = host(A)
    if not np.isfinite(a).all():
        from ._linalg_host import LinAlgError  # (raised only here)
        raise LinAlgError(f"{op}: The algorithm failed to converge because the input matrix contained non-finite "
                          f"values.")
    w, v = np.linalg.eig(a)
    if np.iscomplexobj(w):
        raise NotImplementedError(f"{op}: the matrix has complex eigenvalues (e.g. {w[np.iscomplex(w)].flat[0]}), "
                                  f"and tinygrad_like has no complex dtype; this function returns real results only "
                                  f"when every eigenvalue is real (for a symmetric matrix use linalg.eigh)")
    out = LinalgEig.apply(A, w, v)
    n = A.shape[-1]
    return unpack(out, [(n,), (n, n)])


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None, n: int | None = None,
           iK: Tensor | None = None, niter: int | None = None, tol: float | None = None, largest: bool | None = None,
           method: str | None = None, tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The ``k`` largest (``largest=False``: smallest) eigenpairs of the symmetric ``A x = E B x``, as torch.lobpcg:
    ``(E, X)``. Computed exactly, from a dense eigendecomposition (``linalg.eigh``, after a Cholesky of B), where
    torch iterates to ``tol``; the iteration controls (``X``, ``iK``, ``niter``, ``tol``, ``method``, ``tracker``, the
    ortho parameters) are accepted and checked, not needed. Differentiable (through eigh)."""
    _need_tensor(A, "lobpcg", "A")
    check_matrix(A, "lobpcg")
    m = A.shape[-1]
    if k is None:
        k = 1 if X is None else X.shape[-1]
    if n is None:
        n = k if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LPBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"lobpcg: method must be 'basic' or 'ortho', got {method!r}")
    largest = True if largest is None else largest
    if B is None:
        w, v = _eigh(A, "L", "lobpcg")
    else:
        from .solvers import _cholesky  # (solvers' Cholesky, used here only)
        Lb = _cholesky(B, False, "lobpcg", True)[0]
        C = _tri(Lb, _tri(Lb, A, False).mT, False)
        w, v = _eigh(0.5 * (C + C.mT), "L", "lobpcg")
        v = _tri(Lb.mT, v, True)
    pick = slice(m - k, m) if largest else slice(0, k)
    w, v = w.narrow(-1, pick.start, k), v.narrow(-1, pick.start, k)
    if largest:
        w, v = w.flip(-1), v.flip(-1)
    return w, v


# ---- pseudoinverse, rank and least squares ------------------------------------------------------------------
class LinalgPinv(Function):
    """The Moore-Penrose pseudoinverse. PyTorch's ``pinv_backward`` (for a gradient ``g`` of ``A^+``)."""

    save_output = True

    def forward(self, A, p):
        if _records(A):
            self.save_for_backward(A)
        return native(A, p)

    def backward(self, g):
        A, P = self.saved_tensors
        m, n = A.shape[-2], A.shape[-1]
        Ph, gh = P.mT, g.mT
        if m <= n:
            K = gh @ P
            KPh = K @ Ph
            return -(P @ K).mT + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A), None
        K = P @ gh
        PhK = Ph @ K
        return -(K @ P).mT + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A, None


def _tolerances(A, atol, rtol, sizes_max: int):
    """torch's thresholds: ``max(atol, rtol * largest singular value)``, per matrix; ``rtol`` defaults to
    ``eps * max(m, n)`` when neither is given, and to 0 when only ``atol`` (> 0) is."""
    def value(t):
        if t is None:
            return None
        return host(t) if isinstance(t, TensorBase) else np.asarray(float(t))
    a, r = value(atol), value(rtol)
    if r is None:
        r = np.asarray(0.0) if a is not None and (np.asarray(a) > 0).all() else \
            np.asarray(np.finfo(A.dtype.np).eps * sizes_max)
    return np.asarray(0.0) if a is None else a, r


def _spectrum(a: np.ndarray, hermitian: bool):
    """The singular values (``hermitian``: |eigenvalues|), descending, and what builds the pseudoinverse."""
    try:
        if hermitian:
            w, v = np.linalg.eigh(a)
            return np.abs(w), (w, v)
        u, s, vh = np.linalg.svd(a, full_matrices=False)
    except np.linalg.LinAlgError:
        from ._linalg_host import LinAlgError  # (raised only here)
        raise LinAlgError("linalg.svd: The algorithm failed to converge because the input matrix contained "
                          "non-finite values.") from None
    return s, (u, s, vh)


def _pinv(A, atol, rtol, hermitian: bool, op: str = "linalg.pinv"):
    check_matrix(A, op, square=hermitian)
    m, n = A.shape[-2], A.shape[-1]
    a = host(A)
    at, rt = _tolerances(A, atol, rtol, max(m, n))
    if m == 0 or n == 0:
        return LinalgPinv.apply(A, np.zeros(a.shape[:-2] + (n, m)))
    s, parts = _spectrum(a, hermitian)
    smax = s.max(-1, keepdims=True)
    keep = s > np.maximum(np.asarray(at)[..., None], np.asarray(rt)[..., None] * smax)
    if hermitian:
        w, v = parts
        winv = np.where(keep, 1 / np.where(keep, w, 1), 0)
        p = (v * winv[..., None, :]) @ np.swapaxes(v, -1, -2)
    else:
        u, s, vh = parts
        sinv = np.where(keep, 1 / np.where(keep, s, 1), 0)
        p = np.swapaxes(vh, -1, -2) @ (sinv[..., None] * np.swapaxes(u, -1, -2))
    return LinalgPinv.apply(A, p)


def _matrix_rank(A, atol, rtol, hermitian: bool, op: str = "linalg.matrix_rank"):
    check_matrix(A, op, square=hermitian)
    m, n = A.shape[-2], A.shape[-1]
    a = host(A)
    if m == 0 or n == 0:
        return wrap(A, np.zeros(a.shape[:-2], np.int64), dtypes.int64)
    at, rt = _tolerances(A, atol, rtol, max(m, n))
    s, _ = _spectrum(a, hermitian)
    tol = np.maximum(np.asarray(at)[..., None], np.asarray(rt)[..., None] * s.max(-1, keepdims=True))
    return wrap(A, (s > tol).sum(-1), dtypes.int64)


def _lstsq(A, B, rcond, driver):
    op = "torch.linalg.lstsq"
    check_matrix(A, "linalg.lstsq", square=False)
    _need_tensor(B, "linalg.lstsq", "B")
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{op}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if B.dtype is not A.dtype:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got input's dtype "
                           f"{A.dtype.name} and other's dtype {B.dtype.name}")
    vector = B.ndim == A.ndim - 1
    if vector:
        B = B.unsqueeze(-1)
    if B.ndim < 2:
        raise RuntimeError(f"{op}: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                           f"other.dim()) <= 1")
    m, n = A.shape[-2], A.shape[-1]
    if B.shape[-2] != m:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2)")
    rtol = rcond if rcond is not None and rcond > 0 else None
    X = _pinv(A, None, rtol, False, "linalg.lstsq") @ B
    a = host(A)
    empty = A.new_zeros((0,))
    rank = wrap(A, np.zeros((0,)), dtypes.int64)
    sv = empty
    full = True
    if driver != "gels":
        rank = _matrix_rank(A, None, rtol, False, "linalg.lstsq")
        full = bool((host(rank) == min(m, n)).all())
    if driver in ("gelsd", "gelss"):
        sv = wrap(A, np.linalg.svd(a, compute_uv=False))
    residuals = empty
    if m > n and driver != "gelsy" and full:
        residuals = ((A @ X - B) ** 2).sum(-2)
    return linalg_lstsq_result(X.squeeze(-1) if vector else X, residuals.squeeze(-1) if vector and residuals.ndim
                               else residuals, rank, sv)


# ---- matrix exponential ------------------------------------------------------------------------------------
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)


def _matrix_exp(A, op: str = "linalg.matrix_exp"):
    """Higham's (2005) scaling and squaring with the degree-13 Pade approximant, composed of Tensor ops (its
    gradient and higher ones are theirs): ``exp(A) = r(A / 2^s)^(2^s)``, s from A's 1-norm (a constant)."""
    _need_tensor(A, op, "A")
    check_matrix(A, op)
    n = A.shape[-1]
    if n == 0 or A.numel() == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    norm = float(np.abs(host(A)).sum(-2).max())
    s = max(0, int(math.ceil(math.log2(norm / 5.371920351148152)))) if norm > 0 else 0
    if s:
        A = A / float(2 ** s)
    b = _PADE13
    ident = _eye(A, n, tuple(A.shape[:-2]))
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    X = _solve_raw(V - U, V + U)
    for _ in range(s):
        X = X @ X
    return X


# ---- Vandermonde ------------------------------------------------------------------------------------------
def _vander(x, N, op: str):
    """``[x^0, x^1, ..., x^(N-1)]`` along a new last dim, as a running product (its gradient is cumprod's, finite
    at 0)."""
    n = x.shape[-1] if x.ndim else 1
    N = n if N is None else N
    if N < 0:
        raise RuntimeError(f"{op}: N must be non-negative.")
    if N == 0:
        return x.new_zeros(tuple(x.shape) + (0,))
    from .movement import cat  # (movement's cat, used here only)
    ones = x.new_ones(tuple(x.shape) + (1,))
    if N == 1:
        return ones
    if x.dtype is dtypes.bool_:
        x = x.long()
    return cat([ones, x.unsqueeze(-1).expand(tuple(x.shape) + (N - 1,))], -1).cumprod(-1)


class DecompositionsMixin:
    """Tensor methods: QR and the Householder products, the pseudoinverse, the matrix exponential."""

    __slots__ = ()

    def qr(self, some: bool = True):
        """The deprecated ``torch.qr``: ``linalg.qr(A, 'reduced' if some else 'complete')``."""
        return qr_result(*_qr(self, "reduced" if some else "complete"))

    def geqrf(self):
        """LAPACK's geqrf: R above the diagonal, the Householder vectors below it, and their scales ``tau``
        (no gradient, as in torch)."""
        check_matrix(self, "geqrf", "input", square=False)
        h, tau = np.linalg.qr(host(self), mode="raw")
        return geqrf_result(wrap(self, np.swapaxes(h, -1, -2)), wrap(self, tau))

    def orgqr(self, input2) -> Tensor:
        """``Q`` (m x n) from geqrf's ``(a, tau)``: ``linalg.householder_product``."""
        return _householder_product(self, input2, "orgqr")

    def ormqr(self, input2, input3, left: bool = True, transpose: bool = False) -> Tensor:
        """``Q C``, ``Q^T C``, ``C Q`` or ``C Q^T`` for geqrf's Q (``self``, ``input2`` = tau), ``input3`` = C."""
        _need_tensor(input2, "ormqr", "tau"), _need_tensor(input3, "ormqr", "other")
        check_matrix(self, "ormqr", "input", square=False)
        m = self.shape[-2]
        if (input3.shape[-2] if left else input3.shape[-1]) != m:
            raise RuntimeError(f"torch.ormqr: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]")
        if input2.shape[-1] > m:
            raise RuntimeError("torch.ormqr: input.shape[-2] must be greater than or equal to tau.shape[-1]")
        if left:
            return _householder(self, input2, input3, transpose)
        return _householder(self, input2, input3.mT, not transpose).mT

    def pinverse(self, rcond: float = 1e-15) -> Tensor:
        """``linalg.pinv(A, rtol=rcond)``."""
        return _pinv(self, None, rcond, False, "pinverse")

    def matrix_exp(self) -> Tensor:
        return _matrix_exp(self)


# ---- free functions (tl.<name>) -------------------------------------------------------------------------
def qr(input: Tensor, some: bool = True, *, out=None):
    if out is not None:
        raise NotImplementedError("qr: out= is not supported; assign the result instead")
    _need_tensor(input, "qr", "input")
    return input.qr(some)


def geqrf(input: Tensor, *, out=None):
    if out is not None:
        raise NotImplementedError("geqrf: out= is not supported; assign the result instead")
    _need_tensor(input, "geqrf", "input")
    return input.geqrf()


def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    _need_tensor(input, "orgqr", "input")
    return input.orgqr(tau)


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False, *, out=None):
    if out is not None:
        raise NotImplementedError("ormqr: out= is not supported; assign the result instead")
    _need_tensor(input, "ormqr", "input")
    return input.ormqr(tau, other, left, transpose)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    _need_tensor(input, "pinverse", "input")
    return input.pinverse(rcond)


def matrix_exp(A: Tensor) -> Tensor:
    _need_tensor(A, "matrix_exp", "A")
    return A.matrix_exp()


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """``torch.vander``: the columns ``x^(N-1), ..., x, 1`` of a 1-D ``x`` (``increasing``: the other way)."""
    _need_tensor(x, "vander", "x")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    out = _vander(x, N, "vander")
    return out if increasing else out.flip(-1)
