// elementwise.cu -- unary, binary, comparison, predicate and where kernels over strided/broadcast operands,
// each with a contiguous fast path using vector loads. The math, the op codes (with a Python-readable
// table), the EwLayout struct and the loop bodies live in elementwise.cuh.
//
// Launch configuration (every kernel): 1-D grid, block = 256 threads (__launch_bounds__(256); any
// blockDim.x <= 256 works), no dynamic shared memory. The loops are grid-stride, so any grid covers all n
// elements; a good grid is min(ceil(n / 256), 32 * #SMs) (contiguous kernels with aligned != 0:
// ceil(n / 4 / 256) is enough).
//
// dtype suffixes: _f32 (float), _f16 (__half storage, float math), _i64 (long long), _i32 (int),
// _bool (unsigned char 0/1). Outputs are always contiguous (out[i], i = row-major output index).
//
// Arguments are ordered with every 8-byte argument (pointers, EwLayout structs of 136 bytes, n, long long
// scalars) before the 4-byte ones, so the packed argument buffer has no padding holes.
//
// ew_unary_<dt>(T* out, const T* x, EwLayout lx, long long n, S a, S b, int op)              dt: f32 f16 i64 i32
// ew_unary_contig_<dt>(T* out, const T* x, long long n, S a, S b, int op, int aligned)
//     out[i] = op(x[...], a, b). S (scalar type) = float for f32/f16, long long for i64, int for i32.
//     Op codes: EW_UNARY_OPS (integer variants: EW_UNARY_INT_OPS). Scalars unused by an op are ignored.
// ew_binary_<dt>(T* out, const T* x, const T* y, EwLayout lx, EwLayout ly, long long n, int op)
// ew_binary_contig_<dt>(T* out, const T* x, const T* y, long long n, int op, int aligned)
//     out[i] = op(x[...], y[...]); dt: f32 f16 i64 i32; op codes EW_BINARY_OPS (ints: EW_BINARY_INT_OPS).
//     relu/tanh/sigmoid_backward take x = the incoming gradient g, y = the forward output.
// ew_compare_<dt>(unsigned char* out, const T* x, const T* y, EwLayout lx, EwLayout ly, long long n, int op)
// ew_compare_contig_<dt>(unsigned char* out, const T* x, const T* y, long long n, int op, int aligned)
//     out[i] = op(x, y) as bool (0/1); dt: f32 f16 i64 i32 bool; op codes EW_COMPARE_OPS.
// ew_predicate_<dt>(unsigned char* out, const T* x, EwLayout lx, long long n, int op)
// ew_predicate_contig_<dt>(unsigned char* out, const T* x, long long n, int op, int aligned)
//     out[i] = op(x) as bool; dt: f32 f16 i64 i32 bool; op codes EW_PREDICATE_OPS.
// ew_where_<dt>(T* out, const unsigned char* cond, const T* x, const T* y, EwLayout lc, EwLayout lx,
//               EwLayout ly, long long n)
// ew_where_contig_<dt>(T* out, const unsigned char* cond, const T* x, const T* y, long long n, int aligned)
//     out[i] = cond ? x : y; dt: f32 f16 i64 i32 bool.
//
// Common arguments: n = number of output elements (the product of the layouts' shape); lx/ly/lc = the
// operands' EwLayout (same shape and ndim in all of them; strides 0 where broadcast; see elementwise.cuh);
// aligned = 1 only if every pointer of the launch (output included) is aligned to 4 elements
// (f32 16 B, f16 8 B, i64 32 B, i32 16 B, bool 4 B), else 0 (scalar loads throughout).

#include <cuda_fp16.h>

#include "elementwise.cuh"

// Device-side glue: thread index and grid size, then the shared loop bodies of elementwise.cuh.
__device__ inline long long ew_tid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ inline long long ew_nthreads() { return (long long)blockDim.x * gridDim.x; }

// ---- unary --------------------------------------------------------------------------------------------

