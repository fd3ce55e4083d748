// Host harness for kernel_src/index.cuh: runs each kernel's per-element function over all n elements (the
// whole grid) on the CPU, in order (so the scatter kernels' atomicAdd becomes a sequential +=).
//   index_harness OP DTYPE(f32|f16) DIR [VALUE]
// DIR holds the inputs as raw files (see the test), scal.bin (int64 scalars / layout struct), and gets out.bin.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "index.cuh"
#include "harness_io.h"

using namespace index_k;

template <typename T> static int run(const std::string& op, const std::string& d, float value) {
    std::vector<long long> sc = read_file<long long>(d + "/scal.bin");
    if (op == "gather" || op == "scatter_add") {
        static_assert(sizeof(IndexLayout) == 27 * 8, "IndexLayout is 27 int64");
        IndexLayout L;
        std::memcpy(&L, sc.data(), sizeof L);
        std::vector<long long> index = read_file<long long>(d + "/index.bin");
        const long long n = (long long)index.size();
        if (op == "gather") {
            std::vector<T> input = read_file<T>(d + "/input.bin"), out((size_t)n);
            for (long long i = 0; i < n; ++i) gather_elem<T>(input.data(), index.data(), out.data(), L, i);
            write_file(d + "/out.bin", out);
        } else {
            std::vector<T> self = read_file<T>(d + "/self.bin"), src = read_file<T>(d + "/src.bin");
            for (long long i = 0; i < n; ++i) scatter_add_elem<T>(self.data(), index.data(), src.data(), L, i);
            write_file(d + "/out.bin", self);
        }
    } else if (op == "index_select") {  // scal: in_dim, n_idx, inner, n
        std::vector<T> input = read_file<T>(d + "/input.bin"), out((size_t)sc[3]);
        std::vector<long long> index = read_file<long long>(d + "/index.bin");
        for (long long i = 0; i < sc[3]; ++i)
            index_select_elem<T>(input.data(), index.data(), out.data(), sc[0], sc[1], sc[2], i);
        write_file(d + "/out.bin", out);
    } else if (op == "index_add") {  // scal: self_dim, n_idx, inner, n
        std::vector<T> self = read_file<T>(d + "/self.bin"), src = read_file<T>(d + "/src.bin");
        std::vector<long long> index = read_file<long long>(d + "/index.bin");
        for (long long i = 0; i < sc[3]; ++i)
            index_add_elem<T>(self.data(), index.data(), src.data(), sc[0], sc[1], sc[2], i);
        write_file(d + "/out.bin", self);
    } else if (op == "masked_fill") {
        static_assert(sizeof(MaskLayout) == 17 * 8, "MaskLayout is 17 int64");
        MaskLayout L;
        std::memcpy(&L, sc.data(), sizeof L);
        std::vector<T> x = read_file<T>(d + "/x.bin"), out(x.size());
        std::vector<unsigned char> mask = read_file<unsigned char>(d + "/mask.bin");
        for (long long i = 0; i < (long long)x.size(); ++i) masked_fill_elem<T>(x.data(), mask.data(), out.data(), value, L, i);
        write_file(d + "/out.bin", out);
    } else if (op == "embedding") {  // scal: dim, num_embeddings, n
        std::vector<T> weight = read_file<T>(d + "/weight.bin"), out((size_t)sc[2]);
        std::vector<long long> index = read_file<long long>(d + "/index.bin");
        for (long long i = 0; i < sc[2]; ++i) embedding_elem<T>(weight.data(), index.data(), out.data(), sc[0], sc[1], i);
        write_file(d + "/out.bin", out);
    } else if (op == "embedding_backward") {  // scal: dim, num_embeddings, padding_idx, n
        std::vector<T> grad = read_file<T>(d + "/grad.bin"), gw = read_file<T>(d + "/gw.bin");
        std::vector<long long> index = read_file<long long>(d + "/index.bin");
        for (long long i = 0; i < sc[3]; ++i)
            embedding_backward_elem<T>(grad.data(), index.data(), gw.data(), sc[0], sc[1], sc[2], i);
        write_file(d + "/out.bin", gw);
    } else {
        std::fprintf(stderr, "unknown op %s\n", op.c_str());
        return 2;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 4) return 2;
    const float value = argc > 4 ? (float)std::atof(argv[4]) : 0.0f;
    if (!std::strcmp(argv[2], "f32")) return run<float>(argv[1], argv[3], value);
    return run<__half>(argv[1], argv[3], value);
}
