"""tl.nn against torch.nn: identical weights in, identical outputs and gradients out.

Every module is built in both libraries, torch's initial weights are copied into ours through
``load_state_dict`` (which is itself under test), and the outputs and the gradients of the input
and of every parameter must agree to 1e-5 in float32, on both backward paths.
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


def copy_weights(ours, theirs) -> None:
    ours.load_state_dict({k: tl.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})


def run_both(ours, theirs, x: np.ndarray, *, grad_input: bool = True, atol=1e-5, rtol=1e-5, seed=0):
    """Forward both on ``x``, backward a random weighting of the output, compare everything."""
    a = tl.tensor(x.copy(), requires_grad=grad_input)
    b = torch.tensor(x.copy(), requires_grad=grad_input)
    ya, yb = ours(a), theirs(b)
    assert_close(ya, yb, atol=atol, rtol=rtol, msg="forward: ")
    w = np.random.default_rng(seed).standard_normal(tuple(yb.shape)).astype(x.dtype)
    (ya * tl.tensor(w)).sum().backward()
    (yb * torch.tensor(w)).sum().backward()
    if grad_input:
        assert_close(a.grad, b.grad, atol=atol, rtol=rtol, msg="input grad: ")
    theirs_p = dict(theirs.named_parameters())
    ours_p = dict(ours.named_parameters())
    assert ours_p.keys() == theirs_p.keys()
    for name, p in ours_p.items():
        tp = theirs_p[name]
        if tp.grad is None:
            assert p.grad is None, name
        else:
            assert_close(p.grad, tp.grad, atol=atol, rtol=rtol, msg=f"grad of {name}: ")
    return ya, yb


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---- layers -------------------------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 7), (2, 3, 7), (7,)])
def test_linear(backward_mode, bias, shape):
    theirs = tnn.Linear(7, 4, bias=bias)
    ours = nn.Linear(7, 4, bias=bias)
    copy_weights(ours, theirs)
    run_both(ours, theirs, rand(*shape))


CONV_CASES = [
    dict(in_channels=1, out_channels=8, kernel_size=3, padding=1),
    dict(in_channels=3, out_channels=4, kernel_size=3),
    dict(in_channels=3, out_channels=5, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0)),
    dict(in_channels=2, out_channels=3, kernel_size=3, dilation=2, padding=2),
    dict(in_channels=4, out_channels=6, kernel_size=3, groups=2, padding=1),
    dict(in_channels=4, out_channels=4, kernel_size=3, groups=4, bias=False),
    dict(in_channels=2, out_channels=3, kernel_size=4, padding="same"),
    dict(in_channels=2, out_channels=3, kernel_size=3, padding="valid", stride=3),
    dict(in_channels=3, out_channels=2, kernel_size=1),
]


@pytest.mark.parametrize("kw", CONV_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_conv2d(backward_mode, kw):
    theirs, ours = tnn.Conv2d(**kw), nn.Conv2d(**kw)
    copy_weights(ours, theirs)
    run_both(ours, theirs, rand(2, kw["in_channels"], 9, 8), atol=2e-5)


def test_conv2d_unbatched_and_noncontiguous_input():
    theirs, ours = tnn.Conv2d(3, 4, 3, padding=1), nn.Conv2d(3, 4, 3, padding=1)
    copy_weights(ours, theirs)
    run_both(ours, theirs, rand(3, 6, 5))
    x = rand(2, 6, 5, 3)
    ya = ours(tl.tensor(x).permute(0, 3, 1, 2))
    yb = theirs(torch.tensor(x).permute(0, 3, 1, 2))
    assert_close(ya, yb)


@pytest.mark.parametrize("kw", [dict(padding=1), dict(padding=(2, 0), dilation=(1, 2)), dict(padding=0),
                                dict(dilation=(1, 3))])
def test_conv2d_stride1_wide_columns_gradcheck(kw):
    """Stride-1 convolutions take the backend's wide-column path unless its extra columns would cost more
    than half again (the last case: 3 extra columns for 4 real ones); float64 finite differences check both."""
    rng = np.random.default_rng(2)
    x = tl.tensor(rng.standard_normal((2, 3, 6, 7)), requires_grad=True)
    w = tl.tensor(rng.standard_normal((2, 3, 3, 2)), requires_grad=True)
    b = tl.tensor(rng.standard_normal(2), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kw), (x, w, b))


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_conv2d_weight_grad_with_a_non_finite_pixel_matches_torch(backward_mode, bad):
    """The wide columns hold real pixels in the thrown-away columns; a non-finite one there must not
    leak into the weight gradient through 0 * inf (the result must equal torch's, NaNs in place)."""
    x = rand(2, 2, 6, 6)
    x[0, 1, 2, 0] = bad   # column 0 is what tap j=2 reads past the row end on the wide grid
    theirs, ours = tnn.Conv2d(2, 3, 3, padding=1), nn.Conv2d(2, 3, 3, padding=1)
    copy_weights(ours, theirs)
    ya, yb = ours(tl.tensor(x)), theirs(torch.tensor(x))
    g = rand(*ya.shape)
    ya.backward(tl.tensor(g))
    yb.backward(torch.tensor(g))
    ga, gb = ours.weight.grad.numpy(), theirs.weight.grad.numpy()
    np.testing.assert_array_equal(np.isnan(ga), np.isnan(gb))
    np.testing.assert_allclose(np.nan_to_num(ga), np.nan_to_num(gb), rtol=1e-5, atol=1e-5)


def test_conv2d_input_grad_with_an_infinite_weight_matches_torch(backward_mode):
    """inf * the zero gradient of a dropped wide column must not leak NaN into the input gradient."""
    x = np.zeros((1, 1, 3, 4), np.float32)
    w = np.array([[[[np.inf, 1.0]]]], np.float32)
    a, b = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no RuntimeWarning from NumPy on the way
        F.conv2d(a, tl.tensor(w)).sum().backward()
    tF.conv2d(b, torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_non_finite_gradients_reach_only_the_winners_like_torch(backward_mode):
    """ReLU and max-pool send an inf/NaN output gradient only where it belongs (torch: 0 elsewhere, not
    inf * 0 = NaN); a window holding NaN gives its gradient (and its index) to its last NaN, as in torch."""
    x = rand(2, 3, 6, 6, seed=5)
    x[0, 0, 1, 1] = x[0, 0, 0, 3] = x[0, 0, 1, 2] = x[1, 2, 4, 4] = np.nan
    for pool in (nn.MaxPool2d(2), nn.MaxPool2d(3, stride=1), nn.MaxPool2d(3, stride=2, padding=1)):
        theirs = tnn.MaxPool2d(pool.kernel_size, pool.stride, pool.padding)
        a, b = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = pool(a), theirs(b)
        g = rand(*ya.shape, seed=6)
        g[0, 0, 0, 0], g[0, 1, 1, 1], g[1, 0, 0, 1] = np.inf, -np.inf, np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ya.backward(tl.tensor(g))
        yb.backward(torch.tensor(g))
        # overlapping windows sum in another order: equal up to rounding, inf and NaN in the same places
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=repr(pool))
        ia = F.max_pool2d(tl.tensor(x), pool.kernel_size, pool.stride, pool.padding, return_indices=True)[1]
        ib = tF.max_pool2d(torch.tensor(x), pool.kernel_size, pool.stride, pool.padding, return_indices=True)[1]
        np.testing.assert_array_equal(ia.numpy(), ib.numpy(), err_msg=repr(pool))
    y = np.array([-1.0, 0.0, 2.0, np.nan, 3.0], np.float32)
    g = np.array([np.inf, np.nan, 1.0, 1.0, -np.inf], np.float32)
    a, b = tl.tensor(y, requires_grad=True), torch.tensor(y, requires_grad=True)
    a.relu().backward(tl.tensor(g))
    b.relu().backward(torch.tensor(g))
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_non_finite_gradients_on_large_tensors_take_the_exact_path(backward_mode):
    """On large tensors an inf or NaN gradient must still give 0 where the input lost (torch's rule), through
    ReLU's bitwise select and the 2x2 pool's products (which take their exact path after a finiteness check)."""
    x = rand(4, 8, 32, 32, seed=7)
    a, b = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = F.max_pool2d(a.relu(), 2), tF.max_pool2d(b.relu(), 2)
    g = rand(*ya.shape, seed=8)
    g[0, 0, 0, :4] = [np.inf, -np.inf, np.nan, np.inf]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ya.backward(tl.tensor(g))
    yb.backward(torch.tensor(g))
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_relu_on_large_tensors_matches_torch(backward_mode, layout):
    """Large contiguous inputs go block by block against a cached zero block: values, NaN, infinities and
    the block boundaries must come out as torch's (the sign of a zero is not compared: torch keeps -0.0)."""
    x = rand(3, 70_001)
    x[0, :5] = [np.nan, -0.0, 0.0, -np.inf, np.inf]
    x[1, 16383:16386] = [-1.0, 2.0, -3.0]
    xa, xb = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = (xa.T, xb.T) if layout == "transposed" else (xa, xb)
    ya, yb = ya.relu(), yb.relu()
    np.testing.assert_array_equal(ya.detach().numpy(), yb.detach().numpy())
    g = rand(*ya.shape)
    ya.backward(tl.tensor(g))
    yb.backward(torch.tensor(g))
    np.testing.assert_array_equal(xa.grad.numpy(), xb.grad.numpy())


def test_conv2d_float64_gradcheck_and_double_backward():
    rng = np.random.default_rng(1)
    x = tl.tensor(rng.standard_normal((2, 2, 5, 5)), requires_grad=True)
    w = tl.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    b = tl.tensor(rng.standard_normal(3), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, dilation=1), (x, w, b))
    # second derivative: d/dw of ||d loss/d x||^2 against torch
    xt, wt = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, w))
    gx, = tl.autograd.grad(F.conv2d(x, w).pow(2).sum(), [x], create_graph=True)
    gxt, = torch.autograd.grad(tF.conv2d(xt, wt).pow(2).sum(), [xt], create_graph=True)
    gw, = tl.autograd.grad((gx * gx).sum(), [w])
    gwt, = torch.autograd.grad((gxt * gxt).sum(), [wt])
    assert_close(gw, gwt, atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=(2, 3), stride=1), dict(kernel_size=3, stride=1, dilation=2),
                                dict(kernel_size=3, stride=2)])
