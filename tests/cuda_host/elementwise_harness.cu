// Host emulation of the elementwise.cu kernels, built as a shared library for
// tests/test_kernels_host_elementwise.py (ctypes). It runs the kernels' own loop bodies (ew_map_strided /
// ew_map_contig from kernel_src/elementwise.cuh) for every thread id of an emulated grid of `nthreads`
// threads; the threads of these kernels are independent, so a sequential loop over tid is exact.
#include "elementwise.cuh"
#include "ew_layout_host.h"

namespace {

template <int K, typename TO, typename TA, typename TB, typename TC, typename F>
void run(int contig, long long nth, void* out, const void* i0, const void* i1, const void* i2,
         const EwLayout& l0, const EwLayout& l1, const EwLayout& l2, long long n, int aligned, const F& f) {
    for (long long tid = 0; tid < nth; ++tid) {
        if (contig) {
            ew_map_contig<K>(tid, nth, (TO*)out, (const TA*)i0, (const TB*)i1, (const TC*)i2, n, aligned, f);
        } else {
            ew_map_strided<K>(tid, nth, (TO*)out, (const TA*)i0, (const TB*)i1, (const TC*)i2, l0, l1, l2, n, f);
        }
    }
}

}  // namespace

// family: 0 unary, 1 binary, 2 compare, 3 predicate, 4 where. dt: 0 f32, 1 f16, 2 i64, 3 i32, 4 bool.
// Returns 0, or -1 for a family/dtype pair that has no kernel.
extern "C" int emu_ew(int family, int dt, int contig, long long nth, void* out, const void* i0, const void* i1,
                      const void* i2, const long long* shape, const long long* s0, const long long* s1,
                      const long long* s2, int ndim, long long n, int op, double a, double b, long long ia,
                      long long ib, int aligned) {
    const EwLayout l0 = make_layout(shape, s0, ndim);
    const EwLayout l1 = make_layout(shape, s1, ndim);
    const EwLayout l2 = make_layout(shape, s2, ndim);
    typedef unsigned char u8;
    switch (family * 10 + dt) {
        case 0: run<1, float, float, float, float>(contig, nth, out, i0, i0, i0, l0, l0, l0, n, aligned,
                                                   EwUnaryFloatF{op, (float)a, (float)b}); return 0;
        case 1: run<1, __half, __half, __half, __half>(contig, nth, out, i0, i0, i0, l0, l0, l0, n, aligned,
                                                       EwUnaryFloatF{op, (float)a, (float)b}); return 0;
        case 2: run<1, long long, long long, long long, long long>(contig, nth, out, i0, i0, i0, l0, l0, l0, n,
                    aligned, EwUnaryIntF<long long>{op, ia, ib}); return 0;
        case 3: run<1, int, int, int, int>(contig, nth, out, i0, i0, i0, l0, l0, l0, n, aligned,
                                           EwUnaryIntF<int>{op, (int)ia, (int)ib}); return 0;
        case 10: run<2, float, float, float, float>(contig, nth, out, i0, i1, i0, l0, l1, l0, n, aligned,
                                                    EwBinaryFloatF{op}); return 0;
        case 11: run<2, __half, __half, __half, __half>(contig, nth, out, i0, i1, i0, l0, l1, l0, n, aligned,
                                                        EwBinaryFloatF{op}); return 0;
        case 12: run<2, long long, long long, long long, long long>(contig, nth, out, i0, i1, i0, l0, l1, l0, n,
                     aligned, EwBinaryIntF<long long>{op}); return 0;
        case 13: run<2, int, int, int, int>(contig, nth, out, i0, i1, i0, l0, l1, l0, n, aligned,
                                            EwBinaryIntF<int>{op}); return 0;
        case 20: run<2, u8, float, float, float>(contig, nth, out, i0, i1, i0, l0, l1, l0, n, aligned,
                                                 EwCompareF<float>{op}); return 0;
        case 21: run<2, u8, __half, __half, __half>(contig, nth, out, i0, i1, i0, l0, l1, l0, n, aligned,
                                                    EwCompareF<float>{op}); return 0;
        case 22: run<2, u8, long long, long long, long long>(contig, nth, out, i0, i1, i0, l0, l1, l0, n, aligned,
                                                             EwCompareF<long long>{op}); return 0;
        case 23: run<2, u8, int, int, int>(contig, nth, out, i0, i1, i0, l0, l1, l0, n, aligned,
                                           EwCompareF<int>{op}); return 0;
        case 24: run<2, u8, u8, u8, u8>(contig, nth, out, i0, i1, i0, l0, l1, l0, n, aligned,
                                        EwCompareF<u8>{op}); return 0;
        case 30: run<1, u8, float, float, float>(contig, nth, out, i0, i0, i0, l0, l0, l0, n, aligned,
                                                 EwPredicateF<float>{op}); return 0;
        case 31: run<1, u8, __half, __half, __half>(contig, nth, out, i0, i0, i0, l0, l0, l0, n, aligned,
                                                    EwPredicateF<float>{op}); return 0;
        case 32: run<1, u8, long long, long long, long long>(contig, nth, out, i0, i0, i0, l0, l0, l0, n, aligned,
                                                             EwPredicateF<long long>{op}); return 0;
        case 33: run<1, u8, int, int, int>(contig, nth, out, i0, i0, i0, l0, l0, l0, n, aligned,
                                           EwPredicateF<int>{op}); return 0;
        case 34: run<1, u8, u8, u8, u8>(contig, nth, out, i0, i0, i0, l0, l0, l0, n, aligned,
                                        EwPredicateF<u8>{op}); return 0;
        case 40: run<3, float, u8, float, float>(contig, nth, out, i0, i1, i2, l0, l1, l2, n, aligned,
                                                 EwWhereF<float>{}); return 0;
        case 41: run<3, __half, u8, __half, __half>(contig, nth, out, i0, i1, i2, l0, l1, l2, n, aligned,
                                                    EwWhereF<__half>{}); return 0;
        case 42: run<3, long long, u8, long long, long long>(contig, nth, out, i0, i1, i2, l0, l1, l2, n, aligned,
                                                             EwWhereF<long long>{}); return 0;
        case 43: run<3, int, u8, int, int>(contig, nth, out, i0, i1, i2, l0, l1, l2, n, aligned,
                                           EwWhereF<int>{}); return 0;
        case 44: run<3, u8, u8, u8, u8>(contig, nth, out, i0, i1, i2, l0, l1, l2, n, aligned,
                                        EwWhereF<u8>{}); return 0;
        default: return -1;
    }
}

// The op-code constants, for checking the Python-readable tables in elementwise.cuh.
extern "C" int emu_sizeof_layout() { return (int)sizeof(EwLayout); }

// ew_offsets<3> for one linear index: the element offsets of three operands sharing `shape`.
extern "C" void emu_offsets(const long long* shape, const long long* s0, const long long* s1, const long long* s2,
                            int ndim, long long i, long long* out3) {
    const EwLayout l0 = make_layout(shape, s0, ndim);
    const EwLayout l1 = make_layout(shape, s1, ndim);
    const EwLayout l2 = make_layout(shape, s2, ndim);
    ew_offsets<3>(i, l0, l1, l2, out3[0], out3[1], out3[2]);
}
