"""A learner's kernel on ``cuda-emu`` runs checked: its mistakes come back in its own words, and
``tl.cuda.trace()`` records what its threads did.

Every expectation here is worked out from the kernel's source by hand (which element a thread touches, which
bank a shared address falls in, how many sectors a warp's addresses span), never read back from the checker.
"""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pytest
from conftest import emu_kernel_file

import tinygrad_like as tl

pytestmark = pytest.mark.cuda

KERNELS = r"""
extern "C" __global__ __launch_bounds__(256) void scale_le(float* out, const float* x, float a, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i <= n) out[i] = a * x[i];
}
extern "C" __global__ __launch_bounds__(256) void shift_left(float* out, const float* x, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i - 1];
}
extern "C" __global__ __launch_bounds__(256) void far_write(float* out, long long n, long long at) {
    if (threadIdx.x == 5) out[at] = 1.0f;
}
extern "C" __global__ __launch_bounds__(256) void dyn_shared(float* out, long long n) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x];
}
extern "C" __global__ __launch_bounds__(256) void reverse_racy(float* out, const float* x, long long n) {
    __shared__ float tile[256];
    int t = threadIdx.x;
    long long i = blockIdx.x * 256LL + t;
    tile[t] = x[i];
    out[i] = tile[255 - t];
}
extern "C" __global__ __launch_bounds__(256) void reverse(float* out, const float* x, long long n) {
    __shared__ float tile[256];
    int t = threadIdx.x;
    long long i = blockIdx.x * 256LL + t;
    tile[t] = x[i];
    __syncthreads();
    out[i] = tile[255 - t];
}
extern "C" __global__ __launch_bounds__(256) void histogram4(int* h, const int* x, long long n) {
    __shared__ int cnt[4];
    if (threadIdx.x < 4) cnt[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&cnt[x[blockIdx.x * 256LL + threadIdx.x] & 3], 1);
    __syncthreads();
    if (threadIdx.x < 4) atomicAdd(&h[threadIdx.x], cnt[threadIdx.x]);
}
extern "C" __global__ __launch_bounds__(32) void pair_swap(float* out, int sync) {
    __shared__ float s[32];
    int t = threadIdx.x;
    s[t] = (float)t;
    if (sync) __syncwarp();
    out[t] = s[t ^ 1];
}
extern "C" __global__ __launch_bounds__(256) void grid_stride(float* out, const float* x, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = 2.0f * x[i];
}
extern "C" __global__ __launch_bounds__(256) void gather_strided(float* out, const float* x, long long n,
                                                                 long long stride) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i * stride];
}
extern "C" __global__ __launch_bounds__(256) void copy4(float* out, const float* x, long long n4) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n4) reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(x)[i];
}
extern "C" __global__ __launch_bounds__(1024) void transpose32(float* out, const float* x, int pad) {
    __shared__ float tile[32 * 33];
    const int w = 32 + pad;
    int tx = threadIdx.x, ty = threadIdx.y;
    tile[ty * w + tx] = x[ty * 32 + tx];
    __syncthreads();
    out[ty * 32 + tx] = tile[tx * w + ty];
}
extern "C" __global__ __launch_bounds__(256) void block_sum(float* out, const float* x, long long n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    long long i = blockIdx.x * 256LL + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int half = 128; half > 0; half >>= 1) {
        if (t < half) s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
"""


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    return emu_kernel_file(tmp_path_factory, "lesson.cu", KERNELS)


def emu(a, dtype=np.float32):
    return tl.tensor(np.asarray(a, dtype)).to("cuda-emu")


def kernel(src, name):
    return tl.cuda.Kernel(src, name)


def line_of(src, text: str) -> int:
    return next(i for i, line in enumerate(src.read_text().splitlines(), 1) if text in line)


# ---- out of bounds -----------------------------------------------------------------------------------------

