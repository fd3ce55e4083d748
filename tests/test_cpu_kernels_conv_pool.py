"""The compiled CPU kernels of convolution, pooling and the activations (``kernel_src/cpu/conv.c``,
``conv_direct.c``, ``pool.c``, ``activation.c``) against the NumPy code they replace (the reference) and against
PyTorch (the oracle): im2col and col2im, the direct stride-1 convolution, max-pooling's values, indices and
gradients, relu and the backward of relu / tanh / sigmoid, and the dropout mask. Also the parallel first build of
all the sources."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like.backends import cpu_kernels, numpy_nn
from tinygrad_like.backends.numpy_backend import NumpyBackend
from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives as P

torch = pytest.importorskip("torch")

if not cpu_kernels.available():
    if os.environ.get("CI") == "true":
        pytest.fail("no C compiler: CI must build the compiled CPU kernels", pytrace=False)
    pytest.skip("no C compiler here: the compiled CPU kernels cannot be built", allow_module_level=True)

DTYPES = [np.float32, np.float64]


def _both(fn):
    """(fn() with the compiled kernels, the compiled kernel the last primitive reported, fn() with NumPy's code)."""
    cpu_kernels.LAUNCHED[0] = None
    ours = fn()
    ran = cpu_kernels.LAUNCHED[0]
    cpu_kernels.enable(False)
    try:
        ref = fn()
    finally:
        cpu_kernels.enable(True)
    return ours, ran, ref


def _bits_equal(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


# ---- im2col / col2im (conv.c) ----------------------------------------------------------------------------------
# (input shape, kernel, stride, padding, dilation): strided, padded, dilated, rectangular, 1x1, and one whose window
# reaches past the padding. A stride-1 convolution with little padding takes NumPy's "wide" columns instead (no
# compiled kernel: NumPy builds those at memory speed), so those cases check that conv2d still agrees; with rows of
# 8 pixels or more and few taps it is a direct convolution (DIRECT_CASES below).
CONV_CASES = [
    ((2, 3, 9, 9), (3, 3), (2, 2), (1, 1), (1, 1)),
    ((2, 3, 7, 9), (3, 2), (2, 1), (0, 2), (1, 2)),
    ((1, 2, 8, 8), (3, 3), (2, 2), (1, 1), (2, 2)),
    ((3, 4, 5, 6), (5, 5), (1, 1), (2, 2), (1, 1)),
    ((2, 2, 9, 9), (2, 3), (3, 2), (1, 0), (1, 1)),
    ((2, 3, 6, 6), (3, 3), (1, 1), (0, 0), (3, 3)),
    ((2, 2, 7, 7), (3, 3), (3, 3), (3, 3), (1, 1)),
    ((2, 4, 6, 5), (1, 1), (2, 2), (0, 0), (1, 1)),
    ((2, 3, 7, 6), (3, 3), (1, 1), (1, 1), (1, 1)),  # (rows of 6: too narrow for conv_direct.c, below)
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,kernel,stride,padding,dilation", CONV_CASES)
def test_im2col_and_col2im_equal_numpys_bit_for_bit(dtype, shape, kernel, stride, padding, dilation):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    x[0, 0, 0, :2] = [-0.0, np.nan]
    cols, ran, ref = _both(lambda: P.im2col(x, kernel, stride, padding, dilation))
    assert ran == "im2col" and _bits_equal(cols, ref)
    back, ran, ref = _both(lambda: P.col2im(cols * 1.5, shape, kernel, stride, padding, dilation))
    assert ran == ("col2im" if cols.size else None) and _bits_equal(back, ref)  # (no windows: NumPy)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,kernel,stride,padding,dilation", CONV_CASES)
def test_conv2d_and_its_backward_equal_numpys_bit_for_bit(dtype, shape, kernel, stride, padding, dilation):
    rng = np.random.default_rng(len(shape) + sum(kernel))
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((4, shape[1], *kernel)).astype(dtype)
    b = rng.standard_normal(4).astype(dtype)
    (out, cols), ran, (ref, ref_cols) = _both(lambda: P.conv2d(x, w, b, stride, padding, dilation))
    wide = numpy_nn._wide_geometry(shape, kernel, stride, padding, dilation) is not None
    assert ran == (None if wide or not out.size else "im2col+gemm")
    assert _bits_equal(out, ref) and _bits_equal(cols, ref_cols)
    g = rng.standard_normal(out.shape).astype(dtype)
    grads, ran, ref = _both(lambda: P.conv2d_backward(g, cols, w, shape, stride, padding, dilation, True, True, True))
    assert ran == (None if wide or not out.size else "gemm+col2im")
    assert all(_bits_equal(a, r) for a, r in zip(grads, ref, strict=True))


def test_a_strided_convolution_through_the_api_matches_torch():
    rng = np.random.default_rng(5)
    xs, ws = rng.standard_normal((3, 4, 11, 10)), rng.standard_normal((6, 4, 3, 3))
    x, w = tl.tensor(xs, requires_grad=True), tl.tensor(ws, requires_grad=True)
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    y = tl.nn.functional.conv2d(x, w, stride=2, padding=1, dilation=(1, 2))
    ty = torch.nn.functional.conv2d(tx, tw, stride=2, padding=1, dilation=(1, 2))
    g = rng.standard_normal(ty.shape)
    y.backward(tl.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12, atol=1e-12)


# ---- the direct stride-1 convolution (conv_direct.c) -------------------------------------------------------------
# (input shape, output channels, kernel, padding): the CNN benchmark's two convolutions, a 5x5 and a rectangular
# kernel, no padding, one channel in, output channels not a multiple of 4, rows of 8 and of 33 pixels.
DIRECT_CASES = [
    ((3, 1, 28, 28), 8, (3, 3), (1, 1)),
    ((3, 8, 14, 14), 16, (3, 3), (1, 1)),
    ((2, 3, 9, 20), 5, (5, 5), (2, 2)),
    ((2, 2, 12, 10), 3, (3, 3), (0, 0)),
    ((2, 3, 10, 13), 6, (3, 5), (1, 2)),
    ((1, 4, 6, 33), 7, (1, 1), (0, 0)),
]


def _abs_conv(x, w, padding):
    """sum |w| |x| of every output, in float64: what bounds a sum's rounding, whatever its order."""
    cpu_kernels.enable(False)
    try:
        return P.conv2d(np.abs(x).astype(np.float64), np.abs(w).astype(np.float64), None, (1, 1), padding,
                        (1, 1))[0]
    finally:
        cpu_kernels.enable(True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,oc,kernel,padding", DIRECT_CASES)
def test_the_direct_convolution_matches_the_gemm_within_its_sum_order(dtype, shape, oc, kernel, padding):
    """Forward and the input's gradient from conv_direct.c against im2col + BLAS (NumPy's code): each output sums
    the same C*KH*KW products in another order, so they agree within taps * eps of sum |w| |x|; the weight's and
    the bias's gradients are the same BLAS products, bit for bit."""
    rng = np.random.default_rng(sum(shape) + oc)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((oc, shape[1], *kernel)).astype(dtype)
    b = rng.standard_normal(oc).astype(dtype)
    taps, eps = shape[1] * kernel[0] * kernel[1], np.finfo(dtype).eps
    (out, cols), ran, (ref, ref_cols) = _both(lambda: P.conv2d(x, w, b, (1, 1), padding, (1, 1)))
    assert ran == "conv_direct" and out.shape == ref.shape and out.dtype == ref.dtype
    assert np.all(np.abs(out - ref) <= taps * eps * (_abs_conv(x, w, padding) + np.abs(b)[:, None, None]))
    g = rng.standard_normal(out.shape).astype(dtype)
    (gx, gw, gb), ran, (rgx, rgw, rgb) = _both(
        lambda: P.conv2d_backward(g, cols, w, shape, (1, 1), padding, (1, 1), True, True, True))
    # the input's gradient is a convolution with C output channels and OC*KH*KW taps: direct within the same bounds
    assert ran == ("conv_direct" if 3 <= shape[1] <= 32 and oc * kernel[0] * kernel[1] <= 288 else None)
    flipped = w.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1]
    gx_bound = oc * kernel[0] * kernel[1] * eps * _abs_conv(g, flipped, (kernel[0] - 1 - padding[0],
                                                                         kernel[1] - 1 - padding[1]))
    assert gx.shape == shape and np.all(np.abs(gx - rgx) <= gx_bound)
    assert _bits_equal(gw, rgw) and _bits_equal(gb, rgb)


def test_the_direct_convolution_through_the_api_matches_torch():
    rng = np.random.default_rng(6)
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        xs, ws, bs = (rng.standard_normal(s).astype(dtype) for s in ((4, 3, 12, 17), (10, 3, 3, 3), (10,)))
        x, w, b = (tl.tensor(a, requires_grad=True) for a in (xs, ws, bs))
        tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (xs, ws, bs))
        got: list = []
        unsubscribe = tl.events.subscribe(
            lambda e, got=got: got.append(e.name) if isinstance(e, tl.events.KernelTimed) else 0)
        try:
            y = tl.nn.functional.conv2d(x, w, b, padding=1)
            g = rng.standard_normal(y.shape).astype(dtype)
            y.backward(tl.tensor(g))
        finally:
            unsubscribe()
        ty = torch.nn.functional.conv2d(tx, tw, tb, padding=1)
        ty.backward(torch.tensor(g))
        assert got.count("conv_direct") == 2  # the forward and the input's gradient
        for ours, theirs in ((y, ty), (x.grad, tx.grad), (w.grad, tw.grad), (b.grad, tb.grad)):
            scale = np.abs(theirs.detach().numpy()).max()
            np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol * scale)


def test_which_convolutions_run_direct():
    """Stride and dilation 1, rows of 8 pixels or more, 3 to 32 output channels and at most 288 taps per output
    (C*KH*KW), in float32/64."""
    def ran(shape, oc, k, stride=(1, 1), dilation=(1, 1), dtype=np.float32):
        x, w = np.ones(shape, dtype), np.ones((oc, shape[1], k, k), dtype)
        cpu_kernels.LAUNCHED[0] = None
        P.conv2d(x, w, None, stride, (1, 1), dilation)
        return cpu_kernels.LAUNCHED[0]

    assert ran((2, 32, 10, 10), 8, 3) == "conv_direct"  # 288 taps
    assert ran((2, 33, 10, 10), 8, 3) is None  # 297: the wide columns and BLAS
    assert ran((2, 3, 10, 10), 8, 3, stride=(2, 2)) == "im2col+gemm"
    assert ran((2, 3, 10, 10), 8, 3, dilation=(2, 2)) is None
    assert ran((2, 3, 10, 5), 8, 3) is None  # rows of 3 pixels
    assert ran((2, 3, 10, 10), 8, 3, dtype=np.float16) is None
    assert ran((2, 3, 10, 10), 2, 3) is None and ran((2, 3, 10, 10), 3, 3) == "conv_direct"
    assert ran((2, 3, 10, 10), 32, 3) == "conv_direct" and ran((2, 3, 10, 10), 33, 3) is None


def test_an_infinite_weight_gives_the_gemms_gradient():
    """inf times the padding's zeros is a NaN: the input's gradient of an infinite weight stays on the GEMM, whose
    columns only hold the real outputs."""
    rng = np.random.default_rng(7)
    x, g = rng.standard_normal((2, 3, 9, 11)).astype(np.float32), rng.standard_normal((2, 4, 9, 11)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    w[1, 2, 0, 0] = np.inf
    (_, cols), _, _ = _both(lambda: P.conv2d(x, w, None, (1, 1), (1, 1), (1, 1)))
    (gx, _, _), ran, (rgx, _, _) = _both(lambda: P.conv2d_backward(g, cols, w, x.shape, (1, 1), (1, 1), (1, 1), True,
                                                                   False, False))
    assert ran != "conv_direct" and _bits_equal(gx, rgx)


def test_second_derivatives_of_a_direct_convolution():
    x = tl.randn(2, 3, 6, 10, dtype=tl.float64, requires_grad=True)
    w = tl.randn(4, 3, 3, 3, dtype=tl.float64, requires_grad=True)
    got: list = []
    unsubscribe = tl.events.subscribe(lambda e: got.append(e.name) if isinstance(e, tl.events.KernelTimed) else 0)
    try:
        assert tl.autograd.gradgradcheck(lambda x, w: tl.nn.functional.conv2d(x, w, padding=1), (x, w))
    finally:
        unsubscribe()
    assert got.count("conv_direct") >= 10  # (the forwards and the input's gradients inside the check)


@pytest.mark.parametrize("case", ["padding past the kernel", "strided input", "empty batch"])
def test_direct_convolution_edge_cases_match_torch(case):
    rng = np.random.default_rng(8)
    xs, ws = rng.standard_normal((3, 4, 9, 12)), rng.standard_normal((5, 4, 3, 3))
    padding = 1
    if case == "padding past the kernel":  # (its input's gradient is no direct convolution: -1 padding)
        padding = 3
    elif case == "strided input":
        xs = rng.standard_normal((3, 4, 9, 24))[..., ::2]
    else:
        xs = xs[:0]
    x, w = tl.tensor(xs, requires_grad=True), tl.tensor(ws, requires_grad=True)
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    y, ty = tl.nn.functional.conv2d(x, w, padding=padding), torch.nn.functional.conv2d(tx, tw, padding=padding)
    g = rng.standard_normal(ty.shape)
    y.backward(tl.tensor(g))
    ty.backward(torch.tensor(g))
    for ours, theirs in ((y, ty), (x.grad, tx.grad), (w.grad, tw.grad)):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_non_contiguous_or_integer_inputs_leave_im2col_to_numpy():
    x = np.arange(2 * 3 * 8 * 8, dtype=np.float32).reshape(2, 3, 8, 8)
    cols, ran, ref = _both(lambda: P.im2col(x[..., ::2], (3, 3), (2, 2), (1, 1), (1, 1)))
    assert ran is None and _bits_equal(cols, ref)
    cols, ran, ref = _both(lambda: P.im2col(x.astype(np.int64), (3, 3), (2, 2), (1, 1), (1, 1)))
    assert ran is None and _bits_equal(cols, ref)


# ---- max-pooling (pool.c) ------------------------------------------------------------------------------------------
POOL_CASES = [  # (input shape, kernel, stride, padding, dilation)
    ((2, 3, 8, 8), (2, 2), (2, 2), (0, 0), (1, 1)),       # the 2x2 "pairs" path of NumPy's forward
    ((2, 3, 9, 7), (2, 2), (2, 2), (0, 0), (1, 1)),       # odd sizes
    ((2, 3, 9, 9), (3, 3), (2, 2), (1, 1), (1, 1)),       # overlapping windows beside padding
    ((2, 2, 70, 70), (3, 3), (2, 2), (1, 1), (1, 1)),     # wide rows: the compiled forward
    ((1, 2, 66, 80), (3, 2), (3, 2), (1, 1), (2, 1)),     # dilated, rectangular, wide
    ((2, 2, 10, 10), (3, 3), (1, 1), (1, 1), (1, 1)),     # stride 1: every pixel in up to 9 windows
]


def _pool_input(shape, dtype, special: bool):
    x = np.random.default_rng(shape[-1]).standard_normal(shape).astype(dtype)
    if special:  # NaN (the last NaN of a window wins), a plane of -inf (the first in-bounds tap), signed zeros
        x[..., ::3, ::2] = np.nan
        x[0, 0] = -np.inf
        x[-1, ..., 1::4, :] = 0.0
        x[-1, ..., 2::4, :] = -0.0
    return x


def _pool_ran_compiled(x, geometry) -> bool:
    cpu_kernels.LAUNCHED[0] = None
    P.max_pool2d(x, *geometry)
    return cpu_kernels.LAUNCHED[0] == "max_pool2d_fwd"


def _pool_all(x, g, geometry):
    out, state = P.max_pool2d(x, *geometry)
    gx = P.max_pool2d_backward(g, x, out, state, *geometry)
    return out, P.max_pool2d_indices(x, out, *geometry), gx


@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,kernel,stride,padding,dilation", POOL_CASES)
def test_max_pool_equals_torch_bit_for_bit_and_numpy_within_its_sum_order(shape, kernel, stride, padding, dilation,
                                                                           dtype, special):
    geometry = (kernel, stride, padding, dilation)
    x = _pool_input(shape, dtype, special)
    g = np.random.default_rng(1).standard_normal(P.max_pool2d(x, *geometry)[0].shape).astype(dtype)
    (out, idx, gx), _, (r_out, r_idx, r_gx) = _both(lambda: _pool_all(x, g, geometry))
    tx = torch.tensor(x, requires_grad=True)
    t_out, t_idx = torch.nn.functional.max_pool2d(tx, kernel, stride, padding, dilation, return_indices=True)
    t_out.backward(torch.tensor(g))
    # against torch: the same values, indices and gradients, bit for bit (its loop adds overlaps window by window).
    # The values only up to the sign of a zero: where NumPy's running maximum computes them (narrow rows) a window
    # of -0.0 and 0.0 may give -0.0, where torch's first maximum is 0.0.
    assert np.array_equal(out, t_out.detach().numpy(), equal_nan=True) and np.array_equal(idx, t_idx.numpy())
    if _pool_ran_compiled(x, geometry):
        assert _bits_equal(out, t_out.detach().numpy())
    assert _bits_equal(gx, tx.grad.numpy())
    # against NumPy: the same values and indices; the gradient of overlapping windows sums in another order
    assert np.array_equal(out, r_out, equal_nan=True) and np.array_equal(idx, r_idx)
    disjoint = all(s >= d * (k - 1) + 1 for s, d, k in zip(stride, dilation, kernel))
    if disjoint:
        assert np.array_equal(gx, r_gx)
    else:  # (a pixel in at most 9 windows: a sum of 9 terms in another order, within 8 ulp of its magnitude)
        bound = 8 * np.finfo(dtype).eps * np.abs(g).max() * 9
        np.testing.assert_allclose(gx, r_gx, rtol=0, atol=bound)


def test_the_pool_kernels_the_timeline_shows():
    x = np.random.default_rng(0).standard_normal((2, 3, 70, 70)).astype(np.float32)
    (out, state), ran, _ = _both(lambda: P.max_pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1)))
    assert ran == "max_pool2d_fwd" and state.dtype == np.int32
    _, ran, _ = _both(lambda: P.max_pool2d_backward(np.ones_like(out), x, out, state, (3, 3), (2, 2), (1, 1), (1, 1)))
    assert ran == "max_pool2d_bwd"
    small = x[:, :, :8, :8].copy()
    (out, state), ran, _ = _both(lambda: P.max_pool2d(small, (2, 2), (2, 2), (0, 0), (1, 1)))
    assert ran is None and isinstance(state, tuple)  # (NumPy's pairs forward measured faster on these rows)
    _, ran, _ = _both(lambda: P.max_pool2d_backward(np.ones_like(out), small, out, state, (2, 2), (2, 2), (0, 0),
                                                    (1, 1)))
    assert ran == "max_pool2x2_bwd"


