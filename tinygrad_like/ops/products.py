"""Matrix and tensor products: ``mm``, ``bmm``, ``mv``, ``dot``/``vdot``, ``inner``, ``outer``/``ger``, ``kron``,
the fused ``beta * input + alpha * product`` family (``addmm``, ``addmv``, ``baddbmm``, ``addbmm`` and their in-place
spellings), ``matrix_power``, ``tensordot`` and ``einsum``.

The plain products are :class:`~.reduce.Matmul` after their own shape checks; ``inner``, ``outer``, ``kron``,
``matrix_power``, ``tensordot`` and ``einsum`` compose existing ops (views, sums, one batched matmul per pair of
operands), so their gradients (and higher derivatives) are those ops' own. Only the fused products have a node of
their own, :class:`AddMatmul`.

>>> import tinygrad_like as tl
>>> a, b = tl.ones(2, 3), tl.ones(3, 4)
>>> tl.einsum("ij,jk->ik", a, b).shape, tl.tensordot(a, b, dims=1).shape
(tl.Size([2, 4]), tl.Size([2, 4]))
"""

from __future__ import annotations

from functools import lru_cache
from math import prod
from typing import TYPE_CHECKING

from .. import dtypes
from ..autograd import grad_mode
from ..autograd.function import Function
from ..layout import broadcast_shapes, normalize_dim
from ..tensor_base import TensorBase
from ._util import check_same_device, free_functions, rounded
from .elementwise import where
from .reduce import Matmul

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = ["mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "kron", "addmm", "addmv", "addmv_", "baddbmm",
           "addbmm", "addr", "chain_matmul", "einsum", "tensordot", "matrix_power"]


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


# ---- argument checks ----------------------------------------------------------------------------------
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
    return Matmul.apply(a, b)


def _addmul(input, m1, m2, beta, alpha, batch_sum: bool, shape: tuple, op: str):
    _need_tensor(input, op, "input")
    _same_dtype(op, ("input", input), ("first factor", m1), ("second factor", m2))
    _no_bool(op, input)
    for t in (m1, m2):
        if t._dev is not input._dev:
            check_same_device(input, t, op)
    _fits(input, shape, op)
    beta, alpha = _scalars(input.dtype, beta, alpha)
    return AddMatmul.apply(input, m1, m2, beta, alpha, batch_sum)


class ProductsMixin:
    """Tensor methods: mm/bmm/mv, dot/vdot/inner/outer/kron, addmm and its family, matrix_power."""

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
        return Matmul.apply(self, mat2)

    def bmm(self, mat2) -> Tensor:
        _need_tensor(mat2, "bmm", "mat2")
        _check_bmm(self, mat2, "bmm")
        _same_dtype("bmm", ("self", self), ("mat2", mat2))
        _no_bool("bmm", self)
        return Matmul.apply(self, mat2)

    def mv(self, vec) -> Tensor:
        _need_tensor(vec, "mv", "vec")
        _check_mv(self, vec, "mv")
        _same_dtype("mv", ("self", self), ("vec", vec))
        _no_bool("mv", self)
        return Matmul.apply(self, vec)

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

    def addr(self, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
        """``beta * self + alpha * outer(vec1, vec2)`` (``beta == 0``: ``self``'s values are not read)."""
        _need_tensor(vec1, "addr", "vec1"), _need_tensor(vec2, "addr", "vec2")
        for name, t in (("vec1", vec1), ("vec2", vec2)):
            if t.ndim != 1:
                raise RuntimeError(f"addr: Expected 1-d argument {name}, but got {t.ndim}-d")
        _same_dtype("addr", ("input", self), ("vec1", vec1), ("vec2", vec2))
        shape = (vec1.shape[0], vec2.shape[0])
        _fits(self, shape, "addr")
        if self.dtype is dtypes.bool_:  # (torch: beta and alpha are truth values, the product a logical and)
            prod_ = vec1.unsqueeze(1) & vec2 if alpha else vec1.new_zeros(shape)
            return (self.expand(shape) | prod_) if beta else prod_
        beta, alpha = _scalars(self.dtype, beta, alpha)
        p = vec1.unsqueeze(1) * vec2
        p = p if alpha == 1 else p * alpha
        if beta == 0:  # (nan and inf in self do not propagate; its gradient is zeros, as torch's)
            return p + where(self.isfinite(), self, 0.0) * 0 if self.requires_grad else p.clone()
        return (self if beta == 1 else self * beta) + p

    def addr_(self, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
        return self._add_product_("addr_", self.addr, vec1, vec2, beta, alpha)

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
        """``A @ A @ ... @ A`` (``|n|`` factors, by repeated squaring; ``n = 0``: the identity; negative ``n``: of
        ``A``'s inverse)."""
        A = self
        if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
            raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                               f"{A.shape[-2] if A.ndim >= 2 else A.ndim} by "
                               f"{A.shape[-1] if A.ndim >= 1 else 0} matrices")
        if n < 0:
            from .solvers import _inv  # (the solvers build on the products: a module-level import is a cycle)
            A, n = _inv(A, "linalg.inv", True)[0], -n
        if n == 0:
            from ..creation import eye  # (creation sits above the ops: a module-level import would be a cycle)
            return eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape).clone()
        result, base = None, A
        while n:
            if n & 1:
                result = base if result is None else result @ base
            n >>= 1
            if n:
                base = base @ base
        return result if result is not A else A.clone()


