// softmax.cuh -- per-row math of softmax.cu, shared by the kernels and the host tests.
//
// A row of `cols` elements is processed by `nt` cooperating threads; thread `t` handles the elements
// j = t, t + nt, t + 2 nt, ... Each phase returns the thread's partial value, the kernel combines the
// partials across the warp (or block) with shuffles, and the next phase gets the combined value. The
// host harness (tests/cuda_host/softmax_harness.cu) runs the same partial functions for every t and
// combines them with a plain loop, so everything except the shuffle/shared-memory reduction itself is
// checked without a GPU. All arithmetic is float32 (float16 data is converted on load / store).

#pragma once
#include <cuda_fp16.h>

#include "row_reduce.cuh"

#define SM_HD __host__ __device__ __forceinline__

SM_HD float sm_neg_inf() { return -__builtin_huge_valf(); }
SM_HD float sm_load(const float* p, long long i) { return p[i]; }
SM_HD float sm_load(const __half* p, long long i) { return __half2float(p[i]); }
SM_HD void sm_store(float* p, long long i, float v) { p[i] = v; }
SM_HD void sm_store(__half* p, long long i, float v) { p[i] = __float2half_rn(v); }

// ---- forward: m = max_j x_j, s = sum_j exp(x_j - m); softmax y = exp(x - m) / s, log y = x - m - log s ----
template <typename T>
SM_HD float softmax_partial_max(const T* x, long long cols, long long t, long long nt) {
    float m = sm_neg_inf();
    for (long long j = t; j < cols; j += nt) m = fmaxf(m, sm_load(x, j));
    return m;
}

template <typename T>
SM_HD float softmax_partial_sumexp(const T* x, long long cols, float m, long long t, long long nt) {
    float s = 0.0f;
    for (long long j = t; j < cols; j += nt) s += expf(sm_load(x, j) - m);
    return s;
}

// y may alias x (each thread reads x_j before writing y_j, and the reductions are complete).
template <typename T>
SM_HD void softmax_write(T* y, const T* x, long long cols, float m, float s, int log_softmax, long long t,
                         long long nt) {
    if (log_softmax) {
        const float log_s = logf(s);
        for (long long j = t; j < cols; j += nt) sm_store(y, j, (sm_load(x, j) - m) - log_s);
    } else {
        for (long long j = t; j < cols; j += nt) sm_store(y, j, expf(sm_load(x, j) - m) / s);
    }
}

// ---- backward, from the forward output y and the incoming gradient dy ----
// softmax:     dx = y * (dy - r),     r = sum_j dy_j y_j
// log-softmax: dx = dy - exp(y) * r,  r = sum_j dy_j
template <typename T>
SM_HD float softmax_bwd_partial(const T* y, const T* dy, long long cols, int log_softmax, long long t,
                                long long nt) {
    float r = 0.0f;
    if (log_softmax) {
        for (long long j = t; j < cols; j += nt) r += sm_load(dy, j);
    } else {
        for (long long j = t; j < cols; j += nt) r += sm_load(dy, j) * sm_load(y, j);
    }
    return r;
}

// dx may alias dy.
template <typename T>
SM_HD void softmax_bwd_write(T* dx, const T* y, const T* dy, long long cols, float r, int log_softmax,
                             long long t, long long nt) {
    if (log_softmax) {
        for (long long j = t; j < cols; j += nt) sm_store(dx, j, sm_load(dy, j) - expf(sm_load(y, j)) * r);
    } else {
        for (long long j = t; j < cols; j += nt) sm_store(dx, j, sm_load(y, j) * (sm_load(dy, j) - r));
    }
}
