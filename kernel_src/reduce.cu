// reduce.cu -- sum / max / min / argmax / argmin of x[outer, R, inner] over R (see reduce.cuh for the
// view, the op codes REDUCE_OPS, NaN/tie semantics and what the host composes: mean, var).
//
// Common arguments
//   x            input, element (o, r, i) at x[o*so + r*sr + i*si] (strides in elements, any sign)
//   out          values, contiguous [outer * inner] of the input dtype (j = o * inner + i); may be null
//                for argmax/argmin
//   out_idx      int64 indices along R (max/min/argmax/argmin), contiguous [outer * inner]; may be null
//   outer, R, inner, so, sr, si   the view (R >= 1 for max/min, see reduce.cuh)
//   op           0 sum, 1 max, 2 min, 3 argmax (= max), 4 argmin (= min)
// Every kernel: block = 256 threads exactly (__launch_bounds__(256); any multiple of 32 up to 256 also
// works), 1-D grid, no dynamic shared memory (reduce_block/partial use 512 B of static shared memory).
// Grid-stride over outputs, so the host may cap the grid. dtypes: _f32, _f16 (float accumulation).
//
// Which kernel (nout = outer * inner):
//   reduce_cols_<dt>(x, out, out_idx, outer, R, inner, so, sr, si, op)
//       One THREAD per output, sequential over R. For inner > 1 with si == 1 (reducing a leading or
//       middle axis; coalesced), or for very short rows. Grid = ceil(nout / 256).
//   reduce_warp_<dt>(x, out, out_idx, outer, R, inner, so, sr, si, op)
//       One WARP per output, lanes stride over R, shuffle tree. Short rows (R up to ~1024) with sr == 1.
//       Grid = ceil(nout / 8) (8 warps per 256-thread block), capped as you like.
//   reduce_block_<dt>(x, out, out_idx, outer, R, inner, so, sr, si, op)
//       One BLOCK per output, threads stride over R, warp shuffles + shared memory across the 8 warps.
//       Long rows (R > ~1024) with sr == 1. Grid = min(nout, some cap).
//   Two-pass, for very long rows and few outputs (e.g. a full reduction, nout * R large, nout small):
//   reduce_partial_<dt>(x, part_val, part_idx, outer, R, inner, so, sr, si, chunk, nchunks, op)
//       float* part_val, long long* part_idx [nout * nchunks] (part_idx may be null for sum).
//       Block b = j * nchunks + c reduces chunk c (r in [c*chunk, min(R, (c+1)*chunk))) of output j;
//       nchunks = ceil(R / chunk), chunk e.g. 8192-65536. Grid = min(nout * nchunks, cap).
//   reduce_finish_<dt>(part_val, part_idx, out, out_idx, nout, nchunks, op)
//       const float* part_val, const long long* part_idx (null for sum); one warp per output j combines
//       its nchunks partials (indices are already positions along R). Grid = ceil(nout / 8).
//
// Only reduce_cols runs threads that never cooperate; the warp/block/partial/finish trees are verified
// on a GPU only (their per-thread loop and combine rule are host-tested, see reduce.cuh).

#include <cuda_fp16.h>

#include "reduce.cuh"


// Lane 0 ends with the combination of the 32 lanes' accumulators (every lane must be active).
template <int OP>
__device__ inline RedAcc red_warp_reduce(RedAcc acc) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        RedAcc other;
        other.v = __shfl_down_sync(0xffffffffu, acc.v, off);
        if constexpr (OP != RED_SUM) {
            other.i = __shfl_down_sync(0xffffffffu, acc.i, off);
        } else {
            other.i = 0;
        }
        acc = red_combine<OP>(acc, other);
    }
    return acc;
}

