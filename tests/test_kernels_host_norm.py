"""Host-side tests of the row kernels: kernel_src/softmax.cu, layernorm.cu, cross_entropy.cu (no GPU).

Rows are independent, and inside a row the kernels split the work as "thread t of nt handles elements
t, t + nt, ..." with the per-thread partials and the final per-element writes in __host__ __device__
functions (kernel_src/{softmax,layernorm,cross_entropy}.cuh). The harnesses in tests/cuda_host/ call
exactly those functions for every t (nt = 32 for the *_warp_* kernels, nt = 256 / other block sizes for
*_block_*) and combine the partials with a loop; results are compared with torch (CPU) and, for
cross-entropy, with the NumPy backend's own cross_entropy / cross_entropy_backward. The layernorm
parameter-gradient kernel and the cross-entropy backward have independent threads, so their whole grid
(grid-stride loop included) is emulated.

Only verified on a GPU: the warp-shuffle / shared-memory reductions themselves (sm_/ln_/ce_warp_sum,
*_warp_max, *_block_sum, *_block_max), the row-to-warp / row-to-block assignment loops of the kernels, and
speed. The float32 summation order differs between the GPU tree and the host loop (tolerances allow it).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from host_harness import build_harnesses

torch = pytest.importorskip("torch")

FAMILIES = ("softmax", "layernorm", "cross_entropy")

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    exes = build_harnesses(tmp_path_factory, *(f"{fam}_harness" for fam in FAMILIES))
    return dict(zip(FAMILIES, exes, strict=True))


def call(exe, *args):
    p = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def dname(dtype):
    return "f16" if dtype == np.float16 else "f32"


def tol(dtype):
    return dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-6)


# ---- softmax -------------------------------------------------------------------------------------
SOFTMAX_CASES = [(1, 1, 32), (4, 31, 32), (3, 1024, 32), (5, 1000, 256), (2, 5000, 256), (3, 77, 128), (2, 3, 256)]


@pytest.mark.parametrize("rows,cols,nt", SOFTMAX_CASES)
@pytest.mark.parametrize("log", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_softmax_forward_backward(harness, tmp_path, rows, cols, nt, log, dtype):
    rng = np.random.default_rng(rows * cols + nt + log)
    x = (rng.standard_normal((rows, cols)) * 4 + 30).astype(dtype)  # an offset: the row max must be subtracted
    dy = rng.standard_normal((rows, cols)).astype(dtype)
    x.tofile(tmp_path / "x.bin")
    call(harness["softmax"], "fwd", dname(dtype), log, nt, rows, cols, tmp_path / "x.bin", tmp_path / "y.bin")
    y = np.fromfile(tmp_path / "y.bin", dtype).reshape(rows, cols)

    xt = torch.tensor(x.astype(np.float32), requires_grad=True)
    yt = torch.log_softmax(xt, -1) if log else torch.softmax(xt, -1)
    yt.backward(torch.tensor(dy.astype(np.float32)))
    np.testing.assert_allclose(y.astype(np.float32), yt.detach().numpy(), **tol(dtype))

    dy.tofile(tmp_path / "dy.bin")
    call(harness["softmax"], "bwd", dname(dtype), log, nt, rows, cols, tmp_path / "y.bin", tmp_path / "dy.bin",
         tmp_path / "dx.bin")
    dx = np.fromfile(tmp_path / "dx.bin", dtype).reshape(rows, cols)
    # the kernel's backward starts from its own (rounded) forward output, as the GPU path will
    yf = y.astype(np.float64)
    dyf = dy.astype(np.float64)
    want = dyf - np.exp(yf) * dyf.sum(-1, keepdims=True) if log else yf * (dyf - (dyf * yf).sum(-1, keepdims=True))
    np.testing.assert_allclose(dx.astype(np.float64), want, **tol(dtype))
    np.testing.assert_allclose(dx.astype(np.float32), xt.grad.numpy(), rtol=5e-2 if dtype == np.float16 else 1e-4,
                               atol=5e-2 if dtype == np.float16 else 1e-5)


def test_softmax_extremes(harness, tmp_path):
    x = np.array([[1e4, -1e4, 0.0, 1e4], [-np.inf, 0.0, 1.0, -np.inf], [88.0, 89.0, 90.0, -88.0]], np.float32)
    x.tofile(tmp_path / "x.bin")
    for log in (0, 1):
        call(harness["softmax"], "fwd", "f32", log, 32, 3, 4, tmp_path / "x.bin", tmp_path / "y.bin")
        y = np.fromfile(tmp_path / "y.bin", np.float32).reshape(3, 4)
        t = torch.tensor(x)
        want = (torch.log_softmax(t, -1) if log else torch.softmax(t, -1)).numpy()
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


# ---- layer norm ----------------------------------------------------------------------------------
LN_CASES = [(3, 1, 32), (4, 33, 32), (3, 768, 32), (2, 1500, 256), (5, 100, 64)]


@pytest.mark.parametrize("rows,cols,nt", LN_CASES)
@pytest.mark.parametrize("affine", [(1, 1), (0, 0), (1, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_layernorm_forward_backward(harness, tmp_path, rows, cols, nt, affine, dtype):
    hw, hb = affine
    rng = np.random.default_rng(rows * cols + nt + hw + 2 * hb)
    x = (rng.standard_normal((rows, cols)) * 3 + 10).astype(dtype)  # offset: two-pass variance matters
    w = rng.standard_normal(cols).astype(dtype)
    b = rng.standard_normal(cols).astype(dtype)
    dy = rng.standard_normal((rows, cols)).astype(dtype)
    eps = 1e-5
    for name, arr in (("x", x), ("w", w), ("b", b), ("dy", dy)):
        arr.tofile(tmp_path / f"{name}.bin")
    p = {n: tmp_path / f"{n}.bin" for n in ("x", "w", "b", "dy", "y", "mean", "rstd", "dx", "dwp", "dbp")}
    call(harness["layernorm"], "fwd", dname(dtype), nt, rows, cols, eps, hw, hb, p["x"], p["w"], p["b"],
         p["y"], p["mean"], p["rstd"])
    y = np.fromfile(p["y"], dtype).reshape(rows, cols)
    mean = np.fromfile(p["mean"], np.float32)
    rstd = np.fromfile(p["rstd"], np.float32)

    xt = torch.tensor(x.astype(np.float32), requires_grad=True)
    wt = torch.tensor(w.astype(np.float32), requires_grad=True) if hw else None
    bt = torch.tensor(b.astype(np.float32), requires_grad=True) if hb else None
    yt = torch.nn.functional.layer_norm(xt, (cols,), wt, bt, eps)
    yt.backward(torch.tensor(dy.astype(np.float32)))
    xf = x.astype(np.float64)
    np.testing.assert_allclose(mean, xf.mean(-1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(xf.var(-1) + eps), rtol=1e-4)
    np.testing.assert_allclose(y.astype(np.float32), yt.detach().numpy(), **(tol(dtype) if dtype == np.float16
                                                                             else dict(rtol=1e-4, atol=1e-4)))

    call(harness["layernorm"], "bwd", dname(dtype), nt, rows, cols, hw, p["dy"], p["x"], p["w"], p["mean"], p["rstd"],
         p["dx"])
    dx = np.fromfile(p["dx"], dtype).reshape(rows, cols)
    loose = dict(rtol=1e-2, atol=1e-2) if dtype == np.float16 else dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dx.astype(np.float32), xt.grad.numpy(), **loose)

    # parameter gradients: per-slice partials summed on the host; a small grid makes the column loop stride
    gx, bx, nparts = 2, 32, 3
    call(harness["layernorm"], "params", dname(dtype), gx, bx, nparts, rows, cols, p["dy"], p["x"], p["mean"],
         p["rstd"], p["dwp"], p["dbp"])
    dwp = np.fromfile(p["dwp"], np.float32).reshape(nparts, cols)
    dbp = np.fromfile(p["dbp"], np.float32).reshape(nparts, cols)
    xhat = (xf - mean[:, None]) * rstd[:, None]
    dyf = dy.astype(np.float64)
    np.testing.assert_allclose(dwp.sum(0), (dyf * xhat).sum(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dbp.sum(0), dyf.sum(0), rtol=1e-5, atol=1e-5)
    if hw and cols > 1:  # cols = 1: xhat is exactly 0 here, torch's rounded mean times rstd = 1/sqrt(eps) is not
        np.testing.assert_allclose(dwp.sum(0), wt.grad.numpy(), **loose)
    if hb:
        np.testing.assert_allclose(dbp.sum(0), bt.grad.numpy(), **loose)


# ---- cross-entropy -------------------------------------------------------------------------------
def numpy_backend_ce(x, target, weight, ignore_index, smoothing, g):
    from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives as P
    loss, logp, a, a_sum = P.cross_entropy(x, target, weight, ignore_index, smoothing)
    return loss, P.cross_entropy_backward(g, logp, a, a_sum), a_sum


CE_CASES = [(6, 1, 32), (9, 10, 32), (7, 1000, 32), (5, 3000, 256), (8, 50, 128)]


@pytest.mark.parametrize("rows,cols,nt", CE_CASES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_cross_entropy(harness, tmp_path, rows, cols, nt, weighted, smoothing, dtype):
    ignore = -100
    rng = np.random.default_rng(rows * cols + nt + weighted)
    x = (rng.standard_normal((rows, cols)) * 3 + 20).astype(dtype)
    target = rng.integers(0, cols, rows).astype(np.int64)
    target[1] = ignore
    w = rng.uniform(0.5, 2.0, cols).astype(dtype)
    g = rng.standard_normal(rows).astype(dtype)
    for name, arr in (("x", x), ("t", target), ("w", w), ("g", g)):
        arr.tofile(tmp_path / f"{name}.bin")
    p = {n: tmp_path / f"{n}.bin" for n in ("x", "t", "w", "g", "loss", "lse", "asum", "dx")}
    call(harness["cross_entropy"], "fwd", dname(dtype), nt, rows, cols, ignore, smoothing, int(weighted),
         p["x"], p["t"], p["w"], p["loss"], p["lse"], p["asum"])
    loss = np.fromfile(p["loss"], dtype)
    asum = np.fromfile(p["asum"], np.float32)

    xf, wf, gf = x.astype(np.float64), w.astype(np.float64), g.astype(np.float64)
    want_loss, want_dx, want_asum = numpy_backend_ce(xf, target, wf if weighted else None, ignore, smoothing, gf)
    lt = tol(dtype) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(loss.astype(np.float64), want_loss, **lt)
    np.testing.assert_allclose(asum, want_asum, rtol=1e-5, atol=1e-6)
    assert loss[1] == 0 and asum[1] == 0

    # torch agrees (mean over non-ignored with the weighted denominator = sum(loss) / sum(w[y]))
    if not smoothing:
        tt = torch.nn.functional.cross_entropy(torch.tensor(xf), torch.tensor(target),
                                               weight=torch.tensor(wf) if weighted else None,
                                               ignore_index=ignore, reduction="none")
        np.testing.assert_allclose(loss.astype(np.float64), tt.numpy(), **lt)

    grid, block = 3, 64  # small grid: the grid-stride loop wraps
    call(harness["cross_entropy"], "bwd", dname(dtype), grid, block, rows, cols, ignore, smoothing, int(weighted), 1,
         p["x"], p["t"], p["w"], p["lse"], p["asum"], p["g"], p["dx"])
    dx = np.fromfile(p["dx"], dtype).reshape(rows, cols)
    np.testing.assert_allclose(dx.astype(np.float64), want_dx, **(tol(dtype) if dtype == np.float16
                                                                   else dict(rtol=1e-5, atol=1e-6)))
    assert (dx[1] == 0).all()


def test_cross_entropy_broadcast_g_and_bad_target(harness, tmp_path):
    rows, cols, ignore = 4, 7, 3
    rng = np.random.default_rng(9)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    target = np.array([0, 3, 9, 6], np.int64)  # row 1 ignored (ignore_index = 3), row 2 out of range
    g = np.array([0.25], np.float32)
    for name, arr in (("x", x), ("t", target), ("w", x[0]), ("g", g)):
        arr.tofile(tmp_path / f"{name}.bin")
    p = {n: tmp_path / f"{n}.bin" for n in ("x", "t", "w", "g", "loss", "lse", "asum", "dx")}
    call(harness["cross_entropy"], "fwd", "f32", 32, rows, cols, ignore, 0.0, 0, p["x"], p["t"], p["w"],
         p["loss"], p["lse"], p["asum"])
    loss = np.fromfile(p["loss"], np.float32)
    assert loss[1] == 0 and np.isnan(loss[2])
    lse = np.fromfile(p["lse"], np.float32)
    np.testing.assert_allclose(lse, np.log(np.exp(x.astype(np.float64)).sum(1)), rtol=1e-6)
    call(harness["cross_entropy"], "bwd", "f32", 1, 256, rows, cols, ignore, 0.0, 0, 0,
         p["x"], p["t"], p["w"], p["lse"], p["asum"], p["g"], p["dx"])
    dx = np.fromfile(p["dx"], np.float32).reshape(rows, cols)
    ok = [0, 3]
    tgt = target[ok].copy()
    _, want_dx, _ = numpy_backend_ce(x[ok].astype(np.float64), tgt, None, ignore, 0.0, np.full(2, 0.25))
    np.testing.assert_allclose(dx[ok], want_dx, rtol=1e-5, atol=1e-6)
    assert (dx[1] == 0).all() and np.isnan(dx[2]).all()
