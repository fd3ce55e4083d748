"""Conformance rows of the ops added after the families: counting (bincount, histc, histogram), index_reduce, and the
singular value decomposition with what is built on it (svdvals, torch.svd, the 'nuc'/2/-2 matrix norms, cond).

The singular vectors are unique only up to the sign of each pair (u_i, v_i), and LAPACK builds differ in the signs
they pick, so the SVD rows compare what does not depend on them: the squares ``U * U`` and ``Vh * Vh``, the product
``U @ Vh`` (the pairs' signs cancel), and with ``full_matrices`` the projector onto the extra columns (torch's
gradient ignores those columns; so does ours). The random ("n") inputs have well separated singular values, where
the gradients are defined. Counting ops are not differentiable: their rows compare values, dtypes and
``requires_grad`` (torch marks bincount-with-weights and histogram results as requiring grad, with no derivative)."""

from __future__ import annotations

from . import C, S, k, unary

# ---- counting --------------------------------------------------------------------------------------
_VALUES = [0, 3, 1, 1, 5, 3]


def _ints(m, x):
    """Small non-negative integers made from a leaf (its values scaled, truncated): bincount's input."""
    return (x.abs() * 2).long()


COUNTING = [
    C("bincount", lambda m, x: m.bincount(_ints(m, x)), S((7,)), grad=False),
    C("bincount-method-minlength", lambda m, x: _ints(m, x).bincount(minlength=12), S((5,)), grad=False),
    C("bincount-weights", lambda m, w: m.bincount(m.tensor(_VALUES), w), S((6,)), grad=False),
    C("bincount-weights-minlength", lambda m, w: m.tensor(_VALUES).bincount(w, minlength=8), S((6,), view="step"),
      grad=False),
    C("bincount-weights-detached", lambda m, w: m.bincount(m.tensor(_VALUES), w.detach()), S((6,)), grad=False),
    C("bincount-empty", lambda m, x: m.bincount(_ints(m, x), minlength=3), S((0,)), grad=False),
    C("histc", lambda m, x: m.histc(x), S((3, 4)), grad=False),
    C("histc-bins-range", lambda m, x: x.histc(bins=5, min=-1, max=1), S((3, 4), view="T"), grad=False),
    C("histc-equal-bounds", lambda m, x: m.histc(x, 4, 2, 2), S((2, 3, 4)), grad=False),
    C("histc-empty", lambda m, x: m.histc(x, 3), S((0, 3)), grad=False),
    C("histc-0d", lambda m, x: x.histc(3), S(()), grad=False),
    C("histogram", lambda m, x: m.histogram(x, 4), S((3, 4)), grad=False),
    C("histogram-range", lambda m, x: x.histogram(5, range=(-1.0, 1.0)), S((3, 5), view="step"), grad=False),
    C("histogram-density", lambda m, x: m.histogram(x, 3, density=True), S((2, 3, 4)), grad=False),
    C("histogram-weight", lambda m, x, w: m.histogram(x, 4, weight=w), S((3, 4)), k(S((3, 4)), "pos"),
      grad=False),
    C("histogram-weight-density", lambda m, x, w: x.histogram(3, weight=w, density=True, range=(-2, 2)),
      S((10,)), k(S((10,)), "pos"), grad=False),
    C("histogram-edges", lambda m, x: m.histogram(x, m.tensor([-1.0, -0.2, 0.1, 2.0], dtype=x.dtype)), S((4, 5)),
      grad=False),
    C("histogram-edges-density", lambda m, x: x.histogram(m.tensor([-3.0, 0.0, 0.5, 3.0], dtype=x.dtype),
                                                          density=True), S((4, 5), view="T"), grad=False),
    C("histogram-empty", lambda m, x: m.histogram(x, 3), S((0, 3)), grad=False),
    C("histogram-detached", lambda m, x: m.histogram(x.detach(), 2), S((3, 4)), grad=False),
]

