// elementwise.cuh -- per-element math, strided index math and the grid-stride loop bodies shared by the
// kernels of elementwise.cu (and copy_cast.cu, which reuses EwLayout, ew_offsets and EwVec).
//
// Everything here is __host__ __device__ so that tests/test_kernels_host_elementwise.py can compile it for
// the CPU and run the very same loop bodies over an emulated grid (the threads of these kernels are
// independent: thread `tid` of `nthreads` handles elements tid, tid + nthreads, ...).
//
// Conventions
// -----------
// * Sizes, strides and offsets are element counts (long long), never bytes.
// * EwLayout describes how an operand is read while iterating over the (contiguous, row-major) OUTPUT
//   shape: shape[d] is the output's extent along d (the same in every operand's layout of one launch),
//   stride[d] the operand's stride along d, 0 where the operand is broadcast. Dims ndim..7 are ignored.
//   Python packing (136 bytes, 8-aligned): struct.pack("8q8qii", *shape8, *stride8, ndim, 0).
//   A view's storage offset is applied by the host to the pointer it passes.
// * float16 is __half storage with float32 arithmetic; the result is rounded once (round-to-nearest-even).
// * bool is unsigned char storage holding 0 or 1 ("_bool" kernels); any nonzero byte reads as true.
// * Integer arithmetic wraps modulo 2^bits (computed in unsigned), like NumPy and PyTorch.
//
// Op codes (also the Python-readable tables below, which the host tests check against the constants):
//
// EW_UNARY_OPS = {"neg": 0, "abs": 1, "sign": 2, "exp": 3, "log": 4, "sqrt": 5, "rsqrt": 6, "sin": 7,
//     "cos": 8, "tanh": 9, "sigmoid": 10, "relu": 11, "erf": 12, "reciprocal": 13, "square": 14,
//     "floor": 15, "ceil": 16, "trunc": 17, "round": 18, "log1p": 19, "expm1": 20, "silu": 21,
//     "gelu": 22, "gelu_tanh": 23, "log2": 24, "exp2": 25, "identity": 26,
//     "add_s": 32, "sub_s": 33, "rsub_s": 34, "mul_s": 35, "div_s": 36, "rdiv_s": 37, "pow_s": 38,
//     "rpow_s": 39, "max_s": 40, "min_s": 41, "clamp": 42, "leaky_relu": 43, "elu": 44, "softplus": 45,
//     "affine": 46}
// EW_UNARY_INT_OPS = ["neg", "abs", "sign", "square", "identity", "add_s", "sub_s", "rsub_s", "mul_s",
//     "max_s", "min_s", "clamp", "affine"]
// EW_BINARY_OPS = {"add": 0, "sub": 1, "mul": 2, "div": 3, "pow": 4, "maximum": 5, "minimum": 6,
//     "relu_backward": 7, "tanh_backward": 8, "sigmoid_backward": 9}
// EW_BINARY_INT_OPS = ["add", "sub", "mul", "maximum", "minimum"]
// EW_COMPARE_OPS = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5, "logical_and": 6,
//     "logical_or": 7, "logical_xor": 8}
// EW_PREDICATE_OPS = {"isnan": 0, "isinf": 1, "isfinite": 2, "logical_not": 3, "nonzero": 4}
//
// Semantics (x the element, a and b the kernel's scalar arguments; PyTorch's where the two libraries differ):
//   sign(NaN) = 0 and sign(+-0) = +0 (PyTorch); relu: x < 0 ? 0 : x (NaN and -0.0 pass, as in PyTorch);
//   rsqrt = 1 / sqrt(x) (correctly rounded, not the hardware approximation); round = half to even;
//   sigmoid = 1/(1+e) for x >= 0, e/(1+e) otherwise, e = exp(-|x|); silu = x / (1 + exp(-x));
//   gelu = 0.5 x (1 + erf(x / sqrt 2)); gelu_tanh = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));
//   add_s x+a; sub_s x-a; rsub_s a-x; mul_s x*a; div_s x/a; rdiv_s a/x; pow_s x^a; rpow_s a^x;
//   max_s / min_s: maximum(x, a) / minimum(x, a), NaN-propagating; clamp: min(max(x, a), b), NaN stays
//   NaN (pass a = -inf or b = +inf for a one-sided clamp); leaky_relu: x > 0 ? x : a x;
//   elu: x > 0 ? x : a expm1(x); softplus (beta a, threshold b): a x > b ? x : logaddexp(0, a x) / a;
//   affine: x * a + b (two roundings, not an fma).
//   maximum/minimum: NaN if either is NaN, otherwise on ties the first operand (PyTorch's -0.0/0.0 order).
//   relu_backward(g, y) = y <= 0 ? 0 : g (NaN y passes g); tanh_backward(g, y) = g (1 - y y);
//   sigmoid_backward(g, y) = (g y)(1 - y).
//   Comparisons with NaN are false except ne; logical_* treat nonzero (and NaN) as true.
//   isnan/isinf are false for integer and bool inputs, isfinite true; nonzero = cast to bool.
//   Integer variants (i64, i32) accept only the op codes listed in the *_INT_OPS lists; any other op
//   code writes 0. Their scalars a, b have the element type (long long for i64, int for i32).
// mean, var, std and the like are composed by the host from these ops and reduce.cu's sum.

