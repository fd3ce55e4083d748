// philox.cuh -- counter-based Philox4x64-10 random numbers that reproduce NumPy's np.random.Philox.
//
// NumPy's Philox bit generator is Philox4x64-10 (four 64-bit counter words, two 64-bit key words, ten
// rounds; NOT the 4x32 variant). Its state holds a 256-bit counter c (word 0 least significant) and a key
// k. Each time its 4-word buffer is empty it first increments the counter, then encrypts it, so block b
// (b = 0, 1, ...) of the stream is philox4x64_10(c + 1 + b, k) and `random_raw()` returns the four 64-bit
// words of block 0, then of block 1, ... in order. Hence, with NumPy state (key, counter):
//
//   word64(j) = philox4x64_10(counter + 1 + j / 4, key).v[j % 4]     == Philox(key=, counter=).random_raw()[j]
//   word32(j) = low 32 bits of word64(j / 2) if j is even, else its high 32 bits
//             (== random_raw().view(np.uint32)[j]: the order of NumPy's next_uint32)
//   uniform_f32(j) = (word32(j) >> 8) * 2^-24 in [0, 1)
//             (== np.random.Generator(Philox(...)).random(dtype=np.float32) element j)
//
// Continuing a NumPy Philox in any state (state["state"]["counter"] = c, state["buffer_pos"] = bp): if bp == 4
// use counter c and 64-bit offset 0, else counter c - 1 (256-bit) and 64-bit offset bp; for 32-bit draws the
// offset is twice that, minus 1 when state["has_uint32"] is set (see stream_position in
// tests/test_kernels_host_philox.py).
//
// Every kernel takes the generator as a PhiloxState (key and counter, six uint64, by value) plus an
// element offset into the stream, so a result depends only on (key, counter, offset) and never on the
// launch configuration. This header holds only __host__ __device__ math, so tests can run it on the CPU.

#pragma once
#include <cuda_fp16.h>

namespace philox {

// Passed by value. Host packing: np.array([key0, key1, ctr0, ctr1, ctr2, ctr3], np.uint64).tobytes()
// (the `key` and `counter` arrays of Philox(...).state["state"]).
struct PhiloxState {
    unsigned long long key0, key1;
    unsigned long long ctr0, ctr1, ctr2, ctr3;
};

struct Block4x64 {
    unsigned long long v[4];
};

__host__ __device__ inline unsigned long long mulhi64(unsigned long long a, unsigned long long b) {
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    return (unsigned long long)(((unsigned __int128)a * (unsigned __int128)b) >> 64);
#endif
}

// Philox4x64 with 10 rounds (Salmon et al. 2011; the constants of Random123 and NumPy).
__host__ __device__ inline Block4x64 philox4x64_10(Block4x64 c, unsigned long long k0, unsigned long long k1) {
    const unsigned long long M0 = 0xD2E7470EE14C6C93ULL, M1 = 0xCA5A826395121157ULL;
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        if (r > 0) {  // the key schedule bumps the key before every round but the first
            k0 += 0x9E3779B97F4A7C15ULL;
            k1 += 0xBB67AE8584CAA73BULL;
        }
        const unsigned long long lo0 = M0 * c.v[0], hi0 = mulhi64(M0, c.v[0]);
        const unsigned long long lo1 = M1 * c.v[2], hi1 = mulhi64(M1, c.v[2]);
        Block4x64 o;
        o.v[0] = hi1 ^ c.v[1] ^ k0;
        o.v[1] = lo1;
        o.v[2] = hi0 ^ c.v[3] ^ k1;
        o.v[3] = lo0;
        c = o;
    }
    return c;
}

// The four 64-bit words of block b (b >= 0): philox4x64_10(counter + 1 + b, key), 256-bit add with carry.
__host__ __device__ inline Block4x64 block64(const PhiloxState& s, unsigned long long b) {
    Block4x64 c;
    const unsigned long long add = b + 1ULL;
    c.v[0] = s.ctr0 + add;
    unsigned long long carry = c.v[0] < add ? 1ULL : 0ULL;
    c.v[1] = s.ctr1 + carry;
    carry = (carry != 0ULL && c.v[1] == 0ULL) ? 1ULL : 0ULL;
    c.v[2] = s.ctr2 + carry;
    carry = (carry != 0ULL && c.v[2] == 0ULL) ? 1ULL : 0ULL;
    c.v[3] = s.ctr3 + carry;
    return philox4x64_10(c, s.key0, s.key1);
}

// word32 stream: 8 words per block, low half of each 64-bit word first.
__host__ __device__ inline unsigned int word32_of(const Block4x64& blk, int j) {
    const unsigned long long w = blk.v[j >> 1];
    return (j & 1) ? (unsigned int)(w >> 32) : (unsigned int)(w & 0xFFFFFFFFULL);
}

