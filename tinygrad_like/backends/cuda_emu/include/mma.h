// mma.h -- stand-in for CUDA's <mma.h> (nvcuda::wmma) in the CPU emulator (found before the toolkit's
// header on the include path).
//
// Each lane holds the WHOLE tile of a fragment (num_elements = rows * cols, x[] in logical row-major order),
// so every lane of a warp loads, multiplies and stores the same values: redundant, but a correct model of
// the warp-collective operations (the real per-lane element mapping is unspecified by CUDA, and code that
// touches frag.x[i] for i < num_elements elementwise behaves the same under both). Products are summed in
// float (double rounding aside, like the hardware's f32 accumulation; the hardware's summation order within
// a 16-wide k step is not reproduced bit for bit).

#pragma once

#include <cuda_fp16.h>

namespace nvcuda {
namespace wmma {

struct row_major;
struct col_major;
struct matrix_a;
struct matrix_b;
struct accumulator;

enum layout_t { mem_row_major, mem_col_major };

namespace detail {
template <typename Use, int M, int N, int K> struct shape;
template <int M, int N, int K> struct shape<matrix_a, M, N, K> { static constexpr int rows = M, cols = K; };
template <int M, int N, int K> struct shape<matrix_b, M, N, K> { static constexpr int rows = K, cols = N; };
template <int M, int N, int K> struct shape<accumulator, M, N, K> { static constexpr int rows = M, cols = N; };

inline float to_f(float v) { return v; }
inline float to_f(__half v) { return __half2float(v); }
inline float to_f(double v) { return (float)v; }
template <typename T> inline T from_f(float v) { return (T)v; }
template <> inline __half from_f<__half>(float v) { return __float2half_rn(v); }

template <typename Layout> struct is_col { static constexpr bool value = false; };
template <> struct is_col<col_major> { static constexpr bool value = true; };
}  // namespace detail

template <typename Use, int m, int n, int k, typename T, typename Layout = void>
class fragment {
public:
    static constexpr int rows = detail::shape<Use, m, n, k>::rows;
    static constexpr int cols = detail::shape<Use, m, n, k>::cols;
    static constexpr int num_elements = rows * cols;
    typedef T element_type;
    typedef T storage_element_type;
    T x[num_elements];
};

template <typename Use, int m, int n, int k, typename T, typename Layout, typename U>
inline void fill_fragment(fragment<Use, m, n, k, T, Layout>& f, const U& v) {
    const T t = detail::from_f<T>(detail::to_f(v));
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = t;
}

// matrix_a / matrix_b: the layout is the fragment's; ldm in elements.
template <typename Use, int m, int n, int k, typename T, typename Layout>
inline void load_matrix_sync(fragment<Use, m, n, k, T, Layout>& f, const T* p, unsigned ldm) {
    typedef fragment<Use, m, n, k, T, Layout> F;
    for (int r = 0; r < F::rows; ++r)
        for (int c = 0; c < F::cols; ++c)
            f.x[r * F::cols + c] = detail::is_col<Layout>::value ? p[(size_t)c * ldm + r] : p[(size_t)r * ldm + c];
}

// accumulator: the memory layout is an argument.
template <int m, int n, int k, typename T>
inline void load_matrix_sync(fragment<accumulator, m, n, k, T, void>& f, const T* p, unsigned ldm, layout_t layout) {
    for (int r = 0; r < m; ++r)
        for (int c = 0; c < n; ++c)
            f.x[r * n + c] = layout == mem_col_major ? p[(size_t)c * ldm + r] : p[(size_t)r * ldm + c];
}

template <int m, int n, int k, typename T>
inline void store_matrix_sync(T* p, const fragment<accumulator, m, n, k, T, void>& f, unsigned ldm, layout_t layout) {
    for (int r = 0; r < m; ++r)
        for (int c = 0; c < n; ++c) {
            if (layout == mem_col_major) p[(size_t)c * ldm + r] = f.x[r * n + c];
            else p[(size_t)r * ldm + c] = f.x[r * n + c];
        }
}

// d = a @ b + c (d may be c)
template <int m, int n, int k, typename TA, typename LA, typename TB, typename LB, typename TC, typename TD>
inline void mma_sync(fragment<accumulator, m, n, k, TD, void>& d, const fragment<matrix_a, m, n, k, TA, LA>& a,
                     const fragment<matrix_b, m, n, k, TB, LB>& b, const fragment<accumulator, m, n, k, TC, void>& c,
                     bool satf = false) {
    float fa[m * k], fb[k * n], acc[m * n];
    for (int i = 0; i < m * k; ++i) fa[i] = detail::to_f(a.x[i]);
    for (int i = 0; i < k * n; ++i) fb[i] = detail::to_f(b.x[i]);
    for (int i = 0; i < m * n; ++i) acc[i] = detail::to_f(c.x[i]);
    for (int i = 0; i < m; ++i)
        for (int kk = 0; kk < k; ++kk) {
            const float av = fa[i * k + kk];
            for (int j = 0; j < n; ++j) acc[i * n + j] += av * fb[kk * n + j];
        }
    for (int i = 0; i < m * n; ++i) {
        float v = acc[i];
        if (satf) {  // infinities to the largest finite value of TD, NaN to 0
            const float big = sizeof(TD) == 2 ? 65504.0f : 3.402823466e38f;
            v = v != v ? 0.0f : (v > big ? big : (v < -big ? -big : v));
        }
        d.x[i] = detail::from_f<TD>(v);
    }
}

}  // namespace wmma
}  // namespace nvcuda
