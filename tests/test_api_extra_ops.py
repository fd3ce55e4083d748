"""bincount, histc, histogram, index_reduce and the SVD family against PyTorch: what the conformance rows
(tests/conformance/rows_extra.py) do not cover. Return types, result dtypes (bincount's weights rule), edge cases
(empty inputs, minlength, constant data, NaN and out-of-range values, bin edges, density, include_self=False,
ties, repeated and zero singular values), non-differentiable results, error types and messages, in-place
versions, second derivatives, and finite-difference gradient checks in float64."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, both, close_all, pair, raises_like

import tinygrad_like as tl
from tinygrad_like.autograd.gradcheck import gradcheck

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta:UserWarning")  # (torch's own)
NAN, INF = float("nan"), float("inf")
RNG = np.random.default_rng(23)


# ---- return types -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,fields,call", [
    ("histogram", ("hist", "bin_edges"), lambda m, x: m.histogram(x, 3)),
    ("linalg_svd", ("U", "S", "Vh"), lambda m, x: m.linalg.svd(x)),
    ("svd", ("U", "S", "V"), lambda m, x: m.svd(x))])
def test_named_tuples_named_like_torch(name, fields, call):
    ours, theirs = both(call, np.arange(6.0).reshape(2, 3))
    assert type(ours).__name__ == name == type(theirs).__name__.split(".")[-1]
    assert isinstance(ours, getattr(tl.return_types, name)) and ours._fields == fields
    assert all(getattr(ours, f) is v for f, v in zip(fields, ours))


# ---- bincount -----------------------------------------------------------------------------------------
VALUES = np.array([0, 3, 1, 1, 5, 3, 3])


@pytest.mark.parametrize("wdtype", [None, "float32", "float64", "float16", "int64", "int32", "bool"])
@pytest.mark.parametrize("minlength", [0, 4, 10])
def test_bincount_values_and_dtypes(wdtype, minlength):
    if wdtype is None:
        ours, theirs = both(lambda m, x: m.bincount(x, minlength=minlength), VALUES)
    else:
        w = RNG.standard_normal(VALUES.size) if wdtype.startswith("float") else RNG.integers(0, 3, VALUES.size)
        (w_tl, w_th) = pair(w.astype(bool) if wdtype == "bool" else w, dtype=wdtype)
        ours, theirs = both(lambda m, x: x.bincount(w_tl if m is tl else w_th, minlength), VALUES)
    assert_close(ours, theirs, atol=1e-3, rtol=1e-3)  # (float16 weights are summed as float64, as torch's)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_bincount_integer_inputs(dtype):
    close_all(*both(lambda m, x: m.bincount(x.to(getattr(m, dtype) if dtype != "uint8" else m.uint8)), VALUES))


def test_bincount_empty_input_is_int64_zeros_even_with_weights():
    for w in (None, np.zeros(0, np.float32), np.zeros(0)):
        ours, theirs = both(lambda m, x, *ws: m.bincount(x, *ws, minlength=3), np.zeros(0, np.int64),
                            *([] if w is None else [w]))
        assert_close(ours, theirs)
        assert ours.dtype is tl.int64


def test_bincount_non_contiguous_and_nan_weights():
    close_all(*both(lambda m, x, w: m.bincount(x[::2], w[::2]), np.arange(8) % 3, np.array([1.0, NAN] * 4)))


def test_bincount_is_not_differentiable():
    for m in (tl, torch):
        w = m.tensor([0.5, 1.0, 2.0], requires_grad=True)
        out = m.tensor([0, 2, 2]).bincount(w)
        assert out.requires_grad and m.tensor([0, 2]).bincount().requires_grad is False
        with pytest.raises(RuntimeError, match="derivative for aten::bincount is not implemented"):
            out.sum().backward()
        assert not m.tensor([0, 2, 2]).bincount(w.detach()).requires_grad
    with tl.no_grad():
        assert not tl.tensor([1]).bincount(tl.tensor([1.0], requires_grad=True)).requires_grad


@pytest.mark.parametrize("fn,args,match", [
    (lambda m, x: m.bincount(x), ([1, -1, 2],), "non-negative"),
    (lambda m, x: m.bincount(x), ([[1, 2]],), "1-d"),
    (lambda m, x: m.bincount(x), (np.array(2),), "1-d"),
    (lambda m, x: m.bincount(x), (np.array([1.0, 2.0], np.float32),), "not implemented for 'Float'"),
    (lambda m, x: m.bincount(x), ([True, False],), "not implemented for 'Bool'"),
    (lambda m, x: m.bincount(x, minlength=-1), ([1, 2],), "minlength should be >= 0"),
    (lambda m, x, w: m.bincount(x, w), ([1, 2], [1.0, 2.0, 3.0]), "same length"),
    (lambda m, x, w: m.bincount(x, w), ([1, 2], [[1.0, 2.0]]), "same length"),
])
def test_bincount_errors(fn, args, match):
    raises_like(fn, *args, match=match)


# ---- histc ----------------------------------------------------------------------------------------------
DATA = RNG.standard_normal(200).astype(np.float32)


@pytest.mark.parametrize("args", [(), (10,), (7, -1, 1), (5, 0.5, 0.5), (4, 2, 2), (3, -10, 10), (6, 0.1, 0.3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_values(args, dtype):
    close_all(*both(lambda m, x: m.histc(x, *args), DATA.astype(dtype)))


@pytest.mark.parametrize("data,args", [
    ([1.0, 1.0, 1.0], (3,)),  # constant data: the range widened by 1 each way
    ([], (3,)),  # no data: [-1, 1]
    ([1.0, NAN, 2.0, INF, -INF, 5.0], (3, 0, 3)),  # NaN, infinities and out-of-range values are not counted
    ([0.0, 3.0, 1.0, 2.0], (3, 0, 3)),  # the bounds: the last bin includes max
    (2.5, (4,)),  # 0-d
    ([[1.0, 2.0], [3.0, 4.0]], (3,)),
])
def test_histc_edge_cases(data, args):
    close_all(*both(lambda m, x: x.histc(*args), np.asarray(data, np.float32)))


def test_histc_float16_and_kwargs():
    close_all(*both(lambda m, x: m.histc(x.half(), bins=4, min=-2, max=2), DATA[:20]))
    close_all(*both(lambda m, x: m.histc(input=x, bins=4, max=1, min=-1), DATA))


def test_histc_result_does_not_require_grad():
    for m in (tl, torch):
        assert not m.histc(m.tensor([1.0, 2.0], requires_grad=True), 3).requires_grad


@pytest.mark.parametrize("fn,data,match", [
    (lambda m, x: m.histc(x.long(), 3), [1.0, 2.0], "not implemented for 'Long'"),
    (lambda m, x: m.histc(x, 0), [1.0, 2.0], "bins must be > 0"),
    (lambda m, x: m.histc(x, -1), [1.0, 2.0], "bins must be > 0"),
    (lambda m, x: m.histc(x, 2.5), [1.0, 2.0], "must be int"),
    (lambda m, x: m.histc(x, 3, 3, 1), [1.0, 2.0], "max must be larger than min"),
    (lambda m, x: m.histc(x, 3, NAN, 1), [1.0, 2.0], "is not finite"),
    (lambda m, x: m.histc(x, 3, 0, INF), [1.0, 2.0], "is not finite"),
    (lambda m, x: m.histc(x, 3), [1.0, INF], "is not finite"),
    (lambda m, x: m.histc(x, 3), [1.0, NAN], "is not finite"),
])
def test_histc_errors(fn, data, match):
    raises_like(fn, np.asarray(data, np.float32), match=match)


# ---- histogram --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [{}, {"range": (-1.0, 1.0)}, {"range": (0, 3)}, {"density": True},
                                {"weight": True}, {"weight": True, "density": True, "range": (-2.0, 0.5)}])
@pytest.mark.parametrize("bins", [1, 4, 10])
def test_histogram_int_bins(bins, kw, dtype):
    x = DATA.astype(dtype)
    w = RNG.random(x.shape).astype(dtype)

    def fn(m, x, w):
        k = dict(kw)
        if k.pop("weight", False):
            k["weight"] = w
        return m.histogram(x, bins, **k)
    close_all(*both(fn, x, w))


@pytest.mark.parametrize("edges", [[-1.0, 0.0, 1.0], [-3.0, -0.5, 0.0, 0.2, 3.0], [0.0, 10.0], [0.5, 0.5, 1.0]])
@pytest.mark.parametrize("density", [False, True])
def test_histogram_tensor_bins(edges, density):
    close_all(*both(lambda m, x, e, w: x.histogram(e, weight=w, density=density), DATA,
                    np.asarray(edges, np.float32), RNG.random(DATA.shape).astype(np.float32)))
    close_all(*both(lambda m, x, e: m.histogram(x, bins=e), DATA, np.asarray(edges, np.float32)))


@pytest.mark.parametrize("data", [[], [2.0, 2.0], 3.0, [[1.0, 2.0], [3.0, 4.0]], [1.0, NAN, 2.0]])
def test_histogram_edge_cases(data):
    x = np.asarray(data, np.float32)
    if np.isnan(x).any():  # (NaN: no data range; with an explicit range it is not counted)
        close_all(*both(lambda m, x: m.histogram(x, 3, range=(0.0, 3.0)), x))
        raises_like(lambda m, x: m.histogram(x, 3), x, match="is not finite")
    else:
        close_all(*both(lambda m, x: m.histogram(x, 3), x))


def test_histogram_is_not_differentiable():
    for m in (tl, torch):
        x = m.tensor([1.0, 2.0, 2.5], requires_grad=True)
        hist, edges = m.histogram(x, 2)
        assert hist.requires_grad and edges.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::histogram is not implemented"):
            hist.sum().backward()
        w = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        assert m.histogram(x.detach(), 2, weight=w).hist.requires_grad
        assert not m.histogram(x.detach(), 2).hist.requires_grad


@pytest.mark.parametrize("fn,match", [
    (lambda m, x: m.histogram(x.long(), 3), "not implemented for 'Long'"),
    (lambda m, x: m.histogram(x.half(), 3), "not implemented for 'Half'"),
    (lambda m, x: m.histogram(x, 0), "bins must be > 0"),
    (lambda m, x: m.histogram(x, 3, range=(3.0, 1.0)), "min should not exceed max"),
    (lambda m, x: m.histogram(x, 3, range=(0.0, INF)), "is not finite"),
    (lambda m, x: m.histogram(x, 3, range=(0.0, 1.0, 2.0)), "should have 2 elements"),
    (lambda m, x: m.histogram(x, m.tensor([[0.0, 2.0]])), "one dimension"),
    (lambda m, x: m.histogram(x, m.tensor([])), "at least 1 element"),
    (lambda m, x: m.histogram(x, m.tensor([1.0])), "bins must be > 0"),
    (lambda m, x: m.histogram(x, m.tensor([0.0, 2.0], dtype=m.float64)), "same dtype"),
    (lambda m, x: m.histogram(x, 3, weight=m.tensor([1.0, 2.0])), "same shape"),
    (lambda m, x: m.histogram(x, 3, weight=x.double()), "same dtype"),
    (lambda m, x: m.histogram(x, [0.0, 1.0, 2.0]), None),
])
def test_histogram_errors(fn, match):
    raises_like(fn, np.array([1.0, 2.0, 1.0, 2.5, 4.0], np.float32), match=match)


# ---- index_reduce -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32"])
def test_index_reduce_dtypes(reduce, include_self, dtype):
    x = RNG.integers(-4, 5, (4, 3)).astype(dtype)
    s = RNG.integers(-4, 5, (5, 3)).astype(dtype)
    close_all(*both(lambda m, x, s: x.index_reduce(0, m.tensor([0, 2, 0, 3, 0]), s, reduce,
                                                   include_self=include_self), x, s))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_nan_int32_index_and_function(reduce):
    x = np.array([[1.0, NAN], [2.0, 3.0], [4.0, 5.0]])
    s = np.array([[NAN, 1.0], [0.5, 2.0]])
    close_all(*both(lambda m, x, s: m.index_reduce(x, 0, m.tensor([2, 0], dtype=m.int32), s, reduce), x, s))
    s2 = np.array([[NAN, 1.0], [0.5, 2.0], [2.0, 0.5]])
    close_all(*both(lambda m, x, s: m.index_reduce(x, 1, m.tensor([1, 1]), s, reduce, include_self=False), x, s2))


def test_index_reduce_in_place_bumps_version_and_keeps_history():
    for m in (tl, torch):
        x = m.ones(3, 2)
        v = x._version
        assert x.index_reduce_(0, m.tensor([1, 1]), m.tensor([[2.0, 3.0], [4.0, 5.0]]), "prod") is x
        assert x._version == v + 1 and x.tolist() == [[1.0, 1.0], [8.0, 15.0], [1.0, 1.0]]
    ours, theirs = both(lambda m, a, s: (a * 2).index_reduce_(0, m.tensor([0, 0]), s, "amax", include_self=False),
                        np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.5, 9.0], [0.7, -1.0]]), requires_grad=True)
    assert ours.grad_fn is not None and theirs.grad_fn is not None
    assert_close(ours, theirs)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_gradcheck(reduce, include_self):
    x = tl.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    s = tl.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
    idx = tl.tensor([2, 0, 2, 2, 1])  # (repeats: three source columns meet in column 2; column 3 is not written)
    assert gradcheck(lambda x, s: x.index_reduce(1, idx, s, reduce, include_self=include_self) * 1.5, (x, s),
                     eps=1e-6, atol=1e-6, rtol=1e-5)


def test_index_reduce_prod_with_zeros_gradient():
    """Several zeros meeting in one slot, a zero in self: torch's exact products of the other factors."""
    x = np.array([[0.0, 2.0], [3.0, 0.0], [1.5, 2.5]])
    s = np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 3.0], [4.0, 5.0]])
    for inc in (True, False):
        ins = [pair(a, requires_grad=True) for a in (x, s)]
        outs = [a.index_reduce(0, m.tensor([0, 1, 0, 1]), b, "prod", include_self=inc)
                for m, a, b in ((tl, ins[0][0], ins[1][0]), (torch, ins[0][1], ins[1][1]))]
        g = RNG.standard_normal(outs[1].shape)
        outs[0].backward(tl.tensor(g))
        outs[1].backward(torch.tensor(g))
        assert_close(ins[0][0].grad, ins[0][1].grad)
        assert_close(ins[1][0].grad, ins[1][1].grad)


