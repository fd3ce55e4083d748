"""The one-pass kernels behind common in-place and backward work: ``axpy`` (``add_``/``sub_`` outside autograd, an
SGD step) and the bitwise ``masked`` select behind relu's and max-pool's gradients. Each must give exactly what the
general path gives, with the same refusals, versions and write records."""

from __future__ import annotations

import numpy as np
import pytest
from emu_driver import cuda_device

import tinygrad_like as tl
from tinygrad_like.backends.numpy_nn import masked


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("invert", [False, True])
def test_masked_is_a_select_that_gives_plus_zero(dtype, invert):
    rng = np.random.default_rng(0)
    g = rng.standard_normal((7, 33)).astype(dtype)
    g[0, :4] = [np.inf, -np.inf, np.nan, -0.0]
    g[1, :3] = [-1.5, np.inf, np.nan]
    mask = rng.random((7, 33)) > 0.5
    mask[0, :4] = False
    mask[1, :3] = True
    keep = ~mask if invert else mask
    want = np.where(keep, g, dtype(0))
    got = masked(g, mask, invert=invert)
    assert got.dtype == dtype and got.shape == g.shape
    np.testing.assert_array_equal(got, want)  # (NaN equals NaN here)
    assert not np.signbit(got[~keep]).any(), "a dropped element must be +0.0, not -0.0"
    out = np.full_like(g, 7)
    masked(g.T, mask.T, out=out.T, invert=invert)
    np.testing.assert_array_equal(out, want)  # strided operands and out= work too
    np.testing.assert_array_equal(masked(g, mask[:1], invert=invert), np.where(np.broadcast_to(keep[:1], g.shape),
                                                                                g, dtype(0)))  # a broadcast mask


def test_relu_backward_lets_nan_outputs_through_and_drops_infinite_gradients():
    be = tl.device("cpu").raw_backend
    y = np.array([0.0, 1.0, np.nan, 0.0, 2.0], np.float32)
    g = np.array([np.inf, -3.0, 5.0, -2.0, np.nan], np.float32)
    got = be.relu_backward(g, y)
    np.testing.assert_array_equal(got, [0.0, -3.0, 5.0, 0.0, np.nan])
    assert not np.signbit(got[[0, 3]]).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("alpha", [1, -1, 0.1, -0.01])
def test_add_and_sub_outside_autograd_match_the_general_path(alpha, dtype):
    """Exactly ``p + g * alpha`` (the general path's arithmetic), within two roundings of the fused result torch's
    kernel gives."""
    rng = np.random.default_rng(1)
    p0, g0 = rng.standard_normal((50, 60)).astype(dtype), rng.standard_normal((50, 60)).astype(dtype)
    p, g = tl.tensor(p0.copy()), tl.tensor(g0)
    v = p._version
    assert p.add_(g, alpha=alpha) is p
    # float32 in float64 is exact: the product, then one rounding (a fused multiply-add's result)
    fused = (p0.astype(np.float64) + g0.astype(np.float64) * np.float64(dtype(alpha))).astype(dtype)
    # an error bound for two roundings instead of one (cancellation makes "units in the last place" meaningless)
    bound = np.finfo(dtype).eps * (np.abs(p0) + np.abs(g0 * dtype(alpha))).astype(np.float64)
    general = p0 + g0 * dtype(alpha) if alpha not in (1, -1) else p0 + g0 if alpha == 1 else p0 - g0
    np.testing.assert_array_equal(p.numpy(), general)
    assert (np.abs(p.numpy().astype(np.float64) - fused) <= bound).all()
    assert p._version == v + 1 and p.storage.bumps[-1].op == "add_"
    p.sub_(g, alpha=alpha)
    assert p._version == v + 2 and p.storage.bumps[-1].op == "sub_"
    q = tl.tensor(p0.copy())
    q[::2].add_(g[::2], alpha=alpha)  # strided views (axpy on views): same values where written, the rest kept
    assert (np.abs(q.numpy()[::2].astype(np.float64) - fused[::2]) <= bound[::2]).all()
    np.testing.assert_array_equal(q.numpy()[1::2], p0[1::2])


def test_an_sgd_step_is_one_axpy_per_parameter_and_matches_torch_arithmetic():
    torch = pytest.importorskip("torch")
    w0 = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    w, wt = tl.tensor(w0.copy(), requires_grad=True), torch.tensor(w0.copy(), requires_grad=True)
    for t in (w, wt):
        (t * t).sum().backward()
    opt, opt_t = tl.optim.SGD([w], lr=0.1), torch.optim.SGD([wt], lr=0.1)
    with tl.profile() as prof:
        opt.step()
    opt_t.step()
    assert [k.name for k in prof.kernels] == ["axpy"]
    np.testing.assert_allclose(w.detach().numpy(), wt.detach().numpy(), rtol=0, atol=1e-7)


