// Host harness for kernel_src/philox.cuh: runs the kernels' per-block work items over the whole grid on the
// CPU (the same code the __global__ kernels run) and writes raw binary results for the pytest side.
//   philox_harness OP key0 key1 ctr0 ctr1 ctr2 ctr3 offset n OUT [extra...]
//   OP: raw_u64 | raw_u32 | uniform_f32 | uniform_f16 | normal_f32 MEAN STD | normal_f16 MEAN STD
//       | dropout_f32 P SCALE X MASK | dropout_f16 P SCALE X MASK | dropout_backward_f32 SCALE G MASK
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "philox.cuh"
#include "harness_io.h"

using namespace philox;

int main(int argc, char** argv) {
    if (argc < 11) { std::fprintf(stderr, "usage\n"); return 2; }
    const char* op = argv[1];
    PhiloxState s;
    s.key0 = std::strtoull(argv[2], nullptr, 10);
    s.key1 = std::strtoull(argv[3], nullptr, 10);
    s.ctr0 = std::strtoull(argv[4], nullptr, 10);
    s.ctr1 = std::strtoull(argv[5], nullptr, 10);
    s.ctr2 = std::strtoull(argv[6], nullptr, 10);
    s.ctr3 = std::strtoull(argv[7], nullptr, 10);
    const long long offset = std::atoll(argv[8]), n = std::atoll(argv[9]);
    const char* out = argv[10];
    const long long W = std::strcmp(op, "raw_u64") == 0 ? 4 : 8;
    const long long b0 = offset / W, b1 = n > 0 ? (offset + n - 1) / W + 1 : b0;
    if (!std::strcmp(op, "raw_u64")) {
        std::vector<unsigned long long> o((size_t)n);
        for (long long b = b0; b < b1; ++b) raw_u64_block(o.data(), s, offset, n, b);
        write_file(out, o);
    } else if (!std::strcmp(op, "raw_u32")) {
        std::vector<unsigned int> o((size_t)n);
        for (long long b = b0; b < b1; ++b) raw_u32_block(o.data(), s, offset, n, b);
        write_file(out, o);
    } else if (!std::strcmp(op, "uniform_f32")) {
        std::vector<float> o((size_t)n);
        for (long long b = b0; b < b1; ++b) uniform_block<float>(o.data(), s, offset, n, b);
        write_file(out, o);
    } else if (!std::strcmp(op, "uniform_f16")) {
        std::vector<__half> o((size_t)n);
        for (long long b = b0; b < b1; ++b) uniform_block<__half>(o.data(), s, offset, n, b);
        write_file(out, o);
    } else if (!std::strcmp(op, "normal_f32")) {
        std::vector<float> o((size_t)n);
        const float mean = (float)std::atof(argv[11]), sd = (float)std::atof(argv[12]);
        for (long long b = b0; b < b1; ++b) normal_block<float>(o.data(), s, offset, n, b, mean, sd);
        write_file(out, o);
    } else if (!std::strcmp(op, "normal_f16")) {
        std::vector<__half> o((size_t)n);
        const float mean = (float)std::atof(argv[11]), sd = (float)std::atof(argv[12]);
        for (long long b = b0; b < b1; ++b) normal_block<__half>(o.data(), s, offset, n, b, mean, sd);
        write_file(out, o);
    } else if (!std::strcmp(op, "dropout_f32") || !std::strcmp(op, "dropout_f16")) {
        const float p = (float)std::atof(argv[11]), scale = (float)std::atof(argv[12]);
        std::vector<unsigned char> mask((size_t)n);
        if (!std::strcmp(op, "dropout_f32")) {
            std::vector<float> x = read_file<float>(argv[13], n), o((size_t)n);
            for (long long b = b0; b < b1; ++b) dropout_block<float>(x.data(), o.data(), mask.data(), s, offset, n, b, p, scale);
            write_file(out, o);
        } else {
            std::vector<__half> x = read_file<__half>(argv[13], n), o((size_t)n);
            for (long long b = b0; b < b1; ++b) dropout_block<__half>(x.data(), o.data(), mask.data(), s, offset, n, b, p, scale);
            write_file(out, o);
        }
        write_file(argv[14], mask);
    } else if (!std::strcmp(op, "dropout_backward_f32")) {
        const float scale = (float)std::atof(argv[11]);
        std::vector<float> g = read_file<float>(argv[12], n), o((size_t)n);
        std::vector<unsigned char> mask = read_file<unsigned char>(argv[13], n);
        for (long long i = 0; i < n; ++i) dropout_backward_elem<float>(g.data(), mask.data(), o.data(), scale, i);
        write_file(out, o);
    } else {
        std::fprintf(stderr, "unknown op %s\n", op);
        return 2;
    }
    return 0;
}
