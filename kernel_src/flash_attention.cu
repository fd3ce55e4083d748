// flash_attention.cu -- scaled dot-product attention that never writes the L x S score matrix to device memory
// (FlashAttention-2's schedule, on CUDA cores): softmax(Q K^T * scale + mask) V, and its backward from the
// forward's output O and the log-sum-exp of each row's scores (LSE).
//
// Shapes (element counts): a batch of nbatch = B0 * B1 problems, problem b = (b0, b1) = (b / B1, b % B1)
// (for example batch x heads). Q (L, E), K (S, E), V (S, Ev) of problem b are read through strides, the last dim
// contiguous: Q[b, i, e] = Q[b0 * sQ0 + b1 * sQ1 + i * sQl + e] (K, V alike with sK*, sV*). So a (B, H, T, hs)
// view of a (B, T, H * hs) projection is read in place. M (optional, null = none) is an ADDITIVE mask of Q's
// dtype read as M[b0 * sM0 + b1 * sM1 + i * sMl + j * sMs] (0 strides broadcast). causal != 0 masks key j > i
// (top-left aligned, as PyTorch's is_causal). E, Ev <= D, the kernel's head-dim template (64 or 128): the
// tiles are zero-padded past E and Ev. The outputs are contiguous: O (nbatch, L, Ev), LSE (nbatch, L) float32,
// dQ (nbatch, L, E), dK (nbatch, S, E), dV (nbatch, S, Ev). Arithmetic is float32 for both dtypes.
//
// A query row whose keys are all masked (-inf) gets O = 0 and LSE = -inf, and no gradient (PyTorch's math path
// gives zeros there too). A row with a NaN score gets O = LSE = NaN, and its gradients are NaN (as PyTorch's).
//
// Kernels (suffix _f32 / _f16 for the dtype of Q, K, V, M, O, dO, dQ, dK, dV; _d64 / _d128 for D):
//   flash_attn_fwd_*      (O, LSE, Q, K, V, M, geom, scale): block = 128 threads (4 warps), FaRows<D>::fwd query
//                         rows per block: grid = (ceil(L / FaRows<D>::fwd), min(nbatch, 65535)), grid-stride over
//                         batches.
//   flash_attn_bwd_pre_*  (Dv, dO, O, rows, Ev): Dv[r] = sum_e dO[r, e] * O[r, e] (float32), one warp per row;
//                         block = 256 threads, any grid (grid-stride over rows).
//   flash_attn_bwd_dq_*   (dQ, Q, K, V, M, dO, LSE, Dv, geom, scale): like the forward, FaRows<D>::bwd rows per
//                         block: grid = (ceil(L / FaRows<D>::bwd), min(nbatch, 65535)).
//   flash_attn_bwd_dkv_*  (dK, dV, Q, K, V, M, dO, LSE, Dv, geom, scale): FA_KT = 32 keys per block, grid =
//                         (ceil(S / 32), min(nbatch, 65535)); no atomics: each block owns its keys' rows of dK, dV.
// geom is an AttnGeom (below, 20 long longs). No dynamic shared memory (at most 44 KB static).
//
// How the work is laid out: in a K/V tile of 32 keys, lane j of a warp owns key j when scores are formed (one
// dot product per lane, K rows padded to D + 1 floats in shared memory so the 32 lanes hit 32 banks); the
// running output row is split over the lanes by dimension (lane, lane + 32, ...), and each lane's probability
// reaches the others by __shfl_sync. The forward keeps each row's running max m and sum l (online softmax).
// The backward recomputes P = exp(S - LSE) tile by tile: dQ = scale * dS K, dK = scale * dS^T Q, dV = P^T dO,
// with dS = P * (dO V^T - Dv).

#include <cuda_fp16.h>
#include "row_reduce.cuh"

#define FA_THREADS 128
// at least 4 blocks per SM: ptxas then allocates up to 128 registers and spills none (left to itself it spilled a
// few bytes in the float16 backward kernels at 72-96 registers)
#define FA_MIN_BLOCKS 4
#define FA_WARPS 4
#define FA_KT 32
#define FA_PRE_THREADS 256

