"""Host-side tests of the GEMM kernels in kernel_src/matmul.cu (no GPU needed, nvcc is).

The SIMT GEMM (gemm_f32 / gemm_f16) is written as __host__ __device__ phases over an explicit
(block, thread) index with shared memory passed as a pointer (kernel_src/matmul.cuh). The harness
tests/cuda_host/matmul_harness.cu runs a whole launch on the CPU with those same functions: every block
of the grid (grid-stride batch loop included), every thread through one phase before the next (the
__syncthreads barriers), with shared memory pre-filled with NaN. So the tile and index math, the edge
predicates, the double-buffer sequencing, the strided / transposed / broadcast addressing, alpha/beta and
the float16 conversions are all checked here against NumPy. The threads of a phase are also run in three
different orders; identical results show no phase reads what another thread writes in that phase.

The tensor-core GEMM (gemm_f16_tc_*) is emulated the same way except the WMMA calls themselves, which the
harness replaces by a loop over the same shared-memory fragment addresses: the global->shared chunking,
the fragment offsets, the zero-filled edges and the epilogue are checked; the wmma fragment semantics
(load_matrix_sync / mma_sync / store_matrix_sync with these leading dimensions) are only verified on a GPU.
Not verified here at all: the warp-level execution itself, coalescing, bank conflicts and speed.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from host_harness import build_harnesses

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return build_harnesses(tmp_path_factory, "matmul_harness")[0]


def _strided(buf, shape, strides):
    """A view of the 1-D buffer with element strides (like the kernel's addressing)."""
    return np.lib.stride_tricks.as_strided(buf, shape, [s * buf.itemsize for s in strides], writeable=False)


def run_simt(harness, tmp_path, A, B, C, M, N, K, batch, sa, sb, sc, alpha=1.0, beta=0.0, order=0, gz=None):
    dt = "f16" if A.dtype == np.float16 else "f32"
    gz = batch if gz is None else gz
    paths = [tmp_path / n for n in ("A.bin", "B.bin", "C.bin", "out.bin")]
    for arr, path in zip((A, B, C), paths):
        arr.tofile(path)
    args = [str(harness), "simt", dt, str(order), str(gz), str(M), str(N), str(K), str(batch),
            *map(str, sa), *map(str, sb), *map(str, sc), repr(alpha), repr(beta), *map(str, paths)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return np.fromfile(paths[3], A.dtype)


def reference(A, B, C, M, N, K, batch, sa, sb, sc, alpha, beta):
    a = _strided(A, (batch, M, K), (sa[2], sa[0], sa[1])).astype(np.float64)
    b = _strided(B, (batch, K, N), (sb[2], sb[0], sb[1])).astype(np.float64)
    out = C.astype(np.float64).copy()
    view = np.lib.stride_tricks.as_strided(out, (batch, M, N), [s * 8 for s in (sc[2], sc[0], sc[1])])
    view[...] = alpha * (a @ b) + (beta * view if beta else 0.0)
    return out


def buffers(rng, dtype, M, N, K, batch, layout_a="rm", layout_b="rm", bcast_a=False, pad=3):
    """Operand buffers and strides: 'rm' row-major, 't' transposed storage; padded leading dimensions."""
    if layout_a == "rm":
        sa = (K + pad, 1, 0 if bcast_a else M * (K + pad))
    else:
        sa = (1, M + pad, 0 if bcast_a else K * (M + pad))
    if layout_b == "rm":
        sb = (N + pad, 1, K * (N + pad))
    else:
        sb = (1, K + pad, N * (K + pad))
    sc = (N + pad, 1, M * (N + pad))
    A = rng.standard_normal((1 if bcast_a else batch) * max(M, K) * (max(M, K) + pad) + 8).astype(dtype)
    B = rng.standard_normal(batch * max(K, N) * (max(K, N) + pad) + 8).astype(dtype)
    C = rng.standard_normal(batch * M * (N + pad) + 8).astype(dtype)
    return A, B, C, sa, sb, sc


SHAPES = [(1, 1, 1), (128, 128, 8), (130, 257, 19), (7, 300, 33), (257, 5, 1), (64, 129, 17)]


@pytest.mark.parametrize("M,N,K", SHAPES)
@pytest.mark.parametrize("layout_a,layout_b", [("rm", "rm"), ("t", "rm"), ("rm", "t"), ("t", "t")])
def test_gemm_f32_shapes_and_layouts(harness, tmp_path, M, N, K, layout_a, layout_b):
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    A, B, C, sa, sb, sc = buffers(rng, np.float32, M, N, K, 1, layout_a, layout_b)
    got = run_simt(harness, tmp_path, A, B, C, M, N, K, 1, sa, sb, sc)
    want = reference(A, B, C, M, N, K, 1, sa, sb, sc, 1.0, 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.sqrt(K))


def test_gemm_f32_batched_broadcast_alpha_beta(harness, tmp_path):
    M, N, K, batch = 70, 140, 37, 3
    rng = np.random.default_rng(1)
    A, B, C, sa, sb, sc = buffers(rng, np.float32, M, N, K, batch, "t", "rm", bcast_a=True)
    # gz = 2 < batch: the grid-stride loop over blockIdx.z runs a second batch in the same block
    got = run_simt(harness, tmp_path, A, B, C, M, N, K, batch, sa, sb, sc, alpha=0.5, beta=-2.0, gz=2)
    want = reference(A, B, C, M, N, K, batch, sa, sb, sc, 0.5, -2.0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_gemm_beta_zero_does_not_read_c(harness, tmp_path):
    M, N, K = 20, 30, 9
    rng = np.random.default_rng(2)
    A, B, C, sa, sb, sc = buffers(rng, np.float32, M, N, K, 1)
    C[:] = np.nan
    got = run_simt(harness, tmp_path, A, B, C, M, N, K, 1, sa, sb, sc, alpha=2.0, beta=0.0)
    c = _strided(got, (M, N), sc[:2])
    np.testing.assert_allclose(c, 2.0 * (_strided(A, (M, K), sa[:2]).astype(np.float64)
                                         @ _strided(B, (K, N), sb[:2])), rtol=1e-5, atol=1e-5)
    # padding between the rows of C is not written
    mask = np.ones(got.size, bool)
    idx = (np.arange(M)[:, None] * sc[0] + np.arange(N)[None, :]).ravel()
    mask[idx] = False
    assert np.isnan(got[mask]).all()


def test_gemm_k_zero_scales_c(harness, tmp_path):
    M, N = 5, 6
    rng = np.random.default_rng(3)
    A, B, C, sa, sb, sc = buffers(rng, np.float32, M, N, 0, 1)
    got = run_simt(harness, tmp_path, A, B, C, M, N, 0, 1, sa, sb, sc, alpha=1.0, beta=3.0)
    np.testing.assert_allclose(got, reference(A, B, C, M, N, 0, 1, sa, sb, sc, 1.0, 3.0), rtol=1e-6)


def test_gemm_thread_order_does_not_matter(harness, tmp_path):
    M, N, K = 150, 131, 45
    rng = np.random.default_rng(4)
    A, B, C, sa, sb, sc = buffers(rng, np.float32, M, N, K, 1, "t", "t")
    outs = [run_simt(harness, tmp_path, A, B, C, M, N, K, 1, sa, sb, sc, beta=1.0, order=o) for o in (0, 1, 2)]
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


def test_gemm_f16(harness, tmp_path):
    M, N, K, batch = 33, 140, 70, 2
    rng = np.random.default_rng(5)
    A, B, C, sa, sb, sc = buffers(rng, np.float16, M, N, K, batch, "rm", "t")
    got = run_simt(harness, tmp_path, A, B, C, M, N, K, batch, sa, sb, sc, alpha=1.0, beta=0.5)
    want = reference(A, B, C, M, N, K, batch, sa, sb, sc, 1.0, 0.5)
    # float32 accumulation, one rounding to half at the end
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3 * np.sqrt(K))


def run_tc(harness, tmp_path, A, B, C, M, N, K, batch, sab, sbb, scb, alpha, beta, gz=None):
    out_dt = "f16" if C.dtype == np.float16 else "f32"
    gz = batch if gz is None else gz
    paths = [tmp_path / n for n in ("A.bin", "B.bin", "C.bin", "out.bin")]
    for arr, path in zip((A, B, C), paths):
        arr.tofile(path)
    args = [str(harness), "tc", out_dt, str(gz), str(M), str(N), str(K), str(batch), str(sab), str(sbb), str(scb),
            repr(alpha), repr(beta), *map(str, paths)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return np.fromfile(paths[3], C.dtype)


@pytest.mark.parametrize("M,N,K", [(16, 16, 16), (80, 48, 48), (64, 128, 32), (144, 16, 112)])
@pytest.mark.parametrize("out", [np.float32, np.float16])
def test_gemm_tc_layout_and_edges(harness, tmp_path, M, N, K, out):
    batch = 2
    rng = np.random.default_rng(M + N + K)
    A = rng.standard_normal((batch, M, K)).astype(np.float16)
    B = rng.standard_normal((batch, K, N)).astype(np.float16)
    C = rng.standard_normal((batch, M, N)).astype(out)
    got = run_tc(harness, tmp_path, A, B, C, M, N, K, batch, M * K, K * N, M * N, 1.5, 0.25, gz=1)
    want = 1.5 * (A.astype(np.float64) @ B.astype(np.float64)) + 0.25 * C.astype(np.float64)
    tol = 1e-4 if out == np.float32 else 3e-3
    np.testing.assert_allclose(got.reshape(batch, M, N).astype(np.float64), want, rtol=tol, atol=tol * np.sqrt(K))


def test_gemm_tc_broadcast_b_and_beta_zero(harness, tmp_path):
    M, N, K, batch = 32, 80, 48, 3
    rng = np.random.default_rng(7)
    A = rng.standard_normal((batch, M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    C = np.full((batch, M, N), np.nan, np.float32)
    got = run_tc(harness, tmp_path, A, B, C, M, N, K, batch, M * K, 0, M * N, 1.0, 0.0)
    want = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(got.reshape(batch, M, N), want, rtol=1e-4, atol=1e-4 * np.sqrt(K))
