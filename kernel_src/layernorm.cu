// layernorm.cu -- layer norm over the last `cols` elements of a contiguous (rows, cols) array, forward
// and backward, float32 arithmetic for both dtypes (_f16 = __half storage; weight and bias have the
// dtype of x; mean and rstd are always float32). The math is in layernorm.cuh (tested on the host).
//
// Row kernels, three launch shapes (warp and block correct for any cols; reg for the cols that fit):
//   *_warp_*  one warp per row, meant for cols <= 1024: block = 256 threads (any multiple of 32 up to 256),
//             grid = min(ceil(rows / (block/32)), cap); grid-stride loop over rows.
//   *_reg_*   one block per row, the row held in registers (row_reduce.cuh): x (forward) or dy and x
//             (backward) are read from global memory once. Meant for 1024 < cols <= 1024 * N, with
//             N = LN_FWD_REG (16) floats per thread forward and LN_BWD_REG (8) per array backward:
//             block = nt threads, a multiple of 32 up to 1024 with nt * N >= cols (the host takes the
//             smallest such multiple of 32, at least 128); grid = rows (or fewer: grid-stride over rows).
//             The statistics are still two-pass (mean, then squared deviations), over the registers.
//             16-byte loads / stores (float4, or 8 halves) when every row pointer and weight / bias is
//             16-byte aligned and cols is a multiple of 4 (f32) / 8 (f16); scalar ones otherwise. PRECONDITION
//             nt * N >= cols (the host checks it; a wider row must take the *_block_* kernels).
//   *_block_* one block per row, several passes over the row in global memory, for rows too wide for the
//             registers: block = 256 (any multiple of 32 up to 256), grid = min(rows, cap); grid-stride
//             loop over rows.
// No dynamic shared memory.
//
// layernorm_fwd_{warp,reg,block}_{f32,f16}(y, mean, rstd, x, weight, bias, rows, cols, eps)
//   y      out (rows, cols), may be the same buffer as x
//   mean   out float32 (rows,), or null (not written)
//   rstd   out float32 (rows,) = 1/sqrt(var + eps) with the biased variance, or null
//   x      in (rows, cols);  weight, bias: in (cols,), each may be null (w = 1, b = 0)
//   eps    float
// layernorm_bwd_{warp,reg,block}_{f32,f16}(dx, dy, x, weight, mean, rstd, rows, cols)
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
// *_reg_* kernels: the largest block; floats of the row per thread forward; of dy and of x each backward
#define LN_ROW_THREADS 1024
#define LN_FWD_REG 16
#define LN_BWD_REG 8

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

// One row per block, held in registers: load, block sum (mean), block sum of squared deviations (rstd),
// normalize, weight and bias, store.
template <typename T, bool VEC>
__device__ __forceinline__ void ln_fwd_reg_rows(T* y, float* mean_out, float* rstd_out, const T* x, const T* w,
                                                const T* b, long long rows, int cols, float eps) {
    __shared__ float red[32];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        float v[LN_FWD_REG];
        row_reg_load<VEC>(v, x + r * cols, cols, 0.0f);  // slots past the row's end hold 0
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < LN_FWD_REG; ++k) s += v[k];
        const float mean = row_block_sum(s, red) / (float)cols;
        float q = 0.0f;
#pragma unroll
        for (int k = 0; k < LN_FWD_REG; ++k) {
            const float d = row_reg_valid<VEC, T>(k, cols) ? v[k] - mean : 0.0f;
            q += d * d;
        }
        const float rstd = ln_rstd(row_block_sum(q, red), cols, eps);
        if (threadIdx.x == 0) {
            if (mean_out) mean_out[r] = mean;
            if (rstd_out) rstd_out[r] = rstd;
        }
#pragma unroll
        for (int k = 0; k < LN_FWD_REG; ++k) v[k] = (v[k] - mean) * rstd;
        if (w) row_reg_param<VEC, true>(v, w, cols);
        if (b) row_reg_param<VEC, false>(v, b, cols);
        row_reg_store<VEC>(y + r * cols, v, cols);
    }
}

