"""Issue 17, nn modules part 2: convolution, pooling, resampling, patches and lookups against torch.

Every module is built in both libraries, torch's state dict is loaded into ours, and the outputs and the gradients
of the input and of every parameter must agree, in float32 and float64, batched and unbatched, on both backward
paths (plain and create_graph). Then: reprs, constructor errors, functional error cases (type and message),
indices, integer inputs, finite-difference gradchecks, and the plain convolution's fused path staying in use.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_close

import tinygrad_like as tl

torch = pytest.importorskip("torch")
tnn, tF = torch.nn, torch.nn.functional
nn, F = tl.nn, tl.nn.functional

TOL = {np.float32: 2e-5, np.float64: 1e-10}
DTYPES = [np.float32, np.float64]


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def copy_weights(ours, theirs) -> None:
    ours.load_state_dict({k: tl.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})


def run_both(ours, theirs, x: np.ndarray, *args, grad_input: bool = True, tol=None, **kw):
    """Forward both (extra args passed to both forwards), backward a random weighting of every floating output,
    compare outputs, input gradients and parameter gradients."""
    tol = TOL[x.dtype.type] if tol is None else tol
    a = tl.tensor(x.copy(), requires_grad=grad_input)
    b = torch.tensor(x.copy(), requires_grad=grad_input)
    ya, yb = ours(a, *args, **kw), theirs(b, *args, **kw)
    outs_a = ya if isinstance(ya, tuple) else (ya,)
    outs_b = yb if isinstance(yb, tuple) else (yb,)
    assert len(outs_a) == len(outs_b)
    for i, (p, q) in enumerate(zip(outs_a, outs_b)):
        assert tuple(p.shape) == tuple(q.shape), f"output {i}: shape {p.shape} vs {tuple(q.shape)}"
        assert_close(p, q, atol=tol, rtol=tol, msg=f"output {i}: ")
    rng = np.random.default_rng(1)
    la, lb = 0, 0
    for p, q in zip(outs_a, outs_b):
        if q.requires_grad:
            w = rng.standard_normal(tuple(q.shape)).astype(x.dtype)
            la = la + (p * tl.tensor(w)).sum()
            lb = lb + (q * torch.tensor(w)).sum()
    if isinstance(lb, int):
        return ya, yb
    la.backward()
    lb.backward()
    if grad_input:
        assert_close(a.grad, b.grad, atol=tol, rtol=tol, msg="input grad: ")
    if not isinstance(theirs, tnn.Module):
        return ya, yb
    theirs_p, ours_p = dict(theirs.named_parameters()), dict(ours.named_parameters())
    assert ours_p.keys() == theirs_p.keys()
    for name, p in ours_p.items():
        tp = theirs_p[name]
        if tp.grad is None:
            assert p.grad is None or not np.any(p.grad.numpy()), name
        else:
            assert_close(p.grad, tp.grad, atol=tol, rtol=tol, msg=f"grad of {name}: ")
    return ya, yb


def both(cls_name: str, *args, dtype=np.float64, **kw):
    """The module built in both libraries, torch's weights loaded into ours, both in ``dtype``."""
    theirs = getattr(tnn, cls_name)(*args, **kw)
    if dtype == np.float64:
        theirs = theirs.double()
    ours = getattr(nn, cls_name)(*args, **kw)
    if dtype == np.float64:
        ours = ours.double()
    if list(theirs.state_dict()):
        copy_weights(ours, theirs)
    return ours, theirs


# ---- convolution -----------------------------------------------------------------------------------
CONV1D = [
    dict(in_channels=3, out_channels=4, kernel_size=3),
    dict(in_channels=4, out_channels=6, kernel_size=3, groups=2, padding=1, stride=2),
    dict(in_channels=4, out_channels=8, kernel_size=5, groups=4, dilation=2, padding="same"),
    dict(in_channels=2, out_channels=3, kernel_size=4, padding="same", padding_mode="reflect"),
    dict(in_channels=2, out_channels=3, kernel_size=3, padding=2, padding_mode="circular", bias=False),
    dict(in_channels=2, out_channels=3, kernel_size=3, padding=(1,), padding_mode="replicate", dilation=2),
    dict(in_channels=3, out_channels=3, kernel_size=1, padding="valid", stride=3),
]
CONV2D = [
    dict(in_channels=4, out_channels=6, kernel_size=3, groups=2, padding=1),
    dict(in_channels=4, out_channels=8, kernel_size=(3, 2), groups=4, stride=(2, 1), dilation=(1, 2)),
    dict(in_channels=3, out_channels=3, kernel_size=3, groups=3, padding="same", bias=False),  # depthwise
    dict(in_channels=2, out_channels=4, kernel_size=4, padding="same", dilation=(2, 1)),
    dict(in_channels=2, out_channels=3, kernel_size=3, padding=(1, 2), padding_mode="reflect"),
    dict(in_channels=2, out_channels=3, kernel_size=3, padding=1, padding_mode="replicate", stride=2),
    dict(in_channels=4, out_channels=2, kernel_size=(2, 3), padding="same", padding_mode="circular", groups=2),
    dict(in_channels=2, out_channels=3, kernel_size=3, dilation=3, padding=3),
]
CONV3D = [
    dict(in_channels=2, out_channels=3, kernel_size=3),
    dict(in_channels=4, out_channels=6, kernel_size=(2, 3, 1), stride=(2, 1, 2), padding=(1, 1, 0), groups=2),
    dict(in_channels=2, out_channels=2, kernel_size=3, dilation=(2, 1, 1), padding="same", groups=2, bias=False),
    dict(in_channels=2, out_channels=3, kernel_size=2, padding=1, padding_mode="replicate"),
]