# ---- free functions (tl.<name>) ---------------------------------------------------------------------
(mm, bmm, mv, dot, vdot, inner, outer, kron, addmm, addmv, addmv_, baddbmm, addbmm, addr,
 matrix_power) = free_functions(ProductsMixin, "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "kron", "addmm",
                                "addmv", "addmv_", "baddbmm", "addbmm", "addr", "matrix_power")


def chain_matmul(*matrices, out=None) -> Tensor:
    """The deprecated ``torch.chain_matmul`` (it warns, as torch): the product of 2-D matrices, left to right
    (one matrix: itself)."""
    import warnings  # (used only by this deprecated function)

    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", UserWarning, stacklevel=2)
    if out is not None:
        raise NotImplementedError("chain_matmul: out= is not supported; assign the result instead")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, t in enumerate(matrices):
        _need_tensor(t, "chain_matmul", f"matrices[{i}]")
        if t.ndim != 2:
            raise RuntimeError(f"chain_matmul(): Tensor dimension is {t.ndim}, expected 2 instead.")
    result = matrices[0]
    if len(matrices) == 1:
        return result.clone()
    for t in matrices[1:]:
        result = result.mm(t)
    return result
ger = outer


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """Contract ``a``'s dims ``dims[0]`` with ``b``'s ``dims[1]`` (an int ``n``: ``a``'s last ``n`` with ``b``'s
    first ``n``); the result has ``a``'s remaining dims, then ``b``'s. One permute, reshape and matmul each."""
    if out is not None:
        raise NotImplementedError("tensordot: out= is not supported; assign the result instead")
    _need_tensor(a, "tensordot", "a"), _need_tensor(b, "tensordot", "b")
    if isinstance(dims, TensorBase):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))
    else:
        try:
            da, db = dims
        except (TypeError, ValueError):
            raise TypeError(f"tensordot(): dims must be an int or a pair of lists of dims, got {dims!r}") from None
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"both inputs should have same dtype (got {a.dtype.name} and {b.dtype.name})")
    na = [normalize_dim(d, a.ndim) for d in da]
    nb = [normalize_dim(d, b.ndim) for d in db]
    for n in (na, nb):
        seen = set()
        for d in n:
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
    for d0, d1, i, j in zip(da, db, na, nb):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[i]} in dim {d0} "
                               f"and second has size {b.shape[j]} in dim {d1}")
    free_a = [d for d in range(a.ndim) if d not in na]
    free_b = [d for d in range(b.ndim) if d not in nb]
    sa = tuple(a.shape[d] for d in free_a)
    sb = tuple(b.shape[d] for d in free_b)
    k = prod(a.shape[d] for d in na)
    am = a.permute(free_a + na).reshape(prod(sa), k)
    bm = b.permute(nb + free_b).reshape(k, prod(sb))
    return (am @ bm).reshape(sa + sb)


# ---- einsum ---------------------------------------------------------------------------------------
_ELL = "..."


