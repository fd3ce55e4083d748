/* Max-pooling over (planes, H, W) on the CPU: forward with the argmax of each window, and backward from it.
 *
 * PyTorch's rule picks the argmax (aten/src/ATen/native/cpu/MaxPoolKernel.cpp): the window's taps in row-major
 * order, padding skipped, and a tap wins when "val > max or isnan(val)". So the first maximum wins, a NaN wins
 * over anything before it (the last NaN of a window wins), and a window of -inf keeps its first in-bounds tap.
 * The argmax is the flat index h * W + w inside the plane, as torch's return_indices.
 *
 * Geometry as one array of longs: planes h w oh ow kh kw sh sw ph pw dh dw. */

/* 256-bit vectors: the rows are short (7-56 windows), and a 512-bit loop would leave most of them to its scalar tail */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#pragma GCC target("prefer-vector-width=256")
#endif

enum { P_PLANES, P_H, P_W, P_OH, P_OW, P_KH, P_KW, P_SH, P_SW, P_PH, P_PW, P_DH, P_DW };

#define TL_POOL(SFX, T)                                                                                             \
/* tap by tap over each output row, so that the inner loop runs along the row's windows and vectorizes (window by  \
 * window, the chain of compares over the taps does not); an argmax of -1 marks a window no in-bounds tap reached */\
void max_pool2d_fwd_##SFX(const long *restrict geo, const T *restrict x, T *restrict out, int *restrict argmax) {   \
    long h = geo[P_H], w = geo[P_W], oh = geo[P_OH], ow = geo[P_OW], kh = geo[P_KH], kw = geo[P_KW];              \
    long sh = geo[P_SH], sw = geo[P_SW], ph = geo[P_PH], pw = geo[P_PW], dh = geo[P_DH], dw = geo[P_DW];            \
    for (long p = 0; p < geo[P_PLANES]; p++) {                                                                      \
        const T *restrict xp = x + p * h * w;                                                                       \
        for (long i = 0; i < oh; i++) {                                                                             \
            T *restrict best = out + (p * oh + i) * ow;                                                             \
            int *restrict at = argmax + (p * oh + i) * ow;                                                          \
            for (long j = 0; j < ow; j++) {                                                                         \
                best[j] = (T)0;                                                                                     \
                at[j] = -1;                                                                                         \
            }                                                                                                       \
            for (long u = 0; u < kh; u++) {                                                                         \
                long r = i * sh - ph + u * dh;                                                                      \
                if (r < 0 || r >= h) continue;                                                                      \
                const T *restrict xr = xp + r * w;                                                                  \
                for (long v = 0; v < kw; v++) {                                                                     \
                    long c0 = v * dw - pw;  /* the windows j in [lo, hi) read columns j * sw + c0 inside the row */ \
                    long lo = c0 < 0 ? (-c0 + sw - 1) / sw : 0, hi = (w - c0 + sw - 1) / sw;                        \
                    int base = (int)(r * w + c0);                                                                   \
                    for (long j = lo; j < (hi < ow ? hi : ow); j++) {                                               \
                        T val = xr[j * sw + c0];                                                                    \
                        int wins = (val > best[j]) | (val != val) | (at[j] < 0);  /* (| not ||: no branches) */     \
                        best[j] = wins ? val : best[j];                                                             \
                        at[j] = wins ? base + (int)(j * sw) : at[j];                                                \
                    }                                                                                               \
                }                                                                                                   \
            }                                                                                                       \
        }                                                                                                           \
    }                                                                                                               \
}                                                                                                                   \
/* gx (planes, H, W) = 0, plus each window's gradient at its argmax, windows in order (overlaps add up there, as   \
 * in torch's loop) */                                                                                              \
void max_pool2d_bwd_##SFX(long planes, long hw, long ohw, const T *restrict g, const int *restrict argmax,          \
                          T *restrict gx) {                                                                         \
    for (long k = 0; k < planes * hw; k++) gx[k] = (T)0;                                                            \
    for (long p = 0; p < planes; p++) {                                                                             \
        T *restrict dst = gx + p * hw;                                                                              \
        const T *restrict src = g + p * ohw;                                                                        \
        const int *restrict at = argmax + p * ohw;                                                                  \
        for (long k = 0; k < ohw; k++)                                                                              \
            if (at[k] >= 0) dst[at[k]] += src[k];                                                                   \
    }                                                                                                               \
}

TL_POOL(f32, float)
TL_POOL(f64, double)

/* The backward of numpy_nn._max_pool_pairs (2x2, stride 2, float32, even width): its state is two masks per window,
 * "the right column won" (per row of the pair) and "the bottom row won"; gx (planes, H, W) gets each window's
 * gradient at the tap they name, and 0 elsewhere (an odd last row stays 0). */
void max_pool2x2_pairs_bwd_f32(long planes, long h, long w, const float *restrict g, const unsigned char *restrict right,
                               const unsigned char *restrict bottom, float *restrict gx) {
    long oh = h / 2, ow = w / 2;
    for (long k = 0; k < planes * h * w; k++) gx[k] = 0.0f;
    for (long p = 0; p < planes; p++)
        for (long i = 0; i < oh; i++) {
            const float *restrict src = g + (p * oh + i) * ow;
            const unsigned char *restrict b = bottom + (p * oh + i) * ow;
            const unsigned char *restrict r0 = right + (p * 2 * oh + 2 * i) * ow;  /* (planes, 2*OH, OW) */
            float *restrict top = gx + (p * h + 2 * i) * w;
            for (long j = 0; j < ow; j++) {  /* (arithmetic, not branches: the masks of real data are random) */
                long down = b[j], right = r0[j] + down * (r0[ow + j] - r0[j]);
                top[down * w + 2 * j + right] = src[j] + 0.0f;  /* (+0.0f: -0.0 becomes 0.0, as torch's sum) */
            }
        }
}
