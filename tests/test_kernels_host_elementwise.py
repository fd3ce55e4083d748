"""Host-side checks of kernel_src/elementwise.cu's math, with no GPU.

tests/cuda_host/elementwise_harness.cu is compiled by nvcc into a host shared library that runs the
kernels' own loop bodies (``ew_map_strided`` / ``ew_map_contig`` of kernel_src/elementwise.cuh) for every
thread of an emulated grid. The threads of these kernels are independent, so this covers all of their
per-thread logic: strided/broadcast index math, grid-stride loops, the vector (4-element) path and its
scalar tail, every op code, and float16 rounding. What only a GPU run can show: the device math library's
results (expf, tanhf, erff, ... are the host libm's here; the CUDA ones differ by <= 2 ulp), fused
multiply-adds the device compiler may form, and the real alignment requirements of the vector loads.
"""

from __future__ import annotations

import ast
import ctypes
import re
import struct

import numpy as np
import pytest
from host_harness import KERNEL_DIR, build_harnesses

torch = pytest.importorskip("torch")


pytestmark = pytest.mark.cuda

DT = {"f32": (0, np.float32), "f16": (1, np.float16), "i64": (2, np.int64), "i32": (3, np.int32),
      "bool": (4, np.uint8)}
FAMILY = {"unary": 0, "binary": 1, "compare": 2, "predicate": 3, "where": 4}


def _table(name: str, text: str):
    """The Python literal after ``// NAME =`` in the header comment (spanning ``//`` lines)."""
    lines = [ln[2:] if ln.startswith("//") else "" for ln in text.splitlines()]
    joined = "\n".join(lines)
    start = joined.index(f" {name} = ") + len(name) + 4
    opener = joined[start]
    closer = {"{": "}", "[": "]"}[opener]
    end = joined.index(closer, start)
    return ast.literal_eval(joined[start:end + 1])


CUH = (KERNEL_DIR / "elementwise.cuh").read_text()
CONSTS = {m.group(1): int(m.group(2)) for m in re.finditer(r"constexpr int (EW_\w+) = (\d+);", CUH)}
UNARY = _table("EW_UNARY_OPS", CUH)
UNARY_INT = _table("EW_UNARY_INT_OPS", CUH)
BINARY = _table("EW_BINARY_OPS", CUH)
BINARY_INT = _table("EW_BINARY_INT_OPS", CUH)
COMPARE = _table("EW_COMPARE_OPS", CUH)
PREDICATE = _table("EW_PREDICATE_OPS", CUH)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    lib = ctypes.CDLL(str(build_harnesses(tmp_path_factory, "elementwise_harness", shared=True)[0]))
    ll = ctypes.c_longlong
    vp = ctypes.c_void_p
    llp = ctypes.POINTER(ll)
    lib.emu_ew.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ll, vp, vp, vp, vp, llp, llp, llp, llp,
                           ctypes.c_int, ll, ctypes.c_int, ctypes.c_double, ctypes.c_double, ll, ll, ctypes.c_int]
    lib.emu_ew.restype = ctypes.c_int
    lib.emu_offsets.argtypes = [llp, llp, llp, llp, ctypes.c_int, ll, llp]
    return lib


def _llarr(vals):
    vals = list(vals) or [0]
    return (ctypes.c_longlong * len(vals))(*vals)


def aligned_empty(n: int, dtype, offset: int = 0) -> np.ndarray:
    """n elements starting `offset` elements after a 64-byte boundary."""
    dtype = np.dtype(dtype)
    raw = np.empty((n + offset) * dtype.itemsize + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start:start + (n + offset) * dtype.itemsize].view(dtype)[offset:]


def aligned_copy(a: np.ndarray, offset: int = 0) -> np.ndarray:
    out = aligned_empty(a.size, a.dtype, offset)
    out[...] = a.ravel()
    return out