def _parse(eq: str):
    """``eq`` -> (input terms, output term or None); a term is a list of letters and at most one ``...``."""
    terms: list = [[]]
    out = None
    cur, ell, i = terms[0], False, 0
    while i < len(eq):
        c = eq[i]
        if c == " ":
            i += 1
        elif c == ".":
            where = "the output" if out is not None else f"operand {len(terms) - 1}"
            if ell:
                raise RuntimeError(f"einsum(): found '.' for {where} for which an ellipsis was already found")
            if eq[i:i + 3] != _ELL:
                raise RuntimeError(f"einsum(): found '.' for {where} that is not part of any ellipsis")
            cur.append(_ELL)
            ell, i = True, i + 3
        elif c == "," and out is None:
            terms.append([])
            cur, ell, i = terms[-1], False, i + 1
        elif c == "-" and eq[i:i + 2] == "->" and out is None:
            out = []
            cur, ell, i = out, False, i + 2
        elif c.isascii() and c.isalpha():
            cur.append(c)
            i += 1
        else:
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, subscripts "
                               f"must be in [a-zA-Z]")
    return terms, out


def _sublist_equation(args) -> tuple:
    """einsum's sublist format ``(op0, [0, 1], op1, [1, 2], [0, 2])`` -> (equation, operands)."""
    def term(sub) -> str:
        s = ""
        for v in sub:
            if v is Ellipsis:
                s += _ELL
            elif isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 52:
                s += chr(ord("A") + v) if v < 26 else chr(ord("a") + v - 26)
            else:
                raise ValueError(f"einsum(): expected subscript to be within the range [0, 52), but got {v!r}")
        return s
    ops, terms = list(args[0::2]), [term(s) for s in args[1::2]]
    out = None
    if len(ops) > len(terms):  # a trailing output sublist
        out = ops.pop()
        if isinstance(out, TensorBase):
            raise ValueError("einsum(): the sublist format needs a subscripts list after each operand")
        out = term(out)
    eq = ",".join(terms) + ("" if out is None else "->" + out)
    return eq, ops


def einsum(*args) -> Tensor:
    """Einstein summation, as ``torch.einsum``: ``einsum("ij,jk->ik", a, b)``, ``einsum("ij,jk", [a, b])`` or the
    sublist format ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. Repeated subscripts in one operand take a diagonal,
    ``...`` broadcasts, a subscript of size 1 broadcasts against the others; without ``->`` the output is the
    ellipsis dims, then the subscripts that occur once, in alphabetical order (upper case first).

    The operands are reduced left to right, each pair by one batched matmul over the subscripts that neither the
    output nor a later operand needs (or a broadcast product when there is none). The plan (which views, sums,
    permutes and reshapes) depends only on the equation and the shapes, and is cached."""
    if len(args) < 2 and not (len(args) == 1 and isinstance(args[0], str)):
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], str):
        eq, ops = args[0], args[1:]
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = tuple(ops[0])
    else:
        eq, ops = _sublist_equation(args)
    if not ops:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    first = ops[0]
    for i, t in enumerate(ops):
        if not isinstance(t, TensorBase):
            raise TypeError(f"einsum(): operand {i} must be a Tensor, not {type(t).__name__}")
        if t.dtype is not first.dtype:
            raise RuntimeError(f"einsum(): expected all operands to have the same dtype, but operand 0 is "
                               f"{first.dtype.name} and operand {i} is {t.dtype.name} (torch does not promote "
                               f"here)")
        if t._dev is not first._dev:
            check_same_device(first, t, "einsum")
    prep, pairs, perm = _plan(eq, tuple([t.shape for t in ops]))
    ts = list(ops)
    for i, steps in prep:
        ts[i] = _run(ts[i], steps)
    res = ts[0]
    for i, steps_a, steps_b, kind, pa, ra, pb, rb, shape in pairs:
        a, b = _run(res, steps_a), _run(ts[i], steps_b)
        if a.dtype is not b.dtype:  # (an int32 operand next to an int64 sum: both int64)
            a, b = a.long(), b.long()
        if pa is not None:
            a = a.permute(pa)
        if pb is not None:
            b = b.permute(pb)
        if ra is not None:
            a = a.reshape(ra)
        if rb is not None:
            b = b.reshape(rb)
        res = a * b if kind else a @ b
        if shape is not None:
            res = res.reshape(shape)
    if perm is not None:
        res = res.permute(perm)
    if res is first:  # (nothing to do: a view of the operand, as torch's, never the operand itself)
        res = res.view(res.shape)
    return res