// Whole block reduces r in [r0, r1) of the row at `base`; thread 0 returns the result. Ends with a
// barrier, so the caller may loop (the shared array is reused).
template <int OP, typename T>
__device__ inline RedAcc red_block_reduce(const T* __restrict__ x, long long base, long long sr, long long r0,
                                          long long r1) {
    __shared__ RedAcc smem[32];
    RedAcc acc = red_accumulate<OP, T>(x, base, sr, r0 + threadIdx.x, r1, blockDim.x, red_identity<OP>());
    acc = red_warp_reduce<OP>(acc);
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int warp = threadIdx.x >> 5;
    if (lane == 0) smem[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (blockDim.x >> 5) ? smem[lane] : red_identity<OP>();
        acc = red_warp_reduce<OP>(acc);
    }
    __syncthreads();
    return acc;
}

template <int OP, typename T>
__device__ inline void red_block_kernel(const T* __restrict__ x, T* out, long long* out_idx, long long outer,
                                        long long R, long long inner, long long so, long long sr, long long si) {
    const long long nout = outer * inner;
    for (long long j = blockIdx.x; j < nout; j += gridDim.x) {
        const RedAcc acc = red_block_reduce<OP, T>(x, red_base(j, inner, so, si), sr, 0, R);
        if (threadIdx.x == 0) red_write<OP, T>(out, out_idx, j, acc);
    }
}

template <int OP, typename T>
__device__ inline void red_warp_kernel(const T* __restrict__ x, T* out, long long* out_idx, long long outer,
                                       long long R, long long inner, long long so, long long sr, long long si) {
    const long long nout = outer * inner;
    const unsigned int lane = threadIdx.x & 31u;
    const long long warps_per_block = blockDim.x >> 5;
    const long long first = (long long)blockIdx.x * warps_per_block + (threadIdx.x >> 5);
    const long long step = (long long)gridDim.x * warps_per_block;
    for (long long j = first; j < nout; j += step) {  // uniform within a warp
        RedAcc acc = red_accumulate<OP, T>(x, red_base(j, inner, so, si), sr, lane, R, 32, red_identity<OP>());
        acc = red_warp_reduce<OP>(acc);
        if (lane == 0) red_write<OP, T>(out, out_idx, j, acc);
    }
}

template <int OP, typename T>
__device__ inline void red_partial_kernel(const T* __restrict__ x, float* part_val, long long* part_idx,
                                          long long outer, long long R, long long inner, long long so,
                                          long long sr, long long si, long long chunk, long long nchunks) {
    const long long nblk = outer * inner * nchunks;
    for (long long b = blockIdx.x; b < nblk; b += gridDim.x) {
        const long long j = b / nchunks;
        long long r0, r1;
        red_chunk_range(b - j * nchunks, chunk, R, r0, r1);
        const RedAcc acc = red_block_reduce<OP, T>(x, red_base(j, inner, so, si), sr, r0, r1);
        if (threadIdx.x == 0) {
            part_val[b] = acc.v;
            if (OP != RED_SUM && part_idx != nullptr) part_idx[b] = acc.i;
        }
    }
}

template <int OP, typename T>
__device__ inline void red_finish_kernel(const float* __restrict__ part_val, const long long* __restrict__ part_idx,
                                         T* out, long long* out_idx, long long nout, long long nchunks) {
    const unsigned int lane = threadIdx.x & 31u;
    const long long warps_per_block = blockDim.x >> 5;
    const long long first = (long long)blockIdx.x * warps_per_block + (threadIdx.x >> 5);
    const long long step = (long long)gridDim.x * warps_per_block;
    for (long long j = first; j < nout; j += step) {
        RedAcc acc = red_identity<OP>();
        for (long long c = lane; c < nchunks; c += 32) {
            const long long k = j * nchunks + c;
            acc = red_combine<OP>(acc, RedAcc{part_val[k], OP == RED_SUM ? 0 : part_idx[k]});
        }
        acc = red_warp_reduce<OP>(acc);
        if (lane == 0) red_write<OP, T>(out, out_idx, j, acc);
    }
}

// op -> template instantiation (argmax/argmin are max/min; unknown op codes do nothing)
#define RED_DISPATCH(op, CALL_SUM, CALL_MAX, CALL_MIN) \
    switch (op) {                                      \
        case RED_SUM: CALL_SUM; break;                 \
        case RED_MAX: case RED_ARGMAX: CALL_MAX; break; \
        case RED_MIN: case RED_ARGMIN: CALL_MIN; break; \
        default: break;                                \
    }

