"""The math family's API against torch, beyond the conformance rows (``tests/conformance/rows_math.py``): integer and
bool dtypes, keyword spellings, return types, error conditions and messages, in-place variants and their version
bumps, edges (NaN, infinities, zeros, ties, empty tensors), bitwise ops, finite-difference gradients, the tensor
details (``nelement``, ``new_empty``, ``__format__``...), and the ops on a second memory space and the CUDA emulator."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from conftest import assert_close, pair

import tinygrad_like as tl

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

INTS = np.array([[7, -7, 3, 0], [-1, 5, -6, 2]])
DIVS = np.array([[2, 2, -2, 3], [-3, 4, 4, -1]])
SPECIAL = np.array([1.5, -2.5, 0.5, -0.5, 2.5, 0.0, -0.0, np.inf, -np.inf, np.nan])


def _both(fn, *arrays, dtype=None):
    """``fn`` applied to the tl and torch tensors made from ``arrays``: (tl result, torch result)."""
    tls, ths = zip(*(pair(a, dtype=dtype) for a in arrays))
    return fn(tl, *tls), fn(torch, *ths)


# ---- rounding ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "fix", "frac", "sign", "sgn"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rounding_special_values(name, dtype):
    got, want = _both(lambda m, x: getattr(m, name)(x), SPECIAL, dtype=dtype)
    assert_close(got, want)
    assert np.array_equal(np.signbit(got.numpy()), np.signbit(want.numpy())) or name in ("sign", "sgn", "frac")


@pytest.mark.parametrize("decimals", [0, 1, 2, 3, -1, -2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_half_to_even_and_decimals(decimals, dtype):
    a = np.array([0.5, 1.5, 2.5, -2.5, 0.125, 0.375, 1234.5678, -15.0, 25.0, 149.99, 1e-3])
    got, want = _both(lambda m, x: m.round(x, decimals=decimals), a, dtype=dtype)
    assert_close(got, want, atol=0, rtol=1e-6)
    ta, ha = pair(a, dtype=dtype)
    assert_close(ta.round(decimals=decimals), ha.round(decimals=decimals), atol=0, rtol=1e-6)


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "fix"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_rounding_integers_come_back_unchanged_as_a_copy(name, dtype):
    t, h = pair(INTS, dtype=dtype)
    got = getattr(t, name)()
    assert_close(got, getattr(h, name)())
    assert got.storage is not t.storage


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "frac"])
def test_rounding_refuses_bool_and_frac_refuses_integers(name):
    with pytest.raises(NotImplementedError, match=f'"{name}" not implemented for \'bool\''):
        getattr(tl.tensor([True, False]), name)()
    if name == "frac":
        with pytest.raises(NotImplementedError, match="frac.*int64"):
            tl.tensor([1, 2]).frac()
    with pytest.raises(NotImplementedError):
        getattr(torch.tensor([True, False]), name)()


def test_round_decimals_keyword_only_and_not_for_integers():
    x = tl.tensor([1.2345])
    with pytest.raises(TypeError):
        x.round(2)
    with pytest.raises(TypeError):
        tl.round(x, 2)
    with pytest.raises(NotImplementedError, match="round with decimals.*int64"):
        tl.tensor([1, 2]).round(decimals=1)
    with pytest.raises(TypeError, match="decimals"):
        x.round(decimals=1.5)


def test_sign_and_sgn_of_bools_integers_nan_and_zero_gradient():
    for dtype in ("bool", "int32", "int64", "float32"):
        got, want = _both(lambda m, x: m.sign(x), np.array([2, -3, 0, 1]), dtype=dtype)
        assert_close(got, want)
        got, want = _both(lambda m, x: m.sgn(x), np.array([2, -3, 0, 1]), dtype=dtype)
        assert_close(got, want)
    x = tl.tensor([1.0, -2.0, 0.0], requires_grad=True)
    x.sgn().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert tl.sign(tl.tensor([float("nan")])).tolist() == [0.0]  # torch's (NumPy's sign of NaN is NaN)


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "sign"])
def test_rounding_gradient_is_zero_and_frac_passes_it(name):
    x, h = pair(np.array([1.3, -2.7, 0.5]), requires_grad=True)
    getattr(x, name)().sum().backward()
    getattr(h, name)().sum().backward()
    assert_close(x.grad, h.grad)
    x, h = pair(np.array([1.3, -2.7, 0.5]), requires_grad=True)
    (x.frac() * x).sum().backward()
    (h.frac() * h).sum().backward()
    assert_close(x.grad, h.grad)


# ---- transcendental functions on integers and bools --------------------------------------------------------
UNARY_FLOAT = ["acos", "asin", "atan", "tan", "sinh", "cosh", "asinh", "acosh", "atanh", "arccos", "arcsin",
               "arctan", "arcsinh", "arccosh", "arctanh", "log2", "log10", "log1p", "expm1", "exp2", "reciprocal",
               "square"]


@pytest.mark.parametrize("name", UNARY_FLOAT)
@pytest.mark.parametrize("dtype", ["int32", "int64", "bool", "float16"])
def test_unary_math_on_integer_bool_and_half_inputs(name, dtype):
    a = np.array([0, 1, 2, 3]) if dtype != "bool" else np.array([0, 1, 1, 0])
    got, want = _both(lambda m, x: getattr(m, name)(x), a, dtype=dtype)
    tol = 2e-3 if dtype == "float16" else 1e-6
    assert_close(got, want, atol=tol, rtol=tol)
    t, h = pair(a, dtype=dtype)
    assert_close(getattr(t, name)(), getattr(h, name)(), atol=tol, rtol=tol)


@pytest.mark.parametrize("name", ["atan2", "copysign", "xlogy", "hypot", "logaddexp", "logaddexp2"])
@pytest.mark.parametrize("da,db", [("int64", "int64"), ("int32", "float32"), ("float64", "int64"), ("bool", "bool"),
                                   ("float16", "float32"), ("float32", "float64")])
def test_binary_float_ops_promote_like_torch(name, da, db):
    a, b = np.array([[0, 1, -2], [3, 0, 2]]), np.array([1, 0, 2])
    ta, ha = pair(a, dtype=da)
    tb, hb = pair(b, dtype=db)
    try:
        want = getattr(torch, name)(ha, hb)
    except (NotImplementedError, RuntimeError) as e:
        with pytest.raises(type(e)):
            getattr(tl, name)(ta, tb)
        return
    assert_close(getattr(tl, name)(ta, tb), want, atol=2e-3, rtol=2e-3)


def test_ops_that_want_a_tensor_other_refuse_numbers():
    x = tl.tensor([1.0, 2.0])
    for name in ("atan2", "hypot", "logaddexp", "logaddexp2", "isclose", "equal"):
        with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'other' \\(position 2\\) must be Tensor"):
            getattr(tl, name)(x, 1.0)
    with pytest.raises(TypeError, match="argument 'input'"):
        tl.floor(1.5)
    with pytest.raises(TypeError, match="argument 'end'"):
        tl.lerp(x, 2.0, 0.5)


def test_keyword_spellings():
    x, h = pair(np.array([1.25, -2.5, 3.75]))
    y, hy = pair(np.array([0.5, 1.5, -2.0]))
    assert_close(tl.fmod(input=x, other=y), torch.fmod(input=h, other=hy))
    assert_close(tl.remainder(input=x, other=2), torch.remainder(input=h, other=2))
    assert_close(tl.lerp(input=x, end=y, weight=0.25), torch.lerp(input=h, end=hy, weight=0.25))
    assert_close(x.lerp(y, weight=0.75), h.lerp(hy, weight=0.75))
    assert_close(tl.atan2(input=x, other=y), torch.atan2(input=h, other=hy))
    assert_close(tl.isclose(x, y, rtol=0.5, atol=1.0, equal_nan=True), torch.isclose(h, hy, rtol=0.5, atol=1.0,
                                                                                   equal_nan=True))
    assert_close(tl.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0), torch.nan_to_num(h, nan=1.0, posinf=2.0,
                                                                                    neginf=-2.0))
    assert_close(tl.clamp_min(x, min=0.0), torch.clamp_min(h, min=0.0))
    assert_close(x.clamp_max(max=y), h.clamp_max(max=hy))
    assert_close(tl.div(x, y, rounding_mode="floor"), torch.div(h, hy, rounding_mode="floor"))
    assert_close(tl.divide(x, other=y, rounding_mode="trunc"), torch.divide(h, other=hy, rounding_mode="trunc"))
    assert_close(tl.true_divide(x, other=2), torch.true_divide(h, other=2))
    assert_close(tl.floor(input=x), torch.floor(input=h))
    assert tl.equal(input=x, other=x) is True
    assert tl.is_floating_point(input=x) is True


def test_aliases_are_the_same_ops():
    assert tl.Tensor.arccos is tl.Tensor.acos and tl.Tensor.fix is tl.Tensor.trunc
    assert tl.arctan2 is tl.atan2 and tl.fix is tl.trunc and tl.arcsinh is tl.asinh
    assert tl.Tensor.divide is tl.Tensor.div


# ---- remainders and division -------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda m, a, b: m.fmod(a, b), lambda m, a, b: m.remainder(a, b), lambda m, a, b: m.floor_divide(a, b),
    lambda m, a, b: m.div(a, b, rounding_mode="trunc"), lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    lambda m, a, b: a % b, lambda m, a, b: a // b, lambda m, a, b: a.fmod(3), lambda m, a, b: a.remainder(-3),
    lambda m, a, b: a.div(-4, rounding_mode="trunc"), lambda m, a, b: a.div(4, rounding_mode="floor"),
    lambda m, a, b: m.remainder(5, b), lambda m, a, b: m.floor_divide(-5, b), lambda m, a, b: 9 % b,
    lambda m, a, b: -9 // b], ids=["fmod", "remainder", "floor_divide", "trunc", "floor", "mod", "floordiv",
                                   "fmod_n", "remainder_n", "trunc_n", "floor_n", "n_remainder", "n_floor_divide",
                                   "rmod", "rfloordiv"])
@pytest.mark.parametrize("da,db", [("int64", "int64"), ("int32", "int32"), ("int32", "int64"), ("float32", "float32"),
                                   ("float64", "int32"), ("int64", "float32")])
def test_integer_and_float_remainders_and_rounded_division(op, da, db):
    ta, ha = pair(INTS, dtype=da)
    tb, hb = pair(DIVS, dtype=db)
    assert_close(op(tl, ta, tb), op(torch, ha, hb))


@pytest.mark.parametrize("op", [
    lambda m, a, b: m.fmod(a, b), lambda m, a, b: m.remainder(a, b), lambda m, a, b: m.floor_divide(a, b),
    lambda m, a, b: m.div(a, b, rounding_mode="trunc"), lambda m, a, b: m.div(a, b, rounding_mode="floor")])
def test_float_division_by_zero_gives_ieee_results(op):
    a = np.array([5.0, -5.0, 0.0, np.inf, np.nan, 1.0])
    b = np.array([0.0, 0.0, 0.0, 2.0, 1.0, -0.0])
    got, want = _both(op, a, b, dtype="float32")
    assert_close(got, want)


@pytest.mark.parametrize("op", [
    lambda a, b: a.fmod(b), lambda a, b: a.remainder(b), lambda a, b: a.floor_divide(b), lambda a, b: a % b,
    lambda a, b: a // b, lambda a, b: a.div(b, rounding_mode="trunc"), lambda a, b: a.div(b, rounding_mode="floor")])
def test_integer_division_by_zero_raises_as_torch(op):
    a = tl.tensor([4, 5])
    for b in (tl.tensor([1, 0]), tl.tensor(0), 0):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op(a, b)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op(torch.tensor([4, 5]), torch.tensor([1, 0]) if isinstance(b, tl.Tensor) else 0)
    assert op(a.float(), 0).dtype is tl.float32  # floats divide by zero into inf/nan


def test_division_refusals_and_the_rounding_mode_message():
    b = tl.tensor([True, False])
    for fn in (lambda: b.fmod(b), lambda: b.remainder(b), lambda: b // b, lambda: b.div(b, rounding_mode="trunc")):
        with pytest.raises(NotImplementedError, match="bool"):
            fn()
    with pytest.raises(RuntimeError, match="div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                                           "found 'round'"):
        tl.tensor([1.0]).div(2, rounding_mode="round")
    with pytest.raises(RuntimeError, match="3.*4|4.*3"):
        tl.ones(3).fmod(tl.ones(4))


def test_floor_divide_has_no_derivative_as_in_torch_and_div_floor_a_zero_one():
    x = tl.tensor([1.5, -2.5], requires_grad=True)
    y = tl.floor_divide(x, 2)
    assert y.requires_grad and torch.floor_divide(torch.tensor([1.5], requires_grad=True), 2).requires_grad
    with pytest.raises(RuntimeError, match="derivative for 'floor_divide' is not implemented"):
        y.sum().backward()
    x.div(2, rounding_mode="floor").sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_remainder_gradients_with_respect_to_both_inputs():
    x, h = pair(np.array([5.5, -5.5, 3.25]), requires_grad=True)
    y, hy = pair(np.array([2.0, 2.0, -1.5]), requires_grad=True)
    (x.fmod(y) * 2 + tl.remainder(x, y)).sum().backward()
    (h.fmod(hy) * 2 + torch.remainder(h, hy)).sum().backward()
    assert_close(x.grad, h.grad)
    assert_close(y.grad, hy.grad)


# ---- lerp --------------------------------------------------------------------------------------------------
def test_lerp_dtype_rules_and_broadcasting():
    s, e = tl.ones(3), tl.ones(3)
    with pytest.raises(RuntimeError, match="expected dtype float32 for `end` but got dtype float64"):
        tl.lerp(s, e.double(), 0.5)
    with pytest.raises(RuntimeError, match="expected dtype float32 for `weight` but got dtype float64"):
        tl.lerp(s, e, tl.ones(3, dtype=tl.float64))
    with pytest.raises(NotImplementedError, match="lerp.*int64"):
        tl.lerp(tl.tensor([1, 2]), tl.tensor([1, 2]), 0.5)
    assert tl.lerp(s, e, tl.tensor(0.5, dtype=tl.float64)).dtype is tl.float32  # a 0-d weight may differ
    assert tl.lerp(s, e, tl.tensor(1)).tolist() == [1.0, 1.0, 1.0]
    assert tl.lerp(tl.ones(3), tl.ones(2, 3), tl.ones(4, 1, 1)).shape == (4, 2, 3)
    with pytest.raises(RuntimeError, match="lerp"):
        tl.lerp(tl.ones(3), tl.ones(4), 0.5)
    got, want = _both(lambda m, a, b: m.lerp(a, b, 0.3), np.ones(3), np.full(3, 2.0), dtype="float16")
    assert_close(got, want)


def test_lerp_weight_one_is_exact_and_gradients_wrt_all_three():
    a, ha = pair(np.array([1e8, -3.0, 0.1]), dtype="float32", requires_grad=True)
    b, hb = pair(np.array([1.0, 7.0, 0.3]), dtype="float32", requires_grad=True)
    w, hw = pair(np.array([1.0, 0.25, 0.75]), dtype="float32", requires_grad=True)
    out, hout = tl.lerp(a, b, w), torch.lerp(ha, hb, hw)
    assert out.tolist()[0] == 1.0 == hout.tolist()[0]
    out.sum().backward()
    hout.sum().backward()
    for t, h in ((a, ha), (b, hb), (w, hw)):
        assert_close(t.grad, h.grad)


# ---- copysign, xlogy, hypot, atan2, logaddexp at their edges -----------------------------------------------
@pytest.mark.parametrize("fn,a,b", [
    (lambda m, a, b: m.copysign(a, b), [0.0, 1.0, -2.0, 0.0, np.inf], [-1.0, 1.0, 1.0, -0.0, -1.0]),
    (lambda m, a, b: m.atan2(a, b), [0.0, 1.0, 1e-200, 0.0, np.inf, 1.0], [1e-200, 0.0, 1e-200, 0.0, 1.0, np.inf]),
    (lambda m, a, b: m.hypot(a, b), [3.0, 1e200, -1e-200], [4.0, 1e200, 1e-200]),
    (lambda m, a, b: m.xlogy(a, b), [0.0, 0.0, 2.0, 0.0, 3.0, 0.0], [0.0, -1.0, 0.0, np.nan, np.inf, 2.0]),
    (lambda m, a, b: m.logaddexp(a, b), [-np.inf, np.inf, 1.0, -1e300], [-np.inf, np.inf, 2.0, 1e300]),
    (lambda m, a, b: m.logaddexp2(a, b), [-np.inf, 3.0, -50.0], [-np.inf, 3.0, 50.0]),
])
def test_binary_ops_values_and_gradients_at_their_edges(fn, a, b):
    ta, ha = pair(np.array(a), requires_grad=True)
    tb, hb = pair(np.array(b), requires_grad=True)
    out, hout = fn(tl, ta, tb), fn(torch, ha, hb)
    assert_close(out, hout)
    out.sum().backward()
    hout.sum().backward()
    assert_close(ta.grad, ha.grad)
    assert_close(tb.grad, hb.grad)


def test_copysign_with_a_number_and_xlogy_with_a_number_first():
    x, h = pair(np.array([0.0, 2.0, -3.0]), requires_grad=True)
    (x.copysign(-0.0) + tl.xlogy(2, x.abs() + 1) + tl.xlogy(x, 3)).sum().backward()
    (h.copysign(-0.0) + torch.xlogy(2, h.abs() + 1) + torch.xlogy(h, 3)).sum().backward()
    assert_close(x.grad, h.grad)


# ---- nan_to_num --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("kw", [{}, {"nan": 1.0}, {"nan": 2, "posinf": 3.0, "neginf": -4}, {"posinf": 1e3}])
def test_nan_to_num_values(dtype, kw):
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0])
    got, want = _both(lambda m, x: m.nan_to_num(x, **kw), a, dtype=dtype)
    assert_close(got, want)


def test_nan_to_num_integers_unchanged_and_gradient_only_where_finite():
    for dtype in ("int32", "int64", "bool"):
        got, want = _both(lambda m, x: m.nan_to_num(x), np.array([1, 0, 1]), dtype=dtype)
        assert_close(got, want)
    x, h = pair(np.array([np.nan, np.inf, -np.inf, 2.0]), requires_grad=True)
    (x.nan_to_num() * 3).sum().backward()
    (h.nan_to_num() * 3).sum().backward()
    assert_close(x.grad, h.grad)
    assert x.nan_to_num(0.0, 1.0, -1.0).tolist() == [0.0, 1.0, -1.0, 2.0]  # positional, as torch's


# ---- finiteness, closeness, equality -----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["isfinite", "isinf", "isposinf", "isneginf", "isnan"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "bool"])
def test_finiteness_tests(name, dtype):
    a = SPECIAL if dtype.startswith("float") else np.array([1, 0, 1, 1])
    got, want = _both(lambda m, x: getattr(m, name)(x), a, dtype=dtype)
    assert_close(got, want)
    assert not got.requires_grad
    empty = getattr(tl.zeros(0, 3), name)()
    assert empty.shape == (0, 3) and empty.dtype is tl.bool


def test_finiteness_tests_never_require_grad():
    x = tl.tensor([1.0, float("inf")], requires_grad=True)
    assert not any(getattr(x, n)().requires_grad for n in ("isfinite", "isinf", "isposinf", "isneginf"))


@pytest.mark.parametrize("kw", [{}, {"rtol": 0.1}, {"atol": 1.0, "rtol": 0.0}, {"equal_nan": True},
                                {"rtol": 0.0, "atol": 0.0}, {"rtol": 0.0, "atol": 0.0, "equal_nan": True}])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "bool"])
def test_isclose(kw, dtype):
    if dtype.startswith("float"):
        a = np.array([1.0, 1.0, np.nan, np.inf, np.inf, -np.inf, 0.0, 100.0])
        b = np.array([1.0 + 1e-6, 1.05, np.nan, np.inf, -np.inf, -np.inf, 1e-9, 100.5])
    else:
        a, b = np.array([1, 2, 3, 0, 10]), np.array([1, 3, 1, 0, 11])
    got, want = _both(lambda m, x, y: m.isclose(x, y, **kw), a, b, dtype=dtype)
    assert_close(got, want)
    ta, ha = pair(a, dtype=dtype)
    tb, hb = pair(b, dtype=dtype)
    assert ta.allclose(tb, **kw) is torch.allclose(ha, hb, **kw)
    assert tl.allclose(ta, ta, equal_nan=True) is True and torch.allclose(ha, ha, equal_nan=True)


def test_isclose_errors_and_broadcasting():
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        tl.isclose(tl.ones(2), tl.ones(2, dtype=tl.float64))
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero, but got -1"):
        tl.isclose(tl.ones(2), tl.ones(2), rtol=-1)
    with pytest.raises(RuntimeError, match="atol must be greater than or equal to zero"):
        tl.isclose(tl.ones(2), tl.ones(2), atol=-1e-3)
    assert tl.allclose(tl.ones(3), tl.ones(2, 3)) is True
    with pytest.raises(RuntimeError, match="isclose"):
        tl.allclose(tl.ones(3), tl.ones(4))
    assert tl.isclose(tl.ones(3), tl.ones(2, 1)).shape == (2, 3)
    assert tl.allclose(tl.zeros(0), tl.zeros(0)) is True


def test_equal_is_a_python_bool():
    assert tl.equal(tl.tensor([1, 2]), tl.tensor([1.0, 2.0])) is True  # values compared after promotion
    assert tl.equal(tl.ones(3), tl.ones(2, 3)) is False
    assert tl.equal(tl.tensor([float("nan")]), tl.tensor([float("nan")])) is False
    assert tl.equal(tl.zeros(0), tl.zeros(0)) is True
    assert tl.ones(2).equal(tl.tensor([1.0, 2.0])) is False
    assert torch.equal(torch.tensor([1, 2]), torch.tensor([1.0, 2.0])) is True


# ---- integer bits ------------------------------------------------------------------------------------------
BIT_OPS = {"and": operator.and_, "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
           "rshift": operator.rshift}
BIT_NAMES = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
             "rshift": "bitwise_right_shift"}


@pytest.mark.parametrize("op", list(BIT_OPS))
@pytest.mark.parametrize("da,db", [("int64", "int64"), ("int32", "int32"), ("int32", "int64"), ("bool", "bool"),
                                   ("bool", "int64"), ("int64", "bool"), ("int32", "py_int"), ("int32", "py_big"),
                                   ("int64", "py_bool"), ("bool", "py_int"), ("py_int", "int32")])
def test_bitwise_ops_against_torch(op, da, db):
    a = np.array([[12, -10, 7, 0], [1, 255, -1, 3]])
    b = np.array([10, 3, 65, -1]) if "lshift" != op != "rshift" else np.array([1, 33, 70, -1])
    if da == "py_int":
        ta = ha = 3
    else:
        ta, ha = pair(a if da != "bool" else a % 2, dtype=da)
    tb = hb = {"py_int": 5, "py_big": 2 ** 40 + 3, "py_bool": True}.get(db)
    if tb is None:
        tb, hb = pair(b if db != "bool" else b % 2, dtype=db)
    fn = BIT_OPS[op]
    try:
        want = fn(ha, hb)
    except NotImplementedError:
        with pytest.raises(NotImplementedError, match="not implemented for 'bool'"):
            fn(ta, tb)
        return
    assert_close(fn(ta, tb), want)
    name = BIT_NAMES[op]
    assert_close(getattr(tl, name)(ta, tb), getattr(torch, name)(ha, hb))
    if da != "py_int":
        assert_close(getattr(ta, name)(tb), getattr(ha, name)(hb))


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_bitwise_not_and_invert(dtype):
    got, want = _both(lambda m, x: ~x, np.array([0, 1, -2, 5]) if dtype != "bool" else np.array([0, 1, 1, 0]),
                      dtype=dtype)
    assert_close(got, want)
    got, want = _both(lambda m, x: m.bitwise_not(x), np.array([0, 1, 7]), dtype=dtype)
    assert_close(got, want)


def test_bitwise_ops_refuse_floats_as_torch():
    f, i = tl.tensor([1.0]), tl.tensor([1])
    for fn, name in ((lambda: f & f, "bitwise_and"), (lambda: i | 1.5, "bitwise_or"), (lambda: 2.5 ^ i, "bitwise_xor"),
                     (lambda: f << 1, "bitwise_left_shift"), (lambda: i >> f, "bitwise_right_shift"),
                     (lambda: tl.bitwise_not(f), "bitwise_not"), (lambda: tl.bitwise_and(f, i), "bitwise_and")):
        with pytest.raises(NotImplementedError, match=f'"{name}" not implemented for \'float32\''):
            fn()
    with pytest.raises(TypeError, match="~ \\(operator.invert\\) is only implemented on integer and Boolean"):
        _ = ~f
    with pytest.raises(TypeError, match="~"):
        _ = ~torch.tensor([1.0])
    with pytest.raises(NotImplementedError, match="bitwise_left_shift.*'bool'"):
        tl.tensor([True]) << tl.tensor([True])
    assert (tl.tensor([True, False]) >> 1).dtype is tl.int64
    assert i.__and__("x") is NotImplemented


def test_reflected_bitwise_ops_and_number_first_functions():
    i, h = pair(np.array([1, 2, 3]))
    for fn in (lambda m, x: 1 << x, lambda m, x: 256 >> x, lambda m, x: 6 & x, lambda m, x: 6 | x,
               lambda m, x: 6 ^ x, lambda m, x: m.bitwise_left_shift(1, x), lambda m, x: m.bitwise_and(3, x)):
        assert_close(fn(tl, i), fn(torch, h))


@pytest.mark.parametrize("op", ["__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "bitwise_and_",
                                "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_", "bitwise_right_shift_"])
def test_in_place_bitwise_ops_bump_the_version(op):
    t, h = pair(np.array([12, 10, 7]))
    view = t[1:]
    before = t._version
    out = getattr(t, op)(tl.tensor([1, 2, 3]))
    getattr(h, op)(torch.tensor([1, 2, 3]))
    assert out is t and t._version == before + 1 and view._version == t._version
    assert_close(t, h)


def test_in_place_bitwise_not_and_cast_errors():
    t = tl.tensor([5, 7])
    t.bitwise_not_()
    assert t.tolist() == [-6, -8]
    with pytest.raises(RuntimeError, match="int64 can't be cast to the desired output type bool"):
        tl.tensor([True]).bitwise_and_(tl.tensor([3]))
    b = tl.tensor([True, False])
    b &= tl.tensor([True, True])
    assert b.tolist() == [True, False] and b.dtype is tl.bool


def test_integer_ops_profile_one_kernel_each():
    a, b = tl.tensor([12, 10, 7]), tl.tensor([1, 2, 3])
    with tl.profile() as prof:
        a << b
        a >> 1
        _ = ~a
    assert [k.name for k in prof.kernels] == ["bitwise_left_shift", "bitwise_right_shift", "bitwise_not"]


# ---- in-place math -----------------------------------------------------------------------------------------
INPLACE_UNARY = ["floor_", "ceil_", "trunc_", "fix_", "frac_", "sign_", "sgn_", "acos_", "asin_", "atan_", "tan_",
                 "sinh_", "cosh_", "asinh_", "atanh_", "arccos_", "arcsin_", "arctan_", "arcsinh_", "arctanh_",
                 "log2_", "log10_", "log1p_", "expm1_", "exp2_", "reciprocal_", "square_", "nan_to_num_"]


@pytest.mark.parametrize("name", INPLACE_UNARY)
def test_in_place_unary_math(name):
    t, h = pair(np.array([0.3, -0.6, 0.9]), dtype="float32")
    view = t[:2]
    out = getattr(t, name)()
    getattr(h, name)()
    assert out is t and t._version == 1 and view._version == 1
    assert_close(t, h)
    if hasattr(torch, name):
        t2, h2 = pair(np.array([0.3, -0.6, 0.9]), dtype="float32")
        getattr(tl, name)(t2)
        getattr(torch, name)(h2)
        assert_close(t2, h2)


@pytest.mark.parametrize("call", [
    lambda x, y: x.atan2_(y), lambda x, y: x.arctan2_(y), lambda x, y: x.fmod_(y), lambda x, y: x.remainder_(y),
    lambda x, y: x.floor_divide_(y), lambda x, y: x.div_(y, rounding_mode="floor"),
    lambda x, y: x.div_(y, rounding_mode="trunc"), lambda x, y: x.true_divide_(y), lambda x, y: x.divide_(y),
    lambda x, y: x.lerp_(y, 0.3), lambda x, y: x.lerp_(y, y), lambda x, y: x.copysign_(y), lambda x, y: x.hypot_(y),
    lambda x, y: x.xlogy_(y.abs()), lambda x, y: x.clamp_min_(y), lambda x, y: x.clamp_max_(y),
    lambda x, y: x.clamp_min_(0.1), lambda x, y: x.round_(decimals=1), lambda x, y: x.nan_to_num_(1.0, 2.0),
    lambda x, y: x.__imod__(y), lambda x, y: x.__ifloordiv__(y)])
def test_in_place_binary_math(call):
    t, h = pair(np.array([2.35, -1.25, 0.75]), dtype="float32")
    u, hu = pair(np.array([0.5, 1.5, -0.25]), dtype="float32")
    out = call(t, u)
    call(h, hu)
    assert out is t and t._version == 1
    assert_close(t, h)


def test_in_place_integer_results_and_cast_errors():
    t, h = pair(np.array([7, -7, 5]))
    t.floor_()
    t.div_(2, rounding_mode="floor")
    h.floor_()
    h.div_(2, rounding_mode="floor")
    assert_close(t, h)
    for fn in (lambda x: x.acos_(), lambda x: x.remainder_(1.5), lambda x: x.div_(2), lambda x: x.exp2_()):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type int64"):
            fn(tl.tensor([1, 2]))
        with pytest.raises(RuntimeError, match="can't be cast"):
            fn(torch.tensor([1, 2]))


def test_in_place_math_on_a_leaf_requiring_grad_is_refused():
    x = tl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad.*floor_"):
        x.floor_()
    with pytest.raises(RuntimeError, match="lerp_"):
        x.lerp_(tl.zeros(3), 0.5)
    with tl.no_grad():
        x.atan_()
    assert x._version == 1


@pytest.mark.parametrize("call", [lambda y, w: y.atan_(), lambda y, w: y.frac_(), lambda y, w: y.lerp_(w, w),
                                  lambda y, w: y.copysign_(w), lambda y, w: y.clamp_min_(w), lambda y, w: y.square_(),
                                  lambda y, w: y.fmod_(w)])
def test_in_place_math_on_non_leaves_backpropagates_as_torch(call):
    x, h = pair(np.array([0.3, -0.6, 0.9]), requires_grad=True)
    w, hw = pair(np.array([0.5, -0.25, 0.75]), requires_grad=True)
    y, hy = x * 2, h * 2
    call(y, w)
    call(hy, hw)
    (y * y).sum().backward()
    (hy * hy).sum().backward()
    assert_close(x.grad, h.grad)
    if hw.grad is None:
        assert w.grad is None
    else:
        assert_close(w.grad, hw.grad)


def test_writing_a_saved_input_in_place_is_caught():
    x = tl.tensor([0.3, 0.6], requires_grad=True)
    y = x * 1
    z = y.atan()  # keeps y
    y.floor_()
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.sum().backward()
    t = (x * 1).tan()  # keeps its output
    t.log1p_()
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        t.sum().backward()


# ---- gradients by finite differences (float64) -------------------------------------------------------------
def _f64(*shape, low=-1.0, high=1.0, seed=0):
    rng = np.random.default_rng(seed + sum(shape))
    return tl.tensor(rng.uniform(low, high, shape), dtype=tl.float64, requires_grad=True)


@pytest.mark.parametrize("fn,inputs", [
    (lambda a, b: tl.atan2(a, b), lambda: (_f64(3, 4), _f64(4, seed=1))),
    (lambda a, b: tl.hypot(a, b), lambda: (_f64(3, 1), _f64(2, 1, 4, seed=2))),
    (lambda a, b: tl.logaddexp(a, b) + tl.logaddexp2(b, a), lambda: (_f64(3, 4), _f64(3, 4, seed=3))),
    (lambda a, b: tl.copysign(a, b), lambda: (_f64(2, 3, low=0.2), _f64(2, 3, seed=4))),
    (lambda a, b: tl.xlogy(a, b), lambda: (_f64(4), _f64(4, low=0.5, high=2.0, seed=5))),
    (lambda a, b: tl.fmod(a * 3, b) + tl.remainder(a * 3, b), lambda: (_f64(2, 3), _f64(3, low=0.6, high=1.3, seed=6))),
    (lambda a, b: tl.remainder(2.5, a.abs() + 0.7) + 2.5 % b, lambda: (_f64(4), _f64(4, low=0.5, high=1.5, seed=7))),
    (lambda a, b, w: tl.lerp(a, b, w), lambda: (_f64(3, 1), _f64(4, seed=8), _f64(2, 1, 1, seed=9))),
    (lambda a, b: tl.lerp(a, b, 0.7), lambda: (_f64(3, 4), _f64(4, seed=10))),
    (lambda x, lo, hi: x.clamp(lo, hi), lambda: (_f64(), _f64(2, 3, low=-0.9, high=-0.1, seed=11),
                                               _f64(3, low=0.1, high=0.9, seed=12))),
    (lambda x, lo: tl.clamp_min(x, lo) + x.clamp_max(lo), lambda: (_f64(3, 4), _f64(4, seed=13))),
    (lambda x: tl.acos(x * 0.9) + tl.asin(x * 0.9) + tl.atanh(x * 0.9) + tl.acosh(x + 2), lambda: (_f64(5),)),
    (lambda x: x.tan() + x.sinh() + x.cosh() + x.asinh() + x.atan(), lambda: (_f64(5),)),
    (lambda x: (x + 2).log2() + (x + 2).log10() + x.log1p() + x.expm1() + x.exp2() + x.square(), lambda: (_f64(5),)),
    (lambda x: x.frac() + x.nan_to_num() * 2, lambda: (_f64(5, low=0.1, high=0.9),)),
])
def test_gradients_match_finite_differences(fn, inputs):
    assert tl.autograd.gradcheck(fn, inputs())


def test_second_derivatives_through_create_graph():
    x, h = pair(np.array([0.3, -0.6, 0.9]), requires_grad=True)
    for m, t in ((tl, x), (torch, h)):
        y = (m.atan2(t, t * t + 1) + t.tan() + m.logaddexp(t, -t) + m.hypot(t, t + 1)).sum()
        (g,) = (tl.autograd.grad if m is tl else torch.autograd.grad)(y, t, create_graph=True)
        g.sum().backward()
    assert_close(x.grad, h.grad)


# ---- tensor details ----------------------------------------------------------------------------------------
def test_tensor_details():
    x, h = pair(np.ones((2, 3, 4), np.float32))
    assert x.nelement() == h.nelement() == 24 and x.ndimension() == h.ndimension() == 3
    assert x.is_floating_point() and not tl.tensor([1]).is_floating_point() and not tl.is_floating_point(tl.tensor(1))
    assert x.is_complex() is False and tl.is_complex(x) is False
    assert x.element_size() == 4 and x.double().element_size() == 8 and tl.tensor([True]).element_size() == 1
    e = x.new_empty(2, 5)
    assert e.shape == (2, 5) and e.dtype is tl.float32 and e.device == x.device and not e.requires_grad
    e = x.new_empty((3,), dtype=tl.int64)
    assert e.shape == (3,) and e.dtype is tl.int64
    e = x.new_empty([2, 2], requires_grad=True)
    assert e.requires_grad and e.is_leaf


def test_format_of_zero_dim_tensors_is_their_item():
    loss = tl.tensor(1.23456, requires_grad=True) * 1
    assert f"{loss:.4f}" == "1.2346" == f"{torch.tensor(1.23456):.4f}"
    assert f"{tl.tensor(3)}" == "3" == f"{torch.tensor(3)}"
    assert format(tl.tensor(7), "d") == "7" and format(tl.tensor(True), "") == "True"
    assert f"{tl.tensor(2.5, dtype=tl.float64):>8.2f}" == "    2.50"
    x = tl.tensor([1.0, 2.0])
    assert f"{x}" == str(x) and format(x, "") == repr(x)
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format(x, ".4f")
    p = tl.nn.Parameter(tl.tensor(1.5))  # (a subclass formats as its str, as in torch)
    assert format(p, "") == str(p)


# ---- the ops on other memory spaces ------------------------------------------------------------------------
def _device_workload(dev):
    a = tl.tensor([[1.5, -2.5, 0.25], [3.0, -0.5, 7.0]], device=dev)
    b = tl.tensor([0.5, 2.0, -1.5], device=dev)
    i = tl.tensor([12, -7, 5], device=dev)
    return [a.floor(), a.round(decimals=1), a.frac(), a.atan2(b), a.fmod(b), a.remainder(2), a // b,
            a.div(b, rounding_mode="trunc"), a.lerp(b, 0.3), a.lerp(b, a * 0.1), a.copysign(b), a.hypot(b),
            a.xlogy(b.abs()), (a / 0).nan_to_num(), a.isinf(), (a / 0).isposinf(), a.isclose(a + 1e-7), a.tan(),
            a.acos(), a.log1p(), a.exp2(), a.logaddexp(b), a.clamp_min(b), a.clamp(b, b + 1), i & 3, i << 2, ~i,
            i.remainder(4), i.div(3, rounding_mode="trunc"), a.sign(), a.isfinite()]


def test_the_ops_run_on_a_second_memory_space(dev):
    host = _device_workload("cpu")
    for got, want in zip(_device_workload("testdev"), host):
        assert got.device == dev and got.dtype is want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    x = tl.tensor([0.5, 1.0], device="testdev", requires_grad=True)
    (x.atan2(x + 1) + x.lerp(x * 2, x)).sum().backward()
    assert x.grad.device == dev


def test_the_ops_on_the_cuda_backend_are_counted_host_fallbacks():
    from emu_driver import cuda_device
    gen = cuda_device()
    cuda = next(gen)
    try:
        be = cuda.raw_backend
        before = be.fallbacks["round"]
        host = _device_workload("cpu")
        for got, want in zip(_device_workload("cuda"), host):
            assert got.dtype is want.dtype
            np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
        assert be.fallbacks["round"] == before + 1
    finally:
        gen.close()


def test_in_place_unary_functions_and_their_errors_as_torch():
    """exp_, relu_ and the rest write in place (a version bump, views see it), refuse a leaf that requires grad,
    and exist under torch's other spellings (``tl.relu_``, ``F.relu_``, ``absolute_``)."""
    for lib in (tl, torch):
        x = lib.tensor([-1.0, 0.5, 2.0])
        v = x[1:]
        assert x.exp_() is x and lib.allclose(v, lib.tensor([0.5, 2.0]).exp())
        lib.relu_(x.neg_())
        assert x.tolist() == [0.0, 0.0, 0.0]
        lib.nn.functional.relu_(x.sub_(1)).absolute_()
        assert x.tolist() == [0.0, 0.0, 0.0]
        w = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            w.sigmoid_()
    t = tl.ones(2)
    before = t._storage.version
    t.sqrt_().tanh_()
    assert t._storage.version == before + 2


