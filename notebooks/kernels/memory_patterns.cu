// Memory access patterns, for tutorial 08's section 7 (notebooks/08_your_own_kernel.ipynb), where LaunchView shows
// what each warp of these kernels does to memory.
//
// squareplus_chunked_f32 -- squareplus again, but each thread takes CHUNK neighbouring elements: neighbouring
//                           threads are CHUNK * 4 bytes apart, so a warp's access is spread over many sectors
// transpose_naive_f32    -- out = x^T, one thread per element: the reads are neighbours, the writes are n apart
// transpose_tiled_f32    -- a 32 x 32 tile goes through shared memory, so both the global reads and writes are
//                           neighbours; but the tile's column read hits one shared-memory bank 32 times
// transpose_padded_f32   -- the same with one column of padding: tile[32][33] spreads a column over 32 banks
// transpose_no_barrier_f32 -- the tiled transpose without its __syncthreads(): a race the emulator reports

#define CHUNK 8
#define TILE 32

extern "C" __global__ __launch_bounds__(256) void squareplus_chunked_f32(float* __restrict__ out,
                                                                        const float* __restrict__ x, float b,
                                                                        long long n) {
    long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * CHUNK;
    for (long long i = first; i < first + CHUNK && i < n; ++i) {
        float v = x[i];
        out[i] = 0.5f * (v + sqrtf(fmaf(v, v, b)));
    }
}

// n x n, n a multiple of 32; blocks of (32, 8): each thread does 4 rows of its tile
extern "C" __global__ __launch_bounds__(256) void transpose_naive_f32(float* __restrict__ out,
                                                                     const float* __restrict__ x, int n) {
    int col = blockIdx.x * TILE + threadIdx.x;
    for (int r = 0; r < TILE; r += 8) {
        int row = blockIdx.y * TILE + threadIdx.y + r;
        out[col * n + row] = x[row * n + col];
    }
}

extern "C" __global__ __launch_bounds__(256) void transpose_tiled_f32(float* __restrict__ out,
                                                                     const float* __restrict__ x, int n) {
    __shared__ float tile[TILE][TILE];
    int col = blockIdx.x * TILE + threadIdx.x;
    for (int r = 0; r < TILE; r += 8) tile[threadIdx.y + r][threadIdx.x] = x[(blockIdx.y * TILE + threadIdx.y + r) * n + col];
    __syncthreads();
    int out_col = blockIdx.y * TILE + threadIdx.x;
    for (int r = 0; r < TILE; r += 8) out[(blockIdx.x * TILE + threadIdx.y + r) * n + out_col] = tile[threadIdx.x][threadIdx.y + r];
}

extern "C" __global__ __launch_bounds__(256) void transpose_padded_f32(float* __restrict__ out,
                                                                      const float* __restrict__ x, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int col = blockIdx.x * TILE + threadIdx.x;
    for (int r = 0; r < TILE; r += 8) tile[threadIdx.y + r][threadIdx.x] = x[(blockIdx.y * TILE + threadIdx.y + r) * n + col];
    __syncthreads();
    int out_col = blockIdx.y * TILE + threadIdx.x;
    for (int r = 0; r < TILE; r += 8) out[(blockIdx.x * TILE + threadIdx.y + r) * n + out_col] = tile[threadIdx.x][threadIdx.y + r];
}

extern "C" __global__ __launch_bounds__(256) void transpose_no_barrier_f32(float* __restrict__ out,
                                                                          const float* __restrict__ x, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int col = blockIdx.x * TILE + threadIdx.x;
    for (int r = 0; r < TILE; r += 8) tile[threadIdx.y + r][threadIdx.x] = x[(blockIdx.y * TILE + threadIdx.y + r) * n + col];
    // (no __syncthreads() here: a thread may read a cell of the tile before the thread that loads it has run)
    int out_col = blockIdx.y * TILE + threadIdx.x;
    for (int r = 0; r < TILE; r += 8) out[(blockIdx.x * TILE + threadIdx.y + r) * n + out_col] = tile[threadIdx.x][threadIdx.y + r];
}