@pytest.mark.parametrize("fn,match", [
    (lambda m, x, s: x.index_reduce(0, m.tensor([0, 2]), s, "sum"), "one of prod, mean, amax or amin"),
    (lambda m, x, s: x.index_reduce(0, m.tensor([0, 2]), s, "max"), "one of prod, mean, amax or amin"),
    (lambda m, x, s: x.index_reduce(0, m.tensor([0.0, 2.0]), s, "prod"), "int32/int64"),
    (lambda m, x, s: x.index_reduce(0, m.tensor([[0, 2]]), s, "prod"), "supposed to be a vector"),
    (lambda m, x, s: x.index_reduce(0, m.tensor([0, 5]), s, "prod"), "index out of range"),
    (lambda m, x, s: x.index_reduce(0, m.tensor([0, -1]), s, "prod"), "index out of range"),
    (lambda m, x, s: x.index_reduce(0, m.tensor([0, 2]), s.double(), "prod"), "same scalar type"),
    (lambda m, x, s: x.index_reduce(0, m.tensor([0, 2]), s[:, :3], "prod"), "source tensor shape must match"),
    (lambda m, x, s: x.index_reduce(0, m.tensor([0]), s, "prod"), "Number of indices"),
    (lambda m, x, s: x.index_reduce(2, m.tensor([0, 2]), s, "prod"), "out of range"),
    (lambda m, x, s: x.index_reduce(0, m.tensor(1), s[0], "amax"), "Number of indices"),
])
def test_index_reduce_errors(fn, match):
    raises_like(fn, np.ones((3, 4), np.float32), np.arange(8.0, dtype=np.float32).reshape(2, 4), match=match)


