"""Host-side checks of kernel_src/reduce.cu, with no GPU.

tests/cuda_host/reduce_harness.cu is compiled by nvcc into a host shared library (ctypes).

* reduce_cols_* (one independent thread per output) is emulated exactly: its loop body red_cols_body from
  kernel_src/reduce.cuh runs for every thread of an emulated grid.
* reduce_warp_*, reduce_block_* and the two-pass reduce_partial_* + reduce_finish_* cooperate through
  __shfl_down_sync and shared memory, which cannot run on the CPU. The harness runs their per-thread
  pieces from reduce.cuh (red_accumulate, red_combine, red_identity, red_base, red_chunk_range,
  red_write) inside a host re-implementation of the shuffle tree and the shared-memory step with the same
  structure. This checks the reduction order, the chunking and the NaN / tie semantics; the device
  shuffle and barrier code itself is verified on a GPU only.
* red_combine is checked directly for commutativity and associativity (it must be, for a tree to give
  the sequential answer), NaN propagation and first-index ties.
"""

from __future__ import annotations

import ast
import ctypes
import itertools
import re

import numpy as np
import pytest
from host_harness import KERNEL_DIR, build_harnesses

torch = pytest.importorskip("torch")


pytestmark = pytest.mark.cuda

CUH = (KERNEL_DIR / "reduce.cuh").read_text()
OPS = ast.literal_eval(re.search(r"// REDUCE_OPS = (\{[^}]*\})", CUH).group(1))
KINDS = {"cols": 0, "warp": 1, "block": 2, "two_pass": 3}
DT = {"f32": (0, np.float32), "f16": (1, np.float16)}
NO_INDEX = 2 ** 63 - 1


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    lib = ctypes.CDLL(str(build_harnesses(tmp_path_factory, "reduce_harness", shared=True)[0]))
    ll, vp, ci = ctypes.c_longlong, ctypes.c_void_p, ctypes.c_int
    lib.emu_reduce.argtypes = [ci, ci, ci, ll, vp, vp, vp, ll, ll, ll, ll, ll, ll, ll, ci]
    lib.emu_reduce.restype = ci
    lib.emu_combine.argtypes = [ci, ctypes.c_float, ll, ctypes.c_float, ll, ctypes.POINTER(ctypes.c_float),
                                ctypes.POINTER(ll)]
    lib.emu_base.argtypes = [ll, ll, ll, ll]
    lib.emu_base.restype = ll
    return lib


def test_op_table_matches_the_constants():
    consts = {m.group(1): int(m.group(2)) for m in re.finditer(r"constexpr int RED_(\w+) = (\d+);", CUH)}
    assert {k.upper(): v for k, v in OPS.items()} == consts


def combine(lib, op, a, b):
    v, i = ctypes.c_float(), ctypes.c_longlong()
    lib.emu_combine(op, a[0], a[1], b[0], b[1], ctypes.byref(v), ctypes.byref(i))
    return (v.value, i.value)


def same(p, q):
    return (p[1] == q[1]) and (p[0] == q[0] or (np.isnan(p[0]) and np.isnan(q[0])))


VALUES = [1.0, 1.0, -2.0, np.nan, np.nan, np.inf, -np.inf, 0.0, -0.0, 3.5]


@pytest.mark.parametrize("op", ["max", "min"])
def test_combine_is_a_total_order(lib, op):
    code = OPS[op]
    accs = [(v, i) for i, v in enumerate(VALUES)]
    inf = np.inf if op == "min" else -np.inf
    ident = (inf, NO_INDEX)
    for a, b in itertools.product(accs, accs):
        assert same(combine(lib, code, a, b), combine(lib, code, b, a)), (a, b)
        assert same(combine(lib, code, a, ident), a) and same(combine(lib, code, ident, a), a)
    for a, b, c in itertools.product(accs, repeat=3):
        left = combine(lib, code, combine(lib, code, a, b), c)
        right = combine(lib, code, a, combine(lib, code, b, c))
        assert same(left, right), (a, b, c)
    # the winner of everything: the first NaN (index 3)
    best = accs[0]
    for a in accs[1:]:
        best = combine(lib, code, best, a)
    assert np.isnan(best[0]) and best[1] == 3
    # without NaN: ties go to the first index
    best = ident
    for a in [x for x in accs if not np.isnan(x[0])][::-1]:
        best = combine(lib, code, a, best)
    want = (np.inf, 5) if op == "max" else (-np.inf, 6)
    assert same(best, want)


def test_base_index_decomposition(lib):
    outer, inner, so, si = 6, 7, 1000, -3
    for j in range(outer * inner):
        o, i = divmod(j, inner)
        assert lib.emu_base(j, inner, so, si) == o * so + i * si


