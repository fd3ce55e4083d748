// matmul.cu -- batched GEMM. The kernel bodies are the __host__ __device__ phases of matmul.cuh (run on
// the CPU by the host tests); this file only sequences them between __syncthreads barriers.
//
// gemm_f32 / gemm_f16 (SIMT, any shape and strides; _f16 = __half A, B, C with float32 accumulation):
//   C[b] = alpha * A[b] @ B[b] + beta * C[b]   for b in [0, batch)
//   launch: block = 256 threads (exactly), grid = (ceil(N / 128), ceil(M / 128), min(batch, 65535));
//           batches are covered by a grid-stride loop over blockIdx.z. No dynamic shared memory
//           (16.5 KB static). grid.y <= 65535 limits M to 8,388,480 rows (8,388,480 = 65535 * 128).
//   arguments: (C, A, B, M, N, K, batch,
//               sAm, sAk, sAb,   A[b, m, k] = A[b * sAb + m * sAm + k * sAk]
//               sBk, sBn, sBb,   B[b, k, n] = B[b * sBb + k * sBk + n * sBn]
//               sCm, sCn, sCb,   C[b, m, n] = C[b * sCb + m * sCm + n * sCn]
//               alpha, beta)     all sizes / strides long long element counts, alpha and beta float.
//   gemm_f32_vec: gemm_f32 with 16-byte loads (same launch and arguments), for A and B row-major (sAk == 1,
//   sBn == 1) with K, N, sAm, sBk, sAb, sBb multiples of 4 and A, B 16-byte aligned: the host checks.
//   A batch stride of 0 broadcasts that operand. A transposed operand is just swapped strides (the
//   loads are coalesced when sAk == 1 or sAm == 1, and when sBn == 1 or sBk == 1). When beta == 0, C is
//   not read (it may hold garbage / NaN). C must not overlap A or B.
//
// gemm_f16_tc_f16 / gemm_f16_tc_f32 (tensor cores, WMMA 16x16x16, f16 in, f32 accumulate, f16 or f32 out):
//   C[b] = alpha * A[b] @ B[b] + beta * C[b], A (M, K), B (K, N), C (M, N) all CONTIGUOUS row-major.
//   Requirements the host must check (else pad with zeros to multiples of 16, or use gemm_f16):
//     M, N, K multiples of 16; A, B base pointers 16-byte aligned and sAb, sBb multiples of 8 elements.
//   launch: block = 128 threads (exactly: 4 warps), grid = (ceil(N / 64), ceil(M / 64), min(batch, 65535)),
//           grid-stride over batches in z. No dynamic shared memory (26.4 KB static). Needs sm_70+.
//   arguments: (C, A, B, M, N, K, batch, sAb, sBb, sCb, alpha, beta)  (batch strides in elements, 0 = broadcast)
//
// Both: the host skips the launch when M, N or batch is 0 (a zero grid dimension is a launch error);
// K = 0 is handled by the kernels (C = beta * C, or 0 when beta == 0).

#include <cuda_fp16.h>
#include <mma.h>
#include "matmul.cuh"

// VEC: the 16-byte load and store phases (float only; the host checks their preconditions, matmul.cuh)
template <typename T, bool VEC>
__device__ __forceinline__ void gemm_simt(T* C, const T* A, const T* B, const MmArgs& g, long long batch,
                                          long long sAb, long long sBb, long long sCb) {
    __shared__ __align__(16) float As[2][MM_TILE_FLOATS];
    __shared__ __align__(16) float Bs[2][MM_TILE_FLOATS];
    const int tid = threadIdx.x;
    const long long m0 = (long long)blockIdx.y * MM_BM, n0 = (long long)blockIdx.x * MM_BN;
    const long long ntiles = mm_num_k_tiles(g.K);
    for (long long b = blockIdx.z; b < batch; b += gridDim.z) {
        const T* Ab = A + b * sAb;
        const T* Bb = B + b * sBb;
        MmThread st;
        mm_zero(st);
        if (ntiles > 0) {
            if constexpr (VEC) {
                mm_load_global_vec(st, g, Ab, Bb, tid, m0, n0, 0);
                mm_store_shared_vec(st, As[0], Bs[0], tid);
            } else {
                mm_load_global(st, g, Ab, Bb, tid, m0, n0, 0);
                mm_store_shared(st, g, As[0], Bs[0], tid);
            }
        }
        __syncthreads();
        for (long long t = 0; t < ntiles; ++t) {
            const int cur = (int)(t & 1);
            if (t + 1 < ntiles) {
                if constexpr (VEC) mm_load_global_vec(st, g, Ab, Bb, tid, m0, n0, (t + 1) * MM_BK);
                else mm_load_global(st, g, Ab, Bb, tid, m0, n0, (t + 1) * MM_BK);
            }
            mm_compute(st, As[cur], Bs[cur], tid);
            if (t + 1 < ntiles) {
                if constexpr (VEC) mm_store_shared_vec(st, As[cur ^ 1], Bs[cur ^ 1], tid);
                else mm_store_shared(st, g, As[cur ^ 1], Bs[cur ^ 1], tid);
            }
            __syncthreads();
        }
        mm_epilogue(st, g, C + b * sCb, tid, m0, n0);
    }
}

