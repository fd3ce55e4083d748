// Host harness for kernel_src/adam.cuh: runs adam_elem over every element (the grid) on the CPU.
//   adam_harness DTYPE(f32|f16) N STEPS_FILE DIR AMSGRAD
// DIR holds param.bin (float or half), grad.bin (STEPS x N, same dtype: one gradient per step), m.bin, v.bin,
// vmax.bin (float32); STEPS_FILE holds, per step, the 9 AdamScalars fields as 8 float32 + 1 int32.
// Results overwrite param.bin, m.bin, v.bin, vmax.bin.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "adam.cuh"
#include "harness_io.h"

template <typename P> static int run(long long n, const std::vector<adam::AdamScalars>& steps, const std::string& dir,
                                     bool amsgrad) {
    std::vector<P> param = read_file<P>(dir + "/param.bin"), grads = read_file<P>(dir + "/grad.bin");
    std::vector<float> m = read_file<float>(dir + "/m.bin"), v = read_file<float>(dir + "/v.bin");
    std::vector<float> vmax = read_file<float>(dir + "/vmax.bin");
    for (size_t s = 0; s < steps.size(); ++s)
        for (long long i = 0; i < n; ++i)
            adam::adam_elem<P>(param.data(), grads.data() + s * n, m.data(), v.data(), amsgrad ? vmax.data() : nullptr,
                               steps[s], i);
    write_file(dir + "/param.bin", param);
    write_file(dir + "/m.bin", m);
    write_file(dir + "/v.bin", v);
    write_file(dir + "/vmax.bin", vmax);
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 6) return 2;
    static_assert(sizeof(adam::AdamScalars) == 36, "AdamScalars is 8 floats + 1 int");
    const long long n = std::atoll(argv[2]);
    std::vector<adam::AdamScalars> steps = read_file<adam::AdamScalars>(argv[3]);
    const bool amsgrad = std::atoi(argv[5]) != 0;
    if (!std::strcmp(argv[1], "f32")) return run<float>(n, steps, argv[4], amsgrad);
    return run<__half>(n, steps, argv[4], amsgrad);
}
