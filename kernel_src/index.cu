// index.cu -- indexing kernels (math in index.cuh): gather, scatter_add, index_select, index_add, masked_fill,
// embedding forward / backward, each for float32 (_f32) and float16 (_f16); indices are int64 (long long).
//
// Common launch configuration: block = (256, 1, 1) (__launch_bounds__(256)), no dynamic shared memory,
// grid = (G, 1, 1) for any G >= 1 (grid-stride over the n work elements named below; G = ceil(n / 256)
// capped at e.g. 65535).
// Index values must be in [0, size): out-of-range ones give 0 (gathers) or are skipped (scatters).
// Scatter-type kernels (scatter_add, index_add, embedding_backward) ACCUMULATE into their output with
// atomicAdd: the host initializes it first (a copy of self, or zeros). Their summation order, hence the
// float rounding, varies from run to run; float16 accumulates in float16 (atomicAdd on __half, sm_70+).
//
// gather_{f32,f16}(const T* input, const long long* index, T* out, IndexLayout L, long long n)
//   torch.gather(input, L.dim, index); index and out contiguous with shape L.shape, n = numel(index);
//   input strided by L.a_stride with L.a_dim_size = input.shape[dim]. L.b_stride unused.
// scatter_add_{f32,f16}(T* self, const long long* index, const T* src, IndexLayout L, long long n)
//   self.scatter_add_(L.dim, index, src) in place; index contiguous with shape L.shape, n = numel(index),
//   self strided by L.a_stride (a_dim_size = self.shape[dim]), src strided by L.b_stride. (Backward of gather.)
// index_select_{f32,f16}(const T* input, const long long* index, T* out, long long in_dim, long long n_idx,
//                        long long inner, long long n)
//   input contiguous viewed as (outer, in_dim, inner) (in_dim = input.shape[dim], inner = product of the
//   later dims), index 1-D of n_idx, out contiguous (outer, n_idx, inner), n = numel(out).
// index_add_{f32,f16}(T* self, const long long* index, const T* src, long long self_dim, long long n_idx,
//                     long long inner, long long n)
//   self.index_add_(dim, index, src) in place: self (outer, self_dim, inner), src (outer, n_idx, inner),
//   both contiguous, n = numel(src). (Backward of index_select into a zeroed grad.)
// masked_fill_{f32,f16}(const T* x, const unsigned char* mask, T* out, float value, MaskLayout L, long long n)
//   out = x.masked_fill(mask, value); x, out contiguous with L.shape (out may alias x), mask uint8/bool
//   strided by L.mask_stride (0 on broadcast dims), n = numel(x).
// embedding_{f32,f16}(const T* weight, const long long* index, T* out, long long dim, long long num_embeddings,
//                     long long n)
//   F.embedding(index, weight): weight contiguous (num_embeddings, dim), index contiguous of n_idx entries,
//   out (n_idx, dim), n = n_idx * dim.
// embedding_backward_{f32,f16}(const T* grad_out, const long long* index, T* grad_weight, long long dim,
//                              long long num_embeddings, long long padding_idx, long long n)
//   grad_weight (num_embeddings, dim, zeroed by the host) += rows of grad_out (n_idx, dim) at index; rows with
//   index == padding_idx are skipped (pass -1 for no padding_idx), n = n_idx * dim.

#include <cuda_fp16.h>

#include "index.cuh"

using index_k::IndexLayout;
using index_k::MaskLayout;

// Templates (internal linkage by being templates; the entry points are the extern "C" wrappers below).
template <typename T>
__device__ inline void gather_impl(
    const T* __restrict__ input, const long long* __restrict__ index, T* __restrict__ out, IndexLayout L,
    long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        index_k::gather_elem<T>(input, index, out, L, i);
}

template <typename T>
__device__ inline void scatter_add_impl(
    T* self, const long long* __restrict__ index, const T* src, IndexLayout L, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        index_k::scatter_add_elem<T>(self, index, src, L, i);
}

template <typename T>
__device__ inline void index_select_impl(
    const T* __restrict__ input, const long long* __restrict__ index, T* __restrict__ out, long long in_dim,
    long long n_idx, long long inner, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        index_k::index_select_elem<T>(input, index, out, in_dim, n_idx, inner, i);
}

template <typename T>
__device__ inline void index_add_impl(
    T* self, const long long* __restrict__ index, const T* src, long long self_dim, long long n_idx,
    long long inner, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        index_k::index_add_elem<T>(self, index, src, self_dim, n_idx, inner, i);
}

template <typename T>
__device__ inline void masked_fill_impl(
    const T* x, const unsigned char* __restrict__ mask, T* out, float value, MaskLayout L, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        index_k::masked_fill_elem<T>(x, mask, out, value, L, i);
}

