"""What the decompositions and solvers share: their argument checks (torch's messages), the trip of a tensor's
values to the host and back (NumPy's LAPACK computes every factorization, on every device, as the SVD does), the
factorizations NumPy lacks (LU with partial pivoting, triangular solves, Bunch-Kaufman LDL^T), and packing several
results of one node into one output."""

from __future__ import annotations

from math import prod

import numpy as np

from .. import dtypes
from .products import _need_tensor


class LinAlgError(RuntimeError):
    """A matrix a decomposition or solver can not take (singular, not positive-definite, non-finite entries), as
    ``torch.linalg.LinAlgError``."""


LinAlgError.__module__ = "tinygrad_like.linalg"  # (where users meet it: tracebacks name it tl.linalg.LinAlgError)


# ---- argument checks ------------------------------------------------------------------------------
def check_matrix(A, op: str, name: str = "A", square: bool = True) -> None:
    """torch's checks of a linalg input: a tensor of at least 2 dims, float32/float64, square when asked."""
    _need_tensor(A, op, name)
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor {name} must have at least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {A.dtype.name}")
    if A.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"{op}: Low precision dtypes not supported. Got {A.dtype.name}")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: {name} must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def check_same(A, B, op: str) -> None:
    """``B`` shares ``A``'s dtype and device (torch does not promote in its solvers)."""
    if B.dtype is not A.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type {A.dtype.name} and B "
                           f"of type {B.dtype.name} instead")
    if B._dev is not A._dev:
        raise RuntimeError(f"{op}: Expected all tensors to be on the same device, but found A on {A._dev} and B on "
                           f"{B._dev}")


def no_out(out, op: str) -> None:
    if out is not None:
        raise NotImplementedError(f"{op}: out= is not supported; assign the result instead")


def batch_message(op: str, info: np.ndarray, what) -> str:
    """torch's message for the first failing matrix (``info`` > 0): ``what(info)`` says what failed, prefixed with
    ``(Batch element i): `` for a batch."""
    flat = info.reshape(-1)
    i = int(np.argmax(flat > 0))
    prefix = f"(Batch element {i}): " if info.ndim else ""
    return f"{op}: {prefix}{what(int(flat[i]))}"


# ---- the host and back ----------------------------------------------------------------------------
def host(t) -> np.ndarray:
    """``t``'s values as a NumPy array (a copy where the device is not the CPU)."""
    return t._dev.backend.to_numpy(t._x)


def wrap(like, arr, dtype=None):
    """A new tensor on ``like``'s device holding ``arr`` (in ``like``'s dtype, or ``dtype``), without history."""
    dt = like.dtype if dtype is None else dtype
    return like._wrap(like._dev.backend.from_numpy(_c(arr, dt)), like._dev)


def native(like, arr):
    """``arr`` as the backend's native array in ``like``'s dtype (what a node's forward returns)."""
    return like._dev.backend.from_numpy(_c(arr, like.dtype))


def _c(arr, dt) -> np.ndarray:
    """``arr`` as a C-contiguous array of ``dt`` (0-d stays 0-d: ``np.ascontiguousarray`` would make it 1-d)."""
    a = np.asarray(arr, dtype=dt.np)
    return a if a.flags.c_contiguous else a.copy(order="C")


def pack(arrs, bat: tuple) -> np.ndarray:
    """Several per-matrix results as one array: each flattened into the last dim, one after the other."""
    return np.concatenate([np.asarray(a).reshape(bat + (-1,)) for a in arrs], -1)


def unpack(packed, shapes) -> list:
    """The views of a :func:`pack`-ed tensor (or of its gradient), one per trailing shape in ``shapes``."""
    bat = tuple(packed.shape[:-1])
    out, at = [], 0
    for s in shapes:
        n = prod(s)
        out.append(packed.narrow(-1, at, n).reshape(bat + tuple(s)))
        at += n
    return out