# ---- SVD -------------------------------------------------------------------------------------------------
SHAPES = [(3, 4), (4, 3), (3, 3), (2, 3, 5), (2, 1, 5, 2), (1, 1)]


def _reconstructs(U, S, Vh, A, atol):
    k = S.shape[-1]
    np.testing.assert_allclose((U[..., :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], A, atol=atol)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_values_shapes_dtypes(shape, full, dtype):
    A = RNG.standard_normal(shape).astype(dtype)
    ours, theirs = both(lambda m, a: m.linalg.svd(a, full_matrices=full), A)
    atol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(ours, theirs):
        assert a.shape == tuple(b.shape) and a.dtype.name == str(b.dtype).split(".")[-1]
    assert_close(ours.S, theirs.S, atol=atol, rtol=atol)
    if not full or shape[-2] <= shape[-1]:  # (U is unique up to its columns' signs; a full U's extra ones are not)
        assert_close(ours.U.abs(), theirs.U.abs(), atol=atol * 10, rtol=atol * 10)
    _reconstructs(*ours, tl.tensor(A), atol * 10)
    eye = np.broadcast_to(np.eye(ours.U.shape[-1]), ours.U.mT.shape[:-2] + (ours.U.shape[-1],) * 2)
    np.testing.assert_allclose(ours.U.mT @ ours.U, eye, atol=atol * 10)
    assert_close(tl.linalg.svdvals(tl.tensor(A)), torch.linalg.svdvals(torch.tensor(A)), atol=atol, rtol=atol)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3), (0, 2, 3), (0, 0)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_of_empty_matrices(shape, full):
    close_all(*both(lambda m, a: m.linalg.svd(a, full), np.zeros(shape)))
    close_all(*both(lambda m, a: m.linalg.svdvals(a), np.zeros(shape)))


