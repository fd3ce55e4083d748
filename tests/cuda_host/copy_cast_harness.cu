// Host emulation of the copy_cast.cu kernels, built as a shared library for
// tests/test_kernels_host_copy_cast.py (ctypes): the kernels' own loop bodies (cc_copy_strided,
// ew_map_contig with CcCastF, cc_arange_*) run for every thread id of an emulated grid of `nthreads`
// threads (the threads are independent, so a sequential loop over tid is exact).
#include "copy_cast.cuh"
#include "ew_layout_host.h"

namespace {

template <typename D, typename S>
void run(int contig, long long nth, void* out, const void* x, const EwLayout& lo, const EwLayout& lx, long long n,
         int aligned) {
    for (long long tid = 0; tid < nth; ++tid) {
        if (contig) {
            ew_map_contig<1>(tid, nth, (D*)out, (const S*)x, (const S*)x, (const S*)x, n, aligned, CcCastF<D, S>{});
        } else {
            cc_copy_strided<D, S>(tid, nth, (D*)out, (const S*)x, lo, lx, n);
        }
    }
}

template <typename S>
int run_src(int dst, int contig, long long nth, void* out, const void* x, const EwLayout& lo, const EwLayout& lx,
            long long n, int aligned) {
    switch (dst) {
        case 0: run<float, S>(contig, nth, out, x, lo, lx, n, aligned); return 0;
        case 1: run<__half, S>(contig, nth, out, x, lo, lx, n, aligned); return 0;
        case 2: run<long long, S>(contig, nth, out, x, lo, lx, n, aligned); return 0;
        case 3: run<int, S>(contig, nth, out, x, lo, lx, n, aligned); return 0;
        case 4: run<unsigned char, S>(contig, nth, out, x, lo, lx, n, aligned); return 0;
        default: return -1;
    }
}

}  // namespace

// dtype codes: 0 f32, 1 f16, 2 i64, 3 i32, 4 bool. Returns 0, or -1 for an unknown code.
extern "C" int emu_copy_cast(int src, int dst, int contig, long long nth, void* out, const void* x,
                             const long long* shape, const long long* so, const long long* sx, int ndim, long long n,
                             int aligned) {
    const EwLayout lo = make_layout(shape, so, ndim);
    const EwLayout lx = make_layout(shape, sx, ndim);
    switch (src) {
        case 0: return run_src<float>(dst, contig, nth, out, x, lo, lx, n, aligned);
        case 1: return run_src<__half>(dst, contig, nth, out, x, lo, lx, n, aligned);
        case 2: return run_src<long long>(dst, contig, nth, out, x, lo, lx, n, aligned);
        case 3: return run_src<int>(dst, contig, nth, out, x, lo, lx, n, aligned);
        case 4: return run_src<unsigned char>(dst, contig, nth, out, x, lo, lx, n, aligned);
        default: return -1;
    }
}

extern "C" int emu_arange(int dst, long long nth, void* out, double start, double step, long long istart,
                          long long istep, long long n) {
    for (long long tid = 0; tid < nth; ++tid) {
        switch (dst) {
            case 0: cc_arange_float<float>(tid, nth, (float*)out, start, step, n); break;
            case 1: cc_arange_float<__half>(tid, nth, (__half*)out, start, step, n); break;
            case 2: cc_arange_int<long long>(tid, nth, (long long*)out, istart, istep, n); break;
            case 3: cc_arange_int<int>(tid, nth, (int*)out, istart, istep, n); break;
            default: return -1;
        }
    }
    return 0;
}
