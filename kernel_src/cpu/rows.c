/* Row-wise kernels on the CPU, over the last axis of a C-contiguous (rows, cols) array: softmax and log-softmax
 * forward and backward, layer norm forward and backward. NumPy makes three to six passes over memory for each (a
 * reduction, a broadcast subtraction, an exp, a second reduction, a division); these make two or three over a row
 * that stays in cache. NumpyBackend's code is their reference (tests/test_cpu_kernels.py). The row sums run in
 * order, where NumPy sums pairwise: results differ by a few ulp, within the tests' bounds. */
#include <math.h>
#include "vmath.h"

/* The maximum of a row, NaN if the row holds one (as np.max): a plain max and a NaN flag, both reductions the
 * compiler vectorizes (``omp simd``: -fopenmp-simd, no OpenMP runtime) */
#define TL_ROW_MAX(T, xr, cols, m)                                                                                  \
    T m = xr[0];                                                                                                    \
    {                                                                                                               \
        int nan = 0;                                                                                                \
        _Pragma("omp simd reduction(max:m) reduction(|:nan)")                                                       \
        for (long j = 0; j < cols; j++) { m = xr[j] > m ? xr[j] : m; nan |= xr[j] != xr[j]; }                       \
        if (nan) m = (T)NAN;                                                                                        \
    }
#define TL_SIMD_SUM _Pragma("omp simd reduction(+:s)")
#define TL_SIMD_SUM2 _Pragma("omp simd reduction(+:s, sx)")
#define TL_SIMD_SUMV _Pragma("omp simd reduction(+:v)")

#define TL_ROW_KERNELS(SFX, T, EXP, LOG, SQRT)                                                                      \
void softmax_rows_##SFX(long rows, long cols, const T *restrict x, T *restrict out) {                               \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict xr = x + r * cols;                                                                        \
        T *restrict o = out + r * cols;                                                                             \
        TL_ROW_MAX(T, xr, cols, m)                                                                                  \
        T s = 0;                                                                                                    \
        TL_SIMD_SUM for (long j = 0; j < cols; j++) { o[j] = EXP(xr[j] - m); s += o[j]; }                                       \
        T inv = 1 / s;                                                                                              \
        for (long j = 0; j < cols; j++) o[j] = o[j] * inv;                                                          \
    }                                                                                                               \
}                                                                                                                   \
void log_softmax_rows_##SFX(long rows, long cols, const T *restrict x, T *restrict out) {                           \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict xr = x + r * cols;                                                                        \
        T *restrict o = out + r * cols;                                                                             \
        TL_ROW_MAX(T, xr, cols, m)                                                                                  \
        T s = 0;                                                                                                    \
        TL_SIMD_SUM for (long j = 0; j < cols; j++) { o[j] = xr[j] - m; s += EXP(o[j]); }                                       \
        T ls = LOG(s);                                                                                              \
        for (long j = 0; j < cols; j++) o[j] = o[j] - ls;                                                           \
    }                                                                                                               \
}                                                                                                                   \
/* y * (g - sum(g * y)) */                                                                                          \
void softmax_backward_rows_##SFX(long rows, long cols, const T *restrict g, const T *restrict y, T *restrict out) { \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict gr = g + r * cols, *restrict yr = y + r * cols;                                           \
        T *restrict o = out + r * cols;                                                                             \
        T s = 0;                                                                                                    \
        TL_SIMD_SUM for (long j = 0; j < cols; j++) s += gr[j] * yr[j];                                                         \
        for (long j = 0; j < cols; j++) o[j] = yr[j] * (gr[j] - s);                                                 \
    }                                                                                                               \
}                                                                                                                   \
/* g - exp(y) * sum(g) */                                                                                           \
void log_softmax_backward_rows_##SFX(long rows, long cols, const T *restrict g, const T *restrict y,                \
                                     T *restrict out) {                                                             \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict gr = g + r * cols, *restrict yr = y + r * cols;                                           \
        T *restrict o = out + r * cols;                                                                             \
        T s = 0;                                                                                                    \
        TL_SIMD_SUM for (long j = 0; j < cols; j++) s += gr[j];                                                                 \
        for (long j = 0; j < cols; j++) o[j] = gr[j] - EXP(yr[j]) * s;                                              \
    }                                                                                                               \
}                                                                                                                   \
/* xhat = (x - mean) * rstd, rstd = 1 / sqrt(mean((x - mean)^2) + eps), per row */                                  \
void layer_norm_rows_##SFX(long rows, long cols, const T *restrict x, T eps, T *restrict xhat, T *restrict mean,    \
                           T *restrict rstd) {                                                                      \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict xr = x + r * cols;                                                                        \
        T *restrict o = xhat + r * cols;                                                                            \
        T s = 0;                                                                                                    \
        TL_SIMD_SUM for (long j = 0; j < cols; j++) s += xr[j];                                                                 \
        T mu = s / cols, v = 0;                                                                                     \
        TL_SIMD_SUMV for (long j = 0; j < cols; j++) { T d = xr[j] - mu; o[j] = d; v += d * d; }                                 \
        T rs = 1 / SQRT(v / cols + eps);                                                                            \
        for (long j = 0; j < cols; j++) o[j] = o[j] * rs;                                                           \
        mean[r] = mu;                                                                                               \
        rstd[r] = rs;                                                                                               \
    }                                                                                                               \
}                                                                                                                   \
/* rstd * (g - mean(g) - xhat * mean(g * xhat)), per row */                                                         \
void layer_norm_backward_rows_##SFX(long rows, long cols, const T *restrict g, const T *restrict xhat,              \
                                    const T *restrict rstd, T *restrict out) {                                      \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict gr = g + r * cols, *restrict xr = xhat + r * cols;                                        \
        T *restrict o = out + r * cols;                                                                             \
        T s = 0, sx = 0;                                                                                            \
        TL_SIMD_SUM2 for (long j = 0; j < cols; j++) { s += gr[j]; sx += gr[j] * xr[j]; }                                        \
        T m = s / cols, mx = sx / cols, rs = rstd[r];                                                               \
        for (long j = 0; j < cols; j++) o[j] = (gr[j] - m - xr[j] * mx) * rs;                                       \
    }                                                                                                               \
}

TL_ROW_KERNELS(f32, float, tl_exp_f32, logf, sqrtf)
TL_ROW_KERNELS(f64, double, tl_exp_f64, log, sqrt)
