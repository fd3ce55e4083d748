// Host harness for kernel_src/cross_entropy.cuh (built by tests/test_kernels_host_norm.py; not a kernel
// source). Forward: the nt cooperating threads' partials come from the same __host__ __device__ functions
// the kernels call, combined with a loop (the GPU uses shuffles), then ce_row_finish as thread 0 does.
// Backward: independent threads, the whole grid x block launch with its grid-stride loop is emulated.
//
// usage: cross_entropy_harness fwd f32|f16 NT ROWS COLS IGNORE SMOOTHING HAS_W logits target w  loss lse asum
//        cross_entropy_harness bwd f32|f16 GRID BLOCK ROWS COLS IGNORE SMOOTHING HAS_W G_STRIDE
//                              logits target w lse asum g  dx
// (target int64; lse, asum float32; g has G_STRIDE ? ROWS : 1 elements)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "cross_entropy.cuh"
#include "harness_io.h"

template <typename T>
static int run(char** argv) {
    if (std::strcmp(argv[1], "fwd") == 0) {
        const long long nt = std::atoll(argv[3]), rows = std::atoll(argv[4]), cols = std::atoll(argv[5]);
        const long long ignore = std::atoll(argv[6]);
        const float smoothing = (float)std::atof(argv[7]);
        const bool hw = std::atoi(argv[8]) != 0;
        std::vector<T> x = read_file<T>(argv[9], rows * cols), w, loss(rows);
        std::vector<long long> target = read_file<long long>(argv[10], rows);
        if (hw) w = read_file<T>(argv[11], cols);
        const T* wp = hw ? w.data() : nullptr;
        std::vector<float> lse(rows), asum(rows);
        for (long long r = 0; r < rows; ++r) {
            const T* xr = x.data() + r * cols;
            float m = ce_neg_inf();
            for (long long t = 0; t < nt; ++t) m = fmaxf(m, ce_partial_max(xr, cols, t, nt));
            float s = 0.0f, ws = 0.0f, wz = 0.0f;
            for (long long t = 0; t < nt; ++t) {
                float a, b, c;
                ce_partial_stats(xr, wp, cols, m, smoothing, t, nt, a, b, c);
                s += a;
                ws += b;
                wz += c;
            }
            float l, e, a;
            ce_row_finish(xr, wp, cols, target[r], ignore, smoothing, m, s, ws, wz, l, e, a);
            ce_store(loss.data(), r, l);
            lse[r] = e;
            asum[r] = a;
        }
        write_file(argv[12], loss);
        write_file(argv[13], lse);
        write_file(argv[14], asum);
    } else {
        const long long grid = std::atoll(argv[3]), block = std::atoll(argv[4]);
        const long long rows = std::atoll(argv[5]), cols = std::atoll(argv[6]), ignore = std::atoll(argv[7]);
        const float smoothing = (float)std::atof(argv[8]);
        const bool hw = std::atoi(argv[9]) != 0;
        const long long g_stride = std::atoll(argv[10]);
        std::vector<T> x = read_file<T>(argv[11], rows * cols), w, g = read_file<T>(argv[16], g_stride ? rows : 1);
        std::vector<long long> target = read_file<long long>(argv[12], rows);
        if (hw) w = read_file<T>(argv[13], cols);
        std::vector<float> lse = read_file<float>(argv[14], rows), asum = read_file<float>(argv[15], rows);
        std::vector<T> dx(rows * cols);
        for (long long e = 0; e < rows * cols; ++e) ce_store(dx.data(), e, ce_nan());  // catches unwritten
        const T* wp = hw ? w.data() : nullptr;
        const long long n = rows * cols;
        for (long long b = 0; b < grid; ++b)
            for (long long tid = 0; tid < block; ++tid)
                for (long long e = b * block + tid; e < n; e += grid * block) {  // ce_bwd's loop
                    const long long i = e / cols, k = e - i * cols;
                    ce_store(dx.data(), e, ce_grad_elem(ce_load(x.data(), e), k, cols, target[i], ignore, smoothing, wp,
                                                        lse[i], asum[i], ce_load(g.data(), i * g_stride)));
                }
        write_file(argv[17], dx);
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 15) { std::fprintf(stderr, "usage: see header\n"); return 2; }
    return std::strcmp(argv[2], "f16") == 0 ? run<__half>(argv) : run<float>(argv);
}
