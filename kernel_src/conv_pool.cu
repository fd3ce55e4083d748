// conv_pool.cu -- NCHW im2col / col2im and 2-D max / avg pooling, float32 (_f32) and float16 (_f16; float32
// accumulation). The math, with the exact PyTorch correspondence, is in conv_pool.cuh.
//
// Common launch configuration: block = (256, 1, 1) (__launch_bounds__(256)), no dynamic shared memory,
// grid = (G, 1, 1) for any G >= 1 (grid-stride over the n output elements named below; G = ceil(n / 256)
// capped at e.g. 65535). Every thread writes its own output element (no atomics, deterministic): outputs
// are overwritten, never accumulated, so they need no initialization.
// g: ConvGeom by value = 16 int64 {N, C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, count_include_pad,
//    divisor_override}, packed as np.array([...], np.int64).tobytes(); the last two matter to avg-pool only.
// All tensors contiguous.
//
// im2col_{f32,f16}(const T* x, T* col, ConvGeom g, long long n)
//   x (N, C, H, W) -> col (N, C*KH*KW, OH*OW) (== F.unfold(x, (KH, KW), dilation, padding, stride)),
//   n = N*C*KH*KW*OH*OW.
// col2im_{f32,f16}(const T* col, T* x, ConvGeom g, long long n)
//   col (N, C*KH*KW, OH*OW) -> x (N, C, H, W) summing overlapping taps (== F.fold(col, (H, W), (KH, KW), ...),
//   the adjoint of im2col), n = N*C*H*W.
// maxpool2d_{f32,f16}(const T* x, T* out, long long* indices, ConvGeom g, long long n)
//   out, indices (N, C, OH, OW); indices int64 = h*W + w within the (n, c) plane (PyTorch's convention), ties
//   to the first tap in row-major window order, NaN propagates; n = N*C*OH*OW. Dilation supported.
// maxpool2d_backward_{f32,f16}(const T* grad_out, const long long* indices, T* grad_x, ConvGeom g, long long n)
//   grad_x (N, C, H, W) = sum of grad_out (N, C, OH, OW) routed by indices (gather form: each input pixel
//   scans the <= KH*KW windows containing it), n = N*C*H*W. g must be the forward's geometry.
// avgpool2d_{f32,f16}(const T* x, T* out, ConvGeom g, long long n)
//   out (N, C, OH, OW) = F.avg_pool2d(x, (KH, KW), (sh, sw), (ph, pw), ceil_mode, count_include_pad,
//   divisor_override or None) with dh = dw = 1; n = N*C*OH*OW.
// avgpool2d_backward_{f32,f16}(const T* grad_out, T* grad_x, ConvGeom g, long long n)
//   grad_x (N, C, H, W), n = N*C*H*W.

#include <cuda_fp16.h>

#include "conv_pool.cuh"

using conv_pool::ConvGeom;

template <typename T>
__device__ inline void im2col_impl(
    const T* __restrict__ x, T* __restrict__ col, ConvGeom g, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        conv_pool::im2col_elem<T>(x, col, g, i);
}

template <typename T>
__device__ inline void col2im_impl(
    const T* __restrict__ col, T* __restrict__ x, ConvGeom g, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        conv_pool::col2im_elem<T>(col, x, g, i);
}

template <typename T>
__device__ inline void maxpool2d_impl(
    const T* __restrict__ x, T* __restrict__ out, long long* __restrict__ indices, ConvGeom g, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        conv_pool::maxpool_elem<T>(x, out, indices, g, i);
}

template <typename T>
__device__ inline void maxpool2d_backward_impl(
    const T* __restrict__ grad_out, const long long* __restrict__ indices, T* __restrict__ grad_x, ConvGeom g,
    long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        conv_pool::maxpool_backward_elem<T>(grad_out, indices, grad_x, g, i);
}

template <typename T>
__device__ inline void avgpool2d_impl(
    const T* __restrict__ x, T* __restrict__ out, ConvGeom g, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        conv_pool::avgpool_elem<T>(x, out, g, i);
}

template <typename T>
__device__ inline void avgpool2d_backward_impl(
    const T* __restrict__ grad_out, T* __restrict__ grad_x, ConvGeom g, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        conv_pool::avgpool_backward_elem<T>(grad_out, grad_x, g, i);
}

extern "C" __global__ __launch_bounds__(256) void im2col_f32(
    const float* __restrict__ x, float* __restrict__ col, ConvGeom g, long long n) {
    im2col_impl<float>(x, col, g, n);
}
extern "C" __global__ __launch_bounds__(256) void col2im_f32(
    const float* __restrict__ col, float* __restrict__ x, ConvGeom g, long long n) {
    col2im_impl<float>(col, x, g, n);
}
extern "C" __global__ __launch_bounds__(256) void maxpool2d_f32(
    const float* __restrict__ x, float* __restrict__ out, long long* __restrict__ indices, ConvGeom g,
    long long n) {
    maxpool2d_impl<float>(x, out, indices, g, n);
}
extern "C" __global__ __launch_bounds__(256) void maxpool2d_backward_f32(
    const float* __restrict__ grad_out, const long long* __restrict__ indices, float* __restrict__ grad_x,
    ConvGeom g, long long n) {
    maxpool2d_backward_impl<float>(grad_out, indices, grad_x, g, n);
}
extern "C" __global__ __launch_bounds__(256) void avgpool2d_f32(
    const float* __restrict__ x, float* __restrict__ out, ConvGeom g, long long n) {
    avgpool2d_impl<float>(x, out, g, n);
}
extern "C" __global__ __launch_bounds__(256) void avgpool2d_backward_f32(
    const float* __restrict__ grad_out, float* __restrict__ grad_x, ConvGeom g, long long n) {
    avgpool2d_backward_impl<float>(grad_out, grad_x, g, n);
}

extern "C" __global__ __launch_bounds__(256) void im2col_f16(
    const __half* __restrict__ x, __half* __restrict__ col, ConvGeom g, long long n) {
    im2col_impl<__half>(x, col, g, n);
}
extern "C" __global__ __launch_bounds__(256) void col2im_f16(
    const __half* __restrict__ col, __half* __restrict__ x, ConvGeom g, long long n) {
    col2im_impl<__half>(col, x, g, n);
}
extern "C" __global__ __launch_bounds__(256) void maxpool2d_f16(
    const __half* __restrict__ x, __half* __restrict__ out, long long* __restrict__ indices, ConvGeom g,
    long long n) {
    maxpool2d_impl<__half>(x, out, indices, g, n);
}
extern "C" __global__ __launch_bounds__(256) void maxpool2d_backward_f16(
    const __half* __restrict__ grad_out, const long long* __restrict__ indices, __half* __restrict__ grad_x,
    ConvGeom g, long long n) {
    maxpool2d_backward_impl<__half>(grad_out, indices, grad_x, g, n);
}
extern "C" __global__ __launch_bounds__(256) void avgpool2d_f16(
    const __half* __restrict__ x, __half* __restrict__ out, ConvGeom g, long long n) {
    avgpool2d_impl<__half>(x, out, g, n);
}
extern "C" __global__ __launch_bounds__(256) void avgpool2d_backward_f16(
    const __half* __restrict__ grad_out, __half* __restrict__ grad_x, ConvGeom g, long long n) {
    avgpool2d_backward_impl<__half>(grad_out, grad_x, g, n);
}