def test_a_pool_state_from_compiled_kernels_still_backs_up_after_they_are_turned_off():
    x = np.random.default_rng(0).standard_normal((1, 2, 70, 70))
    geometry = ((3, 3), (2, 2), (1, 1), (1, 1))
    out, state = P.max_pool2d(x, *geometry)
    g = np.ones_like(out)
    ours = P.max_pool2d_backward(g, x, out, state, *geometry)
    cpu_kernels.enable(False)
    try:
        ref = P.max_pool2d_backward(g, x, out, state, *geometry)
    finally:
        cpu_kernels.enable(True)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-15)


# ---- relu, the activations' backward, the dropout mask (activation.c) --------------------------------------------
def _activation_inputs(dtype, n: int = 40_000):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(dtype)
    x[::7], x[1::7], x[2::7], x[3::7] = np.nan, -0.0, np.inf, -np.inf
    g = rng.standard_normal(n).astype(dtype)
    g[::5], g[1::5], g[2::5] = np.inf, np.nan, -0.0
    return x, g


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_and_the_activation_backwards_equal_numpys_bit_for_bit(dtype):
    x, g = _activation_inputs(dtype)
    y_tanh = np.tanh(x)
    with np.errstate(over="ignore"):
        y_sig = 1 / (1 + np.exp(-x))
    for name, fn in [("relu_fwd", lambda: numpy_nn.relu(x)),
                     ("relu_bwd", lambda: NumpyBackend.relu_backward(g, numpy_nn.relu(x))),
                     ("tanh_bwd", lambda: NumpyBackend.tanh_backward(g, y_tanh)),
                     ("sigmoid_bwd", lambda: NumpyBackend.sigmoid_backward(g, y_sig))]:
        ours, ran, ref = _both(fn)
        assert ran == name and _bits_equal(ours, ref), name