# ---- factorizations NumPy lacks -------------------------------------------------------------------------
def lu_factor(a: np.ndarray, pivot: bool = True):
    """LAPACK getrf's result for the matrices in ``a``'s last two dims: ``(LU, pivots, info)``, LU packed (L's
    unit diagonal implied), pivots 1-based (row i was swapped with row pivots[i]), info the 1-based index of the first
    zero pivot (0: none). Partial pivoting picks the first entry of largest magnitude, as LAPACK's idamax; a zero
    column is left as it is and elimination goes on, as LAPACK does."""
    m, n = a.shape[-2:]
    k = min(m, n)
    bat = a.shape[:-2]
    w = np.array(a, dtype=a.dtype, copy=True).reshape((-1, m, n))
    nb = w.shape[0]
    piv = np.tile(np.arange(1, k + 1, dtype=np.int32), (nb, 1))
    info = np.zeros(nb, np.int32)
    r = np.arange(nb)
    for j in range(k):
        if pivot:
            p = j + np.argmax(np.abs(w[:, j:, j]), axis=1)
            piv[:, j] = p + 1
            row = w[r, j].copy()
            w[r, j] = w[r, p]
            w[r, p] = row
        d = w[:, j, j]
        zero = d == 0
        info[(info == 0) & zero] = j + 1
        if j + 1 < m:
            w[:, j + 1:, j] /= np.where(zero, 1, d)[:, None]
            w[:, j + 1:, j + 1:] -= w[:, j + 1:, j:j + 1] * w[:, j:j + 1, j + 1:]
    return w.reshape(a.shape), piv.reshape(bat + (k,)), info.reshape(bat)


def permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """The row order ``perm`` with ``P^T A = A[perm]`` for LAPACK's pivots (1-based sequential swaps)."""
    bat = piv.shape[:-1]
    p = piv.reshape((-1, piv.shape[-1])).astype(np.int64) - 1
    perm = np.tile(np.arange(m), (p.shape[0], 1))
    r = np.arange(p.shape[0])
    for i in range(p.shape[1]):
        a, b = perm[:, i].copy(), perm[r, p[:, i]].copy()
        perm[:, i], perm[r, p[:, i]] = b, a
    return perm.reshape(bat + (m,))


