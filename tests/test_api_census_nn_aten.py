"""torch's top-level layer functions (``torch.conv2d``, ``torch.native_layer_norm``, ``torch.lstm``, ...) against
torch, called with torch's own positional orders (its C++ operators'), and the synchronized batch norm's statistics
steps against their formulas (torch runs most of those on CUDA only)."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def close(a, b, rtol=1e-10, atol=1e-12):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, rtol, atol)
        return
    assert tuple(b.shape) == tuple(a.shape)
    np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol)


def both(name, *args, **kw):
    """``torch.<name>`` and ``tl.<name>`` on the same arguments (arrays become each library's tensors)."""
    def conv(lib, a):
        if isinstance(a, np.ndarray):
            return lib.tensor(a)
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
            return type(a)(lib.tensor(x) for x in a)
        return a
    return (getattr(torch, name)(*(conv(torch, a) for a in args), **kw),
            getattr(tl, name)(*(conv(tl, a) for a in args), **kw))


X4 = RNG.standard_normal((2, 6, 3, 3))
W6, B6 = RNG.standard_normal(6), RNG.standard_normal(6)


def test_native_norms():
    close(*both("native_layer_norm", X4, [3, 3], W6[:3].repeat(3).reshape(3, 3), None, 1e-5))
    close(*both("native_group_norm", X4, W6, B6, 2, 6, 9, 3, 1e-5))
    for training in (True, False):
        rm_t, rv_t, rm_o, rv_o = torch.zeros(6, dtype=torch.float64), torch.ones(6, dtype=torch.float64), \
            tl.zeros(6, dtype=tl.float64), tl.ones(6, dtype=tl.float64)
        a = torch.native_batch_norm(torch.tensor(X4), torch.tensor(W6), torch.tensor(B6), rm_t, rv_t, training, 0.1,
                                    1e-5)
        b = tl.native_batch_norm(tl.tensor(X4), tl.tensor(W6), tl.tensor(B6), rm_o, rv_o, training, 0.1, 1e-5)
        close(a, b)
        close(rm_t, rm_o)
        close(rv_t, rv_o)


def test_norms_in_operator_order():
    close(*both("batch_norm", X4, W6, B6, None, None, True, 0.1, 1e-5, False))
    close(*both("instance_norm", X4, W6, B6, None, None, True, 0.1, 1e-5, False))
    close(*both("group_norm", X4, 3, W6, B6))
    close(*both("layer_norm", X4, [3], None, None, 1e-5))
    close(*both("rms_norm", X4, [3, 3]))
    close(*both("norm_except_dim", X4, 2, 1))
    close(*both("norm_except_dim", X4, 2, -1))
    with pytest.raises(NotImplementedError, match="sparse"):
        tl.native_norm(tl.tensor(X4))


def test_batch_norm_update_stats_against_torch():
    rm_t, rv_t = torch.zeros(6, dtype=torch.float64), torch.ones(6, dtype=torch.float64)
    rm_o, rv_o = tl.zeros(6, dtype=tl.float64), tl.ones(6, dtype=tl.float64)
    close(torch.batch_norm_update_stats(torch.tensor(X4), rm_t, rv_t, 0.1),
          tl.batch_norm_update_stats(tl.tensor(X4), rm_o, rv_o, 0.1))
    close(rm_t, rm_o)
    close(rv_t, rv_o)


def test_sync_batch_norm_steps_reproduce_batch_norm():
    """Split a batch into two "processes", run the sync-BN steps, and get plain batch norm's output and gradient."""
    x = tl.tensor(X4)
    parts = [x[:1], x[1:]]
    stats = [tl.batch_norm_stats(p, 1e-5) for p in parts]
    mean = tl.stack([s[0] for s in stats])
    invstd = tl.stack([s[1] for s in stats])
    rm, rv = tl.zeros(6, dtype=tl.float64), tl.ones(6, dtype=tl.float64)
    g_mean, g_invstd = tl.batch_norm_gather_stats_with_counts(x, mean, invstd, rm, rv, 0.1, 1e-5,
                                                              tl.tensor([9.0, 9.0]))
    g_mean2, _ = tl.batch_norm_gather_stats(x, mean, invstd, None, None, 0.1, 1e-5, 9)
    close(g_mean, g_mean2)
    out = tl.batch_norm_elemt(x, tl.tensor(W6), tl.tensor(B6), g_mean, g_invstd, 1e-5)
    tm = torch.zeros(6, dtype=torch.float64)
    tv = torch.ones(6, dtype=torch.float64)
    xt = torch.tensor(X4, requires_grad=True)
    ref = torch.nn.functional.batch_norm(xt, tm, tv, torch.tensor(W6), torch.tensor(B6), True, 0.1, 1e-5)
    close(ref, out, rtol=1e-9)
    close(tm, rm, rtol=1e-9)
    close(tv, rv, rtol=1e-9)
    go = RNG.standard_normal(X4.shape)
    ref.backward(torch.tensor(go))
    sum_dy, sum_dy_xmu, gw, gb = tl.batch_norm_backward_reduce(tl.tensor(go), x, g_mean, g_invstd, tl.tensor(W6),
                                                               True, True, True)
    gx = tl.batch_norm_backward_elemt(tl.tensor(go), x, g_mean, g_invstd, tl.tensor(W6), sum_dy, sum_dy_xmu,
                                      tl.tensor([18], dtype=tl.int32))
    close(xt.grad, gx, rtol=1e-8, atol=1e-10)
    w_t = torch.tensor(W6, requires_grad=True)
    torch.nn.functional.batch_norm(torch.tensor(X4), None, None, w_t, None, True).backward(torch.tensor(go))
    close(w_t.grad, gw, rtol=1e-8)
    close(torch.tensor(go).sum((0, 2, 3)), gb)


def test_lookups_in_operator_order():
    emb = RNG.standard_normal((10, 4))
    idx = np.array([[1, 2], [3, 9]])
    close(torch.embedding(torch.tensor(emb), torch.tensor(idx)), tl.embedding(tl.tensor(emb), tl.tensor(idx)))
    close(torch.embedding(torch.tensor(emb), torch.tensor(idx), 2), tl.embedding(tl.tensor(emb), tl.tensor(idx), 2))
    flat, off = np.array([1, 2, 3, 9, 4]), np.array([0, 2])
    for mode in (0, 1, 2):
        a = torch.embedding_bag(torch.tensor(emb), torch.tensor(flat), torch.tensor(off), False, mode)
        b = tl.embedding_bag(tl.tensor(emb), tl.tensor(flat), tl.tensor(off), False, mode)
        close(a[0], b[0])
        close(a[1:], b[1:])
    e1, e2 = torch.tensor(emb.copy()), tl.tensor(emb.copy())
    torch.embedding_renorm_(e1, torch.tensor(flat), 1.0, 2.0)
    assert tl.embedding_renorm_(e2, tl.tensor(flat), 1.0, 2.0) is e2
    close(e1, e2)


def test_convolution_pooling_padding():
    x = RNG.standard_normal((2, 3, 7, 7))
    w, wt = RNG.standard_normal((4, 3, 3, 3)), RNG.standard_normal((3, 4, 3, 3))
    close(*both("conv2d", x, w, None, 2, 1))
    close(*both("conv1d", x[:, :, 0], w[:, :, 0], None, 1, 1))
    close(*both("conv_transpose2d", x, wt, None, 2, 1, 1))
    close(*both("convolution", x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1))
    close(*both("convolution", x, wt, None, [2, 2], [1, 1], [1, 1], True, [1, 1], 1))
    close(*both("constant_pad_nd", x, [1, 2, 0, 1], 3.0))
    x3 = x[:, :, 0]
    close(*both("max_pool1d", x3, 2))
    close(*both("max_pool2d", x, 3, 2, 1))
    close(*both("max_pool3d", x[None], 2))
    close(*both("avg_pool1d", x3, 3, 2, 1))
    close(*both("adaptive_avg_pool1d", x3, 3))
    close(*both("adaptive_max_pool1d", x3, 3))
    close(*both("max_pool1d_with_indices", x3, 2))
    close(*both("pixel_shuffle", RNG.standard_normal((1, 8, 2, 2)), 2))
    close(*both("channel_shuffle", x[:, :2], 2))


def test_losses_with_int_reductions():
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    t = np.sign(RNG.standard_normal(3))
    for red in (0, 1, 2):
        close(*both("binary_cross_entropy_with_logits", x, 1 / (1 + np.exp(-y)), None, None, red))
        close(*both("kl_div", x, np.abs(y), red))
        close(*both("hinge_embedding_loss", x, np.sign(y), 1.0, red))
        close(*both("margin_ranking_loss", x[:, 0], y[:, 0], t, 0.1, red))
        close(*both("cosine_embedding_loss", x, y, t, 0.1, red))
        close(*both("triplet_margin_loss", x, y, x + 1, 1.0, 2, 1e-6, False, red))
        close(*both("poisson_nll_loss", x, np.abs(y), True, False, 1e-8, red))
    close(*both("triplet_margin_loss", x, y, x + 1))  # (torch's operators reduce nothing by default)
    close(*both("kl_div", x, np.abs(y)))
    lp = np.log(RNG.dirichlet(np.ones(5), (6, 2)))
    close(*both("ctc_loss", lp, np.array([[1, 2], [3, 3]]), [6, 5], [2, 2], 0, 1, False))
    close(*both("cosine_similarity", x, y))
    close(*both("pairwise_distance", x, y))
    close(*both("pdist", x))


def test_grid_sampler_codes():
    theta = RNG.standard_normal((2, 2, 3))
    grid_t = torch.affine_grid_generator(torch.tensor(theta), [2, 3, 4, 5], False)
    grid_o = tl.affine_grid_generator(tl.tensor(theta), [2, 3, 4, 5], False)
    close(grid_t, grid_o)
    x = RNG.standard_normal((2, 3, 4, 5))
    for mode in (0, 1):
        for pad in (0, 1, 2):
            close(torch.grid_sampler(torch.tensor(x), grid_t, mode, pad, False),
                  tl.grid_sampler(tl.tensor(x), grid_o, mode, pad, False))
    close(torch.grid_sampler_2d(torch.tensor(x), grid_t, 0, 0, True), tl.grid_sampler_2d(tl.tensor(x), grid_o, 0, 0,
                                                                                          True))
    with pytest.raises(RuntimeError):
        tl.grid_sampler_3d(tl.tensor(x), grid_o, 0, 0, True)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional,batch_first,num_layers,bias", [(False, False, 1, True), (True, True, 2, True),
                                                                        (False, False, 2, False)])
