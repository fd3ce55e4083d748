/* Elementwise passes of the activations on the CPU: relu forward, and the backward of relu, tanh and sigmoid from
 * the saved output, each one pass where NumPy makes two to four (and a temporary per step); and the dropout mask
 * from its uniform draws. The reference is the NumPy code in numpy_backend.py / numpy_nn.py, and the same float
 * operations in the same order give the same values bit for bit: contraction into FMAs is off in this file. */

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define TL_ACTIVATION(SFX, T)                                                                                       \
/* max(x, 0) with NaN kept and -0.0 made 0.0 (as np.maximum(x, 0) and torch.relu) */                                \
void relu_fwd_##SFX(long n, const T *restrict x, T *restrict out) {                                                \
    for (long i = 0; i < n; i++) out[i] = (x[i] > 0) | (x[i] != x[i]) ? x[i] : (T)0;                               \
}                                                                                                                   \
/* g where the output y > 0 or is NaN, else +0.0 (an inf or NaN gradient there included; torch's threshold_backward) */\
void relu_bwd_##SFX(long n, const T *restrict g, const T *restrict y, T *restrict out) {                           \
    for (long i = 0; i < n; i++) out[i] = y[i] <= 0 ? (T)0 : g[i];                                                  \
}                                                                                                                   \
/* g * (1 - y*y), from tanh's output y */                                                                           \
void tanh_bwd_##SFX(long n, const T *restrict g, const T *restrict y, T *restrict out) {                           \
    for (long i = 0; i < n; i++) out[i] = g[i] * ((T)1 - y[i] * y[i]);                                              \
}                                                                                                                   \
/* g * y * (1 - y), from the sigmoid's output y */                                                                  \
void sigmoid_bwd_##SFX(long n, const T *restrict g, const T *restrict y, T *restrict out) {                        \
    for (long i = 0; i < n; i++) out[i] = g[i] * y[i] * ((T)1 - y[i]);                                              \
}                                                                                                                   \
/* the dropout mask: scale where the uniform draw u >= p (kept), else 0 */                                          \
void dropout_mask_##SFX(long n, const float *restrict u, float p, T scale, T *restrict mask) {                     \
    for (long i = 0; i < n; i++) mask[i] = u[i] >= p ? scale : (T)0;                                                \
}

TL_ACTIVATION(f32, float)
TL_ACTIVATION(f64, double)