@pytest.mark.parametrize("some", [True, False])
def test_old_svd(some):
    A = RNG.standard_normal((2, 3, 4))
    ours, theirs = both(lambda m, a: m.svd(a, some=some), A)
    assert [x.shape for x in ours] == [tuple(x.shape) for x in theirs]
    assert_close(ours.S, theirs.S)
    k = ours.S.shape[-1]
    np.testing.assert_allclose((ours.U[..., :k] * ours.S.unsqueeze(-2)) @ ours.V[..., :k].mT, A, atol=1e-12)
    close_all(*both(lambda m, a: m.svd(a, compute_uv=False), A))
    close_all(*both(lambda m, a: a.svd(some, False), A[0]))


def test_svd_requires_grad_and_no_grad():
    for m in (tl, torch):
        A = m.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
        assert all(t.requires_grad for t in m.linalg.svd(A))
        U, S, V = m.svd(A, compute_uv=False)
        assert S.requires_grad and not U.requires_grad and not V.requires_grad
        with m.no_grad():
            assert not any(t.requires_grad for t in m.linalg.svd(A))
            assert not m.linalg.svdvals(A).requires_grad


def test_svd_inf_gives_nan_and_nan_raises():
    for m in (tl, torch):
        r = m.linalg.svd(m.tensor([[1.0, INF], [0.0, 1.0]]))
        assert bool(r.S.isnan().all())
        with pytest.raises(RuntimeError, match="failed to converge because the input matrix contained non-finite"):
            m.linalg.svd(m.tensor([[1.0, NAN], [3.0, 4.0]]))
    assert issubclass(tl.linalg.LinAlgError, RuntimeError)
    with pytest.raises(tl.linalg.LinAlgError):
        tl.linalg.svdvals(tl.tensor([[1.0, NAN], [3.0, 4.0]]))


