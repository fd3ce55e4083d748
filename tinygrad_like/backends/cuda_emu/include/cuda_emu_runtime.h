// cuda_emu_runtime.h -- the scheduler of the CPU emulator, the kernel registry and the C API of one
// emulator library. Included ONCE, at the end of a generated translation unit (see emulator.py):
//
//     #include "<kernel_src>/foo.cu"          (cuda_emu.h is force-included before it)
//     #include "cuda_emu_runtime.h"
//     CUDA_EMU_BEGIN_REGISTRY
//         CUDA_EMU_KERNEL(foo_f32, (256))      (name, __launch_bounds__ max threads or 1024)
//     CUDA_EMU_END_REGISTRY
//
// Execution: blocks run one after the other (z, then y, then x outermost to innermost); the threads of a
// block are fibers with their own stacks, switched cooperatively (hand-written switch on x86-64, ucontext
// elsewhere) on the calling OS thread. A fiber runs until it returns or waits at __syncthreads / a warp
// operation; the scheduler sweeps the fibers round-robin, and a sweep in which no fiber can run while some
// are still waiting is a deadlock, reported as an error (the waiting fibers are abandoned).

#pragma once

// (the checked build routes the kernel's memcpy/memset/memmove through the checks: see cuda_emu.h; not ours)
#undef memcpy
#undef memset
#undef memmove

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdarg>
#include <string>
#include <tuple>
#include <vector>

#if !defined(__x86_64__) || defined(CUDA_EMU_UCONTEXT)
#define CUDA_EMU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

#define CUDA_EMU_API extern "C" __attribute__((visibility("default")))

// The checked build's hooks into the scheduler (cuda_emu_check.h); nothing in the plain build. In the checked build
// the scheduler's own functions are not instrumented (CUDA_EMU_RT): only the kernel's loads and stores are checked.
#ifdef CUDA_EMU_CHECKED
#define CUDA_EMU_RT __attribute__((no_sanitize("thread")))
#define CUDA_EMU_CHECK_HOOK(call) ::cuda_emu::chk::call
namespace cuda_emu {
namespace chk {
void block_begin(int nthreads);
void block_end();
void on_barrier();
void on_warp_sync(int w);
void on_register(void* p, size_t bytes);
extern bool g_in_hook;  // the runtime's own bookkeeping is not the kernel's memory traffic
}  // namespace chk
}  // namespace cuda_emu
#else
#define CUDA_EMU_RT
#define CUDA_EMU_CHECK_HOOK(call) ((void)0)
#endif

