/* GELU forward on the CPU in float32, exact (x Phi(x)) and tanh forms, with its derivative for the backward: one
 * pass where numpy_special.py makes 26 to 30. The same formulas as that file's float32 code, its reference:
 *   exact: Phi(x) = 0.5 + sign(x) (0.5 - Q(|x|)), Q(a) = exp(-a^2 / 2) G(t), t = 1 / (1 + 0.3 a), G a degree-5
 *          polynomial (absolute error of Phi 2.7e-7 in float32); gelu'(x) = Phi(x) + x exp(-x^2 / 2) / sqrt(2 pi);
 *   tanh:  t = tanh(c (x + k x^3)), y = 0.5 x (1 + t), gelu'(x) = 0.5 x (1 - t^2) c (1 + 3 k x^2) + 0.5 (1 + t). */
#include "vmath.h"

static const float G0 = 0.015243018292617525f, G1 = -0.0027453547569624426f, G2 = 0.5226115017929677f,
                   G3 = -0.5748506957694559f, G4 = 0.6868172578374634f, G5 = -0.1470756777483952f;
static const float INV_SQRT_2PI = 0.3989422804014327f, TANH_C = 0.7978845608028654f, TANH_K = 0.044715f;

/* y = gelu(x); d = gelu'(x) unless d is NULL */
void gelu_exact_f32(long n, const float *restrict x, float *restrict y, float *restrict d) {
    for (long i = 0; i < n; i++) {
        float v = x[i], a = __builtin_fabsf(v);
        float e = tl_exp_f32(-0.5f * a * a);
        float t = 1.0f / (1.0f + 0.3f * a);
        float q = ((((G5 * t + G4) * t + G3) * t + G2) * t + G1) * t + G0;
        q *= e;                                         /* Q(|x|) */
        float s = v * 1.2676506e30f;                    /* sign(x), and x * 2^100 where |x| < 2^-100 */
        s = s > 1.0f ? 1.0f : (s < -1.0f ? -1.0f : s);
        float cdf = 0.5f + (0.5f - q) * s;
        y[i] = v * cdf;
        if (d) d[i] = v * e * INV_SQRT_2PI + cdf;
    }
}

void gelu_tanh_f32(long n, const float *restrict x, float *restrict y, float *restrict d) {
    for (long i = 0; i < n; i++) {
        float v = x[i];
        float t = tl_tanh_f32((v * v * v * TANH_K + v) * TANH_C);
        y[i] = v * 0.5f * (t + 1.0f);
        if (d) d[i] = v * 0.5f * (1.0f - t * t) * ((v * v * (3.0f * TANH_K) + 1.0f) * TANH_C) + (t + 1.0f) * 0.5f;
    }
}
