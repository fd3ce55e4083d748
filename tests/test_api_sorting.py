"""The sorting family's API against PyTorch: what the conformance table (tests/conformance/rows_sorting.py) does not
cover. Non-differentiable ops (argsort, unique, searchsorted, bucketize, count_nonzero), integer and bool dtypes,
ties and NaN, return types, keyword spellings (``keepdims=``, ``axis=``), error cases with their messages, the
in-place random fills and their version bumps, sampling distributions under fixed seeds, and finite-difference
gradient checks in float64."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_close, both, close_all, pair, raises_like

import tinygrad_like as tl
from tinygrad_like.autograd.gradcheck import gradcheck

torch = pytest.importorskip("torch")
NAN, INF = float("nan"), float("inf")


RNG = np.random.default_rng(17)
TIES = RNG.integers(0, 3, (4, 7)).astype(np.float32)
DISTINCT = RNG.standard_normal((4, 7)).astype(np.float32)
WITH_NAN = np.array([[3.0, NAN, 1.0, NAN, 2.0], [1.0, 1.0, 2.0, 2.0, 0.0], [NAN, NAN, NAN, NAN, NAN]], np.float32)


# ---- return types --------------------------------------------------------------------------------
@pytest.mark.parametrize("name,call", [
    ("topk", lambda x: x.topk(2)), ("sort", lambda x: x.sort()), ("kthvalue", lambda x: x.kthvalue(1)),
    ("median", lambda x: x.median(0)), ("nanmedian", lambda x: x.nanmedian(0)), ("mode", lambda x: x.mode()),
    ("cummax", lambda x: x.cummax(0)), ("cummin", lambda x: x.cummin(0))])
def test_value_index_ops_return_named_tuples_named_like_torch(name, call):
    r = call(tl.tensor([3.0, 1.0, 2.0]))
    assert type(r).__name__ == name == type(call(torch.tensor([3.0, 1.0, 2.0]))).__name__.split(".")[-1]
    values, indices = r
    assert r.values is values and r.indices is indices and r._fields == ("values", "indices")
    assert indices.dtype is tl.int64 and not indices.requires_grad


# ---- sort, argsort, msort, topk --------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_stable_sort_on_ties_matches_torch_indices(descending, dim):
    close_all(*both(lambda m, x: tuple(m.sort(x, dim=dim, descending=descending, stable=True)), TIES))
    close_all(*both(lambda m, x: m.argsort(x, dim=dim, descending=descending, stable=True), TIES))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_puts_nan_above_every_number(descending):
    close_all(*both(lambda m, x: tuple(x.sort(dim=-1, descending=descending, stable=True)), WITH_NAN))
    close_all(*both(lambda m, x: tuple(x.sort(dim=0, descending=descending, stable=True)), WITH_NAN))


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "float16"])
def test_sort_and_argsort_of_integer_bool_and_half_tensors(dtype):
    a = RNG.integers(0, 4, (3, 6))
    close_all(*both(lambda m, x: tuple(x.sort(dim=1, stable=True)), a.astype(tl.tensor(0, dtype=getattr(tl, dtype))
                                                                           .numpy().dtype)))
    x, y = pair(a, dtype=dtype)
    assert_close(x.argsort(dim=0, stable=True), y.argsort(dim=0, stable=True))
    assert_close(x.msort(), torch.msort(y))


def test_sort_of_0d_and_empty_tensors():
    close_all(*both(lambda m, x: tuple(x.sort()), np.float32(3.0)))
    close_all(*both(lambda m, x: tuple(x.sort(0)), np.zeros((0, 3), np.float32)))
    close_all(*both(lambda m, x: m.argsort(x), np.float32(3.0)))


def test_sort_errors():
    raises_like(lambda m, x: x.sort(2), np.ones((2, 3)), match="Dimension out of range")


def test_topk_values_on_ties_and_nan():
    close_all(*both(lambda m, x: x.topk(3).values, TIES))
    close_all(*both(lambda m, x: x.topk(3, dim=0, largest=False).values, TIES))
    close_all(*both(lambda m, x: tuple(x.topk(2)), WITH_NAN[:1]))  # NaN is the largest
    close_all(*both(lambda m, x: tuple(x.topk(2, largest=False)), WITH_NAN[:1]))
    close_all(*both(lambda m, x: x.topk(3).values, WITH_NAN))
    close_all(*both(lambda m, x: tuple(m.topk(x, 2, 0, True, True)), DISTINCT))
    close_all(*both(lambda m, x: tuple(x.topk(0)), DISTINCT))
    close_all(*both(lambda m, x: x.topk(2).values, np.array([[5, 1, 5, 3]], np.int64)))


def test_topk_errors():
    raises_like(lambda m, x: x.topk(4), np.ones(3, np.float32), match="selected index k out of range")
    raises_like(lambda m, x: x.topk(-1), np.ones(3, np.float32), match="selected index k out of range")
    raises_like(lambda m, x: x.topk(1), np.ones(3, bool), match="bool")


# ---- order statistics -----------------------------------------------------------------------------
def test_kthvalue_values_on_ties_and_integers():
    for k in (1, 3, 7):
        close_all(*both(lambda m, x, k=k: x.kthvalue(k).values, TIES))
    close_all(*both(lambda m, x: tuple(x.kthvalue(2, 0, keepdim=True)), DISTINCT))
    close_all(*both(lambda m, x: tuple(m.kthvalue(x, 2, dim=1)), RNG.permutation(12).reshape(3, 4)))


def test_kthvalue_errors():
    raises_like(lambda m, x: x.kthvalue(4), np.ones(3, np.float32), match="k out of range for dimension 0")
    raises_like(lambda m, x: x.kthvalue(0), np.ones(3, np.float32), match="k out of range for dimension 0")
    raises_like(lambda m, x: x.kthvalue(1), np.ones(0, np.float32), match="non-zero size")


def test_median_and_nanmedian_with_nans_match_torch():
    close_all(*both(lambda m, x: tuple(x.median(1)), WITH_NAN))  # a NaN row's median is its first NaN
    close_all(*both(lambda m, x: tuple(x.nanmedian(1)), WITH_NAN[:2]))
    close_all(*both(lambda m, x: x.nanmedian(1).values, WITH_NAN))  # (an all-NaN row: NaN)
    close_all(*both(lambda m, x: x.median(), WITH_NAN))
    close_all(*both(lambda m, x: m.nanmedian(x), WITH_NAN))
    close_all(*both(lambda m, x: x.median(), np.zeros(0, np.float32)))
    close_all(*both(lambda m, x: x.nanmedian(), np.zeros(0, np.float32)))


def test_median_lower_middle_ints_and_keepdim():
    close_all(*both(lambda m, x: x.median(), np.array([1, 2, 3, 4], np.int64)))
    close_all(*both(lambda m, x: tuple(x.median(0, keepdim=True)), RNG.permutation(12).reshape(4, 3)))
    close_all(*both(lambda m, x: x.median(1).values, TIES))
    close_all(*both(lambda m, x: tuple(x.median(0)), np.float32(3.0)))


def test_median_gradient_is_shared_by_equal_elements_as_torch():
    for a in ([1.0, 2.0, 2.0, 3.0], [1.0, NAN, 2.0, NAN], [2.0, 2.0, 2.0]):
        for op in ("median", "nanmedian"):
            x, y = pair(np.array(a), requires_grad=True)
            getattr(x, op)().backward()
            getattr(y, op)().backward()
            assert_close(x.grad, y.grad)


def test_mode_picks_the_smallest_most_frequent_value_and_its_last_index():
    close_all(*both(lambda m, x: tuple(x.mode(1)), np.array([[1, 2, 2, 1, 3], [5, 5, 4, 4, 4]], np.int64)))
    close_all(*both(lambda m, x: tuple(x.mode(0, keepdim=True)), TIES))
    close_all(*both(lambda m, x: tuple(m.mode(x)), np.array([2.0, 1.0, 1.0, 2.0, 3.0, 3.0])))
    close_all(*both(lambda m, x: tuple(x.mode()), np.array([True, False, False])))
    raises_like(lambda m, x: x.mode(1), np.ones((2, 0), np.float32), match="non-zero size")
    raises_like(lambda m, x: x.median(1), np.ones((2, 0), np.float32), match="non-zero size")


def test_picked_indices_written_in_place_before_backward_are_refused():
    x = tl.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, indices = x.sort()
    indices.add_(0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        values.sum().backward()


# ---- unique --------------------------------------------------------------------------------------
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("counts", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_unique_matches_torch(inverse, counts, dim):
    a = np.array([[1, 2, 1], [1, 2, 1], [0, 3, 0]], np.int64)
    close_all(*both(lambda m, x: m.unique(x, return_inverse=inverse, return_counts=counts, dim=dim), a))
    close_all(*both(lambda m, x: x.unique(sorted=True, return_inverse=inverse, return_counts=counts), TIES))
    close_all(*both(lambda m, x: m.unique_consecutive(x, return_inverse=inverse, return_counts=counts, dim=dim),
                    np.array([[1, 1, 2], [1, 1, 2], [2, 3, 3]], np.int64)))


def test_unique_keeps_nans_apart_and_handles_empty_and_0d():
    close_all(*both(lambda m, x: m.unique(x), np.array([[1.0, 2.0], [NAN, NAN]], np.float32)))
    close_all(*both(lambda m, x: m.unique(x, return_counts=True), np.zeros(0, np.float32)))
    close_all(*both(lambda m, x: m.unique(x, return_inverse=True, return_counts=True), np.int64(3)))
    close_all(*both(lambda m, x: m.unique(x, dim=0, return_counts=True), np.zeros((0, 3), np.float32)))
    close_all(*both(lambda m, x: x.unique(sorted=False), np.array([3, 1, 2, 1, 3])))  # (sorted anyway)
    raises_like(lambda m, x: m.unique(x, dim=0), np.int64(3), match="no dimensions")
    raises_like(lambda m, x: m.unique(x, dim=2), np.ones((2, 3)), match="Dimension out of range")


# ---- searchsorted, bucketize ------------------------------------------------------------------------
SEQ = np.array([1.0, 2.0, 2.0, 4.0, 7.0], np.float32)
VALS = np.array([[0.0, 2.0, 3.0], [7.0, 8.0, 2.0]], np.float32)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_1d_and_batched(right):
    close_all(*both(lambda m, s, v: m.searchsorted(s, v, right=right), SEQ, VALS))
    close_all(*both(lambda m, s, v: m.searchsorted(s, v, side="right" if right else "left"), SEQ, VALS))
    seq2 = np.sort(RNG.standard_normal((2, 3, 6)), axis=-1)
    vals2 = RNG.standard_normal((2, 3, 4))
    close_all(*both(lambda m, s, v: m.searchsorted(s, v, right=right, out_int32=True), seq2, vals2))
    close_all(*both(lambda m, s, v: m.bucketize(v, s, right=right), SEQ, VALS))
    close_all(*both(lambda m, s, v: m.bucketize(v, s, out_int32=True, right=right), SEQ, VALS))


def test_searchsorted_scalars_promotion_and_sorter():
    s, t = pair(SEQ)
    assert_close(tl.searchsorted(s, 2.0), torch.searchsorted(t, 2.0))
    assert_close(tl.bucketize(3, s), torch.bucketize(3, t))
    close_all(*both(lambda m, s, v: m.searchsorted(s, v), np.array([1, 2, 3]), np.array([2.5, 0.5])))
    unsorted = np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    order = np.argsort(unsorted, axis=-1)
    close_all(*both(lambda m, s, v, o: m.searchsorted(s, v, sorter=o), unsorted, np.array([[2.0, 3.5], [0.0, 9.0]]),
                    order))


def test_searchsorted_errors():
    raises_like(lambda m, s, v: m.searchsorted(s, v, right=True, side="left"), SEQ, VALS, match="opposites")
    raises_like(lambda m, s, v: m.searchsorted(s, v, side="up"), SEQ, VALS, match="'left' or 'right'")
    raises_like(lambda m, s, v: m.searchsorted(s, v), np.ones((1, 3)), np.ones((2, 1)),
                match="first N-1 dimensions")
    raises_like(lambda m, s, v: m.searchsorted(s, v, sorter=m.tensor([[0, 1]])), np.ones(2), np.ones(1),
                match="same size")
    raises_like(lambda m, s, v: m.bucketize(v, s), np.ones((1, 2)), np.ones(3), match="1 dimension")
    raises_like(lambda m, s: m.searchsorted(s, 1.0), np.ones((2, 2)), match="scalar only")


# ---- products, scans, nan-aware reductions, counting ----------------------------------------------
@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_products_and_scans_of_integer_and_bool_tensors(dtype):
    a = RNG.integers(0, 3, (3, 4))
    x, y = pair(a, dtype=dtype)
    assert_close(x.prod(), y.prod())
    assert_close(x.prod(1, keepdim=True), y.prod(1, keepdim=True))
    assert_close(tl.prod(x, 0, dtype=tl.float64), torch.prod(y, 0, dtype=torch.float64))
    assert_close(x.cumprod(1), y.cumprod(1))
    assert_close(x.cumprod(0, dtype=tl.float32), y.cumprod(0, dtype=torch.float32))
    close_all(tuple(x.cummax(1)), tuple(y.cummax(1)))
    close_all(tuple(tl.cummin(x, 0)), tuple(torch.cummin(y, 0)))
    assert_close(x.nansum(), y.nansum())
    assert_close(x.count_nonzero(), y.count_nonzero())
    assert_close(tl.count_nonzero(x, dim=(0, 1)), torch.count_nonzero(y, dim=(0, 1)))


def test_cummax_cummin_with_nans_and_ties():
    a = np.array([[1.0, 3.0, 3.0, NAN, 2.0, NAN, 5.0], [3.0, 1.0, 1.0, 2.0, 0.0, 0.0, -1.0]])
    close_all(*both(lambda m, x: tuple(x.cummax(1)), a))
    close_all(*both(lambda m, x: tuple(x.cummin(1)), a))
    close_all(*both(lambda m, x: tuple(x.cummax(0)), np.float32(3.0)))


def test_prod_cumprod_logcumsumexp_edge_cases():
    close_all(*both(lambda m, x: x.prod(), np.zeros(0, np.float32)))
    close_all(*both(lambda m, x: x.prod(0, keepdim=True), np.float32(3.0)))
    close_all(*both(lambda m, x: x.logcumsumexp(0), np.array([-INF, -INF, 1.0, INF])))
    close_all(*both(lambda m, x: x.prod(0), np.zeros((0, 3))))
    raises_like(lambda m, x: x.prod((0, 1)), np.ones((2, 3)), match="must be int")
    raises_like(lambda m, x: x.logcumsumexp(0), np.array([2, 3]), match="not implemented for")


def test_logcumsumexp_gradient_with_minus_inf_as_torch():
    ours, theirs = both(lambda m, x: x, np.array([-INF, 0.0, 1.0]), requires_grad=True)
    g = np.array([1.0, -2.0, 3.0])
    ours.logcumsumexp(0).backward(tl.tensor(g))
    theirs.logcumsumexp(0).backward(torch.tensor(g))
    assert_close(ours.grad, theirs.grad)


def test_nansum_nanmean_count_nonzero_with_nans():
    a = np.array([[0.0, NAN], [2.0, 0.0], [NAN, NAN]], np.float32)
    close_all(*both(lambda m, x: m.nansum(x, 1, keepdim=True, dtype=m.float64), a))
    close_all(*both(lambda m, x: m.nanmean(x, 1), a))  # (an all-NaN row: NaN)
    close_all(*both(lambda m, x: x.nanmean(dim=0, keepdim=True), a))
    close_all(*both(lambda m, x: m.nanmean(x, dtype=m.float64), a))
    close_all(*both(lambda m, x: m.count_nonzero(x), a))  # NaN is not zero
    close_all(*both(lambda m, x: x.count_nonzero(0), a))
    raises_like(lambda m, x: x.nanmean(), np.array([2, 3]), match="floating point")


def test_std_mean_and_var_mean_are_tuples_with_torch_spellings():
    a = RNG.standard_normal((3, 4))
    for fn in (lambda m, x: m.std_mean(x), lambda m, x: m.var_mean(x, 0, correction=0, keepdim=True),
               lambda m, x: m.std_mean(x, 1, True, True), lambda m, x: m.var_mean(x, unbiased=False),
               lambda m, x: m.std_mean(x, False), lambda m, x: m.var_mean(x, dim=(0, 1), keepdim=True)):
        ours, theirs = both(fn, a)
        assert type(ours) is tuple and len(ours) == 2
        close_all(ours, theirs)


def test_std_and_var_of_one_element_are_nan_with_torch_warning():
    for op in ("std", "var"):
        x = tl.tensor([2.0], requires_grad=True)
        with pytest.warns(UserWarning, match=rf"{op}\(\): degrees of freedom is <= 0"):
            r = getattr(x, op)()
        r.backward()
        y = torch.tensor([2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = getattr(y, op)()
        s.backward()
        assert_close(r, s)
        assert_close(x.grad, y.grad)
    with pytest.warns(UserWarning):
        assert_close(tl.ones(3, 1).std(1), torch.full((3,), NAN))


# ---- keepdims= and axis=, sum(dtype=) ------------------------------------------------------------
@pytest.mark.parametrize("op", ["sum", "mean", "var", "std", "amax", "amin", "logsumexp", "any", "all", "prod",
                                "nansum", "nanmean", "argmax", "argmin"])
def test_reductions_accept_keepdims_and_axis_as_torch(op):
    a = RNG.standard_normal((2, 3))
    if op in ("any", "all"):
        a = a > 0
    ours, theirs = both(lambda m, x: getattr(x, op)(1, keepdims=True), a)
    close_all(ours, theirs)
    ours, theirs = both(lambda m, x: getattr(m, op)(x, axis=0, keepdims=True), a)
    close_all(ours, theirs)


def test_max_min_median_kthvalue_mode_accept_keepdims():
    a = RNG.standard_normal((2, 3))
    for fn in (lambda m, x: tuple(x.max(1, keepdims=True)), lambda m, x: tuple(x.min(axis=0, keepdims=True)),
               lambda m, x: tuple(x.median(1, keepdims=True)), lambda m, x: tuple(x.kthvalue(1, 0, keepdims=True)),
               lambda m, x: tuple(x.mode(1, keepdims=True)), lambda m, x: tuple(x.nanmedian(1, keepdims=True))):
        close_all(*both(fn, a))


def test_both_spellings_at_once_are_refused():
    x = tl.ones(2, 3)
    with pytest.raises(TypeError, match="alias"):
        x.sum(0, axis=1)
    with pytest.raises(TypeError, match="alias"):
        x.sum(0, keepdim=True, keepdims=True)


def test_sum_dtype_and_its_gradient_dtype():
    ours, theirs = both(lambda m, x: x, RNG.standard_normal(4).astype(np.float32), requires_grad=True)
    r, s = ours.sum(dtype=tl.float64), theirs.sum(dtype=torch.float64)
    assert_close(r, s)
    r.backward()
    s.backward()
    assert_close(ours.grad, theirs.grad)
    close_all(*both(lambda m, x: m.sum(x, 0, dtype=m.float32), np.array([[1, 2], [3, 4]], np.int32)))


# ---- multinomial --------------------------------------------------------------------------------
def test_multinomial_is_reproducible_under_manual_seed_and_a_generator():
    p = tl.tensor([[0.1, 0.5, 0.4], [1.0, 2.0, 0.0]])
    tl.manual_seed(3)
    a = tl.multinomial(p, 8, replacement=True)
    tl.manual_seed(3)
    b = p.multinomial(8, True)
    assert a.dtype is tl.int64 and a.shape == (2, 8) and a.tolist() == b.tolist()
    g1, g2 = tl.Generator(5), tl.Generator(5)
    assert tl.multinomial(p, 2, generator=g1).tolist() == tl.multinomial(p, 2, generator=g2).tolist()


def test_multinomial_with_replacement_frequencies_follow_the_weights():
    tl.manual_seed(0)
    w = np.array([1.0, 0.0, 3.0, 6.0])
    s = tl.tensor(w).multinomial(40000, replacement=True).numpy()
    freq = np.bincount(s, minlength=4) / s.size
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.01)
    assert freq[1] == 0  # a category of weight 0 is never drawn
    rows = tl.tensor([[1.0, 1.0], [0.0, 1.0]], dtype=tl.float64).multinomial(1000, True).numpy()
    assert abs(rows[0].mean() - 0.5) < 0.06 and (rows[1] == 1).all()


def test_multinomial_without_replacement_draws_each_category_once_as_sequential_draws():
    tl.manual_seed(1)
    p = tl.tensor([0.5, 0.3, 0.2]).expand(20000, 3).contiguous()
    s = tl.multinomial(p, 2).numpy()
    assert (s[:, 0] != s[:, 1]).all()
    np.testing.assert_allclose(np.bincount(s[:, 0], minlength=3) / len(s), [0.5, 0.3, 0.2], atol=0.015)
    # the third category is left out when the draws are (0, 1) or (1, 0): 0.5 * 0.3/0.5 + 0.3 * 0.5/0.7
    left_out = ((s != 2).all(axis=1)).mean()
    assert abs(left_out - (0.3 + 0.15 / 0.7)) < 0.015
    full = tl.multinomial(tl.tensor([1.0, 2.0, 3.0, 4.0]), 4).numpy()
    assert sorted(full.tolist()) == [0, 1, 2, 3]
    # weight-0 categories come only once the others are used up (torch does not refuse this either)
    assert tl.multinomial(tl.tensor([1.0, 0.0, 0.0]), 2).tolist()[0] == 0
    assert set(tl.multinomial(tl.tensor([0.0, 1.0, 0.0, 1.0]), 2).tolist()) == {1, 3}


def test_multinomial_shapes_and_device():
    assert tl.multinomial(tl.ones(0, 3), 2).shape == (0, 2)
    assert tl.multinomial(tl.ones(5, dtype=tl.float64), 1).shape == (1,)
    x = tl.ones(2, 4, device="sim")
    r = x.multinomial(3)
    assert r.device == x.device and r.shape == (2, 3)


@pytest.mark.parametrize("probs,n,kw,match", [
    ([1.0, 2.0], 3, {}, "n_sample > prob_dist.size"),
    ([1.0, -2.0], 1, {}, "element < 0"),
    ([1.0, NAN], 1, {}, "`inf`, `nan`"),
    ([1.0, INF], 1, {"replacement": True}, "`inf`, `nan`"),
    ([0.0, 0.0], 1, {}, "sum of probabilities <= 0"),
    ([[1.0, 0.0], [0.0, 0.0]], 1, {"replacement": True}, "sum of probabilities <= 0"),
    ([1, 2], 1, {}, "floating-point dtypes"),
    ([[[1.0]]], 1, {}, "1 or 2 dim"),
    ([1.0, 1.0], 0, {}, "n_sample <= 0"),
    ([1.0, 1.0], -1, {"replacement": True}, "n_sample <= 0"),
])
def test_multinomial_errors_as_torch(probs, n, kw, match):
    raises_like(lambda m, p: m.multinomial(p, n, **kw), np.array(probs), match=match)


# ---- bernoulli ---------------------------------------------------------------------------------------
def test_bernoulli_from_probabilities_and_from_p():
    tl.manual_seed(0)
    p = tl.tensor([0.0, 0.25, 1.0]).expand(20000, 3).contiguous()
    b = tl.bernoulli(p)
    assert b.dtype is tl.float32 and set(np.unique(b.numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(b.numpy().mean(0), [0.0, 0.25, 1.0], atol=0.01)
    c = tl.ones(20000, dtype=tl.float64).bernoulli(0.7)
    assert c.dtype is tl.float64 and abs(c.numpy().mean() - 0.7) < 0.01
    assert abs(tl.bernoulli(tl.zeros(20000), p=0.2).numpy().mean() - 0.2) < 0.01
    tl.manual_seed(4)
    first = tl.bernoulli(tl.full((50,), 0.5)).tolist()
    tl.manual_seed(4)
    assert tl.full((50,), 0.5).bernoulli().tolist() == first


def test_bernoulli_inplace_bumps_the_version_and_keeps_the_dtype():
    for dtype in (tl.float32, tl.int64, tl.bool):
        x = tl.zeros(10000, dtype=dtype)
        v = x._version
        assert x.bernoulli_(0.3) is x and x._version == v + 1 and x.dtype is dtype
        assert abs(x.numpy().astype(float).mean() - 0.3) < 0.02
    x = tl.zeros(2, 3)
    x.bernoulli_(tl.tensor([0.0, 1.0, 0.0]))
    assert x.tolist() == [[0.0, 1.0, 0.0]] * 2


def test_bernoulli_errors_as_torch():
    raises_like(lambda m, x: m.bernoulli(x), np.array([0.5, 1.5], np.float32), match="p_in >= 0 && p_in <= 1")
    raises_like(lambda m, x: m.bernoulli(x, 1.3), np.array([0.5], np.float32), match=r"p to be in \[0, 1\]")
    raises_like(lambda m, x: x.bernoulli_(1.3), np.ones(3, np.float32), match=r"p to be in \[0, 1\]")
    raises_like(lambda m, x: x.bernoulli_(m.tensor([0.2, 0.3, 2.0])), np.ones(3, np.float32), match="p_in")
    raises_like(lambda m, x: x.bernoulli_(m.ones(3)), np.ones(2, np.float32))
    raises_like(lambda m, x: m.bernoulli(x), np.ones(3, np.int64))
    raises_like(lambda m, x: x.requires_grad_().bernoulli_(0.5), np.ones(3, np.float32), match="leaf Variable")


# ---- exponential_, random_, normal ---------------------------------------------------------------------
def test_exponential_inplace_moments_version_and_errors():
    tl.manual_seed(0)
    x = tl.empty(40000, dtype=tl.float64)
    v = x._version
    assert x.exponential_(2.0) is x and x._version == v + 1
    a = x.numpy()
    assert a.min() >= 0 and abs(a.mean() - 0.5) < 0.01 and abs(a.var() - 0.25) < 0.02
    tl.manual_seed(9)
    first = tl.empty(5).exponential_().tolist()
    tl.manual_seed(9)
    assert tl.empty(5).exponential_().tolist() == first
    raises_like(lambda m, x: x.exponential_(0), np.ones(3, np.float32), match="lambda > 0.0, but found lambda=0")
    raises_like(lambda m, x: x.exponential_(-1), np.ones(3, np.float32), match="lambda > 0.0")
    raises_like(lambda m, x: x.exponential_(), np.ones(3, np.int64), match="dtype must be a floating point")


def test_random_inplace_ranges_and_version():
    x = tl.empty(5000)
    v = x._version
    assert x.random_(3, 7) is x and x._version == v + 1
    a = x.numpy()
    assert set(np.unique(a)) == {3.0, 4.0, 5.0, 6.0}
    assert set(np.unique(tl.empty(2000, dtype=tl.int64).random_(4).numpy())) == {0, 1, 2, 3}
    assert set(np.unique(tl.empty(2000, dtype=tl.int32).random_(-3, 0).numpy())) == {-3, -2, -1}
    assert set(np.unique(tl.empty(100, dtype=tl.bool).random_().numpy())) == {False, True}
    f = tl.empty(1000).random_().numpy()
    assert f.min() >= 0 and f.max() <= 2 ** 24 and f.max() > 2 ** 20 and (f == np.round(f)).all()
    big = tl.empty(1000, dtype=tl.int64).random_().numpy()
    assert big.min() >= 0 and big.max() > 2 ** 60
    assert tl.empty(100).random_(3, None).numpy().min() >= 3


def test_random_errors_as_torch():
    raises_like(lambda m, x: x.random_(5, 5), np.ones(3, np.float32), match="'from' to be less than 'to'")
    raises_like(lambda m, x: x.random_(0), np.ones(3, np.float32), match="from=0 >= to=0")
    raises_like(lambda m, x: x.random_(-3), np.ones(3, np.float32), match="from=0 >= to=-3")
    raises_like(lambda m, x: x.random_(-5, 2 ** 40), np.ones(3, np.int32), match="out of bounds")


def test_normal_function_shapes_moments_and_errors():
    tl.manual_seed(0)
    z = tl.normal(2.0, 3.0, (20000,))
    assert z.shape == (20000,) and abs(float(z.mean()) - 2) < 0.1 and abs(float(z.std()) - 3) < 0.1
    m = tl.normal(tl.tensor([0.0, 100.0]).expand(10000, 2).contiguous(), 0.5)
    np.testing.assert_allclose(m.numpy().mean(0), [0.0, 100.0], atol=0.05)
    assert tl.normal(tl.zeros(2, 1), tl.ones(3)).shape == (2, 3)
    assert tl.normal(0.0, tl.ones(4, dtype=tl.float64)).dtype is tl.float64
    assert tl.normal(0.0, 1.0, size=(2, 3), dtype=tl.float64).dtype is tl.float64
    tl.manual_seed(1)
    a = tl.normal(tl.zeros(3), 1.0).tolist()
    tl.manual_seed(1)
    assert tl.normal(tl.zeros(3), 1.0).tolist() == a
    raises_like(lambda m, s: m.normal(m.zeros(3), s), -np.ones(3, np.float32), match="std >= 0.0")
    raises_like(lambda m, x: m.normal(x, -1.0), np.zeros(3, np.float32), match="std >= 0.0, but found std -1")
    with pytest.raises(TypeError, match="size"):
        tl.normal(0.0, 1.0)


def test_uniform_and_normal_inplace_are_reproducible():
    tl.manual_seed(2)
    a = tl.empty(4).uniform_(1, 2).tolist() + tl.empty(4).normal_(0, 1).tolist()
    tl.manual_seed(2)
    assert tl.empty(4).uniform_(1, 2).tolist() + tl.empty(4).normal_(0, 1).tolist() == a
    assert all(1 <= v < 2 for v in a[:4])


# ---- fill_diagonal_ ------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((2, 3), False), ((5, 2), False), ((7, 3), True),
                                        ((7, 3), False), ((4, 3), True), ((3, 3, 3), False), ((2, 5), True)])
def test_fill_diagonal_matches_torch(shape, wrap):
    ours, theirs = both(lambda m, x: x.fill_diagonal_(2.5, wrap=wrap), np.zeros(shape, np.float32))
    assert_close(ours, theirs)


def test_fill_diagonal_version_autograd_and_errors():
    x = tl.zeros(3, 3, dtype=tl.int64)
    v = x._version
    assert x.fill_diagonal_(tl.tensor(4)) is x and x._version == v + 1 and x.tolist()[1][1] == 4
    ours, theirs = both(lambda m, x: x, np.ones((3, 4)), requires_grad=True)
    for t in ((ours * 2).fill_diagonal_(0.0), (theirs * 2).fill_diagonal_(0.0)):
        t.sum().backward()
    assert_close(ours.grad, theirs.grad)
    raises_like(lambda m, x: x.fill_diagonal_(1), np.ones((2, 3, 4)), match="equal length")
    raises_like(lambda m, x: x.fill_diagonal_(1), np.ones(3), match="dimensions must larger than 1")
    raises_like(lambda m, x: x.requires_grad_().fill_diagonal_(1), np.ones((2, 2)), match="leaf Variable")


# ---- other devices, finite differences ----------------------------------------------------------------
def test_the_family_runs_on_another_memory_space():
    a = RNG.standard_normal((3, 5))
    x = tl.tensor(a, device="sim")
    v, i = x.sort(1)
    assert v.device == x.device and i.device == x.device
    np.testing.assert_allclose(v.cpu().numpy(), np.sort(a, 1))
    assert x.topk(2).indices.cpu().tolist() == torch.tensor(a).topk(2).indices.tolist()
    assert tl.searchsorted(v, x).device == x.device
    np.testing.assert_allclose(x.prod(1).cpu().numpy(), a.prod(1))
    assert x.unique().device == x.device


@pytest.mark.parametrize("name,fn,data", [
    ("sort", lambda x: x.sort(1).values, "n"),
    ("topk", lambda x: x.topk(2, 0).values, "n"),
    ("kthvalue", lambda x: x.kthvalue(2).values, "n"),
    ("median", lambda x: x.median(0).values, "n"),
    ("median_all", lambda x: x.median(), "n"),
    ("cummax", lambda x: x.cummax(1).values, "n"),
    ("prod", lambda x: x.prod(1), "zeros"),
    ("prod_all", lambda x: x.prod(), "one_zero"),
    ("cumprod", lambda x: x.cumprod(1), "zeros"),
    ("cumprod_no_zero", lambda x: x.cumprod(0), "n"),
    ("logcumsumexp", lambda x: x.logcumsumexp(1), "n"),
    ("nanmean", lambda x: x.nanmean(1), "n"),
    ("std_mean", lambda x: tl.std_mean(x, 0), "n"),
])
def test_gradients_match_finite_differences(name, fn, data):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4))
    if data == "zeros":
        a[0, 1] = a[1, 0] = a[1, 2] = a[2, 3] = 0.0
    elif data == "one_zero":
        a[1, 2] = 0.0
    x = tl.tensor(a, requires_grad=True)
    assert gradcheck(fn, (x,))


@pytest.fixture(scope="module")
def cuda():
    from emu_driver import cuda_device

    yield from cuda_device()


def test_the_family_on_cuda_runs_as_counted_host_fallbacks(cuda):
    """No kernels of its own: each primitive is the NumPy one on host copies, counted (the emulator stands in for a
    GPU where there is none)."""
    be = cuda.raw_backend
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    before = {n: be.fallbacks[n] for n in ("sort", "topk", "prod", "multinomial", "searchsorted")}
    x = tl.tensor(a, device="cuda", requires_grad=True)
    v, i = x.sort(1)
    assert v.device == x.device and i.device == x.device
    np.testing.assert_allclose(v.cpu().detach().numpy(), np.sort(a, 1))
    (v * tl.arange(5, device="cuda")).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.argsort(np.argsort(a, 1), 1).astype(np.float32))
    assert x.detach().topk(2).indices.cpu().tolist() == torch.tensor(a).topk(2).indices.tolist()
    np.testing.assert_allclose(x.detach().prod(1).cpu().numpy(), a.prod(1), rtol=1e-5)
    p = tl.ones(2, 4, device="cuda")
    assert p.multinomial(3).device == p.device  # (drawn on the host, from the seeded generator)
    assert tl.searchsorted(v.detach(), x.detach()).device == x.device
    assert be.fallbacks["sort"] > before["sort"] and be.fallbacks["topk"] > before["topk"]
    assert be.fallbacks["prod"] > before["prod"] and be.fallbacks["searchsorted"] > before["searchsorted"]
    assert be.fallbacks["multinomial"] == before["multinomial"]


def test_random_fills_refuse_what_torch_refuses():
    for fill, args, message in ((lambda t, *a: t.normal_(*a), (0.0, -1.0), "normal expects std >= 0.0"),
                                (lambda t, *a: t.uniform_(*a), (2.0, 1.0), "uniform_ expects to return a")):
        for lib in (tl, torch):
            with pytest.raises(RuntimeError, match=message):
                fill(lib.zeros(3), *args)
    t = tl.zeros(3)
    t.uniform_(1.0, 1.0)  # an empty range is allowed (every value is the bound), as in torch
    assert t.tolist() == [1.0, 1.0, 1.0] and t.storage.version == 1