def _ids(kw):
    return ",".join(f"{k}={v}" for k, v in kw.items())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", CONV1D, ids=_ids)
def test_conv1d(backward_mode, kw, dtype):
    ours, theirs = both("Conv1d", dtype=dtype, **kw)
    run_both(ours, theirs, rand(2, kw["in_channels"], 11, dtype=dtype))
    ours.zero_grad()
    theirs.zero_grad()
    run_both(ours, theirs, rand(kw["in_channels"], 9, seed=2, dtype=dtype))  # unbatched


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", CONV2D, ids=_ids)
def test_conv2d_groups_dilation_padding_modes(backward_mode, kw, dtype):
    ours, theirs = both("Conv2d", dtype=dtype, **kw)
    run_both(ours, theirs, rand(2, kw["in_channels"], 9, 8, dtype=dtype))
    ours.zero_grad()
    theirs.zero_grad()
    run_both(ours, theirs, rand(kw["in_channels"], 7, 6, seed=3, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", CONV3D, ids=_ids)
def test_conv3d(backward_mode, kw, dtype):
    ours, theirs = both("Conv3d", dtype=dtype, **kw)
    run_both(ours, theirs, rand(2, kw["in_channels"], 5, 6, 5, dtype=dtype))
    ours.zero_grad()
    theirs.zero_grad()
    run_both(ours, theirs, rand(kw["in_channels"], 4, 5, 6, seed=4, dtype=dtype))


CONVT = [
    dict(in_channels=3, out_channels=4, kernel_size=3),
    dict(in_channels=2, out_channels=3, kernel_size=3, stride=2, padding=1, output_padding=1),
    dict(in_channels=4, out_channels=6, kernel_size=2, stride=2, groups=2, bias=False),
    dict(in_channels=4, out_channels=4, kernel_size=3, stride=3, padding=2, output_padding=2, groups=4),
    dict(in_channels=2, out_channels=3, kernel_size=3, dilation=3, output_padding=2),  # output_padding < dilation
    dict(in_channels=2, out_channels=2, kernel_size=4, stride=2, padding=1, dilation=2, groups=2, output_padding=1),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd", [1, 2])
@pytest.mark.parametrize("kw", CONVT, ids=_ids)
def test_conv_transpose(backward_mode, kw, nd, dtype):
    ours, theirs = both(f"ConvTranspose{nd}d", dtype=dtype, **kw)
    spatial = (5,) if nd == 1 else (5, 4)
    run_both(ours, theirs, rand(2, kw["in_channels"], *spatial, dtype=dtype))
    ours.zero_grad()
    theirs.zero_grad()
    run_both(ours, theirs, rand(kw["in_channels"], *spatial, seed=5, dtype=dtype))


def test_conv_transpose_output_size():
    ours, theirs = both("ConvTranspose2d", 2, 3, 3, stride=2, padding=1)
    x = rand(1, 2, 4, 5)
    for size in ([8, 9], [7, 10], (1, 3, 8, 10)):
        run_both(ours, theirs, x, output_size=size)
        ours.zero_grad()
        theirs.zero_grad()
    with pytest.raises(ValueError, match=r"requested an output size of \[9, 9\], but valid sizes range from "
                                         r"\[7, 9\] to \[8, 10\]"):
        ours(tl.tensor(x), output_size=[9, 9])
    ours1, theirs1 = both("ConvTranspose1d", 2, 3, 3, stride=3)
    run_both(ours1, theirs1, rand(2, 2, 4), output_size=[12])


def test_plain_conv2d_keeps_the_fused_node_and_grouped_uses_im2col():
    x, w = tl.randn(1, 4, 6, 6, requires_grad=True), tl.randn(4, 4, 3, 3, requires_grad=True)
    assert F.conv2d(x, w, padding=1).grad_fn.name == "Conv2d"
    assert F.conv2d(x, w, padding=1, dilation=2).grad_fn.name == "Conv2d"
    y = F.conv2d(x, tl.randn(4, 1, 3, 3), groups=4)
    assert y.grad_fn.name != "Conv2d"
    names = set()
    stack = [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, tl.Tensor):
            continue
        names.add(node.name)  # (our op names: type(node).__name__ is torch's)
        stack += list(node.next)
    assert "Im2Col" in names
    assert F.conv_transpose2d(x, w).grad_fn.name == "ConvTranspose2d"


def test_conv_double_backward_and_gradcheck():
    rng = np.random.default_rng(0)
    x = tl.tensor(rng.standard_normal((2, 4, 5, 5)), requires_grad=True)
    w = tl.tensor(rng.standard_normal((4, 2, 3, 3)), requires_grad=True)
    b = tl.tensor(rng.standard_normal(4), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2, dilation=(1, 2)), (x, w, b))
    wt = tl.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    bt = tl.tensor(rng.standard_normal(6), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, output_padding=1, groups=2),
                                 (x, wt, bt))
    wt1 = tl.tensor(rng.standard_normal((4, 1, 2, 3)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1), (x, wt1))
    x1 = tl.tensor(rng.standard_normal((2, 4, 7)), requires_grad=True)
    w1 = tl.tensor(rng.standard_normal((4, 1, 3)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w: F.conv1d(x, w, groups=4, padding="same"), (x1, w1))
    x3 = tl.tensor(rng.standard_normal((1, 2, 4, 4, 3)), requires_grad=True)
    w3 = tl.tensor(rng.standard_normal((2, 2, 2, 2, 2)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w: F.conv3d(x, w, stride=(2, 1, 1), padding=1), (x3, w3))
    # second order against torch: grouped and transposed
    for fn_ours, fn_theirs, wshape in ((lambda x, w: F.conv2d(x, w, groups=2), lambda x, w: tF.conv2d(x, w, groups=2),
                                        (4, 2, 3, 3)),
                                       (lambda x, w: F.conv_transpose2d(x, w, stride=2),
                                        lambda x, w: tF.conv_transpose2d(x, w, stride=2), (4, 3, 3, 3))):
        xa, wa = rng.standard_normal((2, 4, 5, 5)), rng.standard_normal(wshape)
        a, aw = tl.tensor(xa, requires_grad=True), tl.tensor(wa, requires_grad=True)
        t, tw = torch.tensor(xa, requires_grad=True), torch.tensor(wa, requires_grad=True)
        ga, = tl.autograd.grad(fn_ours(a, aw).pow(2).sum(), [a], create_graph=True)
        gt, = torch.autograd.grad(fn_theirs(t, tw).pow(2).sum(), [t], create_graph=True)
        assert_close(ga, gt, atol=1e-10, rtol=1e-10)
        ga.pow(2).sum().backward()
        gt.pow(2).sum().backward()
        assert_close(aw.grad, tw.grad, atol=1e-9, rtol=1e-9)
        assert_close(a.grad, t.grad, atol=1e-9, rtol=1e-9)


# ---- pooling ---------------------------------------------------------------------------------------
MAXPOOL = [
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=2, ceil_mode=True),
    dict(kernel_size=3, stride=2, dilation=2, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 0), ceil_mode=True),
    dict(kernel_size=4, stride=3, padding=2, dilation=(1, 2), ceil_mode=True),
    dict(kernel_size=2, stride=1),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", MAXPOOL, ids=_ids)
def test_max_pool2d_with_indices(backward_mode, kw, dtype):
    ours, theirs = both("MaxPool2d", return_indices=True, **kw)
    for x in (rand(2, 3, 9, 8, dtype=dtype), rand(3, 7, 10, seed=2, dtype=dtype)):
        run_both(ours, theirs, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), dict(kernel_size=2),
                                dict(kernel_size=3, dilation=2, ceil_mode=True, stride=2),
                                dict(kernel_size=4, stride=1, padding=2)], ids=_ids)