namespace cuda_emu {

Fiber* g_cur = nullptr;
constexpr size_t kMaxDynamicShared = 232448;  // 227 KiB, sm_90's opt-in maximum per block
alignas(256) char g_dynamic_shared[kMaxDynamicShared];
uint3 g_block_idx;
dim3 g_block_dim, g_grid_dim;

namespace {

constexpr size_t kStackBytes = 256 * 1024;  // per fiber (address space only; untouched pages cost nothing)
constexpr size_t kGuardBytes = 16 * 1024;   // PROT_NONE below each stack: an overflow faults, never corrupts

struct Warp {
    unsigned live;     // lanes that exist and have not returned
    unsigned arrived;  // lanes waiting in the current exchange
    unsigned need;     // union of the masks passed by the arrived lanes
};

struct Block {
    std::vector<Fiber> fibers;
    int n = 0;
    int live = 0;
    int bar_arrived = 0, bar_count = 0, bar_and = 1, bar_or = 0;
    Warp warps[32];
};

Block g_blk;
void* g_sched_sp = nullptr;
void (*g_entry)(void*) = nullptr;
void* g_entry_ctx = nullptr;
char* g_pool = nullptr;
size_t g_pool_fibers = 0;
std::vector<std::pair<void*, size_t>> g_shared_vars;  // registered __shared__ variables
std::vector<const char*> g_shared_names;              // their names in the source
size_t g_dynamic_bytes = 0;                           // this launch's dynamic shared memory
char g_fault[512];                                    // set by a fiber that found an error; ends the launch
#ifdef CUDA_EMU_USE_UCONTEXT
ucontext_t g_sched_uc;
std::vector<ucontext_t> g_ucs;
#endif

}  // namespace

#ifndef CUDA_EMU_USE_UCONTEXT
// cuda_emu_switch(save, to): saves the callee-saved registers, MXCSR and the x87 control word on the
// current stack, stores the stack pointer in *save, then restores the same from the stack at `to`.
extern "C" void cuda_emu_switch(void** save, void* to);
asm(R"(
    .text
    .p2align 4
    .globl cuda_emu_switch
    .hidden cuda_emu_switch
    .type cuda_emu_switch, @function
cuda_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size cuda_emu_switch, .-cuda_emu_switch
)");
#endif

namespace {

void fiber_exit();

[[noreturn]] CUDA_EMU_RT void fiber_main() {
    g_entry(g_entry_ctx);
    fiber_exit();
    __builtin_unreachable();
}

#ifdef CUDA_EMU_USE_UCONTEXT
CUDA_EMU_RT void fiber_main_uc() { fiber_main(); }
#endif

CUDA_EMU_RT inline void yield_to_scheduler() {
#ifdef CUDA_EMU_USE_UCONTEXT
    swapcontext(&g_ucs[g_cur->linear], &g_sched_uc);
#else
    cuda_emu_switch(&g_cur->sp, g_sched_sp);
#endif
}

CUDA_EMU_RT inline void run_fiber(Fiber& f) {
    g_cur = &f;
    if (f.state == FIBER_NEW) {
        f.state = FIBER_READY;
#ifdef CUDA_EMU_USE_UCONTEXT
        ucontext_t& uc = g_ucs[f.linear];
        getcontext(&uc);
        uc.uc_stack.ss_sp = f.stack_top - kStackBytes;
        uc.uc_stack.ss_size = kStackBytes;
        uc.uc_link = nullptr;
        makecontext(&uc, fiber_main_uc, 0);
#else
        // the frame cuda_emu_switch pops: MXCSR/FCW, r15, r14, r13, r12, rbx, rbp, return address
        // (fiber_main), then a null fake return address so that fiber_main starts with rsp = 8 mod 16.
        uint64_t* sp = reinterpret_cast<uint64_t*>(f.stack_top) - 9;
        unsigned int csr;
        unsigned short cw;
        asm volatile("stmxcsr %0" : "=m"(csr));
        asm volatile("fnstcw %0" : "=m"(cw));
        std::memset(sp, 0, 9 * sizeof(uint64_t));
        std::memcpy(sp, &csr, 4);
        std::memcpy(reinterpret_cast<char*>(sp) + 4, &cw, 2);
        sp[7] = reinterpret_cast<uint64_t>(&fiber_main);
        f.sp = sp;
#endif
    }
#ifdef CUDA_EMU_USE_UCONTEXT
    swapcontext(&g_sched_uc, &g_ucs[f.linear]);
#else
    cuda_emu_switch(&g_sched_sp, f.sp);
#endif
    g_cur = nullptr;  // back in the scheduler: no thread runs (the checked build's hooks ignore its own accesses)
}

CUDA_EMU_RT void release_barrier() {
    for (Fiber& f : g_blk.fibers) {
        if (f.state != FIBER_BARRIER) continue;
        f.state = FIBER_READY;
        f.b_result = f.b_kind == 0 ? g_blk.bar_count : (f.b_kind == 1 ? g_blk.bar_and : g_blk.bar_or);
    }
    g_blk.bar_arrived = 0;
    g_blk.bar_count = 0;
    g_blk.bar_and = 1;
    g_blk.bar_or = 0;
    CUDA_EMU_CHECK_HOOK(on_barrier());
}

// Completes the warp's exchange when every live lane named by the arrived lanes' masks has arrived.
CUDA_EMU_RT bool try_complete_warp(int w) {
    Warp& W = g_blk.warps[w];
    const unsigned need = W.need & W.live;
    if (W.arrived == 0 || (W.arrived & need) != need) return false;
    Fiber* lanes = &g_blk.fibers[(size_t)w * 32];
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l)
        if (((W.arrived >> l) & 1u) && lanes[l].x_val != 0) ballot |= 1u << l;
    for (int l = 0; l < 32; ++l) {
        if (!((W.arrived >> l) & 1u)) continue;
        Fiber& f = lanes[l];
        switch (f.x_kind) {
            case X_SHFL:
                f.x_result = (f.x_src >= 0 && f.x_src < 32 && ((W.arrived >> f.x_src) & 1u)) ? lanes[f.x_src].x_val
                                                                                           : f.x_val;
                break;
            case X_BALLOT: f.x_result = ballot & f.x_mask; break;
            case X_ANY: f.x_result = (ballot & f.x_mask) != 0; break;
            case X_ALL: f.x_result = (ballot & f.x_mask & W.arrived) == (f.x_mask & W.arrived); break;
            default: f.x_result = 0; break;
        }
        f.state = FIBER_READY;
    }
    // (only __syncwarp orders the lanes' memory accesses for the race check; a shuffle or a vote does not)
    const bool sync = lanes[__builtin_ctz(W.arrived)].x_kind == X_SYNC;
    W.arrived = 0;
    W.need = 0;
    if (sync) CUDA_EMU_CHECK_HOOK(on_warp_sync(w));
    return true;
}

// Ends the launch with an error (the current fiber is never resumed).
void fault(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
CUDA_EMU_RT void fault(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_fault, sizeof g_fault, fmt, ap);
    va_end(ap);
    yield_to_scheduler();
    __builtin_trap();
}

CUDA_EMU_RT void fiber_exit() {
    Fiber* f = g_cur;
    f->state = FIBER_DONE;
    --g_blk.live;
    Warp& W = g_blk.warps[f->warp];
    W.live &= ~(1u << f->lane);
    if (W.arrived != 0 && ((W.need >> f->lane) & 1u))
        fault("thread %d (warp %d, lane %d) of block (%u, %u, %u) returned while lanes 0x%08x of its warp wait for it at "
              "a warp operation (mask 0x%08x): undefined behaviour on a GPU",
              f->linear, f->warp, f->lane, g_block_idx.x, g_block_idx.y, g_block_idx.z, W.arrived, W.need);
    if (g_blk.bar_arrived > 0 && g_blk.bar_arrived == g_blk.live) release_barrier();
    try_complete_warp(f->warp);
    yield_to_scheduler();  // never resumed
    __builtin_trap();
}

CUDA_EMU_RT bool ensure_stacks(size_t n, char* err, size_t errlen) {
    if (n <= g_pool_fibers) return true;
    if (g_pool != nullptr) munmap(g_pool, g_pool_fibers * (kStackBytes + kGuardBytes));
    g_pool = nullptr;
    g_pool_fibers = 0;
    void* p = mmap(nullptr, n * (kStackBytes + kGuardBytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %zu fiber stacks", n);
        return false;
    }
    g_pool = static_cast<char*>(p);
    g_pool_fibers = n;
    for (size_t i = 0; i < n; ++i) mprotect(g_pool + i * (kStackBytes + kGuardBytes), kGuardBytes, PROT_NONE);
    return true;
}

void append(std::string& s, const char* fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s += buf;
}

// "0-31, 64, 66-70" (at most a few ranges)
std::string id_list(const std::vector<int>& ids) {
    std::string s;
    int ranges = 0;
    for (size_t i = 0; i < ids.size();) {
        size_t j = i;
        while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
        if (ranges == 6) {
            s += ", ...";
            break;
        }
        if (!s.empty()) s += ", ";
        if (j > i) append(s, "%d-%d", ids[i], ids[j]);
        else append(s, "%d", ids[i]);
        ++ranges;
        i = j + 1;
    }
    return s;
}

CUDA_EMU_RT int run_block(const char* name, char* err, size_t errlen) {
    Block& B = g_blk;
    for (const auto& v : g_shared_vars) std::memset(v.first, 0xFF, v.second);
    std::memset(g_dynamic_shared, 0xFF, g_dynamic_bytes);
    const unsigned bx = g_block_dim.x, by = g_block_dim.y;
    for (int i = 0; i < B.n; ++i) {
        Fiber& f = B.fibers[i];
        f = Fiber{};
        f.tid = make_uint3(i % bx, (i / bx) % by, i / (bx * by));
        f.state = FIBER_NEW;
        f.linear = i;
        f.lane = i & 31;
        f.warp = i >> 5;
        f.stack_top = g_pool + (size_t)(i + 1) * (kStackBytes + kGuardBytes);
    }
    B.live = B.n;
    B.bar_arrived = 0;
    B.bar_count = 0;
    B.bar_and = 1;
    B.bar_or = 0;
    for (int w = 0; w < 32; ++w) {
        const int lanes = B.n - w * 32;
        B.warps[w].live = lanes <= 0 ? 0u : (lanes >= 32 ? 0xffffffffu : ((1u << lanes) - 1u));
        B.warps[w].arrived = 0;
        B.warps[w].need = 0;
    }
    CUDA_EMU_CHECK_HOOK(block_begin(B.n));
    while (B.live > 0) {
        bool ran = false;
        for (int i = 0; i < B.n; ++i) {
            Fiber& f = B.fibers[i];
            if (f.state == FIBER_NEW || f.state == FIBER_READY) {
                ran = true;
                run_fiber(f);
                if (g_fault[0] != 0) {
                    snprintf(err, errlen, "%s: %s", name, g_fault);
                    g_fault[0] = 0;
                    g_cur = nullptr;
                    return 1;
                }
            }
        }
        if (!ran) {
            std::vector<int> at_bar, at_warp, done;
            for (int i = 0; i < B.n; ++i) {
                const int s = B.fibers[i].state;
                (s == FIBER_BARRIER ? at_bar : s == FIBER_WARP ? at_warp : done).push_back(i);
            }
            std::string msg;
            append(msg, "%s: deadlock in block (%u, %u, %u) of %d threads: ", name, g_block_idx.x, g_block_idx.y,
                   g_block_idx.z, B.n);
            append(msg, "%zu wait at __syncthreads", at_bar.size());
            if (!at_bar.empty()) msg += " (threads " + id_list(at_bar) + ")";
#ifdef CUDA_EMU_CHECKED
            if (!at_bar.empty()) append(msg, " [pc=0x%llx]", B.fibers[at_bar[0]].wait_pc);  // (a line, in Python)
#endif
            append(msg, ", %zu wait at a warp operation", at_warp.size());
            if (!at_warp.empty()) msg += " (threads " + id_list(at_warp) + ")";
            append(msg, ", %zu returned (linear thread ids x + y*bx + z*bx*by)", done.size());
            snprintf(err, errlen, "%s", msg.c_str());
            g_cur = nullptr;
            return 1;
        }
    }
    g_cur = nullptr;
    CUDA_EMU_CHECK_HOOK(block_end());
    return 0;
}

}  // namespace

CUDA_EMU_RT bool register_shared(void* p, size_t bytes, const char* name) {
    std::memset(p, 0xFF, bytes);  // registered as the first thread of a block passes the declaration
#ifdef CUDA_EMU_CHECKED
    chk::g_in_hook = true;
#endif
    g_shared_vars.emplace_back(p, bytes);
    g_shared_names.push_back(name);
#ifdef CUDA_EMU_CHECKED
    chk::on_register(p, bytes);
    chk::g_in_hook = false;
#endif
    return true;
}

CUDA_EMU_RT int block_barrier(int pred, int kind) {
    Fiber* f = g_cur;
    f->state = FIBER_BARRIER;
    f->b_kind = kind;
    f->wait_pc = (unsigned long long)__builtin_return_address(0);
    ++g_blk.bar_arrived;
    g_blk.bar_count += pred;
    g_blk.bar_and &= pred;
    g_blk.bar_or |= pred;
    if (g_blk.bar_arrived == g_blk.live) release_barrier();
    else yield_to_scheduler();
    return f->b_result;
}

CUDA_EMU_RT unsigned long long warp_exchange(unsigned mask, int kind, unsigned long long val, int src_lane) {
    Fiber* f = g_cur;
    f->state = FIBER_WARP;
    f->x_kind = kind;
    f->x_mask = mask;
    f->x_val = val;
    f->x_src = src_lane;
    Warp& W = g_blk.warps[f->warp];
    if ((mask & ~W.live) != 0)
        fault("thread %d (warp %d, lane %d) of block (%u, %u, %u) calls a warp operation with mask 0x%08x, which names "
              "lanes that have returned or do not exist (live lanes 0x%08x, block of %d threads): undefined "
              "behaviour on a GPU",
              f->linear, f->warp, f->lane, g_block_idx.x, g_block_idx.y, g_block_idx.z, mask, W.live, g_blk.n);
    W.arrived |= 1u << f->lane;
    W.need |= mask;
    if (!try_complete_warp(f->warp)) yield_to_scheduler();
    return f->x_result;
}

CUDA_EMU_RT unsigned warp_live_mask() { return g_blk.warps[g_cur->warp].live; }

// Runs the whole grid; 0 on success, else a message in err.
CUDA_EMU_RT int run_grid(const char* name, dim3 grid, dim3 block, size_t shared, void (*entry)(void*), void* ctx, char* err,
             size_t errlen) {
    g_dynamic_bytes = shared;
    const size_t n = (size_t)block.x * block.y * block.z;
    if (!ensure_stacks(n, err, errlen)) return 1;
    g_blk.fibers.resize(n);
    g_blk.n = (int)n;
#ifdef CUDA_EMU_USE_UCONTEXT
    g_ucs.resize(n);
#endif
    g_entry = entry;
    g_entry_ctx = ctx;
    g_grid_dim = grid;
    g_block_dim = block;
    for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
            for (unsigned x = 0; x < grid.x; ++x) {
                g_block_idx = make_uint3(x, y, z);
                if (run_block(name, err, errlen) != 0) return 1;
            }
    return 0;
}

// ---- registry ----------------------------------------------------------------------------------------

typedef int (*LaunchFn)(void (*fn)(), const char* name, dim3 grid, dim3 block, size_t shared, const char* buf,
                        char* err, size_t errlen);

struct KernelEntry {
    const char* name;
    void (*fn)();
    int nparams;
    const long long* sizes;
    const long long* offsets;
    long long arg_bytes;
    long long max_threads;
    LaunchFn launch;
};

// The parameter list of a kernel: sizes, CUDA's packing (each parameter at the next multiple of its own
// alignment) and the thunk that unpacks an argument buffer and runs the grid.
template <class... A>
struct Sig {
    static constexpr int n = (int)sizeof...(A);
    static constexpr long long sizes[n + 1] = {(long long)sizeof(A)..., 0};
    static constexpr long long aligns[n + 1] = {(long long)alignof(A)..., 1};
    struct Layout {
        long long off[n + 1];
        long long total;
    };
    static constexpr Layout layout() {
        Layout L{};
        long long o = 0;
        for (int i = 0; i < n; ++i) {
            o = (o + aligns[i] - 1) / aligns[i] * aligns[i];
            L.off[i] = o;
            o += sizes[i];
        }
        L.off[n] = o;
        L.total = o;
        return L;
    }
    static constexpr Layout L = layout();
    typedef void (*Fn)(A...);
    struct Ctx {
        Fn fn;
        std::tuple<A...> args;
    };
    template <size_t... I>
    CUDA_EMU_RT static void call(Ctx* c, std::index_sequence<I...>) {
        c->fn(std::get<I>(c->args)...);  // by value: every thread gets its own copy of the parameters
    }
    CUDA_EMU_RT static void entry(void* p) { call(static_cast<Ctx*>(p), std::index_sequence_for<A...>{}); }
    template <size_t... I>
    CUDA_EMU_RT static void unpack(std::tuple<A...>& t, const char* buf, std::index_sequence<I...>) {
        (std::memcpy(static_cast<void*>(&std::get<I>(t)), buf + L.off[I], sizeof(A)), ...);
    }
    CUDA_EMU_RT static int launch(void (*fn)(), const char* name, dim3 grid, dim3 block, size_t shared, const char* buf,
                      char* err, size_t errlen) {
        Ctx c{reinterpret_cast<Fn>(fn), {}};
        unpack(c.args, buf, std::index_sequence_for<A...>{});
        return run_grid(name, grid, block, shared, &entry, &c, err, errlen);
    }
};

template <class... A>
KernelEntry make_entry(const char* name, void (*fn)(A...), long long max_threads) {
    return KernelEntry{name, reinterpret_cast<void (*)()>(fn), Sig<A...>::n, Sig<A...>::sizes, Sig<A...>::L.off,
                       Sig<A...>::L.total, max_threads, &Sig<A...>::launch};
}

}  // namespace cuda_emu