#pragma once

#include <cuda_fp16.h>

// ---- op codes -----------------------------------------------------------------------------------------
constexpr int EW_NEG = 0;
constexpr int EW_ABS = 1;
constexpr int EW_SIGN = 2;
constexpr int EW_EXP = 3;
constexpr int EW_LOG = 4;
constexpr int EW_SQRT = 5;
constexpr int EW_RSQRT = 6;
constexpr int EW_SIN = 7;
constexpr int EW_COS = 8;
constexpr int EW_TANH = 9;
constexpr int EW_SIGMOID = 10;
constexpr int EW_RELU = 11;
constexpr int EW_ERF = 12;
constexpr int EW_RECIPROCAL = 13;
constexpr int EW_SQUARE = 14;
constexpr int EW_FLOOR = 15;
constexpr int EW_CEIL = 16;
constexpr int EW_TRUNC = 17;
constexpr int EW_ROUND = 18;
constexpr int EW_LOG1P = 19;
constexpr int EW_EXPM1 = 20;
constexpr int EW_SILU = 21;
constexpr int EW_GELU = 22;
constexpr int EW_GELU_TANH = 23;
constexpr int EW_LOG2 = 24;
constexpr int EW_EXP2 = 25;
constexpr int EW_IDENTITY = 26;
constexpr int EW_ADD_S = 32;
constexpr int EW_SUB_S = 33;
constexpr int EW_RSUB_S = 34;
constexpr int EW_MUL_S = 35;
constexpr int EW_DIV_S = 36;
constexpr int EW_RDIV_S = 37;
constexpr int EW_POW_S = 38;
constexpr int EW_RPOW_S = 39;
constexpr int EW_MAX_S = 40;
constexpr int EW_MIN_S = 41;
constexpr int EW_CLAMP = 42;
constexpr int EW_LEAKY_RELU = 43;
constexpr int EW_ELU = 44;
constexpr int EW_SOFTPLUS = 45;
constexpr int EW_AFFINE = 46;

constexpr int EW_ADD = 0;
constexpr int EW_SUB = 1;
constexpr int EW_MUL = 2;
constexpr int EW_DIV = 3;
constexpr int EW_POW = 4;
constexpr int EW_MAXIMUM = 5;
constexpr int EW_MINIMUM = 6;
constexpr int EW_RELU_BACKWARD = 7;
constexpr int EW_TANH_BACKWARD = 8;
constexpr int EW_SIGMOID_BACKWARD = 9;

constexpr int EW_EQ = 0;
constexpr int EW_NE = 1;
constexpr int EW_LT = 2;
constexpr int EW_LE = 3;
constexpr int EW_GT = 4;
constexpr int EW_GE = 5;
constexpr int EW_LOGICAL_AND = 6;
constexpr int EW_LOGICAL_OR = 7;
constexpr int EW_LOGICAL_XOR = 8;

constexpr int EW_ISNAN = 0;
constexpr int EW_ISINF = 1;
constexpr int EW_ISFINITE = 2;
constexpr int EW_LOGICAL_NOT = 3;
constexpr int EW_NONZERO = 4;