def run_strided(lib, family, dt, out_dtype, inputs, nth=7, op=0, a=0.0, b=0.0):
    """Emulate the strided kernel: `inputs` are NumPy views (any strides), broadcast to a common shape."""
    shape = np.broadcast_shapes(*(x.shape for x in inputs))
    views = [np.broadcast_to(x, shape) for x in inputs]
    n = int(np.prod(shape))
    out = np.full(n, 77, out_dtype)
    strides = [[s // v.itemsize for s in v.strides] for v in views]
    ptrs = [v.ctypes.data for v in views] + [None] * (3 - len(views))
    st = [_llarr(s) for s in strides] + [_llarr([])] * (3 - len(views))
    ia, ib = (int(a), int(b)) if dt in ("i64", "i32") else (0, 0)
    rc = lib.emu_ew(FAMILY[family], DT[dt][0], 0, nth, out.ctypes.data, *ptrs, _llarr(shape), *st, len(shape), n,
                    op, float(a), float(b), ia, ib, 0)
    assert rc == 0
    return out.reshape(shape)


def run_contig(lib, family, dt, out_dtype, inputs, aligned, nth=5, op=0, a=0.0, b=0.0):
    """Emulate the contiguous kernel on 1-D inputs; aligned=True puts every buffer on a 64-byte boundary and
    takes the vector path, aligned=False shifts each by one element and takes the scalar path."""
    off = 0 if aligned else 1
    bufs = [aligned_copy(np.ascontiguousarray(x), off) for x in inputs]
    n = inputs[0].size
    out = aligned_empty(n, out_dtype, off)
    out[...] = 77
    ptrs = [x.ctypes.data for x in bufs] + [None] * (3 - len(bufs))
    ia, ib = (int(a), int(b)) if dt in ("i64", "i32") else (0, 0)
    rc = lib.emu_ew(FAMILY[family], DT[dt][0], 1, nth, out.ctypes.data, *ptrs, _llarr([n]), _llarr([1]),
                    _llarr([1]), _llarr([1]), 1, n, op, float(a), float(b), ia, ib, int(aligned))
    assert rc == 0
    return np.array(out)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-3, 100.0,
                    -100.0, 30.0, 1e4, -3e4], np.float32)


def float_inputs(dtype, n=61, seed=0):
    rng = np.random.default_rng(seed)
    x = np.concatenate([SPECIAL, (rng.standard_normal(n - SPECIAL.size) * 3).astype(np.float32)])
    return x.astype(dtype)


def _t(x):
    return torch.from_numpy(np.asarray(x, np.float32).copy())


# oracle(x32, a, b) on float32 data -> float32 result (PyTorch where it defines the semantics)
UNARY_ORACLE = {
    "neg": lambda x, a, b: -x,
    "abs": lambda x, a, b: np.abs(x),
    "sign": lambda x, a, b: torch.sign(_t(x)).numpy(),
    "exp": lambda x, a, b: np.exp(x),
    "log": lambda x, a, b: np.log(x),
    "sqrt": lambda x, a, b: np.sqrt(x),
    "rsqrt": lambda x, a, b: np.float32(1) / np.sqrt(x),
    "sin": lambda x, a, b: np.sin(x.astype(np.float64)).astype(np.float32),
    "cos": lambda x, a, b: np.cos(x.astype(np.float64)).astype(np.float32),
    "tanh": lambda x, a, b: np.tanh(x),
    "sigmoid": lambda x, a, b: torch.sigmoid(_t(x)).numpy(),
    "relu": lambda x, a, b: torch.relu(_t(x)).numpy(),
    "erf": lambda x, a, b: torch.erf(_t(x)).numpy(),
    "reciprocal": lambda x, a, b: np.float32(1) / x,
    "square": lambda x, a, b: x * x,
    "floor": lambda x, a, b: np.floor(x),
    "ceil": lambda x, a, b: np.ceil(x),
    "trunc": lambda x, a, b: np.trunc(x),
    "round": lambda x, a, b: torch.round(_t(x)).numpy(),
    "log1p": lambda x, a, b: np.log1p(x),
    "expm1": lambda x, a, b: np.expm1(x),
    "silu": lambda x, a, b: torch.nn.functional.silu(_t(x)).numpy(),
    # (in float64: torch's float32 CPU gelu gives nan at +inf on some CPUs, where gelu(+inf) = +inf)
    "gelu": lambda x, a, b: torch.nn.functional.gelu(_t(x).double()).float().numpy(),
    "gelu_tanh": lambda x, a, b: torch.nn.functional.gelu(_t(x), approximate="tanh").numpy(),
    "log2": lambda x, a, b: np.log2(x),
    "exp2": lambda x, a, b: np.exp2(x),
    "identity": lambda x, a, b: x,
    "add_s": lambda x, a, b: x + np.float32(a),
    "sub_s": lambda x, a, b: x - np.float32(a),
    "rsub_s": lambda x, a, b: np.float32(a) - x,
    "mul_s": lambda x, a, b: x * np.float32(a),
    "div_s": lambda x, a, b: x / np.float32(a),
    "rdiv_s": lambda x, a, b: np.float32(a) / x,
    "pow_s": lambda x, a, b: np.power(x, np.float32(a)),
    "rpow_s": lambda x, a, b: np.power(np.float32(a), x),
    "max_s": lambda x, a, b: torch.maximum(_t(x), _t(np.full_like(x, a))).numpy(),
    "min_s": lambda x, a, b: torch.minimum(_t(x), _t(np.full_like(x, a))).numpy(),
    "clamp": lambda x, a, b: torch.clamp(_t(x), a, b).numpy(),
    "leaky_relu": lambda x, a, b: torch.nn.functional.leaky_relu(_t(x), a).numpy(),
    "elu": lambda x, a, b: torch.nn.functional.elu(_t(x), a).numpy(),
    "softplus": lambda x, a, b: torch.nn.functional.softplus(_t(x), a, b).numpy(),
    "affine": lambda x, a, b: x * np.float32(a) + np.float32(b),
}
SCALARS = {"pow_s": (2.5, 0.0), "rpow_s": (1.7, 0.0), "clamp": (-1.25, 2.0), "leaky_relu": (0.1, 0.0),
           "elu": (0.5, 0.0), "softplus": (2.0, 20.0), "affine": (1.5, -0.25), "div_s": (3.0, 0.0),
           "rdiv_s": (-2.0, 0.0), "max_s": (0.25, 0.0), "min_s": (0.25, 0.0)}


