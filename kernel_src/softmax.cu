// softmax.cu -- softmax / log-softmax forward and backward over the last axis of a contiguous
// (rows, cols) array. Numerically stable: the row max is subtracted before exp. float32 arithmetic for
// both dtypes (_f16 = __half storage). The per-row math is in softmax.cuh (tested on the host).
//
// Three launch shapes (warp and block correct for any cols; reg for the cols that fit its block):
//   *_warp_*  one warp per row, meant for cols <= 1024:
//             block = 256 threads (any multiple of 32 up to 256), grid = min(ceil(rows / (block/32)), cap);
//             rows are covered by a grid-stride loop, so the host may cap the grid.
//   *_reg_*   one block per row, the row held in registers (row_reduce.cuh): each global element is read
//             once and written once. Meant for 1024 < cols <= 1024 * N, with N = SM_FWD_REG (16) floats
//             per thread forward and SM_BWD_REG (8) per array (y and dy) backward:
//             block = nt threads, a multiple of 32 up to 1024 with nt * N >= cols (the host takes the
//             smallest such multiple of 32, at least 128); grid = rows (or fewer: grid-stride over rows).
//             16-byte loads / stores (float4, or 8 halves) when x, y (dx, y, dy) are 16-byte aligned and
//             cols is a multiple of 4 (f32) / 8 (f16); scalar ones otherwise. PRECONDITION nt * N >= cols
//             (the host checks it; a wider row must take the *_block_* kernels).
//   *_block_* one block per row, several passes over the row in global memory (max, sum, write), for
//             rows too wide for the registers: block = 256 threads (any multiple of 32 up to 256),
//             grid = min(rows, cap), grid-stride over rows.
// No dynamic shared memory (the block and reg variants use 128 bytes of static shared memory each).
//
// Arguments (all sizes are element counts):
//   forward:  y (out, rows*cols), x (in, rows*cols), rows, cols, log_softmax (0: softmax, 1: log-softmax)
//             y may be the same buffer as x.
//   backward: dx (out), y (the forward OUTPUT: softmax probabilities, or log-probabilities when
//             log_softmax = 1), dy (incoming gradient), rows, cols, log_softmax.
//             softmax: dx = y * (dy - sum(dy * y)); log-softmax: dx = dy - exp(y) * sum(dy).
//             dx may be the same buffer as dy.

#include <cuda_fp16.h>
#include "softmax.cuh"

#define SM_THREADS 256
// *_reg_* kernels: the largest block; floats of the row per thread forward; of y and of dy each backward
#define SM_ROW_THREADS 1024
#define SM_FWD_REG 16
#define SM_BWD_REG 8

template <typename T>
__device__ __forceinline__ void softmax_fwd_warp(T* y, const T* x, long long rows, long long cols, int log_softmax) {
    const long long wpb = blockDim.x >> 5;
    const long long lane = threadIdx.x & 31;
    for (long long r = blockIdx.x * wpb + (threadIdx.x >> 5); r < rows; r += gridDim.x * wpb) {
        const T* xr = x + r * cols;
        const float m = row_warp_max(softmax_partial_max(xr, cols, lane, 32));
        const float s = row_warp_sum(softmax_partial_sumexp(xr, cols, m, lane, 32));
        softmax_write(y + r * cols, xr, cols, m, s, log_softmax, lane, 32);
    }
}

template <typename T>
__device__ __forceinline__ void softmax_fwd_block(T* y, const T* x, long long rows, long long cols, int log_softmax) {
    __shared__ float red[32];
    const long long t = threadIdx.x, nt = blockDim.x;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + r * cols;
        const float m = row_block_max(softmax_partial_max(xr, cols, t, nt), red);
        const float s = row_block_sum(softmax_partial_sumexp(xr, cols, m, t, nt), red);
        softmax_write(y + r * cols, xr, cols, m, s, log_softmax, t, nt);
    }
}

template <typename T>
__device__ __forceinline__ void softmax_bwd_warp(T* dx, const T* y, const T* dy, long long rows, long long cols,
                                                 int log_softmax) {
    const long long wpb = blockDim.x >> 5;
    const long long lane = threadIdx.x & 31;
    for (long long r = blockIdx.x * wpb + (threadIdx.x >> 5); r < rows; r += gridDim.x * wpb) {
        const long long o = r * cols;
        const float red = row_warp_sum(softmax_bwd_partial(y + o, dy + o, cols, log_softmax, lane, 32));
        softmax_bwd_write(dx + o, y + o, dy + o, cols, red, log_softmax, lane, 32);
    }
}

template <typename T>
__device__ __forceinline__ void softmax_bwd_block(T* dx, const T* y, const T* dy, long long rows, long long cols,
                                                  int log_softmax) {
    __shared__ float red[32];
    const long long t = threadIdx.x, nt = blockDim.x;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const long long o = r * cols;
        const float s = row_block_sum(softmax_bwd_partial(y + o, dy + o, cols, log_softmax, t, nt), red);
        softmax_bwd_write(dx + o, y + o, dy + o, cols, s, log_softmax, t, nt);
    }
}

