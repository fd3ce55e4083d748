"""Free functions (``tl.<name>``) of the Tensor API's linalg family (see ``mixin/linalg.py``).

``einsum`` and ``tensordot`` are built from views (diagonal, permute, reshape), sums and one batched matmul per pair
of operands, so their gradients (and higher derivatives) are those ops' own.

>>> import tinygrad_like as tl
>>> a, b = tl.ones(2, 3), tl.ones(3, 4)
>>> tl.einsum("ij,jk->ik", a, b).shape, tl.tensordot(a, b, dims=1).shape
(tl.Size([2, 4]), tl.Size([2, 4]))
"""

from __future__ import annotations

from functools import lru_cache
from math import prod

from . import dtypes
from .device import factory_device
from .layout import broadcast_shapes, normalize_dim
from .mixin.linalg import _need_tensor, _vector_norm
from .tensor import Tensor, wrap_native
from .tensor_base import TensorBase

__all__ = ["mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "kron", "addmm", "addmv", "addmv_", "baddbmm",
           "addbmm", "einsum", "tensordot", "norm", "dist", "cdist", "cross", "trace", "diag", "diagonal",
           "diag_embed", "diagflat", "diagonal_scatter", "tril_indices", "triu_indices", "matrix_power", "svd"]


def _t(x, op: str) -> None:
    _need_tensor(x, op, "input")


# ---- products -------------------------------------------------------------------------------------
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    _t(input, "mm")
    return input.mm(mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    _t(input, "bmm")
    return input.bmm(mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    _t(input, "mv")
    return input.mv(vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    _t(input, "dot")
    return input.dot(tensor)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    _t(input, "vdot")
    return input.vdot(other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    _t(input, "inner")
    return input.inner(other)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    _t(input, "outer")
    return input.outer(vec2)


ger = outer


def kron(input: Tensor, other: Tensor) -> Tensor:
    _t(input, "kron")
    return input.kron(other)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    _t(input, "addmm")
    return input.addmm(mat1, mat2, beta=beta, alpha=alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    _t(input, "addmv")
    return input.addmv(mat, vec, beta=beta, alpha=alpha)


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    _t(input, "addmv_")
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    _t(input, "baddbmm")
    return input.baddbmm(batch1, batch2, beta=beta, alpha=alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    _t(input, "addbmm")
    return input.addbmm(batch1, batch2, beta=beta, alpha=alpha)


def matrix_power(input: Tensor, n: int) -> Tensor:
    _t(input, "matrix_power")
    return input.matrix_power(n)


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
            from .ops._util import check_same_device
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


# ---- norms and distances ----------------------------------------------------------------------------
def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, out=None, dtype=None) -> Tensor:
    if out is not None:
        raise NotImplementedError("norm: out= is not supported; assign the result instead")
    _t(input, "norm")
    return input.norm(p, dim, keepdim, dtype)


def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    _t(input, "dist")
    return input.dist(other, p)


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
    _t(input, "svd")
    return input.svd(some, compute_uv)


# ---- cross product and diagonals ------------------------------------------------------------------
def cross(input: Tensor, other: Tensor, dim=None) -> Tensor:
    _t(input, "cross")
    return input.cross(other, dim)


def trace(input: Tensor) -> Tensor:
    _t(input, "trace")
    return input.trace()


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    _t(input, "diag")
    return input.diag(diagonal)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    _t(input, "diagonal")
    return input.diagonal(offset, dim1, dim2)


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    _t(input, "diagonal_scatter")
    return input.diagonal_scatter(src, offset, dim1, dim2)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    _t(input, "diag_embed")
    return input.diag_embed(offset, dim1, dim2)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    _t(input, "diagflat")
    return input.diagflat(offset)


def _tri_indices(kind: str, row: int, col: int, offset: int, dtype, device) -> Tensor:
    for name, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{name} must be non-negative, got {n}")
    dt = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    if dt.is_floating_point or dt is dtypes.bool_:
        raise NotImplementedError(f'"{kind}" not implemented for \'{dt.name}\': expected an integer dtype')
    dev = factory_device(device)
    return wrap_native(getattr(dev.backend, kind)(row, col, offset, dt), dev)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """``2 x N`` int64: the row and column indices of the lower triangle of a ``row x col`` matrix (diagonal
    ``offset`` and below), in row-major order."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """``2 x N`` int64: the row and column indices of the upper triangle (diagonal ``offset`` and above)."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device)
