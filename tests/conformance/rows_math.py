"""Conformance rows of the math family (issue 17): rounding, inverse trigonometric and hyperbolic functions, logs and
exps, remainders and rounded division, lerp, copysign, hypot, xlogy, nan_to_num, tensor-bounded clamps.

Each row runs against torch in float32 and float64, with a plain backward and with ``create_graph=True``, over the
usual layouts (broadcasting, 0-d, size-0 dims, transposed and strided views). Data kinds keep each op on its domain
('unit' for acos/asin/atanh, 'pos' for logs, 'away' for divisors).
"""

from __future__ import annotations

from . import B_SHAPES, U_SHAPES, C, S, binary, k, unary

_TERNARY = ((S((3, 4)), S((3, 4)), S((3, 4))), (S((3, 4)), S((4,)), S((3, 1))), (S(()), S((2, 3)), S(())),
            (S((0, 3)), S((3,)), S((1, 3))), (S((3, 4), view="T"), S((3, 4), view="step"), S((3, 4))))


def ternary(name: str, fn, kinds=("n", "n", "n"), shapes=_TERNARY, **kw) -> list:
    return [C(f"{name}-{a.label}-{b.label}-{c.label}", fn, k(a, kinds[0]), k(b, kinds[1]), k(c, kinds[2]), **kw)
            for a, b, c in shapes]


# torch's clamp backward fails when the bounds broadcast a 0-d input to a larger shape ("output with shape []
# doesn't match the broadcast shape"): that layout is checked by finite differences in test_api_math instead
_CLAMP_TERNARY = _TERNARY[:2] + _TERNARY[3:]


ROUNDING = (
    unary("floor", lambda m, x: x.floor())
    + unary("ceil", lambda m, x: m.ceil(x))
    + unary("trunc", lambda m, x: x.trunc())
    + unary("fix", lambda m, x: m.fix(x))
    + unary("round", lambda m, x: x.round())
    + unary("round_d2", lambda m, x: m.round(x * 10, decimals=2))
    + unary("round_d-1", lambda m, x: (x * 100).round(decimals=-1))
    + unary("frac", lambda m, x: x.frac())
    + unary("frac_fn", lambda m, x: m.frac(x * 3))
    + unary("sign", lambda m, x: x.sign(), kind="away")
    # (torch's gradient of sgn is a ZeroTensor, which cannot be read: test_api_math checks ours is zero)
    + unary("sgn", lambda m, x: m.sgn(x), kind="away", grad=False)
)

TRIG = (
    unary("acos", lambda m, x: x.acos(), kind="unit")
    + unary("arccos", lambda m, x: m.arccos(x), kind="unit")
    + unary("asin", lambda m, x: m.asin(x), kind="unit")
    + unary("arcsin", lambda m, x: x.arcsin(), kind="unit")
    + unary("atan", lambda m, x: x.atan())
    + unary("arctan", lambda m, x: m.arctan(x))
    + unary("tan", lambda m, x: x.tan(), kind="unit")
    + unary("sinh", lambda m, x: x.sinh())
    + unary("cosh", lambda m, x: m.cosh(x))
    + unary("asinh", lambda m, x: x.asinh())
    + unary("arcsinh", lambda m, x: m.arcsinh(x))
    + unary("acosh", lambda m, x: (x + 1).acosh(), kind="pos")
    + unary("arccosh", lambda m, x: m.arccosh(x + 1), kind="pos")
    + unary("atanh", lambda m, x: x.atanh(), kind="unit")
    + unary("arctanh", lambda m, x: m.arctanh(x), kind="unit")
    + binary("atan2", lambda m, a, b: m.atan2(a, b))
    + binary("arctan2", lambda m, a, b: a.arctan2(b))
    + binary("hypot", lambda m, a, b: a.hypot(b))
    + binary("hypot_fn", lambda m, a, b: m.hypot(a, b), shapes=B_SHAPES[:2])
)

LOGS = (
    unary("log2", lambda m, x: x.log2(), kind="pos")
    + unary("log10", lambda m, x: m.log10(x), kind="pos")
    + unary("log1p", lambda m, x: x.log1p(), kind="unit")
    + unary("expm1", lambda m, x: m.expm1(x))
    + unary("exp2", lambda m, x: x.exp2())
    + unary("square", lambda m, x: x.square())
    + unary("square_fn", lambda m, x: m.square(x), shapes=U_SHAPES[:2])
    + unary("reciprocal_fn", lambda m, x: m.reciprocal(x), kind="away")
    + binary("logaddexp", lambda m, a, b: m.logaddexp(a, b))
    + binary("logaddexp_method", lambda m, a, b: (a * 30).logaddexp(b * 30), shapes=B_SHAPES[:2])
    + binary("logaddexp2", lambda m, a, b: a.logaddexp2(b))
    + binary("xlogy", lambda m, a, b: m.xlogy(a, b), kinds=("n", "pos"))
    + binary("xlogy_method", lambda m, a, b: a.xlogy(b), kinds=("n", "pos"), shapes=B_SHAPES[:2])
    + unary("xlogy_number_other", lambda m, x: m.xlogy(x, 2.5))
    + unary("xlogy_number_input", lambda m, x: m.xlogy(1.5, x), kind="pos")
)