def test_reading_one_past_the_end_names_the_thread_the_element_and_the_line(src):
    x, out = emu(np.arange(1000)), emu(np.zeros(1000))
    v0 = out._version
    with pytest.raises(tl.cuda.OutOfBoundsError) as e:
        kernel(src, "scale_le")((4,), (256,), out, x, 2.0, 1000)
    msg = str(e.value)
    # i = 3 * 256 + 232 = 1000 is the first thread past the end: blockIdx 3, threadIdx 232
    assert "threadIdx (232, 0, 0) of blockIdx (3, 0, 0)" in msg
    assert "read 4 bytes at element 1,000 of `x` (float32, 1,000 elements" in msg
    assert f"lesson.cu:{line_of(src, 'if (i <= n)')}" in msg and "`<=`" in msg
    assert isinstance(e.value, tl.cuda.KernelError) and isinstance(e.value, RuntimeError)
    # blocks 0-2 ran before: their elements were written, and the tensor counts as written
    np.testing.assert_array_equal(out.cpu().numpy()[:768], 2.0 * np.arange(768))
    assert out._version > v0


def test_reading_before_the_start_says_so(src):
    with pytest.raises(tl.cuda.OutOfBoundsError, match=r"element -1 of `x`.*1 before its start"):
        kernel(src, "shift_left")((1,), (256,), emu(np.zeros(100)), emu(np.arange(100)), 100)


def test_a_write_far_past_the_end_stops_before_it_is_made(src):
    out = emu(np.zeros(64))
    other = emu(np.arange(64))  # (its memory may lie past out's: a wild write must not reach it)
    with pytest.raises(tl.cuda.OutOfBoundsError, match=r"threadIdx \(5, 0, 0\).*wrote 4 bytes at element 1,000 of "
                                                      r"`out`.*937 elements past its last one.*far out"):
        kernel(src, "far_write")((1,), (32,), out, 64, 1000)
    np.testing.assert_array_equal(other.cpu().numpy(), np.arange(64))
    np.testing.assert_array_equal(out.cpu().numpy(), np.zeros(64))


def test_dynamic_shared_memory_past_what_the_launch_gave(src):
    out = emu(np.zeros(64))
    kernel(src, "dyn_shared")((1,), (64,), out, 64, shared=64 * 4)
    np.testing.assert_array_equal(out.cpu().numpy(), np.ones(64))
    with pytest.raises(tl.cuda.OutOfBoundsError, match=r"byte 128 of the dynamic shared memory.*gave it 128 bytes"):
        kernel(src, "dyn_shared")((1,), (64,), out, 64, shared=32 * 4)


# ---- races ---------------------------------------------------------------------------------------------------

def test_a_missing_syncthreads_is_a_race_named_by_variable_threads_and_lines(src):
    x, out = emu(np.arange(512)), emu(np.zeros(512))
    with pytest.raises(tl.cuda.SharedMemoryRaceError) as e:
        kernel(src, "reverse_racy")((2,), (256,), out, x, 512)
    msg = str(e.value)
    # thread 127 reads tile[255 - 127] = tile[128] before thread 128 (which runs later) writes it
    assert "blockIdx (0, 0, 0)" in msg and "`tile`[128]" in msg
    assert "threadIdx (127, 0, 0) read" in msg and "threadIdx (128, 0, 0) wrote" in msg
    assert f"lesson.cu:{line_of(src, 'out[i] = tile[255 - t];')}" in msg
    assert "before the first __syncthreads()" in msg and "Put __syncthreads()" in msg
    fixed = emu(np.zeros(512))
    kernel(src, "reverse")((2,), (256,), fixed, x, 512)
    want = np.concatenate([np.arange(255, -1, -1), np.arange(511, 255, -1)])
    np.testing.assert_array_equal(fixed.cpu().numpy(), want)


def test_atomics_on_shared_memory_are_no_race(src):
    x = emu(np.arange(512), np.int32)
    h = emu(np.zeros(4), np.int32)
    kernel(src, "histogram4")((2,), (256,), h, x, 512)
    np.testing.assert_array_equal(h.cpu().numpy(), [128, 128, 128, 128])


def test_syncwarp_orders_the_lanes_of_one_warp(src):
    out = emu(np.zeros(32))
    kernel(src, "pair_swap")((1,), (32,), out, 1)
    np.testing.assert_array_equal(out.cpu().numpy(), np.arange(32) ^ 1)
    with pytest.raises(tl.cuda.SharedMemoryRaceError, match=r"`s`\[1\]"):
        kernel(src, "pair_swap")((1,), (32,), out, 0)