struct AttnGeom {
    long long nbatch, B1, L, S, E, Ev;
    long long sQ0, sQ1, sQl, sK0, sK1, sKs, sV0, sV1, sVs;
    long long sM0, sM1, sMl, sMs;
    long long causal;
};

// query rows per block: forward, and the backward's dQ / dK-dV kernels (their shared memory holds dO too)
template <int D> struct FaRows { static constexpr int fwd = D == 64 ? 32 : 16, bwd = D == 64 ? 16 : 8; };

__device__ __forceinline__ float fa_in(float x) { return x; }
__device__ __forceinline__ float fa_in(__half x) { return __half2float(x); }
__device__ __forceinline__ void fa_out(float* p, float v) { *p = v; }
__device__ __forceinline__ void fa_out(__half* p, float v) { *p = __float2half_rn(v); }

// One problem's operands: the base pointers of problem b.
template <typename T>
struct FaProblem {
    const T *q, *k, *v, *m;
    __device__ __forceinline__ FaProblem(const T* Q, const T* K, const T* V, const T* M, const AttnGeom& g,
                                         long long b) {
        // (32-bit: a 64-bit division is a subroutine call, whose calling convention spills registers; the host
        // keeps nbatch below 2^31)
        const unsigned bb = (unsigned)b, nb1 = (unsigned)g.B1;
        const long long b0 = bb / nb1, b1 = bb - (bb / nb1) * nb1;
        q = Q + b0 * g.sQ0 + b1 * g.sQ1;
        k = K + b0 * g.sK0 + b1 * g.sK1;
        v = V + b0 * g.sV0 + b1 * g.sV1;
        m = M ? M + b0 * g.sM0 + b1 * g.sM1 : nullptr;
    }
};

// rows [i0, i0 + R) of a row-strided (ld) or contiguous operand into a float tile [R][ldt] (times mul), zero past
// n rows and past `width` columns
template <typename T, int R, int D>
__device__ __forceinline__ void fa_load_rows(float* tile, int ldt, const T* src, long long ld, long long i0,
                                             long long n, long long width, float mul) {
    for (int t = threadIdx.x; t < R * D; t += FA_THREADS) {
        const int r = t / D, e = t % D;
        const long long i = i0 + r;
        tile[r * ldt + e] = (i < n && e < width) ? fa_in(src[i * ld + e]) * mul : 0.0f;
    }
}

// The score of query row i (its scaled q in qs) with key j = j0 + lane (its row in ks, padded to D + 1):
// -inf where masked (past S, causal, or the mask's -inf), plus the additive mask.
template <typename T, int D>
__device__ __forceinline__ float fa_score(const float* qs, const float* ks, const FaProblem<T>& p,
                                          const AttnGeom& g, long long i, long long j) {
    const int lane = threadIdx.x & 31;
    if (i >= g.L || j >= g.S || (g.causal && j > i)) return -__builtin_huge_valf();
    float s = 0.0f;
#pragma unroll 4
    for (int e = 0; e < D; ++e) s += qs[e] * ks[lane * (D + 1) + e];
    if (p.m) s += fa_in(p.m[i * g.sMl + j * g.sMs]);
    return s;
}