// ---- layout and index math ----------------------------------------------------------------------------
struct EwLayout {
    long long shape[8];   // iteration (output) shape; shape[d] >= 1 for d < ndim
    long long stride[8];  // this operand's stride along d, in elements; 0 = broadcast
    int ndim;             // 0..8; 0 means a single element at offset 0
    int pad_;             // keeps sizeof == 136 and the Python packing explicit ("8q8qii")
};

// (q, r) = (i / s, i % s) for i >= 0, s >= 1; 32-bit division when both fit (about 4x cheaper on the GPU).
__host__ __device__ inline void ew_divmod(long long i, long long s, long long& q, long long& r) {
    if (((unsigned long long)i | (unsigned long long)s) >> 32 == 0) {
        const unsigned int q32 = (unsigned int)i / (unsigned int)s;
        q = q32;
        r = i - (long long)q32 * s;
    } else {
        q = i / s;
        r = i - q * s;
    }
}

// Element offsets of up to K (1..3) operands for the row-major linear output index i. The shape is taken
// from l0 (all layouts of a launch share it). Dims are visited innermost first (d = ndim-1 .. 0) with
// compile-time indices (the loop over the constant 8 is unrolled), so the structs stay in registers /
// the parameter space and never go to local memory.
template <int K>
__host__ __device__ inline void ew_offsets(long long i, const EwLayout& l0, const EwLayout& l1,
                                           const EwLayout& l2, long long& o0, long long& o1, long long& o2) {
    o0 = 0;
    o1 = 0;
    o2 = 0;
    const int nd = l0.ndim;
#pragma unroll
    for (int d = 7; d >= 0; --d) {
        if (d < nd) {
            long long q, r;
            ew_divmod(i, l0.shape[d], q, r);
            o0 += r * l0.stride[d];
            if (K >= 2) o1 += r * l1.stride[d];
            if (K >= 3) o2 += r * l2.stride[d];
            i = q;
        }
    }
}

// ---- conversions between storage and compute types ----------------------------------------------------
template <typename To, typename From>
__host__ __device__ inline To ew_cvt(From v) { return static_cast<To>(v); }
template <>
__host__ __device__ inline float ew_cvt<float, __half>(__half v) { return __half2float(v); }
template <>
__host__ __device__ inline __half ew_cvt<__half, float>(float v) { return __float2half_rn(v); }

// ---- vectorised loads/stores of 4 consecutive elements ------------------------------------------------
// The pointer must be aligned to 4 elements (16 B for float, 8 B for __half, 32 B for long long, 16 B for
// int, 4 B for unsigned char); the host only selects this path when every pointer of the launch is.
template <typename T>
struct EwVec;

template <>
struct EwVec<float> {
    __host__ __device__ static inline void load(const float* p, float v[4]) {
        const float4 t = *reinterpret_cast<const float4*>(p);
        v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
    }
    __host__ __device__ static inline void store(float* p, const float v[4]) {
        *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
    }
};

template <>
struct EwVec<__half> {  // one 8-byte load of 4 halves
    __host__ __device__ static inline void load(const __half* p, __half v[4]) {
        const uint2 t = *reinterpret_cast<const uint2*>(p);
        v[0] = __ushort_as_half((unsigned short)(t.x & 0xFFFFu));
        v[1] = __ushort_as_half((unsigned short)(t.x >> 16));
        v[2] = __ushort_as_half((unsigned short)(t.y & 0xFFFFu));
        v[3] = __ushort_as_half((unsigned short)(t.y >> 16));
    }
    __host__ __device__ static inline void store(__half* p, const __half v[4]) {
        uint2 t;
        t.x = (unsigned int)__half_as_ushort(v[0]) | ((unsigned int)__half_as_ushort(v[1]) << 16);
        t.y = (unsigned int)__half_as_ushort(v[2]) | ((unsigned int)__half_as_ushort(v[3]) << 16);
        *reinterpret_cast<uint2*>(p) = t;
    }
};

