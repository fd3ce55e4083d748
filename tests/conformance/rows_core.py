"""The table's core rows: arithmetic with tensors and scalars, matmul, where, unary math, reductions, views and copies.

(The op families of the API have their own modules beside this one; ``tests/test_ops_vs_torch.py`` runs them all
against torch, ``tests/test_ops_gradcheck.py`` against float64 finite differences.)
"""

from __future__ import annotations

from collections.abc import Callable

from . import U_SHAPES, C, Case, S, binary, k, unary

# binary arithmetic, with tensors and Python scalars on either side
BINARY = (
    binary("add", lambda m, a, b: a + b)
    + binary("sub", lambda m, a, b: a - b)
    + binary("mul", lambda m, a, b: a * b)
    + binary("div", lambda m, a, b: a / b, kinds=("n", "away"))
    + binary("pow", lambda m, a, b: a ** b, kinds=("pos", "n"))
    + binary("maximum", lambda m, a, b: m.maximum(a, b))
    + binary("minimum", lambda m, a, b: m.minimum(a, b))
    + binary("maximum_ties", lambda m, a, b: m.maximum(a, b), kinds=("tie", "tie"))
    + binary("minimum_ties", lambda m, a, b: m.minimum(a, b), kinds=("tie", "tie"))
    + binary("add_method", lambda m, a, b: a.add(b))
    + binary("sub_method", lambda m, a, b: a.sub(b))
    + binary("mul_method", lambda m, a, b: a.mul(b))
    + binary("div_method", lambda m, a, b: a.div(b), kinds=("n", "away"))
)

SCALAR = (
    unary("x+2", lambda m, x: x + 2)
    + unary("2+x", lambda m, x: 2 + x)
    + unary("x+1.5", lambda m, x: x + 1.5)
    + unary("x-2.5", lambda m, x: x - 2.5)
    + unary("2-x", lambda m, x: 2 - x)
    + unary("1.5-x", lambda m, x: 1.5 - x)
    + unary("x*3", lambda m, x: x * 3)
    + unary("-0.5*x", lambda m, x: -0.5 * x)
    + unary("x/3", lambda m, x: x / 3)
    + unary("3/x", lambda m, x: 3 / x, kind="away")
    + unary("2.5/x", lambda m, x: 2.5 / x, kind="away")
    + unary("2**x", lambda m, x: 2 ** x)
    + unary("0.5**x", lambda m, x: 0.5 ** x)
    + unary("x**2", lambda m, x: x ** 2)
    + unary("x**3", lambda m, x: x ** 3)
    + unary("x**2.5", lambda m, x: x ** 2.5, kind="pos")
    + unary("x**-1.5", lambda m, x: x ** -1.5, kind="pos")
    + unary("x**0", lambda m, x: x ** 0)
    + unary("x**1", lambda m, x: x ** 1)
    + unary("x**0.5", lambda m, x: x ** 0.5, kind="pos")
)

MATMUL = [
    C("matmul-1d-1d", lambda m, a, b: a @ b, S((3,)), S((3,))),
    C("matmul-1d-2d", lambda m, a, b: a @ b, S((3,)), S((3, 4))),
    C("matmul-2d-1d", lambda m, a, b: a @ b, S((3, 4)), S((4,))),
    C("matmul-2d-2d", lambda m, a, b: a @ b, S((3, 4)), S((4, 5))),
    C("matmul-batched-bcast", lambda m, a, b: a @ b, S((2, 1, 3, 4)), S((5, 4, 2))),
    C("matmul-3d-1d", lambda m, a, b: a @ b, S((2, 3, 4)), S((4,))),
    C("matmul-1d-3d", lambda m, a, b: a @ b, S((4,)), S((2, 4, 3))),
    C("matmul-3d-2d", lambda m, a, b: m.matmul(a, b), S((2, 3, 4)), S((4, 2))),
    C("matmul-T-T", lambda m, a, b: a @ b, S((3, 4), view="T"), S((4, 5), view="T")),
    C("matmul-step", lambda m, a, b: a.matmul(b), S((3, 4), view="step"), S((4, 2), view="step")),
    C("matmul-empty-rows", lambda m, a, b: a @ b, S((0, 3)), S((3, 2))),
    C("matmul-empty-inner", lambda m, a, b: a @ b, S((3, 0)), S((0, 2))),
]