def test_the_fast_path_keeps_the_refusals():
    w = tl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(tl.ones(3))  # autograd on: the general path refuses, as before
    x = tl.arange(6.0)
    with pytest.raises(RuntimeError, match="single memory location"):
        x[1:].add_(x[:-1])  # partial overlap
    e = tl.zeros(1).expand(3)
    with pytest.raises(RuntimeError, match="single memory location"):
        e.add_(tl.ones(3))  # an expanded (self-overlapping) target
    y = tl.zeros(2, 3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        tl.zeros(3).add_(y)  # another shape: the general path and its error


def test_axpy_on_the_device_backends(dev):
    a, b = tl.tensor([1.0, 2.0]).to("testdev"), tl.tensor([10.0, 20.0]).to("testdev")
    a.add_(b, alpha=0.5)
    a.sub_(b)
    assert a.cpu().tolist() == [-4.0, -8.0]


@pytest.fixture(scope="module")
def cuda():
    yield from cuda_device()


def test_axpy_on_cuda_runs_kernels_not_the_host_fallback(cuda):
    a, b = tl.tensor([1.0, 2.0, 3.0]).to(cuda), tl.tensor([10.0, 20.0, 30.0]).to(cuda)
    before = dict(cuda.raw_backend.fallbacks)
    a.add_(b, alpha=0.5)
    a.sub_(b)
    assert a.cpu().tolist() == [-4.0, -8.0, -12.0]
    assert dict(cuda.raw_backend.fallbacks) == before


@pytest.mark.parametrize("m,k,n", [(8, 53760, 9), (16, 14336, 72), (8, 4096 + 17, 9), (64, 5000, 576), (3, 100, 4)])
def test_long_products_in_pieces_equal_the_one_product(m, k, n):
    from tinygrad_like.backends.numpy_nn import _gemm_nt

    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((n, k)).astype(np.float32)
    got = _gemm_nt(a, b)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    assert got.shape == (m, n) and got.dtype == np.float32 and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * np.abs(want).max())


def test_a_large_batch_convolution_weight_gradient_matches_torch():
    """Large enough (K = 16 x 28 x 30 output positions) for the weight gradient to be computed in pieces."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x0 = rng.standard_normal((16, 2, 28, 28)).astype(np.float32)
    w0 = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    x, w = tl.tensor(x0), tl.tensor(w0, requires_grad=True)
    xt, wt = torch.tensor(x0), torch.tensor(w0, requires_grad=True)
    (tl.nn.functional.conv2d(x, w, padding=1) ** 2).sum().backward()
    (torch.nn.functional.conv2d(xt, wt, padding=1) ** 2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_mul_by_a_number_outside_autograd_is_one_in_place_scale(dtype):
    x0 = np.random.default_rng(5).standard_normal((3, 4)).astype(dtype)
    x = tl.tensor(x0.copy())
    v = x._version
    with tl.profile() as prof:
        assert x.mul_(0.9) is x
    assert [k.name for k in prof.kernels] == ["scale"]
    np.testing.assert_array_equal(x.numpy(), (tl.tensor(x0) * 0.9).numpy())  # exactly what the general path gives
    assert x.dtype.np == dtype and x._version == v + 1 and x.storage.bumps[-1].op == "mul_"
    w = tl.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.mul_(2)


def test_a_momentum_sgd_step_is_three_in_place_kernels_and_matches_torch():
    torch = pytest.importorskip("torch")
    w0 = np.random.default_rng(6).standard_normal((4, 3)).astype(np.float32)
    w, wt = tl.tensor(w0.copy(), requires_grad=True), torch.tensor(w0.copy(), requires_grad=True)
    opt, opt_t = tl.optim.SGD([w], lr=0.1, momentum=0.9), torch.optim.SGD([wt], lr=0.1, momentum=0.9)
    for step in range(3):
        for t, o in ((w, opt), (wt, opt_t)):
            o.zero_grad()
            (t * t * (step + 1)).sum().backward()
        with tl.profile() as prof:
            opt.step()
        opt_t.step()
        if step:  # (the first step copies the gradient into the new momentum buffer)
            assert [k.name for k in prof.kernels] == ["scale", "axpy", "axpy"]
        np.testing.assert_allclose(w.detach().numpy(), wt.detach().numpy(), rtol=0, atol=1e-6)
