/* Softmax cross-entropy of (rows, cols) logits against class indices, forward and backward, without label
 * smoothing (NumpyNNPrimitives.cross_entropy's other cases stay NumPy's): one pass over each row for the
 * log-probabilities and the loss, one for the gradient, where NumPy also builds a dense (rows, cols) matrix of
 * coefficients. a_y is each row's coefficient: its class's weight (1 without weights), 0 for an ignored row.
 * The targets are checked by the caller (in range, or ignore_index). */
#include <math.h>
#include "vmath.h"

#define TL_CE(SFX, T, EXP, LOG)                                                                                     \
void cross_entropy_fwd_##SFX(long rows, long cols, const T *restrict logits, const long long *restrict target,     \
                             const T *restrict weight, long long ignore_index, T *restrict loss, T *restrict logp, \
                             T *restrict a_y) {                                                                     \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict x = logits + r * cols;                                                                    \
        T *restrict lp = logp + r * cols;                                                                           \
        T m = x[0];                                                                                                 \
        int nan = 0;                                                                                                \
        _Pragma("omp simd reduction(max:m) reduction(|:nan)")                                                       \
        for (long j = 0; j < cols; j++) { m = x[j] > m ? x[j] : m; nan |= x[j] != x[j]; }                           \
        if (nan) m = (T)NAN;                                                                                        \
        T s = 0;                                                                                                    \
        _Pragma("omp simd reduction(+:s)")                                                                          \
        for (long j = 0; j < cols; j++) { lp[j] = x[j] - m; s += EXP(lp[j]); }                                      \
        T ls = LOG(s);                                                                                              \
        for (long j = 0; j < cols; j++) lp[j] = lp[j] - ls;                                                         \
        long long y = target[r];                                                                                    \
        T a = y == ignore_index ? 0 : (weight ? weight[y] : 1);                                                     \
        a_y[r] = a;                                                                                                 \
        loss[r] = a != 0 ? -(a * lp[y]) : 0;                                                                        \
    }                                                                                                               \
}                                                                                                                   \
/* d loss_r / d logits_rj = (p_rj - [j = y_r]) a_y_r g_r; g: one value per row, or one for all (g_stride 0) */      \
void cross_entropy_bwd_##SFX(long rows, long cols, const T *restrict logp, const long long *restrict target,       \
                             const T *restrict a_y, const T *restrict g, long g_stride, T *restrict out) {          \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict lp = logp + r * cols;                                                                     \
        T *restrict o = out + r * cols;                                                                             \
        T a = a_y[r], gr = g[r * g_stride];                                                                         \
        for (long j = 0; j < cols; j++) o[j] = (EXP(lp[j]) * a) * gr;                                               \
        if (a != 0) o[target[r]] = (EXP(lp[target[r]]) * a - a) * gr;                                               \
    }                                                                                                               \
}

TL_CE(f32, float, tl_exp_f32, logf)
TL_CE(f64, double, tl_exp_f64, log)