def test_max_pool2d(backward_mode, kw):
    run_both(nn.MaxPool2d(**kw), tnn.MaxPool2d(**kw), rand(2, 3, 9, 8))
    x = rand(2, 3, 9, 8, seed=3)
    oa, ia = F.max_pool2d(tl.tensor(x), return_indices=True, **kw)
    ob, ib = tF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
    assert_close(oa, ob)
    assert_close(ia, ib)


def test_max_pool2d_ties_send_the_gradient_to_one_input_like_torch(backward_mode):
    x = np.zeros((1, 1, 4, 4), np.float32)  # every window is a tie
    run_both(nn.MaxPool2d(2), tnn.MaxPool2d(2), x)
    run_both(nn.MaxPool2d(3, stride=1), tnn.MaxPool2d(3, stride=1), x)  # overlapping windows


@pytest.mark.parametrize("shape", [(2, 3, 6, 8), (2, 3, 7, 8), (1, 2, 6, 7)], ids=["even", "odd-height", "odd-width"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool2d_2x2_with_many_ties_matches_torch(backward_mode, shape, dtype):
    """Values from {0, 1, 2}: most windows hold ties in every arrangement (left/right, top/bottom, both).
    float32 even-width inputs take the backend's paired-column fast path; the rest the general one."""
    x = np.random.default_rng(4).integers(0, 3, shape).astype(dtype)
    run_both(nn.MaxPool2d(2), tnn.MaxPool2d(2), x)
    run_both(nn.MaxPool2d(2), tnn.MaxPool2d(2), -x)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                dict(kernel_size=(2, 3), stride=(1, 2)), dict(kernel_size=2, divisor_override=3)])