template <typename T, int D>
__device__ __forceinline__ void fa_forward(T* O, float* LSE, const T* Q, const T* K, const T* V, const T* M,
                                           const AttnGeom& g, float scale) {
    constexpr int BQ = FaRows<D>::fwd, RPW = BQ / FA_WARPS, DPL = D / 32;
    __shared__ float Qs[BQ * D];
    __shared__ float Ks[FA_KT * (D + 1)];
    __shared__ float Vs[FA_KT * (D + 1)];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long i0 = (long long)blockIdx.x * BQ;
    // causal: the keys after this block's last query are masked for every one of its rows
    const long long kend = g.causal ? (i0 + BQ < g.S ? i0 + BQ : g.S) : g.S;
    for (long long b = blockIdx.y; b < g.nbatch; b += gridDim.y) {
        const FaProblem<T> p(Q, K, V, M, g, b);
        fa_load_rows<T, BQ, D>(Qs, D, p.q, g.sQl, i0, g.L, g.E, scale);
        float m[RPW], l[RPW], o[RPW][DPL];
#pragma unroll
        for (int r = 0; r < RPW; ++r) {
            m[r] = -__builtin_huge_valf();
            l[r] = 0.0f;
#pragma unroll
            for (int c = 0; c < DPL; ++c) o[r][c] = 0.0f;
        }
        for (long long j0 = 0; j0 < kend; j0 += FA_KT) {
            __syncthreads();  // the previous tile is consumed (and the Q tile written, the first time)
            fa_load_rows<T, FA_KT, D>(Ks, D + 1, p.k, g.sKs, j0, g.S, g.E, 1.0f);
            fa_load_rows<T, FA_KT, D>(Vs, D + 1, p.v, g.sVs, j0, g.S, g.Ev, 1.0f);
            __syncthreads();
#pragma unroll
            for (int r = 0; r < RPW; ++r) {
                const int row = warp * RPW + r;
                const float s = fa_score<T, D>(Qs + row * D, Ks, p, g, i0 + row, j0 + lane);
                const float mnew = fmaxf(m[r], row_warp_max(s));
                // nothing seen yet (every key so far masked): keep the zeros, weigh nothing; but a NaN score
                // (which fmaxf skips) makes the row's sum NaN, so the row ends NaN, as PyTorch's does
                const float pj = mnew == -__builtin_huge_valf() ? (s != s ? s : 0.0f) : expf(s - mnew);
                const float alpha = mnew == -__builtin_huge_valf() ? 1.0f : expf(m[r] - mnew);
                l[r] = l[r] * alpha + row_warp_sum(pj);
                m[r] = mnew;
#pragma unroll
                for (int c = 0; c < DPL; ++c) o[r][c] *= alpha;
                for (int jj = 0; jj < FA_KT; ++jj) {
                    const float w = __shfl_sync(0xffffffffu, pj, jj);
#pragma unroll
                    for (int c = 0; c < DPL; ++c) o[r][c] += w * Vs[jj * (D + 1) + lane + 32 * c];
                }
            }
        }
#pragma unroll
        for (int r = 0; r < RPW; ++r) {
            const long long i = i0 + warp * RPW + r;
            if (i >= g.L) continue;
            // a NaN score, or an infinite one met by another (inf - inf), left l NaN
            const bool nan_row = l[r] != l[r];
            const float inv = nan_row ? __builtin_nanf("") : (l[r] > 0.0f ? 1.0f / l[r] : 0.0f);
            T* orow = O + (b * g.L + i) * g.Ev;
#pragma unroll
            for (int c = 0; c < DPL; ++c)
                if (lane + 32 * c < g.Ev) fa_out(orow + lane + 32 * c, o[r][c] * inv);
            if (lane == 0) {
                const float lse = l[r] > 0.0f ? m[r] + logf(l[r]) : -__builtin_huge_valf();
                LSE[b * g.L + i] = nan_row ? __builtin_nanf("") : lse;
            }
        }
        __syncthreads();  // Qs is read until here; the next batch overwrites it
    }
}

template <typename T>
__device__ __forceinline__ void fa_bwd_pre(float* Dv, const T* dO, const T* O, long long rows, long long Ev) {
    const long long wpb = blockDim.x >> 5, lane = threadIdx.x & 31;
    for (long long r = blockIdx.x * wpb + (threadIdx.x >> 5); r < rows; r += gridDim.x * wpb) {
        float s = 0.0f;
        for (long long e = lane; e < Ev; e += 32) s += fa_in(dO[r * Ev + e]) * fa_in(O[r * Ev + e]);
        s = row_warp_sum(s);
        if (lane == 0) Dv[r] = s;
    }
}