def test_max_pool1d(backward_mode, kw, dtype):
    ours, theirs = both("MaxPool1d", **kw)
    run_both(ours, theirs, rand(2, 3, 11, dtype=dtype))
    run_both(ours, theirs, rand(3, 10, seed=1, dtype=dtype))
    oa, ia = F.max_pool1d(tl.tensor(rand(2, 3, 11)), return_indices=True, **kw)
    ob, ib = tF.max_pool1d(torch.tensor(rand(2, 3, 11)), return_indices=True, **kw)
    np.testing.assert_array_equal(ia.numpy(), ib.numpy())


AVGPOOL = [
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=2, ceil_mode=True),
    dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), count_include_pad=False),
    dict(kernel_size=3, padding=1, divisor_override=2),
    dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, divisor_override=5),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", AVGPOOL, ids=_ids)
def test_avg_pool2d(backward_mode, kw, dtype):
    ours, theirs = both("AvgPool2d", **kw)
    run_both(ours, theirs, rand(2, 3, 9, 8, dtype=dtype))
    run_both(ours, theirs, rand(3, 7, 10, seed=2, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                                dict(kernel_size=4, padding=2, count_include_pad=False), dict(kernel_size=2)],
                         ids=_ids)
def test_avg_pool1d(backward_mode, kw, dtype):
    ours, theirs = both("AvgPool1d", **kw)
    run_both(ours, theirs, rand(2, 3, 11, dtype=dtype))
    run_both(ours, theirs, rand(3, 10, seed=1, dtype=dtype))