def assert_float_close(got, want, dtype, msg=""):
    got = np.asarray(got, np.float32)
    want = np.asarray(want, np.float32)
    if dtype == np.float16:  # both rounded to half: within one half ulp step of each other
        with np.errstate(over="ignore"):  # overflow to inf is the expected half result
            want16 = want.astype(np.float16).astype(np.float32)
        np.testing.assert_allclose(got, want16, rtol=1e-3, atol=1e-6, equal_nan=True, err_msg=msg)
    else:
        np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-6, equal_nan=True, err_msg=msg)
    # infinities and NaN where expected, with the right signs
    assert np.array_equal(np.isnan(got), np.isnan(want16 if dtype == np.float16 else want)), msg


def test_op_tables_match_the_constants():
    for table in (UNARY, BINARY, COMPARE, PREDICATE):
        for name, code in table.items():
            assert CONSTS[f"EW_{name.upper()}"] == code, name
    assert set(UNARY_INT) <= set(UNARY) and set(BINARY_INT) <= set(BINARY)
    assert set(UNARY) == set(UNARY_ORACLE)
    assert len(set(UNARY.values())) == len(UNARY) and len(set(BINARY.values())) == len(BINARY)


def test_layout_struct_matches_python_packing(lib):
    lib.emu_sizeof_layout.restype = ctypes.c_int
    assert lib.emu_sizeof_layout() == struct.calcsize("8q8qii") == 136


@pytest.mark.parametrize("shape", [(5, 7, 3), (1 << 20, 3, 1 << 13, 5), (3, 1 << 33, 1, 2), ()])
def test_offsets_match_numpy_unravel(lib, shape):
    rng = np.random.default_rng(1)
    nd = len(shape)
    strides = [[int(s) for s in rng.integers(-50, 50, nd)] for _ in range(3)]
    n = int(np.prod(shape, dtype=np.int64))
    for i in list(rng.integers(0, n, 40)) + [0, n - 1]:
        out3 = (ctypes.c_longlong * 3)()
        lib.emu_offsets(_llarr(shape), _llarr(strides[0]), _llarr(strides[1]), _llarr(strides[2]), nd, int(i), out3)
        idx = np.unravel_index(int(i), shape) if nd else ()
        for k in range(3):
            assert out3[k] == sum(int(a) * b for a, b in zip(idx, strides[k])), (shape, i, k)


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float(lib, name, dt):
    dtype = DT[dt][1]
    a, b = SCALARS.get(name, (0.75, 0.0))
    x = float_inputs(dtype)
    with np.errstate(all="ignore"):
        want = UNARY_ORACLE[name](x.astype(np.float32), a, b)
    op = UNARY[name]
    for aligned in (True, False):
        got = run_contig(lib, "unary", dt, dtype, [x], aligned, op=op, a=a, b=b)
        assert_float_close(got, want, dtype, f"{name} contig aligned={aligned}")
    # strided: negative and non-unit strides, then broadcast along a new leading dim
    base = np.zeros((6, 2 * x.size), dtype)
    base[1, ::2] = x
    view = base[1:2, -2::-2]  # shape (1, x.size), stride -2, reversed
    got = run_strided(lib, "unary", dt, dtype, [np.broadcast_to(view, (3, x.size))], op=op, a=a, b=b)
    assert_float_close(got, np.broadcast_to(want[::-1], (3, x.size)), dtype, f"{name} strided")