// P and dS of query row i with key j0 + lane: p = exp(s - lse) (0 where masked or the row is all masked),
// ds = p * (dO_i . V_j - Dv_i)
template <typename T, int D>
__device__ __forceinline__ void fa_p_ds(float& pj, float& ds, const float* qs, const float* dos, const float* ks,
                                        const float* vs, const FaProblem<T>& p, const AttnGeom& g, long long i,
                                        long long j, float lse, float dv) {
    const int lane = threadIdx.x & 31;
    const float s = fa_score<T, D>(qs, ks, p, g, i, j);
    pj = (s == -__builtin_huge_valf() || lse == -__builtin_huge_valf()) ? 0.0f : expf(s - lse);
    float dp = 0.0f;
#pragma unroll 4
    for (int e = 0; e < D; ++e) dp += dos[e] * vs[lane * (D + 1) + e];
    ds = pj * (dp - dv);
}

template <typename T, int D>
__device__ __forceinline__ void fa_bwd_dq(T* dQ, const T* Q, const T* K, const T* V, const T* M, const T* dO,
                                          const float* LSE, const float* Dv, const AttnGeom& g, float scale) {
    constexpr int BQ = FaRows<D>::bwd, RPW = BQ / FA_WARPS, DPL = D / 32;
    __shared__ float Qs[BQ * D];
    __shared__ float dOs[BQ * D];
    __shared__ float Ks[FA_KT * (D + 1)];
    __shared__ float Vs[FA_KT * (D + 1)];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long i0 = (long long)blockIdx.x * BQ;
    const long long kend = g.causal ? (i0 + BQ < g.S ? i0 + BQ : g.S) : g.S;
    for (long long b = blockIdx.y; b < g.nbatch; b += gridDim.y) {
        const FaProblem<T> p(Q, K, V, M, g, b);
        fa_load_rows<T, BQ, D>(Qs, D, p.q, g.sQl, i0, g.L, g.E, scale);
        fa_load_rows<T, BQ, D>(dOs, D, dO + b * g.L * g.Ev, g.Ev, i0, g.L, g.Ev, 1.0f);
        float lse[RPW], dv[RPW], dq[RPW][DPL];
#pragma unroll
        for (int r = 0; r < RPW; ++r) {
            const long long i = i0 + warp * RPW + r;
            lse[r] = i < g.L ? LSE[b * g.L + i] : -__builtin_huge_valf();
            dv[r] = i < g.L ? Dv[b * g.L + i] : 0.0f;
#pragma unroll
            for (int c = 0; c < DPL; ++c) dq[r][c] = 0.0f;
        }
        for (long long j0 = 0; j0 < kend; j0 += FA_KT) {
            __syncthreads();
            fa_load_rows<T, FA_KT, D>(Ks, D + 1, p.k, g.sKs, j0, g.S, g.E, 1.0f);
            fa_load_rows<T, FA_KT, D>(Vs, D + 1, p.v, g.sVs, j0, g.S, g.Ev, 1.0f);
            __syncthreads();
#pragma unroll
            for (int r = 0; r < RPW; ++r) {
                const int row = warp * RPW + r;
                float pj, ds;
                fa_p_ds<T, D>(pj, ds, Qs + row * D, dOs + row * D, Ks, Vs, p, g, i0 + row, j0 + lane, lse[r], dv[r]);
                for (int jj = 0; jj < FA_KT; ++jj) {
                    const float w = __shfl_sync(0xffffffffu, ds, jj);
#pragma unroll
                    for (int c = 0; c < DPL; ++c) dq[r][c] += w * Ks[jj * (D + 1) + lane + 32 * c];
                }
            }
        }
#pragma unroll
        for (int r = 0; r < RPW; ++r) {
            const long long i = i0 + warp * RPW + r;
            if (i >= g.L) continue;
#pragma unroll
            for (int c = 0; c < DPL; ++c)
                if (lane + 32 * c < g.E) fa_out(dQ + (b * g.L + i) * g.E + lane + 32 * c, dq[r][c] * scale);
        }
        __syncthreads();
    }
}

