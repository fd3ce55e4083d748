// squareplus(x) = (x + sqrt(x*x + b)) / 2: a smooth ReLU made of one multiply-add and one square root
// (Barron, 2021). Tutorial 08 (notebooks/08_your_own_kernel.ipynb) loads this file with tl.cuda.Kernel.
//
// One thread per element, in a grid-stride loop, so any grid size covers any n.
// What tl.cuda.Kernel reads from this file:
//   extern "C"           -- no C++ name mangling: the kernel is found by its plain name
//   __launch_bounds__(256) -- the most threads per block; a bigger block is refused before launch
//   the parameter list   -- pointers take cuda tensors (const = read only), scalars take Python numbers

extern "C" __global__ __launch_bounds__(256) void squareplus_f32(float* __restrict__ out,
                                                                const float* __restrict__ x, float b,
                                                                long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        out[i] = 0.5f * (v + sqrtf(fmaf(v, v, b)));
    }
}

// d/dx squareplus(x) = (1 + x / sqrt(x*x + b)) / 2, times the incoming gradient g
extern "C" __global__ __launch_bounds__(256) void squareplus_backward_f32(float* __restrict__ grad_x,
                                                                         const float* __restrict__ g,
                                                                         const float* __restrict__ x, float b,
                                                                         long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        grad_x[i] = g[i] * 0.5f * (1.0f + v * rsqrtf(fmaf(v, v, b)));
    }
}