template <typename T>
__device__ inline void embedding_impl(
    const T* __restrict__ weight, const long long* __restrict__ index, T* __restrict__ out, long long dim,
    long long num_embeddings, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        index_k::embedding_elem<T>(weight, index, out, dim, num_embeddings, i);
}

template <typename T>
__device__ inline void embedding_backward_impl(
    const T* __restrict__ grad_out, const long long* __restrict__ index, T* grad_weight, long long dim,
    long long num_embeddings, long long padding_idx, long long n) {
    const long long step = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        index_k::embedding_backward_elem<T>(grad_out, index, grad_weight, dim, num_embeddings, padding_idx, i);
}

extern "C" __global__ __launch_bounds__(256) void gather_f32(
    const float* __restrict__ input, const long long* __restrict__ index, float* __restrict__ out,
    IndexLayout L, long long n) {
    gather_impl<float>(input, index, out, L, n);
}
extern "C" __global__ __launch_bounds__(256) void scatter_add_f32(
    float* self, const long long* __restrict__ index, const float* src, IndexLayout L, long long n) {
    scatter_add_impl<float>(self, index, src, L, n);
}
extern "C" __global__ __launch_bounds__(256) void index_select_f32(
    const float* __restrict__ input, const long long* __restrict__ index, float* __restrict__ out,
    long long in_dim, long long n_idx, long long inner, long long n) {
    index_select_impl<float>(input, index, out, in_dim, n_idx, inner, n);
}
extern "C" __global__ __launch_bounds__(256) void index_add_f32(
    float* self, const long long* __restrict__ index, const float* src, long long self_dim, long long n_idx,
    long long inner, long long n) {
    index_add_impl<float>(self, index, src, self_dim, n_idx, inner, n);
}
extern "C" __global__ __launch_bounds__(256) void masked_fill_f32(
    const float* x, const unsigned char* __restrict__ mask, float* out, float value, MaskLayout L, long long n) {
    masked_fill_impl<float>(x, mask, out, value, L, n);
}
extern "C" __global__ __launch_bounds__(256) void embedding_f32(
    const float* __restrict__ weight, const long long* __restrict__ index, float* __restrict__ out,
    long long dim, long long num_embeddings, long long n) {
    embedding_impl<float>(weight, index, out, dim, num_embeddings, n);
}
extern "C" __global__ __launch_bounds__(256) void embedding_backward_f32(
    const float* __restrict__ grad_out, const long long* __restrict__ index, float* grad_weight, long long dim,
    long long num_embeddings, long long padding_idx, long long n) {
    embedding_backward_impl<float>(grad_out, index, grad_weight, dim, num_embeddings, padding_idx, n);
}

extern "C" __global__ __launch_bounds__(256) void gather_f16(
    const __half* __restrict__ input, const long long* __restrict__ index, __half* __restrict__ out,
    IndexLayout L, long long n) {
    gather_impl<__half>(input, index, out, L, n);
}
extern "C" __global__ __launch_bounds__(256) void scatter_add_f16(
    __half* self, const long long* __restrict__ index, const __half* src, IndexLayout L, long long n) {
    scatter_add_impl<__half>(self, index, src, L, n);
}
extern "C" __global__ __launch_bounds__(256) void index_select_f16(
    const __half* __restrict__ input, const long long* __restrict__ index, __half* __restrict__ out,
    long long in_dim, long long n_idx, long long inner, long long n) {
    index_select_impl<__half>(input, index, out, in_dim, n_idx, inner, n);
}
extern "C" __global__ __launch_bounds__(256) void index_add_f16(
    __half* self, const long long* __restrict__ index, const __half* src, long long self_dim, long long n_idx,
    long long inner, long long n) {
    index_add_impl<__half>(self, index, src, self_dim, n_idx, inner, n);
}
extern "C" __global__ __launch_bounds__(256) void masked_fill_f16(
    const __half* x, const unsigned char* __restrict__ mask, __half* out, float value, MaskLayout L,
    long long n) {
    masked_fill_impl<__half>(x, mask, out, value, L, n);
}
extern "C" __global__ __launch_bounds__(256) void embedding_f16(
    const __half* __restrict__ weight, const long long* __restrict__ index, __half* __restrict__ out,
    long long dim, long long num_embeddings, long long n) {
    embedding_impl<__half>(weight, index, out, dim, num_embeddings, n);
}
extern "C" __global__ __launch_bounds__(256) void embedding_backward_f16(
    const __half* __restrict__ grad_out, const long long* __restrict__ index, __half* grad_weight,
    long long dim, long long num_embeddings, long long padding_idx, long long n) {
    embedding_backward_impl<__half>(grad_out, index, grad_weight, dim, num_embeddings, padding_idx, n);
}