def test_rnn_functions_over_flat_weights(mode, bidirectional, batch_first, num_layers, bias):
    if mode in ("lstm", "gru"):
        mod = getattr(torch.nn, mode.upper())(3, 4, num_layers, bias=bias, batch_first=batch_first,
                                              bidirectional=bidirectional)
    else:
        mod = torch.nn.RNN(3, 4, num_layers, nonlinearity=mode[4:], bias=bias, batch_first=batch_first,
                           bidirectional=bidirectional)
    dirs = 2 if bidirectional else 1
    x = RNG.standard_normal((2, 5, 3) if batch_first else (5, 2, 3)).astype(np.float32)  # (batch 2, 5 steps)
    h0, c0 = (RNG.standard_normal((num_layers * dirs, 2, 4)).astype(np.float32) for _ in range(2))
    tw = [p.detach().clone().requires_grad_() for p in mod._flat_weights]
    ow = [tl.tensor(p.detach().numpy(), requires_grad=True) for p in mod._flat_weights]
    xt = torch.tensor(x, requires_grad=True)
    xo = tl.tensor(x, requires_grad=True)
    hx_t = (torch.tensor(h0), torch.tensor(c0)) if mode == "lstm" else torch.tensor(h0)
    hx_o = (tl.tensor(h0), tl.tensor(c0)) if mode == "lstm" else tl.tensor(h0)
    a = getattr(torch, mode)(xt, hx_t, tw, bias, num_layers, 0.0, False, bidirectional, batch_first)
    b = getattr(tl, mode)(xo, hx_o, ow, bias, num_layers, 0.0, False, bidirectional, batch_first)
    close(a, b, rtol=1e-5, atol=1e-6)
    sum(t.sum() for t in a).backward()
    sum(t.sum() for t in b).backward()
    for p, q in zip(tw, ow):
        close(p.grad, q.grad, rtol=1e-4, atol=1e-5)
    close(xt.grad, xo.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode,gates", [("lstm", 4), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)])
def test_rnn_cells(mode, gates):
    x = RNG.standard_normal((2, 3))
    h, c = RNG.standard_normal((2, 4)), RNG.standard_normal((2, 4))
    wi, wh = RNG.standard_normal((gates * 4, 3)), RNG.standard_normal((gates * 4, 4))
    bi, bh = RNG.standard_normal(gates * 4), RNG.standard_normal(gates * 4)
    hx = (h, c) if mode == "lstm" else h
    close(*both(f"{mode}_cell", x, hx, wi, wh, bi, bh))
    close(*both(f"{mode}_cell", x, hx, wi, wh))


def test_dropouts_in_operator_order():
    ones = tl.ones(2000)
    out, mask = tl.native_dropout(ones, 0.3, True)
    assert mask.dtype == tl.bool and abs(float(mask.float().mean()) - 0.7) < 0.05
    np.testing.assert_allclose(_np(out)[_np(mask)], 1 / 0.7, rtol=1e-6)
    assert not _np(out)[~_np(mask)].any()
    out, mask = tl.native_dropout(ones, 0.3, False)
    assert bool(mask.all()) and bool((out == 1).all())
    fd = tl.feature_dropout(tl.ones(4, 50, 3), 0.5, True)
    per_channel = _np(fd)
    assert ((per_channel == 0) | (per_channel == 2)).all() and (per_channel == per_channel[..., :1]).all()
    assert bool((tl.dropout(ones, 0.5, False) == 1).all())
    y = tl.ones(3)
    assert tl.dropout_(y, 1.0, True) is y and not bool(y.any())
    for name in ("alpha_dropout", "feature_alpha_dropout"):
        np.testing.assert_allclose(_np(getattr(tl, name)(tl.ones(2, 3), 0.5, False)), 1.0)
    close(*both("threshold", X4, 0.1, 20.0))
    close(*both("hardshrink", X4, 0.4))
    close(*both("celu", X4, 0.7))
    close(*both("selu", X4))
    close(*both("prelu", X4, W6))
    close(*both("bilinear", X4[0, :2, 0], X4[0, :2, 1], RNG.standard_normal((5, 3, 3)), None))