def test_pools_on_integer_inputs_like_torch():
    x = np.random.default_rng(0).integers(-20, 20, (2, 3, 7, 6))
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)):
        a, b = F.max_pool2d(tl.tensor(x), **kw), tF.max_pool2d(torch.tensor(x), **kw)
        assert a.dtype is tl.int64
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        a, b = F.avg_pool2d(tl.tensor(x), **kw), tF.avg_pool2d(torch.tensor(x), **kw)  # truncating division
        assert a.dtype is tl.int64
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [3, (4, 3), (None, 2), 1, (7, 8), (2, 4)])
def test_adaptive_pools_2d(backward_mode, size, dtype):
    x = rand(2, 3, 7, 8, dtype=dtype)
    run_both(*both("AdaptiveAvgPool2d", size), x)
    run_both(*both("AdaptiveMaxPool2d", size, return_indices=True), x)
    run_both(*both("AdaptiveMaxPool2d", size), x[0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [3, 4, 1, 9, 5])
def test_adaptive_pools_1d(backward_mode, size, dtype):
    x = rand(2, 3, 9, dtype=dtype)
    run_both(*both("AdaptiveAvgPool1d", size), x)
    run_both(*both("AdaptiveMaxPool1d", size, return_indices=True), x)
    run_both(*both("AdaptiveAvgPool1d", size), x[1])


def test_adaptive_max_pool_ties_and_repeated_taps_like_torch(backward_mode):
    x = np.random.default_rng(0).integers(-1, 2, (2, 2, 7, 5)).astype(np.float64)
    run_both(*both("AdaptiveMaxPool2d", (3, 2), return_indices=True), x)
    run_both(*both("AdaptiveMaxPool2d", (7, 5), return_indices=True), x)


@pytest.mark.parametrize("kernel,stride,padding,dilation", [(3, 2, 1, 1), ((2, 3), (1, 2), 1, 1), (3, 1, 1, (2, 1))])
def test_max_pool_windows_of_minus_inf_beside_padding_like_torch(backward_mode, kernel, stride, padding, dilation):
    """A window holding only -inf keeps its first in-bounds tap, as torch's loop (which skips the padding): its
    gradient and its index go there, never into the padding."""
    x = np.full((2, 2, 5, 4), -np.inf)
    x[0, 0, 4, 3], x[1, 1, 0, 0] = 1.0, 2.0
    ours = tl.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    y, idx = tl.nn.functional.max_pool2d(ours, kernel, stride, padding, dilation, return_indices=True)
    y_t, idx_t = torch.nn.functional.max_pool2d(theirs, kernel, stride, padding, dilation, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), idx_t.numpy())
    g = np.random.default_rng(0).standard_normal(tuple(y_t.shape))
    (y * tl.tensor(g)).sum().backward()
    (y_t * torch.tensor(g)).sum().backward()
    # (overlapping windows add their gradients in another order than torch: within a rounding)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_unpool(backward_mode, dtype):
    x = rand(2, 3, 8, 6, dtype=dtype)
    out, idx = F.max_pool2d(tl.tensor(x), 2, return_indices=True)
    tout, tidx = tF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    ours, theirs = both("MaxUnpool2d", 2)
    a, b = tl.tensor(out.numpy(), requires_grad=True), torch.tensor(tout.numpy(), requires_grad=True)
    for size in (None, [8, 7], (2, 3, 9, 7)):
        ya, yb = ours(a, idx, output_size=size), theirs(b, tidx, output_size=size)
        assert_close(ya, yb, atol=TOL[dtype], rtol=TOL[dtype])
    g = rand(*yb.shape, seed=3, dtype=dtype)
    (ya * tl.tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    assert_close(a.grad, b.grad, atol=TOL[dtype], rtol=TOL[dtype])
    x1 = rand(2, 3, 9, dtype=dtype)
    o1, i1 = F.max_pool1d(tl.tensor(x1), 3, 2, 1, return_indices=True)
    to1, ti1 = tF.max_pool1d(torch.tensor(x1), 3, 2, 1, return_indices=True)
    assert_close(F.max_unpool1d(o1, i1, 3, 2, 1), tF.max_unpool1d(to1, ti1, 3, 2, 1), atol=0, rtol=0)
    assert_close(nn.MaxUnpool1d(3, 2, 1)(o1[0], i1[0]), tnn.MaxUnpool1d(3, 2, 1)(to1[0], ti1[0]), atol=0, rtol=0)
    with pytest.raises(RuntimeError, match="Found an invalid max index: 99"):
        F.max_unpool2d(out, idx * 0 + 99, 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(out, idx, 2, output_size=(20, 20))


def test_pool_gradchecks():
    rng = np.random.default_rng(0)
    x = tl.tensor(rng.standard_normal((1, 2, 7, 6)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x: F.max_pool2d(x, 3, 2, padding=1, ceil_mode=True), (x,))
    assert tl.autograd.gradcheck(lambda x: F.avg_pool2d(x, 3, 2, padding=1, ceil_mode=True,
                                                        count_include_pad=False), (x,))
    assert tl.autograd.gradcheck(lambda x: F.adaptive_max_pool2d(x, (3, 4)), (x,))
    assert tl.autograd.gradcheck(lambda x: F.avg_pool1d(x.flatten(2), 4, 3, 2, ceil_mode=True), (x,))


# ---- resampling ------------------------------------------------------------------------------------
INTERP = [((2, 3, 7), "nearest"), ((2, 3, 7), "nearest-exact"), ((2, 3, 7), "linear"), ((2, 3, 5, 6), "bilinear"),
          ((2, 3, 5, 6), "nearest"), ((2, 3, 5, 6), "nearest-exact"), ((2, 3, 5, 6), "bicubic"),
          ((2, 3, 5, 6), "area"), ((1, 2, 3, 4, 5), "trilinear"), ((1, 2, 3, 4, 5), "nearest"), ((2, 3, 7), "area")]
SCALES = [dict(scale_factor=2), dict(scale_factor=1.7), dict(scale_factor=0.6), dict(size=11), dict(size=3),
          dict(scale_factor=3), dict(scale_factor=1.3, recompute_scale_factor=True), dict(size=1),
          dict(scale_factor=(2.5, 0.5, 1.0))]


def _interp(m, mode, ac, kw):
    return lambda t: m.interpolate(t, mode=mode, align_corners=ac, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,mode", INTERP, ids=lambda v: str(v))
def test_interpolate(backward_mode, shape, mode, dtype):
    nd = len(shape) - 2
    x = rand(*shape, dtype=dtype)
    for kw in SCALES + [dict(size=shape[2:])]:
        if isinstance(kw.get("scale_factor"), tuple):
            kw = dict(scale_factor=kw["scale_factor"][:nd])
        for ac in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True]):
            run_both(_interp(F, mode, ac, kw), _interp(tF, mode, ac, kw), x)


def test_upsample_modules_and_reprs(backward_mode):
    x = rand(2, 3, 4, 5)
    for args, kw in (((), dict(scale_factor=2)), ((), dict(size=(7, 3), mode="bilinear")),
                     ((), dict(scale_factor=(1.5, 2), mode="bicubic", align_corners=True)),
                     ((), dict(scale_factor=2, mode="nearest-exact"))):
        ours, theirs = both("Upsample", *args, **kw)
        assert repr(ours) == repr(theirs)
        run_both(ours, theirs, x)
    for cls in ("UpsamplingNearest2d", "UpsamplingBilinear2d"):
        ours, theirs = both(cls, scale_factor=2)
        assert repr(ours) == repr(theirs)
        run_both(ours, theirs, x)
        ours, theirs = both(cls, size=(3, 9))
        run_both(ours, theirs, x)


def test_interpolate_gradcheck_and_integer_nearest():
    x = tl.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 5)), requires_grad=True)
    for mode, ac in (("bilinear", False), ("bilinear", True), ("bicubic", False), ("area", None)):
        assert tl.autograd.gradcheck(_interp(F, mode, ac, dict(size=(7, 3))), (x,))
    xi = np.arange(12).reshape(1, 1, 3, 4)  # torch has no integer nearest on the CPU; ours picks the same pixels
    a = F.interpolate(tl.tensor(xi), scale_factor=1.5)
    np.testing.assert_array_equal(a.numpy(), tF.interpolate(torch.tensor(xi * 1.0), scale_factor=1.5).numpy())
    assert a.dtype is tl.int64


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((9, 2, 2), 3), ((2, 2, 4, 3, 2), 2), ((1, 1, 3, 3), 1)])
def test_pixel_shuffle_and_unshuffle(backward_mode, shape, r, dtype):
    x = rand(*shape, dtype=dtype)
    run_both(*both("PixelShuffle", r), x)
    y = tF.pixel_shuffle(torch.tensor(x), r).numpy()
    run_both(*both("PixelUnshuffle", r), y)


