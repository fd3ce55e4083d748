/* The functions of vmath.h over arrays, for their accuracy tests (tests/test_cpu_kernels.py). */
#include "vmath.h"

#define TL_MAP(NAME, T, F) \
    void NAME(long n, const T *restrict x, T *restrict y) { for (long i = 0; i < n; i++) y[i] = F(x[i]); }

TL_MAP(vexp_f32, float, tl_exp_f32)
TL_MAP(vtanh_f32, float, tl_tanh_f32)
TL_MAP(vsigmoid_f32, float, tl_sigmoid_f32)
TL_MAP(vexp_f64, double, tl_exp_f64)
TL_MAP(vtanh_f64, double, tl_tanh_f64)
TL_MAP(vsigmoid_f64, double, tl_sigmoid_f64)
TL_MAP(vlog_f32, float, tl_log_f32)
TL_MAP(vlog1p_f32, float, tl_log1p_f32)
TL_MAP(vsoftplus_f32, float, tl_softplus_f32)
TL_MAP(vlog_f64, double, tl_log_f64)
TL_MAP(vlog1p_f64, double, tl_log1p_f64)
TL_MAP(vsoftplus_f64, double, tl_softplus_f64)