extern "C" __global__ __launch_bounds__(256) void ew_unary_f32(float* __restrict__ out, const float* __restrict__ x, EwLayout lx, long long n,
        float a, float b, int op) {
    ew_map_strided<1>(ew_tid(), ew_nthreads(), out, x, x, x, lx, lx, lx, n, EwUnaryFloatF{op, a, b});
}

extern "C" __global__ __launch_bounds__(256) void ew_unary_contig_f32(float* __restrict__ out, const float* __restrict__ x, long long n, float a, float b,
        int op, int aligned) {
    ew_map_contig<1>(ew_tid(), ew_nthreads(), out, x, x, x, n, aligned, EwUnaryFloatF{op, a, b});
}

extern "C" __global__ __launch_bounds__(256) void ew_unary_f16(__half* __restrict__ out, const __half* __restrict__ x, EwLayout lx, long long n,
        float a, float b, int op) {
    ew_map_strided<1>(ew_tid(), ew_nthreads(), out, x, x, x, lx, lx, lx, n, EwUnaryFloatF{op, a, b});
}

extern "C" __global__ __launch_bounds__(256) void ew_unary_contig_f16(__half* __restrict__ out, const __half* __restrict__ x, long long n, float a, float b,
        int op, int aligned) {
    ew_map_contig<1>(ew_tid(), ew_nthreads(), out, x, x, x, n, aligned, EwUnaryFloatF{op, a, b});
}

extern "C" __global__ __launch_bounds__(256) void ew_unary_i64(long long* __restrict__ out, const long long* __restrict__ x, EwLayout lx, long long n,
        long long a, long long b, int op) {
    ew_map_strided<1>(ew_tid(), ew_nthreads(), out, x, x, x, lx, lx, lx, n, EwUnaryIntF<long long>{op, a, b});
}

extern "C" __global__ __launch_bounds__(256) void ew_unary_contig_i64(long long* __restrict__ out, const long long* __restrict__ x, long long n, long long a, long long b,
        int op, int aligned) {
    ew_map_contig<1>(ew_tid(), ew_nthreads(), out, x, x, x, n, aligned, EwUnaryIntF<long long>{op, a, b});
}

extern "C" __global__ __launch_bounds__(256) void ew_unary_i32(int* __restrict__ out, const int* __restrict__ x, EwLayout lx, long long n,
        int a, int b, int op) {
    ew_map_strided<1>(ew_tid(), ew_nthreads(), out, x, x, x, lx, lx, lx, n, EwUnaryIntF<int>{op, a, b});
}

extern "C" __global__ __launch_bounds__(256) void ew_unary_contig_i32(int* __restrict__ out, const int* __restrict__ x, long long n, int a, int b,
        int op, int aligned) {
    ew_map_contig<1>(ew_tid(), ew_nthreads(), out, x, x, x, n, aligned, EwUnaryIntF<int>{op, a, b});
}


// ---- binary -------------------------------------------------------------------------------------------

