"""Devices and precision on a CPU machine: PyTorch's calls are accepted, as no-ops or pass-throughs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")

no_cuda = pytest.mark.skipif(tl.cuda.is_available(), reason="checks the behaviour without CUDA")


def test_flags_are_settable_and_readable():
    for lib in (tl, torch):
        b = lib.backends
        old = (b.cuda.matmul.allow_tf32, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32,
               b.cudnn.enabled)
        assert old == (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.benchmark,
                       torch.backends.cudnn.deterministic, torch.backends.cudnn.allow_tf32,
                       torch.backends.cudnn.enabled) or lib is torch
        b.cuda.matmul.allow_tf32 = True
        b.cudnn.benchmark = True
        b.cudnn.deterministic = True
        assert b.cuda.matmul.allow_tf32 and b.cudnn.benchmark and b.cudnn.deterministic
        (b.cuda.matmul.allow_tf32, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32,
         b.cudnn.enabled) = old
    assert tl.backends.mps.is_available() is False and tl.backends.cudnn.is_available() is False
    with tl.backends.cudnn.flags(enabled=False, deterministic=True):
        assert tl.backends.cudnn.deterministic and not tl.backends.cudnn.enabled
    assert tl.backends.cudnn.enabled and not tl.backends.cudnn.deterministic
    assert tl.backends.numpy_backend is not None  # (the backend package is still the backend package)


@no_cuda
def test_cuda_calls_without_cuda():
    before = tl.rand(3).tolist()
    tl.manual_seed(0)
    a = tl.rand(3).tolist()
    tl.manual_seed(0)
    tl.cuda.manual_seed(123)
    tl.cuda.manual_seed_all(123)
    assert tl.rand(3).tolist() == a  # no-ops: the CPU stream is untouched (as in torch)
    assert before is not None
    assert tl.cuda.is_available() is False and tl.cuda.device_count() == 0
    assert tl.cuda.is_initialized() is False
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        tl.cuda.current_device()


@no_cuda
def test_default_device_and_accelerator():
    assert str(tl.get_default_device()) == "cpu" == str(torch.get_default_device())
    tl.set_default_device("cpu")
    tl.set_default_device(None)
    tl.set_default_device(tl.device("cpu"))
    assert tl.zeros(1).device == tl.device("cpu")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        tl.set_default_device("cuda")
    assert tl.accelerator.is_available() is torch.accelerator.is_available() is False
    assert tl.accelerator.current_accelerator() is None is torch.accelerator.current_accelerator()
    assert tl.accelerator.device_count() == 0


def test_to_accepts_non_blocking_as_torch():
    """``x.to(device, non_blocking=True)`` in a training loop (found by tests/programs/cnn_digits.py)."""
    for lib in (tl, torch):
        x = lib.arange(6, dtype=lib.float32).reshape(2, 3)
        dev = lib.device("cpu")
        y = x.to(dev, non_blocking=True)
        z = x.to(dev, lib.float64, non_blocking=False, copy=True)
        w = x.to(device="cpu", dtype=lib.int64, non_blocking=True)
        m = lib.nn.Linear(3, 2).to(dev, non_blocking=True)
        assert y is x and z.dtype == lib.float64 and w.dtype == lib.int64 and z.tolist() == x.tolist()
        assert m(y).shape == (2, 2)
        if lib.cuda.is_available():
            x.cuda(non_blocking=True)
            m.cuda(non_blocking=True)


def test_autocast_runs_in_full_precision():
    m = tl.nn.Linear(3, 2)
    x = tl.randn(4, 3)
    with tl.autocast("cpu"):
        assert tl.amp.is_autocast_enabled("cpu")
        y = m(x)
    assert not tl.amp.is_autocast_enabled("cpu")
    assert y.dtype is tl.float32
    np.testing.assert_array_equal(y.detach().numpy(), m(x).detach().numpy())
    with tl.amp.autocast(device_type="cpu", dtype=tl.float16, enabled=False):
        assert not tl.amp.is_autocast_enabled("cpu")

    @tl.autocast("cpu")
    def f(t):
        return tl.amp.is_autocast_enabled("cpu"), t * 2

    assert f(x)[0] is True
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'gpu'"):
        tl.autocast("gpu")


@no_cuda
def test_cuda_autocast_and_scaler_disable_with_a_warning_like_torch():
    for lib in (tl, torch):
        with pytest.warns(UserWarning, match="CUDA is not available.*Disabling"):
            ctx = lib.autocast("cuda")
        with ctx:
            pass
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.cuda.amp.GradScaler() if lib is tl else lib.amp.GradScaler("cuda")
            s2 = lib.amp.GradScaler()
        for sc in (s, s2):
            assert sc.is_enabled() is False and sc.get_scale() == 1.0
            loss = lib.ones(1, requires_grad=True)
            assert sc.scale(loss) is loss


def _train(lib, scaler_device, overflow_at=None, steps=4):
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((2, 3)).astype(np.float32)
    w = lib.tensor(w0, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler(scaler_device, init_scale=2.0 ** 10, growth_interval=2)
    scales, vals = [], []
    for step in range(steps):
        x = lib.tensor(rng.standard_normal((4, 3)).astype(np.float32))
        loss = (x @ w.T).pow(2).mean()
        if step == overflow_at:
            loss = loss * float("inf")
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        vals.append(w.detach().numpy().copy())
    return scales, vals


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # (the inf loss's nan gradients)
@pytest.mark.parametrize("overflow_at", [None, 1])
def test_grad_scaler_on_cpu_matches_torch(overflow_at):
    s1, v1 = _train(tl, "cpu", overflow_at)
    s2, v2 = _train(torch, "cpu", overflow_at)
    assert s1 == s2
    for a, b in zip(v1, v2):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_grad_scaler_errors_and_state():
    w = tl.ones(2, requires_grad=True)
    opt = tl.optim.SGD([w], lr=0.1)
    s = tl.amp.GradScaler("cpu")
    s.scale((w * 2).sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
        s.step(opt)
    s.update()
    sd = s.state_dict()
    s2 = tl.amp.GradScaler("cpu", init_scale=1.0)
    s2.load_state_dict(sd)
    assert s2.get_scale() == s.get_scale()
    assert set(sd) == set(torch.amp.GradScaler("cpu").state_dict())


def test_set_default_device_moves_factories_and_modules(dev):
    """Factories (and so module parameters) follow ``set_default_device``; from_numpy, *_like and an explicit
    ``device=`` do not, as in PyTorch. ``with device:`` sets the default for a block and restores it after."""
    try:
        tl.set_default_device("testdev")
        assert tl.get_default_device() is dev
        for t in (tl.tensor([1.0, 2.0]), tl.zeros(2), tl.ones(2, 3), tl.arange(4), tl.randn(3), tl.full((2,), 7),
                  tl.eye(2), tl.linspace(0, 1, 5), tl.empty(3), tl.randint(0, 5, (2,)), tl.randperm(4),
                  tl.tril_indices(3, 3), tl.normal(0.0, 1.0, (2,))):
            assert t.device == dev, t
        lin = tl.nn.Linear(3, 2)
        assert {p.device for p in lin.parameters()} == {dev}
        assert lin(tl.ones(4, 3)).device == dev
        assert tl.from_numpy(np.zeros(2, np.float32)).device == tl.device("cpu")
        assert tl.zeros(2, device="cpu").device == tl.device("cpu")
        assert tl.zeros_like(tl.zeros(2, device="cpu")).device == tl.device("cpu")
    finally:
        tl.set_default_device(None)
    assert tl.zeros(1).device == tl.device("cpu") and tl.get_default_device() == "cpu"
    with tl.device("testdev") as d:
        assert d is dev and tl.ones(2).device == dev
        with tl.device("cpu"):
            assert tl.ones(2).device == tl.device("cpu")
        assert tl.ones(2).device == dev
    assert tl.ones(2).device == tl.device("cpu")
    with pytest.raises(RuntimeError, match="unknown device 'tpu'"):
        tl.set_default_device("tpu")
    assert tl.get_default_device() == "cpu"


_CPU_INDEX_OPS = {
    "gather": lambda F, x, i: x.gather(1, i[:, :2]),
    "scatter_add": lambda F, x, i: x.scatter_add(1, i[:, :2], x[:, :2]),
    "index_select": lambda F, x, i: x.index_select(0, i[:, 0]),
    "take": lambda F, x, i: x.take(i),
    "take_along_dim": lambda F, x, i: x.take_along_dim(i, 1),
    "repeat_interleave": lambda F, x, i: x.repeat_interleave(i[:, 0], dim=0),
    "embedding": lambda F, x, i: F.embedding(i, x),
    "embedding_bag": lambda F, x, i: F.embedding_bag(i, x),
    "cross_entropy": lambda F, x, i: F.cross_entropy(x, i[:, 0]),
    "nll_loss": lambda F, x, i: F.nll_loss(x, i[:, 0]),
}


@pytest.mark.parametrize("op", sorted(_CPU_INDEX_OPS))
def test_an_index_on_another_device_is_refused_by_name(dev, op):
    """torch refuses a CPU index for a tensor on an accelerator in these ops; so do we, naming both devices
    (before this, some raised AttributeErrors from inside the backend, or silently read a host array)."""
    x = tl.randn(3, 4, device=dev, requires_grad=True)
    i = tl.tensor([[0, 1, 2], [2, 0, 1], [1, 1, 0]])
    with pytest.raises(RuntimeError, match=r"expected .* on testdev:0, .* but got it on cpu"):
        _CPU_INDEX_OPS[op](tl.nn.functional, x, i)
    got = _CPU_INDEX_OPS[op](tl.nn.functional, x, i.to(dev))  # moved, it works and matches the CPU
    want = _CPU_INDEX_OPS[op](tl.nn.functional, x.detach().cpu(), i)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.numpy(), rtol=1e-6)


def test_advanced_indexing_accepts_cpu_indices_on_any_device_as_torch(dev):
    x = tl.arange(12.0, device=dev).reshape(3, 4).requires_grad_()
    i = tl.tensor([2, 0])
    y = x[i, 1:]
    assert y.device == dev
    np.testing.assert_array_equal(y.detach().cpu().numpy(), [[9, 10, 11], [1, 2, 3]])
    y.sum().backward()
    assert x.grad.device == dev and x.grad.cpu().numpy().sum() == 6
    z = x.detach().clone()
    z[i] = 0.0
    z.index_put_((i, tl.tensor([3, 3])), tl.tensor(-1.0, device=dev))
    np.testing.assert_array_equal(z.cpu().numpy()[[0, 2]], [[0, 0, 0, -1], [0, 0, 0, -1]])
    with pytest.raises(IndexError, match=r"either on cpu or on the same device as the indexed tensor \(cpu\)"):
        tl.zeros(3)[tl.tensor([1], device=dev)]
