// softmax.cu -- softmax / log-softmax forward and backward over the last axis of a contiguous
// (rows, cols) array. Numerically stable: the row max is subtracted before exp. float32 arithmetic for
// both dtypes (_f16 = __half storage). The per-row math is in softmax.cuh (tested on the host).
//
// Two launch shapes, both correct for any cols:
//   *_warp_*  one warp per row, meant for cols <= 1024:
//             block = 256 threads (any multiple of 32 up to 256), grid = min(ceil(rows / (block/32)), cap);
//             rows are covered by a grid-stride loop, so the host may cap the grid.
//   *_block_* one block per row, meant for cols > 1024:
//             block = 256 threads (any multiple of 32 up to 256), grid = min(rows, cap), grid-stride over rows.
// No dynamic shared memory (the block variants use 128 bytes of static shared memory).
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