# ---- index_reduce ------------------------------------------------------------------------------------
_IDX0 = [0, 2, 0, 3, 0]  # (repeats: several source rows meet in row 0; row 1 is not written)
_IDX1 = [3, 1, 3]


def _ir(reduce: str, dim: int, include_self: bool = True, inplace: bool = False):
    idx = _IDX0 if dim == 0 else _IDX1

    def fn(m, x, s):
        if inplace:
            return (x * 1).index_reduce_(dim, m.tensor(idx), s, reduce, include_self=include_self)
        return x.index_reduce(dim, m.tensor(idx), s, reduce, include_self=include_self)
    return fn


INDEX_REDUCE = []
for _red in ("prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        _sfx = "" if _inc else "-noself"
        INDEX_REDUCE += [
            C(f"index_reduce-{_red}{_sfx}", _ir(_red, 0, _inc), S((4, 3)), S((5, 3))),
            C(f"index_reduce-{_red}{_sfx}-dim1", _ir(_red, 1, _inc), S((2, 4), view="T"), S((2, 3))),
            C(f"index_reduce-{_red}{_sfx}-ties", _ir(_red, 0, _inc), k(S((4, 3)), "tie"), k(S((5, 3)), "tie")),
        ]
INDEX_REDUCE += [
    C("index_reduce_-prod", _ir("prod", 0, True, True), S((4, 3)), S((5, 3))),
    C("index_reduce_-amax-ties", _ir("amax", 1, False, True), k(S((2, 4)), "tie"), k(S((2, 3), view="step"), "tie")),
    C("index_reduce-fn-mean", lambda m, x, s: m.index_reduce(x, 0, m.tensor([1, 1]), s, "mean"), S((3, 2, 2)),
      S((2, 2, 2))),
    C("index_reduce-0d", lambda m, x, s: x.index_reduce(0, m.tensor([0]), s, "prod"), S(()), S(())),
    C("index_reduce-empty-index", lambda m, x, s: x.index_reduce(0, m.tensor([], dtype=m.int64), s, "amin"),
      S((3, 2)), S((0, 2))),
]


# ---- singular value decomposition ----------------------------------------------------------------------
def _svd_invariants(m, A, full_matrices: bool):
    """What of ``linalg.svd(A)`` does not depend on the singular vectors' signs (see the module docstring)."""
    U, Sv, Vh = m.linalg.svd(A, full_matrices=full_matrices)
    kk = min(A.shape[-2], A.shape[-1])
    Uk, Vk = U[..., :kk], Vh[..., :kk, :]
    out = [Uk * Uk, Sv, Vk * Vk, Uk @ Vk]
    if full_matrices:  # the extra columns: only the subspace they span is defined
        Uc, Vc = U[..., kk:], Vh[..., kk:, :]
        out += [Uc @ Uc.mT, Vc.mT @ Vc]
    return tuple(out)


def _old_svd_invariants(m, A, some: bool = True):
    U, Sv, V = m.svd(A, some=some)
    kk = min(A.shape[-2], A.shape[-1])
    Uk, Vk = U[..., :kk], V[..., :kk]
    return Uk * Uk, Sv, Vk * Vk, Uk @ Vk.mT


_MATS = (S((3, 4)), S((4, 3)), S((3, 3)), S((2, 3, 4)), S((2, 4, 3), view="T"), S((3, 4), view="step"))
_TOL = 10.0  # (float32 SVD: its gradients divide by differences of squared singular values)

SVD = (
    unary("linalg.svd", lambda m, A: _svd_invariants(m, A, True), shapes=_MATS, tol=_TOL)
    + unary("linalg.svd-reduced", lambda m, A: _svd_invariants(m, A, False), shapes=_MATS, tol=_TOL)
    + unary("linalg.svd-S-only", lambda m, A: m.linalg.svd(A).S, shapes=_MATS, tol=_TOL)
    + unary("linalg.svd-U-only", lambda m, A: (lambda U: U * U)(m.linalg.svd(A, full_matrices=False).U),
            shapes=_MATS, tol=_TOL)
    + unary("linalg.svdvals", lambda m, A: m.linalg.svdvals(A), shapes=_MATS, tol=_TOL)
    + [C("linalg.svdvals-empty", lambda m, A: m.linalg.svdvals(A), S((2, 0, 3))),
       C("linalg.svd-empty", lambda m, A: m.linalg.svd(A)[1], S((0, 3)))]
    + unary("svd", lambda m, A: _old_svd_invariants(m, A), shapes=_MATS, tol=_TOL)
    + unary("svd-some-false", lambda m, A: _old_svd_invariants(m, A, False), shapes=_MATS[:3], tol=_TOL)
    + unary("svd-method", lambda m, A: A.svd()[1], shapes=_MATS[:2], tol=_TOL)
    + unary("svd-no-uv", lambda m, A: m.svd(A, compute_uv=False), shapes=_MATS[:4], tol=_TOL)
)

NORMS = (
    unary("matrix_norm-nuc", lambda m, A: m.linalg.matrix_norm(A, "nuc"), shapes=_MATS, tol=_TOL)
    + unary("matrix_norm-2", lambda m, A: m.linalg.matrix_norm(A, 2), shapes=_MATS, tol=_TOL)
    + unary("matrix_norm--2", lambda m, A: m.linalg.matrix_norm(A, ord=-2), shapes=_MATS, tol=_TOL)
    + [C("matrix_norm-nuc-dims-keepdim", lambda m, A: m.linalg.matrix_norm(A, "nuc", dim=(2, 0), keepdim=True),
         S((2, 3, 4)), tol=_TOL),
       C("matrix_norm-2-dims-keepdim", lambda m, A: m.linalg.matrix_norm(A, 2, dim=(0, -1), keepdim=True),
         S((2, 3, 4)), tol=_TOL),
       C("matrix_norm--2-dtype", lambda m, A: m.linalg.matrix_norm(A, -2, dtype=A.dtype), S((3, 4)), tol=_TOL),
       C("matrix_norm-nuc-empty", lambda m, A: m.linalg.matrix_norm(A, "nuc"), S((2, 0, 3))),
       C("matrix_norm-2-empty", lambda m, A: m.linalg.matrix_norm(A, 2), S((0, 3)), grad=False),
       C("linalg.norm-2", lambda m, A: m.linalg.norm(A, 2), S((3, 4)), tol=_TOL),
       C("linalg.norm--2-T", lambda m, A: m.linalg.norm(A, -2), S((4, 3), view="T"), tol=_TOL),
       C("linalg.norm-nuc-dim", lambda m, A: m.linalg.norm(A, "nuc", dim=(1, 2)), S((2, 3, 4)), tol=_TOL),
       C("norm-nuc-method", lambda m, A: A.norm(p="nuc"), S((3, 4)), tol=_TOL),
       C("norm-nuc-fn-dim", lambda m, A: m.norm(A, p="nuc", dim=(0, 1)), S((3, 4, 2)), tol=_TOL),
       C("norm-nuc-keepdim", lambda m, A: A.norm("nuc", dim=(0, 2), keepdim=True), S((3, 2, 4)), tol=_TOL),
       C("cond-empty", lambda m, A: m.linalg.cond(A), S((2, 0, 0)), grad=False)]
    + unary("cond", lambda m, A: m.linalg.cond(A), shapes=_MATS, tol=_TOL)
    + unary("cond-2", lambda m, A: m.linalg.cond(A, 2), shapes=_MATS[:2], tol=_TOL)
    + unary("cond--2", lambda m, A: m.linalg.cond(A, p=-2), shapes=_MATS, tol=_TOL)
)

CASES = COUNTING + INDEX_REDUCE + SVD + NORMS