template <>
struct EwVec<long long> {  // two 16-byte loads
    __host__ __device__ static inline void load(const long long* p, long long v[4]) {
        const longlong2 t0 = reinterpret_cast<const longlong2*>(p)[0];
        const longlong2 t1 = reinterpret_cast<const longlong2*>(p)[1];
        v[0] = t0.x; v[1] = t0.y; v[2] = t1.x; v[3] = t1.y;
    }
    __host__ __device__ static inline void store(long long* p, const long long v[4]) {
        reinterpret_cast<longlong2*>(p)[0] = make_longlong2(v[0], v[1]);
        reinterpret_cast<longlong2*>(p)[1] = make_longlong2(v[2], v[3]);
    }
};

template <>
struct EwVec<int> {
    __host__ __device__ static inline void load(const int* p, int v[4]) {
        const int4 t = *reinterpret_cast<const int4*>(p);
        v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
    }
    __host__ __device__ static inline void store(int* p, const int v[4]) {
        *reinterpret_cast<int4*>(p) = make_int4(v[0], v[1], v[2], v[3]);
    }
};

template <>
struct EwVec<unsigned char> {
    __host__ __device__ static inline void load(const unsigned char* p, unsigned char v[4]) {
        const uchar4 t = *reinterpret_cast<const uchar4*>(p);
        v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
    }
    __host__ __device__ static inline void store(unsigned char* p, const unsigned char v[4]) {
        *reinterpret_cast<uchar4*>(p) = make_uchar4(v[0], v[1], v[2], v[3]);
    }
};

// ---- per-element math ---------------------------------------------------------------------------------
__host__ __device__ inline bool ew_isnan(float x) { return x != x; }
__host__ __device__ inline bool ew_isfinite(float x) { return x - x == x - x; }  // inf-inf and NaN give NaN

// NaN-propagating maximum / minimum; on ties (including -0.0 vs 0.0) the first operand, as PyTorch.
__host__ __device__ inline float ew_maximum(float x, float y) {
    if (ew_isnan(x) || ew_isnan(y)) return x + y;
    return x < y ? y : x;
}
__host__ __device__ inline float ew_minimum(float x, float y) {
    if (ew_isnan(x) || ew_isnan(y)) return x + y;
    return y < x ? y : x;
}

__host__ __device__ inline float ew_sigmoid(float x) {
    const float e = expf(-fabsf(x));
    return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

// sin / cos without the CUDA library's Payne-Hanek slow path (it needs local memory, which the strict
// build forbids): Cody-Waite reduction by pi/2 in double with a 3-part constant, then Taylor polynomials
// in double on |r| <= pi/4, rounded once to float. Error about 1e-16 absolute before that rounding for
// |x| < 1e15 (PyTorch-level accuracy); beyond 1e15 the reduction loses accuracy (floats there are
// spaced by more than 1e8 radians, so no caller should rely on those values).
__host__ __device__ inline float ew_sincos(float xf, bool cosine) {
    if (!ew_isfinite(xf)) return xf - xf;  // NaN for NaN and +-inf
    const double x = xf;
    const double k = rint(x * 0.6366197723675814);  // nearest multiple of pi/2
    double r = fma(-k, 1.5707963267948966, x);
    r = fma(-k, 6.123233995736766e-17, r);
    r = fma(-k, -1.4973849048591698e-33, r);
    const double q4 = k - 4.0 * floor(k * 0.25);  // k mod 4, exact, in {0, 1, 2, 3}
    int q = (int)q4 + (cosine ? 1 : 0);           // cos(x) = sin(x + pi/2)
    const double r2 = r * r;
    // sin(r) = r - r^3/3! + ... - r^15/15!, cos(r) = 1 - r^2/2! + ... + r^16/16!
    const double s = r + r * r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (1.0 / 362880
                   + r2 * (-1.0 / 39916800 + r2 * (1.0 / 6227020800.0 + r2 * (-1.0 / 1307674368000.0)))))));
    const double c = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320
                   + r2 * (-1.0 / 3628800 + r2 * (1.0 / 479001600.0 + r2 * (-1.0 / 87178291200.0
                   + r2 * (1.0 / 20922789888000.0))))))));
    q &= 3;
    const double v = q == 0 ? s : q == 1 ? c : q == 2 ? -s : -c;
    return (float)v;
}

