// Host harness for kernel_src/matmul.cuh (built by tests/test_kernels_host_matmul.py; not a kernel source).
//
// simt: runs a whole gemm_f32 / gemm_f16 launch on the CPU with the kernel's own __host__ __device__
//   phases: grid (ceil(N/128), ceil(M/128), GZ) with the grid-stride loop over batches, 256 threads per
//   block, each phase run for every thread before the next phase starts (the barriers). ORDER picks the
//   order the threads run inside a phase (0 ascending, 1 descending, 2 a fixed shuffle): a phase that
//   read what another thread writes in the same phase (a missing barrier or a wrong buffer) gives
//   order-dependent results, which the test compares.
// tc: runs gemm_f16_tc_* the same way (128 threads per block) except that each warp's wmma
//   load/mma/store is replaced by a loop over the same shared-memory fragment addresses.
//
// usage: matmul_harness simt f32|f16 ORDER GZ M N K BATCH sAm sAk sAb sBk sBn sBb sCm sCn sCb ALPHA BETA
//                            A.bin B.bin C.bin Cout.bin
//        matmul_harness tc f32|f16(out) GZ M N K BATCH sAb sBb sCb ALPHA BETA A.bin B.bin C.bin Cout.bin
// (A, B, C files hold the whole underlying buffers; their sizes come from the file sizes)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "matmul.cuh"
#include "harness_io.h"

static std::vector<int> thread_order(int n, int order) {
    std::vector<int> o(n);
    for (int i = 0; i < n; ++i) o[i] = i;
    if (order == 1) std::reverse(o.begin(), o.end());
    if (order == 2)
        for (int i = n - 1; i > 0; --i) std::swap(o[i], o[(i * 7919 + 13) % (i + 1)]);
    return o;
}

template <typename T>
static int run_simt(char** argv) {
    const int order = std::atoi(argv[3]);
    const long long gz = std::atoll(argv[4]);
    MmArgs g;
    g.M = std::atoll(argv[5]); g.N = std::atoll(argv[6]); g.K = std::atoll(argv[7]);
    const long long batch = std::atoll(argv[8]);
    g.sAm = std::atoll(argv[9]); g.sAk = std::atoll(argv[10]);
    const long long sAb = std::atoll(argv[11]);
    g.sBk = std::atoll(argv[12]); g.sBn = std::atoll(argv[13]);
    const long long sBb = std::atoll(argv[14]);
    g.sCm = std::atoll(argv[15]); g.sCn = std::atoll(argv[16]);
    const long long sCb = std::atoll(argv[17]);
    g.alpha = (float)std::atof(argv[18]); g.beta = (float)std::atof(argv[19]);
    std::vector<T> A = read_file<T>(argv[20]), B = read_file<T>(argv[21]), C = read_file<T>(argv[22]);

    const long long gx = (g.N + MM_BN - 1) / MM_BN, gy = (g.M + MM_BM - 1) / MM_BM;
    const std::vector<int> ord = thread_order(MM_THREADS, order);
    std::vector<float> smem(4 * MM_TILE_FLOATS + 4);
    // 16-byte aligned like the kernel's __align__(16) arrays
    float* base = smem.data();
    while (reinterpret_cast<unsigned long long>(base) % 16) ++base;
    float* As[2] = {base, base + MM_TILE_FLOATS};
    float* Bs[2] = {base + 2 * MM_TILE_FLOATS, base + 3 * MM_TILE_FLOATS};
    std::vector<MmThread> st(MM_THREADS);
    const long long ntiles = mm_num_k_tiles(g.K);

    for (long long bz = 0; bz < gz; ++bz)
        for (long long by = 0; by < gy; ++by)
            for (long long bx = 0; bx < gx; ++bx) {
                const long long m0 = by * MM_BM, n0 = bx * MM_BN;
                std::fill(smem.begin(), smem.end(), __builtin_nanf(""));  // stale shared memory is garbage
                for (long long b = bz; b < batch; b += gz) {  // gemm_simt's body, phase by phase
                    const T* Ab = A.data() + b * sAb;
                    const T* Bb = B.data() + b * sBb;
                    for (int tid : ord) {
                        mm_zero(st[tid]);
                        if (ntiles > 0) {
                            mm_load_global(st[tid], g, Ab, Bb, tid, m0, n0, 0);
                            mm_store_shared(st[tid], g, As[0], Bs[0], tid);
                        }
                    }
                    // __syncthreads()
                    for (long long t = 0; t < ntiles; ++t) {
                        const int cur = (int)(t & 1);
                        for (int tid : ord) {
                            if (t + 1 < ntiles) mm_load_global(st[tid], g, Ab, Bb, tid, m0, n0, (t + 1) * MM_BK);
                            mm_compute(st[tid], As[cur], Bs[cur], tid);
                            if (t + 1 < ntiles) mm_store_shared(st[tid], g, As[cur ^ 1], Bs[cur ^ 1], tid);
                        }
                        // __syncthreads()
                    }
                    for (int tid : ord) mm_epilogue(st[tid], g, C.data() + b * sCb, tid, m0, n0);
                }
            }
    write_file(argv[23], C);
    return 0;
}

