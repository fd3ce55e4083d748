// Host harness for kernel_src/softmax.cuh (built by tests/test_kernels_host_norm.py; not a kernel source).
// Emulates a launch on the CPU: for each row, the nt cooperating threads' partials are computed by the
// same __host__ __device__ functions the kernels call, and combined with a loop where the GPU uses
// shuffles. nt = 32 mirrors the *_warp_* kernels, nt = blockDim.x the *_block_* kernels.
//
// usage: softmax_harness fwd f32|f16 LOG NT ROWS COLS x.bin y.bin
//        softmax_harness bwd f32|f16 LOG NT ROWS COLS y.bin dy.bin dx.bin
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "softmax.cuh"
#include "harness_io.h"

template <typename T>
static int run(char** argv) {
    const bool fwd = std::strcmp(argv[1], "fwd") == 0;
    const int log_softmax = std::atoi(argv[3]);
    const long long nt = std::atoll(argv[4]), rows = std::atoll(argv[5]), cols = std::atoll(argv[6]);
    if (fwd) {
        std::vector<T> x = read_file<T>(argv[7], rows * cols), y(rows * cols);
        for (long long r = 0; r < rows; ++r) {
            const T* xr = x.data() + r * cols;
            float m = sm_neg_inf();
            for (long long t = 0; t < nt; ++t) m = fmaxf(m, softmax_partial_max(xr, cols, t, nt));
            float s = 0.0f;
            for (long long t = 0; t < nt; ++t) s += softmax_partial_sumexp(xr, cols, m, t, nt);
            for (long long t = 0; t < nt; ++t) softmax_write(y.data() + r * cols, xr, cols, m, s, log_softmax, t, nt);
        }
        write_file(argv[8], y);
    } else {
        std::vector<T> y = read_file<T>(argv[7], rows * cols), dy = read_file<T>(argv[8], rows * cols), dx(rows * cols);
        for (long long r = 0; r < rows; ++r) {
            const long long o = r * cols;
            float red = 0.0f;
            for (long long t = 0; t < nt; ++t) red += softmax_bwd_partial(y.data() + o, dy.data() + o, cols, log_softmax, t, nt);
            for (long long t = 0; t < nt; ++t)
                softmax_bwd_write(dx.data() + o, y.data() + o, dy.data() + o, cols, red, log_softmax, t, nt);
        }
        write_file(argv[9], dx);
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 9) { std::fprintf(stderr, "usage: see header\n"); return 2; }
    return std::strcmp(argv[2], "f16") == 0 ? run<__half>(argv) : run<float>(argv);
}