# ---- patches -----------------------------------------------------------------------------------------
FOLD = [dict(kernel_size=3), dict(kernel_size=(2, 3), stride=(2, 1), padding=1, dilation=(1, 2)),
        dict(kernel_size=2, stride=2), dict(kernel_size=3, padding=2, dilation=2, stride=3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", FOLD, ids=_ids)
def test_unfold_and_fold(backward_mode, kw, dtype):
    x = rand(2, 3, 7, 8, dtype=dtype)
    ours, theirs = both("Unfold", **kw)
    assert repr(ours) == repr(theirs)
    _, cols = run_both(ours, theirs, x)
    run_both(ours, theirs, x[0])
    ours, theirs = both("Fold", (7, 8), **kw)
    assert repr(ours) == repr(theirs)
    c = cols.detach().numpy()
    run_both(ours, theirs, c)
    run_both(ours, theirs, c[1])


# ---- lookups -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(padding_idx=2), dict(scale_grad_by_freq=True), dict(padding_idx=-1,
                                scale_grad_by_freq=True), dict(max_norm=1.0), dict(max_norm=0.5, norm_type=1.0),
                                dict(sparse=True)], ids=_ids)
def test_embedding_options(backward_mode, kw):
    ours, theirs = both("Embedding", 10, 4, **kw)
    assert repr(ours) == repr(theirs)
    ids = np.array([[1, 2, 2, 9], [0, 2, 1, 1]])
    a, b = ours(tl.tensor(ids)), theirs(torch.tensor(ids))
    assert_close(a, b, atol=1e-12, rtol=1e-12)
    g = rand(2, 4, 4)
    (a * tl.tensor(g)).sum().backward()
    (b * torch.tensor(g)).sum().backward()
    tg = theirs.weight.grad
    assert_close(ours.weight.grad, tg.to_dense() if tg.is_sparse else tg, atol=1e-12, rtol=1e-12)
    assert_close(ours.weight, theirs.weight, atol=1e-7, rtol=1e-7)  # max_norm renormalized the rows in place


def test_embedding_from_pretrained_and_max_norm_bumps_version():
    w = tl.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]])
    e = nn.Embedding.from_pretrained(w)
    assert not e.weight.requires_grad and e(tl.tensor([1])).tolist()[0] == pytest.approx([4.0, 5.1, 6.3])
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(tl.zeros(3))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 2, padding_idx=5)
    e = nn.Embedding(5, 3, max_norm=0.1)
    v = e.weight._version
    e(tl.tensor([0, 1]))
    assert e.weight._version > v
    assert float(e.weight[:2].norm(dim=1).max()) <= 0.1 + 1e-6
    assert float(e.weight[2:].norm(dim=1).max()) > 0.1  # rows not looked up are left alone
    eb = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert eb(tl.tensor([[0, 1]])).tolist()[0] == pytest.approx([5.0, 7.4, 9.3])


BAGS = [dict(mode="sum"), dict(mode="mean"), dict(mode="max"), dict(mode="mean", padding_idx=2),
        dict(mode="max", padding_idx=0), dict(mode="mean", max_norm=1.0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", BAGS, ids=_ids)
def test_embedding_bag(backward_mode, kw, dtype):
    ours, theirs = both("EmbeddingBag", 10, 3, dtype=dtype, **kw)
    assert repr(ours) == repr(theirs)
    tol = TOL[dtype]
    ids = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 2])
    cases = [((ids, np.array([0, 2, 2, 7] if kw["mode"] != "max" else [0, 2, 3, 7])), {}),  # an empty bag
             ((ids.reshape(2, 5),), {}),  # fixed-length bags
             ((ids, np.array([0, 3, 10])), dict(include_last_offset=True))]
    for args, extra in cases:
        o2, t2 = both("EmbeddingBag", 10, 3, dtype=dtype, **kw, **extra)
        ya = o2(*(tl.tensor(a) for a in args))
        yb = t2(*(torch.tensor(a) for a in args))
        assert_close(ya, yb, atol=tol, rtol=tol)
        g = rand(*yb.shape, dtype=dtype)
        (ya * tl.tensor(g)).sum().backward()
        (yb * torch.tensor(g)).sum().backward()
        assert_close(o2.weight.grad, t2.weight.grad, atol=tol, rtol=tol)


