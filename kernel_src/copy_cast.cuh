// copy_cast.cuh -- element conversions and the loop bodies of copy_cast.cu (strided copies with a dtype
// cast, contiguous casts, arange). __host__ __device__ so tests/test_kernels_host_copy_cast.py runs the
// same code over an emulated grid on the CPU. Reuses EwLayout / ew_offsets / ew_map_contig of
// elementwise.cuh.
//
// dtypes: f32 (float), f16 (__half), i64 (long long), i32 (int), bool (unsigned char 0/1).
// COPY_CAST_DTYPES = ["f32", "f16", "i64", "i32", "bool"]
//
// Conversion rules (cc_cast<D, S>):
//   same type             bit copy (bool is normalised: any nonzero byte -> 1)
//   -> bool               x != 0 (NaN -> true, -0.0 -> false), as PyTorch / NumPy
//   bool ->               0 or 1
//   f32/f16 -> i64/i32    truncation toward zero; NaN -> 0; out of range saturates to the type's min/max
//                         (the GPU's cvt.rzi behaviour, made explicit so host and device agree; NumPy and
//                         PyTorch leave these cases undefined)
//   f32 -> f16            round to nearest even, overflow to +-inf;  f16 -> f32 exact
//   i64/i32 -> f32/f16    round to nearest even (through float for f16: exact below 2^24, and every
//                         integer >= 65520 in magnitude is +-inf in half either way)
//   i64 -> i32            wraps modulo 2^32 (two's complement), as NumPy / PyTorch;  i32 -> i64 exact

#pragma once

#include <cuda_fp16.h>

#include "elementwise.cuh"

template <typename D>
struct CcInt;  // saturation bounds of the integer destinations, as floats
template <>
struct CcInt<long long> {
    __host__ __device__ static inline long long from_float(float v) {
        if (v != v) return 0;
        if (v >= 9223372036854775808.0f) return 9223372036854775807LL;   // 2^63
        if (v < -9223372036854775808.0f) return -9223372036854775807LL - 1;
        return (long long)v;
    }
};
template <>
struct CcInt<int> {
    __host__ __device__ static inline int from_float(float v) {
        if (v != v) return 0;
        if (v >= 2147483648.0f) return 2147483647;  // 2^31
        if (v < -2147483648.0f) return -2147483647 - 1;
        return (int)v;
    }
};

// Source value as float (for the floating sources) -- the common path of every float conversion.
__host__ __device__ inline float cc_to_float(float v) { return v; }
__host__ __device__ inline float cc_to_float(__half v) { return __half2float(v); }

template <typename D, typename S>
__host__ __device__ inline D cc_cast(S v) {
    constexpr bool s_float = EwIsFloat<S>::value || sizeof(S) == 2;  // float or __half
    if constexpr (sizeof(D) == 1) {  // -> bool
        if constexpr (s_float) {
            return cc_to_float(v) != 0.0f ? 1 : 0;
        } else {
            return v != 0 ? 1 : 0;
        }
    } else if constexpr (sizeof(S) == 1) {  // bool ->
        if constexpr (EwIsFloat<D>::value) {
            return v != 0 ? 1.0f : 0.0f;
        } else if constexpr (sizeof(D) == 2) {
            return __float2half_rn(v != 0 ? 1.0f : 0.0f);
        } else {
            return v != 0 ? D(1) : D(0);
        }
    } else if constexpr (EwIsFloat<D>::value) {  // -> f32
        if constexpr (s_float) {
            return cc_to_float(v);
        } else {
            return static_cast<float>(v);
        }
    } else if constexpr (sizeof(D) == 2) {  // -> f16
        if constexpr (s_float) {
            return __float2half_rn(cc_to_float(v));
        } else {
            return __float2half_rn(static_cast<float>(v));
        }
    } else {  // -> i64 / i32
        if constexpr (s_float) {
            return CcInt<D>::from_float(cc_to_float(v));
        } else {
            return static_cast<D>(v);  // wraps modulo 2^32 for i64 -> i32
        }
    }
}

// Functor for ew_map_contig: input type S, result type D (no further conversion).
template <typename D, typename S>
struct CcCastF {
    using A = S; using B = S; using Cc = S; using R = D;
    __host__ __device__ inline D operator()(S v, S, S) const { return cc_cast<D, S>(v); }
};

// Strided -> strided copy with a cast: for every row-major index i of the common shape (lo.shape ==
// lx.shape), out[offset_lo(i)] = cast(x[offset_lx(i)]). The output layout must not map two indices to
// one element (no stride 0 in lo); the input layout may broadcast.
template <typename D, typename S>
__host__ __device__ inline void cc_copy_strided(long long tid, long long nthreads, D* __restrict__ out,
                                                const S* __restrict__ x, const EwLayout& lo,
                                                const EwLayout& lx, long long n) {
    for (long long i = tid; i < n; i += nthreads) {
        long long oo, ox, unused;
        ew_offsets<2>(i, lo, lx, lo, oo, ox, unused);
        out[oo] = cc_cast<D, S>(x[ox]);
    }
}

// arange: out[i] = start + i * step, computed in double (floats) or with wrapping integers.
template <typename D>
__host__ __device__ inline void cc_arange_float(long long tid, long long nthreads, D* __restrict__ out,
                                                double start, double step, long long n) {
    for (long long i = tid; i < n; i += nthreads) {
        out[i] = ew_cvt<D>((float)(start + (double)i * step));
    }
}
template <typename D>
__host__ __device__ inline void cc_arange_int(long long tid, long long nthreads, D* __restrict__ out,
                                              long long start, long long step, long long n) {
    for (long long i = tid; i < n; i += nthreads) {
        out[i] = static_cast<D>(ew_wadd<long long>(start, ew_wmul<long long>(i, step)));
    }
}