def test_avg_pool2d(backward_mode, kw):
    run_both(nn.AvgPool2d(**kw), tnn.AvgPool2d(**kw), rand(2, 3, 9, 8))


@pytest.mark.parametrize("size", [(1, 1), 3, (2, None), (4, 3), (7, 8)])
def test_adaptive_avg_pool2d(backward_mode, size):
    run_both(nn.AdaptiveAvgPool2d(size), tnn.AdaptiveAvgPool2d(size), rand(2, 3, 7, 8))


def test_pool_gradchecks():
    x = tl.tensor(np.random.default_rng(2).permutation(2 * 2 * 6 * 6).reshape(2, 2, 6, 6) / 10.0,
                  requires_grad=True)  # distinct values: no ties at the kinks
    assert tl.autograd.gradcheck(lambda x: F.max_pool2d(x, 3, 2, padding=1), (x,))
    assert tl.autograd.gradcheck(lambda x: F.avg_pool2d(x, 3, 2, padding=1, count_include_pad=False), (x,))
    assert tl.autograd.gradcheck(lambda x: F.adaptive_avg_pool2d(x, (4, 3)), (x,))


@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm1d, (6, 4)), (nn.BatchNorm1d, (5, 4, 3)),
                                       (nn.BatchNorm2d, (3, 4, 5, 5))])
