// cross_entropy.cuh -- per-row math of cross_entropy.cu, shared by the kernels and the host tests.
//
// Fused softmax + cross-entropy for class indices, exactly the NumPy backend's
// tinygrad_like/backends/numpy_nn.py cross_entropy / cross_entropy_backward:
//   log p_ik = z_ik - log S_i,  z_ik = x_ik - m_i,  m_i = max_k x_ik,  S_i = sum_k exp(z_ik)
//   a_ik = (1 - s) w[y_i] [k == y_i] + (s / C) w[k]      (w = 1 without class weights; a = 0 when y_i == ignore)
//   loss_i = sum_k a_ik (-log p_ik) = (1 - s) w[y_i] (log S_i - z_iy) + (s / C) (W_i log S_i - WZ_i)
//            with W_i = sum_k w[k] and WZ_i = sum_k w[k] z_ik (only computed when s != 0)
//   asum_i = sum_k a_ik = (1 - s) w[y_i] + (s / C) W_i
//   d loss_i / d x_ik = (p_ik asum_i - a_ik) g_i,  p_ik = exp(x_ik - lse_i),  lse_i = m_i + log S_i
// A target that is neither ignore_index nor in [0, C) gives NaN loss, asum and gradient for its row
// (the host is expected to validate targets; NaN makes a missed check visible instead of reading out of bounds).
// Row reductions follow softmax.cuh: thread t of nt handles k = t, t + nt, ...

#pragma once
#include <cuda_fp16.h>

#include "row_reduce.cuh"

#define CE_HD __host__ __device__ __forceinline__

CE_HD float ce_neg_inf() { return -__builtin_huge_valf(); }
CE_HD float ce_nan() { return __builtin_nanf(""); }
CE_HD float ce_load(const float* p, long long i) { return p[i]; }
CE_HD float ce_load(const __half* p, long long i) { return __half2float(p[i]); }
CE_HD void ce_store(float* p, long long i, float v) { p[i] = v; }
CE_HD void ce_store(__half* p, long long i, float v) { p[i] = __float2half_rn(v); }

template <typename T>
CE_HD float ce_partial_max(const T* x, long long cols, long long t, long long nt) {
    float m = ce_neg_inf();
    for (long long k = t; k < cols; k += nt) m = fmaxf(m, ce_load(x, k));
    return m;
}

// Partial S (sum exp(z)), and when smoothing != 0 also W (sum w) and WZ (sum w z); w may be null.
template <typename T>
CE_HD void ce_partial_stats(const T* x, const T* w, long long cols, float m, float smoothing, long long t,
                            long long nt, float& s, float& wsum, float& wz) {
    float ps = 0.0f, pw = 0.0f, pwz = 0.0f;
    for (long long k = t; k < cols; k += nt) {
        const float z = ce_load(x, k) - m;
        ps += expf(z);
        if (smoothing != 0.0f) {
            const float wk = w ? ce_load(w, k) : 1.0f;
            pw += wk;
            pwz += wk * z;
        }
    }
    s = ps;
    wsum = pw;
    wz = pwz;
}

// Finish one row (called by one thread after the reductions): loss, lse and asum of the row.
template <typename T>
CE_HD void ce_row_finish(const T* x, const T* w, long long cols, long long target, long long ignore_index,
                         float smoothing, float m, float s, float wsum, float wz, float& loss, float& lse,
                         float& asum) {
    const float log_s = logf(s);
    lse = m + log_s;
    if (target == ignore_index) {
        loss = 0.0f;
        asum = 0.0f;
        return;
    }
    if (target < 0 || target >= cols) {
        loss = ce_nan();
        asum = ce_nan();
        return;
    }
    const float wy = w ? ce_load(w, target) : 1.0f;
    const float zy = ce_load(x, target) - m;
    float l = (1.0f - smoothing) * wy * (log_s - zy);
    float a = (1.0f - smoothing) * wy;
    if (smoothing != 0.0f) {
        const float sc = smoothing / (float)cols;
        l += sc * (wsum * log_s - wz);
        a += sc * wsum;
    }
    loss = l;
    asum = a;
}

// One element of the backward: d loss_i / d x_ik scaled by g_i.
template <typename T>
CE_HD float ce_grad_elem(float x_ik, long long k, long long cols, long long target, long long ignore_index,
                         float smoothing, const T* w, float lse, float asum, float g) {
    if (target == ignore_index) return 0.0f;
    if (target < 0 || target >= cols) return ce_nan();
    float a = 0.0f;
    if (k == target) a = (1.0f - smoothing) * (w ? ce_load(w, target) : 1.0f);
    if (smoothing != 0.0f) a += (smoothing / (float)cols) * (w ? ce_load(w, k) : 1.0f);
    return (expf(x_ik - lse) * asum - a) * g;
}
