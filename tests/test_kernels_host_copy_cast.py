"""Host-side checks of kernel_src/copy_cast.cu's math, with no GPU.

tests/cuda_host/copy_cast_harness.cu is compiled by nvcc into a host shared library that runs the kernels'
own loop bodies (kernel_src/copy_cast.cuh) for every thread of an emulated grid; the threads are
independent, so this covers the per-thread logic completely: every cast pair (against NumPy / PyTorch),
strided and broadcast reads, strided writes, the contiguous vector path and its tail, and arange.
GPU-only: the hardware conversion instructions themselves (the code makes NaN / out-of-range
float -> int explicit so both sides agree) and the real alignment requirement of the vector loads.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from host_harness import build_harnesses

torch = pytest.importorskip("torch")


pytestmark = pytest.mark.cuda

DTYPES = {"f32": (0, np.float32), "f16": (1, np.float16), "i64": (2, np.int64), "i32": (3, np.int32),
          "bool": (4, np.uint8)}
TORCH = {"f32": torch.float32, "f16": torch.float16, "i64": torch.int64, "i32": torch.int32, "bool": torch.bool}


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    lib = ctypes.CDLL(str(build_harnesses(tmp_path_factory, "copy_cast_harness", shared=True)[0]))
    ll, vp, llp = ctypes.c_longlong, ctypes.c_void_p, ctypes.POINTER(ctypes.c_longlong)
    lib.emu_copy_cast.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ll, vp, vp, llp, llp, llp, ctypes.c_int,
                                  ll, ctypes.c_int]
    lib.emu_arange.argtypes = [ctypes.c_int, ll, vp, ctypes.c_double, ctypes.c_double, ll, ll, ll]
    return lib


def _llarr(vals):
    vals = list(vals) or [0]
    return (ctypes.c_longlong * len(vals))(*vals)


def aligned_empty(n, dtype, offset=0):
    dtype = np.dtype(dtype)
    raw = np.empty((n + offset) * dtype.itemsize + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start:start + (n + offset) * dtype.itemsize].view(dtype)[offset:]


def sample(src: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    if src in ("f32", "f16"):
        x = np.array([0.0, -0.0, 0.4, -0.6, 1.5, -2.5, 2.5, 7.99, -7.99, 255.5, 1e3, -1e3, 65504, 1e-8],
                     np.float32)
        x = np.concatenate([x, rng.standard_normal(23).astype(np.float32) * 50])
    elif src == "bool":
        x = rng.integers(0, 2, 37)
    else:
        x = np.concatenate([[0, 1, -1, 65519, 65520, -70000, 2 ** 24 + 1, 2 ** 31 - 1, -(2 ** 31)],
                            rng.integers(-3000, 3000, 28)])
        if src == "i64":
            x = np.concatenate([x, [2 ** 40 + 3, -(2 ** 35) - 1, 2 ** 63 - 1]])
    return np.asarray(x).astype(DTYPES[src][1])


def expected(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    """PyTorch's conversion (CPU), as the storage dtype of the kernels."""
    t = torch.from_numpy(x.astype(np.bool_) if src == "bool" else x.copy())
    r = t.to(TORCH[dst]).numpy()
    return r.astype(np.uint8) if dst == "bool" else r


def run_contig(lib, src, dst, x, aligned, nth=5):
    off = 0 if aligned else 1
    xb = aligned_empty(x.size, x.dtype, off)
    xb[...] = x
    out = aligned_empty(x.size, DTYPES[dst][1], off)
    out[...] = 99
    rc = lib.emu_copy_cast(DTYPES[src][0], DTYPES[dst][0], 1, nth, out.ctypes.data, xb.ctypes.data, _llarr([x.size]),
                           _llarr([1]), _llarr([1]), 1, x.size, int(aligned))
    assert rc == 0
    return np.array(out)