def _run(t, steps: tuple):
    """Apply a plan's steps to one operand: ("diag", dim1, dim2) or ("sum", dims, keepdim)."""
    for op, x, y in steps:
        if op == "diag":
            t = t.diagonal(0, x, y)
        else:  # (an integer operand's sum is int64, as torch's)
            t = t.sum(x, keepdim=y)
    return t


@lru_cache(maxsize=512)
def _plan(eq: str, shapes: tuple) -> tuple:
    """What einsum does for ``eq`` on operands of ``shapes`` (and every error it raises about them).

    Returns ``(prep, pairs, perm)``: ``prep`` the steps of each operand alone (diagonals of repeated labels, sums of
    the labels no one else needs); ``pairs`` one entry per further operand (the running result's steps and its own,
    permutes, reshapes, product kind and the result's shape; None where a step is not needed); ``perm`` the output's
    final permutation (None: none)."""
    terms, out = _parse(eq)
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")

    # each operand's labels: letters, and for the dims an ellipsis covers -k..-1 (right-aligned across operands)
    labels, n_ell = [], 0
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        letters = [c for c in term if c != _ELL]
        nd = len(shape)
        if _ELL in term:
            k = nd - len(letters)
            if k < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) is more than "
                                   f"the number of dimensions ({nd}) for operand {i}")
            n_ell = max(n_ell, k)
            at = term.index(_ELL)
            labels.append(term[:at] + list(range(-k, 0)) + term[at + 1:])
        else:
            if len(letters) != nd:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) does not "
                                   f"match the number of dimensions ({nd}) for operand {i} and no ellipsis was "
                                   f"given")
            labels.append(list(term))

    # the output's labels
    count: dict = {}
    for ls in labels:
        for lab in ls:
            count[lab] = count.get(lab, 0) + 1
    ell_ids = list(range(-n_ell, 0))
    if out is None:
        out_ids = ell_ids + sorted(lab for lab, n in count.items() if isinstance(lab, str) and n == 1)
    else:
        out_ids = []
        for lab in out:
            if lab == _ELL:
                out_ids += ell_ids
                continue
            if lab in out_ids:
                raise RuntimeError(f"einsum(): output subscript {lab} appears more than once in the output")
            if lab not in count:
                raise RuntimeError(f"einsum(): output subscript {lab} does not appear in the equation for any input "
                                   f"operand")
            out_ids.append(lab)

    # sizes agree or broadcast (1)
    size: dict = {}
    for i, (ls, shape) in enumerate(zip(labels, shapes)):
        mine: dict = {}
        for lab, n in zip(ls, shape):
            if lab in mine and mine[lab] != n:
                raise RuntimeError(f"einsum(): subscript {lab} is repeated for operand {i} but the sizes don't "
                                   f"match, {mine[lab]} != {n}")
            mine[lab] = n
            seen = size.get(lab, 1)
            if n != 1 and seen != 1 and n != seen:
                what = f"subscript {lab}" if isinstance(lab, str) else f"ellipsis dim {lab}"
                raise RuntimeError(f"einsum(): {what} has size {n} for operand {i} which does not broadcast with "
                                   f"previously seen size {seen}")
            if n != 1:
                size[lab] = n

    # each operand alone: diagonals of repeated labels, then sums of the labels no one else needs
    keep = set(out_ids)
    prep, state = [], []
    for i, (ls, shape) in enumerate(zip(labels, shapes)):
        ls, shape, steps = list(ls), list(shape), []
        while len(set(ls)) < len(ls):
            p = next(j for j, lab in enumerate(ls) if ls.index(lab) != j)
            q = ls.index(ls[p])
            steps.append(("diag", q, p))
            rest = [j for j in range(len(ls)) if j != p and j != q]
            ls, shape = [ls[j] for j in rest] + [ls[p]], [shape[j] for j in rest] + [shape[p]]
        others = set(keep)
        for j, other in enumerate(labels):
            if j != i:
                others.update(other)
        ls, shape = _sum_step(steps, ls, shape, [j for j, lab in enumerate(ls) if lab not in others])
        if steps:
            prep.append((i, tuple(steps)))
        state.append((ls, shape))

    rl, rs = state[0]
    pairs = []
    for i in range(1, len(state)):
        needed = set(keep)
        for later, _ in state[i + 1:]:
            needed.update(later)
        pair, rl, rs = _plan_pair(rl, rs, *state[i], needed)
        pairs.append((i, *pair))
    perm = [rl.index(lab) for lab in out_ids]
    return tuple(prep), tuple(pairs), (None if perm == list(range(len(perm))) else tuple(perm))


