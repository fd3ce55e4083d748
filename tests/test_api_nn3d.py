"""The 3-D layers against torch: ``ConvTranspose3d``, ``MaxPool3d``, ``AvgPool3d``, ``AdaptiveAvgPool3d``,
``AdaptiveMaxPool3d``, ``MaxUnpool3d`` and ``Upsample`` on 5-D inputs.

Each module is built in both libraries with torch's ``state_dict`` loaded into ours; outputs (indices included) and
the gradients of the input and of every parameter must agree in float32 and float64, batched and unbatched, with
plain and create_graph backward. Then reprs, ``output_size=``, integer inputs, ties and NaNs (the winner torch
picks), torch's errors, finite-difference gradchecks and second derivatives.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close

import tinygrad_like as tl

torch = pytest.importorskip("torch")

from test_api_nn_conv import DTYPES, TOL, _ids, _raise_same, both, rand, run_both  # noqa: E402 - needs torch

tnn, tF = torch.nn, torch.nn.functional
nn, F = tl.nn, tl.nn.functional


# ---- transposed convolution ---------------------------------------------------------------------------
CONVT3D = [
    dict(in_channels=3, out_channels=2, kernel_size=3),
    dict(in_channels=2, out_channels=3, kernel_size=3, stride=2, padding=1, output_padding=1),
    dict(in_channels=4, out_channels=6, kernel_size=(2, 3, 1), stride=(2, 1, 3), groups=2, bias=False,
         output_padding=(1, 0, 2)),
    dict(in_channels=4, out_channels=4, kernel_size=2, stride=3, padding=(1, 0, 1), groups=4, dilation=2,
         output_padding=(2, 1, 1)),
    dict(in_channels=2, out_channels=2, kernel_size=3, dilation=(3, 1, 2), output_padding=(2, 0, 1)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", CONVT3D, ids=_ids)
def test_conv_transpose3d(backward_mode, kw, dtype):
    ours, theirs = both("ConvTranspose3d", dtype=dtype, **kw)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, rand(2, kw["in_channels"], 3, 4, 3, dtype=dtype))
    ours.zero_grad()
    theirs.zero_grad()
    run_both(ours, theirs, rand(kw["in_channels"], 2, 3, 4, seed=5, dtype=dtype))  # unbatched


def test_conv_transpose3d_output_size_and_state_dict():
    ours, theirs = both("ConvTranspose3d", 2, 3, 3, stride=2, padding=1)
    assert list(ours.state_dict()) == ["weight", "bias"] and ours.weight.shape == (2, 3, 3, 3, 3)
    x = rand(1, 2, 3, 4, 5)
    for size in ([5, 8, 9], [6, 7, 10], (1, 3, 6, 8, 10)):
        run_both(ours, theirs, x, output_size=size)
        ours.zero_grad()
        theirs.zero_grad()
    with pytest.raises(ValueError, match=r"requested an output size of \[7, 7, 9\], but valid sizes range from "
                                         r"\[5, 7, 9\] to \[6, 8, 10\]"):
        ours(tl.tensor(x), output_size=[7, 7, 9])


def test_conv_transpose3d_gradcheck_and_second_order():
    rng = np.random.default_rng(0)
    x = tl.tensor(rng.standard_normal((1, 4, 2, 3, 2)), requires_grad=True)
    w = tl.tensor(rng.standard_normal((4, 1, 2, 2, 3)), requires_grad=True)
    b = tl.tensor(rng.standard_normal(2), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w, b: F.conv_transpose3d(x, w, b, stride=(2, 1, 2), padding=(0, 1, 1),
                                                                     groups=2, output_padding=(1, 0, 1)), (x, w, b))
    xa, wa = rng.standard_normal((2, 4, 3, 3, 2)), rng.standard_normal((4, 3, 2, 2, 2))
    a, aw = tl.tensor(xa, requires_grad=True), tl.tensor(wa, requires_grad=True)
    t, tw = torch.tensor(xa, requires_grad=True), torch.tensor(wa, requires_grad=True)
    ga, = tl.autograd.grad(F.conv_transpose3d(a, aw, stride=2).pow(2).sum(), [a], create_graph=True)
    gt, = torch.autograd.grad(tF.conv_transpose3d(t, tw, stride=2).pow(2).sum(), [t], create_graph=True)
    assert_close(ga, gt, atol=1e-10, rtol=1e-10)
    ga.pow(2).sum().backward()
    gt.pow(2).sum().backward()
    assert_close(aw.grad, tw.grad, atol=1e-9, rtol=1e-9)
    assert_close(a.grad, t.grad, atol=1e-9, rtol=1e-9)


_X, _W = rand(1, 2, 3, 3, 3), rand(2, 3, 2, 2, 2)
CONVT3D_ERRORS = [
    (lambda f, t: f.conv_transpose3d(t(_X), t(_W), stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation"),
    (lambda f, t: f.conv_transpose3d(t(_X), t(rand(3, 3, 2, 2, 2))), "expected input"),
    (lambda f, t: f.conv_transpose3d(t(_X[0, 0]), t(_W)), "Expected 4D"),
]


@pytest.mark.parametrize("call,match", CONVT3D_ERRORS, ids=[m for _, m in CONVT3D_ERRORS])
def test_conv_transpose3d_errors_like_torch(call, match):
    _raise_same(lambda: call(F, tl.tensor), lambda: call(tF, torch.tensor), match)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose3d'):
        nn.ConvTranspose3d(2, 3, 2, padding_mode="reflect")


# ---- pooling ----------------------------------------------------------------------------------------
MAXPOOL3D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), dilation=(2, 1, 2)),
    dict(kernel_size=(3, 2, 4), stride=(3, 1, 3), padding=(1, 0, 2), ceil_mode=True),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", MAXPOOL3D, ids=_ids)
def test_max_pool3d_with_indices(backward_mode, kw, dtype):
    ours, theirs = both("MaxPool3d", return_indices=True, **kw)
    assert repr(ours) == repr(theirs)
    for x in (rand(2, 3, 5, 6, 7, dtype=dtype), rand(3, 6, 5, 7, seed=2, dtype=dtype)):
        run_both(ours, theirs, x)


def test_max_pool3d_ties_nans_and_integers_like_torch(backward_mode):
    ties = np.random.default_rng(0).integers(-1, 2, (2, 2, 5, 6, 5)).astype(np.float64)
    for kw in (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), dict(kernel_size=2, stride=1)):
        run_both(*both("MaxPool3d", return_indices=True, **kw), ties)  # the first maximum in (d, h, w) order
        run_both(*both("AdaptiveMaxPool3d", (3, 4, 2), return_indices=True), ties)
    x = rand(1, 2, 4, 4, 4)
    x[0, 0, 0, 1, 1] = x[0, 0, 1, 0, 0] = x[0, 1, 3, 3, 3] = np.nan  # the last NaN of a window wins, as in torch
    oa, ia = F.max_pool3d(tl.tensor(x), 2, return_indices=True)
    ob, ib = tF.max_pool3d(torch.tensor(x), 2, return_indices=True)
    assert_close(oa, ob, atol=0, rtol=0)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    xi = np.random.default_rng(1).integers(-20, 20, (2, 3, 5, 4, 6))
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)):
        a, b = F.max_pool3d(tl.tensor(xi), **kw), tF.max_pool3d(torch.tensor(xi), **kw)
        assert a.dtype is tl.int64
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        a, b = F.avg_pool3d(tl.tensor(xi), **kw), tF.avg_pool3d(torch.tensor(xi), **kw)  # truncating division
        assert a.dtype is tl.int64
        np.testing.assert_array_equal(a.numpy(), b.numpy())


AVGPOOL3D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(3, 2, 2), stride=(2, 3, 1), padding=(1, 1, 0), count_include_pad=False),
    dict(kernel_size=3, padding=1, divisor_override=4),
    dict(kernel_size=(2, 4, 3), stride=3, padding=(1, 2, 1), ceil_mode=True, divisor_override=5),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", AVGPOOL3D, ids=_ids)
def test_avg_pool3d(backward_mode, kw, dtype):
    ours, theirs = both("AvgPool3d", **kw)
    assert repr(ours) == repr(theirs)
    run_both(ours, theirs, rand(2, 3, 5, 6, 7, dtype=dtype))
    run_both(ours, theirs, rand(3, 7, 5, 6, seed=2, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [3, (2, 4, 3), (None, 2, None), 1, (5, 6, 7), (2, 3, 7)], ids=str)
def test_adaptive_pools_3d(backward_mode, size, dtype):
    x = rand(2, 3, 5, 6, 7, dtype=dtype)
    for name, kw in (("AdaptiveAvgPool3d", {}), ("AdaptiveMaxPool3d", dict(return_indices=True))):
        ours, theirs = both(name, size, **kw)
        assert repr(ours) == repr(theirs)
        run_both(ours, theirs, x)
        run_both(ours, theirs, x[1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_unpool3d(backward_mode, dtype):
    x = rand(2, 3, 4, 6, 4, dtype=dtype)
    out, idx = F.max_pool3d(tl.tensor(x), 2, return_indices=True)
    tout, tidx = tF.max_pool3d(torch.tensor(x), 2, return_indices=True)
    ours, theirs = both("MaxUnpool3d", 2)
    assert repr(ours) == repr(theirs)
    a, b = tl.tensor(out.numpy(), requires_grad=True), torch.tensor(tout.numpy(), requires_grad=True)
    for size in (None, [5, 6, 5], (2, 3, 4, 7, 4)):
        ya, yb = ours(a, idx, output_size=size), theirs(b, tidx, output_size=size)
        assert_close(ya, yb, atol=TOL[dtype], rtol=TOL[dtype])
    g = rand(*yb.shape, seed=3, dtype=dtype)
    (ya * tl.tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    assert_close(a.grad, b.grad, atol=TOL[dtype], rtol=TOL[dtype])
    assert_close(ours(out[0], idx[0]), theirs(tout[0], tidx[0]), atol=0, rtol=0)  # unbatched


def test_pool3d_gradchecks():
    x = tl.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 5, 3)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x: F.max_pool3d(x, 3, 2, padding=1, ceil_mode=True), (x,))
    assert tl.autograd.gradcheck(lambda x: F.avg_pool3d(x, 3, 2, padding=1, ceil_mode=True,
                                                        count_include_pad=False), (x,))
    assert tl.autograd.gradcheck(lambda x: F.adaptive_max_pool3d(x, (3, 2, 2)), (x,))
    assert tl.autograd.gradcheck(lambda x: F.adaptive_avg_pool3d(x, (3, 2, 2)), (x,))


POOL_ERRORS = [
    (lambda f, t: f.max_pool3d(t(rand(3, 4, 4)), 2), "non-empty 4D or 5D"),
    (lambda f, t: f.max_pool3d(t(rand(1, 3, 4, 4, 4)), 5), r"Given input size: \(3x4x4x4\). Calculated output size: "
                                                            r"\(3x0x0x0\). Output size is too small"),
    (lambda f, t: f.max_pool3d(t(rand(1, 3, 4, 4, 4)), 2, padding=2), "pad should be at most half of effective "
                                                                       "kernel size"),
    (lambda f, t: f.max_pool3d(t(rand(1, 3, 4, 4, 4) > 0), 2), "\"max_pool3d\" not implemented for 'Bool'"),
    (lambda f, t: f.avg_pool3d(t(rand(1, 3, 4, 4, 4)), 2, divisor_override=0), "divisor must be not zero"),
    (lambda f, t: f.avg_pool3d(t(rand(4, 4, 4)), 2), "non-empty 4D or 5D"),
    (lambda f, t: f.avg_pool3d(t(rand(1, 3, 4, 4, 4) > 0), 2), "not implemented for 'Bool'"),
    (lambda f, t: f.adaptive_avg_pool3d(t(np.arange(64).reshape(1, 4, 4, 4)), 2), "adaptive_avg_pool3d"),
    (lambda f, t: f.adaptive_max_pool3d(t(rand(4, 4)), 2), "4D or 5D"),
]


@pytest.mark.parametrize("call,match", POOL_ERRORS, ids=[m or str(i) for i, (_, m) in enumerate(POOL_ERRORS)])
def test_pool3d_errors_like_torch(call, match):
    _raise_same(lambda: call(F, tl.tensor), lambda: call(tF, torch.tensor), match)


# ---- resampling -------------------------------------------------------------------------------------
def test_upsample_on_5d_inputs(backward_mode):
    x = rand(2, 3, 3, 4, 5)
    for kw in (dict(scale_factor=2), dict(size=(5, 3, 7), mode="trilinear"),
               dict(scale_factor=(1.5, 2, 0.7), mode="trilinear", align_corners=True),
               dict(scale_factor=2, mode="nearest-exact"), dict(size=(2, 2, 3), mode="area")):
        ours, theirs = both("Upsample", **kw)
        assert repr(ours) == repr(theirs)
        run_both(ours, theirs, x)
    with pytest.raises(NotImplementedError, match="trilinear mode needs 5D input"):
        F.interpolate(tl.tensor(rand(2, 3, 4, 5)), scale_factor=2, mode="trilinear")