def run_strided(lib, src, dst, view, out_view, nth=7):
    """out_view[...] = cast(view) through the strided kernel (out_view may itself be a strided view)."""
    shape = out_view.shape
    v = np.broadcast_to(view, shape)
    sx = [s // v.itemsize for s in v.strides]
    so = [s // out_view.itemsize for s in out_view.strides]
    n = int(np.prod(shape))
    rc = lib.emu_copy_cast(DTYPES[src][0], DTYPES[dst][0], 0, nth, out_view.ctypes.data, v.ctypes.data,
                           _llarr(shape), _llarr(so), _llarr(sx), len(shape), n, 0)
    assert rc == 0


@pytest.mark.parametrize("dst", list(DTYPES))
@pytest.mark.parametrize("src", list(DTYPES))
def test_cast_contig_matches_torch(lib, src, dst):
    x = sample(src)
    want = expected(x, src, dst)
    for aligned in (True, False):
        got = run_contig(lib, src, dst, x, aligned)
        np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8),
                                      err_msg=f"{src}->{dst} aligned={aligned}")


@pytest.mark.parametrize("dst", list(DTYPES))
@pytest.mark.parametrize("src", list(DTYPES))
def test_strided_view_to_contiguous(lib, src, dst):
    x = sample(src)[:36]
    base = x.reshape(4, 9)
    view = base[::-2, 1::3].T[None]  # (1, 3, 2): transposed, negative and non-unit strides, then broadcast
    view = np.broadcast_to(view, (2, 3, 2))
    out = np.full((2, 3, 2), 99, DTYPES[dst][1])
    run_strided(lib, src, dst, view, out)
    np.testing.assert_array_equal(out.view(np.uint8), expected(np.ascontiguousarray(view), src, dst).view(np.uint8))


def test_strided_write_into_a_view(lib):
    # assign: dst[1::2, ::-1] = src broadcast along rows; untouched elements keep their value
    dst = np.full((6, 5), -1.0, np.float32)
    src = np.arange(5, dtype=np.int64)
    run_strided(lib, "i64", "f32", src, dst[1::2, ::-1])
    want = np.full((6, 5), -1.0, np.float32)
    want[1::2, ::-1] = src
    np.testing.assert_array_equal(dst, want)


def test_float_to_int_edge_cases_are_defined(lib):
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 1e19, -1e19, -0.99, 0.99], np.float32)
    got64 = run_contig(lib, "f32", "i64", x, True)
    got32 = run_contig(lib, "f32", "i32", x, False)
    i64, i32 = np.iinfo(np.int64), np.iinfo(np.int32)
    np.testing.assert_array_equal(got64, [0, i64.max, i64.min, 3000000000, -3000000000, i64.max, i64.min, 0, 0])
    np.testing.assert_array_equal(got32, [0, i32.max, i32.min, i32.max, i32.min, i32.max, i32.min, 0, 0])
    gotb = run_contig(lib, "f32", "bool", x, True)
    np.testing.assert_array_equal(gotb, [1, 1, 1, 1, 1, 1, 1, 1, 1])


def test_f32_to_f16_rounds_to_nearest_even(lib):
    x = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504, 65519.99, 65520, 1e-8, 6e-8, -1e9], np.float32)
    got = run_contig(lib, "f32", "f16", x, True, nth=1)
    with np.errstate(over="ignore"):  # 65520 and -1e9 overflow to +-inf, as they should
        want = x.astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("start,end,step", [(0, 10, 1), (-3, 7.5, 0.25), (1, 0, -0.1), (0.1, 100, 0.7)])
@pytest.mark.parametrize("dst", ["f32", "f16"])
def test_arange_float(lib, start, end, step, dst):
    want = torch.arange(start, end, step, dtype=TORCH[dst]).numpy()
    out = np.zeros(want.size, DTYPES[dst][1])
    assert lib.emu_arange(DTYPES[dst][0], 3, out.ctypes.data, start, step, 0, 0, want.size) == 0
    np.testing.assert_allclose(out.astype(np.float32), want.astype(np.float32), rtol=1e-6 if dst == "f32" else 1e-3)


@pytest.mark.parametrize("dst", ["i64", "i32"])
def test_arange_int(lib, dst):
    want = np.arange(-7, 50, 3).astype(DTYPES[dst][1])
    out = np.zeros(want.size, DTYPES[dst][1])
    assert lib.emu_arange(DTYPES[dst][0], 4, out.ctypes.data, 0.0, 0.0, -7, 3, want.size) == 0
    np.testing.assert_array_equal(out, want)
