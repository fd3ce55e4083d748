// Kernels the emulator's speed is measured on (benchmarks/cuda_emu_speed.py): a shared-memory tiled matmul and a
// block reduction, as a course would write them. (The elementwise kernel is tutorial 08's squareplus.)

#define TILE 16

// c = a @ b for n x n matrices, n a multiple of TILE; blocks of (TILE, TILE)
extern "C" __global__ __launch_bounds__(256) void matmul_tiled_f32(float* c, const float* a, const float* b, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        as[threadIdx.y][threadIdx.x] = a[row * n + t * TILE + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}

// out[b] = the sum of x[256 b .. 256 b + 255]; blocks of 256
extern "C" __global__ __launch_bounds__(256) void block_sum_f32(float* out, const float* x, long long n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    long long i = blockIdx.x * 256LL + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int half = 128; half > 0; half >>= 1) {
        if (t < half) s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
