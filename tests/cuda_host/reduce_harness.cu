// Host checks for reduce.cu, built as a shared library for tests/test_kernels_host_reduce.py (ctypes).
//
// reduce_cols_* is emulated exactly (its threads are independent: red_cols_body runs for every tid).
// For the cooperating kernels (warp / block / two-pass) the per-thread pieces are the kernels' own
// (red_accumulate, red_combine, red_identity, red_base, red_chunk_range, red_write), while the
// __shfl_down_sync tree and the shared-memory step are RE-IMPLEMENTED here with the same structure
// (lane l takes lane l + off's value, or its own where l + off >= 32; warp leaders through "shared
// memory"; warp 0 combines them). So this checks the reduction order and combine semantics, not the
// device shuffle code itself, which only a GPU run verifies.
#include "reduce.cuh"

namespace {

template <int OP>
void warp_tree(RedAcc* lanes) {  // lanes[0] ends with the warp's result, like red_warp_reduce
    for (int off = 16; off > 0; off >>= 1) {
        RedAcc next[32];
        for (int l = 0; l < 32; ++l) next[l] = red_combine<OP>(lanes[l], lanes[l + off < 32 ? l + off : l]);
        for (int l = 0; l < 32; ++l) lanes[l] = next[l];
    }
}

template <int OP, typename T>
RedAcc block_reduce(const T* x, long long base, long long sr, long long r0, long long r1, int nthreads) {
    RedAcc acc[256];
    for (int t = 0; t < nthreads; ++t) acc[t] = red_accumulate<OP, T>(x, base, sr, r0 + t, r1, nthreads, red_identity<OP>());
    const int nwarps = nthreads / 32;
    RedAcc smem[32];
    for (int w = 0; w < nwarps; ++w) {
        warp_tree<OP>(acc + 32 * w);
        smem[w] = acc[32 * w];
    }
    RedAcc lanes[32];
    for (int l = 0; l < 32; ++l) lanes[l] = l < nwarps ? smem[l] : red_identity<OP>();
    warp_tree<OP>(lanes);
    return lanes[0];
}

template <int OP, typename T>
void run(int kind, long long nth, const T* x, T* out, long long* out_idx, long long outer, long long R,
         long long inner, long long so, long long sr, long long si, long long chunk, int block_threads) {
    const long long nout = outer * inner;
    if (kind == 0) {  // reduce_cols: exact emulation
        for (long long tid = 0; tid < nth; ++tid) red_cols_body<OP, T>(tid, nth, x, out, out_idx, outer, R, inner, so, sr, si);
    } else if (kind == 1) {  // reduce_warp
        for (long long j = 0; j < nout; ++j) {
            RedAcc lanes[32];
            for (int l = 0; l < 32; ++l)
                lanes[l] = red_accumulate<OP, T>(x, red_base(j, inner, so, si), sr, l, R, 32, red_identity<OP>());
            warp_tree<OP>(lanes);
            red_write<OP, T>(out, out_idx, j, lanes[0]);
        }
    } else if (kind == 2) {  // reduce_block
        for (long long j = 0; j < nout; ++j)
            red_write<OP, T>(out, out_idx, j, block_reduce<OP, T>(x, red_base(j, inner, so, si), sr, 0, R, block_threads));
    } else {  // reduce_partial + reduce_finish
        const long long nchunks = (R + chunk - 1) / chunk;
        float* pv = new float[nout * nchunks];
        long long* pi = new long long[nout * nchunks];
        for (long long b = 0; b < nout * nchunks; ++b) {
            const long long j = b / nchunks;
            long long r0, r1;
            red_chunk_range(b - j * nchunks, chunk, R, r0, r1);
            const RedAcc a = block_reduce<OP, T>(x, red_base(j, inner, so, si), sr, r0, r1, block_threads);
            pv[b] = a.v;
            pi[b] = a.i;
        }
        for (long long j = 0; j < nout; ++j) {
            RedAcc lanes[32];
            for (int l = 0; l < 32; ++l) {
                lanes[l] = red_identity<OP>();
                for (long long c = l; c < nchunks; c += 32)
                    lanes[l] = red_combine<OP>(lanes[l], RedAcc{pv[j * nchunks + c], OP == RED_SUM ? 0 : pi[j * nchunks + c]});
            }
            warp_tree<OP>(lanes);
            red_write<OP, T>(out, out_idx, j, lanes[0]);
        }
        delete[] pv;
        delete[] pi;
    }
}

template <typename T>
int run_op(int op, int kind, long long nth, const void* x, void* out, long long* out_idx, long long outer, long long R,
           long long inner, long long so, long long sr, long long si, long long chunk, int block_threads) {
    switch (op) {
        case RED_SUM: run<RED_SUM, T>(kind, nth, (const T*)x, (T*)out, out_idx, outer, R, inner, so, sr, si, chunk, block_threads); return 0;
        case RED_MAX: case RED_ARGMAX: run<RED_MAX, T>(kind, nth, (const T*)x, (T*)out, out_idx, outer, R, inner, so, sr, si, chunk, block_threads); return 0;
        case RED_MIN: case RED_ARGMIN: run<RED_MIN, T>(kind, nth, (const T*)x, (T*)out, out_idx, outer, R, inner, so, sr, si, chunk, block_threads); return 0;
        default: return -1;
    }
}

}  // namespace

// kind: 0 cols, 1 warp, 2 block, 3 two-pass. dt: 0 f32, 1 f16. `x` points at element (0, 0, 0).
extern "C" int emu_reduce(int dt, int kind, int op, long long nth, const void* x, void* out, long long* out_idx,
                          long long outer, long long R, long long inner, long long so, long long sr, long long si,
                          long long chunk, int block_threads) {
    if (block_threads < 32 || block_threads > 256 || block_threads % 32 != 0) return -2;
    if (dt == 0) return run_op<float>(op, kind, nth, x, out, out_idx, outer, R, inner, so, sr, si, chunk, block_threads);
    if (dt == 1) return run_op<__half>(op, kind, nth, x, out, out_idx, outer, R, inner, so, sr, si, chunk, block_threads);
    return -1;
}

extern "C" void emu_combine(int op, float va, long long ia, float vb, long long ib, float* v, long long* i) {
    RedAcc r{};
    const RedAcc a{va, ia}, b{vb, ib};
    if (op == RED_SUM) r = red_combine<RED_SUM>(a, b);
    if (op == RED_MAX) r = red_combine<RED_MAX>(a, b);
    if (op == RED_MIN) r = red_combine<RED_MIN>(a, b);
    *v = r.v;
    *i = r.i;
}

extern "C" long long emu_base(long long j, long long inner, long long so, long long si) { return red_base(j, inner, so, si); }
