// cuda_emu_check.h -- the checked build of an emulator library (-DCUDA_EMU_CHECKED): included at the end of
// cuda_emu_runtime.h. The kernel's translation unit is compiled with the compiler's thread-sanitizer
// instrumentation, which turns every load and store of the kernel's code into a call of
// __tsan_{read,write}{1,2,4,8,16}(address) (or a _range call); this file defines those calls, and the library is
// linked without the sanitizer's runtime. Nothing is rewritten in the learner's source. (The thread sanitizer's
// instrumentation, not the address sanitizer's: the latter drops the check of a store that follows a load of
// the same address, and a store is what a race or a writer map needs to see.)
//
// Each access is classified by its address against what the launch declared (emu_check_begin):
//   - the launch's argument buffers (a kernel's pointer arguments: exact byte ranges);
//   - the device's allocations, each with the padding the emulated driver puts around it;
//   - __shared__ memory: the registered static variables and the dynamic shared memory of the launch.
// An access inside an argument buffer or shared memory is the kernel's; one that falls elsewhere in an
// allocation (past a tensor's end, in its padding, in another tensor) or past the launch's dynamic shared
// memory ends the launch as an out-of-bounds error, before the access is made (nothing is written); any
// other address (locals on a fiber's stack, the runtime's own data, constants) is not checked.
//
// With tracing on it also records, per warp and per instruction, the 32-byte sectors of each global access
// and the shared-memory bank wavefronts of each shared access (a warp's lanes are matched by the order of
// their accesses: the k-th access of each lane is one warp instruction when the warp does not diverge),
// which thread last wrote each element of each buffer, and every access of one chosen block with its phase
// (the count of __syncthreads passed). Shared-memory races (two threads of a block touch the same byte in
// the same phase, at least one writes, not both atomically, and no __syncwarp orders them when they share
// a warp) are found with a shadow of every shared byte, tracing or not.

#pragma once

#include <dlfcn.h>
#ifdef __linux__
#include <link.h>  // (dl_iterate_phdr: the library's image, for strict checks)
#endif

#include <algorithm>

// Nothing here is instrumented (it would call itself), and nothing here calls std:: containers on the hot path:
// their code is instrumented (templates are compiled in the kernel's translation unit), and a call per access
// costs more than the check (perf: a 256 x 256 tiled matmul, checked, 8.8 s with std::vector, see RESULTS.md).
// Growable arrays are Buf (realloc), plain structs are zero-initialised.
#define CUDA_EMU_CHK __attribute__((no_sanitize("thread")))

