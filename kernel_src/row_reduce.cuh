// row_reduce.cuh -- the cross-thread combine of the row kernels (softmax, layer norm, cross-entropy).
//
// Every thread of a warp, or of a block, passes its partial value and gets the combined one back. The
// warp versions use xor shuffles (each lane ends with the result); the block versions reduce each warp,
// combine the warp results through `red` (32 floats of shared memory, reusable on return) and need a
// blockDim.x that is a multiple of 32. Device-only: the host harnesses combine partials with a loop.

#pragma once

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
#endif