def test_embedding_bag_scale_grad_by_freq_is_embeddings():
    """Divergence, on purpose: torch's CPU embedding_bag scales the gradient by the counts of other indices (2.13:
    an index seen once in [1, 2, 4, 5, 4, 3, 2, 9, 0, 2] gets 1/3); ours divides each row's gradient by how often
    that index occurs, as the documentation says and as torch's own F.embedding(scale_grad_by_freq=True) does."""
    ids = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 2])
    w = rand(10, 3)
    a, b = tl.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    ya = F.embedding_bag(tl.tensor(ids), a, tl.tensor([0, 2, 2, 7]), mode="sum", scale_grad_by_freq=True)
    yb = tF.embedding(torch.tensor(ids), b, scale_grad_by_freq=True)
    yb = torch.stack([yb[0:2].sum(0), yb[2:2].sum(0), yb[2:7].sum(0), yb[7:].sum(0)])
    assert_close(ya, yb, atol=1e-12, rtol=1e-12)
    g = rand(4, 3, seed=1)
    (ya * tl.tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    assert_close(a.grad, b.grad, atol=1e-12, rtol=1e-12)


def test_embedding_bag_per_sample_weights(backward_mode):
    ours, theirs = both("EmbeddingBag", 10, 3, mode="sum")
    ids, off = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 4])
    psw = rand(6, seed=3)
    pa, pb = tl.tensor(psw, requires_grad=True), torch.tensor(psw, requires_grad=True)
    ya, yb = ours(tl.tensor(ids), tl.tensor(off), pa), theirs(torch.tensor(ids), torch.tensor(off), pb)
    assert_close(ya, yb, atol=1e-12, rtol=1e-12)
    ya.sum().backward()
    yb.sum().backward()
    assert_close(pa.grad, pb.grad, atol=1e-12, rtol=1e-12)
    assert_close(ours.weight.grad, theirs.weight.grad, atol=1e-12, rtol=1e-12)


# ---- reprs, state dicts, constructor errors -----------------------------------------------------------
REPRS = [
    ("Conv1d", (2, 4, 3), {}), ("Conv2d", (2, 4, 3), dict(padding="same", padding_mode="reflect", dilation=2,
                                                          groups=2, bias=False)),
    ("Conv2d", (1, 8, 3), dict(padding=1)), ("Conv3d", (2, 4, 3), dict(stride=2, padding=(1, 0, 1))),
    ("ConvTranspose2d", (2, 4, 3), dict(stride=2, output_padding=1)), ("ConvTranspose1d", (2, 4, 3), {}),
    ("ConvTranspose2d", (2, 4, 3), dict(groups=2, dilation=2, bias=False)),
    ("MaxPool1d", (3,), {}), ("MaxPool2d", (3, 2, 1), dict(ceil_mode=True)), ("MaxPool2d", (2,), dict(
        return_indices=True)), ("AvgPool1d", (3,), {}), ("AvgPool2d", (3,), {}),
    ("AvgPool2d", (3,), dict(count_include_pad=False, divisor_override=2, ceil_mode=True, padding=1)),
    ("AdaptiveMaxPool2d", (3,), {}), ("AdaptiveAvgPool1d", (3,), {}), ("AdaptiveMaxPool1d", (4,), {}),
    ("AdaptiveAvgPool2d", ((None, 3),), {}), ("MaxUnpool2d", (2,), {}), ("MaxUnpool1d", (3, 2, 1), {}),
    ("PixelShuffle", (2,), {}), ("PixelUnshuffle", (2,), {}), ("Upsample", (), dict(scale_factor=2)),
    ("Upsample", (), dict(size=(3, 4), mode="bilinear")), ("Unfold", (3,), {}), ("Fold", ((4, 5), 2), {}),
    ("EmbeddingBag", (10, 3), {}), ("EmbeddingBag", (10, 3), dict(mode="max", padding_idx=0, max_norm=1.0)),
    ("Embedding", (10, 3), dict(max_norm=1.0, scale_grad_by_freq=True, padding_idx=-1)),
]


@pytest.mark.parametrize("name,args,kw", REPRS, ids=lambda v: str(v))
def test_repr_and_state_dict_like_torch(name, args, kw):
    ours, theirs = getattr(nn, name)(*args, **kw), getattr(tnn, name)(*args, **kw)
    assert repr(ours) == repr(theirs)
    ours_sd, theirs_sd = ours.state_dict(), theirs.state_dict()
    assert list(ours_sd) == list(theirs_sd)
    for k, v in theirs_sd.items():
        assert tuple(ours_sd[k].shape) == tuple(v.shape), k


def test_conv_init_matches_torch_bounds():
    for m in (nn.Conv1d(4, 6, 3, groups=2), nn.ConvTranspose2d(4, 6, 3, groups=2), nn.Conv3d(2, 3, 2)):
        fan_in = m.weight.shape[1] * int(np.prod(m.weight.shape[2:]))
        bound = 1 / np.sqrt(fan_in)
        assert float(m.weight.abs().max()) <= bound + 1e-7  # kaiming_uniform(a=sqrt(5)) has the same bound
        assert float(m.bias.abs().max()) <= bound + 1e-7
        assert float(m.weight.abs().max()) > bound / 2


def _raise_same(ours_fn, theirs_fn, match: str):
    """Both raise the same exception type; ours says ``match``."""
    with pytest.raises(Exception) as theirs:
        theirs_fn()
    with pytest.raises(theirs.type, match=match):
        ours_fn()