WHERE = [
    C("where-tt", lambda m, a, b: m.where(a > 0, a, b), S((3, 4)), S((3, 4))),
    C("where-bcast", lambda m, a, b: m.where(b > 0, a, b), S((3, 1, 4)), S((2, 4))),
    C("where-cond-bcast", lambda m, a, b: m.where(b > 0, a, 2 * a), S((3, 4)), S((3, 1))),
    C("where-scalar-other", lambda m, a: m.where(a > 0, a, 0.0), S((3, 4))),
    C("where-scalar-input", lambda m, a: m.where(a > 0, -1.5, a), S((3, 4))),
    C("where-0d", lambda m, a, b: m.where(a > 0, a, b), S(()), S((3,))),
    C("where-empty", lambda m, a, b: m.where(a > 0, a, b), S((0, 3)), S((3,))),
    C("where-T", lambda m, a, b: m.where(a > b, a, b), S((3, 4), view="T"), S((3, 4), view="step")),
    C("masked_fill", lambda m, a: a.masked_fill(a > 0, 0.5), S((3, 4))),
    C("masked_fill-bcast", lambda m, a, b: a.masked_fill(b > 0, -1.0), S((3, 4)), S((4,))),
    C("masked_fill-0d-value", lambda m, a: a.masked_fill(a < 0, m.tensor(2.0)), S((2, 3))),
    C("masked_fill-T", lambda m, a: a.masked_fill(a > 0.5, 0.0), S((3, 4), view="T")),
    C("masked_fill-empty", lambda m, a: a.masked_fill(a > 0, 1.0), S((0, 3))),
]

UNARY = (
    unary("neg", lambda m, x: -x)
    + unary("neg_method", lambda m, x: x.neg())
    + unary("abs", lambda m, x: x.abs(), kind="away")
    + unary("exp", lambda m, x: x.exp())
    + unary("log", lambda m, x: x.log(), kind="pos")
    + unary("sqrt", lambda m, x: x.sqrt(), kind="pos")
    + unary("rsqrt", lambda m, x: x.rsqrt(), kind="pos")
    + unary("sin", lambda m, x: x.sin())
    + unary("cos", lambda m, x: x.cos())
    + unary("tanh", lambda m, x: x.tanh())
    + unary("sigmoid", lambda m, x: x.sigmoid())
    + unary("relu", lambda m, x: x.relu(), kind="away")
    + unary("leaky_relu", lambda m, x: m.leaky_relu(x, 0.2), kind="away")
    + unary("gelu", lambda m, x: m.gelu(x))
    + unary("gelu_tanh", lambda m, x: m.gelu(x, approximate="tanh"))
    + unary("silu", lambda m, x: m.silu(x))
    + unary("softplus", lambda m, x: m.softplus(x))
    + unary("softplus_b2_t1", lambda m, x: m.softplus(x * 2, beta=2.0, threshold=1.0))
    + unary("elu", lambda m, x: m.elu(x), kind="away")
    + unary("elu_a0.5", lambda m, x: m.elu(x, alpha=0.5), kind="away")
    + unary("clamp_min", lambda m, x: x.clamp(min=-0.5))
    + unary("clamp_max", lambda m, x: x.clamp(max=0.5))
    + unary("clamp_both", lambda m, x: x.clamp(-0.5, 0.5))
    + unary("clip", lambda m, x: x.clip(-0.3, 0.7))
    + unary("softmax_-1", lambda m, x: x.softmax(-1))
    + unary("softmax_0", lambda m, x: m.softmax(x, 0))
    + unary("log_softmax_-1", lambda m, x: x.log_softmax(-1))
    + unary("log_softmax_0", lambda m, x: m.log_softmax(x, 0))
    + unary("softmax_1", lambda m, x: x.softmax(1), shapes=U_SHAPES[:1] + U_SHAPES[3:])
    + unary("log_softmax_1", lambda m, x: x.log_softmax(dim=1), shapes=U_SHAPES[:1] + U_SHAPES[3:])
    + unary("chain", lambda m, x: (x.sin() * x.exp() + x.tanh()).sigmoid())
)

