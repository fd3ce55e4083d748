// cuda_emu.h -- force-included (g++ -include) before a kernel_src/*.cu file so that the file compiles as
// host C++ and its __global__ functions run on the CPU under the emulator's scheduler (cuda_emu_runtime.h).
//
// Model: one block at a time; its threads are cooperative fibers on one OS thread. __shared__ variables
// are function-local statics (one copy, right because blocks run one at a time). threadIdx is the running
// fiber's; blockIdx / blockDim / gridDim are globals of the launch. __syncthreads and the warp operations
// (__shfl*_sync, __syncwarp, __ballot_sync, ...) suspend the fiber until every live thread of the block
// (threads that returned count as arrived) / every live lane of the warp has arrived. Atomics are plain
// read-modify-writes (no preemption between fibers).
//
// __shared__ memory (static and dynamic) of every block starts as 0xFF bytes (NaN floats, -1 integers).
//
// __CUDACC__ and __CUDA_ARCH__ (800) are defined AFTER the stand-in CUDA headers are in, so the kernels'
// `#ifdef __CUDA_ARCH__` device branches (atomicAdd, __fmul_rn, __umul64hi, ...) are the ones that run.

#pragma once

// ---- host headers first (they must not see __CUDACC__ / __CUDA_ARCH__) -------------------------------
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include <cuda_fp16.h>  // this folder's stand-in: __half storage and conversions, the vector types

// ---- qualifiers --------------------------------------------------------------------------------------
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __noinline__
#undef __shared__
#undef __constant__
#undef __managed__
#undef __align__
#undef __launch_bounds__
#undef __grid_constant__
#undef __restrict__

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
// __shared__ variables are statics. emulator.py rewrites each `__shared__ T name[...];` of the sources it
// compiles into `__shared__ T name[...]; CUDA_EMU_SHARED(name, id)`, which registers the variable once, so
// that the scheduler can fill it with 0xFF bytes before every block (shared memory starts undefined on a
// GPU: reading it before writing gives NaN / -1 here, not a lucky 0), and `extern __shared__ T name[];`
// into a pointer to the launch's dynamic shared memory (CUDA_EMU_DYNAMIC_SHARED).
#define __shared__ static
#define CUDA_EMU_SHARED(name, id) \
    static const bool cuda_emu_shared_##id = ::cuda_emu::register_shared((void*)&(name), sizeof(name), #name)
#define CUDA_EMU_DYNAMIC_SHARED(T, name) T* const name = reinterpret_cast<T*>(::cuda_emu::g_dynamic_shared)
#define __constant__ static
#define __managed__
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__
// __restrict__ is a g++ keyword already

#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800
#endif
#define CUDA_EMU 1

// ---- built-in variables ------------------------------------------------------------------------------
namespace cuda_emu {

enum FiberState : int { FIBER_NEW = 0, FIBER_READY, FIBER_BARRIER, FIBER_WARP, FIBER_DONE };

struct Fiber {
    uint3 tid;              // threadIdx
    int state;
    int linear;             // x + y * bx + z * bx * by
    int lane, warp;
    void* sp;               // saved stack pointer (or ucontext*)
    char* stack_top;        // 16-aligned top of this fiber's stack
    // warp exchange (shuffles, ballots, __syncwarp)
    int x_kind, x_src;
    unsigned x_mask;
    unsigned long long x_val, x_result;
    // __syncthreads_count / _and / _or
    int b_kind, b_result;
    unsigned long long wait_pc;  // where it waits at __syncthreads (for a deadlock's message)
};

extern Fiber* g_cur;
extern char g_dynamic_shared[];  // dynamic shared memory (max 227 KiB), 256-byte aligned
bool register_shared(void* p, size_t bytes, const char* name);
extern uint3 g_block_idx;
extern dim3 g_block_dim, g_grid_dim;

// warp exchange kinds
enum { X_SYNC = 0, X_SHFL, X_BALLOT, X_ANY, X_ALL };

// The running fiber waits at a block barrier; returns the combined predicate (kind 0: count, 1: and, 2: or).
int block_barrier(int pred, int kind);
// The running fiber takes part in a warp rendezvous; returns its result (raw bits).
unsigned long long warp_exchange(unsigned mask, int kind, unsigned long long val, int src_lane);
// The lanes of the running fiber's warp that exist and have not returned.
unsigned warp_live_mask();

template <typename T>
inline unsigned long long to_bits(T v) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "warp exchange of a value over 8 bytes");
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <typename T>
inline T from_bits(unsigned long long b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}

}  // namespace cuda_emu

#ifdef CUDA_EMU_CHECKED
// (the checked build reads it through an uninstrumented call: the kernel's reads of the scheduler's state are not
// memory traffic of the kernel)
namespace cuda_emu {
__attribute__((no_sanitize("thread"), noinline)) inline uint3 thread_idx() { return g_cur->tid; }
__attribute__((no_sanitize("thread"), noinline)) inline int lane_id() { return g_cur->lane; }
}  // namespace cuda_emu
#define threadIdx (::cuda_emu::thread_idx())
#define CUDA_EMU_LANE (::cuda_emu::lane_id())
#else
#define threadIdx (::cuda_emu::g_cur->tid)
#define CUDA_EMU_LANE (::cuda_emu::g_cur->lane)
#endif
#define blockIdx (::cuda_emu::g_block_idx)
#define blockDim (::cuda_emu::g_block_dim)
#define gridDim (::cuda_emu::g_grid_dim)
#ifndef warpSize
#define warpSize 32
#endif

