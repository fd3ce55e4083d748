// cuda_fp16.h -- the CUDA emulator's stand-in for NVIDIA's header of the same name, so that a kernel file that
// includes <cuda_fp16.h> compiles as host C++ with nothing from NVIDIA installed. It holds what kernels use of
// it and of the vector types it pulls in:
//   * __half (and half): 16-bit IEEE binary16 storage; __float2half_rn / __float2half round to nearest even
//     (subnormals, overflow to infinity, NaN as 0x7fff, as the GPU gives), __half2float is exact;
//     __half_as_ushort / __ushort_as_half reinterpret the bits; arithmetic and comparisons on __half go through
//     float and round once, which is what the GPU's half instructions give for +, -, * and /.
//   * the vector types (char1..4 ... double1..4, longlong1..4, dim3) with CUDA's sizes and alignments, and
//     their make_* functions.
// What is not here (bfloat16, half2 arithmetic, the half math functions): a kernel that uses it fails to
// compile, with the compiler naming the missing function.
#pragma once
#include <cmath>
#include <cstring>
#include <type_traits>

namespace cuda_emu_fp16 {
inline unsigned short float_to_half_bits(float f) {
    unsigned x;
    std::memcpy(&x, &f, 4);
    const unsigned short sign = (unsigned short)((x >> 16) & 0x8000u);
    const unsigned a = x & 0x7fffffffu;
    if (a > 0x7f800000u) return 0x7fffu;                    // NaN (the GPU's canonical one)
    if (a >= 0x477ff000u) return sign | 0x7c00u;            // >= 65520 (and inf): infinity
    if (a < 0x38800000u) {                                  // below 2^-14: a subnormal half, or zero
        const float scaled = std::fabs(f) * 16777216.0f;     // exact: in units of 2^-24
        return sign | (unsigned short)std::nearbyint(scaled);  // (ties to even in the default rounding mode)
    }
    const unsigned mant = a & 0x7fffffu;
    unsigned h = ((((a >> 23) & 0xffu) - 127u + 15u) << 10) | (mant >> 13);
    const unsigned rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // (a carry into the exponent is right)
    return sign | (unsigned short)h;
}

inline float half_bits_to_float(unsigned short h) {
    const unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        const float v = (float)m * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    const unsigned bits = sign | (e == 31 ? 0x7f800000u | (m << 13) : ((e + 112u) << 23) | (m << 13));
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
}  // namespace cuda_emu_fp16

struct __half {
    unsigned short __x;
    __half() = default;
    template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type>
    __half(T v) : __x(cuda_emu_fp16::float_to_half_bits((float)v)) {}
    operator float() const { return cuda_emu_fp16::half_bits_to_float(__x); }
    __half& operator+=(__half o) { return *this = __half((float)*this + (float)o); }
    __half& operator-=(__half o) { return *this = __half((float)*this - (float)o); }
    __half& operator*=(__half o) { return *this = __half((float)*this * (float)o); }
    __half& operator/=(__half o) { return *this = __half((float)*this / (float)o); }
};
typedef __half half;
struct __half2 {
    __half x, y;
};
typedef __half2 half2;

inline __half operator+(__half a, __half b) { return __half((float)a + (float)b); }
inline __half operator-(__half a, __half b) { return __half((float)a - (float)b); }
inline __half operator*(__half a, __half b) { return __half((float)a * (float)b); }
inline __half operator/(__half a, __half b) { return __half((float)a / (float)b); }
inline __half operator-(__half a) { __half r; r.__x = a.__x ^ 0x8000u; return r; }
inline bool operator==(__half a, __half b) { return (float)a == (float)b; }
inline bool operator!=(__half a, __half b) { return (float)a != (float)b; }
inline bool operator<(__half a, __half b) { return (float)a < (float)b; }
inline bool operator>(__half a, __half b) { return (float)a > (float)b; }
inline bool operator<=(__half a, __half b) { return (float)a <= (float)b; }
inline bool operator>=(__half a, __half b) { return (float)a >= (float)b; }

inline __half __float2half_rn(float f) { return __half(f); }
inline __half __float2half(float f) { return __half(f); }
inline float __half2float(__half h) { return (float)h; }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half __ushort_as_half(unsigned short u) { __half h; h.__x = u; return h; }
inline short __half_as_short(__half h) { return (short)h.__x; }
inline __half __short_as_half(short s) { __half h; h.__x = (unsigned short)s; return h; }
inline __half __hadd(__half a, __half b) { return a + b; }
inline __half __hsub(__half a, __half b) { return a - b; }
inline __half __hmul(__half a, __half b) { return a * b; }
inline __half __hdiv(__half a, __half b) { return a / b; }
inline __half __hneg(__half a) { return -a; }
inline bool __hisnan(__half a) { return (a.__x & 0x7fffu) > 0x7c00u; }
inline bool __hisinf(__half a) { return (a.__x & 0x7fffu) == 0x7c00u; }

// ---- vector types (vector_types.h): sizes and alignments as CUDA's ----------------------------------------
#define CUDA_EMU_VEC(T, N, A, ...) \
    struct __attribute__((aligned(A))) T##N { __VA_ARGS__; };
#define CUDA_EMU_VECS(T, B, A1, A2, A3, A4)                      \
    CUDA_EMU_VEC(T, 1, A1, B x)                                  \
    CUDA_EMU_VEC(T, 2, A2, B x; B y)                             \
    struct T##3 { B x; B y; B z; };                              \
    CUDA_EMU_VEC(T, 4, A4, B x; B y; B z; B w)                   \
    inline T##1 make_##T##1(B x) { T##1 v; v.x = x; return v; }  \
    inline T##2 make_##T##2(B x, B y) { T##2 v; v.x = x; v.y = y; return v; } \
    inline T##3 make_##T##3(B x, B y, B z) { T##3 v; v.x = x; v.y = y; v.z = z; return v; } \
    inline T##4 make_##T##4(B x, B y, B z, B w) { T##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v; }

CUDA_EMU_VECS(char, signed char, 1, 2, 1, 4)
CUDA_EMU_VECS(uchar, unsigned char, 1, 2, 1, 4)
CUDA_EMU_VECS(short, short, 2, 4, 2, 8)
CUDA_EMU_VECS(ushort, unsigned short, 2, 4, 2, 8)
CUDA_EMU_VECS(int, int, 4, 8, 4, 16)
CUDA_EMU_VECS(uint, unsigned int, 4, 8, 4, 16)
CUDA_EMU_VECS(long, long, 8, 16, 8, 16)
CUDA_EMU_VECS(ulong, unsigned long, 8, 16, 8, 16)
CUDA_EMU_VECS(longlong, long long, 8, 16, 8, 16)
CUDA_EMU_VECS(ulonglong, unsigned long long, 8, 16, 8, 16)
CUDA_EMU_VECS(float, float, 4, 8, 4, 16)
CUDA_EMU_VECS(double, double, 8, 16, 8, 16)
#undef CUDA_EMU_VECS
#undef CUDA_EMU_VEC

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