def test_relu_and_its_backward_match_torch_on_special_values():
    """(Up to the sign of zero in forward: torch.relu(-0.0) is -0.0, NumPy's maximum and our kernel give 0.0.)"""
    x, g = _activation_inputs(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.relu(tx)
    ty.backward(torch.tensor(g))
    y = tl.tensor(x, requires_grad=True)
    out = y.relu()
    out.backward(tl.tensor(g))
    assert np.array_equal(out.detach().numpy(), ty.detach().numpy(), equal_nan=True)
    assert _bits_equal(y.grad.numpy(), tx.grad.numpy())


def test_small_or_strided_activation_arrays_run_numpy():
    x, g = _activation_inputs(np.float32, n=1000)
    ours, ran, ref = _both(lambda: NumpyBackend.tanh_backward(g, x))
    assert ran is None and _bits_equal(ours, ref)
    x, g = _activation_inputs(np.float32)
    ours, ran, ref = _both(lambda: NumpyBackend.sigmoid_backward(g[::2], x[::2]))
    assert ran is None and _bits_equal(ours, ref)


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_the_dropout_mask_equals_numpys_from_the_same_draws(dtype, p):
    def mask():
        return P.dropout_mask(tl.Generator().manual_seed(7), (300, 211), p, dtype)

    ours, ran, ref = _both(mask)
    assert ran == "dropout_mask" and _bits_equal(ours, ref)
    kept = (ours != 0).mean()
    assert abs(kept - (1 - p)) < 0.02 and np.all(ours[ours != 0] == np.asarray(1 / (1 - p), ours.dtype))


# ---- building: every source at once ------------------------------------------------------------------------------
def test_the_first_build_compiles_the_sources_in_parallel(tmp_path, monkeypatch):
    monkeypatch.setenv("TL_CPU_KERNEL_CACHE", str(tmp_path))
    t0 = time.perf_counter()
    built = cpu_kernels.compile_all()
    wall = time.perf_counter() - t0
    sources = {src for src, _ in cpu_kernels.SIGNATURES.values()  # (the chains' generated sources: on first use)
               if not src.endswith("_test.c") and src not in cpu_kernels._generated}
    assert set(built) == sources and "vmath_test.c" not in built  # (the tests' own kernels are built on request)
    assert all(isinstance(r, tuple) and not r[1] and r[0].exists() for r in built.values())
    again = cpu_kernels.compile_all()
    assert all(r[1] for r in again.values())  # now all in the cache
    if (os.cpu_count() or 1) > 1:  # (the builds overlapped: less wall time than the sum of their own times)
        assert wall < sum(r[2] for r in built.values())
