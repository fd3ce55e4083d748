"""Linear algebra ops: fused ``beta * input + alpha * (a @ b)``, diagonals (a view and its embedding), vector norms,
cross products.

The plain products (``mm``, ``bmm``, ``mv``, ``dot``) are :class:`~.reduce.Matmul` after their own shape checks, and
``einsum``/``tensordot``/``outer``/``kron``/``cdist`` compose existing ops (see ``mixin/linalg.py`` and
``functions_linalg.py``), so their gradients are those ops' gradients.
"""

from __future__ import annotations

import math

from ..autograd import grad_mode
from ..autograd.function import Function
from ..layout import Layout
from .elementwise import where
from .movement import ViewFunction

_grad = grad_mode.state  # this thread's grad mode (per thread, as in torch)


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
        if _grad.enabled:  # the gradient of mat1 reads mat2 and that of mat2 reads mat1: keep only those
            r1, r2 = mat1.requires_grad, mat2.requires_grad
            if r1 or r2:
                self.save_for_backward(mat1 if r2 else None, mat2 if r1 else None)
        if beta == 0:
            return p
        return be.add(input._x if beta == 1 else be.mul(input._x, beta), p)

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
        if ord != 0 and _grad.enabled and x.requires_grad:
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
        if _grad.enabled:
            ra, rb = a.requires_grad, b.requires_grad
            if ra or rb:
                self.save_for_backward(a if rb else None, b if ra else None)
        return a._dev.backend.cross(a._x, b._x, dim)

    def backward(self, g):
        a, b = self.saved_tensors
        return (None if b is None else Cross.apply(b, g, self.dim),
                None if a is None else Cross.apply(g, a, self.dim), None)
