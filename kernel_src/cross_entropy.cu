// cross_entropy.cu -- fused softmax + cross-entropy for class indices over a contiguous (rows, C) array
// of logits, with optional class weights, ignore_index and label smoothing. Same math as the NumPy
// backend (tinygrad_like/backends/numpy_nn.py cross_entropy / cross_entropy_backward); the formulas are
// in cross_entropy.cuh (tested on the host). float32 arithmetic; _f16 = __half logits/weight/loss/grad.
//
// Forward, per-row loss (no reduction; the host does mean/sum, e.g. mean = sum(loss) / sum(asum) for
// weighted means, which is torch's denominator sum_i w[y_i] when smoothing is 0):
//   cross_entropy_fwd_warp_{f32,f16}   one warp per row, meant for C <= 1024:
//       block = 256 (any multiple of 32 up to 256), grid = min(ceil(rows / (block/32)), cap), grid-stride.
//   cross_entropy_fwd_block_{f32,f16}  one block per row, meant for C > 1024:
//       block = 256 (any multiple of 32 up to 256), grid = min(rows, cap), grid-stride.
//   Arguments: (loss, lse, asum, logits, target, weight, rows, cols, ignore_index, smoothing)
//     loss    out T (rows,): loss_i (0 for ignored rows, NaN for an out-of-range target)
//     lse     out float32 (rows,): log-sum-exp of the row (kept for the backward)
//     asum    out float32 (rows,): sum_k a_ik (kept for the backward; 0 for ignored rows)
//     logits  in T (rows, cols);  target in int64 (rows,);  weight in T (cols,) or null
//     rows, cols (= C) long long;  ignore_index long long;  smoothing float in [0, 1]
// Backward, elementwise (threads independent):
//   cross_entropy_bwd_{f32,f16}: block = 256 (any size up to 256), grid = min(ceil(rows*cols / 256), cap),
//   grid-stride over the rows*cols elements.
//   Arguments: (dlogits, logits, target, weight, lse, asum, g, g_stride, rows, cols, ignore_index, smoothing)
//     dlogits out T (rows, cols) = (exp(x - lse) * asum - a) * g[i * g_stride]  (may alias logits)
//     lse, asum: the float32 forward outputs;  g in T: incoming gradient of loss, g_stride = 1 for a
//     (rows,) array or 0 for one scalar broadcast to every row (e.g. 1/denominator for the mean).
// No dynamic shared memory.

#include <cuda_fp16.h>
#include "cross_entropy.cuh"

#define CE_THREADS 256

template <typename T>
__device__ __forceinline__ void ce_fwd_warp(T* loss, float* lse, float* asum, const T* x, const long long* target,
                                            const T* w, long long rows, long long cols, long long ignore_index,
                                            float smoothing) {
    const long long wpb = blockDim.x >> 5;
    const long long lane = threadIdx.x & 31;
    for (long long r = blockIdx.x * wpb + (threadIdx.x >> 5); r < rows; r += gridDim.x * wpb) {
        const T* xr = x + r * cols;
        const float m = row_warp_max(ce_partial_max(xr, cols, lane, 32));
        float s, ws, wz;
        ce_partial_stats(xr, w, cols, m, smoothing, lane, 32, s, ws, wz);
        s = row_warp_sum(s);
        ws = row_warp_sum(ws);
        wz = row_warp_sum(wz);
        if (lane == 0) {
            float l, e, a;
            ce_row_finish(xr, w, cols, target[r], ignore_index, smoothing, m, s, ws, wz, l, e, a);
            ce_store(loss, r, l);
            lse[r] = e;
            asum[r] = a;
        }
    }
}

template <typename T>
__device__ __forceinline__ void ce_fwd_block(T* loss, float* lse, float* asum, const T* x, const long long* target,
                                             const T* w, long long rows, long long cols, long long ignore_index,
                                             float smoothing) {
    __shared__ float red[32];
    const long long t = threadIdx.x, nt = blockDim.x;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + r * cols;
        const float m = row_block_max(ce_partial_max(xr, cols, t, nt), red);
        float s, ws, wz;
        ce_partial_stats(xr, w, cols, m, smoothing, t, nt, s, ws, wz);
        s = row_block_sum(s, red);
        ws = row_block_sum(ws, red);
        wz = row_block_sum(wz, red);
        if (t == 0) {
            float l, e, a;
            ce_row_finish(xr, w, cols, target[r], ignore_index, smoothing, m, s, ws, wz, l, e, a);
            ce_store(loss, r, l);
            lse[r] = e;
            asum[r] = a;
        }
    }
}

template <typename T>
__device__ __forceinline__ void ce_bwd(T* dx, const T* x, const long long* target, const T* w, const float* lse,
                                       const float* asum, const T* g, long long g_stride, long long rows,
                                       long long cols, long long ignore_index, float smoothing) {
    const long long n = rows * cols;
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += step) {
        const long long i = e / cols, k = e - i * cols;
        const float v = ce_grad_elem(ce_load(x, e), k, cols, target[i], ignore_index, smoothing, w, lse[i], asum[i],
                                     ce_load(g, i * g_stride));
        ce_store(dx, e, v);
    }
}

extern "C" __global__ __launch_bounds__(CE_THREADS) void cross_entropy_fwd_warp_f32(
    float* loss, float* lse, float* asum, const float* logits, const long long* target, const float* weight,
    long long rows, long long cols, long long ignore_index, float smoothing) {
    ce_fwd_warp(loss, lse, asum, logits, target, weight, rows, cols, ignore_index, smoothing);
}
extern "C" __global__ __launch_bounds__(CE_THREADS) void cross_entropy_fwd_warp_f16(
    __half* loss, float* lse, float* asum, const __half* logits, const long long* target, const __half* weight,
    long long rows, long long cols, long long ignore_index, float smoothing) {
    ce_fwd_warp(loss, lse, asum, logits, target, weight, rows, cols, ignore_index, smoothing);
}
extern "C" __global__ __launch_bounds__(CE_THREADS) void cross_entropy_fwd_block_f32(
    float* loss, float* lse, float* asum, const float* logits, const long long* target, const float* weight,
    long long rows, long long cols, long long ignore_index, float smoothing) {
    ce_fwd_block(loss, lse, asum, logits, target, weight, rows, cols, ignore_index, smoothing);
}
extern "C" __global__ __launch_bounds__(CE_THREADS) void cross_entropy_fwd_block_f16(
    __half* loss, float* lse, float* asum, const __half* logits, const long long* target, const __half* weight,
    long long rows, long long cols, long long ignore_index, float smoothing) {
    ce_fwd_block(loss, lse, asum, logits, target, weight, rows, cols, ignore_index, smoothing);
}
extern "C" __global__ __launch_bounds__(CE_THREADS) void cross_entropy_bwd_f32(
    float* dlogits, const float* logits, const long long* target, const float* weight, const float* lse,
    const float* asum, const float* g, long long g_stride, long long rows, long long cols, long long ignore_index,
    float smoothing) {
    ce_bwd(dlogits, logits, target, weight, lse, asum, g, g_stride, rows, cols, ignore_index, smoothing);
}
extern "C" __global__ __launch_bounds__(CE_THREADS) void cross_entropy_bwd_f16(
    __half* dlogits, const __half* logits, const long long* target, const __half* weight, const float* lse,
    const float* asum, const __half* g, long long g_stride, long long rows, long long cols, long long ignore_index,
    float smoothing) {
    ce_bwd(dlogits, logits, target, weight, lse, asum, g, g_stride, rows, cols, ignore_index, smoothing);
}
