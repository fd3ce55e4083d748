"""torch.linalg's decompositions and solvers, and their names at torch's top level and on the Tensor, against torch:
values (batched), return types, gradients (torch's ``.grad`` and finite differences, in float64), the deprecated
spellings' warnings, and the errors (types and messages) for singular, non-square and wrongly typed input."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from conftest import assert_close

import tinygrad_like as tl
from tinygrad_like.autograd import gradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(28)


def _spd(*shape):
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _sym(*shape):
    a = RNG.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


def _wellcond(*shape):
    return RNG.standard_normal(shape) + 3 * np.eye(shape[-2], shape[-1])


def _tri(*shape, upper=False):
    a = RNG.standard_normal(shape) + 4 * np.eye(shape[-1])
    return np.triu(a) if upper else np.tril(a)


def _real_eig(*shape):
    """A general (non-symmetric) matrix with distinct real eigenvalues: V diag(w) V^-1."""
    n = shape[-1]
    v = RNG.standard_normal(shape) + 2 * np.eye(n)
    w = np.broadcast_to(np.arange(1.0, n + 1) * 1.5 - 2.2, shape[:-1])
    return (v * w[..., None, :]) @ np.linalg.inv(v)


A33, B3_44 = _wellcond(3, 3), _wellcond(2, 3, 4, 4)
SPD, SPD_B = _spd(4, 4), _spd(2, 3, 3)
TALL, WIDE, TALL_B = RNG.standard_normal((5, 3)), RNG.standard_normal((3, 5)), RNG.standard_normal((2, 5, 3))
RHS4, RHS_B = RNG.standard_normal((4, 2)), RNG.standard_normal((2, 3, 4, 2))


def _run(fn, arrays, requires_grad=True):
    """``fn`` on tl and on torch, inputs from ``arrays`` (float64): (tl inputs, tl out, torch inputs, torch out)."""
    ts = [tl.tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    ps = [torch.tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    return ts, fn(tl, *ts), ps, fn(torch, *ps)


def _flat(out):
    return list(out) if isinstance(out, tuple) else [out]


def _loss(outs, weights, m):
    total = 0
    for o, w in zip(outs, weights):
        if o.dtype.is_floating_point and o.numel():
            total = total + (o * m.tensor(w)).sum()
    return total


# name, fn(module, *inputs), input arrays; every float output is compared, and the gradient of a random weighted
# sum of them. (Sign-ambiguous eigenvectors enter as squares.)
CASES = [
    ("linalg.inv", lambda m, a: m.linalg.inv(a), [B3_44]),
    ("inverse", lambda m, a: m.inverse(a), [A33]),
    ("Tensor.inverse", lambda m, a: a.inverse(), [A33]),
    ("linalg.inv_ex", lambda m, a: m.linalg.inv_ex(a).inverse, [B3_44]),
    ("linalg.det", lambda m, a: m.linalg.det(a), [B3_44]),
    ("det", lambda m, a: m.det(a), [A33]),
    ("Tensor.det", lambda m, a: a.det(), [A33]),
    ("linalg.slogdet", lambda m, a: tuple(m.linalg.slogdet(a)), [B3_44 - 3 * np.eye(4)]),
    ("slogdet", lambda m, a: tuple(m.slogdet(a)), [A33]),
    ("logdet", lambda m, a: m.logdet(a), [SPD]),
    ("Tensor.logdet", lambda m, a: a.logdet(), [SPD_B]),
    ("linalg.solve", lambda m, a, b: m.linalg.solve(a, b), [B3_44, RHS_B]),
    ("linalg.solve-broadcast", lambda m, a, b: m.linalg.solve(a, b), [A33, RNG.standard_normal((2, 3, 2))]),
    ("linalg.solve-vector", lambda m, a, b: m.linalg.solve(a, b), [A33, RNG.standard_normal(3)]),
    ("linalg.solve-right", lambda m, a, b: m.linalg.solve(a, b, left=False), [A33, RNG.standard_normal((2, 3))]),
    ("linalg.solve_ex", lambda m, a, b: m.linalg.solve_ex(a, b).result, [B3_44, RHS_B]),
    ("linalg.solve_triangular", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
     [_tri(2, 4, 4, upper=True), RNG.standard_normal((2, 4, 3))]),
    ("linalg.solve_triangular-right-unit", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, left=False,
                                                                                       unitriangular=True),
     [_tri(4, 4), RNG.standard_normal((3, 4))]),
    ("triangular_solve", lambda m, b, a: tuple(m.triangular_solve(b, a, upper=False, transpose=True)),
     [RNG.standard_normal((4, 2)), _tri(4, 4)]),
    ("Tensor.triangular_solve", lambda m, b, a: tuple(b.triangular_solve(a)),
     [RNG.standard_normal((2, 3, 2)), _tri(2, 3, 3, upper=True)]),
    ("linalg.cholesky", lambda m, a: m.linalg.cholesky(a), [SPD_B]),
    ("linalg.cholesky-upper", lambda m, a: m.linalg.cholesky(a, upper=True), [SPD]),
    ("linalg.cholesky_ex", lambda m, a: m.linalg.cholesky_ex(a).L, [SPD]),
    ("cholesky_solve", lambda m, b, L: m.cholesky_solve(b, L), [RNG.standard_normal((4, 3)), _tri(4, 4)]),
    ("Tensor.cholesky_solve-upper", lambda m, b, U: b.cholesky_solve(U, upper=True),
     [RNG.standard_normal((2, 4, 3)), _tri(2, 4, 4, upper=True)]),
    ("cholesky_inverse", lambda m, L: m.cholesky_inverse(L), [_tri(4, 4)]),
    ("Tensor.cholesky_inverse-upper", lambda m, U: U.cholesky_inverse(True), [_tri(3, 3, upper=True)]),
    ("linalg.lu_factor", lambda m, a: m.linalg.lu_factor(a).LU, [B3_44]),
    ("linalg.lu_factor_ex", lambda m, a: m.linalg.lu_factor_ex(a).LU, [A33]),
    ("linalg.lu", lambda m, a: tuple(m.linalg.lu(a)), [B3_44]),
    ("linalg.lu-tall", lambda m, a: tuple(m.linalg.lu(a)), [TALL_B]),
    ("linalg.lu-wide", lambda m, a: tuple(m.linalg.lu(a)), [WIDE]),
    ("linalg.lu_solve", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b), [B3_44, RHS_B]),
    ("linalg.lu_solve-adjoint", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, adjoint=True),
     [A33, RNG.standard_normal((3, 2))]),
    ("linalg.lu_solve-right", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, left=False),
     [A33, RNG.standard_normal((2, 3))]),
    ("lu_solve", lambda m, a, b: m.lu_solve(b, *m.linalg.lu_factor(a)), [A33, RNG.standard_normal((3, 2))]),
    ("lu_unpack", lambda m, a: tuple(m.lu_unpack(*m.linalg.lu_factor(a))), [B3_44]),
    ("linalg.qr", lambda m, a: tuple(m.linalg.qr(a)), [TALL_B]),
    ("linalg.qr-square", lambda m, a: tuple(m.linalg.qr(a)), [B3_44]),
    ("linalg.qr-wide", lambda m, a: tuple(m.linalg.qr(a)), [WIDE]),
    ("linalg.qr-complete-wide", lambda m, a: tuple(m.linalg.qr(a, mode="complete")), [WIDE]),
    ("qr", lambda m, a: tuple(m.qr(a)), [TALL]),
    ("Tensor.qr-some", lambda m, a: tuple(a.qr(some=False)), [A33]),
    ("linalg.eigh", lambda m, a: (m.linalg.eigh(a)[0], m.linalg.eigh(a)[1] ** 2), [_sym(2, 4, 4)]),
    ("linalg.eigh-U", lambda m, a: (m.linalg.eigh(a, UPLO="U")[0], m.linalg.eigh(a, "U")[1] ** 2), [_sym(3, 3)]),
    ("linalg.eigvalsh", lambda m, a: m.linalg.eigvalsh(a), [_sym(2, 3, 3)]),
    ("linalg.pinv", lambda m, a: m.linalg.pinv(a), [TALL_B]),
    ("linalg.pinv-wide", lambda m, a: m.linalg.pinv(a), [WIDE]),
    ("linalg.pinv-rcond", lambda m, a: m.linalg.pinv(a, 0.3), [WIDE]),
    ("linalg.pinv-atol", lambda m, a: m.linalg.pinv(a, atol=1.0), [TALL_B]),
    ("linalg.pinv-hermitian", lambda m, a: m.linalg.pinv(a, hermitian=True), [_sym(4, 4)]),
    ("pinverse", lambda m, a: m.pinverse(a), [TALL]),
    ("Tensor.pinverse", lambda m, a: a.pinverse(), [WIDE]),
    ("linalg.lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution, [TALL_B, RNG.standard_normal((2, 5, 2))]),
    ("linalg.lstsq-vector", lambda m, a, b: m.linalg.lstsq(a, b).solution, [TALL, RNG.standard_normal(5)]),
    ("linalg.lstsq-gelsd", lambda m, a, b: tuple(m.linalg.lstsq(a, b, driver="gelsd")),
     [TALL, RNG.standard_normal((5, 2))]),
    ("linalg.lstsq-wide", lambda m, a, b: m.linalg.lstsq(a, b).solution, [WIDE, RNG.standard_normal((3, 2))]),
    ("linalg.matrix_exp", lambda m, a: m.linalg.matrix_exp(a), [RNG.standard_normal((2, 4, 4))]),
    ("matrix_exp-large", lambda m, a: m.matrix_exp(a), [3 * RNG.standard_normal((3, 3))]),
    ("Tensor.matrix_exp", lambda m, a: a.matrix_exp(), [0.1 * RNG.standard_normal((3, 3))]),
    ("linalg.householder_product", lambda m, a, t: m.linalg.householder_product(a, t),
     [TALL, RNG.standard_normal(2)]),
    ("orgqr", lambda m, a, t: m.orgqr(a, t), [RNG.standard_normal((2, 4, 3)), RNG.standard_normal((2, 3))]),
    ("ormqr", lambda m, a, t, c: m.ormqr(a, t, c), [TALL, RNG.standard_normal(3), RNG.standard_normal((5, 2))]),
    ("ormqr-T-right", lambda m, a, t, c: m.ormqr(a, t, c, left=False, transpose=True),
     [TALL, RNG.standard_normal(3), RNG.standard_normal((2, 5))]),
    ("Tensor.ormqr-T", lambda m, a, t, c: a.ormqr(t, c, True, True),
     [TALL, RNG.standard_normal(3), RNG.standard_normal((5, 4))]),
    ("linalg.tensorinv", lambda m, a: m.linalg.tensorinv(a, ind=1), [_wellcond(4, 4).reshape(4, 2, 2)]),
    ("linalg.tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a, b),
     [_wellcond(6, 6).reshape(2, 3, 6), RNG.standard_normal((2, 3))]),
    ("linalg.tensorsolve-dims", lambda m, a, b: m.linalg.tensorsolve(a, b, dims=(0,)),
     [_wellcond(6, 6).reshape(2, 3, 6).transpose(2, 0, 1).copy(), RNG.standard_normal((2, 3))]),
    ("linalg.matrix_power-neg", lambda m, a: m.linalg.matrix_power(a, -3), [B3_44]),
    ("linalg.vander", lambda m, x: m.linalg.vander(x, N=4), [RNG.standard_normal((2, 3))]),
    ("linalg.vander-zero", lambda m, x: m.linalg.vander(x), [np.array([0.0, 1.5, -2.0])]),
    ("addr", lambda m, c, a, b: m.addr(c, a, b, beta=0.5, alpha=2), [RNG.standard_normal((3, 4)),
                                                                       RNG.standard_normal(3), RNG.standard_normal(4)]),
    ("Tensor.addr", lambda m, c, a, b: c.addr(a, b), [RNG.standard_normal(4), RNG.standard_normal(3),
                                                     RNG.standard_normal(4)]),
    ("addr-beta0", lambda m, c, a, b: m.addr(c, a, b, beta=0), [np.full((3, 4), np.nan), RNG.standard_normal(3),
                                                                RNG.standard_normal(4)]),
    ("chain_matmul", lambda m, a, b, c: m.chain_matmul(a, b, c), [TALL, WIDE, TALL]),
]


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(name, fn, arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts, got, ps, want = _run(fn, arrays)
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w.detach(), atol=1e-9, rtol=1e-7, msg=f"{name} output {i}: ")
    weights = [RNG.standard_normal(tuple(w.shape)) for w in want]
    lt, lp = _loss(got, weights, tl), _loss(want, weights, torch)
    if not isinstance(lp, torch.Tensor) or not lp.requires_grad:
        return
    lt.backward()
    lp.backward()
    for i, (t, p) in enumerate(zip(ts, ps)):
        if p.grad is None:
            assert t.grad is None or not t.grad.abs().sum().item(), f"{name}: input {i} has a gradient torch lacks"
            continue
        assert t.grad is not None, f"{name}: no gradient for input {i}"
        assert_close(t.grad, p.grad, atol=1e-7, rtol=1e-6, msg=f"{name} grad of input {i}: ")


def test_return_types_are_torchs_named_tuples():
    a = tl.tensor(A33)
    for result, name, fields in [
        (tl.linalg.slogdet(a), "linalg_slogdet", ("sign", "logabsdet")),
        (tl.slogdet(a), "slogdet", ("sign", "logabsdet")),
        (tl.linalg.inv_ex(a), "linalg_inv_ex", ("inverse", "info")),
        (tl.linalg.solve_ex(a, a), "linalg_solve_ex", ("result", "info")),
        (tl.linalg.cholesky_ex(tl.tensor(SPD)), "linalg_cholesky_ex", ("L", "info")),
        (tl.linalg.lu_factor(a), "linalg_lu_factor", ("LU", "pivots")),
        (tl.linalg.lu_factor_ex(a), "linalg_lu_factor_ex", ("LU", "pivots", "info")),
        (tl.linalg.lu(a), "linalg_lu", ("P", "L", "U")),
        (tl.lu_unpack(*tl.linalg.lu_factor(a)), "lu_unpack", ("P", "L", "U")),
        (tl.linalg.qr(a), "linalg_qr", ("Q", "R")), (tl.qr(a), "qr", ("Q", "R")),
        (tl.linalg.eigh(a), "linalg_eigh", ("eigenvalues", "eigenvectors")),
        (tl.linalg.eig(tl.tensor(_real_eig(3, 3))), "linalg_eig", ("eigenvalues", "eigenvectors")),
        (tl.linalg.lstsq(a, a), "linalg_lstsq", ("solution", "residuals", "rank", "singular_values")),
        (tl.geqrf(a), "geqrf", ("a", "tau")),
        (tl.linalg.ldl_factor(tl.tensor(SPD)), "linalg_ldl_factor", ("LD", "pivots")),
        (tl.linalg.ldl_factor_ex(tl.tensor(SPD)), "linalg_ldl_factor_ex", ("LD", "pivots", "info")),
    ]:
        assert type(result).__name__ == name and result._fields == fields
        assert type(result) is getattr(tl.return_types, name)
        assert type(result).__name__ == getattr(torch.return_types, name).__name__


def test_integer_outputs_match_torch():
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    batch = np.stack([np.eye(2), sing])
    for fn in (lambda m, a: m.linalg.lu_factor_ex(a).pivots, lambda m, a: m.linalg.lu_factor_ex(a).info,
               lambda m, a: m.linalg.inv_ex(a).info, lambda m, a: m.linalg.solve_ex(a, a).info,
               lambda m, a: m.linalg.cholesky_ex(a).info, lambda m, a: m.linalg.matrix_rank(a),
               lambda m, a: m.linalg.matrix_rank(a, hermitian=True), lambda m, a: m.linalg.matrix_rank(a, atol=1.5),
               lambda m, a: m.linalg.matrix_rank(a, 0.9), lambda m, a: m.linalg.matrix_rank(a, tol=2.5),
               lambda m, a: m.linalg.lstsq(a, a).rank):
        for arr in (sing, batch, B3_44, SPD_B):
            assert_close(fn(tl, tl.tensor(arr)), fn(torch, torch.tensor(arr)))


def test_lu_pivots_and_info_of_singular_and_permuted_input():
    a = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 1.0], [0.0, 5.0, 9.0]])
    got, want = tl.linalg.lu_factor_ex(tl.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
    for g, w in zip(got, want):
        assert_close(g, w)


def test_cholesky_ex_keeps_lapacks_partial_result():
    a = np.array([[1.0, 2.0], [2.0, 1.0]])
    got, want = tl.linalg.cholesky_ex(tl.tensor(a)), torch.linalg.cholesky_ex(torch.tensor(a))
    assert_close(got.L, want.L)
    assert_close(got.info, want.info)


def test_eig_with_real_eigenvalues_matches_torchs_real_parts():
    a = _real_eig(2, 4, 4)
    w, v = tl.linalg.eig(tl.tensor(a))
    tw, tv = torch.linalg.eig(torch.tensor(a))
    assert_close(w, tw.real)
    assert_close(v.abs(), tv.abs(), atol=1e-9, rtol=1e-7)  # (unit-norm columns; LAPACK's signs)
    assert_close(tl.linalg.eigvals(tl.tensor(a)), torch.linalg.eigvals(torch.tensor(a)).real)


def test_eig_gradients_match_torch():
    a = _real_eig(4, 4)
    x, y = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    W1, W2 = RNG.standard_normal(4), RNG.standard_normal((4, 4))
    w, v = tl.linalg.eig(x)
    ((w * tl.tensor(W1)).sum() + (v ** 2 * tl.tensor(W2)).sum()).backward()
    tw, tv = torch.linalg.eig(y)
    ((tw.real * torch.tensor(W1)).sum() + ((tv * tv.conj()).real * torch.tensor(W2)).sum()).backward()
    assert_close(x.grad, y.grad, atol=1e-7, rtol=1e-6)
    x2, y2 = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (tl.linalg.eigvals(x2) * tl.tensor(W1)).sum().backward()
    (torch.linalg.eigvals(y2).real * torch.tensor(W1)).sum().backward()
    assert_close(x2.grad, y2.grad, atol=1e-7, rtol=1e-6)


def test_eig_of_complex_eigenvalues_says_why_it_can_not():
    with pytest.raises(NotImplementedError, match="complex eigenvalues"):
        tl.linalg.eig(tl.tensor([[0.0, 1.0], [-1.0, 0.0]]))
    with pytest.raises(NotImplementedError, match="no complex dtype"):
        tl.linalg.eigvals(tl.tensor([[0.0, 1.0], [-1.0, 0.0]]))


def test_geqrf_and_ldl_match_lapack_through_torch():
    a = RNG.standard_normal((2, 5, 3))
    for g, w in zip(tl.geqrf(tl.tensor(a)), torch.geqrf(torch.tensor(a))):
        assert_close(g, w, atol=1e-12, rtol=1e-10)
    sym = np.array([[1.0, 4.0, 2.0, 0.5], [4.0, -3.0, 0.5, 1.0], [2.0, 0.5, 6.0, -2.0], [0.5, 1.0, -2.0, 0.1]])
    for arr in (sym, _sym(2, 5, 5), _spd(4, 4)):
        got, want = tl.linalg.ldl_factor_ex(tl.tensor(arr)), torch.linalg.ldl_factor_ex(torch.tensor(arr))
        for g, w in zip(got, want):
            assert_close(g, w, atol=1e-10, rtol=1e-8)
        b = RNG.standard_normal(arr.shape[:-1] + (2,))
        assert_close(tl.linalg.ldl_solve(got.LD, got.pivots, tl.tensor(b)),
                     torch.linalg.ldl_solve(want.LD, want.pivots, torch.tensor(b)), atol=1e-9, rtol=1e-8)


def test_lstsq_outputs_per_driver_match_torch():
    a, b = TALL_B, RNG.standard_normal((2, 5, 2))
    for driver in (None, "gels", "gelsy", "gelsd", "gelss"):
        got, want = tl.linalg.lstsq(tl.tensor(a), tl.tensor(b), driver=driver), \
            torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        for g, w in zip(got, want):
            assert_close(g, w, atol=1e-9, rtol=1e-7, msg=f"{driver}: ")
    got = tl.linalg.lstsq(tl.tensor(np.ones((4, 2))), tl.tensor(np.arange(4.0)))
    want = torch.linalg.lstsq(torch.tensor(np.ones((4, 2))), torch.tensor(np.arange(4.0)))
    assert_close(got.solution, want.solution)  # (rank 1: the minimum-norm solution, as gelsy's)
    assert_close(got.rank, want.rank)


def test_lobpcg_finds_torchs_eigenpairs():
    a = _spd(12, 12)
    b = _spd(12, 12)
    for kw in ({"k": 2}, {"k": 3, "largest": False}, {"k": 2, "B": b}):
        tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        ekw = {k: tl.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        e, x = tl.lobpcg(tl.tensor(a), **ekw)
        te, tx = torch.lobpcg(torch.tensor(a), tol=1e-12, niter=200, **tkw)
        assert_close(e, te, atol=1e-6, rtol=1e-6)
        assert_close(x.abs(), tx.abs(), atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="smaller than 3 x"):
        tl.lobpcg(tl.tensor(_spd(4, 4)), k=2)


def test_lobpcg_is_differentiable():
    a = _spd(9, 9)
    x, y = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    tl.lobpcg(x, k=2)[0].sum().backward()
    torch.lobpcg(y, k=2, tol=1e-12, niter=200)[0].sum().backward()
    assert_close(x.grad, y.grad, atol=1e-6, rtol=1e-5)


# ---- finite differences (and second order where the backward is built of differentiable ops) -----------------
GRADCHECK = [
    ("det", lambda a: tl.linalg.det(a), [B3_44[0, 0]]),
    ("slogdet", lambda a: tl.linalg.slogdet(a).logabsdet, [A33]),
    ("inv", lambda a: tl.linalg.inv(a), [A33]),
    ("solve", lambda a, b: tl.linalg.solve(a, b), [A33, RNG.standard_normal((3, 2))]),
    ("solve_triangular", lambda a, b: tl.linalg.solve_triangular(a, b, upper=True), [_tri(3, 3, upper=True),
                                                                                      RNG.standard_normal((3, 2))]),
    ("cholesky", lambda a: tl.linalg.cholesky(a @ a.mT + 3 * tl.eye(3, dtype=tl.float64)),
     [RNG.standard_normal((3, 3))]),
    ("qr", lambda a: tl.linalg.qr(a), [TALL]),
    ("qr-wide", lambda a: tl.linalg.qr(a), [WIDE]),
    ("eigh", lambda a: tl.linalg.eigh(a + a.mT).eigenvalues, [RNG.standard_normal((3, 3))]),
    ("eigh-vectors", lambda a: tl.linalg.eigh(a + a.mT).eigenvectors ** 2, [RNG.standard_normal((3, 3))]),
    ("eig", lambda a: tl.linalg.eig(a).eigenvalues, [_real_eig(3, 3)]),
    ("pinv", lambda a: tl.linalg.pinv(a), [TALL]),
    ("lstsq", lambda a, b: tl.linalg.lstsq(a, b).solution, [TALL, RNG.standard_normal((5, 2))]),
    ("matrix_exp", lambda a: tl.linalg.matrix_exp(a), [RNG.standard_normal((3, 3))]),
    ("lu_factor", lambda a: tl.linalg.lu_factor(a).LU, [A33]),
    ("lu-tall", lambda a: tl.linalg.lu(a).L, [TALL]),
    ("lu-wide", lambda a: tl.linalg.lu(a).U, [WIDE]),
    ("lu_solve", lambda a, b: tl.linalg.lu_solve(*tl.linalg.lu_factor(a), b), [A33, RNG.standard_normal((3, 2))]),
    ("householder_product", lambda a, t: tl.linalg.householder_product(a, t), [TALL, RNG.standard_normal(3)]),
]


@pytest.mark.parametrize("name, fn, arrays", GRADCHECK, ids=[c[0] for c in GRADCHECK])
def test_gradients_match_finite_differences(name, fn, arrays):
    inputs = [tl.tensor(a.copy(), requires_grad=True) for a in arrays]
    assert gradcheck(lambda *xs: fn(*xs), inputs, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("name, fn", [
    ("det", lambda m, a: m.linalg.det(a)), ("inv", lambda m, a: m.linalg.inv(a).sum()),
    ("slogdet", lambda m, a: m.linalg.slogdet(a)[1]), ("cholesky", lambda m, a: m.linalg.cholesky(a @ a.mT).sum()),
    ("matrix_exp", lambda m, a: (m.linalg.matrix_exp(a) ** 2).sum()),
    ("solve", lambda m, a: (m.linalg.solve(a, a.sin()) ** 2).sum()),
    ("qr", lambda m, a: (m.linalg.qr(a)[0].sin().sum() + m.linalg.qr(a)[1].sin().sum())),
    ("eigh", lambda m, a: (m.linalg.eigh(a + a.mT)[0].sin().sum() + (m.linalg.eigh(a + a.mT)[1] ** 2).sin().sum())),
    ("pinv", lambda m, a: m.linalg.pinv(a[:, :2]).sin().sum()),
    ("lu_factor", lambda m, a: m.linalg.lu_factor(a)[0].sin().sum()),
    ("solve_triangular", lambda m, a: m.linalg.solve_triangular(a.triu(), a.cos(), upper=True).sin().sum()),
    ("householder_product", lambda m, a: m.linalg.householder_product(a, a[0]).sin().sum())])
def test_second_derivatives_match_torch(name, fn):
    a = A33 / 2
    x, y = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (gx,) = tl.autograd.grad(fn(tl, x), x, create_graph=True)
    (gy,) = torch.autograd.grad(fn(torch, y), y, create_graph=True)
    (gx ** 2).sum().backward()
    (gy ** 2).sum().backward()
    assert_close(x.grad, y.grad, atol=1e-7, rtol=1e-6)


def test_det_of_a_singular_matrix_has_the_adjugate_as_gradient():
    # torch's first-order backward gives zeros here; its create_graph backward (the SVD form) the adjugate, which
    # is the derivative (d det / dA_ij is the cofactor C_ij)
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, 2.0]])
    x, y = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    tl.linalg.det(x).backward()
    (want,) = torch.autograd.grad(torch.linalg.det(y), y, create_graph=True)
    assert_close(x.grad, want.detach(), atol=1e-12, rtol=1e-10)
    assert_close(x.grad, torch.tensor([[2.0, -1.0, 0.0], [-1.0, 0.5, 0.0], [0.0, 0.0, 0.0]], dtype=torch.float64),
                 atol=1e-12, rtol=1e-10)


def test_qr_r_mode_is_not_differentiable_as_in_torch():
    x = tl.tensor(TALL, requires_grad=True)
    Q, R = tl.linalg.qr(x, mode="r")
    assert Q.shape == (0,)
    with pytest.raises(RuntimeError, match="mode='r'"):
        R.sum().backward()


# ---- deprecated and removed spellings --------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda m: m.cholesky(m.eye(2)), lambda m: m.lu(m.eye(2)), lambda m: m.eye(2).lu(),
    lambda m: m.triangular_solve(m.ones(2, 1), m.eye(2)), lambda m: m.chain_matmul(m.eye(2), m.eye(2))])
def test_deprecated_spellings_warn_as_torch(fn):
    # (torch warns once per process, so which of its calls warns depends on the test order: not checked here)
    with pytest.warns(UserWarning, match="deprecated"):
        fn(tl)


@pytest.mark.parametrize("name", ["solve", "lstsq", "eig", "symeig"])
def test_removed_tensor_methods_raise_as_torch(name):
    args = {"solve": (tl.eye(2),), "lstsq": (tl.eye(2),), "eig": (), "symeig": ()}[name]
    targs = tuple(torch.eye(2) for _ in args)
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.eye(2), name)(*targs)
    with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed") as ours:
        getattr(tl.eye(2), name)(*args)
    assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]
    with pytest.raises(RuntimeError, match="is now removed"):
        getattr(torch, name)(torch.eye(2), *targs)
    with pytest.raises(RuntimeError, match="is now removed"):
        getattr(tl, name)(tl.eye(2), *args)


def test_lu_with_infos_and_addr_in_place():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = tl.lu(tl.tensor(A33), get_infos=True), torch.lu(torch.tensor(A33), get_infos=True)
    for g, w in zip(got, want):
        assert_close(g, w)
    c, d = tl.tensor(np.ones((3, 2))), torch.tensor(np.ones((3, 2)))
    v1, v2 = RNG.standard_normal(3), RNG.standard_normal(2)
    assert c.addr_(tl.tensor(v1), tl.tensor(v2), alpha=3) is c
    d.addr_(torch.tensor(v1), torch.tensor(v2), alpha=3)
    assert_close(c, d)


# ---- errors -----------------------------------------------------------------------------------------------
SING = np.array([[1.0, 2.0], [2.0, 4.0]])
NOTPD = np.array([[1.0, 2.0], [2.0, 1.0]])
ERRORS = [
    ("inv-singular", lambda m: m.linalg.inv(m.tensor(SING)),
     r"linalg.inv: The diagonal element 2 is zero, the inversion could not be completed"),
    ("inv-singular-batch", lambda m: m.linalg.inv(m.stack([m.eye(2), m.tensor(SING)])), r"\(Batch element 1\)"),
    ("inverse-singular", lambda m: m.inverse(m.tensor(SING)), "singular"),
    ("matrix_power-singular", lambda m: m.linalg.matrix_power(m.tensor(SING), -1), "singular"),
    ("inv-nonsquare", lambda m: m.linalg.inv(m.ones(2, 3)), "must be batches of square matrices, but they are 2 by 3"),
    ("inv-int", lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.int64)), "Expected a floating point or complex tensor"),
    ("inv-1d", lambda m: m.linalg.inv(m.ones(2)), "must have at least 2 dimensions"),
    ("inv-half", lambda m: m.linalg.inv(m.eye(2).half()), "Low precision dtypes not supported"),
    ("solve-singular", lambda m: m.linalg.solve(m.tensor(SING), m.ones(2, dtype=m.float64)),
     "The solver failed because the input matrix is singular"),
    ("solve-dtype", lambda m: m.linalg.solve(m.eye(2, dtype=m.float64), m.ones(2)), "same dtype"),
    ("solve-shapes", lambda m: m.linalg.solve(m.eye(2), m.ones(3, 1)), "Incompatible shapes of A and B"),
    ("cholesky-not-pd", lambda m: m.linalg.cholesky(m.tensor(NOTPD)),
     r"not positive-definite \(the leading minor of order 2 is not positive-definite\)"),
    ("cholesky-batch", lambda m: m.linalg.cholesky(m.stack([m.eye(2), m.tensor(NOTPD)])), r"\(Batch element 1\)"),
    ("cholesky_ex-check", lambda m: m.linalg.cholesky_ex(m.tensor(NOTPD), check_errors=True), "positive-definite"),
    ("det-nonsquare", lambda m: m.linalg.det(m.ones(2, 3)), "square matrices"),
    ("det-int", lambda m: m.det(m.ones(2, 2, dtype=m.int64)), "floating point"),
    ("lu_factor-singular", lambda m: m.linalg.lu_factor(m.tensor(SING)), r"U\[2,2\] is zero"),
    ("lu_factor-nopivot", lambda m: m.linalg.lu_factor(m.eye(2), pivot=False), "without pivoting"),
    ("qr-mode", lambda m: m.linalg.qr(m.ones(3, 2), mode="x"), "unrecognized mode 'x'"),
    ("lstsq-driver", lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 1), driver="foo"),
     "parameter `driver` should be one of"),
    ("solve_triangular-vector", lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2), upper=True),
     "B must have at least 2 dimensions"),
    ("solve_triangular-upper", lambda m: m.linalg.solve_triangular(m.eye(2), m.ones(2, 1)), "upper"),
    ("matrix_exp-int", lambda m: m.linalg.matrix_exp(m.ones(2, 2, dtype=m.int64)), "floating point"),
    ("householder-tau", lambda m: m.linalg.householder_product(m.ones(3, 2), m.ones(3)),
     "must be greater than or equal to tau.shape"),
    ("householder-wide", lambda m: m.linalg.householder_product(m.ones(2, 3), m.ones(2)),
     r"input.shape\[-2\] must be greater than or equal to input.shape\[-1\]"),
    ("eigh-uplo", lambda m: m.linalg.eigh(m.eye(2), UPLO="X"), "UPLO"),
    ("vander-N", lambda m: m.linalg.vander(m.ones(3), N=1), "N must be greater than 1"),
    ("cholesky-nan", lambda m: m.linalg.cholesky(m.tensor(np.array([[1.0, np.nan], [np.nan, 2.0]]))),
     "not positive-definite"),
    ("pinv-nan", lambda m: m.linalg.pinv(m.tensor(np.array([[1.0, np.nan], [np.nan, 2.0]]))), "non-finite"),
    ("matrix_rank-nan", lambda m: m.linalg.matrix_rank(m.tensor(np.array([[1.0, np.nan], [0.0, 2.0]]))),
     "non-finite"),
    ("tensorinv-shape", lambda m: m.linalg.tensorinv(m.ones(2, 3), ind=1), "prod"),
]


@pytest.mark.parametrize("name, fn, pattern", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn, pattern):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    want = tl.linalg.LinAlgError if isinstance(theirs.value, torch.linalg.LinAlgError) else theirs.type
    with pytest.raises(want) as ours:
        fn(tl)
    assert re.search(pattern, str(ours.value)), f"ours: {ours.value!s}\ntorch: {theirs.value!s}"


@pytest.mark.parametrize("name, fn, arrays", [
    ("linalg.cond-1", lambda m, a: m.linalg.cond(a, 1), [B3_44]),
    ("linalg.cond-fro", lambda m, a: m.linalg.cond(a, "fro"), [A33]),
    ("linalg.cond-inf", lambda m, a: m.linalg.cond(a, -float("inf")), [A33]),
    ("linalg.cond-nuc", lambda m, a: m.linalg.cond(a, "nuc"), [A33]),
    ("vander", lambda m, x: m.vander(x), [np.array([0.0, 1.5, -2.0])]),
    ("vander-int", lambda m, x: m.vander(x, 4), [np.array([1, 2, 3])]),
    ("vander-increasing", lambda m, x: m.vander(x, N=5, increasing=True), [RNG.standard_normal(3)]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_values_where_torchs_own_backward_fails(name, fn, arrays):
    # (torch's cond for these orders and its vander raise in their own backward: values only)
    got, want = fn(tl, *[tl.tensor(a) for a in arrays]), fn(torch, *[torch.tensor(a) for a in arrays])
    assert_close(got, want, atol=1e-9, rtol=1e-7)


def test_linalg_error_is_a_runtime_error_as_torchs():
    assert issubclass(tl.linalg.LinAlgError, RuntimeError)
    with pytest.raises(tl.linalg.LinAlgError):
        tl.linalg.inv(tl.tensor(SING))
    with pytest.raises(tl.linalg.LinAlgError):
        tl.linalg.cholesky(tl.tensor(NOTPD))


def test_singular_ex_results_report_info_and_do_not_raise():
    for name in ("inv_ex", "solve_ex"):
        args = (tl.tensor(SING),) if name == "inv_ex" else (tl.tensor(SING), tl.ones(2, dtype=tl.float64))
        targs = (torch.tensor(SING),) if name == "inv_ex" else (torch.tensor(SING), torch.ones(2, dtype=torch.float64))
        got, want = getattr(tl.linalg, name)(*args), getattr(torch.linalg, name)(*targs)
        assert_close(got[1], want[1])
        assert not np.isfinite(got[0].numpy()).all()
    assert_close(tl.linalg.slogdet(tl.tensor(SING)).logabsdet, torch.linalg.slogdet(torch.tensor(SING)).logabsdet)
    assert_close(tl.logdet(-tl.eye(3)), torch.logdet(-torch.eye(3)))
    assert_close(tl.linalg.cond(tl.tensor(SING), 1), torch.linalg.cond(torch.tensor(SING), 1))


# ---- on a second memory space and the CUDA backend (the factorizations run on the host) -----------------------
def _device_workload(device):
    a = tl.tensor(B3_44.astype(np.float32), device=device, requires_grad=True)
    s = tl.tensor(SPD_B.astype(np.float32), device=device, requires_grad=True)
    t = tl.tensor(TALL_B.astype(np.float32), device=device, requires_grad=True)
    outs = [tl.linalg.inv(a), tl.linalg.det(a), tl.linalg.slogdet(a).logabsdet, tl.linalg.solve(a, a.sin()),
            tl.linalg.cholesky(s), tl.linalg.eigh(s).eigenvalues, *tl.linalg.qr(t), tl.linalg.pinv(t),
            tl.linalg.lstsq(t, t.cos()).solution, tl.linalg.matrix_exp(a / 4), tl.linalg.lu_factor(a).LU,
            tl.linalg.lu_solve(*tl.linalg.lu_factor(a), a.cos()), tl.linalg.solve_triangular(s, a[0, 0, :3, :],
                                                                                          upper=False)]
    sum(o.sum() for o in outs).backward()
    return outs + [a.grad, s.grad, t.grad]


def test_the_decompositions_run_on_a_second_memory_space(dev):
    for got, want in zip(_device_workload("testdev"), _device_workload("cpu")):
        assert got.device == dev and got.dtype is want.dtype
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-4)


def test_the_decompositions_on_the_cuda_backend():
    from emu_driver import cuda_device
    gen = cuda_device()
    next(gen)
    try:
        for got, want in zip(_device_workload("cuda"), _device_workload("cpu")):
            assert got.dtype is want.dtype
            np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-4)
    finally:
        gen.close()


@pytest.mark.filterwarnings("ignore:.*(frobenius|nuclear)_norm is deprecated")
def test_deprecated_frobenius_and_nuclear_norms_match_torch_with_gradients():
    a = np.random.default_rng(5).standard_normal((2, 3, 4))
    for fn, args, kwargs in [("frobenius_norm", ((1, 2),), {}), ("frobenius_norm", ([2],), {"keepdim": True}),
                             ("nuclear_norm", (), {}), ("nuclear_norm", ((0, 2),), {"keepdim": True}),
                             ("nuclear_norm", (True,), {})]:
        x, tx = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        ours, theirs = getattr(tl, fn)(x, *args, **kwargs), getattr(torch, fn)(tx, *args, **kwargs)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)
        ours.sum().backward()
        theirs.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.warns(UserWarning, match="deprecated"):
        tl.frobenius_norm(tl.ones(2, 2), (0, 1))
