"""Conformance rows of torch's in-place unary functions (``exp_``, ``relu_``...) and the arithmetic optimizers and
learners write (``addcmul``, ``addcdiv``, ``logit``, ``aminmax``, ``cumsum(dtype=)``, ``heaviside``).

An in-place row writes into a non-leaf copy of its input, so the gradient reaches the leaf through the written
tensor's new history; each runs in float32 and float64, with plain and ``create_graph`` backward.
"""

from __future__ import annotations

from . import U_SHAPES, C, S, k, unary
from .rows_math import ternary
from .rows_shaping import _ip

_KIND = {"log": "pos", "sqrt": "pos", "rsqrt": "pos", "relu": "away", "abs": "away"}
INPLACE_UNARY = [c for name in ("exp", "log", "sqrt", "rsqrt", "relu", "sigmoid", "tanh", "abs", "neg", "sin", "cos",
                                "erf", "absolute", "negative")
                 for c in unary(f"{name}_", lambda m, x, n=name: _ip(m, n + "_", x), kind=_KIND.get(name, "n"),
                                shapes=U_SHAPES[:4])]

ARITH = (
    ternary("addcmul", lambda m, a, b, c: m.addcmul(a, b, c))
    + ternary("addcmul-value", lambda m, a, b, c: a.addcmul(b, c, value=-0.5))
    + ternary("addcdiv", lambda m, a, b, c: m.addcdiv(a, b, c, value=2), kinds=("n", "n", "away"))
    + [C("addcmul_", lambda m, a, b, c: _ip(m, "addcmul_", a, b, c, value=0.5), S((3, 4)), S((4,)), S((3, 1))),
       C("addcdiv_", lambda m, a, b, c: _ip(m, "addcdiv_", a, b, c), S((3, 4)), S((3, 4)), k((1, 4), "away")),
       C("pow_", lambda m, a: _ip(m, "pow_", a, 3), S((3, 4))),
       C("pow_-tensor", lambda m, a, b: _ip(m, "pow_", a, b), k((3, 4), "pos"), S((4,)))]
    + unary("logit", lambda m, x: m.logit(x), kind="unit")
    + unary("logit-eps", lambda m, x: x.logit(eps=0.2), kind="unit")
    + [C("logit_", lambda m, x: _ip(m, "logit_", x, 0.1), k((3, 4), "unit"))]
    + [C(f"aminmax-{d}-{kd}", lambda m, x, d=d, kd=kd: m.aminmax(x, dim=d, keepdim=kd), k((3, 4), "tie"))
       for d in (None, 0, -1) for kd in (False, True)]
    + [C("aminmax-method-0d", lambda m, x: x.aminmax(), S(())),
       C("cumsum-dtype", lambda m, x: x.cumsum(1, dtype=m.float64), S((3, 4))),
       C("cumsum-int-dtype", lambda m, x: (x * 10).long().cumsum(0, dtype=m.float32), S((3, 4)), grad=False),
       C("heaviside", lambda m, x, v: m.heaviside(x.round(), v), S((3, 4)), S((4,)), grad=False),
       C("heaviside_", lambda m, x: _ip(m, "heaviside_", x.round(), m.tensor(0.5, dtype=x.dtype)), S((3, 4)),
         grad=False)]
)

CASES = INPLACE_UNARY + ARITH