@pytest.mark.parametrize("fn,data,match", [
    (lambda m, a: m.linalg.svd(a), [1.0, 2.0], "at least 2 dimensions"),
    (lambda m, a: m.linalg.svdvals(a), [1.0, 2.0], "at least 2 dimensions"),
    (lambda m, a: m.svd(a), [1.0, 2.0], "at least 2 dimensions"),
    (lambda m, a: m.linalg.svd(a.long()), [[1.0, 2.0]], "Expected a floating point"),
    (lambda m, a: m.linalg.svdvals(a.long()), [[1.0, 2.0]], "Expected a floating point"),
    (lambda m, a: m.linalg.svd(a.half()), [[1.0, 2.0]], "not implemented for"),
    (lambda m, a: m.linalg.svd(a, driver="gesvd"), [[1.0, 2.0]], "driver="),
])
def test_svd_errors(fn, data, match):
    raises_like(fn, np.asarray(data, np.float32), match=match)


def _invariants(r, full):
    U, S, Vh = r
    k = S.shape[-1]
    return (U[..., :k] * U[..., :k] * 0.7, S, Vh[..., :k, :] ** 2, U[..., :k] @ Vh[..., :k, :])


@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (3, 3), (2, 2, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_gradcheck(shape, full):
    A = tl.tensor(RNG.standard_normal(shape), requires_grad=True)
    assert gradcheck(lambda a: _invariants(tl.linalg.svd(a, full_matrices=full), full), (A,), eps=1e-6, atol=1e-5,
                     rtol=1e-4)


@pytest.mark.parametrize("fn", [
    lambda m, a: m.linalg.svdvals(a),
    lambda m, a: m.svd(a)[1] * m.svd(a)[0].sum(-2).abs(),
    lambda m, a: m.linalg.matrix_norm(a, "nuc"),
    lambda m, a: m.linalg.matrix_norm(a, 2, dim=(0, -1)),
    lambda m, a: m.linalg.matrix_norm(a, -2, keepdim=True),
    lambda m, a: m.linalg.cond(a),
    lambda m, a: m.linalg.cond(a, -2),
], ids=["svdvals", "old-svd", "nuc", "2", "-2", "cond", "cond-2"])
def test_svd_family_gradcheck(fn):
    A = tl.tensor(RNG.standard_normal((2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda a: fn(tl, a), (A,), eps=1e-6, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("A", [np.eye(3), np.zeros((3, 2)), np.diag([2.0, 2.0, 0.0]), np.ones((2, 4)),
                               np.array([[1.0, 0.0], [0.0, -1.0], [0.0, 0.0]])],
                         ids=["eye", "zeros", "repeated-and-zero", "rank1-wide", "orthogonal-columns"])
@pytest.mark.parametrize("fn", [lambda m, a: m.linalg.svdvals(a), lambda m, a: m.linalg.matrix_norm(a, "nuc"),
                                lambda m, a: a.norm(p="nuc"), lambda m, a: m.linalg.svd(a).S.sum()],
                         ids=["svdvals", "nuc", "norm-nuc", "svd-S"])
def test_singular_value_gradients_at_repeated_and_zero_values(A, fn):
    """Only S is used: torch's gradient U diag(g) Vh, finite however the singular values tie (no 0/0). (Where they
    tie the singular vectors are not unique, and neither is this (sub)gradient: NumPy's LAPACK and torch's pick the
    same vectors for these matrices.)"""
    a, b = pair(A, requires_grad=True)
    ours, theirs = fn(tl, a), fn(torch, b)
    assert_close(ours, theirs)
    ours.sum().backward()
    theirs.sum().backward()
    assert np.isfinite(a.grad.numpy()).all()
    assert_close(a.grad, b.grad)


def test_svd_second_derivative_matches_torch():
    A = RNG.standard_normal((3, 4))
    v = RNG.standard_normal((3, 4))
    res = []
    for m in (tl, torch):
        a = m.tensor(A, requires_grad=True)
        (g,) = m.autograd.grad(m.linalg.matrix_norm(a, "nuc") + m.linalg.svdvals(a)[0] ** 2, [a], create_graph=True)
        (h,) = m.autograd.grad((g * m.tensor(v)).sum(), [a])
        res.append((g, h))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1], atol=1e-8, rtol=1e-7)


# ---- the norms of singular values, cond ---------------------------------------------------------------------
@pytest.mark.parametrize("ord", ["nuc", 2, -2, 2.0])
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((0, 2), True), ((2, 1), False), ((1, 0), True)])
def test_matrix_norms_of_singular_values(ord, dim, keepdim):
    close_all(*both(lambda m, a: m.linalg.matrix_norm(a, ord, dim, keepdim), RNG.standard_normal((2, 3, 4))))
    close_all(*both(lambda m, a: m.linalg.norm(a, ord, dim, keepdim), RNG.standard_normal((2, 3, 4))))


