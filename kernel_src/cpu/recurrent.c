/* One time step of an LSTM or GRU layer on the CPU, forward and backward: the elementwise work between the step's
 * matrix products, in one pass (backends/numpy_recurrent.py runs the products with BLAS and calls these between
 * them; its NumPy code is the reference they are tested against). Formulas and gate orders are PyTorch's.
 *
 * Each kernel exists for float and double (the _f32 and _f64 names). Matrices are row-major with a row stride in
 * elements (the states of a layer are [h | c] rows: h and c are strided views of them). */
#include "vmath.h"

#define TL_LSTM_CELL_FWD(NAME, T, SIG, TANH)                                                                        \
/* gates (rows, 4H): h W_hh^T on entry; on return the gates after their nonlinearities (input, forget, cell,        \
 * output). xp: the step's input projection (rows, 4H); bias: b_hh (4H). c' = f c + i g; m = o tanh(c'). */      \
void NAME(long rows, long H, T *restrict gates, const T *restrict xp, const T *restrict bias,                      \
          const T *restrict c_prev, long cp_stride, T *restrict c_out, long co_stride, T *restrict m_out,           \
          long m_stride) {                                                                                          \
    for (long r = 0; r < rows; r++) {                                                                               \
        T *restrict g = gates + r * 4 * H;                                                                          \
        const T *restrict x = xp + r * 4 * H, *restrict cp = c_prev + r * cp_stride;                                \
        T *restrict c = c_out + r * co_stride, *restrict m = m_out + r * m_stride;                                  \
        for (long j = 0; j < H; j++) {                                                                              \
            T i = SIG(g[j] + x[j] + bias[j]), f = SIG(g[H + j] + x[H + j] + bias[H + j]);                           \
            T gg = TANH(g[2 * H + j] + x[2 * H + j] + bias[2 * H + j]);                                             \
            T o = SIG(g[3 * H + j] + x[3 * H + j] + bias[3 * H + j]);                                               \
            g[j] = i; g[H + j] = f; g[2 * H + j] = gg; g[3 * H + j] = o;                                            \
            T cn = f * cp[j] + i * gg;                                                                              \
            c[j] = cn;                                                                                              \
            m[j] = o * TANH(cn);                                                                                    \
        }                                                                                                           \
    }                                                                                                               \
}

#define TL_LSTM_CELL_BWD(NAME, T, TANH)                                                                             \
/* From the gates after their nonlinearities, c_t and c_{t-1}, dm (the gradient of m = o tanh(c_t)) and gc (of      \
 * c_t from outside the step: the output and the next step): dgates (rows, 4H), the gradient of the gates before   \
 * their nonlinearities, and dc_prev (rows, H), of c_{t-1}. */                                                      \
void NAME(long rows, long H, const T *restrict gates, const T *restrict c_t, long ct_stride,                       \
          const T *restrict c_prev, long cp_stride, const T *restrict dm, const T *restrict gc, long gc_stride,    \
          T *restrict dgates, T *restrict dc_prev) {                                                                \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict g = gates + r * 4 * H, *restrict c = c_t + r * ct_stride;                                \
        const T *restrict cp = c_prev + r * cp_stride;                                                              \
        const T *restrict d = dm + r * H, *restrict dcn = gc + r * gc_stride;                                       \
        T *restrict dg = dgates + r * 4 * H, *restrict dcp = dc_prev + r * H;                                       \
        for (long j = 0; j < H; j++) {                                                                              \
            T i = g[j], f = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];                                          \
            T tc = TANH(c[j]);                                                                                      \
            T dct = dcn[j] + d[j] * o * (1 - tc * tc);                                                              \
            dg[j] = dct * gg * i * (1 - i);                                                                         \
            dg[H + j] = dct * cp[j] * f * (1 - f);                                                                  \
            dg[2 * H + j] = dct * i * (1 - gg * gg);                                                                \
            dg[3 * H + j] = d[j] * tc * o * (1 - o);                                                                \
            dcp[j] = dct * f;                                                                                       \
        }                                                                                                           \
    }                                                                                                               \
}

