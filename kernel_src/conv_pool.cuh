// conv_pool.cuh -- per-element math of the NCHW convolution-lowering and pooling kernels (conv_pool.cu):
// im2col / col2im, max-pool forward / backward, avg-pool forward / backward. Host and device, so the host
// tests run exactly this code over the whole grid on the CPU.
//
// All tensors are contiguous NCHW; every thread owns one output element and sums in float32 (no atomics):
//   im2col      col[n, (c*KH + kh)*KW + kw, oh*OW + ow] = x[n, c, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw]
//               (0 outside the image)                                  == torch.nn.functional.unfold
//   col2im      x[n, c, h, w] = sum of the col entries that im2col read from (n, c, h, w)   == F.fold
//   maxpool     out[n, c, oh, ow] = max over the window's in-image taps, idx = h*W + w of the chosen tap:
//               a later tap wins only if strictly greater or NaN (ties: first in row-major window order;
//               NaN propagates, as in PyTorch)                          == F.max_pool2d(return_indices=True)
//   maxpool_bw  grad_x[n, c, h, w] = sum of grad_out over the windows containing (h, w) whose idx == h*W + w
//   avgpool     out = (sum of in-image taps) / divisor, divisor = divisor_override if > 0, else the window
//               area clipped to the padded image (count_include_pad) or to the image (not)   == F.avg_pool2d
//   avgpool_bw  grad_x[n, c, h, w] = sum over windows containing (h, w) of grad_out / divisor

#pragma once
#include <cuda_fp16.h>