def test_norm_spellings_and_dtype():
    A = RNG.standard_normal((3, 4)).astype(np.float32)
    close_all(*both(lambda m, a: m.linalg.norm(a, 2), A))
    close_all(*both(lambda m, a: m.linalg.norm(a, "nuc"), A))
    close_all(*both(lambda m, a: a.norm(p="nuc"), A))
    close_all(*both(lambda m, a: m.norm(a, p="nuc", dim=(1, 0)), A))
    close_all(*both(lambda m, a: m.linalg.matrix_norm(a, -2, dtype=m.float64), A))
    close_all(*both(lambda m, a: a.norm("nuc", dim=(0, 1), keepdim=True, dtype=m.float64), A))


def test_matrix_norms_of_empty_matrices():
    for shape in [(0, 3), (3, 0), (2, 0, 3), (0, 2, 3)]:
        for ord in ("nuc", 2):
            ours, theirs = both(lambda m, a, o=ord: m.linalg.matrix_norm(a, o), np.zeros(shape), requires_grad=True)
            assert_close(ours, theirs)
            assert ours.requires_grad == theirs.requires_grad
    raises_like(lambda m, a: m.linalg.matrix_norm(a, -2), np.zeros((0, 3)), match="non-zero size")


@pytest.mark.parametrize("fn,data,match", [
    (lambda m, a: m.linalg.matrix_norm(a.long(), "nuc"), np.ones((2, 2)), "floating point"),
    (lambda m, a: m.linalg.matrix_norm(a, 3), np.ones((2, 2)), "Order 3"),
    (lambda m, a: m.linalg.matrix_norm(a, "nuc", dim=(0, 0)), np.ones((2, 2)), "dims must be different"),
    (lambda m, a: m.norm(a, "nuc"), np.ones((2, 2, 2)), "2-tuple"),
    (lambda m, a: m.linalg.norm(a, 2), np.ones((2, 2, 2)), "1D or 2D"),
    (lambda m, a: m.linalg.norm(a, "nuc"), np.ones(3), None),
])
def test_matrix_norm_errors(fn, data, match):
    raises_like(fn, data, match=match)


