/* Fused optimizer updates on the CPU: one pass over a parameter and its state instead of NumPy's eight.
 *
 * adam_step_* reproduces NumpyNNPrimitives.adam_step (backends/numpy_nn.py), PyTorch's single-tensor Adam, operation
 * for operation in the array's precision: the host passes each scalar already combined (in Python's float64) and,
 * for float32, rounded to float32, as NumPy rounds a Python float used with a float32 array. Contraction into FMAs
 * is off in this file, so the results equal NumPy's bit for bit (the tests check it). Same math as adam.cuh's
 * adam_elem, which serves the CUDA kernel. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#include <math.h>

#define TL_ADAM_STEP(NAME, T, SQRT)                                                                                 \
void NAME(long n, T *restrict param, const T *restrict grad, T *restrict exp_avg, T *restrict exp_avg_sq,          \
          T *restrict vmax, T one_minus_beta1, T beta2, T one_minus_beta2, T weight_decay, T decay_factor,         \
          T step_size, T bias2_sqrt, T eps, int decoupled) {                                                       \
    for (long i = 0; i < n; i++) {                                                                                  \
        T p = param[i], g = grad[i];                                                                                \
        if (weight_decay != 0) {                                                                                    \
            if (decoupled) p = p * decay_factor;                                                                    \
            else g = g + weight_decay * p;                                                                          \
        }                                                                                                           \
        T m = exp_avg[i];                                                                                           \
        m = m + (g - m) * one_minus_beta1;                                                                          \
        T v = exp_avg_sq[i] * beta2;                                                                                \
        v = v + one_minus_beta2 * g * g;                                                                            \
        T second = v;                                                                                               \
        if (vmax) { /* AMSGrad: np.maximum, NaN if either is NaN */                                                 \
            T a = vmax[i];                                                                                          \
            second = (a >= v || a != a) ? a : v;                                                                    \
            vmax[i] = second;                                                                                       \
        }                                                                                                           \
        T denom = SQRT(second) / bias2_sqrt + eps;                                                                  \
        param[i] = p - step_size * m / denom;                                                                       \
        exp_avg[i] = m;                                                                                             \
        exp_avg_sq[i] = v;                                                                                          \
    }                                                                                                               \
}

TL_ADAM_STEP(adam_step_f32, float, sqrtf)
TL_ADAM_STEP(adam_step_f64, double, sqrt)

/* y += x * alpha in place (NumpyBackend.axpy: SGD's update, add_/sub_ with alpha outside autograd): the product and
 * the sum NumPy does, rounded twice as it does (contraction is off in this file), in one pass instead of a product
 * into a new array and a sum over both. No restrict: x may be y itself (p.add_(p, alpha=...)). */
#define TL_AXPY(NAME, T)                                                                                            \
void NAME(long n, T *y, const T *x, T alpha) {                                                                      \
    for (long i = 0; i < n; i++) y[i] = y[i] + x[i] * alpha;                                                        \
}

TL_AXPY(axpy_f32, float)
TL_AXPY(axpy_f64, double)
