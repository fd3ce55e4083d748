// reduce.cuh -- the host-testable pieces of reduce.cu: op codes, the accumulator and its combine rule,
// identities, the output-index decomposition and the per-thread accumulation loop. The warp-shuffle /
// shared-memory trees that combine the per-thread accumulators are device-only (reduce.cu).
//
// The host views any reduction as x[outer, R, inner] (element (o, r, i) at o*so + r*sr + i*si, strides
// in elements, any sign) reduced over r into out[outer, inner] (contiguous, j = o * inner + i).
//
// REDUCE_OPS = {"sum": 0, "max": 1, "min": 2, "argmax": 3, "argmin": 4}
//
// * Accumulation is in float32 for f32 and f16 inputs; the values written have the input dtype.
// * max/min propagate NaN (any NaN in the row gives NaN, and its index is the first NaN's), and on ties
//   report the first index -- PyTorch's torch.max(dim) / argmax semantics. argmax/argmin are the same
//   computation as max/min: every kernel writes the values to `out` and the indices (int64, position
//   along R) to `out_idx`, each only if that pointer is non-null. sum ignores out_idx.
//   The (value, index) combine is a total order (NaN above everything, then value, then lower index),
//   so it is commutative and associative: the result does not depend on the reduction tree.
// * mean = sum * (1 / R) and var = sum((x - mean)^2) / (R - correction) are composed by the host from
//   these sums and the elementwise kernels (mul_s, binary sub with a broadcast mean, square).
// * R == 0: sum gives 0; max/min would give -inf/+inf with index 2^63-1 -- the host must raise instead
//   (PyTorch does).

#pragma once

#include <cuda_fp16.h>

constexpr int RED_SUM = 0;
constexpr int RED_MAX = 1;
constexpr int RED_MIN = 2;
constexpr int RED_ARGMAX = 3;
constexpr int RED_ARGMIN = 4;

constexpr long long RED_NO_INDEX = 9223372036854775807LL;  // index of the identity element

struct RedAcc {
    float v;      // running sum, or the best value so far
    long long i;  // index along R of the best value (max/min); unused for sum
};

__host__ __device__ inline float red_load(float v) { return v; }
__host__ __device__ inline float red_load(__half v) { return __half2float(v); }

template <typename T>
__host__ __device__ inline T red_store(float v);
template <>
__host__ __device__ inline float red_store<float>(float v) { return v; }
template <>
__host__ __device__ inline __half red_store<__half>(float v) { return __float2half_rn(v); }

template <int OP>
__host__ __device__ inline RedAcc red_identity() {
    const float inf = __builtin_huge_valf();
    if constexpr (OP == RED_SUM) return RedAcc{0.0f, 0};
    else if constexpr (OP == RED_MAX) return RedAcc{-inf, RED_NO_INDEX};
    else return RedAcc{inf, RED_NO_INDEX};
}

// Does b come before a in the order of OP (max: NaN first, then larger, then lower index)?
template <int OP>
__host__ __device__ inline bool red_better(const RedAcc& b, const RedAcc& a) {
    const bool bn = b.v != b.v;
    const bool an = a.v != a.v;
    if (bn != an) return bn;
    if (!bn && b.v != a.v) return OP == RED_MAX ? b.v > a.v : b.v < a.v;
    return b.i < a.i;  // equal values (or both NaN): the first index
}

// OP is RED_SUM, RED_MAX or RED_MIN (the kernels map argmax/argmin onto max/min).
template <int OP>
__host__ __device__ inline RedAcc red_combine(const RedAcc& a, const RedAcc& b) {
    if constexpr (OP == RED_SUM) {
        return RedAcc{a.v + b.v, 0};
    } else {
        return red_better<OP>(b, a) ? b : a;
    }
}

// Output index j = o * inner + i -> offset of element (o, 0, i) of x.
__host__ __device__ inline long long red_base(long long j, long long inner, long long so, long long si) {
    const long long o = j / inner;
    const long long i = j - o * inner;
    return o * so + i * si;
}

// One thread's share of a row: elements r = r_begin, r_begin + r_step, ... < r_end, folded into acc.
template <int OP, typename T>
__host__ __device__ inline RedAcc red_accumulate(const T* __restrict__ x, long long base, long long sr,
                                                 long long r_begin, long long r_end, long long r_step,
                                                 RedAcc acc) {
    for (long long r = r_begin; r < r_end; r += r_step) {
        acc = red_combine<OP>(acc, RedAcc{red_load(x[base + r * sr]), r});
    }
    return acc;
}

template <int OP, typename T>
__host__ __device__ inline void red_write(T* out, long long* out_idx, long long j, const RedAcc& acc) {
    if (out != nullptr) out[j] = red_store<T>(acc.v);
    if constexpr (OP != RED_SUM) {
        if (out_idx != nullptr) out_idx[j] = acc.i;
    }
}

// Thread-per-output body (reduce_cols_*): thread tid of nthreads handles outputs j = tid, tid + nthreads..
// Coalesced when inner > 1 and si == 1 (neighbouring threads read neighbouring elements).
template <int OP, typename T>
__host__ __device__ inline void red_cols_body(long long tid, long long nthreads, const T* __restrict__ x,
                                              T* out, long long* out_idx, long long outer, long long R,
                                              long long inner, long long so, long long sr, long long si) {
    const long long nout = outer * inner;
    for (long long j = tid; j < nout; j += nthreads) {
        const RedAcc acc = red_accumulate<OP, T>(x, red_base(j, inner, so, si), sr, 0, R, 1, red_identity<OP>());
        red_write<OP, T>(out, out_idx, j, acc);
    }
}

// Chunk c of a two-pass reduction covers r in [c * chunk, min(R, (c + 1) * chunk)).
__host__ __device__ inline void red_chunk_range(long long c, long long chunk, long long R, long long& r0,
                                                long long& r1) {
    r0 = c * chunk;
    r1 = r0 + chunk < R ? r0 + chunk : R;
}