// [0, 1) with 24 random bits, exactly NumPy's float32 uniform (next_uint32 >> 8) * 2^-24.
__host__ __device__ inline float uniform24(unsigned int u) {
    return (float)(u >> 8) * 5.9604644775390625e-08f;
}

// [0, 1) with 11 random bits: every value is exact in float16, so rounding to half never gives 1.0.
__host__ __device__ inline float uniform11(unsigned int u) {
    return (float)(u >> 21) * 4.8828125e-04f;
}

// Box-Muller on one 64-bit word: u1 = (lo + 1) * 2^-32 in (0, 1], u2 = (hi >> 8) * 2^-24 in [0, 1),
// r = sqrt(-2 ln u1), z0 = r cos(2 pi u2), z1 = r sin(2 pi u2); |z| <= sqrt(64 ln 2) ~= 6.66.
// Element j of the normal stream is z0 of word64(j / 2) for even j and z1 for odd j.
__host__ __device__ inline float box_muller(unsigned int lo, unsigned int hi, bool second) {
    const float u1 = ((float)lo + 1.0f) * 2.3283064365386963e-10f;
    const float u2 = (float)(hi >> 8) * 5.9604644775390625e-08f;
    const float r = sqrtf(-2.0f * logf(u1));
    const float theta = 6.2831853071795864769f * u2;
    return second ? r * sinf(theta) : r * cosf(theta);
}

__host__ __device__ inline float to_float(float x) { return x; }
__host__ __device__ inline float to_float(__half x) { return __half2float(x); }
template <typename T> __host__ __device__ inline T from_float(float x);
template <> __host__ __device__ inline float from_float<float>(float x) { return x; }
template <> __host__ __device__ inline __half from_float<__half>(float x) { return __float2half_rn(x); }

// ---- work items: one call = one Philox block; the kernels grid-stride over blocks, the host tests loop ----
// For a 64-bit stream of n words starting at word `offset` the blocks are offset/4 .. (offset+n-1)/4; for a
// 32-bit stream (uint32, uniform, normal, dropout) they are offset/8 .. (offset+n-1)/8.

__host__ __device__ inline void raw_u64_block(unsigned long long* out, const PhiloxState& s, long long offset,
                                              long long n, long long b) {
    const Block4x64 blk = block64(s, (unsigned long long)b);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const long long k = 4 * b + j;
        if (k >= offset && k < offset + n) out[k - offset] = blk.v[j];
    }
}

__host__ __device__ inline void raw_u32_block(unsigned int* out, const PhiloxState& s, long long offset,
                                              long long n, long long b) {
    const Block4x64 blk = block64(s, (unsigned long long)b);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const long long k = 8 * b + j;
        if (k >= offset && k < offset + n) out[k - offset] = word32_of(blk, j);
    }
}

template <typename T>
__host__ __device__ inline void uniform_block(T* out, const PhiloxState& s, long long offset, long long n,
                                              long long b) {
    const Block4x64 blk = block64(s, (unsigned long long)b);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const long long k = 8 * b + j;
        if (k >= offset && k < offset + n) {
            const unsigned int u = word32_of(blk, j);
            out[k - offset] = from_float<T>(sizeof(T) == 2 ? uniform11(u) : uniform24(u));
        }
    }
}

template <typename T>
__host__ __device__ inline void normal_block(T* out, const PhiloxState& s, long long offset, long long n,
                                             long long b, float mean, float stddev) {
    const Block4x64 blk = block64(s, (unsigned long long)b);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const long long k = 8 * b + j;
        if (k >= offset && k < offset + n) {
            const unsigned int lo = word32_of(blk, j & ~1), hi = word32_of(blk, j | 1);
            out[k - offset] = from_float<T>(mean + stddev * box_muller(lo, hi, (j & 1) != 0));
        }
    }
}

// Dropout: element k is kept iff uniform24(word32(k)) >= p (probability 1 - p, up to 2^-24), and a kept
// element is x * scale (the host passes scale = 1 / (1 - p)); dropped elements are 0. mask (nullable) gets
// 1 for kept, 0 for dropped. x, out and mask are indexed k - offset.
template <typename T>
__host__ __device__ inline void dropout_block(const T* x, T* out, unsigned char* mask, const PhiloxState& s,
                                              long long offset, long long n, long long b, float p, float scale) {
    const Block4x64 blk = block64(s, (unsigned long long)b);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const long long k = 8 * b + j;
        if (k >= offset && k < offset + n) {
            const bool keep = uniform24(word32_of(blk, j)) >= p;
            const long long i = k - offset;
            out[i] = from_float<T>(keep ? to_float(x[i]) * scale : 0.0f);
            if (mask != nullptr) mask[i] = keep ? 1 : 0;
        }
    }
}

template <typename T>
__host__ __device__ inline void dropout_backward_elem(const T* grad, const unsigned char* mask, T* out,
                                                      float scale, long long i) {
    out[i] = from_float<T>(mask[i] ? to_float(grad[i]) * scale : 0.0f);
}

}  // namespace philox