def _sum_step(steps: list, ls: list, shape: list, dims: list, keepdim: bool = False):
    """Record a sum over ``dims`` (positions); the labels and shape after it."""
    if not dims:
        return ls, shape
    steps.append(("sum", tuple(dims), keepdim))
    if keepdim:
        return ls, [1 if j in dims else n for j, n in enumerate(shape)]
    return [x for j, x in enumerate(ls) if j not in dims], [n for j, n in enumerate(shape) if j not in dims]


def _plan_pair(la: list, sa: list, lb: list, sb: list, needed: set):
    """Contract two labelled operands over the labels ``needed`` lacks (kept labels in both are batch dims)."""
    steps_a, steps_b = [], []
    la, sa = _sum_step(steps_a, la, sa, [j for j, x in enumerate(la) if x not in needed and x not in lb])
    lb, sb = _sum_step(steps_b, lb, sb, [j for j, x in enumerate(lb) if x not in needed and x not in la])
    contract = [x for x in la if x in lb and x not in needed]
    # a contracted label of size 1 on one side is summed on the other (it broadcasts there)
    one_a = [la.index(x) for x in contract if sb[lb.index(x)] == 1 and sa[la.index(x)] != 1]
    one_b = [lb.index(x) for x in contract if sa[la.index(x)] == 1 and sb[lb.index(x)] != 1]
    la, sa = _sum_step(steps_a, la, sa, one_a, keepdim=True)
    lb, sb = _sum_step(steps_b, lb, sb, one_b, keepdim=True)
    batch = [x for x in la if x in lb and x in needed]
    left = [x for x in la if x not in lb]
    right = [x for x in lb if x not in la]
    bat_a = tuple(sa[la.index(x)] for x in batch)
    bat_b = tuple(sb[lb.index(x)] for x in batch)
    left_s = tuple(sa[la.index(x)] for x in left)
    right_s = tuple(sb[lb.index(x)] for x in right)
    bat = broadcast_shapes(bat_a, bat_b)
    if not contract:  # a broadcast product (outer over left x right, elementwise over batch)
        pa, pb = [la.index(x) for x in batch + left], [lb.index(x) for x in batch + right]
        ra, rb = bat_a + left_s + (1,) * len(right), bat_b + (1,) * len(left) + right_s
        kind, shape, out_shape = True, None, bat + left_s + right_s
    else:  # one batched matmul: (batch, left, contract) @ (batch, contract, right)
        k = prod(sa[la.index(x)] for x in contract)
        pa = [la.index(x) for x in batch + left + contract]
        pb = [lb.index(x) for x in batch + contract + right]
        ra, rb = bat_a + (prod(left_s), k), bat_b + (k, prod(right_s))
        out_shape = bat + left_s + right_s
        kind, shape = False, out_shape if out_shape != bat + (prod(left_s), prod(right_s)) else None
    sa_p = tuple(sa[j] for j in pa)
    sb_p = tuple(sb[j] for j in pb)
    pair = (tuple(steps_a), tuple(steps_b), kind,
            None if pa == list(range(len(pa))) and len(pa) == len(sa) else tuple(pa),
            None if ra == sa_p and len(pa) == len(sa) else ra,
            None if pb == list(range(len(pb))) and len(pb) == len(sb) else tuple(pb),
            None if rb == sb_p and len(pb) == len(sb) else rb, shape)
    return pair, batch + left + right, list(out_shape)