// One row per block, held in registers: load, block max, exp and block sum in registers, store.
template <typename T, bool VEC>
__device__ __forceinline__ void softmax_fwd_reg_rows(T* y, const T* x, long long rows, int cols, int log_softmax) {
    __shared__ float red[32];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        float v[SM_FWD_REG];
        // slots past the row's end hold -inf: they do not change the max and add exp(-inf) = 0 to the sum
        row_reg_load<VEC>(v, x + r * cols, cols, sm_neg_inf());
        float m = sm_neg_inf();
#pragma unroll
        for (int k = 0; k < SM_FWD_REG; ++k) m = fmaxf(m, v[k]);
        m = row_block_max(m, red);
        float s = 0.0f;
        if (log_softmax) {
#pragma unroll
            for (int k = 0; k < SM_FWD_REG; ++k) {
                v[k] -= m;
                s += expf(v[k]);
            }
            const float log_s = logf(row_block_sum(s, red));
#pragma unroll
            for (int k = 0; k < SM_FWD_REG; ++k) v[k] -= log_s;
        } else {
#pragma unroll
            for (int k = 0; k < SM_FWD_REG; ++k) {
                v[k] = expf(v[k] - m);
                s += v[k];
            }
            s = row_block_sum(s, red);
#pragma unroll
            for (int k = 0; k < SM_FWD_REG; ++k) v[k] /= s;
        }
        row_reg_store<VEC>(y + r * cols, v, cols);
    }
}

template <typename T>
__device__ __forceinline__ void softmax_fwd_reg(T* y, const T* x, long long rows, long long cols, int log_softmax) {
    if (row_vec_ok(x, cols) && row_vec_ok(y, cols)) {
        softmax_fwd_reg_rows<T, true>(y, x, rows, (int)cols, log_softmax);
    } else {
        softmax_fwd_reg_rows<T, false>(y, x, rows, (int)cols, log_softmax);
    }
}

// One row per block: y and dy held in registers, one block sum, dx written from the registers.
template <typename T, bool VEC>
__device__ __forceinline__ void softmax_bwd_reg_rows(T* dx, const T* y, const T* dy, long long rows, int cols,
                                                     int log_softmax) {
    __shared__ float red[32];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const long long o = r * cols;
        float yv[SM_BWD_REG], g[SM_BWD_REG];
        row_reg_load<VEC>(yv, y + o, cols, 0.0f);  // slots past the end hold 0: they add nothing to the sum
        row_reg_load<VEC>(g, dy + o, cols, 0.0f);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < SM_BWD_REG; ++k) s += log_softmax ? g[k] : g[k] * yv[k];
        s = row_block_sum(s, red);
#pragma unroll
        for (int k = 0; k < SM_BWD_REG; ++k) g[k] = log_softmax ? g[k] - expf(yv[k]) * s : yv[k] * (g[k] - s);
        row_reg_store<VEC>(dx + o, g, cols);
    }
}

template <typename T>
__device__ __forceinline__ void softmax_bwd_reg(T* dx, const T* y, const T* dy, long long rows, long long cols,
                                                int log_softmax) {
    if (row_vec_ok(dx, cols) && row_vec_ok(y, cols) && row_vec_ok(dy, cols)) {
        softmax_bwd_reg_rows<T, true>(dx, y, dy, rows, (int)cols, log_softmax);
    } else {
        softmax_bwd_reg_rows<T, false>(dx, y, dy, rows, (int)cols, log_softmax);
    }
}

extern "C" __global__ __launch_bounds__(SM_THREADS) void softmax_fwd_warp_f32(
    float* y, const float* x, long long rows, long long cols, int log_softmax) {
    softmax_fwd_warp(y, x, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_THREADS) void softmax_fwd_warp_f16(
    __half* y, const __half* x, long long rows, long long cols, int log_softmax) {
    softmax_fwd_warp(y, x, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_THREADS) void softmax_fwd_block_f32(
    float* y, const float* x, long long rows, long long cols, int log_softmax) {
    softmax_fwd_block(y, x, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_THREADS) void softmax_fwd_block_f16(
    __half* y, const __half* x, long long rows, long long cols, int log_softmax) {
    softmax_fwd_block(y, x, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_THREADS) void softmax_bwd_warp_f32(
    float* dx, const float* y, const float* dy, long long rows, long long cols, int log_softmax) {
    softmax_bwd_warp(dx, y, dy, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_THREADS) void softmax_bwd_warp_f16(
    __half* dx, const __half* y, const __half* dy, long long rows, long long cols, int log_softmax) {
    softmax_bwd_warp(dx, y, dy, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_THREADS) void softmax_bwd_block_f32(
    float* dx, const float* y, const float* dy, long long rows, long long cols, int log_softmax) {
    softmax_bwd_block(dx, y, dy, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_THREADS) void softmax_bwd_block_f16(
    __half* dx, const __half* y, const __half* dy, long long rows, long long cols, int log_softmax) {
    softmax_bwd_block(dx, y, dy, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_ROW_THREADS) void softmax_fwd_reg_f32(
    float* y, const float* x, long long rows, long long cols, int log_softmax) {
    softmax_fwd_reg(y, x, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_ROW_THREADS) void softmax_fwd_reg_f16(
    __half* y, const __half* x, long long rows, long long cols, int log_softmax) {
    softmax_fwd_reg(y, x, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_ROW_THREADS) void softmax_bwd_reg_f32(
    float* dx, const float* y, const float* dy, long long rows, long long cols, int log_softmax) {
    softmax_bwd_reg(dx, y, dy, rows, cols, log_softmax);
}
extern "C" __global__ __launch_bounds__(SM_ROW_THREADS) void softmax_bwd_reg_f16(
    __half* dx, const __half* y, const __half* dy, long long rows, long long cols, int log_softmax) {
    softmax_bwd_reg(dx, y, dy, rows, cols, log_softmax);
}