@pytest.mark.parametrize("dt", ["i64", "i32"])
@pytest.mark.parametrize("name", UNARY_INT)
def test_unary_int(lib, name, dt):
    dtype = DT[dt][1]
    info = np.iinfo(dtype)
    x = np.array([0, 1, -1, 7, -7, 123456, info.max, info.min, info.min + 1, 42, 5, -3, 9], dtype)
    a, b = (-2, 5) if name == "clamp" else (3, -4)
    with np.errstate(over="ignore"):
        want = {"neg": lambda: -x, "abs": lambda: np.abs(x), "sign": lambda: np.sign(x), "square": lambda: x * x,
                "identity": lambda: x, "add_s": lambda: x + dtype(a), "sub_s": lambda: x - dtype(a),
                "rsub_s": lambda: dtype(a) - x, "mul_s": lambda: x * dtype(a), "max_s": lambda: np.maximum(x, a),
                "min_s": lambda: np.minimum(x, a), "clamp": lambda: np.clip(x, a, b),
                "affine": lambda: x * dtype(a) + dtype(b)}[name]().astype(dtype)
    for aligned in (True, False):
        got = run_contig(lib, "unary", dt, dtype, [x], aligned, op=UNARY[name], a=a, b=b)
        np.testing.assert_array_equal(got, want)
    got = run_strided(lib, "unary", dt, dtype, [x[::-1]], op=UNARY[name], a=a, b=b)
    np.testing.assert_array_equal(got, want[::-1])


def binary_oracle(name, x, y):
    tx, ty = _t(x), _t(y)
    return {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y,
            "pow": lambda: np.power(x, y), "maximum": lambda: torch.maximum(tx, ty).numpy(),
            "minimum": lambda: torch.minimum(tx, ty).numpy(),
            "relu_backward": lambda: torch.ops.aten.threshold_backward(tx, ty, 0.0).numpy(),
            "tanh_backward": lambda: x * (1 - y * y), "sigmoid_backward": lambda: x * y * (1 - y)}[name]()


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float(lib, name, dt):
    dtype = DT[dt][1]
    x = float_inputs(dtype, 64, seed=2)
    y = float_inputs(dtype, 64, seed=3)[::-1].copy()
    if name == "pow":
        x = np.abs(x)  # negative bases with fractional exponents are NaN in both; keep the test informative
    with np.errstate(all="ignore"):
        want = binary_oracle(name, x.astype(np.float32), y.astype(np.float32))
        for aligned in (True, False):
            got = run_contig(lib, "binary", dt, dtype, [x, y], aligned, op=BINARY[name])
            if dt == "f16" and name in ("add", "sub", "mul", "div"):  # exact: one rounding of the float result
                np.testing.assert_array_equal(got.view(np.uint16)[~np.isnan(got)],
                                              want.astype(np.float16).view(np.uint16)[~np.isnan(got)])
            assert_float_close(got, want, dtype, f"{name} aligned={aligned}")
        # broadcasting: (4, 1, 8) op (3, 8) -> (4, 3, 8), the second operand transposed
        xb = x[:32].reshape(4, 1, 8)
        yb = np.ascontiguousarray(y[:24].reshape(8, 3)).T
        got = run_strided(lib, "binary", dt, dtype, [xb, yb], op=BINARY[name])
        xx, yy = np.broadcast_arrays(xb.astype(np.float32), yb.astype(np.float32))
        assert_float_close(got, binary_oracle(name, xx.copy(), yy.copy()), dtype, f"{name} broadcast")


@pytest.mark.parametrize("dt", ["i64", "i32"])
@pytest.mark.parametrize("name", BINARY_INT)
def test_binary_int(lib, name, dt):
    dtype = DT[dt][1]
    info = np.iinfo(dtype)
    rng = np.random.default_rng(4)
    x = np.concatenate([[info.max, info.min, -1, 0, 3], rng.integers(-1000, 1000, 30)]).astype(dtype)
    y = np.concatenate([[1, -1, info.min, 5, info.max], rng.integers(-1000, 1000, 30)]).astype(dtype)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum}[name]
    with np.errstate(over="ignore"):
        want = fn(x, y)
        for aligned in (True, False):
            np.testing.assert_array_equal(run_contig(lib, "binary", dt, dtype, [x, y], aligned, op=BINARY[name]), want)
        xb, yb = x[:35].reshape(5, 7, 1), y[:6].reshape(1, 6)
        np.testing.assert_array_equal(run_strided(lib, "binary", dt, dtype, [xb, yb], op=BINARY[name]), fn(xb, yb))