# ---- compile errors ------------------------------------------------------------------------------------------

def test_a_compile_error_shows_the_learners_file_and_line(src, tmp_path):
    bad = tmp_path / "typo.cu"
    bad.write_text(textwrap.dedent("""\
        extern "C" __global__ __launch_bounds__(256) void add1(float* out, long long n) {
            long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
            if (i < n) out[idx] += 1.0f;
        }
        """))
    with pytest.raises(tl.cuda.KernelCompileError) as e:
        kernel(bad, "add1")((1,), (32,), emu(np.zeros(8)), 8)
    msg = str(e.value)
    assert msg.startswith("typo.cu did not compile")
    assert "typo.cu:3:" in msg and "idx" in msg and "3 | if (i < n) out[idx] += 1.0f;" in msg
    assert ".build-" not in msg and "cuda_emu.h" not in msg  # (no path of the emulator's own)


# ---- traces -----------------------------------------------------------------------------------------------

def test_a_trace_knows_who_wrote_each_element_of_a_grid_stride_loop(src):
    n = 3000
    x, out = emu(np.arange(n)), emu(np.zeros(n))
    with tl.cuda.trace() as tr:
        kernel(src, "grid_stride")((4,), (128,), out, x, n)
    (t,) = tr.launches
    np.testing.assert_array_equal(out.cpu().numpy(), 2.0 * np.arange(n))
    assert (t.grid, t.block, t.num_threads, t.warps_per_block) == ((4, 1, 1), (128, 1, 1), 512, 4)
    i = np.arange(n)
    np.testing.assert_array_equal(t.owner("out", "thread"), i % 512)  # thread g takes g, g + 512, ...
    np.testing.assert_array_equal(t.owner("out", "block"), (i % 512) // 128)
    np.testing.assert_array_equal(t.owner("out", "warp"), (i % 512) // 32)
    assert t.outputs == ["out"]
    np.testing.assert_array_equal(t.written_by(1, 3)["out"], np.arange(128 + 3, n, 512))
    (load,) = [s for s in t.sites if s.kind == "read"]
    assert (load.space, load.buffer, load.verdict, load.stride) == ("global", "x", "coalesced", 4)
    assert load.line == line_of(src, "out[i] = 2.0f * x[i];")


@pytest.mark.parametrize("stride, sectors", [(1, 4), (2, 8), (8, 32), (64, 32)])
def test_sectors_per_warp_request_follow_the_stride(src, stride, sectors):
    # 32 lanes reading floats `stride` apart span 32 * 4 * stride bytes: ceil(that / 32) sectors, at most 32
    n = 256
    x, out = emu(np.arange(n * stride)), emu(np.zeros(n))
    with tl.cuda.trace() as tr:
        kernel(src, "gather_strided")((1,), (256,), out, x, n, stride)
    (load,) = [s for s in tr[0].sites if s.kind == "read"]
    (store,) = [s for s in tr[0].sites if s.kind == "write"]
    assert (load.requests, load.sectors_per_request) == (8, sectors)
    assert store.sectors_per_request == 4 and store.verdict == "coalesced"
    assert load.verdict == ("coalesced" if stride == 1 else "uncoalesced")
    if stride > 1:
        assert f"{4 * stride} bytes apart" in load.explanation and "threadIdx.x" in load.explanation


def test_a_float4_copy_is_one_16_byte_access_per_thread(src):
    x, out = emu(np.arange(1024)), emu(np.zeros(1024))
    with tl.cuda.trace() as tr:
        kernel(src, "copy4")((1,), (256,), out, x, 256)
    np.testing.assert_array_equal(out.cpu().numpy(), np.arange(1024))
    for s in tr[0].sites:  # 32 lanes * 16 bytes = 512 bytes = 16 sectors, all used
        assert (s.access_size, s.sectors_per_request, s.verdict) == (16, 16, "coalesced")


@pytest.mark.parametrize("pad, degree", [(0, 32), (1, 1)])
def test_bank_conflicts_of_a_column_read_and_the_padding_fix(src, pad, degree):
    x, out = emu(np.arange(1024)), emu(np.zeros(1024))
    with tl.cuda.trace() as tr:
        kernel(src, "transpose32")((1,), (32, 32), out, x, pad)
    np.testing.assert_array_equal(out.cpu().numpy().reshape(32, 32), np.arange(1024).reshape(32, 32).T)
    t = tr[0]
    row_write, = [s for s in t.sites if s.space == "shared" and s.kind == "write"]
    col_read, = [s for s in t.sites if s.space == "shared" and s.kind == "read"]
    assert row_write.conflict_degree == 1  # lanes tx = 0..31 write consecutive words: 32 banks
    # lanes read tile[tx * w + ty]: words w apart; w = 32 puts all 32 in one bank, w = 33 in 32 banks
    assert col_read.conflict_degree == degree
    assert col_read.stride == 4 * (32 + pad)
    if degree > 1:
        assert col_read.verdict == "32-way bank conflict" and "tile[32][33]" in col_read.explanation


def test_barrier_phases_of_a_block_reduction(src):
    n = 512
    x, out = emu(np.arange(n)), emu(np.zeros(2))
    with tl.cuda.trace(block=1) as tr:
        kernel(src, "block_sum")((2,), (256,), out, x, n)
    np.testing.assert_array_equal(out.cpu().numpy(), [np.arange(256).sum(), np.arange(256, 512).sum()])
    t = tr[0]
    assert t.traced_block == 1
    assert t.phases == 1 + 1 + 8  # the load's barrier, then one per halving (128, 64, ..., 1)
    assert t.shared_layout == [("s", 0, 1024)]
    for p in range(t.phases):
        writes = t.phase_accesses(p, "shared")
        writes = writes[writes["kind"] == 1]
        cells = np.sort(t.shared_offsets(writes) // 4)
        want = np.arange(256) if p == 0 else (np.arange(256 >> p) if p < 9 else np.zeros(0))
        np.testing.assert_array_equal(cells, want, err_msg=f"phase {p}")
        np.testing.assert_array_equal(np.sort(writes["thread"]), want)  # thread t writes s[t]
    # the last phase reads s[0] (thread 0) and writes out[1]
    last = t.phase_accesses(t.phases - 1, "global")
    assert list(zip(last["thread"], last["kind"], last["offset"])) == [(0, 1, 4)]


def test_kernels_of_ours_run_checked_and_traced_inside_a_trace_only(src):
    dev = tl.device("cuda-emu")
    drv = dev.raw_backend.rt.drv
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 40)).astype(np.float32)
    plain = tl.tensor(a).to("cuda-emu").softmax(-1).cpu().numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tl.cuda.trace() as tr:
            traced = tl.tensor(a).to("cuda-emu").softmax(-1)
    np.testing.assert_array_equal(traced.cpu().numpy(), plain)
    (t,) = [t for t in tr.launches if t.kernel.startswith("softmax")]
    assert t.race is None and t.outputs == ["y"], t.outputs
    owner = t.owner(t.outputs[0], "block")
    # the buffer ends where the tensor does (the pool's block is larger), and a block wrote every element
    assert len(owner) == 16 * 40 and (owner >= 0).all()
    assert drv._checked_ours is not None
    n_before = len(tr)
    tl.tensor(a).to("cuda-emu").softmax(-1)  # outside the trace: nothing recorded
    assert len(tr) == n_before


def test_trace_arguments_are_checked():
    with pytest.raises(ValueError, match="block must be a blockIdx"):
        tl.cuda.trace(block=-1)
    with pytest.raises(ValueError, match="max_launches must be a positive int"):
        tl.cuda.trace(max_launches=0)


def test_a_race_inside_a_trace_is_recorded_and_warned(src):
    x, out = emu(np.arange(256)), emu(np.zeros(256))
    with pytest.warns(RuntimeWarning, match="shared-memory race"), tl.cuda.trace() as tr:
        kernel(src, "reverse_racy")((1,), (256,), out, x, 256)
    assert "`tile`[128]" in tr[0].race


def test_a_barrier_half_a_warp_skips_is_a_deadlock_at_its_line(src, tmp_path):
    f = tmp_path / "stuck.cu"
    f.write_text(textwrap.dedent("""\
        extern "C" __global__ __launch_bounds__(256) void stuck(float* out, long long n) {
            float v = (float)threadIdx.x;
            if (threadIdx.x < 16) {
                __syncthreads();
            }
            v = __shfl_down_sync(0xffffffffu, v, 1);
            out[threadIdx.x] = v;
        }
        """))
    with pytest.raises(tl.cuda.KernelDeadlockError) as e:
        tl.cuda.Kernel(f, "stuck")((1,), (32,), emu(np.zeros(32)), 32)
    msg = str(e.value)
    # lanes 0-15 wait at the barrier for lanes 16-31, which wait at the shuffle for lanes 0-15
    assert "16 wait at __syncthreads (threads 0-15)" in msg and "16 wait at a warp operation (threads 16-31)" in msg
    assert "stuck.cu:4: `__syncthreads();`" in msg and "every thread of the block" in msg


# ---- the review's cases: overlapping arguments, barriers between pieces, wild addresses, memcpy, shuffles --------

EDGE_KERNELS = r"""
extern "C" __global__ __launch_bounds__(256) void sum_with_slice(float* out, const float* x, const float* part,
                                                                long long n) {
    int t = threadIdx.x;
    if (t < n) out[t] = x[t] + part[t % 3];
}
extern "C" __global__ __launch_bounds__(256) void pairs_across_barrier(float* out, const float* x) {
    int t = threadIdx.x;
    float a = x[2 * t];
    __syncthreads();
    float b = x[2 * t + 1];
    out[t] = a + b;
}
extern "C" __global__ __launch_bounds__(256) void pairs_two_lines(float* out, const float* x) {
    int t = threadIdx.x;
    float a = x[2 * t];
    float b = x[2 * t + 1];
    out[t] = a + b;
}
extern "C" __global__ __launch_bounds__(256) void sum4_fields(float* out, const float* x) {
    int t = threadIdx.x;
    const float4 v = reinterpret_cast<const float4*>(x)[t];
    out[t] = v.x + v.y + v.z + v.w;
}
extern "C" __global__ __launch_bounds__(256) void wild(float* out, long long at) {
    if (threadIdx.x == 0) out[at] = 1.0f;
}
extern "C" __global__ __launch_bounds__(64) void memcpy_race(float* out, const float* x) {
    __shared__ float s[64];
    if (threadIdx.x == 0) memcpy(s, x, sizeof s);
    out[threadIdx.x] = s[threadIdx.x];
}
extern "C" __global__ __launch_bounds__(64) void memcpy_past(float* out, const float* x, long long n) {
    if (threadIdx.x == 0) memcpy(out, x, (n + 1) * sizeof(float));
}
extern "C" __global__ __launch_bounds__(32) void shuffle_is_no_barrier(float* out) {
    __shared__ float s[32];
    int t = threadIdx.x;
    s[t] = (float)t;
    float v = __shfl_xor_sync(0xffffffffu, (float)t, 1);
    out[t] = s[t ^ 1] + 0.0f * v;
}
"""


@pytest.fixture(scope="module")
def edge(src):
    path = src.parent / "edge.cu"
    path.write_text(EDGE_KERNELS)
    return path


def test_a_slice_passed_beside_its_tensor_is_no_out_of_bounds(edge):
    x = emu(np.arange(10))
    out = emu(np.zeros(10))
    tl.cuda.Kernel(edge, "sum_with_slice")((1,), (32,), out, x, x[2:5], 10)
    np.testing.assert_array_equal(out.cpu().numpy(), np.arange(10) + 2 + np.arange(10) % 3)


def test_pieces_of_a_vector_copy_merge_but_two_loads_do_not(edge):
    x, out = emu(np.arange(512)), emu(np.zeros(256))
    with tl.cuda.trace() as tr:
        tl.cuda.Kernel(edge, "pairs_across_barrier")((1,), (256,), out, x)
        tl.cuda.Kernel(edge, "pairs_two_lines")((1,), (256,), out, x)
        tl.cuda.Kernel(edge, "sum4_fields")((1,), (64,), emu(np.zeros(64)), emu(np.arange(256)))
    across, two_lines, fields = tr.launches
    for t in (across, two_lines):
        reads = sorted((s.line, s.access_size, s.sectors_per_request, s.verdict) for s in t.sites if s.kind == "read")
        # x[2t] and x[2t + 1], each on its own line: a warp's 32 four-byte loads 8 bytes apart span 8 sectors
        assert [r[1:] for r in reads] == [(4, 8.0, "uncoalesced")] * 2, reads
        assert reads[0][0] != reads[1][0]
        (store,) = [s for s in t.sites if s.kind == "write"]
        assert (store.access_size, store.sectors_per_request) == (4, 4.0)
    assert across.phases == 2
    log = across.log[(across.log["space"] == 0) & (across.log["kind"] == 1)]
    assert set(log["size"]) == {4}  # (the stores keep their own size: no other thread's entry was patched)
    # one line reads a float4 and uses its fields: the compiler splits the copy, the trace puts it back together
    (read,) = [s for s in fields.sites if s.kind == "read"]
    assert (read.access_size, read.sectors_per_request, read.verdict) == (16, 16.0, "coalesced")


def test_a_wild_write_far_from_every_tensor_stops_the_launch(edge):
    out = emu(np.zeros(16))
    with pytest.raises(tl.cuda.OutOfBoundsError, match=r"element 100,000,000 of `out`.*far out"):
        tl.cuda.Kernel(edge, "wild")((1,), (32,), out, 100_000_000)
    with pytest.raises(tl.cuda.OutOfBoundsError, match=r"element -50,000,000 of `out`"):
        tl.cuda.Kernel(edge, "wild")((1,), (32,), out, -50_000_000)
    np.testing.assert_array_equal(out.cpu().numpy(), np.zeros(16))


def test_memcpy_is_checked_like_any_access(edge):
    x, out = emu(np.arange(64)), emu(np.zeros(64))
    with pytest.raises(tl.cuda.SharedMemoryRaceError, match=r"`s`\[\d+\]"):
        tl.cuda.Kernel(edge, "memcpy_race")((1,), (64,), out, x)
    # (the copy's source is checked first: 65 floats from a tensor of 64)
    with pytest.raises(tl.cuda.OutOfBoundsError, match=r"read 260 bytes at element 0 of `x`.*covers elements 0 to "
                                                      r"64, past the end.*memcpy"):
        tl.cuda.Kernel(edge, "memcpy_past")((1,), (64,), out, x, 64)


def test_a_shuffle_does_not_order_shared_memory(edge):
    # only __syncwarp orders the lanes' accesses (test_syncwarp_orders_the_lanes_of_one_warp): a shuffle does not
    with pytest.raises(tl.cuda.SharedMemoryRaceError, match=r"`s`\[\d+\].*one warp: __syncwarp\(\)"):
        tl.cuda.Kernel(edge, "shuffle_is_no_barrier")((1,), (32,), emu(np.zeros(32)))


def test_trace_refuses_what_is_not_a_block_index_and_names_unwritten_arguments(edge):
    for bad in (1.5, (1, 2, 3, 4), "0", (True,), -1):
        with pytest.raises(ValueError, match="block must be a blockIdx"):
            tl.cuda.trace(block=bad)
    with tl.cuda.trace(max_launches=1) as tr:
        tl.cuda.Kernel(edge, "pairs_two_lines")((1,), (32,), emu(np.zeros(32)), emu(np.arange(64)))
        tl.cuda.Kernel(edge, "pairs_two_lines")((1,), (32,), emu(np.zeros(32)), emu(np.arange(64)))
    assert (len(tr), tr.skipped) == (1, 1)
    with pytest.raises(KeyError, match="'x' is const"):
        tr[0].owner("x")
    with pytest.raises(KeyError, match="no pointer argument 'nope'"):
        tr[0].owner("nope")
