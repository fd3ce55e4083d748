// row_reduce.cuh -- the cross-thread combine of the row kernels (softmax, layer norm, cross-entropy).
//
// Every thread of a warp, or of a block, passes its partial value and gets the combined one back. The
// warp versions use xor shuffles (each lane ends with the result); the block versions reduce each warp,
// combine the warp results through `red` (32 floats of shared memory, reusable on return) and need a
// blockDim.x that is a multiple of 32. Device-only: the host harnesses combine partials with a loop.
//
// The second half holds a row in registers, for the *_reg_* kernels of softmax.cu and layernorm.cu: a
// block of nt threads (a multiple of 32) keeps one row of `cols` elements in a float array of N slots per
// thread (N a compile-time multiple of 8, nt * N >= cols), so the row is read from global memory once.
// Slot s of thread t holds the element (column):
//   vector layout (vec: the row pointers 16-byte aligned and cols a multiple of V = 16 / sizeof(T), i.e.
//     4 floats or 8 halves): the row's 16-byte vectors k = t, t + nt, t + 2 nt, ..., V elements each, so
//     slot s is element (t + (s / V) * nt) * V + s % V; each vector is ONE 16-byte load / store, and
//     consecutive threads touch consecutive vectors (coalesced).
//   scalar layout (otherwise): slot s is element t + s * nt.
// A slot past the row's end (element >= cols) is not loaded (it is set to `pad`) and not stored. The
// arithmetic is float32 for both dtypes (__half is converted on load and store).

#pragma once
#include <cuda_fp16.h>

#ifdef __CUDACC__
__device__ __forceinline__ float row_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float row_warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float row_block_sum(float v, float* red) {
    v = row_warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = row_warp_sum(lane < nwarps ? red[lane] : 0.0f);
    __syncthreads();
    return v;
}

__device__ __forceinline__ float row_block_max(float v, float* red) {
    v = row_warp_max(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = row_warp_max(lane < nwarps ? red[lane] : -__builtin_huge_valf());
    __syncthreads();
    return v;
}
// ---- a row held in registers ---------------------------------------------------------------------------

// Elements per 16-byte vector.
template <typename T>
struct RowVec {
    static constexpr int V = 16 / (int)sizeof(T);
};

// May the rows starting at p (row r at p + r * cols) use the vector layout? A null p (an absent optional
// parameter) does not forbid it.
template <typename T>
__device__ __forceinline__ bool row_vec_ok(const T* p, long long cols) {
    return cols % RowVec<T>::V == 0 && reinterpret_cast<unsigned long long>(p) % 16 == 0;
}

__device__ __forceinline__ float row_load1(const float* p, long long j) { return p[j]; }
__device__ __forceinline__ float row_load1(const __half* p, long long j) { return __half2float(p[j]); }
__device__ __forceinline__ void row_store1(float* p, long long j, float v) { p[j] = v; }
__device__ __forceinline__ void row_store1(__half* p, long long j, float v) { p[j] = __float2half_rn(v); }

// One 16-byte vector at p (16-byte aligned) <-> v[0 .. V-1].
__device__ __forceinline__ void row_load16(const float* p, float* v) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
}

// Two halves packed in 32 bits (the lower address in the low bits) <-> two floats.
__device__ __forceinline__ void row_unpack_half2(unsigned u, float* v) {
    v[0] = __half2float(__ushort_as_half((unsigned short)(u & 0xffffu)));
    v[1] = __half2float(__ushort_as_half((unsigned short)(u >> 16)));
}

__device__ __forceinline__ void row_load16(const __half* p, float* v) {
    const uint4 q = *reinterpret_cast<const uint4*>(p);
    row_unpack_half2(q.x, v);
    row_unpack_half2(q.y, v + 2);
    row_unpack_half2(q.z, v + 4);
    row_unpack_half2(q.w, v + 6);
}

__device__ __forceinline__ void row_store16(float* p, const float* v) {
    float4 q;
    q.x = v[0];
    q.y = v[1];
    q.z = v[2];
    q.w = v[3];
    *reinterpret_cast<float4*>(p) = q;
}