CTOR_ERRORS = [
    ("Conv2d", (3, 4, 3), dict(groups=0), "groups must be a positive integer"),
    ("Conv2d", (3, 4, 3), dict(groups=2), "in_channels must be divisible by groups"),
    ("Conv1d", (4, 3, 3), dict(groups=2), "out_channels must be divisible by groups"),
    ("Conv2d", (3, 4, 3), dict(padding="full"), "Invalid padding string 'full'"),
    ("Conv2d", (3, 4, 3), dict(padding="same", stride=2), "not supported for strided convolutions"),
    ("Conv1d", (3, 4, 3), dict(padding_mode="mirror"), "padding_mode must be one of"),
    ("ConvTranspose2d", (3, 4, 3), dict(padding_mode="reflect"), 'Only "zeros" padding mode is supported'),
    ("EmbeddingBag", (5, 2), dict(padding_idx=7), "padding_idx must be within num_embeddings"),
]


@pytest.mark.parametrize("name,args,kw,match", CTOR_ERRORS, ids=lambda v: str(v))
def test_constructor_errors_like_torch(name, args, kw, match):
    _raise_same(lambda: getattr(nn, name)(*args, **kw), lambda: getattr(tnn, name)(*args, **kw), match)


def _x(*shape, dtype=np.float32):
    return rand(*shape, dtype=dtype)


F_ERRORS = [
    ("conv1d", lambda m: m.conv1d(m.tensor(_x(7)), m.tensor(_x(4, 3, 3))), r"Expected 2D \(unbatched\) or 3D"),
    ("conv1d-channels", lambda m: m.conv1d(m.tensor(_x(2, 3, 7)), m.tensor(_x(4, 2, 3))),
     r"Given groups=1, weight of size \[4, 2, 3\], expected input\[2, 3, 7\] to have 2 channels"),
    ("conv2d-groups", lambda m: m.conv2d(m.tensor(_x(2, 4, 7, 7)), m.tensor(_x(4, 2, 3, 3)), groups=3),
     "expected weight to be divisible by 3 at dimension 0"),
    ("conv2d-same-stride", lambda m: m.conv2d(m.tensor(_x(1, 4, 7, 7)), m.tensor(_x(4, 2, 3, 3)), groups=2,
                                              padding="same", stride=2), "not supported for strided"),
    ("conv2d-bad-string", lambda m: m.conv2d(m.tensor(_x(1, 4, 7, 7)), m.tensor(_x(4, 4, 3, 3)), padding="foo"),
     "Invalid padding string: 'foo'"),
    ("conv2d-groups0", lambda m: m.conv2d(m.tensor(_x(1, 4, 7, 7)), m.tensor(_x(4, 4, 3, 3)), groups=0),
     "non-positive groups is not supported"),
    ("conv2d-neg-pad", lambda m: m.conv2d(m.tensor(_x(1, 4, 7, 7)), m.tensor(_x(4, 4, 3, 3)), padding=-1),
     "negative padding is not supported"),
    ("conv2d-stride0", lambda m: m.conv2d(m.tensor(_x(1, 4, 7, 7)), m.tensor(_x(4, 4, 3, 3)), stride=0),
     "non-positive stride is not supported"),
    ("conv3d-small", lambda m: m.conv3d(m.tensor(_x(1, 1, 2, 5, 5)), m.tensor(_x(1, 1, 3, 3, 3))),
     "Kernel size can't be greater than actual input size"),
    ("convT-opad", lambda m: m.conv_transpose2d(m.tensor(_x(2, 4, 7, 7)), m.tensor(_x(4, 2, 3, 3)), stride=2,
                                                output_padding=2),
     "output padding must be smaller than either stride or dilation, but got output_padding_height: 2"),
    ("convT-channels", lambda m: m.conv_transpose2d(m.tensor(_x(2, 4, 7, 7)), m.tensor(_x(3, 2, 3, 3))),
     r"Given transposed=1, weight of size \[3, 2, 3, 3\], expected input\[2, 4, 7, 7\] to have 3 channels"),
    ("convT-same", lambda m: m.conv_transpose2d(m.tensor(_x(2, 4, 7, 7)), m.tensor(_x(4, 2, 3, 3)), padding="same"),
     "must be tuple of ints, not str"),
    ("max_pool-pad", lambda m: m.max_pool2d(m.tensor(_x(1, 1, 5, 5)), 2, padding=2),
     "pad should be at most half of effective kernel size"),
    ("avg_pool-pad", lambda m: m.avg_pool2d(m.tensor(_x(1, 1, 5, 5)), 2, padding=2),
     "pad should be at most half of effective kernel size"),
    ("max_pool-small", lambda m: m.max_pool2d(m.tensor(_x(1, 1, 5, 5)), 7),
     r"Given input size: \(1x5x5\). Calculated output size: \(1x-1x-1\)|Output size is too small"),
    ("max_pool1d-dims", lambda m: m.max_pool1d(m.tensor(_x(7)), 2),
     r"Expected 2D or 3D \(batch mode\) tensor with optional 0 dim batch size for input, but got:\[7\]"),
    ("avg_pool-divisor0", lambda m: m.avg_pool2d(m.tensor(_x(1, 1, 4, 4)), 2, divisor_override=0),
     "divisor must be not zero"),
    ("interp-both", lambda m: m.interpolate(m.tensor(_x(1, 1, 4)), size=3, scale_factor=2),
     "only one of size or scale_factor should be defined"),
    ("interp-none", lambda m: m.interpolate(m.tensor(_x(1, 1, 4))), "either size or scale_factor should be defined"),
    ("interp-align", lambda m: m.interpolate(m.tensor(_x(1, 1, 4)), size=3, align_corners=True),
     "align_corners option can only be set with the interpolating modes"),
    ("interp-linear-4d", lambda m: m.interpolate(m.tensor(_x(1, 1, 4, 4)), size=3, mode="linear"),
     "Got 4D input, but linear mode needs 3D input"),
    ("interp-size-len", lambda m: m.interpolate(m.tensor(_x(1, 1, 4, 4)), size=(3,)),
     "Input and output must have the same number of spatial dimensions"),
    ("interp-recompute", lambda m: m.interpolate(m.tensor(_x(1, 1, 4)), size=3, recompute_scale_factor=True),
     "recompute_scale_factor is not meaningful with an explicit size"),
    ("pixel_shuffle-div", lambda m: m.pixel_shuffle(m.tensor(_x(1, 5, 2, 2)), 2),
     r"input.size\(-3\)=5 is not divisible by 4"),
    ("pixel_unshuffle-div", lambda m: m.pixel_unshuffle(m.tensor(_x(1, 1, 5, 4)), 2),
     r"input.size\(-2\)=5 is not divisible by 2"),
    ("pixel_shuffle-dims", lambda m: m.pixel_shuffle(m.tensor(_x(4, 2)), 2), "at least 3 dimensions"),
    ("fold-blocks", lambda m: m.fold(m.tensor(_x(1, 12, 10)), (4, 5), 2),
     "expected size of input's dimension 2 to match the calculated number of sliding blocks"),
    ("fold-divisible", lambda m: m.fold(m.tensor(_x(1, 10, 12)), (4, 5), 2),
     "divisible by the product of kernel_size"),
    ("unfold-small", lambda m: m.unfold(m.tensor(_x(1, 1, 2, 2)), 3), "must be at least one"),
    ("bag-2d-offsets", lambda m: m.embedding_bag(m.tensor([[1, 2]]), m.tensor(_x(5, 2)), m.tensor([0])),
     "if input is 2D, then offsets has to be None"),
    ("bag-no-offsets", lambda m: m.embedding_bag(m.tensor([1, 2]), m.tensor(_x(5, 2))),
     "offsets has to be a 1D Tensor but got None"),
    ("bag-offset0", lambda m: m.embedding_bag(m.tensor([1, 2, 3]), m.tensor(_x(5, 2)), m.tensor([1, 2])),
     "offsets\\[0\\] has to be 0"),
    ("bag-last", lambda m: m.embedding_bag(m.tensor([1, 2, 3]), m.tensor(_x(5, 2)), m.tensor([0, 2, 4]),
                                           include_last_offset=True), "can not be greater than input's length 3"),
    ("bag-mode", lambda m: m.embedding_bag(m.tensor([[1, 2]]), m.tensor(_x(5, 2)), mode="median"),
     "mode has to be one of sum, mean or max"),
    ("bag-psw-mode", lambda m: m.embedding_bag(m.tensor([[1, 2]]), m.tensor(_x(5, 2)),
                                               per_sample_weights=m.tensor(_x(1, 2))),
     "per_sample_weights is only supported for mode='sum'"),
    ("bag-max-freq", lambda m: m.embedding_bag(m.tensor([[1, 2]]), m.tensor(_x(5, 2)), mode="max",
                                               scale_grad_by_freq=True), "max mode does not support scaling"),
    ("bag-float-ids", lambda m: m.embedding_bag(m.tensor([1.0, 2.0]), m.tensor(_x(5, 2)), m.tensor([0])),
     "to have one of the following scalar types: Long, Int"),
    ("bag-range", lambda m: m.embedding_bag(m.tensor([[1, 7]]), m.tensor(_x(5, 2))),
     r"Index 1 of input takes value 7 which is not in the valid range \[0, 5\)"),
    ("bag-padding", lambda m: m.embedding_bag(m.tensor([[1, 2]]), m.tensor(_x(5, 2)), padding_idx=7),
     "padding_idx must be within the number of embeddings, -5 through 4, but got 7"),
    ("embedding-range", lambda m: m.embedding(m.tensor([1, 7]), m.tensor(_x(5, 2))), "index out of range"),
    ("embedding-float", lambda m: m.embedding(m.tensor([1.0]), m.tensor(_x(5, 2))),
     "to have one of the following scalar types: Long, Int"),
    ("embedding-padding", lambda m: m.embedding(m.tensor([1]), m.tensor(_x(5, 2)), padding_idx=7),
     "Padding_idx must be within num_embeddings"),
]