namespace cuda_emu {
namespace chk {

enum : int { K_LOAD = 0, K_STORE = 1, K_ATOMIC = 2 };
enum : int { R_ARG = 0, R_OTHER = 1 };

struct Range {
    uintptr_t lo, hi;  // [lo, hi): an argument buffer, or the whole memory of one device allocation
    int kind;          // R_ARG or R_OTHER
    int index;         // the caller's index of this range
    long long itemsize;
    uint32_t* writer;  // the last writer (global thread id) of each element, or null
};

struct Site {  // one instruction (call site) of the kernel
    uintptr_t pc;
    int kind, space, buf;  // space: 0 global, 1 shared; buf: the first buffer / shared variable it touched
    long long requests, lanes, bytes, sectors, ideal_sectors, wavefronts, ideal_wavefronts, mixed, stride;
};

struct Group {  // the k-th access of the lanes of one warp (n == 0: empty; site is then meaningless)
    int site, n;
    bool mixed;
    uintptr_t addr[32];
    unsigned char size[32], lane[32];
};

struct LogEntry {  // one access of the chosen block
    uint32_t phase, thread, site;
    int32_t buf;        // >= 0: a range index; -1: dynamic shared; -2 - k: static shared variable k
    uint64_t offset;    // bytes from the start of the buffer / variable
    uint16_t size;
    uint8_t kind, space;
    uint32_t pad;
};

struct LastAccess {  // a thread's previous access (see continues())
    uintptr_t addr;
    size_t size;
    uintptr_t pc;
    int kind, space;
    uint32_t seq;
    uint32_t epoch, warp_epoch;  // the barrier phase and warp epoch it was made in
    long long log_index;         // its entry in g_log, or -1
};

struct Shadow {  // who touched one byte of shared memory in the current phase (all zero: nobody yet)
    uint32_t wepoch, repoch, wwarp_epoch, rwarp_epoch;
    uint16_t writer, reader;
    uint8_t watomic, rmulti, rwarp_same, pad;
    uintptr_t wpc, rpc;
};

// A growable array of a trivially copyable T (realloc'd; zero-filled when it grows).
template <class T>
struct Buf {
    T* p;
    size_t n, cap;
};
template <class T>
CUDA_EMU_CHK T* grow(Buf<T>& b, size_t need) {
    if (need > b.cap) {
        size_t cap = b.cap ? b.cap : 64;
        while (cap < need) cap *= 2;
        T* q = static_cast<T*>(std::realloc(b.p, cap * sizeof(T)));
        if (q == nullptr) return nullptr;
        std::memset(static_cast<void*>(q + b.cap), 0, (cap - b.cap) * sizeof(T));
        b.p = q;
        b.cap = cap;
    }
    if (need > b.n) b.n = need;
    return b.p;
}
template <class T>
CUDA_EMU_CHK void release(Buf<T>& b) {
    std::free(b.p);
    b = Buf<T>{nullptr, 0, 0};
}

struct SharedVar {  // a registered static __shared__ variable, as the checks see it
    uintptr_t lo;
    size_t bytes;
    Shadow* shadow;  // one per byte (calloc'd when first touched in a checked launch)
};

struct Race {
    long long count = 0;
    long long kind = 0;  // 0 read after write, 1 write after read, 2 write after write
    long long block = 0, thread_a = 0, thread_b = 0, var = 0, offset = 0, phase = 0, size = 0;
    uintptr_t pc_a = 0, pc_b = 0;
};

struct Fault {
    long long set = 0, kind = 0, space = 0, block = 0, thread = 0, size = 0, offset = 0;
    uintptr_t addr = 0, pc = 0;
};

bool g_on = false;
bool g_in_hook = false;  // set while a hook runs
const struct Range* g_last_arg = nullptr;  // the argument buffer of the last access (see access())
bool g_trace = false;
bool g_strict = false;  // a learner's launch: any global address outside its buffers is out of bounds
uintptr_t g_image_lo = 0, g_image_hi = 0;  // this library's loaded image (its constants and statics)
Buf<uintptr_t> g_line_pcs;  // instruction offsets in the library, sorted, with the source line id of each
Buf<int> g_line_ids;
long long g_sel_block = 0, g_log_cap = 0;
Buf<Range> g_args;    // the launch's argument buffers, sorted by lo
Buf<Range> g_others;  // every device allocation (padding included), sorted by lo
Buf<Site> g_sites;
constexpr size_t kSiteSlots = 1 << 14;  // open-addressing table: (pc, kind) -> 1 + index in g_sites (0: empty)
Buf<uintptr_t> g_site_keys;
Buf<int> g_site_vals;
uint32_t g_seq[1024];          // accesses so far of each thread of the running block
LastAccess g_last[1024];       // and the last of them
Buf<Group> g_groups[32];       // [warp][k]
Buf<LogEntry> g_log;
Buf<SharedVar> g_vars;         // the static __shared__ variables (in registration order)
Buf<Shadow> g_shadow_dyn;      // the dynamic shared memory's shadow
uint32_t g_epoch = 1, g_phase = 0;
uint32_t g_warp_epoch[32];
long long g_block_linear = 0;
constexpr uint32_t kMaxSeq = 4096;  // accesses per thread matched into warp instructions (the rest only counted)
Race g_race;
Fault g_fault_info;

CUDA_EMU_CHK inline long long block_linear() {
    return (long long)g_block_idx.x + (long long)g_grid_dim.x * (g_block_idx.y + (long long)g_grid_dim.y * g_block_idx.z);
}

CUDA_EMU_CHK int site_of(uintptr_t pc, int kind, int space, int buf) {
    const uintptr_t key = (pc << 2) | (uintptr_t)kind;
    uintptr_t* keys = grow(g_site_keys, kSiteSlots);
    int* vals = grow(g_site_vals, kSiteSlots);
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 50) & (kSiteSlots - 1);
    for (size_t probe = 0; probe < kSiteSlots; ++probe, h = (h + 1) & (kSiteSlots - 1)) {
        if (vals[h] != 0 && keys[h] == key) return vals[h] - 1;
        if (vals[h] == 0) {
            const size_t i = g_sites.n;
            Site* sites = grow(g_sites, i + 1);
            sites[i] = Site{pc, kind, space, buf, 0, 0, 0, 0, 0, 0, 0, 0, LLONG_MIN};
            keys[h] = key;
            vals[h] = (int)i + 1;
            return (int)i;
        }
    }
    return 0;  // (a kernel with over 16,384 memory instructions: the rest are counted with the first)
}

CUDA_EMU_CHK [[noreturn]] void out_of_bounds(uintptr_t a, size_t size, int kind, uintptr_t pc, int space, long long off) {
    Fault& F = g_fault_info;
    F.set = 1;
    F.kind = kind;
    F.space = space;
    F.block = block_linear();
    F.thread = g_cur->linear;
    F.size = (long long)size;
    F.offset = off;
    F.addr = a;
    F.pc = pc;
    g_in_hook = false;
    fault("out-of-bounds %s of %zu bytes by thread %d of block (%u, %u, %u)", kind == K_LOAD ? "read" : "write", size,
          g_cur->linear, g_block_idx.x, g_block_idx.y, g_block_idx.z);
    __builtin_unreachable();
}

// Whether an access continues the thread's previous one into one aligned vector access: the emulator's compiler
// splits a float2 / float4 copy into scalar loads and stores from different instructions, which the GPU does
// as one 8- or 16-byte access. (A loop over consecutive elements repeats one instruction: never merged.)
// The source line id of an instruction (its offset in the library), or -1 when unknown.
CUDA_EMU_CHK int line_of(uintptr_t pc) {
    const uintptr_t off = pc - g_image_lo;
    size_t lo = 0, hi = g_line_pcs.n;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (g_line_pcs.p[mid] < off) lo = mid + 1;
        else hi = mid;
    }
    return lo < g_line_pcs.n && g_line_pcs.p[lo] == off ? g_line_ids.p[lo] : -1;
}

