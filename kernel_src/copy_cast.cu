// copy_cast.cu -- strided copies with a dtype cast (view -> contiguous, or any strided -> strided, e.g.
// an in-place assign into a view), contiguous casts with vector loads, and arange. Conversion rules and the
// loop bodies are in copy_cast.cuh; EwLayout (136-byte struct, Python "8q8qii") is in elementwise.cuh.
//
// Launch configuration (every kernel): 1-D grid, block = 256 threads (__launch_bounds__(256); any
// blockDim.x <= 256 works), no dynamic shared memory. Grid-stride loops: any grid covers all n elements;
// a good grid is min(ceil(n / 256), 32 * #SMs).
//
// <s>, <d> in {f32, f16, i64, i32, bool}: every pair, same-type pairs included (a plain copy).
//
// copy_cast_<s>_<d>(D* out, const S* x, EwLayout lo, EwLayout lx, long long n)
//     For every row-major index i of the common shape: out[offset(lo, i)] = cast(x[offset(lx, i)]).
//     lo and lx carry the same shape/ndim; lx may have stride 0 (broadcast), lo must not (no two indices
//     may write one element). For a view -> contiguous copy, lo holds the contiguous strides.
//     n = product of the shape.
// copy_cast_contig_<s>_<d>(D* out, const S* x, long long n, int aligned)
//     out[i] = cast(x[i]), i < n. aligned = 1 only if both pointers are aligned to 4 elements of their
//     own type (f32 16 B, f16 8 B, i64 32 B, i32 16 B, bool 4 B): 4-element vector loads/stores + scalar tail.
// arange_f32(float* out, double start, double step, long long n)   out[i] = (float)(start + i * step),
// arange_f16(__half* out, double start, double step, long long n)  computed in double (f16: rounded to
//                                                                  float, then to half)
// arange_i64(long long* out, long long start, long long step, long long n)  out[i] = start + i * step
// arange_i32(int* out, long long start, long long step, long long n)        (wrapping; i32: mod 2^32)
//     The host computes n (e.g. ceil((end - start) / step), as PyTorch) and passes start/step.

#include <cuda_fp16.h>

#include "copy_cast.cuh"

__device__ inline long long cc_tid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline long long cc_nthreads() { return (long long)blockDim.x * gridDim.x; }


extern "C" __global__ __launch_bounds__(256) void copy_cast_f32_f32(float* __restrict__ out, const float* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<float, float>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f32_f32(float* __restrict__ out, const float* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<float, float>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_f32_f16(__half* __restrict__ out, const float* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<__half, float>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f32_f16(__half* __restrict__ out, const float* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<__half, float>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_f32_i64(long long* __restrict__ out, const float* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<long long, float>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f32_i64(long long* __restrict__ out, const float* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<long long, float>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_f32_i32(int* __restrict__ out, const float* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<int, float>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f32_i32(int* __restrict__ out, const float* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<int, float>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_f32_bool(unsigned char* __restrict__ out, const float* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<unsigned char, float>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f32_bool(unsigned char* __restrict__ out, const float* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<unsigned char, float>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_f16_f32(float* __restrict__ out, const __half* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<float, __half>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f16_f32(float* __restrict__ out, const __half* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<float, __half>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_f16_f16(__half* __restrict__ out, const __half* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<__half, __half>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f16_f16(__half* __restrict__ out, const __half* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<__half, __half>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_f16_i64(long long* __restrict__ out, const __half* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<long long, __half>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f16_i64(long long* __restrict__ out, const __half* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<long long, __half>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_f16_i32(int* __restrict__ out, const __half* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<int, __half>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f16_i32(int* __restrict__ out, const __half* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<int, __half>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_f16_bool(unsigned char* __restrict__ out, const __half* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<unsigned char, __half>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_f16_bool(unsigned char* __restrict__ out, const __half* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<unsigned char, __half>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i64_f32(float* __restrict__ out, const long long* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<float, long long>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i64_f32(float* __restrict__ out, const long long* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<float, long long>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i64_f16(__half* __restrict__ out, const long long* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<__half, long long>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i64_f16(__half* __restrict__ out, const long long* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<__half, long long>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i64_i64(long long* __restrict__ out, const long long* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<long long, long long>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i64_i64(long long* __restrict__ out, const long long* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<long long, long long>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i64_i32(int* __restrict__ out, const long long* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<int, long long>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i64_i32(int* __restrict__ out, const long long* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<int, long long>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i64_bool(unsigned char* __restrict__ out, const long long* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<unsigned char, long long>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i64_bool(unsigned char* __restrict__ out, const long long* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<unsigned char, long long>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i32_f32(float* __restrict__ out, const int* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<float, int>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i32_f32(float* __restrict__ out, const int* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<float, int>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i32_f16(__half* __restrict__ out, const int* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<__half, int>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i32_f16(__half* __restrict__ out, const int* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<__half, int>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i32_i64(long long* __restrict__ out, const int* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<long long, int>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i32_i64(long long* __restrict__ out, const int* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<long long, int>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i32_i32(int* __restrict__ out, const int* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<int, int>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i32_i32(int* __restrict__ out, const int* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<int, int>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_i32_bool(unsigned char* __restrict__ out, const int* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<unsigned char, int>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_i32_bool(unsigned char* __restrict__ out, const int* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<unsigned char, int>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_bool_f32(float* __restrict__ out, const unsigned char* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<float, unsigned char>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_bool_f32(float* __restrict__ out, const unsigned char* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<float, unsigned char>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_bool_f16(__half* __restrict__ out, const unsigned char* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<__half, unsigned char>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_bool_f16(__half* __restrict__ out, const unsigned char* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<__half, unsigned char>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_bool_i64(long long* __restrict__ out, const unsigned char* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<long long, unsigned char>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_bool_i64(long long* __restrict__ out, const unsigned char* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<long long, unsigned char>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_bool_i32(int* __restrict__ out, const unsigned char* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<int, unsigned char>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_bool_i32(int* __restrict__ out, const unsigned char* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<int, unsigned char>{});
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_bool_bool(unsigned char* __restrict__ out, const unsigned char* __restrict__ x, EwLayout lo,
        EwLayout lx, long long n) {
    cc_copy_strided<unsigned char, unsigned char>(cc_tid(), cc_nthreads(), out, x, lo, lx, n);
}

extern "C" __global__ __launch_bounds__(256) void copy_cast_contig_bool_bool(unsigned char* __restrict__ out, const unsigned char* __restrict__ x, long long n,
        int aligned) {
    ew_map_contig<1>(cc_tid(), cc_nthreads(), out, x, x, x, n, aligned, CcCastF<unsigned char, unsigned char>{});
}

// ---- arange -------------------------------------------------------------------------------------------

extern "C" __global__ __launch_bounds__(256) void arange_f32(float* __restrict__ out, double start, double step, long long n) {
    cc_arange_float<float>(cc_tid(), cc_nthreads(), out, start, step, n);
}

extern "C" __global__ __launch_bounds__(256) void arange_f16(__half* __restrict__ out, double start, double step, long long n) {
    cc_arange_float<__half>(cc_tid(), cc_nthreads(), out, start, step, n);
}

extern "C" __global__ __launch_bounds__(256) void arange_i64(long long* __restrict__ out, long long start, long long step, long long n) {
    cc_arange_int<long long>(cc_tid(), cc_nthreads(), out, start, step, n);
}

extern "C" __global__ __launch_bounds__(256) void arange_i32(int* __restrict__ out, long long start, long long step, long long n) {
    cc_arange_int<int>(cc_tid(), cc_nthreads(), out, start, step, n);
}