@pytest.mark.parametrize("kw", [{}, dict(momentum=None), dict(affine=False), dict(track_running_stats=False),
                                dict(momentum=0.3, eps=1e-3)])
def test_batch_norm_train_and_eval(backward_mode, cls, shape, kw):
    tcls = getattr(tnn, cls.__name__)
    ours, theirs = cls(4, **kw), tcls(4, **kw)
    copy_weights(ours, theirs)
    if kw.get("affine", True):  # non-trivial affine parameters
        with torch.no_grad():
            theirs.weight.uniform_(0.5, 1.5, generator=torch.Generator().manual_seed(0))
            theirs.bias.uniform_(-1, 1, generator=torch.Generator().manual_seed(1))
        copy_weights(ours, theirs)
    for step in range(3):
        run_both(ours, theirs, rand(*shape, seed=step) * 2 + 1, atol=5e-5, rtol=5e-5, seed=step)
        for (name, a), (_, b) in zip(ours.named_buffers(), theirs.named_buffers()):
            assert_close(a, b, msg=f"{name} after step {step}: ")
    ours.eval()
    theirs.eval()
    run_both(ours, theirs, rand(*shape, seed=9), atol=5e-5, rtol=5e-5)


def test_batch_norm_gradcheck():
    rng = np.random.default_rng(3)
    x = tl.tensor(rng.standard_normal((4, 3, 2, 2)), requires_grad=True)
    w = tl.tensor(rng.uniform(0.5, 1.5, 3), requires_grad=True)
    b = tl.tensor(rng.standard_normal(3), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, w, b))


@pytest.mark.parametrize("shape,normalized", [((4, 6), 6), ((2, 3, 5), (5,)), ((2, 3, 4), (3, 4))])
@pytest.mark.parametrize("kw", [{}, dict(elementwise_affine=False), dict(bias=False), dict(eps=1e-2)])
def test_layer_norm(backward_mode, shape, normalized, kw):
    ours, theirs = nn.LayerNorm(normalized, **kw), tnn.LayerNorm(normalized, **kw)
    if theirs.weight is not None:
        with torch.no_grad():
            theirs.weight.uniform_(0.5, 1.5, generator=torch.Generator().manual_seed(0))
            if theirs.bias is not None:
                theirs.bias.uniform_(-1, 1, generator=torch.Generator().manual_seed(1))
    copy_weights(ours, theirs)
    run_both(ours, theirs, rand(*shape) * 3 + 1)


def test_layer_norm_gradcheck_and_double_backward():
    rng = np.random.default_rng(4)
    x = tl.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    w = tl.tensor(rng.uniform(0.5, 1.5, 5), requires_grad=True)
    b = tl.tensor(rng.standard_normal(5), requires_grad=True)
    assert tl.autograd.gradcheck(lambda x, w, b: F.layer_norm(x, (5,), w, b), (x, w, b))
    xt, wt, bt = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, w, b))
    g, = tl.autograd.grad(F.layer_norm(x, (5,), w, b).pow(3).sum(), [x], create_graph=True)
    gt, = torch.autograd.grad(tF.layer_norm(xt, (5,), wt, bt).pow(3).sum(), [xt], create_graph=True)
    assert_close(g, gt, atol=1e-10, rtol=1e-8)
    gg = tl.autograd.grad(g.pow(2).sum(), [x, w])
    ggt = torch.autograd.grad(gt.pow(2).sum(), [xt, wt])
    for a, b_ in zip(gg, ggt):
        assert_close(a, b_, atol=1e-8, rtol=1e-7)


