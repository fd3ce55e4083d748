// layernorm.cu -- layer norm over the last `cols` elements of a contiguous (rows, cols) array, forward
// and backward, float32 arithmetic for both dtypes (_f16 = __half storage; weight and bias have the
// dtype of x; mean and rstd are always float32). The math is in layernorm.cuh (tested on the host).
//
// Row kernels, two launch shapes, both correct for any cols:
//   *_warp_*  one warp per row, meant for cols <= 1024: block = 256 threads (any multiple of 32 up to 256),
//             grid = min(ceil(rows / (block/32)), cap); grid-stride loop over rows.
//   *_block_* one block per row, meant for cols > 1024: block = 256 (any multiple of 32 up to 256),
//             grid = min(rows, cap); grid-stride loop over rows.
// No dynamic shared memory.
//
// layernorm_fwd_{warp,block}_{f32,f16}(y, mean, rstd, x, weight, bias, rows, cols, eps)
//   y      out (rows, cols), may be the same buffer as x
//   mean   out float32 (rows,), or null (not written)
//   rstd   out float32 (rows,) = 1/sqrt(var + eps) with the biased variance, or null
//   x      in (rows, cols);  weight, bias: in (cols,), each may be null (w = 1, b = 0)
//   eps    float
// layernorm_bwd_{warp,block}_{f32,f16}(dx, dy, x, weight, mean, rstd, rows, cols)
//   dx = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat)) with g = dy * weight, xhat = (x - mean) * rstd;
//   dx out (rows, cols) (may be the same buffer as dy); dy, x in (rows, cols); weight in (cols,) or null;
//   mean, rstd: the float32 (rows,) outputs of the forward.
// layernorm_bwd_params_{f32,f16}(dweight_part, dbias_part, dy, x, mean, rstd, rows, cols)
//   Per-block PARTIAL sums that the HOST finishes (no atomics, deterministic):
//   grid = (gx, P) with gx = min(ceil(cols / 256), cap) (grid-stride over columns), P = number of row
//   slices (e.g. min(ceil(rows / 64), 64)); block = 256 (any size up to 256).
//   dweight_part[p * cols + c] = sum over rows r = p, p + P, p + 2P, ... of dy[r, c] * xhat[r, c]
//   dbias_part  [p * cols + c] = sum over the same rows of dy[r, c]
//   Both float32 (P, cols); either may be null (not written). The host sums them over axis 0 and casts
//   to the parameter dtype: dweight = dweight_part.sum(0), dbias = dbias_part.sum(0).

#include <cuda_fp16.h>
#include "layernorm.cuh"

#define LN_THREADS 256

template <typename T>
__device__ __forceinline__ void ln_fwd_warp(T* y, float* mean_out, float* rstd_out, const T* x, const T* w,
                                            const T* b, long long rows, long long cols, float eps) {
    const long long wpb = blockDim.x >> 5;
    const long long lane = threadIdx.x & 31;
    for (long long r = blockIdx.x * wpb + (threadIdx.x >> 5); r < rows; r += gridDim.x * wpb) {
        const T* xr = x + r * cols;
        const float mean = row_warp_sum(ln_partial_sum(xr, cols, lane, 32)) / (float)cols;
        const float rstd = ln_rstd(row_warp_sum(ln_partial_sqdev(xr, cols, mean, lane, 32)), cols, eps);
        if (lane == 0) {
            if (mean_out) mean_out[r] = mean;
            if (rstd_out) rstd_out[r] = rstd;
        }
        ln_fwd_write(y + r * cols, xr, w, b, cols, mean, rstd, lane, 32);
    }
}

template <typename T>
__device__ __forceinline__ void ln_fwd_block(T* y, float* mean_out, float* rstd_out, const T* x, const T* w,
                                             const T* b, long long rows, long long cols, float eps) {
    __shared__ float red[32];
    const long long t = threadIdx.x, nt = blockDim.x;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + r * cols;
        const float mean = row_block_sum(ln_partial_sum(xr, cols, t, nt), red) / (float)cols;
        const float rstd = ln_rstd(row_block_sum(ln_partial_sqdev(xr, cols, mean, t, nt), red), cols, eps);
        if (t == 0) {
            if (mean_out) mean_out[r] = mean;
            if (rstd_out) rstd_out[r] = rstd;
        }
        ln_fwd_write(y + r * cols, xr, w, b, cols, mean, rstd, t, nt);
    }
}