namespace conv_pool {

// Geometry, passed by value; 16 int64, packed by the host as np.array([...], np.int64).tobytes() in this
// order. OH, OW are computed by the host (PyTorch's formulas, ceil_mode included):
//   OH = floor_or_ceil((H + 2*ph - dh*(KH - 1) - 1) / sh) + 1 (and likewise OW).
// count_include_pad (0/1) and divisor_override (0: none) are used by avg-pool only; dh, dw must be 1 for
// avg-pool (PyTorch's avg_pool2d has no dilation). Per-plane index math is 32-bit: H*W, OH*OW and KH*KW must
// be below 2^31 (the totals N*C*... may be anything that fits int64).
struct ConvGeom {
    long long N, C, H, W;
    long long KH, KW, OH, OW;
    long long sh, sw, ph, pw;
    long long dh, dw;
    long long count_include_pad, divisor_override;
};

__host__ __device__ inline float to_float(float x) { return x; }
__host__ __device__ inline float to_float(__half x) { return __half2float(x); }
template <typename T> __host__ __device__ inline T from_float(float x);
template <> __host__ __device__ inline float from_float<float>(float x) { return x; }
template <> __host__ __device__ inline __half from_float<__half>(float x) { return __float2half_rn(x); }

// Index of the output row/column whose window tap k lands on input row h: (h + p - k*d) / s if that is an
// integer in [0, O), else -1. In 32-bit arithmetic (per-plane sizes always fit): a 64-bit division here is a
// called subroutine, which spills inside the tap loops.
__host__ __device__ inline int tap_source(int h, int k, int s, int p, int d, int O) {
    const int t = h + p - k * d;
    if (t < 0 || t % s != 0) return -1;
    const int o = t / s;
    return o < O ? o : -1;
}

// im2col: element i of col, i < N*C*KH*KW*OH*OW.
template <typename T>
__host__ __device__ inline void im2col_elem(const T* x, T* col, const ConvGeom& g, long long i) {
    const long long q = i / (g.OH * g.OW);  // (n*C + c)*KH*KW + kh*KW + kw
    const int r = (int)(i - q * g.OH * g.OW);
    const int oh = r / (int)g.OW, ow = r % (int)g.OW;
    const long long t = q / (g.KH * g.KW);  // n*C + c
    const int kk = (int)(q - t * g.KH * g.KW);
    const int kh = kk / (int)g.KW, kw = kk % (int)g.KW;
    const long long h = oh * g.sh - g.ph + kh * g.dh, w = ow * g.sw - g.pw + kw * g.dw;
    col[i] = (h >= 0 && h < g.H && w >= 0 && w < g.W) ? x[(t * g.H + h) * g.W + w] : from_float<T>(0.0f);
}

// col2im: element i of x, i < N*C*H*W (x is overwritten, not accumulated).
template <typename T>
__host__ __device__ inline void col2im_elem(const T* col, T* x, const ConvGeom& g, long long i) {
    const long long t = i / (g.H * g.W);  // n*C + c; one 64-bit division, the rest in 32 bits
    const int r = (int)(i - t * g.H * g.W);
    const int h = r / (int)g.W, w = r % (int)g.W;
    const long long n = t / g.C, c = t % g.C;
    const long long L = g.OH * g.OW;
    float acc = 0.0f;
    for (long long kh = 0; kh < g.KH; ++kh) {
        const long long oh = tap_source(h, (int)kh, (int)g.sh, (int)g.ph, (int)g.dh, (int)g.OH);
        if (oh < 0) continue;
        for (long long kw = 0; kw < g.KW; ++kw) {
            const long long ow = tap_source(w, (int)kw, (int)g.sw, (int)g.pw, (int)g.dw, (int)g.OW);
            if (ow < 0) continue;
            const long long row = (c * g.KH + kh) * g.KW + kw;
            acc += to_float(col[(n * g.C * g.KH * g.KW + row) * L + oh * g.OW + ow]);
        }
    }
    x[i] = from_float<T>(acc);
}

// max-pool forward: element i of out / idx, i < N*C*OH*OW. A window with no in-image tap (impossible with
// PyTorch's output-size rules) gives 0 and index -1.
template <typename T>
__host__ __device__ inline void maxpool_elem(const T* x, T* out, long long* idx, const ConvGeom& g, long long i) {
    const long long t = i / (g.OH * g.OW);  // n*C + c; one 64-bit division, the rest in 32 bits
    const int r = (int)(i - t * g.OH * g.OW);
    const int oh = r / (int)g.OW, ow = r % (int)g.OW;
    const T* plane = x + t * g.H * g.W;
    float best = 0.0f;  // replaced by the first in-image tap
    long long best_i = -1;
    for (long long kh = 0; kh < g.KH; ++kh) {
        const long long h = oh * g.sh - g.ph + kh * g.dh;
        if (h < 0 || h >= g.H) continue;
        for (long long kw = 0; kw < g.KW; ++kw) {
            const long long w = ow * g.sw - g.pw + kw * g.dw;
            if (w < 0 || w >= g.W) continue;
            const float v = to_float(plane[h * g.W + w]);
            if (best_i < 0 || v > best || v != v) {
                best = v;
                best_i = h * g.W + w;
            }
        }
    }
    out[i] = from_float<T>(best);
    idx[i] = best_i;
}

// max-pool backward (gather form, deterministic): element i of grad_x, i < N*C*H*W.
template <typename T>
__host__ __device__ inline void maxpool_backward_elem(const T* grad_out, const long long* idx, T* grad_x,
                                                      const ConvGeom& g, long long i) {
    const long long t = i / (g.H * g.W);  // n*C + c; one 64-bit division, the rest in 32 bits
    const int r = (int)(i - t * g.H * g.W);
    const int h = r / (int)g.W, w = r % (int)g.W;
    const long long* plane_idx = idx + t * g.OH * g.OW;  // r == h*W + w is this pixel's flat index
    const T* plane_grad = grad_out + t * g.OH * g.OW;
    const int KH = (int)g.KH, KW = (int)g.KW, OW = (int)g.OW;
    float acc = 0.0f;
    for (int kh = 0; kh < KH; ++kh) {
        const int oh = tap_source(h, kh, (int)g.sh, (int)g.ph, (int)g.dh, (int)g.OH);
        if (oh < 0) continue;
        for (int kw = 0; kw < KW; ++kw) {
            const int ow = tap_source(w, kw, (int)g.sw, (int)g.pw, (int)g.dw, OW);
            if (ow < 0) continue;
            const int o = oh * OW + ow;
            if (plane_idx[o] == (long long)r) acc += to_float(plane_grad[o]);
        }
    }
    grad_x[i] = from_float<T>(acc);
}

// avg-pool window [h0, h1) x [w0, w1) clipped to the image, and its divisor (PyTorch's avg_pool2d rules).
__host__ __device__ inline float avgpool_window(const ConvGeom& g, long long oh, long long ow, long long* h0,
                                                long long* h1, long long* w0, long long* w1) {
    long long hs = oh * g.sh - g.ph, ws = ow * g.sw - g.pw;
    long long he = hs + g.KH, we = ws + g.KW;
    if (he > g.H + g.ph) he = g.H + g.ph;
    if (we > g.W + g.pw) we = g.W + g.pw;
    const long long padded_area = (he - hs) * (we - ws);
    if (hs < 0) hs = 0;
    if (ws < 0) ws = 0;
    if (he > g.H) he = g.H;
    if (we > g.W) we = g.W;
    *h0 = hs; *h1 = he; *w0 = ws; *w1 = we;
    if (g.divisor_override > 0) return (float)g.divisor_override;
    return (float)(g.count_include_pad ? padded_area : (he - hs) * (we - ws));
}

// avg-pool forward: element i of out, i < N*C*OH*OW.
template <typename T>
__host__ __device__ inline void avgpool_elem(const T* x, T* out, const ConvGeom& g, long long i) {
    const long long t = i / (g.OH * g.OW);  // n*C + c; one 64-bit division, the rest in 32 bits
    const int r = (int)(i - t * g.OH * g.OW);
    const int oh = r / (int)g.OW, ow = r % (int)g.OW;
    const T* plane = x + t * g.H * g.W;
    long long h0, h1, w0, w1;
    const float div = avgpool_window(g, oh, ow, &h0, &h1, &w0, &w1);
    float acc = 0.0f;
    for (long long h = h0; h < h1; ++h)
        for (long long w = w0; w < w1; ++w) acc += to_float(plane[h * g.W + w]);
    out[i] = from_float<T>(acc / div);
}

// avg-pool backward: element i of grad_x, i < N*C*H*W.
template <typename T>
__host__ __device__ inline void avgpool_backward_elem(const T* grad_out, T* grad_x, const ConvGeom& g, long long i) {
    const long long t = i / (g.H * g.W);  // n*C + c; one 64-bit division, the rest in 32 bits
    const int r = (int)(i - t * g.H * g.W);
    const int h = r / (int)g.W, w = r % (int)g.W;
    const long long base = t * g.OH * g.OW;
    float acc = 0.0f;
    for (long long kh = 0; kh < g.KH; ++kh) {
        const long long oh = tap_source(h, (int)kh, (int)g.sh, (int)g.ph, 1, (int)g.OH);
        if (oh < 0) continue;
        for (long long kw = 0; kw < g.KW; ++kw) {
            const long long ow = tap_source(w, (int)kw, (int)g.sw, (int)g.pw, 1, (int)g.OW);
            if (ow < 0) continue;
            long long h0, h1, w0, w1;
            const float div = avgpool_window(g, oh, ow, &h0, &h1, &w0, &w1);
            acc += to_float(grad_out[base + oh * g.OW + ow]) / div;
        }
    }
    grad_x[i] = from_float<T>(acc);
}

}  // namespace conv_pool