def test_embedding(backward_mode):
    ours, theirs = nn.Embedding(10, 4, padding_idx=2), tnn.Embedding(10, 4, padding_idx=2)
    copy_weights(ours, theirs)
    idx = np.array([[1, 2, 3], [2, 9, 1]])
    ya, yb = ours(tl.tensor(idx)), theirs(torch.tensor(idx))
    assert_close(ya, yb)
    w = rand(2, 3, 4)
    (ya * tl.tensor(w)).sum().backward()
    (yb * torch.tensor(w)).sum().backward()
    assert_close(ours.weight.grad, theirs.weight.grad)
    assert np.all(ours.weight.grad.numpy()[2] == 0)
    with pytest.raises(IndexError, match=r"indices span \[1, 10\] but there are only 10"):
        ours(tl.tensor([1, 10]))
    assert np.all(nn.Embedding(5, 3, padding_idx=-1).weight.detach().numpy()[4] == 0)


@pytest.mark.parametrize("name,args", [("ReLU", ()), ("LeakyReLU", (0.2,)), ("GELU", ()), ("GELU", ("tanh",)),
                                       ("SiLU", ()), ("Sigmoid", ()), ("Tanh", ()), ("Softplus", (2.0, 5.0)),
                                       ("ELU", (0.7,)), ("Softmax", (1,)), ("LogSoftmax", (-1,)),
                                       ("Identity", ()), ("Flatten", ()), ("Flatten", (0, 1))])
def test_activation_and_shape_modules(backward_mode, name, args):
    run_both(getattr(nn, name)(*args), getattr(tnn, name)(*args), rand(3, 4, 5) * 2)


def test_unflatten():
    run_both(nn.Unflatten(1, (2, 3)), tnn.Unflatten(1, (2, 3)), rand(4, 6))


# ---- dropout -----------------------------------------------------------------------------------
def test_dropout_statistics_mask_and_gradient(backward_mode):
    tl.manual_seed(0)
    x = tl.ones(200, 500, requires_grad=True)
    y = F.dropout(x, 0.3)
    kept = y.detach().numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.7, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / 0.7, 0), rtol=1e-6)


def test_dropout_is_reproducible_and_identity_in_eval():
    tl.manual_seed(5)
    a = F.dropout(tl.ones(50), 0.5).numpy()
    tl.manual_seed(5)
    b = F.dropout(tl.ones(50), 0.5).numpy()
    np.testing.assert_array_equal(a, b)
    m = nn.Dropout(0.5).eval()
    x = tl.randn(4, 4)
    assert m(x) is x
    assert np.all(F.dropout(x, 1.0).numpy() == 0)
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


# ---- losses ------------------------------------------------------------------------------------
def logits_and_target(n=6, c=5, extra=(), seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, c) + extra).astype(np.float32) * 2,
            rng.integers(0, c, (n,) + extra).astype(np.int64))


def compare_loss(ours_fn, theirs_fn, x, *targets, atol=1e-5):
    a, b = tl.tensor(x.copy(), requires_grad=True), torch.tensor(x.copy(), requires_grad=True)
    la = ours_fn(a, *[tl.tensor(t) if t is not None else None for t in targets])
    lb = theirs_fn(b, *[torch.tensor(t) if t is not None else None for t in targets])
    assert_close(la, lb, atol=atol, msg="loss: ")
    w = np.random.default_rng(7).standard_normal(tuple(lb.shape)).astype(np.float32)
    (la * tl.tensor(w)).sum().backward()
    (lb * torch.tensor(w)).sum().backward()
    assert_close(a.grad, b.grad, atol=atol, msg="grad: ")


CE_CASES = [dict(), dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=1),
            dict(label_smoothing=0.1), dict(weight=True), dict(weight=True, label_smoothing=0.2, ignore_index=3),
            dict(weight=True, reduction="none", ignore_index=0)]