template <typename T>
__device__ __forceinline__ void ln_bwd_warp(T* dx, const T* dy, const T* x, const T* w, const float* mean,
                                            const float* rstd, long long rows, long long cols) {
    const long long wpb = blockDim.x >> 5;
    const long long lane = threadIdx.x & 31;
    for (long long r = blockIdx.x * wpb + (threadIdx.x >> 5); r < rows; r += gridDim.x * wpb) {
        const long long o = r * cols;
        const float mu = mean[r], rs = rstd[r];
        float sg, sgx;
        ln_bwd_partials(dy + o, x + o, w, cols, mu, rs, lane, 32, sg, sgx);
        sg = row_warp_sum(sg);
        sgx = row_warp_sum(sgx);
        ln_bwd_write(dx + o, dy + o, x + o, w, cols, mu, rs, sg, sgx, lane, 32);
    }
}

template <typename T>
__device__ __forceinline__ void ln_bwd_block(T* dx, const T* dy, const T* x, const T* w, const float* mean,
                                             const float* rstd, long long rows, long long cols) {
    __shared__ float red[32];
    const long long t = threadIdx.x, nt = blockDim.x;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const long long o = r * cols;
        const float mu = mean[r], rs = rstd[r];
        float sg, sgx;
        ln_bwd_partials(dy + o, x + o, w, cols, mu, rs, t, nt, sg, sgx);
        sg = row_block_sum(sg, red);
        sgx = row_block_sum(sgx, red);
        ln_bwd_write(dx + o, dy + o, x + o, w, cols, mu, rs, sg, sgx, t, nt);
    }
}

template <typename T>
__device__ __forceinline__ void ln_bwd_params(float* dw_part, float* db_part, const T* dy, const T* x,
                                              const float* mean, const float* rstd, long long rows, long long cols) {
    const long long p = blockIdx.y, np = gridDim.y;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += step) {
        float dw, db;
        ln_param_partial(dy, x, mean, rstd, rows, cols, c, p, np, dw, db);
        if (dw_part) dw_part[p * cols + c] = dw;
        if (db_part) db_part[p * cols + c] = db;
    }
}

extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_fwd_warp_f32(
    float* y, float* mean, float* rstd, const float* x, const float* weight, const float* bias, long long rows,
    long long cols, float eps) {
    ln_fwd_warp(y, mean, rstd, x, weight, bias, rows, cols, eps);
}
extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_fwd_block_f32(
    float* y, float* mean, float* rstd, const float* x, const float* weight, const float* bias, long long rows,
    long long cols, float eps) {
    ln_fwd_block(y, mean, rstd, x, weight, bias, rows, cols, eps);
}
extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_bwd_warp_f32(
    float* dx, const float* dy, const float* x, const float* weight, const float* mean, const float* rstd,
    long long rows, long long cols) {
    ln_bwd_warp(dx, dy, x, weight, mean, rstd, rows, cols);
}
extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_bwd_block_f32(
    float* dx, const float* dy, const float* x, const float* weight, const float* mean, const float* rstd,
    long long rows, long long cols) {
    ln_bwd_block(dx, dy, x, weight, mean, rstd, rows, cols);
}
extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_bwd_params_f32(
    float* dweight_part, float* dbias_part, const float* dy, const float* x, const float* mean, const float* rstd,
    long long rows, long long cols) {
    ln_bwd_params(dweight_part, dbias_part, dy, x, mean, rstd, rows, cols);
}
extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_fwd_warp_f16(
    __half* y, float* mean, float* rstd, const __half* x, const __half* weight, const __half* bias, long long rows,
    long long cols, float eps) {
    ln_fwd_warp(y, mean, rstd, x, weight, bias, rows, cols, eps);
}
extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_fwd_block_f16(
    __half* y, float* mean, float* rstd, const __half* x, const __half* weight, const __half* bias, long long rows,
    long long cols, float eps) {
    ln_fwd_block(y, mean, rstd, x, weight, bias, rows, cols, eps);
}
extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_bwd_warp_f16(
    __half* dx, const __half* dy, const __half* x, const __half* weight, const float* mean, const float* rstd,
    long long rows, long long cols) {
    ln_bwd_warp(dx, dy, x, weight, mean, rstd, rows, cols);
}
extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_bwd_block_f16(
    __half* dx, const __half* dy, const __half* x, const __half* weight, const float* mean, const float* rstd,
    long long rows, long long cols) {
    ln_bwd_block(dx, dy, x, weight, mean, rstd, rows, cols);
}
extern "C" __global__ __launch_bounds__(LN_THREADS) void layernorm_bwd_params_f16(
    float* dweight_part, float* dbias_part, const __half* dy, const __half* x, const float* mean, const float* rstd,
    long long rows, long long cols) {
    ln_bwd_params(dweight_part, dbias_part, dy, x, mean, rstd, rows, cols);
}