template <typename T>
__device__ __forceinline__ void ln_fwd_reg(T* y, float* mean_out, float* rstd_out, const T* x, const T* w,
                                           const T* b, long long rows, long long cols, float eps) {
    if (row_vec_ok(y, cols) && row_vec_ok(x, cols) && row_vec_ok(w, cols) && row_vec_ok(b, cols)) {
        ln_fwd_reg_rows<T, true>(y, mean_out, rstd_out, x, w, b, rows, (int)cols, eps);
    } else {
        ln_fwd_reg_rows<T, false>(y, mean_out, rstd_out, x, w, b, rows, (int)cols, eps);
    }
}

// One row per block: dy and x held in registers, two block sums (g and g * xhat), dx from the registers.
template <typename T, bool VEC>
__device__ __forceinline__ void ln_bwd_reg_rows(T* dx, const T* dy, const T* x, const T* w, const float* mean,
                                                const float* rstd, long long rows, int cols) {
    __shared__ float red[32];
    const float inv_n = 1.0f / (float)cols;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const long long o = r * cols;
        const float mu = mean[r], rs = rstd[r];
        float g[LN_BWD_REG], xh[LN_BWD_REG];
        row_reg_load<VEC>(g, dy + o, cols, 0.0f);  // slots past the end: g = 0, so they add nothing
        row_reg_load<VEC>(xh, x + o, cols, 0.0f);
        if (w) row_reg_param<VEC, true>(g, w, cols);  // g = dy * w
        float sg = 0.0f, sgx = 0.0f;
#pragma unroll
        for (int k = 0; k < LN_BWD_REG; ++k) {
            xh[k] = (xh[k] - mu) * rs;
            sg += g[k];
            sgx += g[k] * xh[k];
        }
        const float mg = row_block_sum(sg, red) * inv_n, mgx = row_block_sum(sgx, red) * inv_n;
#pragma unroll
        for (int k = 0; k < LN_BWD_REG; ++k) g[k] = rs * (g[k] - mg - xh[k] * mgx);
        row_reg_store<VEC>(dx + o, g, cols);
    }
}

template <typename T>
__device__ __forceinline__ void ln_bwd_reg(T* dx, const T* dy, const T* x, const T* w, const float* mean,
                                           const float* rstd, long long rows, long long cols) {
    if (row_vec_ok(dx, cols) && row_vec_ok(dy, cols) && row_vec_ok(x, cols) && row_vec_ok(w, cols)) {
        ln_bwd_reg_rows<T, true>(dx, dy, x, w, mean, rstd, rows, (int)cols);
    } else {
        ln_bwd_reg_rows<T, false>(dx, dy, x, w, mean, rstd, rows, (int)cols);
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
extern "C" __global__ __launch_bounds__(LN_ROW_THREADS) void layernorm_fwd_reg_f32(
    float* y, float* mean, float* rstd, const float* x, const float* weight, const float* bias, long long rows,
    long long cols, float eps) {
    ln_fwd_reg(y, mean, rstd, x, weight, bias, rows, cols, eps);
}
extern "C" __global__ __launch_bounds__(LN_ROW_THREADS) void layernorm_bwd_reg_f32(
    float* dx, const float* dy, const float* x, const float* weight, const float* mean, const float* rstd,
    long long rows, long long cols) {
    ln_bwd_reg(dx, dy, x, weight, mean, rstd, rows, cols);
}
extern "C" __global__ __launch_bounds__(LN_ROW_THREADS) void layernorm_fwd_reg_f16(
    __half* y, float* mean, float* rstd, const __half* x, const __half* weight, const __half* bias, long long rows,
    long long cols, float eps) {
    ln_fwd_reg(y, mean, rstd, x, weight, bias, rows, cols, eps);
}
extern "C" __global__ __launch_bounds__(LN_ROW_THREADS) void layernorm_bwd_reg_f16(
    __half* dx, const __half* dy, const __half* x, const __half* weight, const float* mean, const float* rstd,
    long long rows, long long cols) {
    ln_bwd_reg(dx, dy, x, weight, mean, rstd, rows, cols);
}