def make_data(dtype, shape, seed, nan_frac=0.0, ties=False):
    rng = np.random.default_rng(seed)
    x = rng.integers(-20, 20, shape).astype(np.float32) if ties else rng.standard_normal(shape).astype(np.float32)
    if nan_frac:
        x[rng.random(shape) < nan_frac] = np.nan
    return x.astype(dtype)


def run(lib, kind, dt, op, view3, nth=37, chunk=128, block_threads=256):
    """Reduce the (outer, R, inner) NumPy view over axis 1 with the emulated kernel `kind`."""
    outer, R, inner = view3.shape
    so, sr, si = (s // view3.itemsize for s in view3.strides)
    out = np.full(outer * inner, 77, DT[dt][1])
    idx = np.full(outer * inner, -5, np.int64)
    rc = lib.emu_reduce(DT[dt][0], KINDS[kind], OPS[op], nth, view3.ctypes.data, out.ctypes.data, idx.ctypes.data,
                        outer, R, inner, so, sr, si, chunk, block_threads)
    assert rc == 0
    return out.reshape(outer, inner), idx.reshape(outer, inner)


def views(dtype, seed, nan_frac=0.0, ties=False):
    """(name, (outer, R, inner) view) pairs covering the shapes the host produces."""
    a = make_data(dtype, (5, 300), seed, nan_frac, ties)
    b = make_data(dtype, (3, 40, 7), seed + 1, nan_frac, ties)
    c = make_data(dtype, (9, 23), seed + 2, nan_frac, ties)
    d = make_data(dtype, (2, 1500), seed + 3, nan_frac, ties)
    return [("rows", a[:, None, :].transpose(0, 2, 1)),       # reduce the last axis: sr = 1, inner = 1
            ("middle", b),                                    # reduce axis 1 of (3, 40, 7)
            ("first_of_reversed", c[::-1, ::2][None]),        # reduce axis 0 of a negative-stride view
            ("single", c[:, :1][:, :, None]),                 # R = 1
            ("long", d[:, None, :].transpose(0, 2, 1))]       # R = 1500: several chunks and block passes


def oracle(op, view3):
    t = torch.from_numpy(np.ascontiguousarray(view3).astype(np.float32))
    if op == "sum":
        return torch.from_numpy(np.ascontiguousarray(view3).astype(np.float64)).sum(1).numpy(), None
    if op in ("max", "argmax"):
        v, i = torch.max(t, 1)
    else:
        v, i = torch.min(t, 1)
    return v.numpy(), i.numpy()


@pytest.mark.parametrize("dt", list(DT))
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("data", ["plain", "nan", "ties"])
def test_reduce_matches_torch(lib, op, kind, dt, data):
    dtype = DT[dt][1]
    nan_frac = 0.02 if data == "nan" else 0.0
    for name, v3 in views(dtype, 11, nan_frac, ties=data == "ties"):
        got, idx = run(lib, kind, dt, op, v3)
        want, want_idx = oracle(op, v3)
        msg = f"{op} {kind} {dt} {data} {name}"
        if op == "sum":
            tol = dict(rtol=2e-3, atol=2e-2) if dt == "f16" else dict(rtol=1e-5, atol=1e-4)
            np.testing.assert_allclose(got.astype(np.float64), want, equal_nan=True, err_msg=msg, **tol)
        else:
            np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32), err_msg=msg)
            np.testing.assert_array_equal(idx, want_idx, err_msg=msg)


@pytest.mark.parametrize("block_threads", [32, 96, 256])
@pytest.mark.parametrize("chunk", [1, 7, 64, 2000])
def test_block_and_two_pass_shapes(lib, block_threads, chunk):
    v3 = make_data(np.float32, (3, 777), 5, nan_frac=0.0, ties=True)[:, None, :].transpose(0, 2, 1)
    want_v, want_i = oracle("argmax", v3)
    for kind in ("block", "two_pass"):
        got, idx = run(lib, kind, "f32", "argmax", v3, chunk=chunk, block_threads=block_threads)
        np.testing.assert_array_equal(got[:, 0], want_v[:, 0])
        np.testing.assert_array_equal(idx[:, 0], want_i[:, 0])
        s, _ = run(lib, kind, "f32", "sum", v3, chunk=chunk, block_threads=block_threads)
        np.testing.assert_allclose(s[:, 0], v3.astype(np.float64).sum(1)[:, 0], rtol=1e-6)


def test_f16_sum_accumulates_in_float(lib):
    # 4096 halves of 1.0: a half accumulator would stop at 2048; float accumulation gives 4096 exactly
    v3 = np.ones((1, 4096, 1), np.float16)
    for kind in KINDS:
        got, _ = run(lib, kind, "f16", "sum", v3)
        assert got[0, 0] == 4096, kind


def test_sum_of_an_empty_row_is_zero(lib):
    v3 = np.zeros((2, 0, 3), np.float32)
    got, _ = run(lib, "cols", "f32", "sum", v3)
    np.testing.assert_array_equal(got, 0)