#define CUDA_EMU_BEGIN_REGISTRY static const ::cuda_emu::KernelEntry cuda_emu_kernels[] = {
#define CUDA_EMU_KERNEL(name, max_threads) ::cuda_emu::make_entry(#name, &name, (long long)(max_threads)),
#define CUDA_EMU_END_REGISTRY                                                                                      \
    }                                                                                                              \
    ;                                                                                                              \
    static const int cuda_emu_nkernels = (int)(sizeof(cuda_emu_kernels) / sizeof(cuda_emu_kernels[0]));         \
    CUDA_EMU_API int emu_count() { return cuda_emu_nkernels; }                                                    \
    CUDA_EMU_API const char* emu_name(int i) {                                                                   \
        return i >= 0 && i < cuda_emu_nkernels ? cuda_emu_kernels[i].name : nullptr;                             \
    }                                                                                                              \
    CUDA_EMU_API int emu_nparams(int i) {                                                                        \
        return i >= 0 && i < cuda_emu_nkernels ? cuda_emu_kernels[i].nparams : -1;                               \
    }                                                                                                              \
    CUDA_EMU_API long long emu_max_threads(int i) {                                                              \
        return i >= 0 && i < cuda_emu_nkernels ? cuda_emu_kernels[i].max_threads : -1;                           \
    }                                                                                                              \
    CUDA_EMU_API long long emu_params(int i, long long* sizes, long long* offsets) {                              \
        if (i < 0 || i >= cuda_emu_nkernels) return -1;                                                          \
        const ::cuda_emu::KernelEntry& k = cuda_emu_kernels[i];                                                  \
        for (int j = 0; j < k.nparams; ++j) {                                                                    \
            sizes[j] = k.sizes[j];                                                                               \
            offsets[j] = k.offsets[j];                                                                           \
        }                                                                                                          \
        return k.arg_bytes;                                                                                      \
    }                                                                                                              \
    CUDA_EMU_API int emu_launch(int i, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,          \
                                unsigned bz, const void* argbuf, long long nbytes, long long shared, char* err,  \
                                int errlen) {                                                                    \
        return ::cuda_emu::launch_checked(cuda_emu_kernels, cuda_emu_nkernels, i, gx, gy, gz, bx, by, bz, argbuf, \
                                          nbytes, shared, err, (size_t)errlen);                                  \
    }

