// adam.cu -- fused Adam / AdamW step over one contiguous parameter tensor (math in adam.cuh).
//
// adam_f32(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, float* max_exp_avg_sq,
//          AdamScalars h, long long n)
// adam_f16(__half* param, const __half* grad, float* exp_avg, float* exp_avg_sq, float* max_exp_avg_sq,
//          AdamScalars h, long long n)
//   Updates param, exp_avg, exp_avg_sq (and max_exp_avg_sq) in place, element i for i < n, exactly like
//   NumpyNNPrimitives.adam_step(param, grad, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay,
//   decoupled, max_exp_avg_sq) on float32 arrays (adam_f16: param and grad float16, state float32, update
//   computed in float32 and rounded to float16 once).
//   param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq: n contiguous elements; max_exp_avg_sq NULL = no AMSGrad.
//   h: AdamScalars by value, 9 x 4 bytes, in order: one_minus_beta1, beta2, one_minus_beta2, weight_decay,
//      decay_factor, step_size, bias2_sqrt, eps (float32, computed in float64 then rounded, see adam.cuh),
//      decoupled (int32: 1 = AdamW, 0 = L2 added to the gradient). Host packing:
//      np.array([...8 floats...], np.float32).tobytes() + np.int32(decoupled).tobytes()
// Launch: block = (256, 1, 1) (__launch_bounds__(256)), grid = (G, 1, 1), any G >= 1 (grid-stride;
//   ceil(n / 256) capped at e.g. 65535), no dynamic shared memory.

#include <cuda_fp16.h>

#include "adam.cuh"

extern "C" __global__ __launch_bounds__(256) void adam_f32(float* __restrict__ param, const float* __restrict__ grad,
                                                           float* __restrict__ exp_avg, float* __restrict__ exp_avg_sq,
                                                           float* __restrict__ max_exp_avg_sq, adam::AdamScalars h,
                                                           long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        adam::adam_elem<float>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, h, i);
}

extern "C" __global__ __launch_bounds__(256) void adam_f16(__half* __restrict__ param, const __half* __restrict__ grad,
                                                           float* __restrict__ exp_avg, float* __restrict__ exp_avg_sq,
                                                           float* __restrict__ max_exp_avg_sq, adam::AdamScalars h,
                                                           long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        adam::adam_elem<__half>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, h, i);
}
