"""The ``torch.nn`` classes the census found missing, against torch: the Lazy modules (shapes inferred at the first
call, then the ordinary class), ``BatchNorm3d``, ``SyncBatchNorm`` in one process, ``CrossMapLRN2d`` (torch's
running-sum forward and its own backward), ``AdaptiveLogSoftmaxWithLoss``, the new loss modules, ``Buffer``,
``Container``, ``nn.grad``'s convolution gradients, and the quantization families as clear errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(99)


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("name,args,shape,weight_shape", [
    ("LazyLinear", (4,), (2, 3), (4, 3)),
    ("LazyConv1d", (4, 3), (3, 6), (4, 3, 3)),
    ("LazyConv2d", (4, 3), (2, 3, 5, 5), (4, 3, 3, 3)),
    ("LazyConv3d", (4, 3), (1, 2, 4, 4, 4), (4, 2, 3, 3, 3)),
    ("LazyConvTranspose1d", (4, 3), (2, 6, 5), (6, 4, 3)),
    ("LazyConvTranspose2d", (4, 3), (2, 3, 5, 5), (3, 4, 3, 3)),
    ("LazyConvTranspose3d", (4, 2), (1, 2, 3, 3, 3), (2, 4, 2, 2, 2)),
])
def test_lazy_layers_infer_their_input_size(name, args, shape, weight_shape):
    ours, theirs = getattr(tl.nn, name)(*args), getattr(torch.nn, name)(*args)
    assert isinstance(ours.weight, tl.nn.UninitializedParameter)
    params_before = list(ours.parameters())
    x = RNG.standard_normal(shape).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch warns that lazy modules are a new feature)
        yt = theirs(torch.tensor(x))
    yo = ours(tl.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == name[4:]
    assert ours.weight.shape == tuple(theirs.weight.shape) == weight_shape
    assert yo.shape == tuple(yt.shape)
    assert params_before[0] is ours.weight  # the optimizer's references stay valid
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(_np(ours(tl.tensor(x))), _np(theirs(torch.tensor(x))), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,shape", [("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm2d", (2, 3, 4, 4)),
                                        ("LazyBatchNorm3d", (2, 3, 2, 2, 2)), ("LazyInstanceNorm2d", (2, 3, 4, 4))])
def test_lazy_norms(name, shape):
    kw = dict(affine=True, track_running_stats=True) if "Instance" in name else {}
    ours, theirs = getattr(tl.nn, name)(**kw), getattr(torch.nn, name)(**kw)
    x = RNG.standard_normal(shape).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yt = theirs(torch.tensor(x))
    yo = ours(tl.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.num_features == theirs.num_features == 3
    np.testing.assert_allclose(_np(yo), _np(yt), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(ours.running_mean), _np(theirs.running_mean), rtol=1e-5, atol=1e-6)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())


def test_lazy_module_loads_a_state_dict_before_its_first_call():
    src = tl.nn.Linear(3, 2)
    lazy = tl.nn.Sequential(tl.nn.LazyLinear(2))
    lazy.load_state_dict({f"0.{k}": v for k, v in src.state_dict().items()})
    np.testing.assert_allclose(_np(lazy(tl.ones(1, 3))), _np(src(tl.ones(1, 3))))
    assert type(lazy[0]) is tl.nn.Linear


def test_uninitialized_parameter_refuses_use_and_materializes():
    p = tl.nn.UninitializedParameter()
    with pytest.raises(ValueError, match="uninitialized"):
        p.shape  # noqa: B018
    p.materialize((2, 3))
    assert type(p) is tl.nn.Parameter and p.shape == (2, 3)
    assert tl.nn.parameter.is_lazy(tl.nn.UninitializedBuffer())


def test_batchnorm3d_and_syncbatchnorm():
    x = RNG.standard_normal((2, 3, 2, 3, 4)).astype(np.float32)
    for ours, theirs in ((tl.nn.BatchNorm3d(3), torch.nn.BatchNorm3d(3)),
                         (tl.nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3))):  # (no process group: one batch)
        np.testing.assert_allclose(_np(ours(tl.tensor(x))), _np(theirs(torch.tensor(x))), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(_np(ours.running_var), _np(theirs.running_var), rtol=1e-5)
    net = tl.nn.Sequential(tl.nn.Conv2d(3, 4, 3), tl.nn.BatchNorm2d(4), tl.nn.Sequential(tl.nn.BatchNorm1d(2)))
    conv = tl.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert isinstance(conv[1], tl.nn.SyncBatchNorm) and isinstance(conv[2][0], tl.nn.SyncBatchNorm)
    assert conv[1].weight is net[1].weight
    assert repr(tl.nn.SyncBatchNorm(4)) == repr(torch.nn.SyncBatchNorm(4))


@pytest.mark.parametrize("size", [2, 3, 4, 5])
def test_cross_map_lrn2d(size):
    x = RNG.standard_normal((2, 7, 3, 3))
    a, b = torch.tensor(x, requires_grad=True), tl.tensor(x, requires_grad=True)
    ya = torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=2)(a)
    yb = tl.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.7, k=2)(b)
    np.testing.assert_allclose(_np(yb), _np(ya), rtol=1e-12)
    w = RNG.standard_normal(x.shape)
    (ya * torch.tensor(w)).sum().backward()
    (yb * tl.tensor(w)).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert repr(tl.nn.CrossMapLRN2d(size)) == repr(torch.nn.CrossMapLRN2d(size))
    assert repr(tl.nn.LocalResponseNorm(size)) == repr(torch.nn.LocalResponseNorm(size))


def test_adaptive_log_softmax_with_loss():
    ta = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 7], div_value=2.0, head_bias=True)
    tb = tl.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 7], div_value=2.0, head_bias=True)
    assert sorted(tb.state_dict()) == sorted(ta.state_dict())
    tb.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in ta.state_dict().items()})
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    t = np.array([0, 4, 9, 2, 7, 5])
    oa, ob = ta(torch.tensor(x), torch.tensor(t)), tb(tl.tensor(x), tl.tensor(t))
    np.testing.assert_allclose(_np(ob.output), _np(oa.output), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(ob.loss), float(oa.loss), rtol=1e-5)
    oa.loss.backward()
    ob.loss.backward()
    for (na, pa), (nb, pb) in zip(sorted(ta.named_parameters()), sorted(tb.named_parameters())):
        assert na == nb
        np.testing.assert_allclose(pb.grad.numpy(), pa.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(_np(tb.log_prob(tl.tensor(x))), _np(ta.log_prob(torch.tensor(x))), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(tb.predict(tl.tensor(x)).numpy(), ta.predict(torch.tensor(x)).numpy())
    assert tb(tl.tensor(x[0]), tl.tensor(t[0])).output.shape == ()
    with pytest.raises(ValueError, match="cutoffs"):
        tl.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [7, 3])
    with pytest.raises(RuntimeError, match="Target values"):
        tb(tl.tensor(x), tl.tensor([0, 1, 2, 3, 4, 10]))


@pytest.mark.parametrize("name,kwargs,arrays", [
    ("GaussianNLLLoss", dict(full=True), lambda: (RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2)),
                                                  RNG.random((3, 2)) + 0.1)),
    ("PoissonNLLLoss", dict(log_input=True), lambda: (RNG.standard_normal((3, 2)), RNG.integers(0, 4, (3, 2)) * 1.0)),
    ("MultiMarginLoss", dict(p=2, margin=0.5), lambda: (RNG.standard_normal((3, 4)), RNG.integers(0, 4, 3))),
    ("MultiLabelMarginLoss", {}, lambda: (RNG.standard_normal((2, 3)), np.array([[2, -1, 0], [0, 1, 2]]))),
    ("MultiLabelSoftMarginLoss", {}, lambda: (RNG.standard_normal((3, 4)), (RNG.random((3, 4)) > 0.5) * 1.0)),
    ("TripletMarginWithDistanceLoss", dict(swap=True), lambda: tuple(RNG.standard_normal((3, 4, 5)))),
    ("NLLLoss2d", {}, lambda: (RNG.standard_normal((2, 3, 2, 2)), RNG.integers(0, 3, (2, 2, 2)))),
])
def test_loss_modules(name, kwargs, arrays):
    arrs = arrays()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (NLLLoss2d warns that it is deprecated, in both)
        ta, tb = getattr(torch.nn, name)(**kwargs), getattr(tl.nn, name)(**kwargs)
    a = ta(*(torch.tensor(x) for x in arrs))
    b = tb(*(tl.tensor(x) for x in arrs))
    np.testing.assert_allclose(float(b), float(a), rtol=1e-10)
    assert repr(tb) == repr(ta)


def test_linear_cross_entropy_loss_module():
    ta = torch.nn.LinearCrossEntropyLoss(5, 3, bias=True, label_smoothing=0.1)
    tb = tl.nn.LinearCrossEntropyLoss(5, 3, bias=True, label_smoothing=0.1)
    assert sorted(tb.state_dict()) == sorted(ta.state_dict())
    tb.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in ta.state_dict().items()})
    x, t = RNG.standard_normal((4, 5)).astype(np.float32), np.array([0, 1, 2, 1])
    np.testing.assert_allclose(float(tb(tl.tensor(x), tl.tensor(t))), float(ta(torch.tensor(x), torch.tensor(t))),
                               rtol=1e-5)
    assert tl.nn.LinearCrossEntropyOptions() == tl.nn.LinearCrossEntropyOptions(acc_policy="auto")


def test_small_modules_match_torch():
    x = RNG.standard_normal((2, 4, 3, 3))
    np.testing.assert_allclose(_np(tl.nn.Softmax2d()(tl.tensor(x))), _np(torch.nn.Softmax2d()(torch.tensor(x))))
    np.testing.assert_allclose(_np(tl.nn.ChannelShuffle(2)(tl.tensor(x))),
                               _np(torch.nn.ChannelShuffle(2)(torch.tensor(x))))
    assert repr(tl.nn.ChannelShuffle(2)) == repr(torch.nn.ChannelShuffle(2))
    s = RNG.random((2, 4, 2))
    fo = tl.nn.FractionalMaxPool2d(2, output_size=2, _random_samples=tl.tensor(s))
    ft = torch.nn.FractionalMaxPool2d(2, output_size=2, _random_samples=torch.tensor(s))
    np.testing.assert_allclose(_np(fo(tl.tensor(x))), _np(ft(torch.tensor(x))))
    with pytest.raises(ValueError):
        tl.nn.FractionalMaxPool2d(2)


def test_buffer_container_factory_kwargs():
    class M(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = tl.nn.Buffer(tl.ones(2))
            self.b = tl.nn.Buffer(tl.zeros(1), persistent=False)

    m = M()
    assert list(m.state_dict()) == ["a"] and [n for n, _ in m.named_buffers()] == ["a", "b"]
    assert tl.nn.Buffer(tl.ones(1)).persistent and not tl.nn.Buffer(tl.ones(1), persistent=False).persistent
    with pytest.warns(UserWarning, match="deprecated"):
        c = tl.nn.Container(lin=tl.nn.Linear(1, 1))
    assert [n for n, _ in c.named_children()] == ["lin"]
    assert tl.nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": tl.float32}}) == \
        {"device": "cpu", "dtype": tl.float32}
    with pytest.raises(TypeError):
        tl.nn.factory_kwargs({"bad": 1})
    assert tl.nn.DataParallel is tl.nn.parallel.DataParallel


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nn_grad_conv_gradients(nd):
    x = RNG.standard_normal((2, 3) + (6,) * nd)
    w = RNG.standard_normal((4, 3) + (3,) * nd)
    go = RNG.standard_normal((2, 4) + (2,) * nd)
    ti, oi = getattr(torch.nn.grad, f"conv{nd}d_input"), getattr(tl.nn.grad, f"conv{nd}d_input")
    tw, ow = getattr(torch.nn.grad, f"conv{nd}d_weight"), getattr(tl.nn.grad, f"conv{nd}d_weight")
    np.testing.assert_allclose(_np(oi(x.shape, tl.tensor(w), tl.tensor(go), stride=2)),
                               _np(ti(x.shape, torch.tensor(w), torch.tensor(go), stride=2)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(ow(tl.tensor(x), w.shape, tl.tensor(go), stride=2)),
                               _np(tw(torch.tensor(x), w.shape, torch.tensor(go), stride=2)), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("qualname", ["quantized.Linear", "qat.Conv2d", "quantizable.LSTM", "intrinsic.ConvReLU2d",
                                      "cpp.ModuleWrapper"])
def test_quantization_and_cpp_families_are_clear_errors(qualname):
    pkg, name = qualname.split(".")
    cls = getattr(getattr(tl.nn, pkg), name)
    with pytest.raises(NotImplementedError, match=name):
        cls(2, 2)


def test_attention_kernel_choice_and_modules_package():
    from tinygrad_like.nn.attention import SDPBackend, can_use_flash_attention, sdpa_kernel
    assert {b.name: b.value for b in SDPBackend} == {
        k: int(v) for k, v in torch.nn.attention.SDPBackend.__members__.items()}
    q = tl.randn(1, 2, 3, 4)
    with sdpa_kernel([SDPBackend.MATH]):
        out = tl.nn.functional.scaled_dot_product_attention(q, q, q)
    assert out.shape == q.shape and can_use_flash_attention(None) is False
    from tinygrad_like.nn.modules.batchnorm import _BatchNorm
    from tinygrad_like.nn.modules.loss import _Loss
    from tinygrad_like.nn.modules.utils import _pair
    assert _pair(3) == (3, 3) and issubclass(tl.nn.BatchNorm2d, _BatchNorm) and issubclass(tl.nn.MSELoss, _Loss)
    assert tl.nn.modules.Linear is tl.nn.Linear



@pytest.mark.skipif(not hasattr(tl.nn.Module, "register_load_state_dict_pre_hook"),
                    reason="needs nn.Module's load_state_dict pre-hooks")
def test_parametrized_weight_norm_loads_old_checkpoints():
    old = torch.nn.Linear(3, 4)  # a checkpoint of the hook-based weight_norm, loaded into the parametrized one
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(old)
    new = tl.nn.utils.parametrizations.weight_norm(tl.nn.Linear(3, 4))
    new.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in old.state_dict().items()})
    expected = old.weight_v * (old.weight_g / old.weight_v.norm(dim=1, keepdim=True))
    np.testing.assert_allclose(_np(new.weight), _np(expected), rtol=1e-6)