class _NS:
    """``m.conv1d`` etc. from the functional module and ``m.tensor`` from the library, for one side."""

    def __init__(self, lib, functional):
        self.lib, self.functional = lib, functional

    def __getattr__(self, name):
        return getattr(self.lib if name == "tensor" else self.functional, name)


@pytest.mark.parametrize("name,fn,match", F_ERRORS, ids=lambda v: v if isinstance(v, str) else "")
def test_functional_errors_like_torch(name, fn, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raise_same(lambda: fn(_NS(tl, F)), lambda: fn(_NS(torch, tF)), match)


def test_return_types_and_keywords():
    x = tl.tensor(rand(1, 2, 6, 6))
    out, idx = F.max_pool2d_with_indices(x, 2)
    assert idx.dtype is tl.int64 and not idx.requires_grad
    out2 = F.max_pool2d(input=x, kernel_size=2, stride=None, padding=0, dilation=1, ceil_mode=False)
    np.testing.assert_array_equal(out.numpy(), out2.numpy())
    o, i = F.adaptive_max_pool1d_with_indices(x.flatten(2), 5)
    assert o.shape == (1, 2, 5) and i.dtype is tl.int64
    assert F.conv2d(input=x, weight=tl.ones(3, 2, 3, 3, dtype=tl.float64), bias=None, stride=1, padding=1, dilation=1,
                    groups=1).shape == (1, 3, 6, 6)
    with pytest.warns(UserWarning, match="deprecated"):
        F.upsample(x, scale_factor=2)