extern "C" __global__ __launch_bounds__(256) void ew_binary_f32(float* __restrict__ out, const float* __restrict__ x, const float* __restrict__ y,
        EwLayout lx, EwLayout ly, long long n, int op) {
    ew_map_strided<2>(ew_tid(), ew_nthreads(), out, x, y, x, lx, ly, lx, n, EwBinaryFloatF{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_binary_contig_f32(float* __restrict__ out, const float* __restrict__ x, const float* __restrict__ y,
        long long n, int op, int aligned) {
    ew_map_contig<2>(ew_tid(), ew_nthreads(), out, x, y, x, n, aligned, EwBinaryFloatF{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_binary_f16(__half* __restrict__ out, const __half* __restrict__ x, const __half* __restrict__ y,
        EwLayout lx, EwLayout ly, long long n, int op) {
    ew_map_strided<2>(ew_tid(), ew_nthreads(), out, x, y, x, lx, ly, lx, n, EwBinaryFloatF{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_binary_contig_f16(__half* __restrict__ out, const __half* __restrict__ x, const __half* __restrict__ y,
        long long n, int op, int aligned) {
    ew_map_contig<2>(ew_tid(), ew_nthreads(), out, x, y, x, n, aligned, EwBinaryFloatF{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_binary_i64(long long* __restrict__ out, const long long* __restrict__ x, const long long* __restrict__ y,
        EwLayout lx, EwLayout ly, long long n, int op) {
    ew_map_strided<2>(ew_tid(), ew_nthreads(), out, x, y, x, lx, ly, lx, n, EwBinaryIntF<long long>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_binary_contig_i64(long long* __restrict__ out, const long long* __restrict__ x, const long long* __restrict__ y,
        long long n, int op, int aligned) {
    ew_map_contig<2>(ew_tid(), ew_nthreads(), out, x, y, x, n, aligned, EwBinaryIntF<long long>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_binary_i32(int* __restrict__ out, const int* __restrict__ x, const int* __restrict__ y,
        EwLayout lx, EwLayout ly, long long n, int op) {
    ew_map_strided<2>(ew_tid(), ew_nthreads(), out, x, y, x, lx, ly, lx, n, EwBinaryIntF<int>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_binary_contig_i32(int* __restrict__ out, const int* __restrict__ x, const int* __restrict__ y,
        long long n, int op, int aligned) {
    ew_map_contig<2>(ew_tid(), ew_nthreads(), out, x, y, x, n, aligned, EwBinaryIntF<int>{op});
}


// ---- comparisons and logical ops (bool output) ---------------------------------------------------------

extern "C" __global__ __launch_bounds__(256) void ew_compare_f32(unsigned char* __restrict__ out, const float* __restrict__ x,
        const float* __restrict__ y, EwLayout lx, EwLayout ly, long long n, int op) {
    ew_map_strided<2>(ew_tid(), ew_nthreads(), out, x, y, x, lx, ly, lx, n, EwCompareF<float>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_compare_contig_f32(unsigned char* __restrict__ out, const float* __restrict__ x,
        const float* __restrict__ y, long long n, int op, int aligned) {
    ew_map_contig<2>(ew_tid(), ew_nthreads(), out, x, y, x, n, aligned, EwCompareF<float>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_compare_f16(unsigned char* __restrict__ out, const __half* __restrict__ x,
        const __half* __restrict__ y, EwLayout lx, EwLayout ly, long long n, int op) {
    ew_map_strided<2>(ew_tid(), ew_nthreads(), out, x, y, x, lx, ly, lx, n, EwCompareF<float>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_compare_contig_f16(unsigned char* __restrict__ out, const __half* __restrict__ x,
        const __half* __restrict__ y, long long n, int op, int aligned) {
    ew_map_contig<2>(ew_tid(), ew_nthreads(), out, x, y, x, n, aligned, EwCompareF<float>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_compare_i64(unsigned char* __restrict__ out, const long long* __restrict__ x,
        const long long* __restrict__ y, EwLayout lx, EwLayout ly, long long n, int op) {
    ew_map_strided<2>(ew_tid(), ew_nthreads(), out, x, y, x, lx, ly, lx, n, EwCompareF<long long>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_compare_contig_i64(unsigned char* __restrict__ out, const long long* __restrict__ x,
        const long long* __restrict__ y, long long n, int op, int aligned) {
    ew_map_contig<2>(ew_tid(), ew_nthreads(), out, x, y, x, n, aligned, EwCompareF<long long>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_compare_i32(unsigned char* __restrict__ out, const int* __restrict__ x,
        const int* __restrict__ y, EwLayout lx, EwLayout ly, long long n, int op) {
    ew_map_strided<2>(ew_tid(), ew_nthreads(), out, x, y, x, lx, ly, lx, n, EwCompareF<int>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_compare_contig_i32(unsigned char* __restrict__ out, const int* __restrict__ x,
        const int* __restrict__ y, long long n, int op, int aligned) {
    ew_map_contig<2>(ew_tid(), ew_nthreads(), out, x, y, x, n, aligned, EwCompareF<int>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_compare_bool(unsigned char* __restrict__ out, const unsigned char* __restrict__ x,
        const unsigned char* __restrict__ y, EwLayout lx, EwLayout ly, long long n, int op) {
    ew_map_strided<2>(ew_tid(), ew_nthreads(), out, x, y, x, lx, ly, lx, n, EwCompareF<unsigned char>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_compare_contig_bool(unsigned char* __restrict__ out, const unsigned char* __restrict__ x,
        const unsigned char* __restrict__ y, long long n, int op, int aligned) {
    ew_map_contig<2>(ew_tid(), ew_nthreads(), out, x, y, x, n, aligned, EwCompareF<unsigned char>{op});
}


// ---- predicates (bool output) -------------------------------------------------------------------------

extern "C" __global__ __launch_bounds__(256) void ew_predicate_f32(unsigned char* __restrict__ out, const float* __restrict__ x, EwLayout lx,
        long long n, int op) {
    ew_map_strided<1>(ew_tid(), ew_nthreads(), out, x, x, x, lx, lx, lx, n, EwPredicateF<float>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_predicate_contig_f32(unsigned char* __restrict__ out, const float* __restrict__ x, long long n,
        int op, int aligned) {
    ew_map_contig<1>(ew_tid(), ew_nthreads(), out, x, x, x, n, aligned, EwPredicateF<float>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_predicate_f16(unsigned char* __restrict__ out, const __half* __restrict__ x, EwLayout lx,
        long long n, int op) {
    ew_map_strided<1>(ew_tid(), ew_nthreads(), out, x, x, x, lx, lx, lx, n, EwPredicateF<float>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_predicate_contig_f16(unsigned char* __restrict__ out, const __half* __restrict__ x, long long n,
        int op, int aligned) {
    ew_map_contig<1>(ew_tid(), ew_nthreads(), out, x, x, x, n, aligned, EwPredicateF<float>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_predicate_i64(unsigned char* __restrict__ out, const long long* __restrict__ x, EwLayout lx,
        long long n, int op) {
    ew_map_strided<1>(ew_tid(), ew_nthreads(), out, x, x, x, lx, lx, lx, n, EwPredicateF<long long>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_predicate_contig_i64(unsigned char* __restrict__ out, const long long* __restrict__ x, long long n,
        int op, int aligned) {
    ew_map_contig<1>(ew_tid(), ew_nthreads(), out, x, x, x, n, aligned, EwPredicateF<long long>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_predicate_i32(unsigned char* __restrict__ out, const int* __restrict__ x, EwLayout lx,
        long long n, int op) {
    ew_map_strided<1>(ew_tid(), ew_nthreads(), out, x, x, x, lx, lx, lx, n, EwPredicateF<int>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_predicate_contig_i32(unsigned char* __restrict__ out, const int* __restrict__ x, long long n,
        int op, int aligned) {
    ew_map_contig<1>(ew_tid(), ew_nthreads(), out, x, x, x, n, aligned, EwPredicateF<int>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_predicate_bool(unsigned char* __restrict__ out, const unsigned char* __restrict__ x, EwLayout lx,
        long long n, int op) {
    ew_map_strided<1>(ew_tid(), ew_nthreads(), out, x, x, x, lx, lx, lx, n, EwPredicateF<unsigned char>{op});
}

extern "C" __global__ __launch_bounds__(256) void ew_predicate_contig_bool(unsigned char* __restrict__ out, const unsigned char* __restrict__ x, long long n,
        int op, int aligned) {
    ew_map_contig<1>(ew_tid(), ew_nthreads(), out, x, x, x, n, aligned, EwPredicateF<unsigned char>{op});
}


// ---- where --------------------------------------------------------------------------------------------

extern "C" __global__ __launch_bounds__(256) void ew_where_f32(float* __restrict__ out, const unsigned char* __restrict__ cond,
        const float* __restrict__ x, const float* __restrict__ y, EwLayout lc, EwLayout lx, EwLayout ly, long long n) {
    ew_map_strided<3>(ew_tid(), ew_nthreads(), out, cond, x, y, lc, lx, ly, n, EwWhereF<float>{});
}

extern "C" __global__ __launch_bounds__(256) void ew_where_contig_f32(float* __restrict__ out, const unsigned char* __restrict__ cond,
        const float* __restrict__ x, const float* __restrict__ y, long long n, int aligned) {
    ew_map_contig<3>(ew_tid(), ew_nthreads(), out, cond, x, y, n, aligned, EwWhereF<float>{});
}

extern "C" __global__ __launch_bounds__(256) void ew_where_f16(__half* __restrict__ out, const unsigned char* __restrict__ cond,
        const __half* __restrict__ x, const __half* __restrict__ y, EwLayout lc, EwLayout lx, EwLayout ly, long long n) {
    ew_map_strided<3>(ew_tid(), ew_nthreads(), out, cond, x, y, lc, lx, ly, n, EwWhereF<__half>{});
}

extern "C" __global__ __launch_bounds__(256) void ew_where_contig_f16(__half* __restrict__ out, const unsigned char* __restrict__ cond,
        const __half* __restrict__ x, const __half* __restrict__ y, long long n, int aligned) {
    ew_map_contig<3>(ew_tid(), ew_nthreads(), out, cond, x, y, n, aligned, EwWhereF<__half>{});
}

extern "C" __global__ __launch_bounds__(256) void ew_where_i64(long long* __restrict__ out, const unsigned char* __restrict__ cond,
        const long long* __restrict__ x, const long long* __restrict__ y, EwLayout lc, EwLayout lx, EwLayout ly, long long n) {
    ew_map_strided<3>(ew_tid(), ew_nthreads(), out, cond, x, y, lc, lx, ly, n, EwWhereF<long long>{});
}

extern "C" __global__ __launch_bounds__(256) void ew_where_contig_i64(long long* __restrict__ out, const unsigned char* __restrict__ cond,
        const long long* __restrict__ x, const long long* __restrict__ y, long long n, int aligned) {
    ew_map_contig<3>(ew_tid(), ew_nthreads(), out, cond, x, y, n, aligned, EwWhereF<long long>{});
}

extern "C" __global__ __launch_bounds__(256) void ew_where_i32(int* __restrict__ out, const unsigned char* __restrict__ cond,
        const int* __restrict__ x, const int* __restrict__ y, EwLayout lc, EwLayout lx, EwLayout ly, long long n) {
    ew_map_strided<3>(ew_tid(), ew_nthreads(), out, cond, x, y, lc, lx, ly, n, EwWhereF<int>{});
}

extern "C" __global__ __launch_bounds__(256) void ew_where_contig_i32(int* __restrict__ out, const unsigned char* __restrict__ cond,
        const int* __restrict__ x, const int* __restrict__ y, long long n, int aligned) {
    ew_map_contig<3>(ew_tid(), ew_nthreads(), out, cond, x, y, n, aligned, EwWhereF<int>{});
}

extern "C" __global__ __launch_bounds__(256) void ew_where_bool(unsigned char* __restrict__ out, const unsigned char* __restrict__ cond,
        const unsigned char* __restrict__ x, const unsigned char* __restrict__ y, EwLayout lc, EwLayout lx, EwLayout ly, long long n) {
    ew_map_strided<3>(ew_tid(), ew_nthreads(), out, cond, x, y, lc, lx, ly, n, EwWhereF<unsigned char>{});
}

extern "C" __global__ __launch_bounds__(256) void ew_where_contig_bool(unsigned char* __restrict__ out, const unsigned char* __restrict__ cond,
        const unsigned char* __restrict__ x, const unsigned char* __restrict__ y, long long n, int aligned) {
    ew_map_contig<3>(ew_tid(), ew_nthreads(), out, cond, x, y, n, aligned, EwWhereF<unsigned char>{});
}