CUDA_EMU_CHK bool continues(const LastAccess& p, uintptr_t a, size_t size, int kind, int space, uintptr_t pc) {
    if (p.size == 0 || p.pc == pc || p.kind != kind || p.space != space || a != p.addr + p.size) return false;
    if (p.epoch != g_epoch || p.warp_epoch != g_warp_epoch[g_cur->warp]) return false;  // (a barrier between)
    const size_t merged = p.size + size;
    const size_t block = merged <= 8 ? 8 : 16;
    if (merged > 16 || p.addr % block != 0) return false;
    const int line = line_of(pc);  // one statement's copy only: two lines are two loads on a GPU too
    return line >= 0 && line == line_of(p.pc);
}

CUDA_EMU_CHK void record(int space, int buf, uintptr_t a, uint64_t off, size_t size, int kind, uintptr_t pc) {
    const int t = g_cur->linear;
    LastAccess& last = g_last[t];
    if (continues(last, a, size, kind, space, pc)) {
        last.size += size;
        last.pc = pc;
        if (last.seq < kMaxSeq) {
            Group& G = g_groups[g_cur->warp].p[last.seq];
            for (int j = G.n - 1; j >= 0; --j)
                if (G.lane[j] == g_cur->lane) {
                    G.size[j] = (unsigned char)last.size;
                    break;
                }
        }
        if (last.log_index >= 0) g_log.p[last.log_index].size = (uint16_t)last.size;
        return;
    }
    const int site = site_of(pc, kind, space, buf);
    const uint32_t k = g_seq[t]++;
    last = LastAccess{a, size, pc, kind, space, k, g_epoch, g_warp_epoch[g_cur->warp], -1};
    if (k < kMaxSeq) {
        Group* gs = grow(g_groups[g_cur->warp], (size_t)k + 1);
        if (gs != nullptr) {
            Group& G = gs[k];
            if (G.n == 0) G.site = site;
            else if (G.site != site) G.mixed = true;
            if (!G.mixed && G.n < 32) {
                G.addr[G.n] = a;
                G.size[G.n] = (unsigned char)(size < 255 ? size : 255);
                G.lane[G.n] = (unsigned char)g_cur->lane;
                ++G.n;
            }
        }
    }
    if (g_block_linear == g_sel_block && (long long)g_log.n < g_log_cap) {
        LogEntry* log = grow(g_log, g_log.n + 1);
        if (log != nullptr) {
            log[g_log.n - 1] = LogEntry{g_phase, (uint32_t)t, (uint32_t)site, buf, off,
                                        (uint16_t)(size < 65535 ? size : 65535), (uint8_t)kind, (uint8_t)space, 0};
            last.log_index = (long long)g_log.n - 1;
        }
    }
}

