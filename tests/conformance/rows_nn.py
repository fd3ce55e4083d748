"""Conformance rows of the nn family (issue 17): the functional activations, normalizations, padding modes,
distances, losses and scaled dot-product attention of ``tl.nn.functional``, against ``torch.nn.functional``.

Rows call ``m.nn.functional.<name>``, which is ``tl.nn.functional`` on one side and ``torch.nn.functional`` on the
other. Data kinds keep the piecewise ops away from their kinks ('away' for the shrinks and thresholds).
"""

from __future__ import annotations

from . import U_SHAPES, C, S, k, unary


def F(m):
    return m.nn.functional


_ACT_SHAPES = U_SHAPES  # (3, 4), 0-d, (0, 3), (2, 3, 4), transposed, strided

ACTIVATIONS = (
    # GELU over more than 512 elements: the CPU's vectorised erf and the state its backward reuses
    [C("gelu-large", lambda m, x: F(m).gelu(x * 3), S((40, 30), view="T")),
     C("gelu-tanh-large", lambda m, x: F(m).gelu(x * 3, approximate="tanh"), S((40, 30)))]
    + unary("hardtanh", lambda m, x: F(m).hardtanh(x * 2))
    + unary("hardtanh_bounds", lambda m, x: F(m).hardtanh(x * 3, -0.5, 2.0), shapes=_ACT_SHAPES[:2])
    + unary("relu6", lambda m, x: F(m).relu6(x * 5 + 2))
    + unary("hardsigmoid", lambda m, x: F(m).hardsigmoid(x * 4))
    + unary("hardswish", lambda m, x: F(m).hardswish(x * 4))
    + unary("selu", lambda m, x: F(m).selu(x))
    + unary("celu", lambda m, x: F(m).celu(x, 0.7))
    + unary("mish", lambda m, x: F(m).mish(x * 3))
    + unary("softsign", lambda m, x: F(m).softsign(x))
    + unary("logsigmoid", lambda m, x: F(m).logsigmoid(x * 5))
    + unary("tanhshrink", lambda m, x: F(m).tanhshrink(x))
    + unary("softshrink", lambda m, x: F(m).softshrink(x, 0.2), kind="away")
    + unary("hardshrink", lambda m, x: F(m).hardshrink(x, 0.2), kind="away")
    + unary("threshold", lambda m, x: F(m).threshold(x, 0.1, -2.0), kind="away")
    + unary("softmin", lambda m, x: F(m).softmin(x, -1), shapes=(S((3, 4)), S((0, 3)), S((2, 3, 4), view="T")))
    + [C("glu-4x6", lambda m, x: F(m).glu(x), S((4, 6))),
       C("glu-dim0", lambda m, x: F(m).glu(x, 0), S((4, 3), view="T")),
       C("prelu-1", lambda m, x, w: F(m).prelu(x, w), S((2, 3, 4)), S((1,))),
       C("prelu-ch", lambda m, x, w: F(m).prelu(x, w), S((2, 3, 4)), S((3,))),
       C("prelu-1d", lambda m, x, w: F(m).prelu(x, w), S((5,)), S((1,)))]
)

NORMS = [
    C("group_norm", lambda m, x, w, b: F(m).group_norm(x, 2, w, b), S((2, 4, 3)), S((4,)), S((4,))),
    C("group_norm-4d", lambda m, x: F(m).group_norm(x, 3, eps=1e-3), S((2, 6, 2, 3))),
    C("group_norm-T", lambda m, x, w: F(m).group_norm(x, 1, w), S((3, 4), view="T"), S((4,))),
    C("instance_norm", lambda m, x, w, b: F(m).instance_norm(x, weight=w, bias=b), S((2, 3, 5)), S((3,)), S((3,))),
    C("instance_norm-4d", lambda m, x: F(m).instance_norm(x), S((2, 3, 2, 4))),
    C("rms_norm", lambda m, x, w: F(m).rms_norm(x, (4,), w), S((3, 4)), S((4,))),
    C("rms_norm-2d", lambda m, x: F(m).rms_norm(x, (3, 4), eps=1e-4), S((2, 3, 4))),
    C("normalize", lambda m, x: F(m).normalize(x), S((3, 4))),
    C("normalize-p1", lambda m, x: F(m).normalize(x, 1.0, 0), S((3, 4), view="T")),
    C("normalize-3d", lambda m, x: F(m).normalize(x, 3.0, -1), S((2, 3, 4))),
]

