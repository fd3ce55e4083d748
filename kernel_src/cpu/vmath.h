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
/* softplus log(1 + e^x) as torch's (beta 1, threshold 20: x itself above 20), written so that nothing overflows */
static inline float tl_softplus_f32(float x) {
    return x > 20.0f ? x : (x > 0.0f ? x : 0.0f) + log1pf(tl_exp_f32(-fabsf(x)));
}
static inline double tl_softplus_f64(double x) {
    return x > 20.0 ? x : (x > 0.0 ? x : 0.0) + log1p(tl_exp_f64(-fabs(x)));
}

#endif