// One racing access (the first is kept in full).
CUDA_EMU_CHK void note_race(int kind, int other, uintptr_t other_pc, int var, uint64_t off, size_t size, uintptr_t pc) {
    Race& R = g_race;
    if (R.count++ > 0) return;
    R.size = (long long)size;
    R.pc_b = pc;
    R.kind = kind;
    R.block = block_linear();
    R.thread_a = other;
    R.pc_a = other_pc;
    R.thread_b = g_cur->linear;
    R.var = var;
    R.offset = (long long)off;
    R.phase = g_phase;
}

// The race check of one shared access (var: static variable k, or -1 for the dynamic shared memory).
CUDA_EMU_CHK void shared_shadow(int var, uint64_t off, size_t size, int kind, uintptr_t pc) {
    Shadow* sh;
    size_t nsh;
    if (var >= 0) {
        SharedVar& v = g_vars.p[var];
        if (v.shadow == nullptr) v.shadow = static_cast<Shadow*>(std::calloc(v.bytes, sizeof(Shadow)));
        sh = v.shadow;
        nsh = sh != nullptr ? v.bytes : 0;
    } else {
        sh = g_shadow_dyn.p;
        nsh = g_shadow_dyn.n;
    }
    const int t = g_cur->linear, w = g_cur->warp;
    const uint32_t we = g_warp_epoch[w];
    // another thread's access is ordered before this one when both are in this warp and a warp-wide
    // operation of the warp came between them
    auto ordered = [&](int other, uint32_t other_warp_epoch) { return (other >> 5) == w && other_warp_epoch != we; };
    bool raced = false;  // (one race per access, at its first conflicting byte)
    auto race = [&](int k, int other, uintptr_t other_pc, uint64_t at) {
        if (!raced) note_race(k, other, other_pc, var, at, size, pc);
        raced = true;
    };
    for (size_t i = 0; i < size && off + i < nsh; ++i) {
        Shadow& s = sh[off + i];
        if (kind == K_LOAD) {
            if (s.wepoch == g_epoch && s.writer != t && !ordered(s.writer, s.wwarp_epoch))
                race(0, s.writer, s.wpc, off + i);
            if (s.repoch != g_epoch) {
                s.repoch = g_epoch;
                s.reader = (uint16_t)t;
                s.rmulti = 0;
                s.rwarp_same = 1;
                s.rpc = pc;
            } else if (s.reader != t) {
                s.rmulti = 1;
                if ((s.reader >> 5) != w) s.rwarp_same = 0;
                s.reader = (uint16_t)t;
                s.rpc = pc;
            }
            s.rwarp_epoch = we;
        } else {
            if (s.repoch == g_epoch) {
                const bool only_me = !s.rmulti && s.reader == t;
                const bool synced = s.rwarp_same && (s.reader >> 5) == w && s.rwarp_epoch != we;
                if (!only_me && !synced) race(1, s.reader == t ? -1 : s.reader, s.rpc, off + i);
            }
            if (s.wepoch == g_epoch && s.writer != t && !(kind == K_ATOMIC && s.watomic) &&
                !ordered(s.writer, s.wwarp_epoch))
                race(2, s.writer, s.wpc, off + i);
            s.wepoch = g_epoch;
            s.writer = (uint16_t)t;
            s.wwarp_epoch = we;
            s.watomic = kind == K_ATOMIC;
            s.wpc = pc;
        }
    }
}

void access_checked(uintptr_t a, size_t size, int kind, uintptr_t pc);

// The last range of `v` (sorted by lo) that starts at or below a, or null.
CUDA_EMU_CHK const Range* last_at_or_below(const Buf<Range>& v, uintptr_t a) {
    size_t lo = 0, hi = v.n;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (v.p[mid].lo <= a) lo = mid + 1;
        else hi = mid;
    }
    return lo == 0 ? nullptr : &v.p[lo - 1];
}