# ---- reductions --------------------------------------------------------------------------------------
R_SHAPES = ((S((3, 4)), (None, 0, -1, (0, 1), (1, 0))),
            (S((2, 3, 4)), (None, 1, (0, 2), (-1,), (0, 1, 2))),
            (S(()), (None, 0)),
            (S((0, 3)), (None, 0, 1)),
            (S((3, 4), view="T"), (None, 0, 1)),
            (S((3, 4), view="step"), (None, -1)))


def reductions(name: str, fn: Callable, kind="n", skip=lambda s, d, kd: False, grad=True) -> list[Case]:
    out = []
    for s, dims in R_SHAPES:
        for d in dims:
            for kd in (False, True):
                if skip(s, d, kd):
                    continue
                label = "all" if d is None else str(d).replace(" ", "")
                out.append(C(f"{name}-{s.label}-{label}{'-keep' if kd else ''}", _bind(fn, d, kd), k(s, kind),
                             grad=grad))
    return out


def _bind(fn: Callable, d, kd: bool) -> Callable:
    return lambda m, x: fn(m, x, d, kd)


def _empty_reduced(s: S, d) -> bool:
    """True when the reduction covers a size-0 dim (max/min/argmax have no identity there)."""
    if 0 not in s.shape:
        return False
    dims = range(len(s.shape)) if d is None else (d,) if isinstance(d, int) else d
    return any(s.shape[i] == 0 for i in dims)


def _none_keepdim(s, d, kd):
    return d is None and kd


REDUCE = (
    reductions("sum", lambda m, x, d, kd: x.sum() if d is None and not kd else x.sum(d, keepdim=kd),
               skip=lambda s, d, kd: d is None and kd)
    + reductions("mean", lambda m, x, d, kd: x.mean() if d is None else x.mean(d, keepdim=kd),
                 skip=_none_keepdim)
    + reductions("var_c1", lambda m, x, d, kd: x.var(d, keepdim=kd),
                 skip=lambda s, d, kd: 0 in s.shape or not s.shape or (d is None and kd))
    + reductions("var_c0", lambda m, x, d, kd: x.var(d, keepdim=kd, correction=0),
                 skip=lambda s, d, kd: 0 in s.shape or (d is None and kd))
    + reductions("std_c1", lambda m, x, d, kd: x.std(d, keepdim=kd, correction=1),
                 skip=lambda s, d, kd: 0 in s.shape or not s.shape or (d is None and kd))
    + reductions("std_c0", lambda m, x, d, kd: x.std(d, keepdim=kd, unbiased=False),
                 skip=lambda s, d, kd: 0 in s.shape or not s.shape or (d is None and kd))
    + reductions("amax", lambda m, x, d, kd: x.amax(() if d is None else d, keepdim=kd),
                 skip=lambda s, d, kd: _empty_reduced(s, d))
    + reductions("amin", lambda m, x, d, kd: x.amin(() if d is None else d, keepdim=kd),
                 skip=lambda s, d, kd: _empty_reduced(s, d))
    + reductions("amax_ties", lambda m, x, d, kd: x.amax(() if d is None else d, keepdim=kd), kind="tie",
                 skip=lambda s, d, kd: _empty_reduced(s, d))
    + reductions("max", lambda m, x, d, kd: x.max() if d is None else x.max(d, keepdim=kd),
                 skip=lambda s, d, kd: _empty_reduced(s, d) or not isinstance(d, (int, type(None)))
                 or (d is None and kd))
    + reductions("min", lambda m, x, d, kd: x.min() if d is None else x.min(dim=d, keepdim=kd),
                 skip=lambda s, d, kd: _empty_reduced(s, d) or not isinstance(d, (int, type(None)))
                 or (d is None and kd))
    + reductions("max_ties_all", lambda m, x, d, kd: x.max(), kind="tie",
                 skip=lambda s, d, kd: d is not None or kd or 0 in s.shape)
    + reductions("max_ties_dim", lambda m, x, d, kd: x.max(d, keepdim=kd), kind="tie",
                 skip=lambda s, d, kd: _empty_reduced(s, d) or not isinstance(d, int))
    + reductions("min_ties_dim", lambda m, x, d, kd: x.min(d, keepdim=kd), kind="tie",
                 skip=lambda s, d, kd: _empty_reduced(s, d) or not isinstance(d, int))
    + reductions("argmax_ties", lambda m, x, d, kd: x.argmax(d, keepdim=kd), kind="tie", grad=False,
                 skip=lambda s, d, kd: _empty_reduced(s, d) or not isinstance(d, (int, type(None))))
    + reductions("argmax", lambda m, x, d, kd: x.argmax(d, keepdim=kd), grad=False,
                 skip=lambda s, d, kd: _empty_reduced(s, d) or not isinstance(d, (int, type(None))))
    + reductions("argmin", lambda m, x, d, kd: x.argmin(dim=d, keepdim=kd), grad=False,
                 skip=lambda s, d, kd: _empty_reduced(s, d) or not isinstance(d, (int, type(None))))
    + reductions("logsumexp", lambda m, x, d, kd: x.logsumexp(tuple(range(x.ndim)) if d is None else d,
                                                               keepdim=kd),
                 skip=lambda s, d, kd: 0 in s.shape)
    + reductions("cumsum", lambda m, x, d, kd: x.cumsum(d),
                 skip=lambda s, d, kd: kd or not isinstance(d, int))
)

