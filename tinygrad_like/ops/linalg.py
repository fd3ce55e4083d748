"""Linear algebra ops: fused ``beta * input + alpha * (a @ b)``, diagonals (a view and its embedding), vector norms,
cross products.

The plain products (``mm``, ``bmm``, ``mv``, ``dot``) are :class:`~.reduce.Matmul` after their own shape checks, and
``einsum``/``tensordot``/``outer``/``kron``/``cdist`` compose existing ops (see ``mixin/linalg.py`` and
``functions_linalg.py``), so their gradients are those ops' gradients.
"""

from __future__ import annotations

import math

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import Function
from ..layout import Layout
from ._util import rounded
from .elementwise import where
from .movement import ViewFunction

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class AddMatmul(Function):
    """``beta * input + alpha * (mat1 @ mat2)``: ``addmm``, ``addmv`` (``mat2`` a vector) and ``baddbmm``; with
    ``batch_sum`` the batch of products is summed first (``addbmm``). ``input`` broadcasts to the product's shape
    (checked by the caller). With ``beta == 0`` the input's values are not read, so nan and inf in it do not
    propagate (as in torch); its gradient is then zero."""

    __slots__ = ("beta", "alpha", "batch_sum", "vec")

    def forward(self, input, mat1, mat2, beta, alpha, batch_sum):
        self.beta, self.alpha, self.batch_sum, self.vec = beta, alpha, batch_sum, mat2.ndim == 1
        be = input._dev.backend
        p = be.matmul(mat1._x, mat2._x)
        if batch_sum:
            p = be.sum(p, 0, False)
        if alpha != 1:
            p = be.mul(p, alpha)
        if _grad_mode.enabled:  # the gradient of mat1 reads mat2 and that of mat2 reads mat1: keep only those
            r1, r2 = mat1.requires_grad, mat2.requires_grad
            if r1 or r2:
                self.save_for_backward(mat1 if r2 else None, mat2 if r1 else None)
        if beta == 0:
            return rounded(input, p)  # (bfloat16: NumPy's product is float32; rounded once, at the end)
        return rounded(input, be.add(input._x if beta == 1 else be.mul(input._x, beta), p))

    def backward(self, g):
        m1, m2 = self.saved_tensors
        gi = g1 = g2 = None
        if self.next[0] is not None:
            gi = g if self.beta == 1 else g * self.beta
        gp = g if self.alpha == 1 else g * self.alpha  # (addbmm: a matrix, broadcast over the batch below)
        if self.vec:
            if m2 is not None:
                g1 = gp.unsqueeze(-1) @ m2.unsqueeze(0)
            if m1 is not None:
                g2 = m1.mT @ gp
        else:
            if m2 is not None:
                g1 = gp @ m2.mT
            if m1 is not None:
                g2 = m1.mT @ gp
        return gi, g1, g2, None, None, None


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
class LinAlgError(RuntimeError):
    """A matrix a decomposition can not take (non-finite entries), as ``torch.linalg.LinAlgError``."""


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
        from ..creation import eye
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
