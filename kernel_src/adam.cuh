// adam.cuh -- per-element math of the fused Adam / AdamW update (adam.cu), usable on host and device.
//
// It reproduces NumpyNNPrimitives.adam_step (tinygrad_like/backends/numpy_nn.py), i.e. PyTorch's
// single-tensor Adam, operation for operation in float32. NumPy rounds each Python-float scalar to float32
// before using it with float32 arrays, so the host passes the scalars already combined in float64 and then
// rounded to float32 (see AdamScalars). On the device every operation goes through an explicitly rounded
// intrinsic (__fmul_rn, ...), so the compiler cannot contract a*b+c into an FMA and the results equal
// NumPy's bit for bit (sqrt and division are IEEE-rounded on both sides).

#pragma once
#include <cuda_fp16.h>

namespace adam {

// Hyper-parameters for one step, each a float32 computed on the host in float64 then rounded:
//   one_minus_beta1 = f32(1 - beta1)            beta2 = f32(beta2)     one_minus_beta2 = f32(1 - beta2)
//   weight_decay    = f32(weight_decay) (0: no weight decay at all)
//   decay_factor    = f32(1 - lr * weight_decay)   (used only when decoupled, i.e. AdamW)
//   step_size       = f32(lr / (1 - beta1 ** step))
//   bias2_sqrt      = f32(sqrt(1 - beta2 ** step))
//   eps             = f32(eps)
struct AdamScalars {
    float one_minus_beta1, beta2, one_minus_beta2, weight_decay, decay_factor, step_size, bias2_sqrt, eps;
    int decoupled;
};

__host__ __device__ inline float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
__host__ __device__ inline float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
__host__ __device__ inline float sub_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}
__host__ __device__ inline float div_rn(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}
__host__ __device__ inline float sqrt_rn(float a) {
#ifdef __CUDA_ARCH__
    return __fsqrt_rn(a);
#else
    return sqrtf(a);
#endif
}
// np.maximum: NaN if either is NaN
__host__ __device__ inline float max_nan(float a, float b) { return (a >= b || a != a) ? a : b; }

__host__ __device__ inline float to_float(float x) { return x; }
__host__ __device__ inline float to_float(__half x) { return __half2float(x); }
__host__ __device__ inline void store(float* p, float x) { *p = x; }
__host__ __device__ inline void store(__half* p, float x) { *p = __float2half_rn(x); }

// One element of the update. P: float or __half (params and grads); state is float32. vmax: NULL for plain
// Adam, the AMSGrad running maximum otherwise. Float16 params are updated in float32 and rounded once.
template <typename P>
__host__ __device__ inline void adam_elem(P* param, const P* grad, float* exp_avg, float* exp_avg_sq,
                                          float* vmax, const AdamScalars& h, long long i) {
    float p = to_float(param[i]);
    float g = to_float(grad[i]);
    if (h.weight_decay != 0.0f) {
        if (h.decoupled) p = mul_rn(p, h.decay_factor);
        else g = add_rn(g, mul_rn(h.weight_decay, p));
    }
    float m = exp_avg[i];
    m = add_rn(m, mul_rn(sub_rn(g, m), h.one_minus_beta1));
    float v = mul_rn(exp_avg_sq[i], h.beta2);
    v = add_rn(v, mul_rn(mul_rn(h.one_minus_beta2, g), g));
    float second = v;
    if (vmax != nullptr) {
        second = max_nan(vmax[i], v);
        vmax[i] = second;
    }
    const float denom = add_rn(div_rn(sqrt_rn(second), h.bias2_sqrt), h.eps);
    p = sub_rn(p, div_rn(mul_rn(h.step_size, m), denom));
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    store(param + i, p);
}

}  // namespace adam