@pytest.mark.parametrize("p", [None, 2, -2])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3), (3, 2), (2, 4, 4), (2, 0, 0), (2, 0, 3)])
def test_cond(p, shape):
    close_all(*both(lambda m, a: m.linalg.cond(a, p), RNG.standard_normal(shape)))


def test_cond_of_singular_matrix():
    close_all(*both(lambda m, a: (m.linalg.cond(a), m.linalg.cond(a, -2)), np.diag([2.0, 1.0, 0.0])))


@pytest.mark.parametrize("fn,data,exc,match", [
    (lambda m, a: m.linalg.cond(a), np.ones(3), RuntimeError, "at least 2 dimensions"),
    (lambda m, a: m.linalg.cond(a.long()), np.ones((2, 2)), RuntimeError, "floating point"),
    (lambda m, a: m.linalg.cond(a, 3), np.ones((2, 2)), RuntimeError, "invalid norm type"),
    (lambda m, a: m.linalg.cond(a, "abc"), np.ones((2, 2)), RuntimeError, "invalid norm type"),
    (lambda m, a: m.linalg.cond(a, "fro"), np.ones((2, 3)), RuntimeError, "square matrices"),
    (lambda m, a: m.linalg.cond(a, 1), np.ones((3, 2)), RuntimeError, "square matrices"),
])
def test_cond_errors(fn, data, exc, match):
    raises_like(fn, data, match=match)


@pytest.mark.parametrize("p", ["fro", "nuc", 1, -1, INF, -INF])
def test_cond_orders_that_need_an_inverse(p):
    """torch computes these with an inverse, as tinygrad_like does."""
    a = np.array([[2.0, 1.0], [0.5, 3.0]], dtype=np.float32)
    want = torch.linalg.cond(torch.tensor(a), p).item()
    assert tl.linalg.cond(tl.tensor(a), p).item() == pytest.approx(want, rel=1e-5)