@pytest.mark.parametrize("kw", CE_CASES, ids=str)
@pytest.mark.parametrize("extra", [(), (3,), (2, 3)])
def test_cross_entropy_class_indices(backward_mode, kw, extra):
    x, t = logits_and_target(extra=extra)
    kw = dict(kw)
    w = np.linspace(0.5, 2.0, 5).astype(np.float32) if kw.pop("weight", False) else None
    compare_loss(lambda a, t, w: F.cross_entropy(a, t, w, **kw), lambda b, t, w: tF.cross_entropy(b, t, w, **kw),
                 x, t, w)


@pytest.mark.parametrize("kw", [dict(), dict(label_smoothing=0.3), dict(reduction="sum"), dict(weight=True)],
                         ids=str)
def test_cross_entropy_probabilities(backward_mode, kw):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    p = rng.random((4, 5, 3)).astype(np.float32)
    p /= p.sum(1, keepdims=True)
    kw = dict(kw)
    w = np.linspace(0.5, 2.0, 5).astype(np.float32) if kw.pop("weight", False) else None
    compare_loss(lambda a, t, w: F.cross_entropy(a, t, w, **kw), lambda b, t, w: tF.cross_entropy(b, t, w, **kw),
                 x, p, w)


def test_cross_entropy_unbatched_all_ignored_and_gradcheck():
    compare_loss(F.cross_entropy, tF.cross_entropy, np.array([1.0, -2.0, 0.5], np.float32), np.array(2))
    x, t = logits_and_target()
    la = F.cross_entropy(tl.tensor(x), tl.tensor(np.full(6, -100)))
    lb = tF.cross_entropy(torch.tensor(x), torch.tensor(np.full(6, -100)))
    assert np.isnan(la.item()) and np.isnan(lb.item())
    rng = np.random.default_rng(2)
    xx = tl.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    tt = tl.tensor([0, 2, 1, 1])
    w = tl.tensor([0.5, 1.0, 2.0], dtype=tl.float64)
    assert tl.autograd.gradcheck(lambda x: F.cross_entropy(x, tt, w, label_smoothing=0.1, ignore_index=1), (xx,))


def test_cross_entropy_errors():
    x = tl.randn(4, 3)
    with pytest.raises(IndexError, match="target 3 is out of bounds for 3 classes"):
        F.cross_entropy(x, tl.tensor([0, 1, 2, 3]))
    with pytest.raises(ValueError, match=r"expected target of shape \(4,\).*got \(4, 1\)"):
        F.cross_entropy(x, tl.tensor([[0], [1], [2], [0]]))
    with pytest.raises(ValueError, match="reduction must be one of"):
        F.cross_entropy(x, tl.tensor([0, 1, 2, 0]), reduction="avg")
    with pytest.raises(RuntimeError, match=r"weight of shape \(2,\) should be \(3,\)"):
        F.cross_entropy(x, tl.tensor([0, 1, 2, 0]), weight=tl.ones(2))


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum"), dict(ignore_index=2), dict(weight=True)], ids=str)
def test_nll_loss(backward_mode, kw):
    x, t = logits_and_target(extra=(3,))
    kw = dict(kw)
    w = np.linspace(0.5, 2.0, 5).astype(np.float32) if kw.pop("weight", False) else None
    compare_loss(lambda a, t, w: F.nll_loss(a.log_softmax(1), t, w, **kw),
                 lambda b, t, w: tF.nll_loss(b.log_softmax(1), t, w, **kw), x, t, w)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_and_binary_losses(backward_mode, reduction):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    y = rng.standard_normal((4, 3)).astype(np.float32)
    prob = rng.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
    t01 = (rng.random((4, 3)) > 0.5).astype(np.float32)
    w = rng.uniform(0.5, 2, (4, 3)).astype(np.float32)
    pw = rng.uniform(0.5, 3, (3,)).astype(np.float32)
    r = dict(reduction=reduction)
    compare_loss(lambda a, t: F.mse_loss(a, t, **r), lambda b, t: tF.mse_loss(b, t, **r), x, y)
    compare_loss(lambda a, t: F.l1_loss(a, t, **r), lambda b, t: tF.l1_loss(b, t, **r), x, y)
    compare_loss(lambda a, t, w: F.binary_cross_entropy(a, t, w, **r),
                 lambda b, t, w: tF.binary_cross_entropy(b, t, w, **r), prob, t01, w)
    compare_loss(lambda a, t, w, pw: F.binary_cross_entropy_with_logits(a, t, w, pos_weight=pw, **r),
                 lambda b, t, w, pw: tF.binary_cross_entropy_with_logits(b, t, w, pos_weight=pw, **r),
                 x * 10, t01, w, pw, atol=2e-5)