CUDA_EMU_CHK void access(uintptr_t a, size_t size, int kind, uintptr_t pc) {
    if (!g_on || g_in_hook || g_cur == nullptr) return;
    // perf: the argument buffer the last access hit takes most accesses of a kernel; untraced, a load (or a store
    // to a buffer without a writer map) inside it needs nothing more (elementwise 1M threads: 1.8 s -> see RESULTS.md)
    const Range* last = g_last_arg;
    if (last != nullptr && !g_trace && a >= last->lo && a + size <= last->hi && (kind == K_LOAD || !last->writer))
        return;
    g_in_hook = true;
    access_checked(a, size, kind, pc);
    g_in_hook = false;
}

CUDA_EMU_CHK void access_checked(uintptr_t a, size_t size, int kind, uintptr_t pc) {
    // shared memory: the dynamic block, then the static variables
    const uintptr_t dyn = reinterpret_cast<uintptr_t>(g_dynamic_shared);
    if (a >= dyn && a < dyn + kMaxDynamicShared) {
        const uint64_t off = a - dyn;
        if (off + size > g_dynamic_bytes) out_of_bounds(a, size, kind, pc, 1, (long long)off);
        shared_shadow(-1, off, size, kind, pc);
        if (g_trace) record(1, -1, a, off, size, kind, pc);
        return;
    }
    for (size_t k = 0; k < g_vars.n; ++k) {
        const SharedVar& v = g_vars.p[k];
        if (a >= v.lo && a < v.lo + v.bytes) {
            shared_shadow((int)k, a - v.lo, size, kind, pc);
            if (g_trace) record(1, -2 - (int)k, a, a - v.lo, size, kind, pc);
            return;
        }
    }
    // global memory: inside an argument buffer (arguments may overlap: a slice beside its tensor), else out of
    // bounds if it lies in any device allocation, or anywhere but this library and the fiber stacks in a
    // learner's launch (strict), else not ours
    const Range* hit = nullptr;
    bool straddles = false;
    for (size_t i = 0; i < g_args.n; ++i) {
        const Range& r = g_args.p[i];
        if (a < r.lo || a >= r.hi) continue;
        if (a + size > r.hi) {
            straddles = true;
            continue;
        }
        if (hit == nullptr) hit = &r;
        if (r.writer != nullptr && kind != K_LOAD) {
            const long long id = g_block_linear * (long long)g_blk.n + g_cur->linear;
            const uint32_t v = id < 0xFFFFFFFFLL ? (uint32_t)id : 0xFFFFFFFEu;
            for (uintptr_t e = (a - r.lo) / r.itemsize; e <= (a + size - 1 - r.lo) / r.itemsize; ++e) r.writer[e] = v;
        }
    }
    if (hit != nullptr) {
        g_last_arg = hit->writer == nullptr ? hit : nullptr;  // (a writer map is kept by the slow path only)
        if (g_trace) record(0, hit->index, a, a - hit->lo, size, kind, pc);
        return;
    }
    if (straddles) out_of_bounds(a, size, kind, pc, 0, 0);
    const Range* o = last_at_or_below(g_others, a);
    if (o != nullptr && a < o->hi) out_of_bounds(a, size, kind, pc, 0, 0);
    if (g_strict && g_image_hi != 0) {  // (no image range known, e.g. off Linux: not strict)
        const uintptr_t stacks = reinterpret_cast<uintptr_t>(g_pool);
        const bool on_a_stack = a >= stacks && a < stacks + g_pool_fibers * (kStackBytes + kGuardBytes);
        const bool ours = a >= g_image_lo && a < g_image_hi;
        if (!on_a_stack && !ours) out_of_bounds(a, size, kind, pc, 0, 0);
    }
}

// ---- the warp-instruction statistics of a finished block ----------------------------------------------