def solve_triangular(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """``X`` with ``A X = B`` for triangular ``A`` (only that triangle read; ``unit``: its diagonal taken as 1),
    by substitution as LAPACK's trsm: a zero on the diagonal gives inf/nan, not an error (as torch)."""
    n = a.shape[-1]
    x = np.array(np.broadcast_to(b, np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]), copy=True)
    x = x.astype(np.result_type(a, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in order:
            rest = slice(i + 1, n) if upper else slice(0, i)
            if (upper and i + 1 < n) or (not upper and i > 0):
                x[..., i, :] -= np.einsum("...j,...jk->...k", a[..., i, rest], x[..., rest, :])
            if not unit:
                x[..., i, :] /= a[..., i, i][..., None]
    return x


def ldl_factor(a: np.ndarray):
    """LAPACK sytf2's Bunch-Kaufman LDL^T of the lower triangle (uplo 'L'): ``(LD, pivots, info)`` in LAPACK's
    packing (1x1 pivots positive, 2x2 pivots both negative: -(the swapped row), 1-based)."""
    n = a.shape[-1]
    bat = a.shape[:-2]
    ws = np.array(a, copy=True).reshape((-1, n, n))
    pivs = np.zeros((ws.shape[0], n), np.int32)
    infos = np.zeros(ws.shape[0], np.int32)
    alpha = (1 + np.sqrt(17)) / 8
    for b in range(ws.shape[0]):
        w = np.tril(ws[b])
        w = w + np.tril(w, -1).T  # a full symmetric copy, kept symmetric as the lower triangle is updated
        piv, info, k = pivs[b], 0, 0
        while k < n:
            kstep = 1
            absakk = abs(w[k, k])
            if k < n - 1:
                imax = k + 1 + int(np.argmax(np.abs(w[k + 1:, k])))
                colmax = abs(w[imax, k])
            else:
                imax, colmax = k, 0.0
            if max(absakk, colmax) == 0 or np.isnan(absakk):
                if info == 0:
                    info = k + 1
                kp = k
            else:
                if absakk >= alpha * colmax:
                    kp = k
                else:
                    rowmax = np.max(np.abs(w[imax, k:imax])) if imax > k else 0.0
                    if imax < n - 1:
                        rowmax = max(rowmax, np.max(np.abs(w[imax + 1:, imax])))
                    if absakk >= alpha * colmax * (colmax / rowmax):
                        kp = k
                    elif abs(w[imax, imax]) >= alpha * rowmax:
                        kp = imax
                    else:
                        kp, kstep = imax, 2
                kk = k + kstep - 1
                if kp != kk:  # swap rows and columns kk and kp of the trailing matrix
                    idx = np.arange(n)
                    idx[kk], idx[kp] = kp, kk
                    sub = np.arange(k, n)
                    w[np.ix_(sub, sub)] = w[np.ix_(idx[sub], idx[sub])]  # (sytf2 leaves the finished columns)
                if kstep == 1:
                    d = w[k, k]
                    col = w[k + 1:, k] / d
                    w[k + 1:, k + 1:] -= np.outer(col, w[k + 1:, k])
                    w[k + 1:, k] = col
                    w[k, k + 1:] = col
                elif k < n - 2:
                    d = w[k:k + 2, k:k + 2]
                    rest = w[k + 2:, k:k + 2]
                    lk = rest @ np.linalg.inv(d)
                    w[k + 2:, k + 2:] -= lk @ rest.T
                    w[k + 2:, k:k + 2] = lk
                    w[k:k + 2, k + 2:] = lk.T
            if kstep == 1:
                piv[k] = kp + 1
            else:
                piv[k] = piv[k + 1] = -(kp + 1)
            k += kstep
        infos[b] = info
        ws[b] = np.tril(w)
    return ws.reshape(a.shape), pivs.reshape(bat + (n,)), infos.reshape(bat)


def ldl_solve(ld: np.ndarray, piv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LAPACK sytrs (uplo 'L'): ``X`` with ``A X = B`` from :func:`ldl_factor`'s result."""
    n = ld.shape[-1]
    bat = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2], piv.shape[:-1])
    lds = np.broadcast_to(ld, bat + ld.shape[-2:]).reshape((-1, n, n))
    ps = np.broadcast_to(piv, bat + piv.shape[-1:]).reshape((-1, n))
    xs = np.array(np.broadcast_to(b, bat + b.shape[-2:]), dtype=np.result_type(ld, b)).reshape((-1,) + b.shape[-2:])
    for a, p, x in zip(lds, ps, xs):
        k = 0
        while k < n:
            if p[k] > 0:
                kp = p[k] - 1
                x[[k, kp]] = x[[kp, k]]
                x[k + 1:] -= np.outer(a[k + 1:, k], x[k])
                x[k] /= a[k, k]
                k += 1
            else:
                kp = -p[k] - 1
                x[[k + 1, kp]] = x[[kp, k + 1]]
                x[k + 2:] -= np.outer(a[k + 2:, k], x[k]) + np.outer(a[k + 2:, k + 1], x[k + 1])
                d = np.array([[a[k, k], a[k + 1, k]], [a[k + 1, k], a[k + 1, k + 1]]])
                x[k:k + 2] = np.linalg.solve(d, x[k:k + 2])
                k += 2
        k = n - 1
        while k >= 0:
            if p[k] > 0:
                x[k] -= a[k + 1:, k] @ x[k + 1:]
                kp = p[k] - 1
                x[[k, kp]] = x[[kp, k]]
                k -= 1
            else:
                x[k] -= a[k + 1:, k] @ x[k + 1:]
                x[k - 1] -= a[k + 1:, k - 1] @ x[k + 1:]
                kp = -p[k] - 1
                x[[k, kp]] = x[[kp, k]]
                k -= 2
    return xs.reshape(bat + b.shape[-2:])
