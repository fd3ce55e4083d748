// Host harness for kernel_src/conv_pool.cuh: runs each kernel's per-element function over all n elements
// (the whole grid) on the CPU.
//   conv_pool_harness OP DTYPE(f32|f16) DIR
// DIR holds geom.bin (ConvGeom: 16 int64) and the inputs; the outputs go to out.bin (and idx.bin).
//   im2col: x.bin -> out.bin          col2im: col.bin -> out.bin
//   maxpool: x.bin -> out.bin, idx.bin    maxpool_backward: grad.bin, idx.bin -> out.bin
//   avgpool: x.bin -> out.bin          avgpool_backward: grad.bin -> out.bin
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "conv_pool.cuh"
#include "harness_io.h"

using namespace conv_pool;

template <typename T> static int run(const std::string& op, const std::string& d) {
    static_assert(sizeof(ConvGeom) == 16 * 8, "ConvGeom is 16 int64");
    ConvGeom g;
    std::vector<long long> gv = read_file<long long>(d + "/geom.bin");
    std::memcpy(&g, gv.data(), sizeof g);
    const long long n_in = g.N * g.C * g.H * g.W, n_pool = g.N * g.C * g.OH * g.OW;
    const long long n_col = g.N * g.C * g.KH * g.KW * g.OH * g.OW;
    if (op == "im2col") {
        std::vector<T> x = read_file<T>(d + "/x.bin"), col((size_t)n_col);
        for (long long i = 0; i < n_col; ++i) im2col_elem<T>(x.data(), col.data(), g, i);
        write_file(d + "/out.bin", col);
    } else if (op == "col2im") {
        std::vector<T> col = read_file<T>(d + "/col.bin"), x((size_t)n_in);
        for (long long i = 0; i < n_in; ++i) col2im_elem<T>(col.data(), x.data(), g, i);
        write_file(d + "/out.bin", x);
    } else if (op == "maxpool") {
        std::vector<T> x = read_file<T>(d + "/x.bin"), out((size_t)n_pool);
        std::vector<long long> idx((size_t)n_pool);
        for (long long i = 0; i < n_pool; ++i) maxpool_elem<T>(x.data(), out.data(), idx.data(), g, i);
        write_file(d + "/out.bin", out);
        write_file(d + "/idx.bin", idx);
    } else if (op == "maxpool_backward") {
        std::vector<T> grad = read_file<T>(d + "/grad.bin"), gx((size_t)n_in);
        std::vector<long long> idx = read_file<long long>(d + "/idx.bin");
        for (long long i = 0; i < n_in; ++i) maxpool_backward_elem<T>(grad.data(), idx.data(), gx.data(), g, i);
        write_file(d + "/out.bin", gx);
    } else if (op == "avgpool") {
        std::vector<T> x = read_file<T>(d + "/x.bin"), out((size_t)n_pool);
        for (long long i = 0; i < n_pool; ++i) avgpool_elem<T>(x.data(), out.data(), g, i);
        write_file(d + "/out.bin", out);
    } else if (op == "avgpool_backward") {
        std::vector<T> grad = read_file<T>(d + "/grad.bin"), gx((size_t)n_in);
        for (long long i = 0; i < n_in; ++i) avgpool_backward_elem<T>(grad.data(), gx.data(), g, i);
        write_file(d + "/out.bin", gx);
    } else {
        std::fprintf(stderr, "unknown op %s\n", op.c_str());
        return 2;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 4) return 2;
    if (!std::strcmp(argv[2], "f32")) return run<float>(argv[1], argv[3]);
    return run<__half>(argv[1], argv[3]);
}
