// Host harness for kernel_src/layernorm.cuh (built by tests/test_kernels_host_norm.py; not a kernel source).
// Row kernels: the nt cooperating threads' partials come from the same __host__ __device__ functions the
// kernels call and are combined with a loop (the GPU uses shuffles). The params kernel has independent
// threads, so its whole grid (GX, P) x block BX is emulated, grid-stride loop included.
//
// usage: layernorm_harness fwd f32|f16 NT ROWS COLS EPS HAS_W HAS_B x w b  y mean rstd
//        layernorm_harness bwd f32|f16 NT ROWS COLS HAS_W dy x w mean rstd  dx
//        layernorm_harness params f32|f16 GX BX P ROWS COLS dy x mean rstd  dw_part db_part
// (w / b paths are read only when HAS_W / HAS_B is 1; mean, rstd, dw_part, db_part are float32)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "layernorm.cuh"
#include "harness_io.h"

template <typename T>
static int run(char** argv) {
    const char* mode = argv[1];
    if (std::strcmp(mode, "fwd") == 0) {
        const long long nt = std::atoll(argv[3]), rows = std::atoll(argv[4]), cols = std::atoll(argv[5]);
        const float eps = (float)std::atof(argv[6]);
        const bool hw = std::atoi(argv[7]) != 0, hb = std::atoi(argv[8]) != 0;
        std::vector<T> x = read_file<T>(argv[9], rows * cols), y(rows * cols), w, b;
        if (hw) w = read_file<T>(argv[10], cols);
        if (hb) b = read_file<T>(argv[11], cols);
        std::vector<float> mean(rows), rstd(rows);
        for (long long r = 0; r < rows; ++r) {
            const T* xr = x.data() + r * cols;
            float s = 0.0f;
            for (long long t = 0; t < nt; ++t) s += ln_partial_sum(xr, cols, t, nt);
            const float mu = s / (float)cols;
            float q = 0.0f;
            for (long long t = 0; t < nt; ++t) q += ln_partial_sqdev(xr, cols, mu, t, nt);
            const float rs = ln_rstd(q, cols, eps);
            mean[r] = mu;
            rstd[r] = rs;
            for (long long t = 0; t < nt; ++t)
                ln_fwd_write(y.data() + r * cols, xr, hw ? w.data() : nullptr, hb ? b.data() : nullptr, cols, mu, rs, t, nt);
        }
        write_file(argv[12], y);
        write_file(argv[13], mean);
        write_file(argv[14], rstd);
    } else if (std::strcmp(mode, "bwd") == 0) {
        const long long nt = std::atoll(argv[3]), rows = std::atoll(argv[4]), cols = std::atoll(argv[5]);
        const bool hw = std::atoi(argv[6]) != 0;
        std::vector<T> dy = read_file<T>(argv[7], rows * cols), x = read_file<T>(argv[8], rows * cols), w, dx(rows * cols);
        if (hw) w = read_file<T>(argv[9], cols);
        std::vector<float> mean = read_file<float>(argv[10], rows), rstd = read_file<float>(argv[11], rows);
        const T* wp = hw ? w.data() : nullptr;
        for (long long r = 0; r < rows; ++r) {
            const long long o = r * cols;
            float sg = 0.0f, sgx = 0.0f;
            for (long long t = 0; t < nt; ++t) {
                float a, c;
                ln_bwd_partials(dy.data() + o, x.data() + o, wp, cols, mean[r], rstd[r], t, nt, a, c);
                sg += a;
                sgx += c;
            }
            for (long long t = 0; t < nt; ++t)
                ln_bwd_write(dx.data() + o, dy.data() + o, x.data() + o, wp, cols, mean[r], rstd[r], sg, sgx, t, nt);
        }
        write_file(argv[12], dx);
    } else {
        const long long gx = std::atoll(argv[3]), bx = std::atoll(argv[4]), np = std::atoll(argv[5]);
        const long long rows = std::atoll(argv[6]), cols = std::atoll(argv[7]);
        std::vector<T> dy = read_file<T>(argv[8], rows * cols), x = read_file<T>(argv[9], rows * cols);
        std::vector<float> mean = read_file<float>(argv[10], rows), rstd = read_file<float>(argv[11], rows);
        std::vector<float> dwp(np * cols, std::nanf("")), dbp(np * cols, std::nanf(""));  // NaN: catches unwritten
        for (long long p = 0; p < np; ++p)
            for (long long bxi = 0; bxi < gx; ++bxi)
                for (long long tid = 0; tid < bx; ++tid)
                    for (long long c = bxi * bx + tid; c < cols; c += gx * bx) {  // ln_bwd_params' loop
                        float dw, db;
                        ln_param_partial(dy.data(), x.data(), mean.data(), rstd.data(), rows, cols, c, p, np, dw, db);
                        dwp[p * cols + c] = dw;
                        dbp[p * cols + c] = db;
                    }
        write_file(argv[12], dwp);
        write_file(argv[13], dbp);
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 12) { std::fprintf(stderr, "usage: see header\n"); return 2; }
    return std::strcmp(argv[2], "f16") == 0 ? run<__half>(argv) : run<float>(argv);
}