__host__ __device__ inline float ew_unary_float(int op, float x, float a, float b) {
    switch (op) {
        case EW_NEG: return -x;
        case EW_ABS: return fabsf(x);
        case EW_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
        case EW_EXP: return expf(x);
        case EW_LOG: return logf(x);
        case EW_SQRT: return sqrtf(x);
        case EW_RSQRT: return 1.0f / sqrtf(x);
        case EW_SIN: return ew_sincos(x, false);
        case EW_COS: return ew_sincos(x, true);
        case EW_TANH: return tanhf(x);
        case EW_SIGMOID: return ew_sigmoid(x);
        case EW_RELU: return x < 0.0f ? 0.0f : x;
        case EW_ERF: return erff(x);
        case EW_RECIPROCAL: return 1.0f / x;
        case EW_SQUARE: return x * x;
        case EW_FLOOR: return floorf(x);
        case EW_CEIL: return ceilf(x);
        case EW_TRUNC: return truncf(x);
        case EW_ROUND: return rintf(x);
        case EW_LOG1P: return log1pf(x);
        case EW_EXPM1: return expm1f(x);
        case EW_SILU: return x / (1.0f + expf(-x));
        case EW_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
        case EW_GELU_TANH: {
            const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
            return 0.5f * x * (1.0f + tanhf(inner));
        }
        case EW_LOG2: return log2f(x);
        case EW_EXP2: return exp2f(x);
        case EW_IDENTITY: return x;
        case EW_ADD_S: return x + a;
        case EW_SUB_S: return x - a;
        case EW_RSUB_S: return a - x;
        case EW_MUL_S: return x * a;
        case EW_DIV_S: return x / a;
        case EW_RDIV_S: return a / x;
        case EW_POW_S: return powf(x, a);
        case EW_RPOW_S: return powf(a, x);
        case EW_MAX_S: return ew_maximum(x, a);
        case EW_MIN_S: return ew_minimum(x, a);
        case EW_CLAMP: return ew_isnan(x) ? x : fminf(fmaxf(x, a), b);
        case EW_LEAKY_RELU: return x > 0.0f ? x : x * a;
        case EW_ELU: return x > 0.0f ? x : a * expm1f(x);
        case EW_SOFTPLUS: {
            const float bx = x * a;
            if (bx > b) return x;
            return (fmaxf(bx, 0.0f) + log1pf(expf(-fabsf(bx)))) / a;  // logaddexp(0, bx) / beta
        }
        case EW_AFFINE:  // two roundings like the host's x * a + b (no contraction into an fma)
#ifdef __CUDA_ARCH__
            return __fadd_rn(__fmul_rn(x, a), b);
#else
            return x * a + b;
#endif
        default: return 0.0f;
    }
}

// Wrapping integer arithmetic (no signed-overflow UB): I is long long or int, U its unsigned type.
template <typename I> struct EwUnsigned;
template <> struct EwUnsigned<long long> { using type = unsigned long long; };
template <> struct EwUnsigned<int> { using type = unsigned int; };

template <typename I>
__host__ __device__ inline I ew_wadd(I x, I y) {
    using U = typename EwUnsigned<I>::type;
    return (I)((U)x + (U)y);
}
template <typename I>
__host__ __device__ inline I ew_wsub(I x, I y) {
    using U = typename EwUnsigned<I>::type;
    return (I)((U)x - (U)y);
}
template <typename I>
__host__ __device__ inline I ew_wmul(I x, I y) {
    using U = typename EwUnsigned<I>::type;
    return (I)((U)x * (U)y);
}

template <typename I>
__host__ __device__ inline I ew_unary_int(int op, I x, I a, I b) {
    switch (op) {
        case EW_NEG: return ew_wsub<I>(0, x);
        case EW_ABS: return x < 0 ? ew_wsub<I>(0, x) : x;
        case EW_SIGN: return (I)((x > 0) - (x < 0));
        case EW_SQUARE: return ew_wmul<I>(x, x);
        case EW_IDENTITY: return x;
        case EW_ADD_S: return ew_wadd<I>(x, a);
        case EW_SUB_S: return ew_wsub<I>(x, a);
        case EW_RSUB_S: return ew_wsub<I>(a, x);
        case EW_MUL_S: return ew_wmul<I>(x, a);
        case EW_MAX_S: return x < a ? a : x;
        case EW_MIN_S: return a < x ? a : x;
        case EW_CLAMP: { const I lo = x < a ? a : x; return b < lo ? b : lo; }
        case EW_AFFINE: return ew_wadd<I>(ew_wmul<I>(x, a), b);
        default: return 0;
    }
}

