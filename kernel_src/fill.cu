// fill.cu -- set every element of a contiguous buffer to one value.
//
// Each kernel is extern "C" so its symbol is its plain name (load with module.get_function("fill_f32")),
// and the file includes no host headers, only cuda_fp16.h for __half. Grid-stride loops: any launch
// configuration covers all n elements, so the host may cap the grid size. Launch: block 256 (the
// __launch_bounds__), grid min(ceil(n / 256), 65535).

#include <cuda_fp16.h>

extern "C" __global__ __launch_bounds__(256) void fill_f32(float* __restrict__ out, float value, long long n) {
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = value;
    }
}

// `value` arrives as a float (launchers pass a float32 scalar; __half is not a convenient launch argument)
// and is rounded to half once per thread.
extern "C" __global__ __launch_bounds__(256) void fill_f16(__half* __restrict__ out, float value, long long n) {
    const __half v = __float2half_rn(value);
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = v;
    }
}