template <typename T, int D>
__device__ __forceinline__ void fa_bwd_dkv(T* dK, T* dV, const T* Q, const T* K, const T* V, const T* M,
                                           const T* dO, const float* LSE, const float* Dv, const AttnGeom& g,
                                           float scale) {
    constexpr int BQ = FaRows<D>::bwd, RPW = BQ / FA_WARPS, DPL = D / 32, KPW = FA_KT / FA_WARPS;
    __shared__ float Ks[FA_KT * (D + 1)];
    __shared__ float Vs[FA_KT * (D + 1)];
    __shared__ float Qs[BQ * D];
    __shared__ float dOs[BQ * D];
    __shared__ float Ps[BQ * (FA_KT + 1)];
    __shared__ float dSs[BQ * (FA_KT + 1)];
    __shared__ float lse_s[BQ], dv_s[BQ];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long j0 = (long long)blockIdx.x * FA_KT;
    // causal: the queries before this block's first key see none of its keys
    const long long istart = g.causal ? j0 / BQ * BQ : 0;
    for (long long b = blockIdx.y; b < g.nbatch; b += gridDim.y) {
        const FaProblem<T> p(Q, K, V, M, g, b);
        fa_load_rows<T, FA_KT, D>(Ks, D + 1, p.k, g.sKs, j0, g.S, g.E, 1.0f);
        fa_load_rows<T, FA_KT, D>(Vs, D + 1, p.v, g.sVs, j0, g.S, g.Ev, 1.0f);
        // this thread's share of the block's dK, dV rows: keys warp + FA_WARPS * kk, dims lane + 32 * c
        float dk[KPW][DPL], dv[KPW][DPL];
#pragma unroll
        for (int kk = 0; kk < KPW; ++kk)
#pragma unroll
            for (int c = 0; c < DPL; ++c) dk[kk][c] = dv[kk][c] = 0.0f;
        for (long long i0 = istart; i0 < g.L; i0 += BQ) {
            __syncthreads();  // the previous query tile is consumed (K and V written, the first time)
            fa_load_rows<T, BQ, D>(Qs, D, p.q, g.sQl, i0, g.L, g.E, scale);
            fa_load_rows<T, BQ, D>(dOs, D, dO + b * g.L * g.Ev, g.Ev, i0, g.L, g.Ev, 1.0f);
            for (int t = threadIdx.x; t < BQ; t += FA_THREADS) {
                const long long i = i0 + t;
                lse_s[t] = i < g.L ? LSE[b * g.L + i] : -__builtin_huge_valf();
                dv_s[t] = i < g.L ? Dv[b * g.L + i] : 0.0f;
            }
            __syncthreads();
#pragma unroll
            for (int r = 0; r < RPW; ++r) {  // P and dS of this warp's rows, lane = key
                const int row = warp * RPW + r;
                float pj, ds;
                fa_p_ds<T, D>(pj, ds, Qs + row * D, dOs + row * D, Ks, Vs, p, g, i0 + row, j0 + lane, lse_s[row],
                              dv_s[row]);
                Ps[row * (FA_KT + 1) + lane] = pj;
                dSs[row * (FA_KT + 1) + lane] = ds;
            }
            __syncthreads();
            for (int row = 0; row < BQ; ++row) {
#pragma unroll
                for (int kk = 0; kk < KPW; ++kk) {
                    const int key = warp + FA_WARPS * kk;
                    const float pj = Ps[row * (FA_KT + 1) + key], ds = dSs[row * (FA_KT + 1) + key];
#pragma unroll
                    for (int c = 0; c < DPL; ++c) {
                        dv[kk][c] += pj * dOs[row * D + lane + 32 * c];
                        dk[kk][c] += ds * Qs[row * D + lane + 32 * c];  // Qs holds scale * q
                    }
                }
            }
        }
#pragma unroll
        for (int kk = 0; kk < KPW; ++kk) {
            const long long j = j0 + warp + FA_WARPS * kk;
            if (j >= g.S) continue;
#pragma unroll
            for (int c = 0; c < DPL; ++c) {
                const long long e = lane + 32 * c;
                if (e < g.E) fa_out(dK + (b * g.S + j) * g.E + e, dk[kk][c]);
                if (e < g.Ev) fa_out(dV + (b * g.S + j) * g.Ev + e, dv[kk][c]);
            }
        }
        __syncthreads();  // K and V are read until here; the next batch overwrites them
    }
}

