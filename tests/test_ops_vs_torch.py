"""Op conformance: tinygrad_like against PyTorch (CPU) as the oracle.

Every differentiable op is a row of a table: a function ``fn(m, *inputs)`` written once and run with
``m = tl`` and with ``m = TH`` (torch, with ``torch.nn.functional`` for the activations), on inputs
built from the same NumPy arrays. For each row and dtype (float32, float64) we compare the outputs
(values, shape, dtype) and, after ``.backward(g)`` with the same random upstream gradient on both
sides, the ``.grad`` of every leaf. Inputs cover broadcasting, 0-d tensors, size-0 dims and
non-contiguous views (a transpose or a strided slice of the leaf is what the op sees).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import conformance
import numpy as np
import pytest
from conformance import TH, Case, _leaves, run_case
from conformance.rows_core import VIEWS
from conftest import assert_close, make_array, pair, torch_dtype_name

import tinygrad_like as tl

torch = pytest.importorskip("torch")  # the oracle: this module skips without it
F = torch.nn.functional

# every test here runs with a plain backward and with create_graph=True (see conftest.backward_mode);
# torch deprecates x.T on non-2-D tensors; we still compare it (both reverse all dims)
pytestmark = [pytest.mark.usefixtures("backward_mode"),
              pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")]


ALL_CASES = conformance.collect()  # the whole table: tests/conformance/rows_*.py




@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_op(case: Case, dtype: str) -> None:
    run_case(case, dtype)


def test_case_ids_unique() -> None:
    ids = [c.id for c in ALL_CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


# ---- ops without gradients: one_hot, comparisons, logic -----------------------------------------------
@pytest.mark.parametrize("data,num_classes", [([0, 2, 1, 2], -1), ([[0, 1], [3, 0]], 5), ([], 3), (2, 4)],
                         ids=["1d-infer", "2d-5", "empty", "0d"])
def test_one_hot(data, num_classes) -> None:
    a, b = pair(np.asarray(data, dtype=np.int64))
    assert_close(tl.one_hot(a, num_classes), F.one_hot(b, num_classes))


# ---- dtype promotion -------------------------------------------------------------------------------
PROMO_DTYPES = ("float32", "float64", "float16", "int64", "int32", "bool", "uint8", "int8", "int16", "bfloat16")


def _operand(desc, rng):
    """('float32', 2) -> a 2-d pair; ('float32', 0) -> a 0-d pair; a Python scalar stays itself."""
    if not isinstance(desc, tuple):
        return desc, desc
    dtype, nd = desc
    kind = "bool" if dtype == "bool" else "int" if "int" in dtype else "pos"
    return pair(make_array((2, 3)[:nd] if nd else (), kind, rng, "float64" if kind == "pos" else "int64"),
                dtype=dtype) if kind != "bool" else pair(make_array((2, 3)[:nd], "bool", rng, "bool"))


def _promo_cases():
    cases = []
    tensors = [(d, nd) for d in PROMO_DTYPES for nd in (2, 0)]
    for a in tensors:
        for b in tensors:
            both_0d = a[1] == 0 and b[1] == 0
            if both_0d and PROMO_DTYPES.index(a[0]) > PROMO_DTYPES.index(b[0]):
                continue  # 0-d with 0-d: one order is enough
            cases.append((a, b))
        for s in (2, 2.5, True):
            cases.append((a, s))
            cases.append((s, a))
    return cases


def _pid(v) -> str:
    if isinstance(v, tuple):
        return f"{v[0]}{'' if v[1] else '_0d'}"
    return f"py{type(v).__name__}"


PROMO = _promo_cases()
ARITH = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
         "sub": lambda a, b: a - b}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # x / False: inf (torch is silent, NumPy warns)
@pytest.mark.parametrize("a,b", PROMO, ids=[f"{_pid(a)}-{_pid(b)}" for a, b in PROMO])
def test_promotion(a, b) -> None:
    rng = np.random.default_rng(0)
    (ta, ha), (tb, hb) = _operand(a, rng), _operand(b, rng)
    has_bool = any(_pid(v).endswith("bool") or _pid(v).startswith("bool") for v in (a, b))
    for name, op in ARITH.items():
        if name == "sub" and has_bool:
            continue  # torch: "Subtraction, the `-` operator, with a bool tensor is not supported"
        expected = op(ha, hb)
        got = op(ta, tb)
        tol = 2e-3 if "float16" in (torch_dtype_name(expected),) else None
        assert_close(got, expected, atol=tol, rtol=tol, msg=f"{name}: ")
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        if not isinstance(a, tuple):
            continue
        expected = getattr(ha, name)(hb)
        got = getattr(ta, name)(tb)
        assert got.dtype.name == "bool"
        assert_close(got, expected, msg=f"{name}: ")


INT_INPUT_OPS: dict[str, Callable] = {
    "neg": lambda m, x: -x, "abs": lambda m, x: x.abs(), "exp": lambda m, x: x.exp(),
    "log": lambda m, x: x.log(), "sqrt": lambda m, x: x.sqrt(), "sin": lambda m, x: x.sin(),
    "tanh": lambda m, x: x.tanh(), "sigmoid": lambda m, x: x.sigmoid(), "relu": lambda m, x: x.relu(),
    "clamp-float": lambda m, x: x.clamp(0.5),
    "clamp-int": lambda m, x: x.clamp(1, 2), "sum": lambda m, x: x.sum(), "sum-dim": lambda m, x: x.sum(0),
    "cumsum": lambda m, x: x.cumsum(0), "amax": lambda m, x: x.amax(0), "max": lambda m, x: x.max(),
    "max-dim": lambda m, x: x.max(0)[0], "argmax": lambda m, x: x.argmax(), "x**2": lambda m, x: x ** 2,
    "x**0.5": lambda m, x: x ** 0.5, "2**x": lambda m, x: 2 ** x, "2.5**x": lambda m, x: 2.5 ** x,
    "x*1.5": lambda m, x: x * 1.5, "x/2": lambda m, x: x / 2, "3-x": lambda m, x: 3 - x,
    "3/x": lambda m, x: 3 / x,
    "where-float": lambda m, x: m.where(x > 1, x, 0.5), "where-int": lambda m, x: m.where(x > 1, x, 0),
    "masked_fill": lambda m, x: x.masked_fill(x > 1, 0.5), "logsumexp": lambda m, x: x.logsumexp(0),
    "flip": lambda m, x: x.flip(0), "cat": lambda m, x: m.cat([x, x]), "pad": lambda m, x: m.pad(x, (1, 1)),
    "maximum": lambda m, x: m.maximum(x, x.flip(0)), "tril": lambda m, x: x.reshape(2, 2).tril(),
}
TORCH_REFUSES_BOOL = {"neg", "abs", "relu", "argmax", "3-x"}  # torch raises for bool inputs
INT_INPUT_CASES = [(d, n) for d in ("int64", "int32", "bool", "float16", "uint8", "int8", "int16", "bfloat16")
                   for n in INT_INPUT_OPS
                   if not (d == "bool" and n in TORCH_REFUSES_BOOL)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 3 / 0 -> inf, log(0) -> -inf
@pytest.mark.parametrize("dtype,name", INT_INPUT_CASES, ids=[f"{d}-{n}" for d, n in INT_INPUT_CASES])
def test_non_float32_inputs(dtype, name) -> None:
    """Result dtypes (and values) of ops on int/bool/half inputs, e.g. exp(int) -> float32."""
    a, b = pair(np.array([1, 2, 0, 3]), dtype=dtype)
    got, expected = INT_INPUT_OPS[name](tl, a), INT_INPUT_OPS[name](TH, b)
    tol = 2e-3 if dtype == "float16" else 1e-2 if dtype == "bfloat16" else 1e-6
    assert_close(got, expected, atol=tol, rtol=tol)


@pytest.mark.parametrize("da,db", [("int64", "int64"), ("int32", "int64"), ("int32", "int32"),
                                   ("bool", "bool"), ("bool", "int32"), ("int64", "py_int")])
def test_int_true_division_is_float32(da, db) -> None:
    ta, ha = pair(np.array([3, 4, 7]), dtype=da)
    tb, hb = (2, 2) if db == "py_int" else pair(np.array([2, 1, 3]), dtype=db)
    got, expected = ta / tb, ha / hb
    assert got.dtype.name == "float32" == torch_dtype_name(expected)
    assert_close(got, expected)


@pytest.mark.parametrize("op", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("da,db", [("bool", "bool"), ("float32", "int64"), ("int32", "bool")])
def test_logical_ops(op, da, db) -> None:
    ta, ha = pair(np.array([[0, 1, 2], [1, 0, 0]]), dtype=da)
    tb, hb = pair(np.array([1, 0, 1]), dtype=db)
    assert_close(getattr(ta, op)(tb), getattr(ha, op)(hb))
    assert_close(getattr(tl, op)(ta, tb), getattr(torch, op)(ha, hb))


@pytest.mark.parametrize("dtype", ["bool", "float32", "int64"])
def test_logical_not(dtype) -> None:
    ta, ha = pair(np.array([[0, 1, 2], [1, 0, 0]]), dtype=dtype)
    assert_close(ta.logical_not(), ha.logical_not())


@pytest.mark.parametrize("op", ["and", "or", "xor"])
@pytest.mark.parametrize("dtype", ["bool", "int64", "int32"])
def test_bitwise_ops(op, dtype) -> None:
    import operator
    fn = {"and": operator.and_, "or": operator.or_, "xor": operator.xor}[op]
    ta, ha = pair(np.array([[0, 1, 2], [3, 0, 1]]), dtype=dtype)
    tb, hb = pair(np.array([1, 3, 1]), dtype=dtype)
    assert_close(fn(ta, tb), fn(ha, hb))
    if dtype == "bool":
        assert_close(~ta, ~ha)


@pytest.mark.parametrize("other", ["tensor", "0d", "int", "float"])
def test_comparisons_return_bool(other) -> None:
    ta, ha = pair(np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 0.5]]), dtype="float32")
    if other == "tensor":
        tb, hb = pair(np.array([2, 2, 1]), dtype="int64")
    elif other == "0d":
        tb, hb = pair(np.array(2.0), dtype="float64")
    else:
        tb = hb = 2 if other == "int" else 2.0
    for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        assert_close(getattr(ta, op)(tb), getattr(ha, op)(hb), msg=op)


# ---- creation --------------------------------------------------------------------------------------
TENSOR_DATA = [
    ("ints", [1, 2, 3]), ("floats", [1.0, 2.5]), ("mixed", [[1, 2.5], [3, 4]]), ("bools", [True, False]),
    ("bool-int", [True, 2]), ("int-scalar", 3), ("float-scalar", 2.5), ("bool-scalar", False),
    ("nested3", [[[1], [2]], [[3], [4]]]), ("empty", []), ("empty-2d", [[], []]),
]


@pytest.mark.parametrize("data", [d for _, d in TENSOR_DATA], ids=[i for i, _ in TENSOR_DATA])
def test_tensor_dtype_inference(data) -> None:
    assert_close(tl.tensor(data), torch.tensor(data))


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "float16"])
def test_tensor_explicit_dtype(dtype) -> None:
    data = [[0, 1.5], [2, 0]]
    assert_close(tl.tensor(data, dtype=getattr(tl, dtype)), torch.tensor(data, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("np_dtype", ["float32", "float64", "int32", "int64", "bool", "float16"])
def test_tensor_from_numpy_keeps_dtype(np_dtype) -> None:
    arr = np.arange(6).reshape(2, 3).astype(np_dtype)
    assert_close(tl.tensor(arr), torch.tensor(arr))


FACTORIES: list[tuple[str, Callable[[Any], Any]]] = [
    ("zeros", lambda m: m.zeros(2, 3)),
    ("zeros-tuple", lambda m: m.zeros((2, 3))),
    ("zeros-int", lambda m: m.zeros(2, dtype=m.int64)),
    ("zeros-0d", lambda m: m.zeros(())),
    ("zeros-empty", lambda m: m.zeros(0, 3)),
    ("ones", lambda m: m.ones(3)),
    ("ones-f64", lambda m: m.ones([2, 2], dtype=m.float64)),
    ("ones-bool", lambda m: m.ones(2, dtype=m.bool)),
    ("full-float", lambda m: m.full((2, 3), 1.5)),
    ("full-int", lambda m: m.full((2,), 7)),
    ("full-bool", lambda m: m.full((2,), True)),
    ("full-dtype", lambda m: m.full((2, 2), 3, dtype=m.float32)),
    ("arange-int", lambda m: m.arange(5)),
    ("arange-start-stop", lambda m: m.arange(2, 9, 3)),
    ("arange-neg-step", lambda m: m.arange(5, 0, -2)),
    ("arange-float", lambda m: m.arange(0, 1, 0.1)),
    ("arange-float-end", lambda m: m.arange(1.5)),
    ("arange-float-step", lambda m: m.arange(1, 2.5, 0.5)),
    ("arange-dtype", lambda m: m.arange(4, dtype=m.float64)),
    ("arange-empty", lambda m: m.arange(3, 3)),
    ("linspace", lambda m: m.linspace(0, 1, 5)),
    ("linspace-neg", lambda m: m.linspace(-2.5, 3, 7)),
    ("linspace-1", lambda m: m.linspace(-1, 1, 1)),
    ("linspace-0", lambda m: m.linspace(0, 1, 0)),
    ("linspace-f64", lambda m: m.linspace(0, 1, 4, dtype=m.float64)),
    ("eye", lambda m: m.eye(3)),
    ("eye-rect", lambda m: m.eye(2, 4)),
    ("eye-int", lambda m: m.eye(2, dtype=m.int64)),
]


@pytest.mark.parametrize("fn", [f for _, f in FACTORIES], ids=[i for i, _ in FACTORIES])
def test_factories(fn) -> None:
    assert_close(fn(tl), fn(torch), atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("dtype", [None, "float64", "int64"])
@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "full_like", "empty_like"])
def test_like_factories(name, dtype) -> None:
    a, b = pair(np.arange(6.0).reshape(2, 3), dtype="float32")
    args = (2,) if name == "full_like" else ()
    kw_tl = {} if dtype is None else {"dtype": getattr(tl, dtype)}
    kw_th = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    got, expected = getattr(tl, name)(a, *args, **kw_tl), getattr(torch, name)(b, *args, **kw_th)
    if name == "empty_like":  # uninitialised in torch: compare the metadata only
        assert got.shape == tuple(expected.shape) and got.dtype.name == torch_dtype_name(expected)
    else:
        assert_close(got, expected)


@pytest.mark.parametrize("name", ["rand", "randn", "randint"])
def test_seeded_random_reproducible(name) -> None:
    def draw(seed):
        tl.manual_seed(seed)
        if name == "randint":
            return tl.randint(0, 10, (1000,)).numpy().copy(), tl.randint(3, (2, 5)).numpy().copy()
        fn = getattr(tl, name)
        return fn(1000).numpy().copy(), fn(2, 5).numpy().copy()

    a, b, c = draw(1234), draw(1234), draw(4321)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    assert not np.array_equal(a[0], a[0][::-1])  # not constant
    x = a[0]
    if name == "rand":
        assert x.dtype == np.float32 and x.min() >= 0 and x.max() < 1 and abs(x.mean() - 0.5) < 0.05
    elif name == "randn":
        assert x.dtype == np.float32 and abs(x.mean()) < 0.15 and abs(x.std() - 1) < 0.1
    else:
        assert x.dtype == np.int64 and x.min() == 0 and x.max() == 9 and abs(x.mean() - 4.5) < 0.5
        assert a[1].shape == (2, 5) and a[1].min() >= 0 and a[1].max() < 3


def test_seeded_random_like_and_dtype() -> None:
    tl.manual_seed(7)
    x = tl.randn(3, 4, dtype=tl.float64)
    r = tl.rand_like(x)
    tl.manual_seed(7)
    np.testing.assert_array_equal(tl.randn(3, 4, dtype=tl.float64).numpy(), x.numpy())
    assert x.dtype is tl.float64 and r.dtype is tl.float64 and r.shape == (3, 4)
    assert tl.randint(5, 6, (3,)).tolist() == [5, 5, 5]


# ---- in-place ops: values, and the version counter moves by exactly one per write -------------------
INPLACE: list[tuple[str, Callable]] = [
    ("add_", lambda m, t: t.add_(m.tensor([1.0, 2.0, 3.0]))),
    ("add_-scalar", lambda m, t: t.add_(2)),
    ("add_-alpha", lambda m, t: t.add_(m.ones(3), alpha=0.5)),
    ("sub_", lambda m, t: t.sub_(m.tensor([[1.0], [2.0], [-1.0]]))),
    ("sub_-scalar", lambda m, t: t.sub_(0.25)),
    ("mul_", lambda m, t: t.mul_(m.tensor([2.0, -1.0, 0.5]))),
    ("mul_-scalar", lambda m, t: t.mul_(3)),
    ("div_", lambda m, t: t.div_(m.tensor(4.0))),
    ("div_-scalar", lambda m, t: t.div_(2)),
    ("iadd", lambda m, t: t.__iadd__(1.5)),
    ("imul", lambda m, t: t.__imul__(m.tensor([1.0, 0.0, 2.0]))),
    ("zero_", lambda m, t: t.zero_()),
    ("fill_", lambda m, t: t.fill_(2.5)),
    ("fill_-0d-tensor", lambda m, t: t.fill_(m.tensor(-1.0))),
    ("copy_", lambda m, t: t.copy_(m.tensor([[9.0, 8.0, 7.0], [6.0, 5.0, 4.0], [3.0, 2.0, 1.0]]))),
    ("copy_-inf", lambda m, t: t.copy_(m.tensor([float("inf"), -1.0, float("nan")]))),
    ("copy_-bcast-cast", lambda m, t: t.copy_(m.tensor([1, 2, 3]))),
    ("clamp_", lambda m, t: t.clamp_(-0.5, 0.5)),
    ("clamp_-min", lambda m, t: t.clamp_(min=0.0)),
    ("setitem-int", lambda m, t: t.__setitem__(0, 7.0)),
    ("setitem-slice", lambda m, t: t.__setitem__((slice(None), slice(None, None, 2)), m.tensor([1.0, 2.0]))),
    ("setitem-ellipsis", lambda m, t: t.__setitem__((Ellipsis, 1), -3.0)),
    ("setitem-adv", lambda m, t: t.__setitem__((m.tensor([0, 1]), m.tensor([2, 0])), m.tensor([5.0, 6.0]))),
    ("setitem-adv-list", lambda m, t: t.__setitem__([1], 4.0)),
    ("setitem-mask", lambda m, t: t.__setitem__(t > 0, 0.0)),
    ("setitem-mask-tensor", lambda m, t: t.__setitem__(t < 0, m.tensor(1.0))),
]


@pytest.mark.parametrize("fn", [f for _, f in INPLACE], ids=[i for i, _ in INPLACE])
@pytest.mark.parametrize("target", ["base", "view"])
def test_inplace(fn, target) -> None:
    base_tl, base_th = pair(np.array([[0.3, -1.2, 2.0], [-0.7, 0.0, 1.1], [0.9, 0.4, -2.2]]), dtype="float32")
    # a view (transposed: non-contiguous) shares the storage and the version counter with its base
    t, h = (base_tl.T, base_th.T) if target == "view" else (base_tl, base_th)
    v0_tl, v0_th = t._version, h._version
    r_tl, r_th = fn(tl, t), fn(torch, h)
    if r_th is not None:
        assert r_tl is t, "an in-place method returns self"
    assert t._version - v0_tl == h._version - v0_th == 1
    assert base_tl._version == base_th._version
    assert_close(t, h)
    assert_close(base_tl, base_th)


@pytest.mark.parametrize("op", ["add_", "mul_", "div_", "clamp_", "setitem", "fill_", "copy_"])
def test_inplace_on_nonleaf_backward(op) -> None:
    """x -> y = x * 2 -> in-place op on y -> loss: gradients match torch's."""
    a, b = pair(np.array([[0.3, -1.2, 2.0], [-0.7, 0.2, 1.1]]), requires_grad=True)
    w_tl, w_th = pair(np.array([1.5, -0.5, 2.0]), requires_grad=True)
    outs = []
    for x, w in ((a, w_tl), (b, w_th)):
        y = x * 2
        v = y._version
        if op == "setitem":
            y[0, 1:] = w[:2] * 3
        elif op == "clamp_":
            y.clamp_(-1.0, 1.0)
        elif op == "fill_":
            y.fill_(0.5)
        elif op == "copy_":
            y.copy_(w * w[0])
        else:
            getattr(y, op)(w)
        assert y._version == v + 1
        (y * y).sum().backward()
        outs.append((y, x.grad, w.grad))
    (y_tl, gx_tl, gw_tl), (y_th, gx_th, gw_th) = outs
    assert_close(y_tl, y_th)
    assert_close(gx_tl, gx_th)
    if gw_th is None:
        assert gw_tl is None
    else:
        assert_close(gw_tl, gw_th)