__host__ __device__ inline float ew_binary_float(int op, float x, float y) {
    switch (op) {
        case EW_ADD: return x + y;
        case EW_SUB: return x - y;
        case EW_MUL: return x * y;
        case EW_DIV: return x / y;
        case EW_POW: return powf(x, y);
        case EW_MAXIMUM: return ew_maximum(x, y);
        case EW_MINIMUM: return ew_minimum(x, y);
        case EW_RELU_BACKWARD: return y <= 0.0f ? 0.0f : x;
        case EW_TANH_BACKWARD: return x * (1.0f - y * y);
        case EW_SIGMOID_BACKWARD: return (x * y) * (1.0f - y);
        default: return 0.0f;
    }
}

template <typename I>
__host__ __device__ inline I ew_binary_int(int op, I x, I y) {
    switch (op) {
        case EW_ADD: return ew_wadd<I>(x, y);
        case EW_SUB: return ew_wsub<I>(x, y);
        case EW_MUL: return ew_wmul<I>(x, y);
        case EW_MAXIMUM: return x < y ? y : x;
        case EW_MINIMUM: return y < x ? y : x;
        default: return 0;
    }
}

// C is the compute type: float (for f32 and f16), long long, int or unsigned char.
template <typename C>
__host__ __device__ inline unsigned char ew_compare(int op, C x, C y) {
    bool r;
    switch (op) {
        case EW_EQ: r = x == y; break;
        case EW_NE: r = x != y; break;
        case EW_LT: r = x < y; break;
        case EW_LE: r = x <= y; break;
        case EW_GT: r = x > y; break;
        case EW_GE: r = x >= y; break;
        case EW_LOGICAL_AND: r = (x != C(0)) && (y != C(0)); break;
        case EW_LOGICAL_OR: r = (x != C(0)) || (y != C(0)); break;
        case EW_LOGICAL_XOR: r = (x != C(0)) != (y != C(0)); break;
        default: r = false; break;
    }
    return r ? 1 : 0;
}

template <typename T> struct EwIsFloat { static constexpr bool value = false; };
template <> struct EwIsFloat<float> { static constexpr bool value = true; };

template <typename C>
__host__ __device__ inline unsigned char ew_predicate(int op, C x) {
    bool r;
    if constexpr (EwIsFloat<C>::value) {
        switch (op) {
            case EW_ISNAN: r = ew_isnan(x); break;
            case EW_ISINF: r = !ew_isnan(x) && !ew_isfinite(x); break;
            case EW_ISFINITE: r = ew_isfinite(x); break;
            case EW_LOGICAL_NOT: r = x == 0.0f; break;
            case EW_NONZERO: r = x != 0.0f; break;
            default: r = false; break;
        }
    } else {  // integers and bool: never NaN or infinite
        switch (op) {
            case EW_ISFINITE: r = true; break;
            case EW_LOGICAL_NOT: r = x == C(0); break;
            case EW_NONZERO: r = x != C(0); break;
            default: r = false; break;
        }
    }
    return r ? 1 : 0;
}

// ---- functors: compute types A, B, Cc of the (up to three) inputs and the result R --------------------
struct EwUnaryFloatF {
    using A = float; using B = float; using Cc = float; using R = float;
    int op; float a; float b;
    __host__ __device__ inline float operator()(float x, float, float) const { return ew_unary_float(op, x, a, b); }
};
template <typename I>
struct EwUnaryIntF {
    using A = I; using B = I; using Cc = I; using R = I;
    int op; I a; I b;
    __host__ __device__ inline I operator()(I x, I, I) const { return ew_unary_int<I>(op, x, a, b); }
};
struct EwBinaryFloatF {
    using A = float; using B = float; using Cc = float; using R = float;
    int op;
    __host__ __device__ inline float operator()(float x, float y, float) const { return ew_binary_float(op, x, y); }
};
template <typename I>
struct EwBinaryIntF {
    using A = I; using B = I; using Cc = I; using R = I;
    int op;
    __host__ __device__ inline I operator()(I x, I y, I) const { return ew_binary_int<I>(op, x, y); }
};
template <typename C>
struct EwCompareF {
    using A = C; using B = C; using Cc = C; using R = unsigned char;
    int op;
    __host__ __device__ inline unsigned char operator()(C x, C y, C) const { return ew_compare<C>(op, x, y); }
};
template <typename C>
struct EwPredicateF {
    using A = C; using B = C; using Cc = C; using R = unsigned char;
    int op;
    __host__ __device__ inline unsigned char operator()(C x, C, C) const { return ew_predicate<C>(op, x); }
};
template <typename C>
struct EwWhereF {  // inputs: cond (bool bytes), then the two values
    using A = unsigned char; using B = C; using Cc = C; using R = C;
    __host__ __device__ inline C operator()(unsigned char c, C x, C y) const { return c != 0 ? x : y; }
};