// ---- synchronization ---------------------------------------------------------------------------------
// (always inlined: the barrier's return address is then in the kernel, where a deadlock's message points)
__attribute__((always_inline)) inline void __syncthreads() { ::cuda_emu::block_barrier(0, 0); }
__attribute__((always_inline)) inline int __syncthreads_count(int p) { return ::cuda_emu::block_barrier(p != 0, 0); }
__attribute__((always_inline)) inline int __syncthreads_and(int p) { return ::cuda_emu::block_barrier(p != 0, 1); }
__attribute__((always_inline)) inline int __syncthreads_or(int p) { return ::cuda_emu::block_barrier(p != 0, 2); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::cuda_emu::warp_exchange(mask, ::cuda_emu::X_SYNC, 0, 0); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

inline unsigned __ballot_sync(unsigned mask, int pred) {
    return (unsigned)::cuda_emu::warp_exchange(mask, ::cuda_emu::X_BALLOT, pred != 0, 0);
}
inline int __any_sync(unsigned mask, int pred) { return (int)::cuda_emu::warp_exchange(mask, ::cuda_emu::X_ANY, pred != 0, 0); }
inline int __all_sync(unsigned mask, int pred) { return (int)::cuda_emu::warp_exchange(mask, ::cuda_emu::X_ALL, pred != 0, 0); }
// __activemask: the lanes of the warp that have not returned (no convergence tracking)
inline unsigned __activemask() { return ::cuda_emu::warp_live_mask(); }

// Shuffles: the source lane is computed here (CUDA's rules for `width`); a source outside the segment, or a
// lane that is not taking part, yields the caller's own value.
template <typename T>
inline T __shfl_sync(unsigned mask, T var, int src, int width = 32) {
    const int lane = CUDA_EMU_LANE;
    const int s = (lane / width) * width + (src % width + width) % width;
    return ::cuda_emu::from_bits<T>(
        ::cuda_emu::warp_exchange(mask, ::cuda_emu::X_SHFL, ::cuda_emu::to_bits(var), s));
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    const int lane = CUDA_EMU_LANE;
    const int s = (lane % width) >= (int)delta ? lane - (int)delta : lane;
    return ::cuda_emu::from_bits<T>(
        ::cuda_emu::warp_exchange(mask, ::cuda_emu::X_SHFL, ::cuda_emu::to_bits(var), s));
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    const int lane = CUDA_EMU_LANE;
    const int s = (lane % width) + (int)delta < width ? lane + (int)delta : lane;
    return ::cuda_emu::from_bits<T>(
        ::cuda_emu::warp_exchange(mask, ::cuda_emu::X_SHFL, ::cuda_emu::to_bits(var), s));
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
    const int lane = CUDA_EMU_LANE;
    int s = lane ^ lane_mask;
    if (s >= (lane / width + 1) * width || s > 31) s = lane;  // later segment: own value
    return ::cuda_emu::from_bits<T>(
        ::cuda_emu::warp_exchange(mask, ::cuda_emu::X_SHFL, ::cuda_emu::to_bits(var), s));
}

// ---- atomics (fibers never preempt each other: plain read-modify-write) -------------------------------
// In the checked build each atomic is reported as one atomic access (CUDA_EMU_ATOMIC_NOTE) and its own
// read and write are not instrumented (CUDA_EMU_NOINSTR), so that two threads' atomics on one shared
// address are no race.
#ifdef CUDA_EMU_CHECKED
namespace cuda_emu {
void note_atomic(void* p, size_t size, uintptr_t pc);
}
#define CUDA_EMU_NOINSTR __attribute__((no_sanitize("thread"), noinline))
#define CUDA_EMU_ATOMIC_NOTE(p) \
    ::cuda_emu::note_atomic((void*)(p), sizeof(*(p)), reinterpret_cast<uintptr_t>(__builtin_return_address(0)))
#else
#define CUDA_EMU_NOINSTR
#define CUDA_EMU_ATOMIC_NOTE(p) ((void)0)
#endif
template <typename T>
CUDA_EMU_NOINSTR inline T atomicAdd(T* p, T v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const T old = *p;
    *p = old + v;
    return old;
}
CUDA_EMU_NOINSTR inline __half atomicAdd(__half* p, __half v) {  // float sum of two halves rounds once: exact
    CUDA_EMU_ATOMIC_NOTE(p);
    const __half old = *p;
    *p = __float2half_rn(__half2float(old) + __half2float(v));
    return old;
}
template <typename T>
CUDA_EMU_NOINSTR inline T atomicSub(T* p, T v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const T old = *p;
    *p = old - v;
    return old;
}
template <typename T>
CUDA_EMU_NOINSTR inline T atomicExch(T* p, T v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const T old = *p;
    *p = v;
    return old;
}
template <typename T>
CUDA_EMU_NOINSTR inline T atomicMin(T* p, T v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const T old = *p;
    *p = v < old ? v : old;
    return old;
}
template <typename T>
CUDA_EMU_NOINSTR inline T atomicMax(T* p, T v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const T old = *p;
    *p = v > old ? v : old;
    return old;
}
template <typename T>
CUDA_EMU_NOINSTR inline T atomicCAS(T* p, T compare, T v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const T old = *p;
    if (old == compare) *p = v;
    return old;
}
template <typename T>
CUDA_EMU_NOINSTR inline T atomicAnd(T* p, T v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const T old = *p;
    *p = old & v;
    return old;
}
template <typename T>
CUDA_EMU_NOINSTR inline T atomicOr(T* p, T v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const T old = *p;
    *p = old | v;
    return old;
}
template <typename T>
CUDA_EMU_NOINSTR inline T atomicXor(T* p, T v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const T old = *p;
    *p = old ^ v;
    return old;
}
CUDA_EMU_NOINSTR inline unsigned atomicInc(unsigned* p, unsigned v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const unsigned old = *p;
    *p = old >= v ? 0u : old + 1u;
    return old;
}
CUDA_EMU_NOINSTR inline unsigned atomicDec(unsigned* p, unsigned v) {
    CUDA_EMU_ATOMIC_NOTE(p);
    const unsigned old = *p;
    *p = (old == 0u || old > v) ? v : old - 1u;
    return old;
}

// ---- arithmetic intrinsics ---------------------------------------------------------------------------
// Correctly rounded IEEE operations; the build uses -ffp-contract=off, so none is fused into an fma.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
// fast-math intrinsics: the correctly rounded functions (the GPU's approximations differ in the last bits)
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __expf(float a) { return std::exp(a); }
inline float __exp10f(float a) { return std::pow(10.0f, a); }
inline float __logf(float a) { return std::log(a); }
inline float __log2f(float a) { return std::log2(a); }
inline float __log10f(float a) { return std::log10(a); }
inline float __sinf(float a) { return std::sin(a); }
inline float __cosf(float a) { return std::cos(a); }
inline float __tanf(float a) { return std::tan(a); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __saturatef(float a) { return a != a ? 0.0f : (a < 0.0f ? 0.0f : (a > 1.0f ? 1.0f : a)); }
#if !(defined(__GLIBC__) && __GLIBC_PREREQ(2, 41))  // C23 rsqrt arrived in glibc 2.41
inline float rsqrtf(float a) { return 1.0f / std::sqrt(a); }
inline double rsqrt(double a) { return 1.0 / std::sqrt(a); }
#endif

inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * (unsigned __int128)b) >> 64);
}
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * (__int128)b) >> 64); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
inline float __int_as_float(int x) { return ::cuda_emu::from_bits<float>((unsigned)x); }
inline int __float_as_int(float x) { return (int)(unsigned)::cuda_emu::to_bits(x); }
inline float __uint_as_float(unsigned x) { return ::cuda_emu::from_bits<float>(x); }
inline unsigned __float_as_uint(float x) { return (unsigned)::cuda_emu::to_bits(x); }
inline double __longlong_as_double(long long x) { return ::cuda_emu::from_bits<double>((unsigned long long)x); }
inline long long __double_as_longlong(double x) { return (long long)::cuda_emu::to_bits(x); }
template <typename T>
inline T __ldg(const T* p) { return *p; }