def test_inplace_int_div_raises_like_torch() -> None:
    a, b = pair(np.array([1, 2, 3]))
    with pytest.raises(RuntimeError):
        b.div_(2)
    with pytest.raises(RuntimeError):
        a.div_(2)
    assert a._version == b._version == 0


def test_inplace_leaf_requiring_grad_raises() -> None:
    a, b = pair(np.array([1.0, 2.0]), requires_grad=True)
    with pytest.raises(RuntimeError):
        b.add_(1)
    with pytest.raises(RuntimeError):
        a.add_(1)
    with tl.no_grad():
        a.add_(1)
    with torch.no_grad():
        b.add_(1)
    assert_close(a.detach(), b.detach())
    assert a._version == b._version == 1


def _write_view(op: str, v, s) -> None:
    if op == "setitem":
        v[0] = s[1] * 5.0
    elif op == "fill_":
        v.fill_(0.0)
    elif op == "copy_":
        v.copy_(s * s)
    else:
        getattr(v, op)(s)


@pytest.mark.parametrize("op", ["add_", "fill_", "copy_", "setitem", "mul_"])
def test_inplace_on_view_of_grad_tensor_matches_torch(op) -> None:
    """A view of a tensor that requires grad, written in place: the base's history goes through the write
    (PyTorch's CopySlices), in values, gradients and version counters. (Refused until issue 15.)"""
    out = {}
    for lib in (tl, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        s = lib.tensor([0.5, -1.5], requires_grad=True)
        y = x * 2
        v = y[0]
        _write_view(op, v, s)
        (y * lib.tensor([[1.0, 10.0], [100.0, 1000.0]])).sum().backward()
        out[lib] = (y, x.grad, s.grad, y._version, v.requires_grad)
    (ya, gxa, gsa, va, ra), (yb, gxb, gsb, vb, rb) = out[tl], out[torch]
    assert_close(ya.detach(), yb.detach())
    assert_close(gxa, gxb)
    if gsb is None:
        assert gsa is None
    else:
        assert_close(gsa, gsb)
    assert va == vb and ra == rb


# ---- views share storage exactly where torch's do, with torch's strides -------------------------------
def _shares(out, base) -> bool:
    if isinstance(out, tl.Tensor):
        return out.storage is base.storage
    return out.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()


@pytest.mark.parametrize("case", VIEWS, ids=[c.id for c in VIEWS])
def test_view_aliasing_and_strides(case: Case) -> None:
    _, tl_leaves, th_leaves = _leaves(case, "float32")
    (s,) = case.specs
    with tl.no_grad():
        out_tl = case.fn(tl, s.apply_view(tl_leaves[0]))
    with torch.no_grad():
        out_th = case.fn(TH, s.apply_view(th_leaves[0]))
    if case.id == "index-overlap":
        return  # arithmetic on views, not a view
    shares = _shares(out_th, th_leaves[0]) and out_th.numel() > 0
    if out_th.numel() == 0:
        return  # torch may allocate a fresh empty storage
    assert _shares(out_tl, tl_leaves[0]) == shares, f"view: {_shares(out_tl, tl_leaves[0])}, torch: {shares}"
    if shares:
        assert out_tl.stride() == out_th.stride(), f"strides {out_tl.stride()} != torch's {out_th.stride()}"
        assert out_tl.storage_offset() == out_th.storage_offset()
        assert out_tl.is_contiguous() == out_th.is_contiguous()


# ---- gradients keep each input's dtype when dtypes mix --------------------------------------------------
@pytest.mark.parametrize("da,na,db,nb", [("float32", 2, "float64", 0), ("float32", 2, "float64", 2),
                                         ("float64", 0, "float32", 2), ("float16", 2, "float32", 0),
                                         ("float16", 2, "float64", 2)])
@pytest.mark.parametrize("op", ["add", "mul", "div", "where", "maximum"])
def test_mixed_dtype_grads(op, da, na, db, nb) -> None:
    rng = np.random.default_rng(1)
    shape = (2, 2)
    (a_tl, a_th), (b_tl, b_th) = (pair(make_array(shape[:n], "away", rng), requires_grad=True, dtype=d)
                                  for d, n in ((da, na), (db, nb)))
    fns = {"add": lambda m, a, b: a + b, "mul": lambda m, a, b: a * b, "div": lambda m, a, b: a / b,
           "where": lambda m, a, b: m.where(a > 0, a, b), "maximum": lambda m, a, b: m.maximum(a, b)}
    y_tl, y_th = fns[op](tl, a_tl, b_tl), fns[op](TH, a_th, b_th)
    assert_close(y_tl, y_th, atol=2e-3, rtol=2e-3)
    g = make_array(y_th.shape, "n", rng)
    y_tl.backward(tl.tensor(g, dtype=y_tl.dtype))
    y_th.backward(torch.tensor(g, dtype=y_th.dtype))
    for a, b in ((a_tl, a_th), (b_tl, b_th)):
        assert_close(a.grad, b.grad, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("da,db", [("float32", "float64"), ("float16", "float32"), ("int64", "float32"),
                                   ("bool", "int32")])
def test_cat_promotes(da, db) -> None:
    (a_tl, a_th), (b_tl, b_th) = pair(np.ones((2, 2)), dtype=da), pair(np.arange(2.0).reshape(1, 2), dtype=db)
    assert_close(tl.cat([a_tl, b_tl]), torch.cat([a_th, b_th]))


@pytest.mark.parametrize("op", ["exp", "mul", "matmul", "sum-dim", "softmax", "index"])
def test_backward_with_noncontiguous_upstream_grad(op) -> None:
    fns = {"exp": lambda m, x: x.exp(), "mul": lambda m, x: x * x, "matmul": lambda m, x: x @ x.T,
           "sum-dim": lambda m, x: x.sum(0, keepdim=True).expand(3, 3), "softmax": lambda m, x: x.softmax(0),
           "index": lambda m, x: x[m.tensor([2, 0, 0])]}
    a, b = pair(np.random.default_rng(3).standard_normal((3, 3)), requires_grad=True)
    gt, gh = pair(np.random.default_rng(4).standard_normal((3, 3)))
    y_tl, y_th = fns[op](tl, a), fns[op](TH, b)
    y_tl.backward(gt.T)
    y_th.backward(gh.T)
    assert_close(a.grad, b.grad)


def test_grads_accumulate_over_two_backwards() -> None:
    a, b = pair(np.array([[1.0, -2.0], [0.5, 3.0]]), requires_grad=True)
    for m, x in ((tl, a), (TH, b)):
        (x * x).sum().backward()
        x[m.tensor([0, 0])].sum().backward()
    assert_close(a.grad, b.grad)
