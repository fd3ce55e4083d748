// matmul.cuh -- the GEMM kernels of matmul.cu, written as __host__ __device__ phases over an explicit
// (block, thread) index with shared memory passed as a pointer, so that a host harness
// (tests/cuda_host/matmul_harness.cu) can run a whole launch on the CPU: block by block, and within a
// block every thread through one phase before any thread starts the next (the __syncthreads barriers).
//
// 1. SIMT GEMM (gemm_f32 / gemm_f16): C[b] = alpha * A[b] @ B[b] + beta * C[b] with arbitrary element
//    strides, the classic register-blocked "SGEMM from scratch" structure:
//    block tile 128 x 128, k tile 8, 256 threads, each thread an 8 x 8 micro-tile made of four 4 x 4
//    quadrants (rows ty*4 + {0..3} and 64 + ty*4 + {0..3}, columns likewise with tx; tx = tid % 16,
//    ty = tid / 16), so the float4 shared-memory reads of a warp are contiguous and conflict free.
//    Shared memory holds the A tile transposed (As[k][m]) and the B tile as Bs[k][n], rows padded to
//    132 floats, double buffered: while the block computes on buffer t % 2 each thread already holds
//    its share of tile t + 1 in registers, stores it to the other buffer, then one barrier per k tile.
//    Each thread loads 4 elements of the A tile and 4 of the B tile per k tile; the mapping puts
//    consecutive threads along whichever dimension has element stride 1 (coalesced for both A and A^T).
//    Edges: loads outside (M, K) / (K, N) read 0, stores outside (M, N) are skipped: any M, N, K.
// 2. Tensor-core GEMM (gemm_f16_tc_*): WMMA 16x16x16, f16 inputs, f32 accumulation; contiguous row-major
//    A (M, K), B (K, N), C (M, N) with M, N, K multiples of 16. Block tile 64 x 64, k tile 32, 4 warps
//    in 2 x 2, each warp 32 x 32 = 2 x 2 fragments. Global -> shared copies are 16-byte (8 x half) chunks.
//    The host harness emulates everything except the wmma calls (replaced by a loop reading the same
//    shared-memory fragment addresses).

#pragma once
#include <cuda_fp16.h>

#define MM_HD __host__ __device__ __forceinline__

// ------------------------------------------------------------------------------------------------
// SIMT GEMM
// ------------------------------------------------------------------------------------------------
#define MM_BM 128
#define MM_BN 128
#define MM_BK 8
#define MM_THREADS 256
#define MM_LDS 132                       // padded row of As[k][.] and Bs[k][.] (BM = BN = 128, + 4)
#define MM_TILE_FLOATS (MM_BK * MM_LDS)  // one buffer of As or Bs
#define MM_LOADS 4                       // (BM * BK) / THREADS = (BK * BN) / THREADS

struct MmArgs {
    long long M, N, K;
    long long sAm, sAk;  // A[m, k] = A[m * sAm + k * sAk]
    long long sBk, sBn;  // B[k, n] = B[k * sBk + n * sBn]
    long long sCm, sCn;  // C[m, n] = C[m * sCm + n * sCn]
    float alpha, beta;
};

struct MmThread {
    float acc[8][8];
    float ra[MM_LOADS];  // this thread's share of the next A tile
    float rb[MM_LOADS];  // ... and of the next B tile
};

MM_HD float mm_to_f32(float v) { return v; }
MM_HD float mm_to_f32(__half v) { return __half2float(v); }
MM_HD void mm_store(float* p, long long i, float v) { p[i] = v; }
MM_HD void mm_store(__half* p, long long i, float v) { p[i] = __float2half_rn(v); }

// Row (or column) inside the 128 tile of micro-tile entry i (0..7) of thread coordinate ty (or tx).
MM_HD int mm_micro_index(int t16, int i) { return (i < 4) ? t16 * 4 + i : 64 + t16 * 4 + (i - 4); }

// Tile coordinates of load j (0..3) of thread tid. k_fast: consecutive threads walk k (used when the
// operand's k stride is 1); otherwise they walk m (A) or n (B).
MM_HD void mm_a_load_coord(int tid, int j, bool k_fast, int& m, int& k) {
    const int idx = tid + j * MM_THREADS;
    if (k_fast) { m = idx / MM_BK; k = idx % MM_BK; }
    else        { m = idx % MM_BM; k = idx / MM_BM; }
}
MM_HD void mm_b_load_coord(int tid, int j, bool k_fast, int& k, int& n) {
    const int idx = tid + j * MM_THREADS;
    if (k_fast) { n = idx / MM_BK; k = idx % MM_BK; }
    else        { n = idx % MM_BN; k = idx / MM_BN; }
}

// In-bounds predicate for a global element of the tile.
MM_HD bool mm_in(long long i, long long n) { return i < n; }

MM_HD void mm_zero(MmThread& st) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) st.acc[i][j] = 0.0f;
}