// ---- the checked build: memcpy, memset and memmove in a kernel are checked as the ranges they read and write
// (the sanitizer's instrumentation leaves them to a runtime that is not linked); undone for the runtime
#ifdef CUDA_EMU_CHECKED
namespace cuda_emu {
void note_range(const void* p, size_t n, int kind, uintptr_t pc);  // kind: 0 read, 1 write
}
__attribute__((no_sanitize("thread"), noinline)) inline void* cuda_emu_memcpy(void* d, const void* s, size_t n) {
    const uintptr_t pc = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
    ::cuda_emu::note_range(s, n, 0, pc);
    ::cuda_emu::note_range(d, n, 1, pc);
    return __builtin_memcpy(d, s, n);
}
__attribute__((no_sanitize("thread"), noinline)) inline void* cuda_emu_memmove(void* d, const void* s, size_t n) {
    const uintptr_t pc = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
    ::cuda_emu::note_range(s, n, 0, pc);
    ::cuda_emu::note_range(d, n, 1, pc);
    return __builtin_memmove(d, s, n);
}
__attribute__((no_sanitize("thread"), noinline)) inline void* cuda_emu_memset(void* d, int v, size_t n) {
    ::cuda_emu::note_range(d, n, 1, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
    return __builtin_memset(d, v, n);
}
namespace std {
using ::cuda_emu_memcpy;
using ::cuda_emu_memmove;
using ::cuda_emu_memset;
}  // namespace std
#define memcpy cuda_emu_memcpy
#define memmove cuda_emu_memmove
#define memset cuda_emu_memset
#endif
