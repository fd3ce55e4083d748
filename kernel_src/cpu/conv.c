/* im2col and col2im for a 2-D convolution on the CPU: the copies around its one matrix multiply, any stride,
 * padding and dilation. NumpyNNPrimitives' im2col, col2im, conv2d and conv2d_backward (numpy_nn.py) are the
 * reference; these kernels give the same values bit for bit (copies are exact, and each pixel's sum adds its taps in
 * the same order from 0).
 *
 * The columns' element (c, i, j, n, oh, ow) is at c*sc + (i*KW + j)*st + n*sn + oh*OW + ow, so one kernel writes
 * both the convolution's (C*KH*KW, N*OH*OW) layout and the Im2Col node's (N, C*KH*KW, OH*OW).
 *
 * Not here: the "wide" columns of a stride-1 convolution (numpy_nn._wide_cols). NumPy builds those as a few long
 * copies at memory speed; a C version measured 1.5-3x slower (a (64, 8, 14, 14) input: 531 against 173 us), since
 * it copies OW-long pieces. */

#include <string.h>

/* geometry of the image and of the kernel, passed as one array of longs:
 * n c h w kh kw sh sw ph pw dh dw oh ow */
enum { G_N, G_C, G_H, G_W, G_KH, G_KW, G_SH, G_SW, G_PH, G_PW, G_DH, G_DW, G_OH, G_OW };

#define TL_CONV(SFX, T)                                                                                             \
/* general columns (see the top); padding taps are 0 */                                                             \
void im2col_##SFX(const long *restrict geo, const T *restrict x, T *restrict cols, long sn, long sc, long st) {     \
    long n_ = geo[G_N], c_ = geo[G_C], h = geo[G_H], w = geo[G_W], kw = geo[G_KW], sh = geo[G_SH];                \
    long sw = geo[G_SW], oh = geo[G_OH], ow = geo[G_OW], taps = geo[G_KH] * kw;                                     \
    for (long n = 0; n < n_; n++)                                                                                   \
        for (long c = 0; c < c_; c++)                                                                               \
            for (long t = 0; t < taps; t++) {                                                                       \
                long i = t / kw, j = t % kw;                                                                        \
                const T *restrict plane = x + (n * c_ + c) * h * w;                                                 \
                T *restrict d = cols + n * sn + c * sc + t * st;                                                    \
                for (long a = 0; a < oh; a++) {                                                                     \
                    long r = a * sh - geo[G_PH] + i * geo[G_DH], c0 = j * geo[G_DW] - geo[G_PW];                    \
                    T *restrict drow = d + a * ow;                                                                  \
                    if (r < 0 || r >= h) {                                                                          \
                        memset(drow, 0, ow * sizeof(T));                                                            \
                        continue;                                                                                   \
                    }                                                                                               \
                    const T *restrict src = plane + r * w;                                                          \
                    long lo = c0 < 0 ? (-c0 + sw - 1) / sw : 0, hi = (w - c0 + sw - 1) / sw;  /* b in [lo, hi) */  \
                    hi = hi < ow ? hi : ow;                                                                         \
                    hi = hi > lo ? hi : lo;                                                                         \
                    for (long b = 0; b < lo; b++) drow[b] = (T)0;                                                   \
                    if (sw == 1) memcpy(drow + lo, src + lo + c0, (hi - lo) * sizeof(T));                           \
                    else for (long b = lo; b < hi; b++) drow[b] = src[b * sw + c0];                                 \
                    for (long b = hi; b < ow; b++) drow[b] = (T)0;                                                  \
                }                                                                                                   \
            }                                                                                                       \
}                                                                                                                   \
/* the adjoint of im2col_: gx (N, C, H, W) gets every column entry added back into the pixel it was read from,     \
 * tap after tap (each pixel's sum in tap order, from 0, as numpy_nn._add_taps) */                                  \
void col2im_##SFX(const long *restrict geo, const T *restrict cols, T *restrict gx, long sn, long sc, long st) {    \
    long n_ = geo[G_N], c_ = geo[G_C], h = geo[G_H], w = geo[G_W], kw = geo[G_KW], sh = geo[G_SH];                \
    long sw = geo[G_SW], oh = geo[G_OH], ow = geo[G_OW], taps = geo[G_KH] * kw;                                     \
    memset(gx, 0, n_ * c_ * h * w * sizeof(T));                                                                     \
    for (long n = 0; n < n_; n++)                                                                                   \
        for (long c = 0; c < c_; c++) {                                                                             \
            T *restrict plane = gx + (n * c_ + c) * h * w;                                                          \
            for (long t = 0; t < taps; t++) {                                                                       \
                long i = t / kw, j = t % kw, c0 = j * geo[G_DW] - geo[G_PW];                                        \
                const T *restrict s = cols + n * sn + c * sc + t * st;                                              \
                for (long a = 0; a < oh; a++) {                                                                     \
                    long r = a * sh - geo[G_PH] + i * geo[G_DH];                                                    \
                    if (r < 0 || r >= h) continue;                                                                  \
                    T *restrict dst = plane + r * w;                                                                \
                    const T *restrict srow = s + a * ow;                                                            \
                    if (sw == 1) {                                                                                  \
                        long lo = c0 < 0 ? -c0 : 0, hi = w - c0 < ow ? w - c0 : ow;                                 \
                        for (long b = lo; b < hi; b++) dst[b + c0] += srow[b];                                      \
                    } else {                                                                                        \
                        for (long b = 0; b < ow; b++) {                                                             \
                            long col = b * sw + c0;                                                                 \
                            if (col >= 0 && col < w) dst[col] += srow[b];                                           \
                        }                                                                                           \
                    }                                                                                               \
                }                                                                                                   \
            }                                                                                                       \
        }                                                                                                           \
}

TL_CONV(f32, float)
TL_CONV(f64, double)