__device__ __forceinline__ unsigned row_pack_half2(float lo, float hi) {
    return (unsigned)__half_as_ushort(__float2half_rn(lo)) | ((unsigned)__half_as_ushort(__float2half_rn(hi)) << 16);
}

__device__ __forceinline__ void row_store16(__half* p, const float* v) {
    uint4 q;
    q.x = row_pack_half2(v[0], v[1]);
    q.y = row_pack_half2(v[2], v[3]);
    q.z = row_pack_half2(v[4], v[5]);
    q.w = row_pack_half2(v[6], v[7]);
    *reinterpret_cast<uint4*>(p) = q;
}

// In the three functions below, the layout is the template argument VEC (kernels branch once per launch
// on row_vec_ok), and cols fits an int (the row fits the block's registers: cols <= nt * N <= 1024 * N).

// v <- this thread's slots of the row p[0 .. cols-1] (pad past its end). All loads are issued before any
// use, so each thread has N elements (N / V vectors) in flight.
template <bool VEC, int N, typename T>
__device__ __forceinline__ void row_reg_load(float (&v)[N], const T* p, int cols, float pad) {
    constexpr int V = RowVec<T>::V;
    static_assert(N % V == 0, "N must be a whole number of 16-byte vectors");
    const int t = threadIdx.x, nt = blockDim.x;
    if (VEC) {
#pragma unroll
        for (int i = 0; i < N / V; ++i) {
            const int j = (t + i * nt) * V;
            if (j < cols) {
                row_load16(p + j, v + i * V);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) v[i * V + k] = pad;
            }
        }
    } else {
#pragma unroll
        for (int s = 0; s < N; ++s) {
            const int j = t + s * nt;
            v[s] = j < cols ? row_load1(p, j) : pad;
        }
    }
}

// p[0 .. cols-1] <- this thread's slots of the row (slots past its end are not written).
template <bool VEC, int N, typename T>
__device__ __forceinline__ void row_reg_store(T* p, const float (&v)[N], int cols) {
    constexpr int V = RowVec<T>::V;
    const int t = threadIdx.x, nt = blockDim.x;
    if (VEC) {
#pragma unroll
        for (int i = 0; i < N / V; ++i) {
            const int j = (t + i * nt) * V;
            if (j < cols) row_store16(p + j, v + i * V);
        }
    } else {
#pragma unroll
        for (int s = 0; s < N; ++s) {
            const int j = t + s * nt;
            if (j < cols) row_store1(p, j, v[s]);
        }
    }
}

// v[s] <- v[s] * w[col(s)] (MUL) or v[s] + w[col(s)] (!MUL) for the slots inside the row; w is a
// (cols,) parameter vector (layer norm's weight / bias), 16-byte aligned when VEC.
template <bool VEC, bool MUL, int N, typename T>
__device__ __forceinline__ void row_reg_param(float (&v)[N], const T* w, int cols) {
    constexpr int V = RowVec<T>::V;
    const int t = threadIdx.x, nt = blockDim.x;
    if (VEC) {
#pragma unroll
        for (int i = 0; i < N / V; ++i) {
            const int j = (t + i * nt) * V;
            if (j < cols) {
                float wv[V];
                row_load16(w + j, wv);
#pragma unroll
                for (int k = 0; k < V; ++k) v[i * V + k] = MUL ? v[i * V + k] * wv[k] : v[i * V + k] + wv[k];
            }
        }
    } else {
#pragma unroll
        for (int s = 0; s < N; ++s) {
            const int j = t + s * nt;
            if (j < cols) v[s] = MUL ? v[s] * row_load1(w, j) : v[s] + row_load1(w, j);
        }
    }
}

// Is slot s of this thread inside the row?
template <bool VEC, typename T>
__device__ __forceinline__ bool row_reg_valid(int s, int cols) {
    constexpr int V = RowVec<T>::V;
    const int t = threadIdx.x, nt = blockDim.x;
    return VEC ? (t + (s / V) * nt) * V < cols : t + s * nt < cols;
}
#endif