CUDA_EMU_CHK void flush_group(Group& G) {
    if (G.n == 0) return;
    Site& S = g_sites.p[G.site];
    if (G.mixed) {
        ++S.mixed;
        G.n = 0;
        G.mixed = false;
        return;
    }
    ++S.requests;
    S.lanes += G.n;
    long long bytes = 0;
    for (int i = 0; i < G.n; ++i) bytes += G.size[i];
    S.bytes += bytes;
    if (S.stride == LLONG_MIN && G.n >= 2 && G.lane[1] == G.lane[0] + 1)
        S.stride = (long long)G.addr[1] - (long long)G.addr[0];
    if (S.space == 0) {  // global: distinct 32-byte sectors against the fewest that could hold the bytes
        uintptr_t sec[32 * 16];
        int ns = 0;
        for (int i = 0; i < G.n; ++i)
            for (uintptr_t s = G.addr[i] >> 5; s <= (G.addr[i] + G.size[i] - 1) >> 5 && ns < 32 * 16; ++s) sec[ns++] = s;
        std::sort(sec, sec + ns);
        S.sectors += std::unique(sec, sec + ns) - sec;
        S.ideal_sectors += (bytes + 31) / 32;
    } else {  // shared: 32 banks of 4 bytes; 8- and 16-byte accesses are served in 2 and 4 phases of lanes
        const int width = G.size[0] <= 4 ? 32 : (G.size[0] <= 8 ? 16 : 8);
        for (int p = 0; p < 32 / width; ++p) {
            uintptr_t words[32][8];
            int nw[32] = {0};
            bool any = false;
            for (int i = 0; i < G.n; ++i) {
                if (G.lane[i] / width != p) continue;
                any = true;
                for (uintptr_t wd = G.addr[i] >> 2; wd <= (G.addr[i] + G.size[i] - 1) >> 2; ++wd) {
                    const int b = (int)(wd & 31);
                    bool seen = false;
                    for (int j = 0; j < nw[b]; ++j) seen |= words[b][j] == wd;
                    if (!seen && nw[b] < 8) words[b][nw[b]++] = wd;
                    else if (!seen) ++nw[b];  // (counted past 8 without being stored: a worse conflict)
                }
            }
            if (!any) continue;
            int worst = 1;
            for (int b = 0; b < 32; ++b) worst = std::max(worst, nw[b]);
            S.wavefronts += worst;
            ++S.ideal_wavefronts;
        }
    }
    G.n = 0;
    G.mixed = false;
}

CUDA_EMU_CHK void block_begin(int nthreads) {
    if (!g_on) return;
    g_in_hook = true;
    g_block_linear = block_linear();
    ++g_epoch;
    g_phase = 0;
    if (g_shadow_dyn.n < g_dynamic_bytes) grow(g_shadow_dyn, g_dynamic_bytes);
    std::fill(g_warp_epoch, g_warp_epoch + 32, 0u);
    if (g_trace) {
        std::memset(g_seq, 0, sizeof(uint32_t) * (size_t)nthreads);
        std::memset(static_cast<void*>(g_last), 0, sizeof(LastAccess) * (size_t)nthreads);
    }
    g_in_hook = false;
}

CUDA_EMU_CHK void block_end() {
    if (!g_on || !g_trace) return;
    g_in_hook = true;
    for (Buf<Group>& gs : g_groups) {
        for (size_t k = 0; k < gs.n; ++k) flush_group(gs.p[k]);
        gs.n = 0;  // (the memory stays, zeroed group by group by flush_group)
    }
    g_in_hook = false;
}

CUDA_EMU_CHK void on_barrier() {
    if (!g_on) return;
    ++g_epoch;
    ++g_phase;
}

CUDA_EMU_CHK void on_warp_sync(int w) {
    if (g_on) ++g_warp_epoch[w];
}

}  // namespace chk

CUDA_EMU_CHK void note_atomic(void* p, size_t size, uintptr_t pc) {
    chk::access(reinterpret_cast<uintptr_t>(p), size, chk::K_ATOMIC, pc);
}
CUDA_EMU_CHK void note_range(const void* p, size_t n, int kind, uintptr_t pc) {
    if (n > 0) chk::access(reinterpret_cast<uintptr_t>(p), n, kind, pc);
}

}  // namespace cuda_emu

// The instrumentation's calls; the return address names the instruction.
#define CUDA_EMU_HOOK(name, n, kind)                                                                           \
    extern "C" CUDA_EMU_CHK void name(void* a) {                                                                \
        ::cuda_emu::chk::access(reinterpret_cast<uintptr_t>(a), n, kind,                                        \
                                reinterpret_cast<uintptr_t>(__builtin_return_address(0)));                       \
    }
