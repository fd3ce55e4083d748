"""The CPU emulator of tests/cuda_emu runs the real kernels of kernel_src/ with CUDA's execution model.

Each test launches a kernel through an argument buffer packed here with ``struct`` (as PyCUDA packs it for
``cuLaunchKernel``; device pointers are host addresses of NumPy arrays) and checks the result against NumPy.
A small test-only kernel file (written to a temporary folder) checks the emulator's own rules: shuffles,
ballots, built-in indices, threads that return before a barrier, and deadlock detection.
"""

from __future__ import annotations

import ast
import re
import struct

import numpy as np
import pytest

from tinygrad_like.backends.cuda_emu import EmuError, Emulator, EmuToolchainError
from tinygrad_like.backends.cuda_emu.emulator import KERNEL_DIR

pytestmark = pytest.mark.cuda

NEEDED = ["elementwise.cu", "matmul.cu", "reduce.cu", "softmax.cu", "index.cu"]
DECL_RE = re.compile(r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\([^)]*\)\s+)?void\s+(\w+)\s*\(')


@pytest.fixture(scope="module")
def emu():
    e = Emulator()
    try:
        e.build(NEEDED)
    except EmuToolchainError as err:
        pytest.skip(f"CUDA emulator unavailable: {err}")
    return e


def p(a: np.ndarray) -> int:
    """Device address of an array (the emulator's device memory is host memory)."""
    return a.ctypes.data


def header_table(name: str, header: str = "elementwise.cuh") -> dict:
    """A Python-readable op-code table from a header comment, e.g. ``EW_BINARY_OPS = {...}``."""
    text = " ".join(line.strip().lstrip("/").strip() for line in (KERNEL_DIR / header).read_text().splitlines()
                    if line.strip().startswith("//"))
    m = re.search(rf"\b{name} = (\{{.*?\}})", text)
    assert m, f"{name} not found in {header}"
    return ast.literal_eval(m.group(1))


def cuda_offsets(params: list[tuple[int, int]]) -> tuple[list[int], int]:
    """CUDA's packing of (size, alignment) parameters: each at the next multiple of its alignment."""
    offs, o = [], 0
    for size, align in params:
        o = (o + align - 1) // align * align
        offs.append(o)
        o += size
    return offs, o


# ---- elementwise ---------------------------------------------------------------------------------------

def test_ew_binary_contig_add(emu):
    ops = header_table("EW_BINARY_OPS")
    rng = np.random.default_rng(0)
    n = 3001  # not a multiple of 4: the vector loop's tail runs too
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    k = emu.kernel("ew_binary_contig_f32")
    for aligned in (0, 1):
        out = np.full(n, np.nan, np.float32)
        k.launch((2, 1, 1), (256, 1, 1), struct.pack("<QQQqii", p(out), p(x), p(y), n, ops["add"], aligned))
        np.testing.assert_array_equal(out, x + y)


def test_ew_binary_layout_param_offsets(emu):
    # ew_binary_f32(T* out, const T* x, const T* y, EwLayout lx, EwLayout ly, long long n, int op);
    # EwLayout packs as struct.pack("8q8qii", ...) (elementwise.cuh): 136 bytes, 8-aligned
    layout = struct.calcsize("8q8qii")
    assert layout == 136
    offs, total = cuda_offsets([(8, 8)] * 3 + [(layout, 8)] * 2 + [(8, 8), (4, 4)])
    k = emu.kernel("ew_binary_f32")
    assert k.param_sizes == (8, 8, 8, layout, layout, 8, 4)
    assert list(k.param_offsets) == offs == [0, 8, 16, 24, 160, 296, 304]
    assert k.arg_bytes == total == 308

    # and the data lands where those offsets say: x (5, 1) broadcast against y (1, 7), output (5, 7)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 1), dtype=np.float32)
    y = rng.standard_normal((1, 7), dtype=np.float32)
    out = np.full((5, 7), np.nan, np.float32)

    def ew_layout(strides):
        return struct.pack("<8q8qii", 5, 7, *[1] * 6, *strides, *[0] * 6, 2, 0)

    buf = bytearray(total)
    for off, val in zip(offs, [p(out), p(x), p(y)]):
        struct.pack_into("<Q", buf, off, val)
    buf[offs[3]:offs[3] + layout] = ew_layout([1, 0])
    buf[offs[4]:offs[4] + layout] = ew_layout([0, 1])
    struct.pack_into("<qi", buf, offs[5], out.size, header_table("EW_BINARY_OPS")["sub"])
    k.launch((1, 1, 1), (256, 1, 1), bytes(buf))
    np.testing.assert_array_equal(out, x - y)


# ---- matmul ---------------------------------------------------------------------------------------------

def test_gemm_f32_odd_shape_batched_transposed(emu):
    M, N, K, batch = 70, 50, 33, 2
    rng = np.random.default_rng(2)
    At = rng.standard_normal((batch, K, M), dtype=np.float32)  # A = At^T: passed through strides
    B = rng.standard_normal((batch, K, N), dtype=np.float32)
    C0 = rng.standard_normal((batch, M, N), dtype=np.float32)
    C = C0.copy()
    alpha, beta = 1.5, 0.5
    args = struct.pack("<QQQ13qff", p(C), p(At), p(B), M, N, K, batch,
                       1, M, M * K,      # sAm, sAk, sAb
                       N, 1, K * N,      # sBk, sBn, sBb
                       N, 1, M * N,      # sCm, sCn, sCb
                       alpha, beta)
    emu.kernel("gemm_f32").launch((-(-N // 128), -(-M // 128), batch), (256, 1, 1), args)
    ref = alpha * (np.swapaxes(At, 1, 2).astype(np.float64) @ B) + beta * C0
    np.testing.assert_allclose(C, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("M,N,K,batch", [(130, 132, 36, 2), (5, 4, 4, 1), (129, 260, 12, 3)])
def test_gemm_f32_vec_16_byte_loads_edges_and_batches(emu, M, N, K, batch):
    """The 16-byte-load variant: row-major A (M, K) and B (K, N) with K, N multiples of 4, tiles cut at every
    edge (M and N past a 128 tile, K past an 8 tile), B broadcast over the batch (stride 0)."""
    rng = np.random.default_rng(M + N)
    A = rng.standard_normal((batch, M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    C = np.full((batch, M, N), np.nan, np.float32)
    args = struct.pack("<QQQ13qff", p(C), p(A), p(B), M, N, K, batch, K, 1, M * K, N, 1, 0, N, 1, M * N, 1.0, 0.0)
    emu.kernel("gemm_f32_vec").launch((-(-N // 128), -(-M // 128), batch), (256, 1, 1), args)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("M,N,K", [(32, 48, 16), (80, 144, 48)])
def test_gemm_f16_tensor_core_f32_out(emu, M, N, K):
    rng = np.random.default_rng(3)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    C = np.full((M, N), np.nan, np.float32)  # beta == 0: C is not read
    args = struct.pack("<QQQ7qff", p(C), p(A), p(B), M, N, K, 1, 0, 0, 0, 1.0, 0.0)
    emu.kernel("gemm_f16_tc_f32").launch((-(-N // 64), -(-M // 64), 1), (128, 1, 1), args)
    ref = A.astype(np.float32) @ B.astype(np.float32)
    np.testing.assert_allclose(C, ref, rtol=1e-4, atol=1e-4)


# ---- reductions (warp shuffles, shared memory, barriers) ------------------------------------------------

def reduce_args(x, out, out_idx, outer, R, inner, so, sr, si, op):
    return struct.pack("<QQQ6qi", p(x), p(out), p(out_idx), outer, R, inner, so, sr, si, op)


@pytest.mark.parametrize("op", ["sum", "argmax"])
def test_reduce_warp_rows(emu, op):
    rng = np.random.default_rng(4)
    outer, R = 37, 300
    x = rng.standard_normal((outer, R), dtype=np.float32)
    out = np.full(outer, np.nan, np.float32)
    idx = np.full(outer, -1, np.int64)
    code = {"sum": 0, "argmax": 3}[op]
    # one warp per output, 8 warps per block; a capped grid of 3 blocks grid-strides over the 37 rows
    emu.kernel("reduce_warp_f32").launch((3, 1, 1), (256, 1, 1), reduce_args(x, out, idx, outer, R, 1, R, 1, 1, code))
    if op == "sum":
        np.testing.assert_allclose(out, x.sum(1, dtype=np.float64), rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(out, x.max(1))
        np.testing.assert_array_equal(idx, x.argmax(1))


def test_reduce_block_long_rows_max(emu):
    rng = np.random.default_rng(5)
    outer, R = 6, 5000
    x = rng.standard_normal((outer, R), dtype=np.float32)
    x[2, 1234] = 100.0
    x[2, 4000] = 100.0  # a tie: the first index wins
    out = np.full(outer, np.nan, np.float32)
    idx = np.full(outer, -1, np.int64)
    emu.kernel("reduce_block_f32").launch((4, 1, 1), (256, 1, 1), reduce_args(x, out, idx, outer, R, 1, R, 1, 1, 3))
    np.testing.assert_array_equal(out, x.max(1))
    np.testing.assert_array_equal(idx, x.argmax(1))


@pytest.mark.parametrize("log_softmax", [0, 1])
def test_softmax_fwd_block(emu, log_softmax):
    rng = np.random.default_rng(6)
    rows, cols = 100, 1000
    x = (3 * rng.standard_normal((rows, cols))).astype(np.float32)
    y = np.full_like(x, np.nan)
    emu.kernel("softmax_fwd_block_f32").launch((37, 1, 1), (256, 1, 1),
                                               struct.pack("<QQqqi", p(y), p(x), rows, cols, log_softmax))
    x64 = x.astype(np.float64)
    z = x64 - x64.max(1, keepdims=True)
    lse = np.log(np.exp(z).sum(1, keepdims=True))
    ref = z - lse if log_softmax else np.exp(z - lse)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)


# ---- atomics -------------------------------------------------------------------------------------------

def test_scatter_add_duplicate_indices(emu):
    rng = np.random.default_rng(7)
    self0 = rng.standard_normal((4, 6), dtype=np.float32)
    index = rng.integers(0, 4, size=(9, 6), dtype=np.int64)  # 9 rows into 4: duplicates in every column
    src = rng.standard_normal((9, 6), dtype=np.float32)
    dst = self0.copy()
    # IndexLayout: shape8, a_stride8 (self), b_stride8 (src), ndim, dim, a_dim_size -- all int64
    L = np.array([9, 6] + [1] * 6 + [6, 1] + [0] * 6 + [6, 1] + [0] * 6 + [2, 0, 4], np.int64).tobytes()
    assert len(L) == 216
    k = emu.kernel("scatter_add_f32")
    assert k.param_sizes == (8, 8, 8, 216, 8)
    k.launch((1, 1, 1), (256, 1, 1), struct.pack("<QQQ", p(dst), p(index), p(src)) + L + struct.pack("<q", index.size))
    ref = self0.astype(np.float64)
    np.add.at(ref, (index, np.broadcast_to(np.arange(6), index.shape)), src)
    np.testing.assert_allclose(dst, ref, rtol=1e-5, atol=1e-5)


# ---- errors --------------------------------------------------------------------------------------------

def test_wrong_argbuf_size_and_bad_launches(emu):
    k = emu.kernel("softmax_fwd_block_f32")
    assert (k.param_offsets, k.arg_bytes) == ((0, 8, 16, 24, 32), 36)
    y = np.zeros(4, np.float32)
    good = struct.pack("<QQqqi", p(y), p(y), 1, 4, 0)
    with pytest.raises(EmuError, match=r"softmax_fwd_block_f32: got 40 bytes of arguments, expected 36 "
                                       r"\(parameter offsets \[0, 8, 16, 24, 32\]"):
        k.launch((1, 1, 1), (256, 1, 1), good + b"\0" * 4)
    with pytest.raises(EmuError, match="got 35 bytes"):
        k.launch((1, 1, 1), (256, 1, 1), good[:-1])
    with pytest.raises(EmuError, match="zero"):
        k.launch((1, 0, 1), (256, 1, 1), good)
    with pytest.raises(EmuError, match="zero"):
        k.launch((1, 1, 1), (0, 1, 1), good)
    with pytest.raises(EmuError, match="__launch_bounds__"):
        k.launch((1, 1, 1), (512, 1, 1), good)
    with pytest.raises(EmuError, match="unknown kernel"):
        emu.kernel("no_such_kernel")
    k.launch((1, 1, 1), (32, 1, 1), good)  # still usable after refusals
    np.testing.assert_allclose(y, np.zeros(4) + 0.25)


def test_kernels_in_matches_the_sources(emu):
    for src in sorted(KERNEL_DIR.glob("*.cu")):
        assert emu.kernels_in(src.name) == DECL_RE.findall(src.read_text()), src.name
    assert emu.kernels_in("matmul") == ["gemm_f32", "gemm_f32_vec", "gemm_f16", "gemm_f16_tc_f16", "gemm_f16_tc_f32"]


@pytest.mark.slow
def test_every_kernel_source_builds(emu):
    """Every .cu compiles under the emulator and registers exactly its declared kernels."""
    emu.build()
    for src in emu.sources:
        for name in emu.kernels_in(src):
            k = emu.kernel(name)
            assert k.source == src
            assert len(k.param_sizes) == len(k.param_offsets) >= 1
            assert k.arg_bytes == k.param_offsets[-1] + k.param_sizes[-1]
            assert 1 <= k.max_threads <= 1024


# ---- the emulator's own rules (a test-only kernel file) --------------------------------------------------

TEST_KERNELS = r"""
// Test-only kernels for tests/test_cuda_emu.py.

extern "C" __global__ void emu_ids(unsigned* out) {
    const unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned* o = out + 6 * (b * blockDim.x * blockDim.y * blockDim.z + t);
    o[0] = blockIdx.x; o[1] = blockIdx.y; o[2] = blockIdx.z;
    o[3] = threadIdx.x; o[4] = threadIdx.y; o[5] = threadIdx.z;
}

// 2-D block of 64 threads = 2 warps of consecutive linear ids
extern "C" __global__ __launch_bounds__(64) void emu_warp_ops(unsigned* out) {
    const int t = threadIdx.x + threadIdx.y * blockDim.x;
    unsigned* o = out + 5 * t;
    o[0] = __shfl_down_sync(0xffffffffu, t, 3);
    o[1] = __shfl_xor_sync(0xffffffffu, t, 5);
    o[2] = __shfl_sync(0xffffffffu, t, 7, 16);
    o[3] = __shfl_up_sync(0xffffffffu, (long long)t * 1000000007LL, 2) / 1000000007LL;
    o[4] = __ballot_sync(0xffffffffu, (t % 3) == 0);
}

// threads that return count as arrived at later barriers
extern "C" __global__ void emu_early_exit(int* out) {
    __shared__ int s[128];
    if (threadIdx.x >= 100) return;
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[99 - threadIdx.x];
    __syncthreads();
    out[100 + threadIdx.x] = __syncthreads_count(threadIdx.x & 1);
}

// shared memory starts undefined in every block (0xFF bytes here); dynamic shared memory is the launch's
extern "C" __global__ void emu_shared_memory(unsigned* out) {
    __shared__ unsigned s[64];
    extern __shared__ __align__(16) unsigned dyn[];
    const unsigned t = threadIdx.x, b = blockIdx.x;
    out[4 * (64 * b + t) + 0] = s[t];                   // before any write: 0xFFFFFFFF, in every block
    out[4 * (64 * b + t) + 1] = dyn[t];
    __syncthreads();
    s[t] = 1000 * b + t;
    dyn[2 * t] = 2000 * b + t;
    dyn[2 * t + 1] = 3000 * b + t;
    __syncthreads();
    out[4 * (64 * b + t) + 2] = s[63 - t];
    out[4 * (64 * b + t) + 3] = dyn[127 - t];
}

// a full-mask shuffle after lane 5 returned: undefined on a GPU, an error here
extern "C" __global__ void emu_shfl_after_return(float* out) {
    if (threadIdx.x == 5) return;
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (float)threadIdx.x, 1);
}

// lane 0 waits at the block barrier while lanes 1..31 wait for it at a shuffle: never completes
extern "C" __global__ void emu_deadlock(float* out, int n) {
    float v = (float)threadIdx.x;
    if (threadIdx.x == 0) {
        __syncthreads();
    } else {
        v = __shfl_xor_sync(0xffffffffu, v, 1);
        __syncthreads();
    }
    if ((int)threadIdx.x < n) out[threadIdx.x] = v;
}
"""


@pytest.fixture(scope="module")
def test_emu(tmp_path_factory, emu):
    folder = tmp_path_factory.mktemp("emu_test_kernels")
    (folder / "emu_test.cu").write_text(TEST_KERNELS)
    e = Emulator(folder / "cache", kernel_dir=folder)
    e.build()
    return e


def test_builtin_indices(test_emu):
    grid, block = (3, 2, 2), (5, 4, 3)
    nb, nt = int(np.prod(grid)), int(np.prod(block))
    out = np.full((nb * nt, 6), 999, np.uint32)
    test_emu.kernel("emu_ids").launch(grid, block, struct.pack("<Q", p(out)))
    bz, by, bx, tz, ty, tx = np.meshgrid(*[np.arange(d) for d in (grid[2], grid[1], grid[0], block[2], block[1],
                                                                  block[0])], indexing="ij")
    ref = np.stack([a.ravel() for a in (bx, by, bz, tx, ty, tz)], axis=1)
    np.testing.assert_array_equal(out, ref)


def test_warp_shuffle_and_ballot_rules(test_emu):
    out = np.zeros((64, 5), np.uint32)
    test_emu.kernel("emu_warp_ops").launch((1, 1, 1), (16, 4, 1), struct.pack("<Q", p(out)))
    t = np.arange(64)
    lane, base = t % 32, t - t % 32
    np.testing.assert_array_equal(out[:, 0], np.where(lane + 3 < 32, t + 3, t))  # past the warp: own value
    np.testing.assert_array_equal(out[:, 1], base + (lane ^ 5))
    np.testing.assert_array_equal(out[:, 2], base + lane // 16 * 16 + 7)           # width 16 segments
    np.testing.assert_array_equal(out[:, 3], np.where(lane >= 2, t - 2, t))        # 64-bit values
    ballot = [sum(1 << l for l in range(32) if (w * 32 + l) % 3 == 0) for w in range(2)]
    np.testing.assert_array_equal(out[:, 4], np.repeat(ballot, 32))


def test_returned_threads_count_as_arrived(test_emu):
    out = np.full(200, -1, np.int32)
    test_emu.kernel("emu_early_exit").launch((1, 1, 1), (128, 1, 1), struct.pack("<Q", p(out)))
    np.testing.assert_array_equal(out[:100], 99 - np.arange(100))
    np.testing.assert_array_equal(out[100:], np.full(100, 50))


def test_deadlock_is_an_error(test_emu):
    out = np.zeros(64, np.float32)
    k = test_emu.kernel("emu_deadlock")
    assert (k.param_sizes, k.param_offsets, k.arg_bytes) == ((8, 4), (0, 8), 12)
    with pytest.raises(EmuError, match=r"emu_deadlock: deadlock in block \(0, 0, 0\) of 64 threads: 33 wait at "
                                       r"__syncthreads \(threads 0, 32-63\), 31 wait at a warp operation "
                                       r"\(threads 1-31\)"):
        k.launch((1, 1, 1), (64, 1, 1), struct.pack("<Qi", p(out), 64))
    # the library recovers: a launch that cannot deadlock (a single thread) still runs
    k.launch((1, 1, 1), (1, 1, 1), struct.pack("<Qi", p(out), 64))
    assert out[0] == 0.0


def test_shared_memory_is_fresh_in_every_block(test_emu):
    k = test_emu.kernel("emu_shared_memory")
    out = np.zeros((3, 64, 4), np.uint32)
    k.launch((3, 1, 1), (64, 1, 1), struct.pack("<Q", p(out)), shared=128 * 4)
    b, t = np.arange(3)[:, None], np.arange(64)[None, :]
    np.testing.assert_array_equal(out[..., 0], np.full((3, 64), 0xFFFFFFFF))
    np.testing.assert_array_equal(out[..., 1], np.full((3, 64), 0xFFFFFFFF))
    np.testing.assert_array_equal(out[..., 2], 1000 * b + 63 - t)
    u = 127 - t  # dyn[u]: written by thread u // 2
    np.testing.assert_array_equal(out[..., 3], np.where(u % 2 == 0, 2000, 3000) * b + u // 2)
    with pytest.raises(EmuError, match="dynamic shared memory"):
        k.launch((1, 1, 1), (64, 1, 1), struct.pack("<Q", p(out)), shared=1 << 20)


def test_warp_operation_naming_missing_lanes_is_an_error(test_emu):
    out = np.zeros(64, np.float32)
    with pytest.raises(EmuError, match=r"emu_shfl_after_return: thread 5 \(warp 0, lane 5\) of block \(0, 0, 0\) "
                                       r"returned while lanes 0x0000001f of its warp wait for it"):
        test_emu.kernel("emu_shfl_after_return").launch((1, 1, 1), (64, 1, 1), struct.pack("<Q", p(out)))
    # a partial warp (48 threads: lanes 16-31 of warp 1 do not exist) with a full mask
    out = np.zeros((48, 5), np.uint32)
    with pytest.raises(EmuError, match=r"thread 32 \(warp 1, lane 0\).*mask 0xffffffff.*live lanes 0x0000ffff, "
                                       r"block of 48 threads"):
        test_emu.kernel("emu_warp_ops").launch((1, 1, 1), (16, 3, 1), struct.pack("<Q", p(out)))
