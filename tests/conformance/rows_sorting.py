"""Conformance rows of the sorting family: sorts, order statistics, products and scans, nan-aware reductions,
std_mean/var_mean (values, indices and gradients against PyTorch).

Rows that return indices use tie-free data ("n"), where the indices are PyTorch's exactly; rows on data with ties
("tie": values in {-1, 0, 1}) compare only what PyTorch defines there (values, the gradient of ops whose choice among
equal elements PyTorch fixes: running extrema, mode, products with one zero or several)."""

from __future__ import annotations

from . import U_SHAPES, C, S, k, unary

NAN = float("nan")

# inputs with a last dim of at least 3 (top-k and k-th value rows), plain, transposed and strided
WIDE = (S((3, 4)), S((2, 3, 4)), S((3, 4), view="T"), S((3, 5), view="step"))
# inputs to reduce along dim 0 and -1, including a 0-d one and size-0 dims
LANES = U_SHAPES


def _with_nans(m, x):
    """A few NaNs (where x > 0.8), through masked_fill: their gradient is zero on both sides."""
    return x.masked_fill(x > 0.8, NAN)


def _one_zero(m, x):
    """``x`` with exactly one element zeroed (the third), through masked_fill."""
    return x.masked_fill(m.arange(x.numel()).reshape(x.shape) == 2, 0.0)


SORT = (
    unary("sort", lambda m, x: x.sort())
    + unary("sort_0_desc", lambda m, x: x.sort(0, descending=True))
    + unary("sort_fn_stable", lambda m, x: m.sort(x, dim=-1, descending=True, stable=True))
    + unary("sort_ties_values", lambda m, x: x.sort(-1).values, kind="tie", grad=False)
    + unary("msort", lambda m, x: m.msort(x), shapes=[s for s in U_SHAPES if s.shape])
    + unary("topk2", lambda m, x: x.topk(2), shapes=WIDE)
    + unary("topk_smallest_dim0", lambda m, x: x.topk(2, dim=0, largest=False), shapes=WIDE)
    + unary("topk_fn_unsorted", lambda m, x: m.topk(x, 3, -1, True, True), shapes=WIDE)
    + unary("topk_all", lambda m, x: x.topk(x.shape[-1] if x.ndim else 1), shapes=U_SHAPES)
    + unary("topk_ties_values", lambda m, x: x.topk(2).values, kind="tie", shapes=WIDE, grad=False)
    + unary("kthvalue2", lambda m, x: x.kthvalue(2), shapes=WIDE)
    + unary("kthvalue_dim0_keepdim", lambda m, x: x.kthvalue(2, 0, keepdim=True), shapes=WIDE)
    + unary("kthvalue_fn", lambda m, x: m.kthvalue(x, 1, dim=-1), shapes=WIDE)
    + unary("median_all", lambda m, x: x.median(), shapes=[s for s in U_SHAPES if 0 not in s.shape])
    + unary("median_all_ties", lambda m, x: x.median(), kind="tie",
            shapes=[s for s in U_SHAPES if 0 not in s.shape])
    + unary("median_all_nan", lambda m, x: _with_nans(m, x).median(),
            shapes=[s for s in U_SHAPES if 0 not in s.shape])
    + unary("median_dim", lambda m, x: x.median(-1), shapes=[s for s in U_SHAPES if s.shape[-1:] != (0,)])
    + unary("median_dim0_keepdim", lambda m, x: m.median(x, 0, keepdim=True),
            shapes=[s for s in U_SHAPES if s.shape[:1] != (0,)])
    + unary("median_dim_nan", lambda m, x: _with_nans(m, x).median(-1), shapes=WIDE)
    + unary("nanmedian_all", lambda m, x: _with_nans(m, x).nanmedian(),
            shapes=[s for s in U_SHAPES if 0 not in s.shape])
    + unary("nanmedian_dim", lambda m, x: _with_nans(m, x).nanmedian(-1), shapes=WIDE)
    + unary("mode", lambda m, x: x.mode(), shapes=[s for s in U_SHAPES if s.shape[-1:] != (0,)])
    + unary("mode_ties", lambda m, x: x.mode(0), kind="tie", shapes=[s for s in U_SHAPES if s.shape[:1] != (0,)])
)

PRODUCTS = (
    unary("prod_all", lambda m, x: x.prod())
    + unary("prod_dim0", lambda m, x: x.prod(0))
    + unary("prod_dim-1_keepdim", lambda m, x: m.prod(x, -1, keepdim=True))
    + unary("prod_dtype", lambda m, x: x.prod(0, dtype=m.float64))
    + unary("prod_all_zeros", lambda m, x: x.prod(), kind="tie")
    + unary("prod_dim_zeros", lambda m, x: x.prod(1), kind="tie", shapes=WIDE)
    + unary("prod_one_zero", lambda m, x: _one_zero(m, x).prod(), shapes=WIDE)
    + unary("prod_dim_one_zero", lambda m, x: _one_zero(m, x).prod(-1), shapes=WIDE)
    + unary("cumprod0", lambda m, x: x.cumprod(0))
    + unary("cumprod-1", lambda m, x: m.cumprod(x, dim=-1))
    + unary("cumprod_zeros", lambda m, x: x.cumprod(-1), kind="tie")
    + unary("cumprod_one_zero", lambda m, x: _one_zero(m, x).cumprod(-1), shapes=WIDE)
    + [C("cumprod_zeros_long", lambda m, x: x.cumprod(0), k(S((9, 3)), "tie"))]
    + unary("cumprod_dtype", lambda m, x: x.cumprod(0, dtype=m.float64), shapes=WIDE)
    + unary("cummax0", lambda m, x: x.cummax(0))
    + unary("cummin-1", lambda m, x: m.cummin(x, -1))
    + unary("cummax_ties", lambda m, x: x.cummax(-1), kind="tie")
    + unary("cummin_ties", lambda m, x: x.cummin(0), kind="tie")
    + unary("logcumsumexp0", lambda m, x: x.logcumsumexp(0))
    + unary("logcumsumexp-1", lambda m, x: m.logcumsumexp(x, -1))
)

NAN_AWARE = (
    unary("nansum_all", lambda m, x: _with_nans(m, x).nansum())
    + unary("nansum_dim", lambda m, x: m.nansum(_with_nans(m, x), 0, keepdim=True))
    + unary("nanmean_all", lambda m, x: _with_nans(m, x).nanmean(), shapes=[s for s in U_SHAPES if 0 not in s.shape])
    + unary("nanmean_dim", lambda m, x: m.nanmean(_with_nans(m, x), -1), shapes=WIDE)
    + unary("std_mean", lambda m, x: m.std_mean(x), shapes=WIDE)
    + unary("std_mean_dim", lambda m, x: m.std_mean(x, 0, keepdim=True), shapes=WIDE)
    + unary("var_mean_c0", lambda m, x: m.var_mean(x, dim=-1, correction=0), shapes=WIDE)
    + unary("var_mean_unbiased", lambda m, x: m.var_mean(x, (0, 1), False), shapes=WIDE)
)

CASES = SORT + PRODUCTS + NAN_AWARE