def test_f16_results_round_to_nearest_even_and_overflow(lib):
    # 1 + 2^-11 is halfway between two halves: ties to even gives 1; 1 + 3*2^-11 ties up to 1 + 2^-9
    x = np.array([1, 1, 65504, -65504, 2048, 0.1], np.float16)
    y = np.array([2 ** -11, 3 * 2 ** -11, 65504, -65504, 1, 0.2], np.float16)
    got = run_contig(lib, "binary", "f16", np.float16, [x, y], True, nth=1, op=BINARY["add"])
    want = np.array([1, 1 + 2 ** -9, np.inf, -np.inf, 2048, (np.float32(x[5]) + np.float32(y[5]))], np.float16)
    np.testing.assert_array_equal(got, want)


CMP_NP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
          "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
          "logical_xor": np.logical_xor}


def typed_pair(dt, seed):
    dtype = DT[dt][1]
    rng = np.random.default_rng(seed)
    if dt in ("f32", "f16"):
        x = float_inputs(dtype, 40, seed)
        y = x.copy()
        y[::3] = rng.standard_normal(y[::3].size).astype(dtype)
        y[1] = np.nan
        return x, y
    if dt == "bool":
        return rng.integers(0, 2, 40).astype(np.uint8), rng.integers(0, 2, 40).astype(np.uint8)
    x = rng.integers(-3, 4, 40).astype(dtype)
    y = rng.integers(-3, 4, 40).astype(dtype)
    return x, y


@pytest.mark.parametrize("dt", list(DT))
@pytest.mark.parametrize("name", sorted(COMPARE))
def test_compare(lib, name, dt):
    x, y = typed_pair(dt, 5)
    want = CMP_NP[name](x, y).astype(np.uint8)
    for aligned in (True, False):
        np.testing.assert_array_equal(run_contig(lib, "compare", dt, np.uint8, [x, y], aligned, op=COMPARE[name]), want)
    xb, yb = x[:8].reshape(8, 1), y[::-5]
    got = run_strided(lib, "compare", dt, np.uint8, [xb, yb], op=COMPARE[name])
    np.testing.assert_array_equal(got, CMP_NP[name](xb, yb).astype(np.uint8))


@pytest.mark.parametrize("dt", list(DT))
@pytest.mark.parametrize("name", sorted(PREDICATE))
def test_predicate(lib, name, dt):
    x, _ = typed_pair(dt, 6)
    fn = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "logical_not": np.logical_not,
          "nonzero": lambda v: v != 0}[name]
    want = fn(x).astype(np.uint8)
    for aligned in (True, False):
        got = run_contig(lib, "predicate", dt, np.uint8, [x], aligned, op=PREDICATE[name])
        np.testing.assert_array_equal(got, want)
    got = run_strided(lib, "predicate", dt, np.uint8, [x[::2]], op=PREDICATE[name])
    np.testing.assert_array_equal(got, want[::2])


@pytest.mark.parametrize("dt", list(DT))
def test_where(lib, dt):
    x, y = typed_pair(dt, 7)
    rng = np.random.default_rng(8)
    cond = rng.integers(0, 2, x.size).astype(np.uint8)
    cond[::7] = 255  # any nonzero byte is true
    want = np.where(cond != 0, x, y)
    for aligned in (True, False):
        got = run_contig(lib, "where", dt, x.dtype, [cond, x, y], aligned)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    # broadcast cond (5, 1), x (1, 8) reversed view, y scalar
    cb, xb, yb = cond[:5].reshape(5, 1), x[:16:2][::-1].reshape(1, 8), y[:1].reshape(())
    got = run_strided(lib, "where", dt, x.dtype, [cb, xb, yb])
    want = np.where(cb != 0, xb, yb)
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 17, 64])
@pytest.mark.parametrize("nth", [1, 3, 256])
def test_contig_grid_covers_every_element_once(lib, n, nth):
    x = np.arange(n, dtype=np.float32)
    for aligned in (True, False):
        got = run_contig(lib, "unary", "f32", np.float32, [x], aligned, nth=nth, op=UNARY["add_s"], a=1.0)
        np.testing.assert_array_equal(got, x + 1)
