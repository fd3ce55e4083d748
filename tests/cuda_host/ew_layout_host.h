// Building an EwLayout (kernel_src/elementwise.cuh) from the shape and strides ctypes passes in, for the
// elementwise and copy_cast host harnesses. Unused dimensions get extent 1 and stride 0.
#pragma once

#include "elementwise.cuh"

inline EwLayout make_layout(const long long* shape, const long long* stride, int ndim) {
    EwLayout l{};
    for (int d = 0; d < 8; ++d) {
        l.shape[d] = d < ndim ? shape[d] : 1;
        l.stride[d] = d < ndim ? stride[d] : 0;
    }
    l.ndim = ndim;
    return l;
}