#define RED_ARGS x, out, out_idx, outer, R, inner, so, sr, si

extern "C" __global__ __launch_bounds__(256) void reduce_cols_f32(const float* __restrict__ x, float* out,
        long long* out_idx, long long outer, long long R, long long inner, long long so, long long sr, long long si,
        int op) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nth = (long long)blockDim.x * gridDim.x;
    RED_DISPATCH(op, (red_cols_body<RED_SUM, float>(tid, nth, RED_ARGS)), (red_cols_body<RED_MAX, float>(tid, nth, RED_ARGS)),
                 (red_cols_body<RED_MIN, float>(tid, nth, RED_ARGS)))
}

extern "C" __global__ __launch_bounds__(256) void reduce_cols_f16(const __half* __restrict__ x, __half* out,
        long long* out_idx, long long outer, long long R, long long inner, long long so, long long sr, long long si,
        int op) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nth = (long long)blockDim.x * gridDim.x;
    RED_DISPATCH(op, (red_cols_body<RED_SUM, __half>(tid, nth, RED_ARGS)), (red_cols_body<RED_MAX, __half>(tid, nth, RED_ARGS)),
                 (red_cols_body<RED_MIN, __half>(tid, nth, RED_ARGS)))
}

extern "C" __global__ __launch_bounds__(256) void reduce_warp_f32(const float* __restrict__ x, float* out,
        long long* out_idx, long long outer, long long R, long long inner, long long so, long long sr, long long si,
        int op) {
    RED_DISPATCH(op, (red_warp_kernel<RED_SUM, float>(RED_ARGS)), (red_warp_kernel<RED_MAX, float>(RED_ARGS)),
                 (red_warp_kernel<RED_MIN, float>(RED_ARGS)))
}

extern "C" __global__ __launch_bounds__(256) void reduce_warp_f16(const __half* __restrict__ x, __half* out,
        long long* out_idx, long long outer, long long R, long long inner, long long so, long long sr, long long si,
        int op) {
    RED_DISPATCH(op, (red_warp_kernel<RED_SUM, __half>(RED_ARGS)), (red_warp_kernel<RED_MAX, __half>(RED_ARGS)),
                 (red_warp_kernel<RED_MIN, __half>(RED_ARGS)))
}

extern "C" __global__ __launch_bounds__(256) void reduce_block_f32(const float* __restrict__ x, float* out,
        long long* out_idx, long long outer, long long R, long long inner, long long so, long long sr, long long si,
        int op) {
    RED_DISPATCH(op, (red_block_kernel<RED_SUM, float>(RED_ARGS)), (red_block_kernel<RED_MAX, float>(RED_ARGS)),
                 (red_block_kernel<RED_MIN, float>(RED_ARGS)))
}

extern "C" __global__ __launch_bounds__(256) void reduce_block_f16(const __half* __restrict__ x, __half* out,
        long long* out_idx, long long outer, long long R, long long inner, long long so, long long sr, long long si,
        int op) {
    RED_DISPATCH(op, (red_block_kernel<RED_SUM, __half>(RED_ARGS)), (red_block_kernel<RED_MAX, __half>(RED_ARGS)),
                 (red_block_kernel<RED_MIN, __half>(RED_ARGS)))
}

#define RED_PART_ARGS x, part_val, part_idx, outer, R, inner, so, sr, si, chunk, nchunks

extern "C" __global__ __launch_bounds__(256) void reduce_partial_f32(const float* __restrict__ x, float* part_val,
        long long* part_idx, long long outer, long long R, long long inner, long long so, long long sr, long long si,
        long long chunk, long long nchunks, int op) {
    RED_DISPATCH(op, (red_partial_kernel<RED_SUM, float>(RED_PART_ARGS)),
                 (red_partial_kernel<RED_MAX, float>(RED_PART_ARGS)), (red_partial_kernel<RED_MIN, float>(RED_PART_ARGS)))
}

