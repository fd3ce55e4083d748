// layernorm.cuh -- per-row math of layernorm.cu, shared by the kernels and the host tests.
//
// Layer norm over the last `cols` elements of each row, two-pass in float32:
//   mean = sum(x) / cols,  var = sum((x - mean)^2) / cols (biased, like torch),  rstd = 1 / sqrt(var + eps)
//   y = (x - mean) * rstd * w + b          (w = 1 when weight is null, b = 0 when bias is null)
// Backward (xhat = (x - mean) * rstd, g = dy * w):
//   dx = rstd * (g - sum(g) / cols - xhat * sum(g * xhat) / cols)
//   dweight = sum over rows of dy * xhat,  dbias = sum over rows of dy
// As in softmax.cuh, `nt` threads share a row and thread `t` handles j = t, t + nt, ...; each phase
// returns a partial that the kernel reduces across the warp/block, and the host harness
// (tests/cuda_host/layernorm_harness.cu) reduces with a loop.

#pragma once
#include <cuda_fp16.h>

#include "row_reduce.cuh"

#define LN_HD __host__ __device__ __forceinline__

LN_HD float ln_load(const float* p, long long i) { return p[i]; }
LN_HD float ln_load(const __half* p, long long i) { return __half2float(p[i]); }
LN_HD void ln_store(float* p, long long i, float v) { p[i] = v; }
LN_HD void ln_store(__half* p, long long i, float v) { p[i] = __float2half_rn(v); }

template <typename T>
LN_HD float ln_partial_sum(const T* x, long long cols, long long t, long long nt) {
    float s = 0.0f;
    for (long long j = t; j < cols; j += nt) s += ln_load(x, j);
    return s;
}

template <typename T>
LN_HD float ln_partial_sqdev(const T* x, long long cols, float mean, long long t, long long nt) {
    float s = 0.0f;
    for (long long j = t; j < cols; j += nt) {
        const float d = ln_load(x, j) - mean;
        s += d * d;
    }
    return s;
}

LN_HD float ln_rstd(float sqdev_sum, long long cols, float eps) {
    return 1.0f / sqrtf(sqdev_sum / (float)cols + eps);
}

// y may alias x. w and b may be null.
template <typename T>
LN_HD void ln_fwd_write(T* y, const T* x, const T* w, const T* b, long long cols, float mean, float rstd,
                        long long t, long long nt) {
    for (long long j = t; j < cols; j += nt) {
        float v = (ln_load(x, j) - mean) * rstd;
        if (w) v *= ln_load(w, j);
        if (b) v += ln_load(b, j);
        ln_store(y, j, v);
    }
}

// Partial sums of g and g * xhat for the backward of one row.
template <typename T>
LN_HD void ln_bwd_partials(const T* dy, const T* x, const T* w, long long cols, float mean, float rstd,
                           long long t, long long nt, float& sum_g, float& sum_gx) {
    float sg = 0.0f, sgx = 0.0f;
    for (long long j = t; j < cols; j += nt) {
        float g = ln_load(dy, j);
        if (w) g *= ln_load(w, j);
        const float xhat = (ln_load(x, j) - mean) * rstd;
        sg += g;
        sgx += g * xhat;
    }
    sum_g = sg;
    sum_gx = sgx;
}

// dx may alias dy.
template <typename T>
LN_HD void ln_bwd_write(T* dx, const T* dy, const T* x, const T* w, long long cols, float mean, float rstd,
                        float sum_g, float sum_gx, long long t, long long nt) {
    const float inv_n = 1.0f / (float)cols;
    const float mg = sum_g * inv_n, mgx = sum_gx * inv_n;
    for (long long j = t; j < cols; j += nt) {
        float g = ln_load(dy, j);
        if (w) g *= ln_load(w, j);
        const float xhat = (ln_load(x, j) - mean) * rstd;
        ln_store(dx, j, rstd * (g - mg - xhat * mgx));
    }
}

// Column c of the dweight / dbias partials: rows r0, r0 + rstep, ... (one thread, no cooperation).
template <typename T>
LN_HD void ln_param_partial(const T* dy, const T* x, const float* mean, const float* rstd, long long rows,
                            long long cols, long long c, long long r0, long long rstep, float& dw, float& db) {
    float sw = 0.0f, sb = 0.0f;
    for (long long r = r0; r < rows; r += rstep) {
        const float d = ln_load(dy, r * cols + c);
        sw += d * (ln_load(x, r * cols + c) - mean[r]) * rstd[r];
        sb += d;
    }
    dw = sw;
    db = sb;
}