#define TL_GRU_CELL_FWD(NAME, T, SIG, TANH)                                                                         \
/* hh (rows, 3H): h W_hh^T + b_hh; xp (rows, 3H): the input projection. gates (rows, 3H) get r, z, n; hn (rows, H)  \
 * the new gate's part of hh; h_out (strided) h' = n + z (h - n). */                                                \
void NAME(long rows, long H, const T *restrict hh, const T *restrict xp, const T *restrict h_prev, long hp_stride, \
          T *restrict h_out, long ho_stride, T *restrict gates, T *restrict hn) {                                   \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict a = hh + r * 3 * H, *restrict x = xp + r * 3 * H, *restrict hp = h_prev + r * hp_stride; \
        T *restrict g = gates + r * 3 * H, *restrict h = h_out + r * ho_stride, *restrict n_h = hn + r * H;        \
        for (long j = 0; j < H; j++) {                                                                              \
            T rr = SIG(x[j] + a[j]), z = SIG(x[H + j] + a[H + j]);                                                  \
            T n = TANH(x[2 * H + j] + rr * a[2 * H + j]);                                                           \
            g[j] = rr; g[H + j] = z; g[2 * H + j] = n; n_h[j] = a[2 * H + j];                                       \
            h[j] = n + z * (hp[j] - n);                                                                             \
        }                                                                                                           \
    }                                                                                                               \
}

#define TL_GRU_CELL_BWD(NAME, T)                                                                                    \
/* From the gates, hn, h_{t-1} and d (rows, H: the gradient of h_t): dx (rows, 3H) of the input projection, dhh   \
 * (rows, 3H) of h W_hh^T + b_hh, and dh_direct (rows, H) = d z, the part of h_{t-1}'s gradient not through W_hh. */ \
void NAME(long rows, long H, const T *restrict gates, const T *restrict hn, const T *restrict h_prev,               \
          long hp_stride, const T *restrict d, T *restrict dx, T *restrict dhh, T *restrict dh_direct) {            \
    for (long r = 0; r < rows; r++) {                                                                               \
        const T *restrict g = gates + r * 3 * H, *restrict a = hn + r * H;                                         \
        const T *restrict hp = h_prev + r * hp_stride, *restrict dd = d + r * H;                                    \
        T *restrict x = dx + r * 3 * H, *restrict b = dhh + r * 3 * H, *restrict dh = dh_direct + r * H;            \
        for (long j = 0; j < H; j++) {                                                                              \
            T rr = g[j], z = g[H + j], n = g[2 * H + j];                                                            \
            T dn = dd[j] * (1 - z) * (1 - n * n);                                                                   \
            T dr = dn * a[j] * rr * (1 - rr);                                                                       \
            T dz = dd[j] * (hp[j] - n) * z * (1 - z);                                                               \
            x[j] = dr; x[H + j] = dz; x[2 * H + j] = dn;                                                            \
            b[j] = dr; b[H + j] = dz; b[2 * H + j] = dn * rr;                                                       \
            dh[j] = dd[j] * z;                                                                                      \
        }                                                                                                           \
    }                                                                                                               \
}

TL_LSTM_CELL_FWD(lstm_cell_fwd_f32, float, tl_sigmoid_f32, tl_tanh_f32)
TL_LSTM_CELL_FWD(lstm_cell_fwd_f64, double, tl_sigmoid_f64, tl_tanh_f64)
TL_LSTM_CELL_BWD(lstm_cell_bwd_f32, float, tl_tanh_f32)
TL_LSTM_CELL_BWD(lstm_cell_bwd_f64, double, tl_tanh_f64)
TL_GRU_CELL_FWD(gru_cell_fwd_f32, float, tl_sigmoid_f32, tl_tanh_f32)
TL_GRU_CELL_FWD(gru_cell_fwd_f64, double, tl_sigmoid_f64, tl_tanh_f64)
TL_GRU_CELL_BWD(gru_cell_bwd_f32, float)
TL_GRU_CELL_BWD(gru_cell_bwd_f64, double)