// Phase "load": global -> registers, the k tile starting at k0 of the block tile (m0, n0).
template <typename T>
MM_HD void mm_load_global(MmThread& st, const MmArgs& g, const T* A, const T* B, int tid, long long m0,
                          long long n0, long long k0) {
    const bool a_kf = g.sAk == 1, b_kf = g.sBk == 1;
#pragma unroll
    for (int j = 0; j < MM_LOADS; ++j) {
        int m, k;
        mm_a_load_coord(tid, j, a_kf, m, k);
        const long long gm = m0 + m, gk = k0 + k;
        st.ra[j] = (mm_in(gm, g.M) && mm_in(gk, g.K)) ? mm_to_f32(A[gm * g.sAm + gk * g.sAk]) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < MM_LOADS; ++j) {
        int k, n;
        mm_b_load_coord(tid, j, b_kf, k, n);
        const long long gk = k0 + k, gn = n0 + n;
        st.rb[j] = (mm_in(gk, g.K) && mm_in(gn, g.N)) ? mm_to_f32(B[gk * g.sBk + gn * g.sBn]) : 0.0f;
    }
}

// Phase "store": registers -> shared buffers As, Bs (MM_TILE_FLOATS each).
MM_HD void mm_store_shared(const MmThread& st, const MmArgs& g, float* As, float* Bs, int tid) {
    const bool a_kf = g.sAk == 1, b_kf = g.sBk == 1;
#pragma unroll
    for (int j = 0; j < MM_LOADS; ++j) {
        int m, k;
        mm_a_load_coord(tid, j, a_kf, m, k);
        As[k * MM_LDS + m] = st.ra[j];
    }
#pragma unroll
    for (int j = 0; j < MM_LOADS; ++j) {
        int k, n;
        mm_b_load_coord(tid, j, b_kf, k, n);
        Bs[k * MM_LDS + n] = st.rb[j];
    }
}

// The 16-byte variant of "load" and "store" (gemm_f32_vec): A and B row-major (sAk == sBn == 1), K and N
// multiples of 4, the bases, row and batch strides 16-byte aligned. Each thread's 4 elements of the A tile are
// one float4 (row m = tid / 2, k = (tid % 2) * 4 + 0..3) and so are its 4 of the B tile (row k = tid / 32,
// n = (tid % 32) * 4 + 0..3): a warp reads 16 rows x 32 contiguous bytes of A and one contiguous 512-byte row of
// B. With K and N multiples of 4 a float4 lies wholly inside the matrix or wholly outside (read as 0). The
// transposed stores to As put a warp's 32 lanes in 32 banks (rows 4 apart differ by 16 banks); Bs takes float4s.
MM_HD void mm_vec_a_coord(int tid, int& m, int& k) { m = tid / 2; k = (tid % 2) * 4; }
MM_HD void mm_vec_b_coord(int tid, int& k, int& n) { k = tid / 32; n = (tid % 32) * 4; }

MM_HD void mm_load_global_vec(MmThread& st, const MmArgs& g, const float* A, const float* B, int tid, long long m0,
                              long long n0, long long k0) {
    int m, k, n;
    mm_vec_a_coord(tid, m, k);
    float4 a;
    a.x = a.y = a.z = a.w = 0.0f;
    if (mm_in(m0 + m, g.M) && mm_in(k0 + k, g.K)) a = *reinterpret_cast<const float4*>(A + (m0 + m) * g.sAm + k0 + k);
    st.ra[0] = a.x; st.ra[1] = a.y; st.ra[2] = a.z; st.ra[3] = a.w;
    mm_vec_b_coord(tid, k, n);
    float4 b;
    b.x = b.y = b.z = b.w = 0.0f;
    if (mm_in(k0 + k, g.K) && mm_in(n0 + n, g.N)) b = *reinterpret_cast<const float4*>(B + (k0 + k) * g.sBk + n0 + n);
    st.rb[0] = b.x; st.rb[1] = b.y; st.rb[2] = b.z; st.rb[3] = b.w;
}

MM_HD void mm_store_shared_vec(const MmThread& st, float* As, float* Bs, int tid) {
    int m, k, n;
    mm_vec_a_coord(tid, m, k);
#pragma unroll
    for (int j = 0; j < 4; ++j) As[(k + j) * MM_LDS + m] = st.ra[j];
    mm_vec_b_coord(tid, k, n);
    float4 b;
    b.x = st.rb[0]; b.y = st.rb[1]; b.z = st.rb[2]; b.w = st.rb[3];
    *reinterpret_cast<float4*>(Bs + k * MM_LDS + n) = b;
}

// Phase "compute": acc += As^T Bs over the k tile (As, Bs 16-byte aligned).
MM_HD void mm_compute(MmThread& st, const float* As, const float* Bs, int tid) {
    const int tx = tid % 16, ty = tid / 16;
#pragma unroll
    for (int k = 0; k < MM_BK; ++k) {
        const float4 a0 = *reinterpret_cast<const float4*>(As + k * MM_LDS + ty * 4);
        const float4 a1 = *reinterpret_cast<const float4*>(As + k * MM_LDS + 64 + ty * 4);
        const float4 b0 = *reinterpret_cast<const float4*>(Bs + k * MM_LDS + tx * 4);
        const float4 b1 = *reinterpret_cast<const float4*>(Bs + k * MM_LDS + 64 + tx * 4);
        const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) st.acc[i][j] = fmaf(a[i], b[j], st.acc[i][j]);
    }
}

