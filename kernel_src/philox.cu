// philox.cu -- Philox4x64-10 random streams reproducible from (key, counter, offset); see philox.cuh.
//
// Common launch configuration: block = (256, 1, 1) (never more: __launch_bounds__(256)), no dynamic shared
// memory, grid = (G, 1, 1) for any G >= 1 (grid-stride over Philox blocks; G = ceil(nblocks / 256) capped,
// e.g. at 65535, is a good choice). Each thread computes one Philox block (4 x 64-bit = 8 x 32-bit words)
// per iteration, so nblocks = (offset + n - 1) / 4 - offset / 4 + 1 for philox_raw_u64 and
// (offset + n - 1) / 8 - offset / 8 + 1 for every other kernel (0 when n == 0: launch nothing).
//
// Common arguments:
//   s       PhiloxState by value: {key0, key1, ctr0, ctr1, ctr2, ctr3} as six uint64 = NumPy's
//           Philox(...).state["state"]["key"] and ["counter"] (a fresh Philox(key=k) has counter 0)
//   offset  (long long >= 0) index of the first stream element produced (64-bit words for raw_u64,
//           32-bit words otherwise); results never depend on the grid size
//   n       (long long) number of elements written; output element i is stream element offset + i

#include <cuda_fp16.h>

#include "philox.cuh"

using philox::PhiloxState;

#define PHILOX_GRID_STRIDE(W)                                                       \
    const long long b_first = offset / (W);                                         \
    const long long b_end = (n > 0) ? (offset + n - 1) / (W) + 1 : b_first;         \
    const long long b_step = (long long)blockDim.x * gridDim.x;                     \
    for (long long b = b_first + (long long)blockIdx.x * blockDim.x + threadIdx.x; b < b_end; b += b_step)

// philox_raw_u64: out[i] = word64(offset + i) == np.random.Philox(key=, counter=).random_raw(offset + n)[offset + i].
//   out: unsigned long long[n] (uint64)
extern "C" __global__ __launch_bounds__(256) void philox_raw_u64(unsigned long long* __restrict__ out, PhiloxState s,
                                                                 long long offset, long long n) {
    PHILOX_GRID_STRIDE(4) { philox::raw_u64_block(out, s, offset, n, b); }
}

// philox_raw_u32: out[i] = word32(offset + i) == random_raw(...).view(np.uint32)[offset + i].
//   out: unsigned int[n] (uint32)
extern "C" __global__ __launch_bounds__(256) void philox_raw_u32(unsigned int* __restrict__ out, PhiloxState s,
                                                                 long long offset, long long n) {
    PHILOX_GRID_STRIDE(8) { philox::raw_u32_block(out, s, offset, n, b); }
}

// philox_uniform_f32: out[i] = (word32(offset + i) >> 8) * 2^-24 in [0, 1)
//   (== np.random.Generator(np.random.Philox(...)).random(offset + n, dtype=np.float32)[offset + i]).
// philox_uniform_f16: out[i] = (word32(offset + i) >> 21) * 2^-11 in [0, 1), exact in float16.
//   out: float[n] / __half[n]. Affine maps (low + (high - low) * u) are left to the caller.
extern "C" __global__ __launch_bounds__(256) void philox_uniform_f32(float* __restrict__ out, PhiloxState s,
                                                                     long long offset, long long n) {
    PHILOX_GRID_STRIDE(8) { philox::uniform_block<float>(out, s, offset, n, b); }
}
extern "C" __global__ __launch_bounds__(256) void philox_uniform_f16(__half* __restrict__ out, PhiloxState s,
                                                                     long long offset, long long n) {
    PHILOX_GRID_STRIDE(8) { philox::uniform_block<__half>(out, s, offset, n, b); }
}

// philox_normal_f32 / _f16: out[i] = mean + stddev * z(offset + i), z = Box-Muller on word64((offset + i) / 2)
//   (cos for even stream index, sin for odd), computed in float32. NOT NumPy's ziggurat normals: the
//   stream is reproducible from (s, offset) but differs from Generator.standard_normal.
//   out: float[n] / __half[n]; mean, stddev: float
extern "C" __global__ __launch_bounds__(256) void philox_normal_f32(float* __restrict__ out, PhiloxState s,
                                                                    long long offset, long long n, float mean,
                                                                    float stddev) {
    PHILOX_GRID_STRIDE(8) { philox::normal_block<float>(out, s, offset, n, b, mean, stddev); }
}
extern "C" __global__ __launch_bounds__(256) void philox_normal_f16(__half* __restrict__ out, PhiloxState s,
                                                                    long long offset, long long n, float mean,
                                                                    float stddev) {
    PHILOX_GRID_STRIDE(8) { philox::normal_block<__half>(out, s, offset, n, b, mean, stddev); }
}

// philox_dropout_f32 / _f16: keep_i = uniform_f32(offset + i) >= p; out[i] = keep_i ? x[i] * scale : 0;
//   mask[i] = keep_i (skipped when mask is NULL).
//   x: const T[n] (contiguous), out: T[n] (may alias x), mask: unsigned char[n] (uint8/bool) or NULL,
//   p: drop probability in [0, 1) as float, scale: 1 / (1 - p) as float (the host computes it).
extern "C" __global__ __launch_bounds__(256) void philox_dropout_f32(const float* x, float* out,
                                                                     unsigned char* __restrict__ mask,
                                                                     PhiloxState s, long long offset, long long n,
                                                                     float p, float scale) {
    PHILOX_GRID_STRIDE(8) { philox::dropout_block<float>(x, out, mask, s, offset, n, b, p, scale); }
}
extern "C" __global__ __launch_bounds__(256) void philox_dropout_f16(const __half* x, __half* out,
                                                                     unsigned char* __restrict__ mask,
                                                                     PhiloxState s, long long offset, long long n,
                                                                     float p, float scale) {
    PHILOX_GRID_STRIDE(8) { philox::dropout_block<__half>(x, out, mask, s, offset, n, b, p, scale); }
}

// dropout_backward_f32 / _f16: grad_in[i] = mask[i] ? grad_out[i] * scale : 0 (the mask from philox_dropout_*;
//   regenerating it with philox_dropout_* from the same (s, offset) on a tensor of ones works too).
//   Launch: block 256, grid-stride over n elements (grid = ceil(n / 256), capped).
//   grad_out: const T[n], mask: const unsigned char[n], grad_in: T[n] (may alias grad_out), scale: float, n.
extern "C" __global__ __launch_bounds__(256) void dropout_backward_f32(const float* grad_out,
                                                                       const unsigned char* __restrict__ mask,
                                                                       float* grad_in, float scale, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        philox::dropout_backward_elem<float>(grad_out, mask, grad_in, scale, i);
}
extern "C" __global__ __launch_bounds__(256) void dropout_backward_f16(const __half* grad_out,
                                                                       const unsigned char* __restrict__ mask,
                                                                       __half* grad_in, float scale, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        philox::dropout_backward_elem<__half>(grad_out, mask, grad_in, scale, i);
}