// ---- loop bodies (one thread's share of a launch) -----------------------------------------------------
// tid = blockIdx.x * blockDim.x + threadIdx.x, nthreads = blockDim.x * gridDim.x. K = number of inputs.
// The output is contiguous: out[i] for i in [0, n).
template <int K, typename TO, typename TA, typename TB, typename TC, typename F>
__host__ __device__ inline void ew_map_strided(long long tid, long long nthreads, TO* __restrict__ out,
                                               const TA* __restrict__ a, const TB* __restrict__ b,
                                               const TC* __restrict__ c, const EwLayout& la,
                                               const EwLayout& lb, const EwLayout& lc, long long n,
                                               const F& f) {
    using A = typename F::A;
    using B = typename F::B;
    using Cc = typename F::Cc;
    using R = typename F::R;
    for (long long i = tid; i < n; i += nthreads) {
        long long oa, ob, oc;
        ew_offsets<K>(i, la, lb, lc, oa, ob, oc);
        const A xa = ew_cvt<A>(a[oa]);
        B xb = B();
        Cc xc = Cc();
        if constexpr (K >= 2) xb = ew_cvt<B>(b[ob]);
        if constexpr (K >= 3) xc = ew_cvt<Cc>(c[oc]);
        out[i] = ew_cvt<TO>(static_cast<R>(f(xa, xb, xc)));
    }
}

// All operands contiguous with n elements. With `aligned` != 0 (every pointer 4-element aligned, see
// EwVec) thread tid handles the groups of 4 at tid, tid + nthreads, ... with vector loads/stores, then
// the n % 4 tail elements one by one; otherwise every element one by one.
template <int K, typename TO, typename TA, typename TB, typename TC, typename F>
__host__ __device__ inline void ew_map_contig(long long tid, long long nthreads, TO* __restrict__ out,
                                              const TA* __restrict__ a, const TB* __restrict__ b,
                                              const TC* __restrict__ c, long long n, int aligned,
                                              const F& f) {
    using A = typename F::A;
    using B = typename F::B;
    using Cc = typename F::Cc;
    using R = typename F::R;
    long long start = 0;
    if (aligned) {
        const long long nvec = n >> 2;
        for (long long v = tid; v < nvec; v += nthreads) {
            const long long i = v << 2;
            TA va[4];
            TB vb[4];
            TC vc[4];
            TO vo[4];
            EwVec<TA>::load(a + i, va);
            if constexpr (K >= 2) EwVec<TB>::load(b + i, vb);
            if constexpr (K >= 3) EwVec<TC>::load(c + i, vc);
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                B xb = B();
                Cc xc = Cc();
                if constexpr (K >= 2) xb = ew_cvt<B>(vb[k]);
                if constexpr (K >= 3) xc = ew_cvt<Cc>(vc[k]);
                vo[k] = ew_cvt<TO>(static_cast<R>(f(ew_cvt<A>(va[k]), xb, xc)));
            }
            EwVec<TO>::store(out + i, vo);
        }
        start = nvec << 2;
    }
    for (long long i = start + tid; i < n; i += nthreads) {
        B xb = B();
        Cc xc = Cc();
        if constexpr (K >= 2) xb = ew_cvt<B>(b[i]);
        if constexpr (K >= 3) xc = ew_cvt<Cc>(c[i]);
        out[i] = ew_cvt<TO>(static_cast<R>(f(ew_cvt<A>(a[i]), xb, xc)));
    }
}