PADS = [
    C("pad-reflect-1d", lambda m, x: F(m).pad(x, (2, 1), mode="reflect"), S((2, 3, 4))),
    C("pad-reflect-2d", lambda m, x: F(m).pad(x, (1, 2, 2, 0), mode="reflect"), S((2, 3, 4))),
    C("pad-reflect-3d", lambda m, x: F(m).pad(x, (1, 1, 1, 0, 0, 1), mode="reflect"), S((1, 2, 3, 3, 4))),
    C("pad-replicate-1d", lambda m, x: F(m).pad(x, (3, 2), mode="replicate"), S((2, 3))),
    C("pad-replicate-2d", lambda m, x: F(m).pad(x, (0, 3, 1, 1), mode="replicate"), S((1, 2, 3, 4), view="T")),
    C("pad-circular-1d", lambda m, x: F(m).pad(x, (2, 3), mode="circular"), S((2, 3, 4))),
    C("pad-circular-2d", lambda m, x: F(m).pad(x, (1, 2, 3, 0), mode="circular"), S((2, 3, 4), view="step")),
    C("pad-circular-neg", lambda m, x: F(m).pad(x, (-1, 2), mode="circular"), S((2, 4))),
    C("pad-constant-neg", lambda m, x: F(m).pad(x, (-1, 2, 1, -2), value=1.5), S((3, 4, 5))),
]

DISTANCES = [
    C("cosine_similarity", lambda m, a, b: F(m).cosine_similarity(a, b), S((4, 5)), S((4, 5))),
    C("cosine_similarity-bcast", lambda m, a, b: F(m).cosine_similarity(a, b, -1), S((3, 1, 4)), S((2, 4))),
    C("cosine_similarity-T", lambda m, a, b: F(m).cosine_similarity(a, b, 0), S((3, 4), view="T"), S((3, 4))),
    C("pairwise_distance", lambda m, a, b: F(m).pairwise_distance(a, b), S((4, 5)), S((4, 5))),
    C("pairwise_distance-p1", lambda m, a, b: F(m).pairwise_distance(a, b, 1.0, keepdim=True), S((4, 5)),
      S((5,))),
    C("pairwise_distance-p3", lambda m, a, b: F(m).pairwise_distance(a, b, 3.0), S((2, 3, 4)), S((2, 3, 4))),
    C("bilinear", lambda m, a, b, w, bias: F(m).bilinear(a, b, w, bias), S((5, 3)), S((5, 4)), S((2, 3, 4)),
      S((2,))),
    C("bilinear-3d", lambda m, a, b, w: F(m).bilinear(a, b, w), S((2, 5, 3)), S((2, 5, 4)), S((6, 3, 4))),
]


def _with_reduction(fn, r: str):
    return lambda m, *xs: fn(m, *xs, r)


def _red(name, fn, *specs):
    return [C(f"{name}-{r}", _with_reduction(fn, r), *specs) for r in ("mean", "sum", "none")]


