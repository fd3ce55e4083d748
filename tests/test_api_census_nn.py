"""The ``nn.functional`` names the torch census found missing, against torch: CTC loss (values and gradients
through ``log_softmax``), ``grid_sample`` / ``affine_grid`` (2-D and 3-D, every mode and padding mode, gradients to
input and grid), the probabilistic and multi-class margin losses, ``linear_cross_entropy``, LP and fractional max
pooling (torch's random samples passed to both), ``local_response_norm``, ``pdist``, ``channel_shuffle``,
``conv_tbc``, ``gumbel_softmax``, torch's dispatch helpers, and the float8 GEMMs as clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")

F, tF = tl.nn.functional, torch.nn.functional
RNG = np.random.default_rng(1234)


def _np(t):
    return t.detach().numpy()


def compare(ft, fo, *arrays, grad_of=(0,), rtol=1e-6, atol=1e-9, **kw):
    """Run torch's and our function on the same arrays; compare the outputs (all of a tuple) and the gradients of
    ``sum(out * w)`` (random ``w``) with respect to the arrays listed in ``grad_of``."""
    ts = [torch.tensor(a, requires_grad=i in grad_of) for i, a in enumerate(arrays)]
    os_ = [tl.tensor(a, requires_grad=i in grad_of) for i, a in enumerate(arrays)]
    a, b = ft(*ts, **kw), fo(*os_, **kw)
    if isinstance(a, tuple):
        for x, y in zip(a, b):
            np.testing.assert_allclose(_np(y), _np(x), rtol=rtol, atol=atol)
        a, b = a[0], b[0]
    np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol)
    if grad_of:
        w = RNG.standard_normal(tuple(a.shape))
        (a * torch.tensor(w, dtype=a.dtype)).sum().backward()
        (b * tl.tensor(w, dtype=b.dtype)).sum().backward()
        for i in grad_of:
            np.testing.assert_allclose(os_[i].grad.numpy(), ts[i].grad.numpy(), rtol=rtol * 10, atol=atol * 10)


# ---- CTC -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("concat", [False, True])
def test_ctc_loss_values_and_gradients(reduction, concat):
    t, n, c = 9, 3, 5
    x = RNG.standard_normal((t, n, c))
    lengths, tlens = [9, 7, 6], [3, 2, 3]
    padded = RNG.integers(1, c, (n, 3))
    padded[1, 1] = padded[1, 0]  # a repeated label needs a blank between
    targets = np.concatenate([padded[i, :tlens[i]] for i in range(n)]) if concat else padded

    def run(lib, fn):
        xt = lib.tensor(x, requires_grad=True)
        loss = fn(xt.log_softmax(-1), lib.tensor(targets), lengths, tlens, reduction=reduction)
        loss.sum().backward()
        return _np(loss), xt.grad.numpy()

    (la, ga), (lb, gb) = run(torch, tF.ctc_loss), run(tl, F.ctc_loss)
    np.testing.assert_allclose(lb, la, rtol=1e-10)
    np.testing.assert_allclose(gb, ga, rtol=1e-8, atol=1e-12)


def test_ctc_loss_gradient_of_log_probs_is_torchs():
    lp = np.log(RNG.dirichlet(np.ones(4), (6, 2)))
    a = torch.tensor(lp, requires_grad=True)
    b = tl.tensor(lp, requires_grad=True)
    tF.ctc_loss(a, torch.tensor([[1, 2], [3, 3]]), [6, 6], [2, 2]).backward()
    F.ctc_loss(b, tl.tensor([[1, 2], [3, 3]]), [6, 6], [2, 2]).backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_ctc_loss_impossible_alignment_and_zero_infinity():
    lp = np.log(np.full((2, 1, 3), 1 / 3))
    tgt = [[1, 1]]  # needs 3 frames (1, blank, 1): impossible in 2
    for zi in (False, True):
        a = tF.ctc_loss(torch.tensor(lp), torch.tensor(tgt), [2], [2], reduction="sum", zero_infinity=zi)
        b = F.ctc_loss(tl.tensor(lp), tl.tensor(tgt), [2], [2], reduction="sum", zero_infinity=zi)
        assert float(b) == float(a)


def test_ctc_loss_module_and_bad_blank():
    lp = tl.tensor(np.log(np.full((4, 1, 3), 1 / 3)))
    loss = tl.nn.CTCLoss(blank=2)(lp, tl.tensor([[0, 1]]), [4], [2])
    ref = torch.nn.CTCLoss(blank=2)(torch.tensor(lp.numpy()), torch.tensor([[0, 1]]), [4], [2])
    np.testing.assert_allclose(float(loss), float(ref), rtol=1e-6)
    with pytest.raises(RuntimeError):
        F.ctc_loss(lp, tl.tensor([[0, 1]]), [4], [2], blank=3)


# ---- spatial transformers -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("align", [True, False])
def test_affine_grid(nd, align):
    size = [2, 3, 4, 5] if nd == 2 else [2, 3, 3, 4, 5]
    theta = RNG.standard_normal((2, nd, nd + 1))
    compare(lambda t: tF.affine_grid(t, size, align_corners=align),
            lambda t: F.affine_grid(t, size, align_corners=align), theta)


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample(nd, align, mode, padding_mode):
    x = RNG.standard_normal((2, 3, 4, 5) if nd == 2 else (2, 2, 3, 4, 5))
    grid = RNG.uniform(-1.4, 1.4, (2, 3, 4, 2) if nd == 2 else (2, 2, 3, 4, 3))  # (some samples fall outside)
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align)
    compare(tF.grid_sample, F.grid_sample, x, grid, grad_of=(0, 1), rtol=1e-9, atol=1e-12, **kw)


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_bicubic(align, padding_mode):
    x, grid = RNG.standard_normal((2, 3, 4, 5)), RNG.uniform(-1.4, 1.4, (2, 3, 4, 2))
    compare(tF.grid_sample, F.grid_sample, x, grid, grad_of=(0, 1), rtol=1e-9, atol=1e-12, mode="bicubic",
            padding_mode=padding_mode, align_corners=align)


def test_grid_sample_default_align_warns_and_bad_mode():
    x, g = tl.zeros(1, 1, 2, 2), tl.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="align_corners"):
        F.grid_sample(x, g)
    with pytest.raises(ValueError, match="mode"):
        F.grid_sample(x, g, mode="cubic", align_corners=False)
    with pytest.raises(ValueError, match="bicubic"):
        F.grid_sample(tl.zeros(1, 1, 2, 2, 2), tl.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False)
    with pytest.raises(ValueError):
        F.affine_grid(tl.zeros(1, 3, 3), [1, 1, 2, 2], align_corners=False)


# ---- losses ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_gaussian_nll_loss(reduction):
    x, y, var = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3)), RNG.random((4, 3)) + 0.1
    for v in (var, var[:, :1].copy(), var[:, 0].copy()):
        compare(tF.gaussian_nll_loss, F.gaussian_nll_loss, x, y, v, grad_of=(0, 2), full=True, reduction=reduction)
    np.testing.assert_allclose(float(F.gaussian_nll_loss(tl.tensor(x), tl.tensor(y), 0.5)),
                               float(tF.gaussian_nll_loss(torch.tensor(x), torch.tensor(y), 0.5)), rtol=1e-12)
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(tl.tensor(x), tl.tensor(y), tl.tensor(-var))


@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [True, False])
def test_poisson_nll_loss(log_input, full):
    x = RNG.random((4, 3)) + 0.1
    y = RNG.integers(0, 5, (4, 3)).astype(float)
    compare(tF.poisson_nll_loss, F.poisson_nll_loss, x, y, log_input=log_input, full=full)
    compare(tF.poisson_nll_loss, F.poisson_nll_loss, x, y, log_input=log_input, full=full, reduction="none")


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multi_margin_loss(p, reduction):
    x, y, w = RNG.standard_normal((5, 4)), RNG.integers(0, 4, 5), RNG.random(4)
    compare(tF.multi_margin_loss, F.multi_margin_loss, x, y, p=p, margin=0.7, reduction=reduction)
    compare(lambda a, b, c: tF.multi_margin_loss(a, b, p=p, weight=c, reduction=reduction),
            lambda a, b, c: F.multi_margin_loss(a, b, p=p, weight=c, reduction=reduction), x, y, w)
    compare(tF.multi_margin_loss, F.multi_margin_loss, x[0], y[:1], p=p, reduction=reduction)
    with pytest.raises(ValueError):
        F.multi_margin_loss(tl.tensor(x), tl.tensor(y), p=3)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss(reduction):
    x = RNG.standard_normal((4, 5))
    t = np.array([[3, 0, -1, 1, 2], [1, 1, -1, 0, 0], [0, 1, 2, 3, 4], [-1, 2, 3, 0, 0]])
    compare(tF.multilabel_margin_loss, F.multilabel_margin_loss, x, t, reduction=reduction)
    compare(tF.multilabel_margin_loss, F.multilabel_margin_loss, x[0], t[0], reduction=reduction)


def test_multilabel_soft_margin_and_triplet_with_distance():
    x, t, w = RNG.standard_normal((4, 3)), (RNG.random((4, 3)) > 0.5).astype(float), RNG.random(3)
    compare(tF.multilabel_soft_margin_loss, F.multilabel_soft_margin_loss, x, t)
    compare(lambda a, b, c: tF.multilabel_soft_margin_loss(a, b, c, reduction="none"),
            lambda a, b, c: F.multilabel_soft_margin_loss(a, b, c, reduction="none"), x, t, w)
    a, p, n = RNG.standard_normal((3, 4, 5))
    compare(tF.triplet_margin_with_distance_loss, F.triplet_margin_with_distance_loss, a, p, n, grad_of=(0, 1, 2),
            swap=True)
    compare(lambda *z: tF.triplet_margin_with_distance_loss(
        *z, distance_function=lambda u, v: 1 - tF.cosine_similarity(u, v), margin=0.5, reduction="sum"),
        lambda *z: F.triplet_margin_with_distance_loss(
            *z, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=0.5, reduction="sum"),
        a, p, n, grad_of=(0, 1, 2))
    with pytest.raises(ValueError):
        F.triplet_margin_with_distance_loss(tl.tensor(a), tl.tensor(p), tl.tensor(n), margin=0)


def test_linear_cross_entropy():
    x, w, b = RNG.standard_normal((6, 4)), RNG.standard_normal((5, 4)), RNG.standard_normal(5)
    y = np.array([0, 4, 2, -100, 1, 3])
    compare(lambda i, lw, t, lb: tF.linear_cross_entropy(i, lw, t, linear_bias=lb, label_smoothing=0.1),
            lambda i, lw, t, lb: F.linear_cross_entropy(i, lw, t, linear_bias=lb, label_smoothing=0.1),
            x, w, y, b, grad_of=(0, 1, 3))
    wk = RNG.standard_normal((5, 2, 4))  # a K-dimensional loss: one class score per (class, extra dim)
    yk = RNG.integers(0, 5, (6, 2))
    compare(lambda i, lw, t: tF.linear_cross_entropy(i, lw, t, reduction="none"),
            lambda i, lw, t: F.linear_cross_entropy(i, lw, t, reduction="none"), x, wk, yk, grad_of=(0, 1))
    with pytest.raises(RuntimeError, match="in_features"):
        F.linear_cross_entropy(tl.tensor(x), tl.tensor(w[:, :3]), tl.tensor(y))


# ---- pooling, normalization, shuffles, distances ---------------------------------------------------------------
@pytest.mark.parametrize("case", [
    (1, (2, 3, 9), dict(norm_type=2, kernel_size=3)),
    (2, (2, 3, 9, 8), dict(norm_type=3, kernel_size=(3, 2), stride=2, ceil_mode=True)),
    (3, (2, 3, 5, 6, 4), dict(norm_type=1.5, kernel_size=2)),
])
def test_lp_pool(case):
    nd, shape, kw = case
    x = RNG.random(shape) + 0.1
    compare(getattr(tF, f"lp_pool{nd}d"), getattr(F, f"lp_pool{nd}d"), x, **kw)
    mod_t = getattr(torch.nn, f"LPPool{nd}d")(**kw)
    mod_o = getattr(tl.nn, f"LPPool{nd}d")(**kw)
    np.testing.assert_allclose(_np(mod_o(tl.tensor(x))), _np(mod_t(torch.tensor(x))), rtol=1e-9)
    assert repr(mod_o) == repr(mod_t)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fractional_max_pool(dtype):
    x2, s2 = RNG.standard_normal((2, 3, 11, 10)).astype(dtype), RNG.random((2, 3, 2)).astype(dtype)
    kw = dict(output_size=(5, 4), return_indices=True)
    compare(lambda a, s: tF.fractional_max_pool2d(a, 3, _random_samples=s, **kw),
            lambda a, s: F.fractional_max_pool2d(a, 3, _random_samples=s, **kw), x2, s2)
    compare(lambda a, s: tF.fractional_max_pool2d(a, 2, output_ratio=(0.5, 0.5), _random_samples=s),
            lambda a, s: F.fractional_max_pool2d(a, 2, output_ratio=(0.5, 0.5), _random_samples=s), x2, s2)
    x3, s3 = RNG.standard_normal((2, 2, 7, 8, 9)).astype(dtype), RNG.random((2, 2, 3)).astype(dtype)
    compare(lambda a, s: tF.fractional_max_pool3d_with_indices(a, 2, (4, 5, 3), _random_samples=s),
            lambda a, s: F.fractional_max_pool3d_with_indices(a, 2, (4, 5, 3), _random_samples=s), x3, s3)
    out = tl.nn.FractionalMaxPool2d(3, output_ratio=0.5)(tl.tensor(x2))  # drawn from our generator
    assert out.shape == (2, 3, 5, 5)
    with pytest.raises(RuntimeError):
        F.fractional_max_pool2d(tl.tensor(x2), 4, output_size=(10, 10))


@pytest.mark.parametrize("shape,size", [((2, 7, 4, 3), 3), ((2, 6, 5), 4), ((1, 5, 2, 2, 2), 2)])
def test_local_response_norm(shape, size):
    x = RNG.standard_normal(shape)
    compare(tF.local_response_norm, F.local_response_norm, x, size=size, alpha=0.1, beta=0.6, k=2.0)
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(tl.zeros(2, 3), 2)


@pytest.mark.parametrize("p", [1, 2, 3, 0.5, float("inf")])
def test_pdist(p):
    compare(tF.pdist, F.pdist, RNG.standard_normal((5, 4)), p=p)


def test_channel_shuffle_conv_tbc():
    compare(tF.channel_shuffle, F.channel_shuffle, RNG.standard_normal((2, 6, 3, 2)), groups=3)
    # (torch's native_channel_shuffle has no derivative; ours is channel_shuffle's, so only values are compared)
    compare(tF.native_channel_shuffle, F.native_channel_shuffle, RNG.standard_normal((2, 4, 3)), grad_of=(), groups=2)
    with pytest.raises(RuntimeError, match="divisible"):
        F.channel_shuffle(tl.zeros(1, 5, 2), 2)
    x, w, b = RNG.standard_normal((7, 2, 3)), RNG.standard_normal((3, 3, 4)), RNG.standard_normal(4)
    compare(torch.conv_tbc, F.conv_tbc, x, w, b, grad_of=(0, 1, 2), pad=1)


def test_gumbel_softmax():
    tl.manual_seed(0)
    logits = tl.tensor(np.log([[0.7, 0.2, 0.1]] * 4000), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(_np(soft.sum(-1)), 1.0, rtol=1e-6)
    hard = F.gumbel_softmax(logits, hard=True)
    assert set(np.unique(_np(hard))) <= {0.0, 1.0}
    np.testing.assert_allclose(_np(hard.mean(0)), [0.7, 0.2, 0.1], atol=0.03)  # Gumbel-max samples the categorical
    hard.sum().backward()  # straight-through: the gradient is the soft sample's
    assert logits.grad is not None and logits.grad.shape == logits.shape


def test_torch_function_helpers_and_float8_gemms():
    assert F.Tensor is tl.Tensor
    assert F.has_torch_function((tl.zeros(1),)) is False
    assert F.has_torch_function_unary(tl.zeros(1)) is False
    assert F.has_torch_function_variadic(tl.zeros(1), 2) is False
    assert F.handle_torch_function(lambda a, b=0: a + b, (), 1, b=2) == 3
    with pytest.raises(AssertionError, match="kernel_size"):
        F.assert_int_or_pair([1, 2, 3], "kernel_size", "{} must be an int or a pair")
    fn = F.boolean_dispatch("flag", 1, False, lambda x, flag=False: ("t", x), lambda x, flag=False: ("f", x),
                            "m", "fn")
    assert fn(1) == ("f", 1) and fn(1, True) == ("t", 1) and fn(1, flag=True) == ("t", 1) and fn.__name__ == "fn"
    assert [m.name for m in F.ScalingType] == [m for m in tF.ScalingType.__members__]
    assert [m.name for m in F.SwizzleType] == [m for m in tF.SwizzleType.__members__]
    for name in ("scaled_mm", "grouped_mm", "scaled_grouped_mm"):
        with pytest.raises(NotImplementedError, match="float8"):
            getattr(F, name)(tl.zeros(2, 2), tl.zeros(2, 2))


def test_prelu_hardshrink_methods():
    x, w = RNG.standard_normal((2, 3, 4)), RNG.random(3)
    np.testing.assert_allclose(_np(tl.tensor(x).prelu(tl.tensor(w))), _np(torch.tensor(x).prelu(torch.tensor(w))))
    np.testing.assert_allclose(_np(tl.tensor(x).hardshrink(0.3)), _np(torch.tensor(x).hardshrink(0.3)))
