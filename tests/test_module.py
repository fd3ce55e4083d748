"""The Module API: registration, traversal, modes, state dicts, hooks, printing, initialisation."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like.io import StateDictMismatchError

torch = pytest.importorskip("torch")
nn, F = tl.nn, tl.nn.functional


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
        self.register_buffer("scale", tl.ones(1), persistent=False)

    def forward(self, x):
        return self.head(self.bn(self.conv(x)).relu() * self.scale)


class TorchBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 3))
        self.register_buffer("scale", torch.ones(1), persistent=False)


def test_names_and_traversal_match_torch():
    ours, theirs = Block(), TorchBlock()
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())  # non-persistent buffer left out
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in ours.parameters())
    assert ours.get_submodule("head.1") is ours.head[1]
    assert ours.get_parameter("head.1.bias") is ours.head[1].bias


def test_shared_parameters_are_listed_once():
    lin = nn.Linear(2, 2)
    net = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(net.parameters())) == 2
    assert len(net.state_dict()) == 4  # state_dict keeps every name, as PyTorch's


def test_repr_matches_torch():
    def build(m):
        return m.Sequential(m.Conv2d(1, 8, 3, padding=1), m.BatchNorm2d(8), m.ReLU(), m.MaxPool2d(2),
                            m.Conv2d(8, 16, 3, stride=2, bias=False), m.AvgPool2d(2), m.AdaptiveAvgPool2d((1, 1)),
                            m.Flatten(), m.Dropout(0.25), m.Linear(16, 10), m.LayerNorm(10), m.GELU(),
                            m.Embedding(10, 3), m.LeakyReLU(0.2), m.BatchNorm1d(3, momentum=None),
                            m.LayerNorm(4, bias=False),
                            m.Softmax(1), m.ELU(), m.Softplus(), m.SiLU(), m.Unflatten(1, (2, 3)),
                            m.CrossEntropyLoss(), m.Identity(), m.BatchNorm2d(2, affine=False),
                            m.LayerNorm(3, elementwise_affine=False))
    assert repr(build(nn)) == repr(build(torch.nn))
    assert repr(nn.ModuleList([nn.Linear(1, 2), nn.Tanh()])) == repr(torch.nn.ModuleList([torch.nn.Linear(1, 2),
                                                                                           torch.nn.Tanh()]))
    assert repr(nn.Parameter(tl.tensor([1.0, 2.0]))) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))


def test_train_eval_and_zero_grad():
    net = Block()
    assert net.training and net.bn.training
    net.eval()
    assert not net.training and not net.bn.training and not net.head[1].training
    net.train()
    net(tl.randn(2, 1, 4, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.numpy() == 0) for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_state_dict_round_trip_and_strict_errors():
    a, b = Block(), Block()
    a(tl.randn(3, 1, 4, 4))  # move the running statistics away from their initial values
    b.load_state_dict(a.state_dict())
    for (k, va), (_, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(va.numpy(), vb.numpy(), err_msg=k)
    sd = a.state_dict()
    sd.pop("conv.bias")
    sd["extra.weight"] = tl.zeros(1)
    sd["head.1.weight"] = tl.zeros(3, 5)
    sd["bn.num_batches_tracked"] = tl.tensor(0.0)
    before = b.head[1].weight.detach().numpy().copy()
    with pytest.raises(StateDictMismatchError) as e:
        b.load_state_dict(sd)
    msg = str(e.value)
    for part in ("conv.bias", "extra.weight", "head.1.weight", "(3, 5)", "(3, 64)", "bn.num_batches_tracked",
                 "float32", "int64"):
        assert part in msg, part
    np.testing.assert_array_equal(b.head[1].weight.detach().numpy(), before)  # nothing was written
    sd = a.state_dict()
    sd.pop("conv.bias")
    sd["extra"] = tl.zeros(1)
    keys = b.load_state_dict(sd, strict=False)
    assert keys.missing_keys == ["conv.bias"] and keys.unexpected_keys == ["extra"]


def test_load_state_dict_bumps_versions_and_keeps_parameters_identity():
    net = nn.Linear(2, 2)
    w = net.weight
    v = w._version
    net.load_state_dict({"weight": tl.ones(2, 2), "bias": tl.zeros(2)})
    assert net.weight is w and w._version == v + 1
    np.testing.assert_array_equal(w.detach().numpy(), np.ones((2, 2)))


def test_forward_hooks_and_pre_hooks():
    lin = nn.Linear(2, 2)
    seen = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: seen.append(out.shape) or out + 1)
    out = lin(tl.ones(3, 2))
    np.testing.assert_allclose(out.detach().numpy(), np.broadcast_to(lin.bias.detach().numpy() + 1, (3, 2)))
    assert seen == [(3, 2)]
    h1.remove()
    h2.remove()
    out = lin(tl.ones(3, 2))
    assert seen == [(3, 2)]
    assert not np.allclose(out.detach().numpy(), lin.bias.detach().numpy() + 1)


def test_assignment_rules_and_errors():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tl.zeros(1))

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) first"):
        Bad()
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign Tensor as parameter 'weight'"):
        m.weight = tl.zeros(2, 2)
    with pytest.raises(KeyError, match="without '.'"):
        m.register_buffer("a.b", tl.zeros(1))
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        _ = m.nope
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)
    m.extra = nn.ReLU()
    assert "extra" in dict(m.named_children())
    del m.extra
    assert "extra" not in dict(m.named_children())


def test_module_to_float64_and_parameter_sharing():
    net = Block().double()
    assert all(p.dtype is tl.float64 for p in net.parameters())
    assert net.bn.num_batches_tracked.dtype is tl.int64
    assert net(tl.randn(2, 1, 4, 4, dtype=tl.float64)).dtype is tl.float64
    t = tl.randn(3)
    p = nn.Parameter(t)
    assert p.storage is t.storage and p.requires_grad and p.is_leaf


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and len(seq[1:]) == 2
    seq.append(nn.Sigmoid())
    assert seq(tl.zeros(4, 2)).shape == (4, 1)
    del seq[1]
    assert [n for n, _ in seq.named_children()] == ["0", "1", "2"]
    with pytest.raises(IndexError, match="index 7 is out of range for Sequential of length 3"):
        seq[7]
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.extend([nn.ReLU()])
    ml.insert(0, nn.Tanh())
    assert [type(m).__name__ for m in ml] == ["Tanh", "Linear", "ReLU"]
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.ReLU()
    assert list(md) == ["a", "b"] and len(list(md.parameters())) == 2


# ---- init ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,kw", [("kaiming_uniform_", dict(nonlinearity="relu")),
                                     ("kaiming_normal_", dict(mode="fan_out", nonlinearity="relu")),
                                     ("xavier_uniform_", dict(gain=2.0)), ("xavier_normal_", {}),
                                     ("kaiming_uniform_", dict(a=math.sqrt(5)))])
def test_init_distributions_match_torch_statistics(name, kw):
    shape = (400, 300)
    ours = getattr(nn.init, name)(tl.empty(*shape), **kw).numpy()
    theirs = getattr(torch.nn.init, name)(torch.empty(*shape), **kw).numpy()
    assert abs(ours.std() / theirs.std() - 1) < 0.02
    assert abs(ours.mean()) < 0.01 * theirs.std() * 10
    if "uniform" in name:
        assert abs(np.abs(ours).max() / np.abs(theirs).max() - 1) < 0.01


def test_init_gain_and_errors():
    for nl, p in [("relu", None), ("tanh", None), ("leaky_relu", 0.2), ("selu", None), ("conv2d", None)]:
        assert nn.init.calculate_gain(nl, p) == pytest.approx(torch.nn.init.calculate_gain(nl, p))
    with pytest.raises(ValueError, match="Unsupported nonlinearity 'swish'"):
        nn.init.calculate_gain("swish")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(tl.empty(3))
    w = nn.Parameter(tl.zeros(3, 3))
    v = w._version
    nn.init.ones_(w)  # in place under no_grad: allowed on a leaf that requires grad, and counted
    assert w._version == v + 1 and np.all(w.detach().numpy() == 1)


def test_default_init_matches_torch_bounds():
    tl.manual_seed(0)
    lin, conv = nn.Linear(50, 40), nn.Conv2d(3, 8, 5)
    for m, fan_in in ((lin, 50), (conv, 75)):
        bound = 1 / math.sqrt(fan_in)
        w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound  # kaiming(a=sqrt 5) == U(+-1/sqrt fan_in)
        assert np.abs(b).max() <= bound