LOSSES = (
    _red("smooth_l1", lambda m, a, b, r: F(m).smooth_l1_loss(a, b, reduction=r, beta=0.5), S((3, 4)), S((3, 4)))
    + _red("smooth_l1_b0", lambda m, a, b, r: F(m).smooth_l1_loss(a, b, reduction=r, beta=0.0), S((5,)), S((5,)))
    + _red("huber", lambda m, a, b, r: F(m).huber_loss(a, b, reduction=r, delta=0.7), S((3, 4)), S((3, 4)))
    + _red("kl_div", lambda m, a, b, r: F(m).kl_div(a, b, reduction=r), S((3, 4)), k(S((3, 4)), "pos"))
    + _red("kl_div_log", lambda m, a, b, r: F(m).kl_div(a, b, reduction=r, log_target=True), S((3, 4)), S((3, 4)))
    + [C("kl_div-batchmean", lambda m, a, b: F(m).kl_div(a, b, reduction="batchmean"), S((3, 4)),
         k(S((3, 4)), "pos"))]
    + _red("margin_ranking", lambda m, a, b, y, r: F(m).margin_ranking_loss(a, b, (y * 5).sign(), 0.3, reduction=r),
           S((6,)), S((6,)), S((6,)))
    + _red("cosine_embedding", lambda m, a, b, y, r: F(m).cosine_embedding_loss(a, b, (y * 5).sign(), 0.1,
                                                                                reduction=r),
           S((4, 5)), S((4, 5)), S((4,)))
    + [C("cosine_embedding-1d", lambda m, a, b: F(m).cosine_embedding_loss(a, b, m.tensor(-1.0), -0.5), S((5,)),
         S((5,)))]
    + _red("triplet_margin", lambda m, a, p, n, r: F(m).triplet_margin_loss(a, p, n, 0.8, reduction=r), S((4, 5)),
           S((4, 5)), S((4, 5)))
    + [C("triplet_margin-swap-p1", lambda m, a, p, n: F(m).triplet_margin_loss(a, p, n, 2.0, 1.0, swap=True),
         S((4, 5)), S((4, 5)), S((4, 5)))]
    + _red("soft_margin", lambda m, a, y, r: F(m).soft_margin_loss(a, (y * 5).sign().detach(), reduction=r), S((3, 4)),
           S((3, 4)))
    + _red("hinge_embedding", lambda m, a, y, r: F(m).hinge_embedding_loss(a, (y * 5).sign(), 0.5, reduction=r),
           S((3, 4)), S((3, 4)))
    + _red("mse_weight", lambda m, a, b, r: F(m).mse_loss(a, b, reduction=r, weight=b.detach().abs()), S((3, 4)),
           S((3, 4)))
)


ATTENTION = [
    C("sdpa", lambda m, q, kk, v: F(m).scaled_dot_product_attention(q, kk, v), S((2, 3, 4, 8)), S((2, 3, 5, 8)),
      S((2, 3, 5, 6))),
    C("sdpa-causal", lambda m, q, kk, v: F(m).scaled_dot_product_attention(q, kk, v, is_causal=True),
      S((2, 4, 8)), S((2, 4, 8)), S((2, 4, 8))),
    C("sdpa-causal-rect", lambda m, q, kk, v: F(m).scaled_dot_product_attention(q, kk, v, is_causal=True,
                                                                                scale=0.3),
      S((3, 5, 4)), S((3, 2, 4)), S((3, 2, 4))),
    C("sdpa-float-mask", lambda m, q, kk, v, a: F(m).scaled_dot_product_attention(q, kk, v, a), S((2, 4, 8)),
      S((2, 5, 8)), S((2, 5, 3)), S((4, 5))),
    C("sdpa-bool-mask", lambda m, q, kk, v, a: F(m).scaled_dot_product_attention(q, kk, v, a.detach() > -0.5),
      S((2, 4, 8)), S((2, 5, 8)), S((2, 5, 3)), S((4, 5))),
    C("sdpa-dead-row", lambda m, q, kk, v, a: F(m).scaled_dot_product_attention(
        q, kk, v, (a.detach() > -0.3) & (m.arange(4).reshape(4, 1) != 2)), S((2, 4, 8)), S((2, 5, 8)), S((2, 5, 3)),
      S((4, 5))),
    C("sdpa-T", lambda m, q, kk, v: F(m).scaled_dot_product_attention(q, kk, v), S((3, 4), view="T"),
      S((5, 4), view="step"), S((5, 2))),
    # the fused node (no dropout, no user mask): causal views, broadcast batch dims, and scores so spread that the
    # CPU kernel shifts each row by its own maximum instead of each matrix's
    C("sdpa-causal-views", lambda m, q, kk, v: F(m).scaled_dot_product_attention(q, kk, v, is_causal=True),
      S((2, 3, 4, 6), view="T"), S((2, 3, 5, 6), view="step"), S((2, 3, 5, 6), view="T")),
    C("sdpa-bcast", lambda m, q, kk, v: F(m).scaled_dot_product_attention(q, kk, v, is_causal=True),
      S((2, 3, 4, 8)), S((3, 5, 8)), S((3, 5, 6))),
    C("sdpa-spread", lambda m, q, kk, v: F(m).scaled_dot_product_attention(q * 30, kk, v, is_causal=True),
      S((2, 6, 4)), S((2, 6, 4)), S((2, 6, 3))),
]

CASES = ACTIVATIONS + NORMS + PADS + DISTANCES + LOSSES + ATTENTION
