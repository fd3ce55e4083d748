// index.cuh -- per-element math of the indexing kernels (index.cu): gather / scatter-add along one axis,
// index_select / index_add, masked_fill, embedding forward / backward. Host and device.
//
// Indices are int64 and must lie in [0, size) (the host validates and normalizes negative values first, as
// PyTorch raises on them); an out-of-range index makes a gather-type kernel write 0 and a scatter-type kernel
// skip the element, never an out-of-bounds access.
// Scatter-type kernels accumulate with atomicAdd on the device (float16: atomicAdd on __half, sm_70+, so
// every addition is rounded to half) and with a plain += on the host, where the tests run them in order.

#pragma once
#include <cuda_fp16.h>

namespace index_k {

// Layout of a gather / scatter along axis `dim`, passed by value; every field is int64, so the host packs
// it as np.array(shape8 + a_stride8 + b_stride8 + [ndim, dim, a_dim_size], np.int64).tobytes() (unused
// trailing dims: shape 1, stride 0).
//   shape[0..ndim)  shape of `index` (= shape of the gather output / of the scatter's walked region)
//   a_stride        strides (elements) of the tensor indexed along dim: gather input / scatter self
//   b_stride        strides of the tensor walked in step with index: scatter src (ignored by gather)
//   a_dim_size      size of the indexed tensor along dim (bound for the index values)
struct IndexLayout {
    long long shape[8];
    long long a_stride[8];
    long long b_stride[8];
    long long ndim;
    long long dim;
    long long a_dim_size;
};

// Layout of masked_fill's mask, broadcast against a contiguous x of shape `shape` (mask_stride 0 on a
// broadcast dim). All int64: np.array(shape8 + mask_stride8 + [ndim], np.int64).tobytes().
struct MaskLayout {
    long long shape[8];
    long long mask_stride[8];
    long long ndim;
};

__host__ __device__ inline float to_float(float x) { return x; }
__host__ __device__ inline float to_float(__half x) { return __half2float(x); }
template <typename T> __host__ __device__ inline T from_float(float x);
template <> __host__ __device__ inline float from_float<float>(float x) { return x; }
template <> __host__ __device__ inline __half from_float<__half>(float x) { return __float2half_rn(x); }

__host__ __device__ inline void atomic_add(float* p, float v) {
#ifdef __CUDA_ARCH__
    atomicAdd(p, v);
#else
    *p += v;
#endif
}
__host__ __device__ inline void atomic_add(__half* p, float v) {
#ifdef __CUDA_ARCH__
    atomicAdd(p, __float2half_rn(v));
#else
    *p = __float2half_rn(__half2float(*p) + __half2float(__float2half_rn(v)));
#endif
}

// Offsets of linear index-element i into the indexed tensor (without the dim term) and into the walked one.
__host__ __device__ inline void layout_offsets(const IndexLayout& L, long long i, long long* a_off,
                                               long long* b_off) {
    long long rem = i, a = 0, b = 0;
#pragma unroll
    for (int d = 7; d >= 0; --d) {
        if (d < L.ndim) {
            const long long c = rem % L.shape[d];
            rem /= L.shape[d];
            if (d != L.dim) a += c * L.a_stride[d];
            b += c * L.b_stride[d];
        }
    }
    *a_off = a;
    *b_off = b;
}

// torch.gather(input, dim, index): out[i] = input[coords(i) with coords[dim] = index[i]]; out, index contiguous.
template <typename T>
__host__ __device__ inline void gather_elem(const T* input, const long long* index, T* out, const IndexLayout& L,
                                            long long i) {
    long long a_off, b_off;
    layout_offsets(L, i, &a_off, &b_off);
    const long long j = index[i];
    out[i] = (j >= 0 && j < L.a_dim_size) ? input[a_off + j * L.a_stride[L.dim]] : from_float<T>(0.0f);
}

// self.scatter_add_(dim, index, src): self[coords(i) with coords[dim] = index[i]] += src[coords(i)].
template <typename T>
__host__ __device__ inline void scatter_add_elem(T* self, const long long* index, const T* src,
                                                 const IndexLayout& L, long long i) {
    long long a_off, b_off;
    layout_offsets(L, i, &a_off, &b_off);
    const long long j = index[i];
    if (j >= 0 && j < L.a_dim_size) atomic_add(self + a_off + j * L.a_stride[L.dim], to_float(src[b_off]));
}

// index_select on a contiguous input viewed as (outer, in_dim, inner): out (outer, n_idx, inner),
// out[o, k, r] = input[o, index[k], r]; element i of out.
template <typename T>
__host__ __device__ inline void index_select_elem(const T* input, const long long* index, T* out, long long in_dim,
                                                  long long n_idx, long long inner, long long i) {
    const long long r = i % inner, t = i / inner;
    const long long k = t % n_idx, o = t / n_idx;
    const long long j = index[k];
    out[i] = (j >= 0 && j < in_dim) ? input[(o * in_dim + j) * inner + r] : from_float<T>(0.0f);
}

// self.index_add_(dim, index, src) on contiguous self (outer, self_dim, inner), src (outer, n_idx, inner):
// self[o, index[k], r] += src[o, k, r] (the backward of index_select); element i of src.
template <typename T>
__host__ __device__ inline void index_add_elem(T* self, const long long* index, const T* src, long long self_dim,
                                               long long n_idx, long long inner, long long i) {
    const long long r = i % inner, t = i / inner;
    const long long k = t % n_idx, o = t / n_idx;
    const long long j = index[k];
    if (j >= 0 && j < self_dim) atomic_add(self + (o * self_dim + j) * inner + r, to_float(src[i]));
}

// masked_fill: out[i] = mask[coords(i)] ? value : x[i]; x, out contiguous with L.shape, mask strided (uint8).
template <typename T>
__host__ __device__ inline void masked_fill_elem(const T* x, const unsigned char* mask, T* out, float value,
                                                 const MaskLayout& L, long long i) {
    long long rem = i, m = 0;
#pragma unroll
    for (int d = 7; d >= 0; --d) {
        if (d < L.ndim) {
            const long long c = rem % L.shape[d];
            rem /= L.shape[d];
            m += c * L.mask_stride[d];
        }
    }
    out[i] = mask[m] ? from_float<T>(value) : x[i];
}

// F.embedding: out[k, d] = weight[index[k], d]; weight (num_embeddings, dim), out (n_idx, dim), element i of out.
template <typename T>
__host__ __device__ inline void embedding_elem(const T* weight, const long long* index, T* out, long long dim,
                                               long long num_embeddings, long long i) {
    const long long d = i % dim, k = i / dim;
    const long long j = index[k];
    out[i] = (j >= 0 && j < num_embeddings) ? weight[j * dim + d] : from_float<T>(0.0f);
}

// Embedding backward: grad_weight[index[k], d] += grad_out[k, d], skipping rows whose index == padding_idx
// (padding_idx < 0: none); element i of grad_out.
template <typename T>
__host__ __device__ inline void embedding_backward_elem(const T* grad_out, const long long* index, T* grad_weight,
                                                        long long dim, long long num_embeddings,
                                                        long long padding_idx, long long i) {
    const long long d = i % dim, k = i / dim;
    const long long j = index[k];
    if (j >= 0 && j < num_embeddings && j != padding_idx) atomic_add(grad_weight + j * dim + d, to_float(grad_out[i]));
}

}  // namespace index_k