#define CUDA_EMU_HOOKS(n)                                                                                        \
    CUDA_EMU_HOOK(__tsan_read##n, n, 0)                                                                          \
    CUDA_EMU_HOOK(__tsan_write##n, n, 1)                                                                         \
    CUDA_EMU_HOOK(__tsan_unaligned_read##n, n, 0)                                                                \
    CUDA_EMU_HOOK(__tsan_unaligned_write##n, n, 1)                                                               \
    CUDA_EMU_HOOK(__tsan_volatile_read##n, n, 0)                                                                 \
    CUDA_EMU_HOOK(__tsan_volatile_write##n, n, 1)
CUDA_EMU_HOOKS(1)
CUDA_EMU_HOOKS(2)
CUDA_EMU_HOOKS(4)
CUDA_EMU_HOOKS(8)
CUDA_EMU_HOOKS(16)
extern "C" CUDA_EMU_CHK void __tsan_read_range(void* a, unsigned long n) {
    ::cuda_emu::chk::access(reinterpret_cast<uintptr_t>(a), n, 0, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
extern "C" CUDA_EMU_CHK void __tsan_write_range(void* a, unsigned long n) {
    ::cuda_emu::chk::access(reinterpret_cast<uintptr_t>(a), n, 1, reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
}
// (the rest of the instrumentation's interface: nothing to do here)
extern "C" CUDA_EMU_CHK void __tsan_init() {}
extern "C" CUDA_EMU_CHK void __tsan_func_entry(void*) {}
extern "C" CUDA_EMU_CHK void __tsan_func_exit() {}
extern "C" CUDA_EMU_CHK void __tsan_atomic_thread_fence(int) {}
extern "C" CUDA_EMU_CHK void __tsan_atomic_signal_fence(int) {}
extern "C" CUDA_EMU_CHK void __tsan_vptr_update(void**, void*) {}
extern "C" CUDA_EMU_CHK void __tsan_vptr_read(void**) {}

// ---- the C API of the checks ----------------------------------------------------------------------------

namespace cuda_emu {
namespace chk {
// A static __shared__ variable registered (as the first thread of a block passes its declaration).
CUDA_EMU_CHK void on_register(void* p, size_t bytes) {
    SharedVar* v = grow(g_vars, g_vars.n + 1);
    if (v != nullptr) v[g_vars.n - 1] = SharedVar{reinterpret_cast<uintptr_t>(p), bytes, nullptr};
}

#ifdef __linux__
// The loaded image of this library: [lowest, highest) address of its segments.
CUDA_EMU_CHK int image_segment(struct dl_phdr_info* info, size_t, void* data) {
    auto* range = static_cast<uintptr_t*>(data);  // in: an address in the library; out: lo, hi
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
        const uintptr_t s = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
        lo = std::min(lo, s);
        hi = std::max(hi, s + info->dlpi_phdr[i].p_memsz);
    }
    if (range[0] >= lo && range[0] < hi) {
        range[0] = lo;
        range[1] = hi;
        return 1;
    }
    return 0;
}
#endif

// Find this library's image once (g_image_lo, g_image_hi); stays 0 where it cannot be known.
CUDA_EMU_CHK void find_image() {
#ifdef __linux__
    if (g_image_hi != 0) return;
    uintptr_t range[2] = {reinterpret_cast<uintptr_t>(&g_on), 0};
    if (dl_iterate_phdr(image_segment, range)) {
        g_image_lo = range[0];
        g_image_hi = range[1];
    }
#endif
}
}  // namespace chk
}  // namespace cuda_emu

// rows: n rows of (lo, hi, kind (0 argument buffer, 1 allocation), index, itemsize, writer address or 0);
// flags: 1 = trace, 2 = strict (a learner's launch: any address outside its buffers, the stacks and this library
// is out of bounds).
CUDA_EMU_API CUDA_EMU_CHK void emu_check_begin(int n, const long long* rows, int flags, long long sel_block,
                                               long long log_cap) {
    using namespace cuda_emu::chk;
    g_args.n = 0;
    g_others.n = 0;
    g_last_arg = nullptr;
    for (int i = 0; i < n; ++i) {
        const long long* r = rows + 6 * i;
        Buf<Range>& to = r[2] == R_ARG ? g_args : g_others;
        Range* out = grow(to, to.n + 1);
        if (out != nullptr)
            out[to.n - 1] = Range{(uintptr_t)r[0], (uintptr_t)r[1], (int)r[2], (int)r[3], r[4] > 0 ? r[4] : 1,
                                  reinterpret_cast<uint32_t*>((uintptr_t)r[5])};
    }
    auto by_lo = [](const Range& a, const Range& b) { return a.lo < b.lo; };
    std::sort(g_args.p, g_args.p + g_args.n, by_lo);
    std::sort(g_others.p, g_others.p + g_others.n, by_lo);
    g_trace = (flags & 1) != 0;
    g_strict = (flags & 2) != 0;
    find_image();
    g_sel_block = sel_block;
    g_log_cap = log_cap;
    g_sites.n = 0;
    release(g_site_keys);
    release(g_site_vals);
    g_log.n = 0;
    for (Buf<Group>& gs : g_groups) release(gs);
    g_race = Race();
    g_fault_info = Fault();
    for (size_t k = 0; k < g_vars.n; ++k) {  // (a fresh shadow for each variable: calloc'd when first touched)
        std::free(g_vars.p[k].shadow);
        g_vars.p[k].shadow = nullptr;
    }
    release(g_shadow_dyn);
    g_on = true;
}

CUDA_EMU_API CUDA_EMU_CHK void emu_check_end() { cuda_emu::chk::g_on = false; }

// The source line of each instruction that loads or stores (offsets from this library's start, sorted): two
// accesses merge into one vector access only when they come from one line (see continues()).
CUDA_EMU_API CUDA_EMU_CHK void emu_check_lines(int n, const long long* offsets, const int* ids) {
    using namespace cuda_emu::chk;
    uintptr_t* o = grow(g_line_pcs, (size_t)n);
    int* l = grow(g_line_ids, (size_t)n);
    if (o == nullptr || l == nullptr) return;
    for (int i = 0; i < n; ++i) {
        o[i] = (uintptr_t)offsets[i];
        l[i] = ids[i];
    }
    g_line_pcs.n = g_line_ids.n = (size_t)n;
}

// the start of this library's image (instruction offsets are from here)
CUDA_EMU_API CUDA_EMU_CHK long long emu_check_image() {
    using namespace cuda_emu::chk;
    find_image();
    return (long long)g_image_lo;
}

CUDA_EMU_API CUDA_EMU_CHK int emu_check_fault(long long* out) {
    const cuda_emu::chk::Fault& F = cuda_emu::chk::g_fault_info;
    const long long v[] = {F.kind, F.space, F.block, F.thread, F.size, F.offset, (long long)F.addr, (long long)F.pc};
    std::memcpy(out, v, sizeof v);
    return (int)F.set;
}

CUDA_EMU_API CUDA_EMU_CHK long long emu_check_race(long long* out) {
    const cuda_emu::chk::Race& R = cuda_emu::chk::g_race;
    const long long v[] = {R.kind, R.block, R.thread_a, R.thread_b, R.var, R.offset, R.phase, (long long)R.pc_a,
                           (long long)R.pc_b, R.size};
    std::memcpy(out, v, sizeof v);
    return R.count;
}

// rows of (pc, kind, space, buf, requests, lanes, bytes, sectors, ideal_sectors, wavefronts, ideal_wavefronts,
// mixed, stride)
CUDA_EMU_API CUDA_EMU_CHK int emu_check_sites(long long* out, int cap) {
    const auto& S = cuda_emu::chk::g_sites;
    const int n = (int)std::min<size_t>(S.n, (size_t)cap);
    for (int i = 0; i < n; ++i) {
        const cuda_emu::chk::Site& s = S.p[i];
        const long long v[] = {(long long)s.pc, s.kind, s.space, s.buf, s.requests, s.lanes, s.bytes, s.sectors,
                               s.ideal_sectors, s.wavefronts, s.ideal_wavefronts, s.mixed, s.stride};
        std::memcpy(out + 13 * i, v, sizeof v);
    }
    return (int)S.n;
}

CUDA_EMU_API CUDA_EMU_CHK long long emu_check_log(void* out, long long cap) {
    const auto& L = cuda_emu::chk::g_log;
    const size_t n = std::min<size_t>(L.n, (size_t)cap);
    if (out != nullptr && n > 0) std::memcpy(out, L.p, n * sizeof(cuda_emu::chk::LogEntry));
    return (long long)L.n;
}

// the static __shared__ variables registered so far: name, and (size) in *bytes
CUDA_EMU_API const char* emu_shared_var(int i, long long* bytes) {
    if (i < 0 || (size_t)i >= cuda_emu::g_shared_vars.size()) return nullptr;
    *bytes = (long long)cuda_emu::g_shared_vars[(size_t)i].second;
    return cuda_emu::g_shared_names[(size_t)i];
}

// the load address of this library (the instruction addresses above are absolute)
CUDA_EMU_API long long emu_lib_base() {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&emu_lib_base), &info) == 0) return 0;
    return (long long)reinterpret_cast<uintptr_t>(info.dli_fbase);
}