// Phase "epilogue": C = alpha * acc + beta * C for the in-bounds entries (C is not read when beta == 0).
template <typename T>
MM_HD void mm_epilogue(const MmThread& st, const MmArgs& g, T* C, int tid, long long m0, long long n0) {
    const int tx = tid % 16, ty = tid / 16;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const long long gm = m0 + mm_micro_index(ty, i);
        if (!mm_in(gm, g.M)) continue;
        T* Crow = C + gm * g.sCm;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const long long gn = n0 + mm_micro_index(tx, j);
            if (!mm_in(gn, g.N)) continue;
            const float prev = (g.beta != 0.0f) ? g.beta * mm_to_f32(Crow[gn * g.sCn]) : 0.0f;
            mm_store(Crow, gn * g.sCn, g.alpha * st.acc[i][j] + prev);
        }
    }
}

MM_HD long long mm_num_k_tiles(long long K) { return (K + MM_BK - 1) / MM_BK; }

// ------------------------------------------------------------------------------------------------
// Tensor-core GEMM (WMMA) helpers
// ------------------------------------------------------------------------------------------------
#define TC_BM 64
#define TC_BN 64
#define TC_BK 32
#define TC_THREADS 128
#define TC_ALD 40  // As[m][k] row, halves (32 + 8)
#define TC_BLD 72  // Bs[k][n] row, halves (64 + 8)
#define TC_CLD 68  // Cs[m][n] row, floats (64 + 4)

// 16-byte chunk j (0..1) of thread tid: A tile row m (0..63), column kc (multiple of 8, 0..24).
MM_HD void tc_a_chunk(int tid, int j, int& m, int& kc) {
    const int c = tid + j * TC_THREADS;
    m = c / (TC_BK / 8);
    kc = (c % (TC_BK / 8)) * 8;
}
// B tile row k (0..31), column nc (multiple of 8, 0..56).
MM_HD void tc_b_chunk(int tid, int j, int& k, int& nc) {
    const int c = tid + j * TC_THREADS;
    k = c / (TC_BN / 8);
    nc = (c % (TC_BN / 8)) * 8;
}

// Global -> shared copy of the k tile at k0 (A row-major (M, K), B row-major (K, N), 16-byte aligned);
// chunks outside the matrix are zero-filled (with M, N, K multiples of 16 a chunk is all in or all out).
MM_HD void tc_load_tiles(__half* As, __half* Bs, const __half* A, const __half* B, long long M, long long N,
                         long long K, long long m0, long long n0, long long k0, int tid) {
    uint4 zero;
    zero.x = zero.y = zero.z = zero.w = 0u;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        int m, kc;
        tc_a_chunk(tid, j, m, kc);
        const long long gm = m0 + m, gk = k0 + kc;
        *reinterpret_cast<uint4*>(As + m * TC_ALD + kc) =
            (gm < M && gk < K) ? *reinterpret_cast<const uint4*>(A + gm * K + gk) : zero;
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        int k, nc;
        tc_b_chunk(tid, j, k, nc);
        const long long gk = k0 + k, gn = n0 + nc;
        *reinterpret_cast<uint4*>(Bs + k * TC_BLD + nc) =
            (gk < K && gn < N) ? *reinterpret_cast<const uint4*>(B + gk * N + gn) : zero;
    }
}

// Shared-memory offsets of warp `warp`'s fragments: A fragment i (rows), k step kk (0 or 16);
// B fragment j (columns); accumulator fragment (i, j) in Cs.
MM_HD int tc_frag_a(int warp, int i, int kk) { return ((warp / 2) * 32 + i * 16) * TC_ALD + kk; }
MM_HD int tc_frag_b(int warp, int j, int kk) { return kk * TC_BLD + (warp % 2) * 32 + j * 16; }
MM_HD int tc_frag_c(int warp, int i, int j) { return ((warp / 2) * 32 + i * 16) * TC_CLD + (warp % 2) * 32 + j * 16; }

// Shared (float accumulators) -> global: C = alpha * acc + beta * C (C not read when beta == 0).
template <typename T>
MM_HD void tc_epilogue(T* C, const float* Cs, long long M, long long N, long long m0, long long n0, float alpha,
                       float beta, int tid) {
    for (int e = tid; e < TC_BM * TC_BN; e += TC_THREADS) {
        const int r = e / TC_BN, c = e % TC_BN;
        const long long gm = m0 + r, gn = n0 + c;
        if (gm >= M || gn >= N) continue;
        float v = alpha * Cs[r * TC_CLD + c];
        if (beta != 0.0f) v += beta * mm_to_f32(C[gm * N + gn]);
        mm_store(C, gm * N + gn, v);
    }
}
