"""``tl.linalg``: the part of ``torch.linalg`` this project computes (norms, cross and dot products, diagonals,
matrix products, the singular value decomposition and what is built on it). Other decompositions and the solvers
(``inv``, ``solve``, ``qr``...) are not here.

>>> import tinygrad_like as tl
>>> tl.linalg.vector_norm(tl.tensor([3.0, 4.0])).item()
5.0
"""

from __future__ import annotations

from .layout import normalize_dim
from .ops.linalg import LinAlgError, _cross, _matrix_norm, _svd, _svdvals, _vector_norm
from .ops.products import _need_tensor
from .ops.reduce import matmul
from .tensor import Tensor

__all__ = ["norm", "vector_norm", "matrix_norm", "cross", "vecdot", "matmul", "diagonal", "multi_dot",
           "matrix_power", "svd", "svdvals", "cond", "LinAlgError"]


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
    """``A @ A @ ... @ A`` (``n`` >= 0 factors, by repeated squaring; ``n = 0``: the identity). Negative ``n`` needs an
    inverse, which this project does not compute."""
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
    """The condition number in the 2-norm (``p`` None or 2: largest / smallest singular value; -2: the inverse), of
    the matrices in the last two dims (any shape: no inverse is needed). The other orders need an inverse, which
    this project does not compute: NotImplementedError (after torch's square-matrix check)."""
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
        raise NotImplementedError(f"linalg.cond: ord={p!r} needs the inverse of A, which tinygrad_like does not "
                                  f"compute; use p=None (2), or -2")
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