namespace cuda_emu {

CUDA_EMU_RT inline int launch_checked(const KernelEntry* ks, int nk, int i, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, const void* argbuf, long long nbytes, long long shared, char* err,
                          size_t errlen) {
    if (i < 0 || i >= nk) {
        snprintf(err, errlen, "no kernel #%d in this library", i);
        return 1;
    }
    const KernelEntry& k = ks[i];
    if (nbytes != k.arg_bytes) {
        snprintf(err, errlen, "%s: got %lld bytes of arguments, expected %lld", k.name, nbytes, k.arg_bytes);
        return 1;
    }
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0) {
        snprintf(err, errlen, "%s: grid (%u, %u, %u) / block (%u, %u, %u) has a zero dimension", k.name, gx, gy, gz,
                 bx, by, bz);
        return 1;
    }
    const unsigned long long threads = (unsigned long long)bx * by * bz;
    if (bx > 1024 || by > 1024 || bz > 64 || threads > 1024 || gx > 2147483647u || gy > 65535 || gz > 65535) {
        snprintf(err, errlen,
                 "%s: launch out of CUDA's limits: grid (%u, %u, %u), block (%u, %u, %u) (block x, y <= 1024, "
                 "z <= 64, x*y*z <= 1024; grid y, z <= 65535)",
                 k.name, gx, gy, gz, bx, by, bz);
        return 1;
    }
    if ((long long)threads > k.max_threads) {
        snprintf(err, errlen, "%s: block of %llu threads exceeds its __launch_bounds__ (%lld)", k.name, threads,
                 k.max_threads);
        return 1;
    }
    if (shared < 0 || (unsigned long long)shared > kMaxDynamicShared) {
        snprintf(err, errlen, "%s: %lld bytes of dynamic shared memory (the maximum is %zu)", k.name, shared,
                 kMaxDynamicShared);
        return 1;
    }
    return k.launch(k.fn, k.name, dim3(gx, gy, gz), dim3(bx, by, bz), (size_t)shared,
                    static_cast<const char*>(argbuf), err, errlen);
}

}  // namespace cuda_emu

#ifdef CUDA_EMU_CHECKED
#include "cuda_emu_check.h"
#endif