DIVISION = (
    binary("fmod", lambda m, a, b: m.fmod(a * 3, b), kinds=("n", "away"))
    + binary("remainder", lambda m, a, b: (a * 3).remainder(b), kinds=("n", "away"))
    + binary("mod_operator", lambda m, a, b: (a * 3) % b, kinds=("n", "away"), shapes=B_SHAPES[:3])
    + unary("fmod_number", lambda m, x: x.fmod(0.7))
    + unary("fmod_neg_number", lambda m, x: m.fmod(x * 3, -0.7))
    + unary("remainder_number", lambda m, x: m.remainder(x * 3, -0.7))
    # torch has no derivative for a number's remainder by a tensor (ours: finite differences in test_api_math)
    + unary("remainder_number_input", lambda m, x: m.remainder(2.5, x), kind="away", grad=False)
    + unary("rmod", lambda m, x: 2.5 % x, kind="away", grad=False)
    + binary("div_trunc", lambda m, a, b: m.div(a * 3, b, rounding_mode="trunc"), kinds=("n", "away"))
    + binary("div_floor", lambda m, a, b: (a * 3).div(b, rounding_mode="floor"), kinds=("n", "away"))
    + binary("divide_floor", lambda m, a, b: m.divide(a * 3, b, rounding_mode="floor"), kinds=("n", "away"),
             shapes=B_SHAPES[:2])
    + binary("div_none", lambda m, a, b: a.div(b, rounding_mode=None), kinds=("n", "away"), shapes=B_SHAPES[:2])
    + binary("true_divide", lambda m, a, b: m.true_divide(a, b), kinds=("n", "away"), shapes=B_SHAPES[:2])
    + unary("div_trunc_number", lambda m, x: (x * 3).div(0.7, rounding_mode="trunc"))
    # floor_divide: no derivative in torch (its output requires grad; backward raises): values only
    + binary("floor_divide", lambda m, a, b: m.floor_divide(a * 3, b), kinds=("n", "away"), grad=False)
    + binary("floordiv_operator", lambda m, a, b: (a * 3) // b, kinds=("n", "away"), grad=False,
             shapes=B_SHAPES[:2])
    + unary("rfloordiv", lambda m, x: 2.5 // x, kind="away", grad=False)
)

INTERPOLATION = (
    binary("lerp_w0.3", lambda m, a, b: m.lerp(a, b, 0.3))
    + binary("lerp_w0.8", lambda m, a, b: a.lerp(b, 0.8))
    + binary("lerp_w1", lambda m, a, b: a.lerp(b, weight=1.0), shapes=B_SHAPES[:2])
    + binary("lerp_w-1.5", lambda m, a, b: m.lerp(input=a, end=b, weight=-1.5), shapes=B_SHAPES[:2])
    + ternary("lerp_tensor_weight", lambda m, a, b, w: m.lerp(a, b, w))
    + ternary("lerp_tensor_weight_method", lambda m, a, b, w: a.lerp(b, w * 0.4), kinds=("n", "n", "unit"))
)

SIGNS_AND_LIMITS = (
    binary("copysign", lambda m, a, b: m.copysign(a, b), kinds=("away", "n"))
    + binary("copysign_method", lambda m, a, b: a.copysign(b), kinds=("away", "away"), shapes=B_SHAPES[:2])
    + unary("copysign_number", lambda m, x: x.copysign(-1.0), kind="away")
    + unary("copysign_neg_zero", lambda m, x: m.copysign(x, -0.0), kind="away")
    + unary("nan_to_num", lambda m, x: x.nan_to_num())
    + unary("nan_to_num_nans", lambda m, x: m.nan_to_num(x.log(), nan=0.5, posinf=2.0, neginf=-2.0))
    + unary("nan_to_num_infs", lambda m, x: (x / (x * 0)).nan_to_num(neginf=-3.0), kind="away")
    + unary("clamp_min_number", lambda m, x: x.clamp_min(-0.3))
    + unary("clamp_max_number", lambda m, x: m.clamp_max(x, 0.3))
    + binary("clamp_min_tensor", lambda m, a, b: m.clamp_min(a, b))
    + binary("clamp_max_tensor", lambda m, a, b: a.clamp_max(b))
    + binary("clamp_min_ties", lambda m, a, b: a.clamp_min(b), kinds=("tie", "tie"), shapes=B_SHAPES[:2])
    + binary("clamp_max_ties", lambda m, a, b: m.clamp_max(a, b), kinds=("tie", "tie"), shapes=B_SHAPES[:2])
    + binary("clamp_tensor_min", lambda m, a, b: m.clamp(a, min=b), shapes=B_SHAPES[:2])
    + binary("clamp_tensor_max", lambda m, a, b: a.clamp(max=b), shapes=B_SHAPES[:2])
    + ternary("clamp_tensors", lambda m, x, lo, hi: x.clamp(lo, hi), shapes=_CLAMP_TERNARY)
    + ternary("clamp_tensors_ties", lambda m, x, lo, hi: m.clamp(x, lo, hi), kinds=("tie", "tie", "tie"),
              shapes=_CLAMP_TERNARY)
    + ternary("clip_tensors_crossed", lambda m, x, lo, hi: x.clip(lo + 0.5, hi - 0.5), kinds=("n", "n", "tie"),
              shapes=_CLAMP_TERNARY)
)

CASES = ROUNDING + TRIG + LOGS + DIVISION + INTERPOLATION + SIGNS_AND_LIMITS