def test_loss_modules_match_functional():
    x, t = logits_and_target()
    for ours, theirs, args in [(nn.CrossEntropyLoss(label_smoothing=0.1), tnn.CrossEntropyLoss(label_smoothing=0.1),
                                (x, t)), (nn.MSELoss(), tnn.MSELoss(), (x, x[::-1].copy())),
                               (nn.L1Loss(reduction="sum"), tnn.L1Loss(reduction="sum"), (x, x * 2))]:
        assert_close(ours(*map(tl.tensor, args)), theirs(*map(torch.tensor, args)))


def test_loss_shape_mismatch_is_an_error_not_a_broadcast():
    with pytest.raises(ValueError, match=r"target shape \(4, 1\) must match input shape \(4,\)"):
        F.mse_loss(tl.zeros(4), tl.zeros(4, 1))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(tl.tensor([1.5]), tl.tensor([1.0]))


# ---- errors from layers ------------------------------------------------------------------------------
def test_layer_errors_name_shapes():
    with pytest.raises(RuntimeError, match=r"input of shape \(2, 5\) has 5 features but weight of shape \(3, 4\)"):
        nn.Linear(4, 3)(tl.zeros(2, 5))
    with pytest.raises(RuntimeError, match=r"has 2 channels, but weight of shape \(4, 3, 3, 3\)"):
        nn.Conv2d(3, 4, 3)(tl.zeros(1, 2, 8, 8))
    with pytest.raises(RuntimeError, match=r"expected a 3-D \(C, H, W\) or 4-D"):
        nn.Conv2d(3, 4, 3)(tl.zeros(3, 8))
    with pytest.raises(RuntimeError, match="larger than the padded input"):
        nn.Conv2d(1, 1, 5)(tl.zeros(1, 1, 3, 3))
    with pytest.raises(RuntimeError, match="at most half of the kernel size"):
        nn.MaxPool2d(2, padding=2)(tl.zeros(1, 1, 8, 8))
    with pytest.raises(ValueError, match=r"BatchNorm2d\(4\): input of shape \(2, 3, 5, 5\) has 3 channels"):
        nn.BatchNorm2d(4)(tl.zeros(2, 3, 5, 5))
    with pytest.raises(RuntimeError, match=r"normalized_shape \[4\] must match the trailing dims"):
        nn.LayerNorm(4)(tl.zeros(2, 5))
    with pytest.raises(RuntimeError, match="input dtype float64 and weight dtype float32 must match"):
        nn.Conv2d(1, 1, 1)(tl.zeros(1, 1, 2, 2, dtype=tl.float64))


def test_second_backward_through_fused_ops_is_refused():
    from tinygrad_like.autograd.function import SavedTensorsFreedError
    x = tl.randn(4, 3, requires_grad=True)
    for make in (lambda: F.cross_entropy(x, tl.tensor([0, 1, 2, 1])), lambda: F.dropout(x, 0.5).sum(),
                 lambda: F.layer_norm(x, (3,)).sum()):
        loss = make()
        loss.backward()
        with pytest.raises(SavedTensorsFreedError, match="retain_graph=True"):
            loss.backward()


def test_mixed_dtypes_and_bad_kernels_are_clear_errors():
    with pytest.raises(RuntimeError, match="layer_norm: weight dtype float64 must match the input's float32"):
        F.layer_norm(tl.randn(2, 3), (3,), tl.ones(3, dtype=tl.float64))
    with pytest.raises(RuntimeError, match="conv2d: bias dtype float64 must match the weight's float32"):
        F.conv2d(tl.randn(1, 1, 4, 4), tl.randn(2, 1, 3, 3), tl.zeros(2, dtype=tl.float64))
    with pytest.raises(RuntimeError, match="kernel must be at least 1x1"):
        nn.Conv2d(3, 4, 0)(tl.randn(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match="Only Tensors of floating point dtype can require gradients"):
        nn.Parameter(tl.tensor([1, 2]))
    assert nn.Parameter(tl.tensor([1, 2]), requires_grad=False).dtype is tl.int64
