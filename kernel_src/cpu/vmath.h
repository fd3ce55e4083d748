/* Transcendental functions written as plain arithmetic, so that a loop over them vectorizes (gcc -O3 turns a call to
 * expf or tanhf into one scalar libm call per element; these become a few vector instructions per 8 or 16 elements).
 *
 * Accuracy against a float64 reference (tests/test_cpu_kernels.py checks it on every run):
 *   tl_exp: at most 2 ulp in float32 and float64 (Cephes' range reduction and polynomials);
 *   tl_tanh, tl_sigmoid: at most 3 ulp, except tl_sigmoid where its result is below 1e-30 (relative 1e-6 there).
 * Special values follow C's: exp(-inf) = 0, exp(+inf) = +inf, tanh(+-inf) = +-1, NaN in gives NaN out.
 */
#ifndef TL_VMATH_H
#define TL_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* 2^n for an integer n in the normal range, built from its exponent bits */
static inline float tl_pow2i_f32(int32_t n) {
    uint32_t bits = (uint32_t)(n + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline double tl_pow2i_f64(int64_t n) {
    uint64_t bits = (uint64_t)(n + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* e^x = 2^n * e^r, r = x - n ln2 in [-ln2/2, ln2/2]; e^r by Cephes' polynomials. 2^n is applied in two halves,
 * so that n from the subnormal range to the overflow one needs no special case: beyond them the product is 0 or inf */
static inline float tl_exp_f32(float x) {
    float xc = x > 88.8f ? 88.8f : x;
    xc = xc < -104.0f ? -104.0f : xc;
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  /* round to nearest: 1.5 * 2^23 */
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500E-4f;
    p = p * r + 1.3981999507E-3f;
    p = p * r + 8.3334519073E-3f;
    p = p * r + 4.1665795894E-2f;
    p = p * r + 1.6666665459E-1f;
    p = p * r + 5.0000001201E-1f;
    p = p * r * r + r + 1.0f;
    int32_t k = (int32_t)n, half = k / 2;
    float y = p * tl_pow2i_f32(half) * tl_pow2i_f32(k - half);
    return x != x ? x : y;  /* NaN */
}

static inline double tl_exp_f64(double x) {
    double xc = x > 709.8 ? 709.8 : x;
    xc = xc < -746.0 ? -746.0 : xc;
    double n = (xc * 1.4426950408889634073599 + 6755399441055744.0) - 6755399441055744.0;  /* 1.5 * 2^52 */
    double r = xc - n * 6.93145751953125E-1;
    r = r - n * 1.42860682030941723212E-6;
    /* Cephes exp: e^r = 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2)) */
    double rr = r * r;
    double p = ((1.26177193074810590878E-4 * rr + 3.02994407707441961300E-2) * rr + 9.99999999999999999910E-1) * r;
    double q = ((3.00198505138664455042E-6 * rr + 2.52448340349684104192E-3) * rr + 2.27265548208155028766E-1) * rr
               + 2.00000000000000000009E0;
    double e = 1.0 + 2.0 * p / (q - p);
    int64_t k = (int64_t)n, half = k / 2;
    double y = e * tl_pow2i_f64(half) * tl_pow2i_f64(k - half);
    return x != x ? x : y;
}

/* tanh: x + x^3 P(x^2) near 0 (where 1 - 2/(e^2x + 1) would cancel), that formula elsewhere, +-1 beyond */
static inline float tl_tanh_f32(float x) {
    float a = __builtin_fabsf(x);
    float z = x * x;
    float small = ((((-5.70498872745E-3f * z + 2.06390887954E-2f) * z - 5.37397155531E-2f) * z
                    + 1.33314422036E-1f) * z - 3.33332819422E-1f) * z * x + x;
    float e = tl_exp_f32(2.0f * (a > 10.0f ? 10.0f : a));
    float big = 1.0f - 2.0f / (e + 1.0f);
    big = a > 9.0f ? 1.0f : big;
    big = x < 0 ? -big : big;
    float y = a < 0.625f ? small : big;
    return x != x ? x : y;
}

static inline double tl_tanh_f64(double x) {
    double a = __builtin_fabs(x);
    double z = x * x;
    /* Cephes tanh: x + x^3 P(x^2) / Q(x^2) for |x| < 0.625 */
    double p = (-9.64399179425052238628E-1 * z - 9.92877231001918586564E1) * z - 1.61468768441708447952E3;
    double q = ((z + 1.12811678491632931402E2) * z + 2.23548839060100448583E3) * z + 4.84406305325125486048E3;
    double small = x + x * z * p / q;
    double e = tl_exp_f64(2.0 * (a > 20.0 ? 20.0 : a));
    double big = 1.0 - 2.0 / (e + 1.0);
    big = a > 19.1 ? 1.0 : big;
    big = x < 0 ? -big : big;
    double y = a < 0.625 ? small : big;
    return x != x ? x : y;
}

/* sigmoid = 1 / (1 + e^-x): no overflow for any x (e^-x = inf gives 0) */
static inline float tl_sigmoid_f32(float x) { return 1.0f / (1.0f + tl_exp_f32(-x)); }
static inline double tl_sigmoid_f64(double x) { return 1.0 / (1.0 + tl_exp_f64(-x)); }
/* log x for x > 0: x = 2^k m with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1)/(m + 1), by the
 * polynomials of fdlibm / musl (logf.c, log.c); subnormal x scaled up first; 0, negative, inf and NaN by selects */
static inline float tl_log_f32(float x) {
    int sub = x < 1.17549435e-38f;
    float xs = sub ? x * 33554432.0f : x;  /* 2^25 */
    int32_t ix;
    memcpy(&ix, &xs, 4);
    ix += 0x3f800000 - 0x3f3504f3;
    int32_t k = (ix >> 23) - 0x7f - (sub ? 25 : 0);
    ix = (ix & 0x007fffff) + 0x3f3504f3;
    float m;
    memcpy(&m, &ix, 4);
    float f = m - 1.0f, s = f / (2.0f + f), z = s * s, w = z * z;
    float r = z * (0.66666662693f + w * 0.28498786688f) + w * (0.40000972152f + w * 0.24279078841f);
    float hfsq = 0.5f * f * f, dk = (float)k;
    float y = s * (hfsq + r) + dk * 9.0580006145e-06f - hfsq + f + dk * 6.9313812256e-01f;
    y = x == 0.0f ? -__builtin_inff() : y;
    y = x == __builtin_inff() ? x : y;
    return x < 0.0f || x != x ? __builtin_nanf("") : y;
}

static inline double tl_log_f64(double x) {
    int sub = x < 2.2250738585072014e-308;
    double xs = sub ? x * 18014398509481984.0 : x;  /* 2^54 */
    int64_t ix;
    memcpy(&ix, &xs, 8);
    int64_t hx = (ix >> 32) + 0x3ff00000 - 0x3fe6a09e;
    int64_t k = (hx >> 20) - 0x3ff - (sub ? 54 : 0);
    hx = (hx & 0x000fffff) + 0x3fe6a09e;
    ix = (int64_t)((uint64_t)hx << 32 | ((uint64_t)ix & 0xffffffffu));
    double m;
    memcpy(&m, &ix, 8);
    double f = m - 1.0, s = f / (2.0 + f), z = s * s, w = z * z;
    double t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
    double t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01
                                                                                   + w * 1.479819860511658591e-01)));
    double hfsq = 0.5 * f * f, dk = (double)k;
    double y = s * (hfsq + t2 + t1) + dk * 1.90821492927058770002e-10 - hfsq + f + dk * 6.93147180369123816490e-01;
    y = x == 0.0 ? -__builtin_inf() : y;
    y = x == __builtin_inf() ? x : y;
    return x < 0.0 || x != x ? __builtin_nan("") : y;
}

/* log(1 + u): log of w = 1 + u, corrected by the rounding of that sum, (u - (w - 1)) / w */
static inline float tl_log1p_f32(float u) {
    float w = 1.0f + u;
    float c = w == 1.0f || w == 0.0f || w == __builtin_inff() ? 0.0f : (u - (w - 1.0f)) / w;
    return w == 1.0f ? u : tl_log_f32(w) + c;
}

static inline double tl_log1p_f64(double u) {
    double w = 1.0 + u;
    double c = w == 1.0 || w == 0.0 || w == __builtin_inf() ? 0.0 : (u - (w - 1.0)) / w;
    return w == 1.0 ? u : tl_log_f64(w) + c;
}

/* softplus log(1 + e^x) as torch's (beta 1, threshold 20: x itself above 20), written so that nothing overflows */
static inline float tl_softplus_f32(float x) {
    return x > 20.0f ? x : (x > 0.0f ? x : 0.0f) + tl_log1p_f32(tl_exp_f32(-__builtin_fabsf(x)));
}
static inline double tl_softplus_f64(double x) {
    return x > 20.0 ? x : (x > 0.0 ? x : 0.0) + tl_log1p_f64(tl_exp_f64(-__builtin_fabs(x)));
}

#endif
