"""Host-side checks of kernel_src/conv_pool.cuh (the math of kernel_src/conv_pool.cu) against PyTorch (CPU).

Each kernel's per-element function -- exactly what one thread of the grid-stride loop runs; the threads are
independent (no shared memory, no atomics) -- is compiled for the CPU with nvcc
(tests/cuda_host/conv_pool_harness.cu) and run over every element, then compared with
torch.nn.functional: unfold / fold (im2col / col2im), max_pool2d with return_indices (values and int64
indices, ties and NaN included) and its backward, avg_pool2d (count_include_pad, divisor_override,
ceil_mode) and its backward; with stride, padding and dilation; float32 and float16 (float32 accumulation).
Not covered on the host: the device's grid-stride loop and 32-bit index arithmetic limits (per-plane sizes
must stay below 2^31), which only a GPU run exercises.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from host_harness import build_harnesses

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.cuda

NP = {"f32": np.float32, "f16": np.float16}
TOL = {"f32": dict(rtol=1e-5, atol=1e-5), "f16": dict(rtol=2e-3, atol=2e-3)}


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return build_harnesses(tmp_path_factory, "conv_pool_harness")[0]


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def out_size(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling / convolution output size."""
    num = size + 2 * p - d * (k - 1) - 1
    o = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (o - 1) * s >= size + p:  # the last window must start inside the image or left padding
        o -= 1
    return o


def conv_geom(shape, kernel, stride, padding, dilation=1, ceil_mode=False, count_include_pad=True,
              divisor_override=None) -> np.ndarray:
    """The ConvGeom argument (16 int64): the launcher's packing."""
    N, C, H, W = shape
    (KH, KW), (sh, sw), (ph, pw), (dh, dw) = map(pair, (kernel, stride, padding, dilation))
    OH, OW = out_size(H, KH, sh, ph, dh, ceil_mode), out_size(W, KW, sw, pw, dw, ceil_mode)
    return np.array([N, C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, int(count_include_pad),
                     divisor_override or 0], np.int64)


def run(harness, d: Path, op, dt, files: dict):
    for name, arr in files.items():
        (d / f"{name}.bin").write_bytes(np.ascontiguousarray(arr).tobytes())
    p = subprocess.run([str(harness), op, dt, str(d)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return np.fromfile(d / "out.bin", NP[dt])


CONV_CASES = [  # shape, kernel, stride, padding, dilation
    ((2, 3, 7, 6), 3, 1, 1, 1),
    ((1, 2, 9, 8), (3, 2), (2, 1), (1, 0), (2, 1)),
    ((2, 1, 5, 5), 2, 3, 2, 1),  # stride > kernel: some pixels belong to no window
    ((1, 4, 6, 7), (1, 3), (1, 2), (0, 2), (1, 2)),
]


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("case", CONV_CASES, ids=str)
def test_im2col_col2im_match_unfold_fold(harness, tmp_path, dt, case):
    shape, k, s, p, d = case
    g = conv_geom(shape, k, s, p, d)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(NP[dt])
    got = run(harness, tmp_path, "im2col", dt, {"geom": g, "x": x})
    want = F.unfold(torch.from_numpy(x.astype(np.float32)), pair(k), dilation=pair(d), padding=pair(p),
                    stride=pair(s)).numpy()
    assert want.shape == (shape[0], shape[1] * g[4] * g[5], g[6] * g[7])
    np.testing.assert_array_equal(got.reshape(want.shape), want.astype(NP[dt]))  # pure copies: exact
    col = rng.standard_normal(want.shape).astype(NP[dt])
    got = run(harness, tmp_path, "col2im", dt, {"geom": g, "col": col})
    want = F.fold(torch.from_numpy(col.astype(np.float64)), shape[2:], pair(k), dilation=pair(d), padding=pair(p),
                  stride=pair(s)).numpy()
    np.testing.assert_allclose(got.reshape(shape), want, **TOL[dt])


POOL_CASES = [  # shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 8, 8), 2, 2, 0, 1, False),
    ((1, 2, 7, 9), 3, 2, 1, 1, False),
    ((1, 2, 7, 9), 3, 2, 1, 1, True),
    ((2, 1, 10, 7), (3, 2), (2, 3), (1, 1), (2, 1), True),
    ((1, 3, 6, 6), 3, 1, 1, 2, False),
]


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("data", ["normal", "ties", "nan"])
@pytest.mark.parametrize("case", POOL_CASES, ids=str)
def test_maxpool_forward_backward(harness, tmp_path, dt, data, case):
    shape, k, s, p, d, ceil_mode = case
    g = conv_geom(shape, k, s, p, d, ceil_mode)
    rng = np.random.default_rng(1)
    if data == "normal":
        x = rng.standard_normal(shape)
    else:  # few distinct values: many ties inside each window (the first in row-major order wins)
        x = rng.integers(-2, 2, shape).astype(np.float64)
        if data == "nan":
            x[rng.random(shape) < 0.15] = np.nan
    x = x.astype(NP[dt])
    got = run(harness, tmp_path, "maxpool", dt, {"geom": g, "x": x})
    idx = np.fromfile(tmp_path / "idx.bin", np.int64)
    xt = torch.from_numpy(x.astype(np.float32)).requires_grad_(True)
    want, want_idx = F.max_pool2d(xt, pair(k), pair(s), pair(p), pair(d), ceil_mode=ceil_mode, return_indices=True)
    np.testing.assert_array_equal(got.reshape(want.shape), want.detach().numpy().astype(NP[dt]))
    np.testing.assert_array_equal(idx.reshape(want.shape), want_idx.numpy())
    grad = rng.standard_normal(want.shape).astype(NP[dt])
    want.backward(torch.from_numpy(grad.astype(np.float32)))
    got = run(harness, tmp_path, "maxpool_backward", dt, {"geom": g, "grad": grad, "idx": idx})
    np.testing.assert_allclose(got.reshape(shape), xt.grad.numpy(), **TOL[dt])


AVG_CASES = [  # shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    ((2, 3, 8, 8), 2, 2, 0, False, True, None),
    ((1, 2, 7, 9), 3, 2, 1, False, True, None),
    ((1, 2, 7, 9), 3, 2, 1, False, False, None),
    ((1, 2, 7, 9), 3, 2, 1, True, True, None),
    ((1, 2, 7, 9), 3, 2, 1, True, False, None),
    ((2, 1, 10, 7), (3, 2), (2, 3), (1, 1), True, True, 5),
    ((1, 3, 6, 6), 3, 1, 1, False, False, 4),
]


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("case", AVG_CASES, ids=str)
def test_avgpool_forward_backward(harness, tmp_path, dt, case):
    shape, k, s, p, ceil_mode, cip, div = case
    g = conv_geom(shape, k, s, p, 1, ceil_mode, cip, div)
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(NP[dt])
    got = run(harness, tmp_path, "avgpool", dt, {"geom": g, "x": x})
    xt = torch.from_numpy(x.astype(np.float64)).requires_grad_(True)
    want = F.avg_pool2d(xt, pair(k), pair(s), pair(p), ceil_mode=ceil_mode, count_include_pad=cip,
                        divisor_override=div)
    np.testing.assert_allclose(got.reshape(want.shape), want.detach().numpy(), **TOL[dt])
    grad = rng.standard_normal(want.shape).astype(NP[dt])
    want.backward(torch.from_numpy(grad.astype(np.float64)))
    got = run(harness, tmp_path, "avgpool_backward", dt, {"geom": g, "grad": grad})
    np.testing.assert_allclose(got.reshape(shape), xt.grad.numpy(), **TOL[dt])