extern "C" __global__ __launch_bounds__(256) void reduce_partial_f16(const __half* __restrict__ x, float* part_val,
        long long* part_idx, long long outer, long long R, long long inner, long long so, long long sr, long long si,
        long long chunk, long long nchunks, int op) {
    RED_DISPATCH(op, (red_partial_kernel<RED_SUM, __half>(RED_PART_ARGS)),
                 (red_partial_kernel<RED_MAX, __half>(RED_PART_ARGS)), (red_partial_kernel<RED_MIN, __half>(RED_PART_ARGS)))
}

#define RED_FIN_ARGS part_val, part_idx, out, out_idx, nout, nchunks

extern "C" __global__ __launch_bounds__(256) void reduce_finish_f32(const float* __restrict__ part_val,
        const long long* __restrict__ part_idx, float* out, long long* out_idx, long long nout, long long nchunks,
        int op) {
    RED_DISPATCH(op, (red_finish_kernel<RED_SUM, float>(RED_FIN_ARGS)), (red_finish_kernel<RED_MAX, float>(RED_FIN_ARGS)),
                 (red_finish_kernel<RED_MIN, float>(RED_FIN_ARGS)))
}

extern "C" __global__ __launch_bounds__(256) void reduce_finish_f16(const float* __restrict__ part_val,
        const long long* __restrict__ part_idx, __half* out, long long* out_idx, long long nout, long long nchunks,
        int op) {
    RED_DISPATCH(op, (red_finish_kernel<RED_SUM, __half>(RED_FIN_ARGS)), (red_finish_kernel<RED_MAX, __half>(RED_FIN_ARGS)),
                 (red_finish_kernel<RED_MIN, __half>(RED_FIN_ARGS)))
}

// ---- the extremes of an int64 array --------------------------------------------------------------------------
// reduce_minmax_i64(x, n, out): out[2 * b] = the smallest and out[2 * b + 1] = the largest of x[i] over block b's
// grid-stride share of i in [0, n) (x contiguous, n >= 1). Exact (int64 throughout: the float kernels above would
// round indices past 2^24). Two launches give the whole array's: grid = B blocks over x into part[2 B], then one
// block over the B pairs with pairs = 1 (x = part, n = 2 B). Block = 256 threads (a multiple of 32 up to 256),
// 512 B of static shared memory. The indices' range checks of embedding, cross-entropy, scatter... use it.

__device__ __forceinline__ void red_minmax_block(long long& lo, long long& hi) {
    __shared__ long long lo_s[8], hi_s[8];
    for (int o = 16; o > 0; o >>= 1) {
        const long long l = __shfl_down_sync(0xffffffffu, lo, o), h = __shfl_down_sync(0xffffffffu, hi, o);
        lo = l < lo ? l : lo;
        hi = h > hi ? h : hi;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    if (lane == 0) {
        lo_s[warp] = lo;
        hi_s[warp] = hi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < nwarps; ++w) {
            lo = lo_s[w] < lo ? lo_s[w] : lo;
            hi = hi_s[w] > hi ? hi_s[w] : hi;
        }
    }
}

extern "C" __global__ __launch_bounds__(256) void reduce_minmax_i64(const long long* __restrict__ x, long long n,
                                                                    long long* out, int pairs) {
    // pairs != 0: x holds (min, max) pairs from a first launch; fold the mins and the maxes apart
    long long lo = 9223372036854775807LL, hi = -9223372036854775807LL - 1;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x, stride = (long long)gridDim.x * blockDim.x;
    if (pairs) {
        for (long long i = first; 2 * i < n; i += stride) {
            lo = x[2 * i] < lo ? x[2 * i] : lo;
            hi = x[2 * i + 1] > hi ? x[2 * i + 1] : hi;
        }
    } else {
        for (long long i = first; i < n; i += stride) {
            lo = x[i] < lo ? x[i] : lo;
            hi = x[i] > hi ? x[i] : hi;
        }
    }
    red_minmax_block(lo, hi);
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = lo;
        out[2 * blockIdx.x + 1] = hi;
    }
}
