/* A direct stride-1 convolution on the CPU, for the small channel counts where im2col + BLAS is slow: a (16, 72) by
 * (72, 12,544) product is too thin for OpenBLAS (about 30 GFLOP/s here), and its columns are nine copies of the
 * input. NumpyNNPrimitives.conv2d and conv2d_backward (numpy_nn.py) use it for the forward and for the input's
 * gradient (a convolution of the padded gradient with the flipped, transposed weight); they pick it by size.
 *
 *   out[n, o, y, x] = bias[o] + sum over (ci, ky, kx) of w[o, ci, ky, kx] * xp[n, ci, y + ky, x + kx]
 *
 * xp is the input already padded, with rows at least ceil(ow / B) * B + kw - 1 long (B = 2 vectors of pixels), so
 * every block reads whole vectors; the weights' output channels are padded to a multiple of 4 with zeros.
 *
 * The register tile: 4 output channels by B output pixels of one row, eight vector accumulators (GCC's vector
 * extensions keep them in registers on AVX2 and AVX-512 alike; plain loops over an accumulator array did not), and
 * the tap's two input vectors (IN_REGISTERS): 11 of AVX2's 16 vector registers.
 * Each tap broadcasts four weights and reads two vectors of one input row. Each output adds its taps in the order
 * (ci, ky, kx) from 0, as the GEMM over im2col's rows does, with FMAs: the tests compare with NumPy's float64 within
 * a bound. */

#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"  /* (built without AVX: GCC notes the vectors' ABI; nothing is exported) */
#endif

/* Keep the two input vectors of a tap in registers. Without this GCC folds their loads into each of the eight FMAs
 * as memory operands: 12 loads per 8 FMAs made the kernel load-bound (a (64, 8, 14, 14) -> 16 forward: 792 us,
 * 491 us with it). An empty asm statement that "modifies" them pins them (x86 with AVX; elsewhere left out). */
#if defined(__AVX__)  /* (a 32-byte vector in one register: AVX and up; without it the vectors are split) */
#define IN_REGISTERS(a, b) __asm__("" : "+x"(a), "+x"(b))
#else
#define IN_REGISTERS(a, b) ((void)0)
#endif

#define TL_DIRECT(SFX, T)                                                                                           \
typedef T v_##SFX __attribute__((vector_size(32)));                                                                 \
enum { L_##SFX = 32 / sizeof(T), B_##SFX = 2 * L_##SFX };                                                           \
static inline v_##SFX ld_##SFX(const T *p) { v_##SFX v; memcpy(&v, p, sizeof v); return v; }                      \
static inline void st_##SFX(T *p, v_##SFX v) { memcpy(p, &v, sizeof v); }                                         \
                                                                                                                    \
/* the eight accumulators of one tile; kw a constant where inlined with one (3: the usual kernel) */                \
static inline __attribute__((always_inline)) void                                                                   \
tile_##SFX(long c, long hp, long wp, long kh, const long kw, const T *restrict xrow, const T *restrict w,           \
           long wstride, v_##SFX acc[8]) {                                                                          \
    v_##SFX a00 = {0}, a01 = {0}, a10 = {0}, a11 = {0}, a20 = {0}, a21 = {0}, a30 = {0}, a31 = {0};                 \
    for (long ci = 0; ci < c; ci++)                                                                                 \
        for (long ky = 0; ky < kh; ky++) {                                                                          \
            const T *row = xrow + (ci * hp + ky) * wp;                                                              \
            const T *w0 = w + (ci * kh + ky) * kw;                                                                  \
            for (long kx = 0; kx < kw; kx++) {                                                                      \
                v_##SFX p0 = ld_##SFX(row + kx), p1 = ld_##SFX(row + kx + L_##SFX);                                 \
                IN_REGISTERS(p0, p1);                                                                               \
                T s0 = w0[kx], s1 = w0[wstride + kx], s2 = w0[2 * wstride + kx], s3 = w0[3 * wstride + kx];         \
                a00 += s0 * p0; a01 += s0 * p1;                                                                     \
                a10 += s1 * p0; a11 += s1 * p1;                                                                     \
                a20 += s2 * p0; a21 += s2 * p1;                                                                     \
                a30 += s3 * p0; a31 += s3 * p1;                                                                     \
            }                                                                                                       \
        }                                                                                                           \
    acc[0] = a00; acc[1] = a01; acc[2] = a10; acc[3] = a11;                                                         \
    acc[4] = a20; acc[5] = a21; acc[6] = a30; acc[7] = a31;                                                         \
}                                                                                                                   \
                                                                                                                    \
/* geo: n c hp wp oc_padded kh kw oh ow oc; bias may be NULL */                                                     \
void conv_direct_##SFX(const long *restrict geo, const T *restrict xp, const T *restrict w,                         \
                       const T *restrict bias, T *restrict out) {                                                   \
    long n_ = geo[0], c = geo[1], hp = geo[2], wp = geo[3], ocp = geo[4], kh = geo[5], kw = geo[6];                \
    long oh = geo[7], ow = geo[8], oc = geo[9], wstride = c * kh * kw;                                              \
    for (long n = 0; n < n_; n++)                                                                                   \
        for (long o0 = 0; o0 < ocp; o0 += 4)                                                                        \
            for (long y = 0; y < oh; y++)                                                                           \
                for (long x0 = 0; x0 < ow; x0 += B_##SFX) {                                                         \
                    v_##SFX acc[8];                                                                                 \
                    const T *xrow = xp + (n * c * hp + y) * wp + x0, *w0 = w + o0 * wstride;                        \
                    if (kw == 3) tile_##SFX(c, hp, wp, kh, 3, xrow, w0, wstride, acc);                              \
                    else tile_##SFX(c, hp, wp, kh, kw, xrow, w0, wstride, acc);                                     \
                    long nx = ow - x0 < B_##SFX ? ow - x0 : B_##SFX;                                                \
                    for (int j = 0; j < 4 && o0 + j < oc; j++) {                                                    \
                        v_##SFX b = {0};                                                                            \
                        if (bias) b += bias[o0 + j];                                                                \
                        T *dst = out + ((n * oc + o0 + j) * oh + y) * ow + x0;                                      \
                        if (nx == B_##SFX) {                                                                        \
                            st_##SFX(dst, acc[2 * j] + b);                                                          \
                            st_##SFX(dst + L_##SFX, acc[2 * j + 1] + b);                                            \
                        } else { /* the row's last, partial block */                                                \
                            T tmp[B_##SFX];                                                                         \
                            st_##SFX(tmp, acc[2 * j] + b);                                                          \
                            st_##SFX(tmp + L_##SFX, acc[2 * j + 1] + b);                                            \
                            memcpy(dst, tmp, nx * sizeof(T));                                                       \
                        }                                                                                           \
                    }                                                                                               \
                }                                                                                                   \
}

TL_DIRECT(f32, float)
TL_DIRECT(f64, double)