template <typename T, bool VEC = false>
__device__ __forceinline__ void gemm_simt_entry(T* C, const T* A, const T* B, long long M, long long N, long long K,
                                                long long batch, long long sAm, long long sAk, long long sAb,
                                                long long sBk, long long sBn, long long sBb, long long sCm,
                                                long long sCn, long long sCb, float alpha, float beta) {
    MmArgs g;
    g.M = M; g.N = N; g.K = K;
    g.sAm = sAm; g.sAk = sAk;
    g.sBk = sBk; g.sBn = sBn;
    g.sCm = sCm; g.sCn = sCn;
    g.alpha = alpha; g.beta = beta;
    gemm_simt<T, VEC>(C, A, B, g, batch, sAb, sBb, sCb);
}

extern "C" __global__ __launch_bounds__(MM_THREADS) void gemm_f32(
    float* C, const float* A, const float* B, long long M, long long N, long long K, long long batch,
    long long sAm, long long sAk, long long sAb, long long sBk, long long sBn, long long sBb,
    long long sCm, long long sCn, long long sCb, float alpha, float beta) {
    gemm_simt_entry(C, A, B, M, N, K, batch, sAm, sAk, sAb, sBk, sBn, sBb, sCm, sCn, sCb, alpha, beta);
}

extern "C" __global__ __launch_bounds__(MM_THREADS) void gemm_f32_vec(
    float* C, const float* A, const float* B, long long M, long long N, long long K, long long batch,
    long long sAm, long long sAk, long long sAb, long long sBk, long long sBn, long long sBb,
    long long sCm, long long sCn, long long sCb, float alpha, float beta) {
    gemm_simt_entry<float, true>(C, A, B, M, N, K, batch, sAm, sAk, sAb, sBk, sBn, sBb, sCm, sCn, sCb, alpha, beta);
}

extern "C" __global__ __launch_bounds__(MM_THREADS) void gemm_f16(
    __half* C, const __half* A, const __half* B, long long M, long long N, long long K, long long batch,
    long long sAm, long long sAk, long long sAb, long long sBk, long long sBn, long long sBb,
    long long sCm, long long sCn, long long sCb, float alpha, float beta) {
    gemm_simt_entry(C, A, B, M, N, K, batch, sAm, sAk, sAb, sBk, sBn, sBb, sCm, sCn, sCb, alpha, beta);
}

template <typename T>
__device__ __forceinline__ void gemm_tc(T* C, const __half* A, const __half* B, long long M, long long N, long long K,
                                        long long batch, long long sAb, long long sBb, long long sCb, float alpha,
                                        float beta) {
    using namespace nvcuda;
    __shared__ __align__(128) __half As[TC_BM * TC_ALD];
    __shared__ __align__(128) __half Bs[TC_BK * TC_BLD];
    __shared__ __align__(128) float Cs[TC_BM * TC_CLD];
    const int tid = threadIdx.x, warp = threadIdx.x >> 5;
    const long long m0 = (long long)blockIdx.y * TC_BM, n0 = (long long)blockIdx.x * TC_BN;
    for (long long b = blockIdx.z; b < batch; b += gridDim.z) {
        const __half* Ab = A + b * sAb;
        const __half* Bb = B + b * sBb;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
        for (long long k0 = 0; k0 < K; k0 += TC_BK) {
            tc_load_tiles(As, Bs, Ab, Bb, M, N, K, m0, n0, k0, tid);
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < TC_BK; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
#pragma unroll
                for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], As + tc_frag_a(warp, i, kk), TC_ALD);
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], Bs + tc_frag_b(warp, j, kk), TC_BLD);
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j)
                wmma::store_matrix_sync(Cs + tc_frag_c(warp, i, j), acc[i][j], TC_CLD, wmma::mem_row_major);
        __syncthreads();
        tc_epilogue(C + b * sCb, Cs, M, N, m0, n0, alpha, beta, tid);
        __syncthreads();
    }
}

extern "C" __global__ __launch_bounds__(TC_THREADS) void gemm_f16_tc_f16(
    __half* C, const __half* A, const __half* B, long long M, long long N, long long K, long long batch,
    long long sAb, long long sBb, long long sCb, float alpha, float beta) {
    gemm_tc(C, A, B, M, N, K, batch, sAb, sBb, sCb, alpha, beta);
}

extern "C" __global__ __launch_bounds__(TC_THREADS) void gemm_f16_tc_f32(
    float* C, const __half* A, const __half* B, long long M, long long N, long long K, long long batch,
    long long sAb, long long sBb, long long sCb, float alpha, float beta) {
    gemm_tc(C, A, B, M, N, K, batch, sAb, sBb, sCb, alpha, beta);
}