// the entry points (written out: the launcher reads each kernel's parameters from this text)
extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_fwd_f32_d64(
    float* O, float* LSE, const float* Q, const float* K, const float* V, const float* M, AttnGeom geom, float scale) {
    fa_forward<float, 64>(O, LSE, Q, K, V, M, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_bwd_dq_f32_d64(
    float* dQ, const float* Q, const float* K, const float* V, const float* M, const float* dO, const float* LSE,
    const float* Dv, AttnGeom geom, float scale) {
    fa_bwd_dq<float, 64>(dQ, Q, K, V, M, dO, LSE, Dv, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_bwd_dkv_f32_d64(
    float* dK, float* dV, const float* Q, const float* K, const float* V, const float* M, const float* dO,
    const float* LSE, const float* Dv, AttnGeom geom, float scale) {
    fa_bwd_dkv<float, 64>(dK, dV, Q, K, V, M, dO, LSE, Dv, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_fwd_f32_d128(
    float* O, float* LSE, const float* Q, const float* K, const float* V, const float* M, AttnGeom geom, float scale) {
    fa_forward<float, 128>(O, LSE, Q, K, V, M, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_bwd_dq_f32_d128(
    float* dQ, const float* Q, const float* K, const float* V, const float* M, const float* dO, const float* LSE,
    const float* Dv, AttnGeom geom, float scale) {
    fa_bwd_dq<float, 128>(dQ, Q, K, V, M, dO, LSE, Dv, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_bwd_dkv_f32_d128(
    float* dK, float* dV, const float* Q, const float* K, const float* V, const float* M, const float* dO,
    const float* LSE, const float* Dv, AttnGeom geom, float scale) {
    fa_bwd_dkv<float, 128>(dK, dV, Q, K, V, M, dO, LSE, Dv, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_fwd_f16_d64(
    __half* O, float* LSE, const __half* Q, const __half* K, const __half* V, const __half* M, AttnGeom geom,
    float scale) {
    fa_forward<__half, 64>(O, LSE, Q, K, V, M, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_bwd_dq_f16_d64(
    __half* dQ, const __half* Q, const __half* K, const __half* V, const __half* M, const __half* dO,
    const float* LSE, const float* Dv, AttnGeom geom, float scale) {
    fa_bwd_dq<__half, 64>(dQ, Q, K, V, M, dO, LSE, Dv, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_bwd_dkv_f16_d64(
    __half* dK, __half* dV, const __half* Q, const __half* K, const __half* V, const __half* M, const __half* dO,
    const float* LSE, const float* Dv, AttnGeom geom, float scale) {
    fa_bwd_dkv<__half, 64>(dK, dV, Q, K, V, M, dO, LSE, Dv, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_fwd_f16_d128(
    __half* O, float* LSE, const __half* Q, const __half* K, const __half* V, const __half* M, AttnGeom geom,
    float scale) {
    fa_forward<__half, 128>(O, LSE, Q, K, V, M, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_bwd_dq_f16_d128(
    __half* dQ, const __half* Q, const __half* K, const __half* V, const __half* M, const __half* dO,
    const float* LSE, const float* Dv, AttnGeom geom, float scale) {
    fa_bwd_dq<__half, 128>(dQ, Q, K, V, M, dO, LSE, Dv, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_THREADS, FA_MIN_BLOCKS) void flash_attn_bwd_dkv_f16_d128(
    __half* dK, __half* dV, const __half* Q, const __half* K, const __half* V, const __half* M, const __half* dO,
    const float* LSE, const float* Dv, AttnGeom geom, float scale) {
    fa_bwd_dkv<__half, 128>(dK, dV, Q, K, V, M, dO, LSE, Dv, geom, scale);
}

extern "C" __global__ __launch_bounds__(FA_PRE_THREADS) void flash_attn_bwd_pre_f32(
    float* Dv, const float* dO, const float* O, long long rows, long long Ev) {
    fa_bwd_pre(Dv, dO, O, rows, Ev);
}

extern "C" __global__ __launch_bounds__(FA_PRE_THREADS) void flash_attn_bwd_pre_f16(
    float* Dv, const __half* dO, const __half* O, long long rows, long long Ev) {
    fa_bwd_pre(Dv, dO, O, rows, Ev);
}