def test_heaviside_aminmax_addcdiv_edges_as_torch():
    for lib in (tl, torch):
        x = lib.tensor([-1.0, 0.0, 3.0], requires_grad=True)
        h = lib.heaviside(x, lib.tensor(0.5))
        assert h.tolist() == [0.0, 0.5, 1.0] and h.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
            h.sum().backward()
        with pytest.raises(RuntimeError, match="different dtypes"):
            lib.heaviside(x, lib.tensor(1))
        with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
            lib.tensor([1, 2]).addcdiv(lib.tensor([1, 2]), lib.tensor([1, 2]))
        r = lib.aminmax(lib.tensor([[1.0, 5.0], [3.0, 0.0]]), dim=1, keepdim=True)
        assert type(r).__name__ == "aminmax" and r.min.tolist() == [[1.0], [0.0]] and r.max.tolist() == [[5.0], [3.0]]
        assert lib.tensor([1, 2, 3]).cumsum(0, dtype=lib.float64).dtype == lib.float64


def test_aminmax_over_an_empty_dim_is_refused_by_name_as_torch():
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match=r"aminmax\(\): cannot compute aminmax over an empty dimension"):
            lib.aminmax(lib.zeros(0))
        with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
            lib.zeros(2, 0).aminmax(dim=1)
        r = lib.zeros(2, 0).aminmax(dim=0)
        assert tuple(r.min.shape) == tuple(r.max.shape) == (0,)