template <typename OutT>
static int run_tc(char** argv) {
    const long long gz = std::atoll(argv[3]);
    const long long M = std::atoll(argv[4]), N = std::atoll(argv[5]), K = std::atoll(argv[6]);
    const long long batch = std::atoll(argv[7]), sAb = std::atoll(argv[8]), sBb = std::atoll(argv[9]),
                    sCb = std::atoll(argv[10]);
    const float alpha = (float)std::atof(argv[11]), beta = (float)std::atof(argv[12]);
    std::vector<__half> A = read_file<__half>(argv[13]), B = read_file<__half>(argv[14]);
    std::vector<OutT> C = read_file<OutT>(argv[15]);
    const long long gx = (N + TC_BN - 1) / TC_BN, gy = (M + TC_BM - 1) / TC_BM;
    // 128-byte aligned shared arrays
    std::vector<__half> as_buf(TC_BM * TC_ALD + 64), bs_buf(TC_BK * TC_BLD + 64);
    std::vector<float> cs_buf(TC_BM * TC_CLD + 32);
    auto align = [](auto* p) { while (reinterpret_cast<unsigned long long>(p) % 128) ++p; return p; };
    __half* As = align(as_buf.data());
    __half* Bs = align(bs_buf.data());
    float* Cs = align(cs_buf.data());
    std::vector<float> acc(4 * 64 * 64);  // per warp, 2 x 2 fragments of 16 x 16, [warp][i][j][r][c]
    for (long long bz = 0; bz < gz; ++bz)
        for (long long by = 0; by < gy; ++by)
            for (long long bx = 0; bx < gx; ++bx) {
                const long long m0 = by * TC_BM, n0 = bx * TC_BN;
                for (long long b = bz; b < batch; b += gz) {
                    std::fill(acc.begin(), acc.end(), 0.0f);
                    for (long long k0 = 0; k0 < K; k0 += TC_BK) {
                        for (int tid = 0; tid < TC_THREADS; ++tid)
                            tc_load_tiles(As, Bs, A.data() + b * sAb, B.data() + b * sBb, M, N, K, m0, n0, k0, tid);
                        for (int warp = 0; warp < TC_THREADS / 32; ++warp)
                            for (int kk = 0; kk < TC_BK; kk += 16)
                                for (int i = 0; i < 2; ++i)
                                    for (int j = 0; j < 2; ++j) {  // wmma: acc[i][j] += frag_a(i) @ frag_b(j)
                                        const __half* fa = As + tc_frag_a(warp, i, kk);
                                        const __half* fb = Bs + tc_frag_b(warp, j, kk);
                                        float* c = acc.data() + ((warp * 2 + i) * 2 + j) * 256;
                                        for (int r = 0; r < 16; ++r)
                                            for (int q = 0; q < 16; ++q) {
                                                float s = 0.0f;
                                                for (int e = 0; e < 16; ++e)
                                                    s += __half2float(fa[r * TC_ALD + e]) * __half2float(fb[e * TC_BLD + q]);
                                                c[r * 16 + q] += s;
                                            }
                                    }
                    }
                    for (int warp = 0; warp < TC_THREADS / 32; ++warp)  // wmma::store_matrix_sync
                        for (int i = 0; i < 2; ++i)
                            for (int j = 0; j < 2; ++j)
                                for (int r = 0; r < 16; ++r)
                                    for (int q = 0; q < 16; ++q)
                                        Cs[tc_frag_c(warp, i, j) + r * TC_CLD + q] = acc[((warp * 2 + i) * 2 + j) * 256 + r * 16 + q];
                    for (int tid = 0; tid < TC_THREADS; ++tid)
                        tc_epilogue(C.data() + b * sCb, Cs, M, N, m0, n0, alpha, beta, tid);
                }
            }
    write_file(argv[16], C);
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 17) { std::fprintf(stderr, "usage: see header\n"); return 2; }
    const bool f16 = std::strcmp(argv[2], "f16") == 0;
    if (std::strcmp(argv[1], "simt") == 0) return f16 ? run_simt<__half>(argv) : run_simt<float>(argv);
    return f16 ? run_tc<__half>(argv) : run_tc<float>(argv);
}