# ---- views (the op sees a leaf, a transposed leaf or a strided slice; grads must reach the leaf) ----
VIEWS = [
    C("reshape", lambda m, x: x.reshape(4, 3), S((3, 4))),
    C("reshape-tuple-infer", lambda m, x: x.reshape((2, -1)), S((2, 3, 4))),
    C("reshape-noncontig", lambda m, x: x.reshape(-1), S((3, 4), view="T")),
    C("reshape-0d", lambda m, x: x.reshape(1, 1), S(())),
    C("reshape-to-0d", lambda m, x: x.reshape(()), S((1,))),
    C("reshape-empty", lambda m, x: x.reshape(3, 0), S((0, 3))),
    C("view", lambda m, x: x.view(2, 6), S((3, 4))),
    C("view-flat", lambda m, x: x.view(-1), S((2, 3, 4))),
    C("permute", lambda m, x: x.permute(1, 0, 2), S((2, 3, 4))),
    C("permute-tuple", lambda m, x: x.permute((2, 0, 1)), S((2, 3, 4))),
    C("permute-step", lambda m, x: x.permute(1, 0), S((3, 4), view="step")),
    C("transpose", lambda m, x: x.transpose(0, 2), S((2, 3, 4))),
    C("transpose-neg", lambda m, x: x.transpose(-1, -2), S((3, 4), view="T")),
    C("T-2d", lambda m, x: x.T, S((3, 4))),
    C("T-1d", lambda m, x: x.T, S((3,))),
    C("mT", lambda m, x: x.mT, S((2, 3, 4))),
    C("mT-2d", lambda m, x: x.mT, S((3, 4), view="step")),
    C("expand", lambda m, x: x.expand(3, 4), S((3, 1))),
    C("expand-new-dims", lambda m, x: x.expand(2, 3, 4), S((3, 1))),
    C("expand-minus1", lambda m, x: x.expand(2, -1, 4), S((3, 1))),
    C("expand-0d", lambda m, x: x.expand(2, 3), S(())),
    C("broadcast_to", lambda m, x: x.broadcast_to((2, 3, 4)), S((4,))),
    C("broadcast_to-T", lambda m, x: x.broadcast_to((2, 4, 3)), S((4, 3), view="T")),
    C("squeeze", lambda m, x: x.squeeze(), S((3, 1, 4, 1))),
    C("squeeze-dim", lambda m, x: x.squeeze(1), S((3, 1, 4, 1))),
    C("squeeze-dim-noop", lambda m, x: x.squeeze(0), S((3, 1, 4))),
    C("squeeze-tuple", lambda m, x: x.squeeze((1, 3)), S((3, 1, 4, 1))),
    C("squeeze-0d", lambda m, x: x.squeeze(), S(())),
    C("unsqueeze-0", lambda m, x: x.unsqueeze(0), S((3, 4))),
    C("unsqueeze--1", lambda m, x: x.unsqueeze(-1), S((3, 4), view="T")),
    C("unsqueeze-0d", lambda m, x: x.unsqueeze(0), S(())),
    C("flatten", lambda m, x: x.flatten(), S((2, 3, 4))),
    C("flatten-1", lambda m, x: x.flatten(1), S((2, 3, 4))),
    C("flatten-0-1", lambda m, x: x.flatten(0, 1), S((2, 3, 4))),
    C("flatten-noncontig", lambda m, x: x.flatten(), S((3, 4), view="T")),
    C("flatten-0d", lambda m, x: x.flatten(), S(())),
    C("unflatten", lambda m, x: x.unflatten(1, (2, 2)), S((3, 4))),
    C("unflatten-infer", lambda m, x: x.unflatten(-1, (2, -1)), S((2, 3, 4))),
    C("index-int", lambda m, x: x[1], S((3, 4))),
    C("index-neg-int", lambda m, x: x[-1, 2], S((3, 4))),
    C("index-slice-step", lambda m, x: x[:, ::2], S((3, 4))),
    C("index-slice-step3", lambda m, x: x[1:, ::3], S((3, 7))),
    C("index-None", lambda m, x: x[None, 1:3], S((3, 4))),
    C("index-ellipsis", lambda m, x: x[..., 1], S((2, 3, 4))),
    C("index-mixed", lambda m, x: x[-1, ..., None, 1:], S((2, 3, 4))),
    C("index-3d", lambda m, x: x[1:, ::2, 0], S((2, 3, 4))),
    C("index-empty-slice", lambda m, x: x[2:2], S((3, 4))),
    C("index-on-T", lambda m, x: x[1:, 0], S((3, 4), view="T")),
    C("index-on-step", lambda m, x: x[::2, 1:], S((3, 4), view="step")),
    C("index-0d-ellipsis", lambda m, x: x[...], S(())),
    C("index-0d-None", lambda m, x: x[None], S(())),
    C("index-overlap", lambda m, x: x[0] + x[:, 1].sum() + x[1:, 1:].sum(), S((3, 4))),
    C("contiguous", lambda m, x: x.contiguous(), S((3, 4), view="T")),
    C("contiguous-noop", lambda m, x: x.contiguous(), S((3, 4))),
    C("view-chain", lambda m, x: x.T.reshape(-1)[::3].unsqueeze(0).expand(2, -1), S((3, 4))),
]

# ---- copies: advanced indexing, joining, splitting, gather/scatter, pad, repeat, flip, tri ----------
COPIES = [
    C("adv-index-dups", lambda m, x: x[m.tensor([0, 2, 0, 0])], S((3, 4))),
    C("adv-index-list", lambda m, x: x[[0, 2, 0]], S((3, 4))),
    C("adv-index-dim1", lambda m, x: x[:, m.tensor([1, 1, 3])], S((3, 4))),
    C("adv-index-pair", lambda m, x: x[m.tensor([0, 1, 0]), m.tensor([2, 2, 2])], S((3, 4))),
    C("adv-index-2d", lambda m, x: x[m.tensor([[0, 0], [1, 0]])], S((3, 4))),
    C("adv-index-neg", lambda m, x: x[m.tensor([-1, 0])], S((3, 4))),
    C("adv-index-T", lambda m, x: x[m.tensor([1, 1, 0])], S((3, 4), view="T")),
    C("adv-index-empty", lambda m, x: x[m.tensor([], dtype=m.int64)], S((3, 4))),
    C("adv-index-slice-mix", lambda m, x: x[1:, m.tensor([0, 0, 2])], S((3, 4))),
    C("bool-mask", lambda m, x: x[x > 0], S((3, 4))),
    C("bool-mask-rows", lambda m, x: x[m.tensor([True, False, True])], S((3, 4))),
    C("bool-mask-T", lambda m, x: x[x > 0], S((3, 4), view="T")),
    C("cat-0", lambda m, a, b: m.cat([a, b], 0), S((2, 3)), S((4, 3))),
    C("cat-1", lambda m, a, b: m.cat([a, b], dim=1), S((2, 3)), S((2, 1))),
    C("cat-neg-3", lambda m, a, b, c: m.cat([a, b, c], -1), S((2, 3)), S((2, 3), view="T"), S((2, 2))),
    C("cat-empty-piece", lambda m, a, b: m.cat([a, b]), S((0, 3)), S((2, 3))),
    C("cat-repeat-input", lambda m, a: m.cat([a, a * 2, a], 0), S((2, 3))),
    C("stack-0", lambda m, a, b: m.stack([a, b]), S((2, 3)), S((2, 3))),
    C("stack--1", lambda m, a, b: m.stack([a, b], dim=-1), S((2, 3)), S((2, 3), view="T")),
    C("stack-1", lambda m, a, b, c: m.stack([a, b, c], 1), S((2, 3)), S((2, 3)), S((2, 3))),
    C("stack-0d", lambda m, a, b: m.stack([a, b]), S(()), S(())),
    C("split-int", lambda m, x: x.split(2), S((5, 3))),
    C("split-sections", lambda m, x: x.split([1, 3], dim=1), S((2, 4))),
    C("split-T", lambda m, x: x.split(1, dim=0), S((3, 4), view="T")),
    C("chunk", lambda m, x: x.chunk(2, 1), S((3, 4))),
    C("chunk-uneven", lambda m, x: x.chunk(3), S((4, 3))),
    C("gather", lambda m, x: x.gather(1, m.tensor([[0, 1, 1], [2, 0, 0], [3, 3, 3]])), S((3, 4))),
    C("gather-0", lambda m, x: x.gather(0, m.tensor([[0, 1, 2, 0], [2, 2, 2, 2]])), S((3, 4))),
    C("gather-T", lambda m, x: x.gather(1, m.tensor([[0, 0], [2, 1], [3, 3]])), S((3, 4), view="T")),
    C("scatter_add", lambda m, x, s: x.scatter_add(1, m.tensor([[0, 1, 1], [2, 0, 0], [3, 3, 3]]), s),
      S((3, 4)), S((3, 3))),
    C("scatter_add-0", lambda m, x, s: x.scatter_add(0, m.tensor([[0, 1, 2, 0], [0, 0, 0, 1]]), s),
      S((3, 4)), S((2, 4))),
    C("index_select", lambda m, x: x.index_select(0, m.tensor([2, 0, 2])), S((3, 4))),
    C("index_select-1", lambda m, x: x.index_select(1, m.tensor([3, 3, 1, 0])), S((3, 4), view="T")),
    C("pad-last", lambda m, x: m.pad(x, (1, 2)), S((3, 4))),
    C("pad-two-dims", lambda m, x: m.pad(x, (1, 1, 2, 0), value=0.5), S((3, 4))),
    C("pad-3d", lambda m, x: m.pad(x, (0, 1, 1, 0, 1, 1)), S((2, 3, 4), view="step")),
    C("repeat", lambda m, x: x.repeat(2, 1), S((3, 4))),
    C("repeat-more-dims", lambda m, x: x.repeat(2, 1, 3), S((3, 4))),
    C("repeat-T", lambda m, x: x.repeat(1, 2), S((3, 4), view="T")),
    C("flip-0", lambda m, x: x.flip(0), S((3, 4))),
    C("flip-01", lambda m, x: x.flip((0, 1)), S((3, 4))),
    C("flip-neg", lambda m, x: x.flip(-1), S((2, 3, 4), view="step")),
    C("tril", lambda m, x: x.tril(), S((3, 4))),
    C("tril--1", lambda m, x: x.tril(-1), S((4, 3), view="T")),
    C("triu", lambda m, x: x.triu(), S((3, 4))),
    C("triu-1", lambda m, x: x.triu(1), S((2, 3, 4))),
]


CASES = BINARY + SCALAR + MATMUL + WHERE + UNARY + REDUCE + VIEWS + COPIES
