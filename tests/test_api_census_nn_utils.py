"""``torch.nn.utils`` against torch: weight norm and spectral norm (hook-based and as parametrizations), the
``parametrize`` machinery (``Parametrized<Class>``, removal, caching, transfer), ``orthogonal``, gradient clipping's
new spellings, parameters as one vector, BatchNorm fusion, ``functional_call``, ``skip_init`` and the submodules
that must import (``torch.nn.utils.parametrize`` under the alias is ``tinygrad_like.nn.utils.parametrize``)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.nn.utils.parametrize as P
from tinygrad_like.nn.utils import parametrizations as PZ

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
W = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)
X = RNG.standard_normal((5, 3)).astype(np.float32)


def _np(t):
    return t.detach().numpy()


def pair():
    a, b = torch.nn.Linear(3, 4), tl.nn.Linear(3, 4)
    with torch.no_grad():
        a.weight.copy_(torch.tensor(W))
        a.bias.copy_(torch.tensor(B))
    with tl.no_grad():
        b.weight.copy_(tl.tensor(W))
        b.bias.copy_(tl.tensor(B))
    return a, b


def forward_backward(a, b):
    ya, yb = a(torch.tensor(X)), b(tl.tensor(X))
    np.testing.assert_allclose(_np(yb), _np(ya), rtol=1e-5, atol=1e-6)
    ya.sum().backward()
    yb.sum().backward()


def grads_match(a, b):
    pa, pb = dict(a.named_parameters()), dict(b.named_parameters())
    assert list(pa) == list(pb)
    for k in pa:
        np.testing.assert_allclose(pb[k].grad.numpy(), pa[k].grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrized_weight_norm(dim):
    a, b = pair()
    torch.nn.utils.parametrizations.weight_norm(a, dim=dim)
    PZ.weight_norm(b, dim=dim)
    assert type(b).__name__ == type(a).__name__ == "ParametrizedLinear"
    assert P.type_before_parametrizations(b) is tl.nn.Linear
    forward_backward(a, b)
    grads_match(a, b)
    assert sorted(b.state_dict()) == sorted(a.state_dict())
    P.remove_parametrizations(b, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(a, "weight")
    assert type(b) is tl.nn.Linear and not P.is_parametrized(b)
    assert [n for n, _ in b.named_parameters()] == [n for n, _ in a.named_parameters()]
    np.testing.assert_allclose(_np(b.weight), _np(a.weight), rtol=1e-6)


@pytest.mark.parametrize("dim", [0, 1])
def test_hook_weight_norm(dim):
    a, b = pair()
    with pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(a, dim=dim)
    with pytest.warns(FutureWarning):
        tl.nn.utils.weight_norm(b, dim=dim)
    forward_backward(a, b)
    grads_match(a, b)
    tl.nn.utils.remove_weight_norm(b)
    assert sorted(n for n, _ in b.named_parameters()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="not found"):
        tl.nn.utils.remove_weight_norm(b)


def test_hook_spectral_norm():
    a, b = pair()
    torch.nn.utils.spectral_norm(a)
    tl.nn.utils.spectral_norm(b)
    assert sorted(b.state_dict()) == sorted(a.state_dict())
    with tl.no_grad():  # (the random start vectors come from each library's generator: start both from torch's)
        b.weight_u.copy_(tl.tensor(a.weight_u.numpy()))
        b.weight_v.copy_(tl.tensor(a.weight_v.numpy()))
    for _ in range(3):  # power iteration runs at every training-mode forward
        forward_backward(a, b)
    np.testing.assert_allclose(b.weight_u.numpy(), a.weight_u.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.weight_orig.grad.numpy(), a.weight_orig.grad.numpy(), rtol=1e-4, atol=1e-6)
    a.eval()
    b.eval()
    forward_backward(a, b)
    tl.nn.utils.remove_spectral_norm(b)
    assert sorted(n for n, _ in b.named_parameters()) == ["bias", "weight"]


def test_parametrized_spectral_norm():
    a, b = pair()
    torch.nn.utils.parametrizations.spectral_norm(a)
    PZ.spectral_norm(b)
    sa, sb = a.parametrizations.weight[0], b.parametrizations.weight[0]
    with tl.no_grad():
        sb._u.copy_(tl.tensor(sa._u.numpy()))
        sb._v.copy_(tl.tensor(sa._v.numpy()))
    for _ in range(3):
        forward_backward(a, b)
    assert sorted(b.state_dict()) == sorted(a.state_dict())
    np.testing.assert_allclose(b.parametrizations.weight.original.grad.numpy(),
                               a.parametrizations.weight.original.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("shape,orth_map", [((4, 4), "matrix_exp"), ((5, 3), "householder"),
                                            ((3, 5), "householder"), ((5, 3), "matrix_exp"), ((4, 4), "cayley")])
def test_orthogonal_matches_torch_without_trivialization(shape, orth_map):
    if orth_map == "cayley" and not hasattr(tl.linalg, "solve"):
        pytest.skip("the Cayley map needs linalg.solve")
    a, b = torch.nn.Linear(shape[1], shape[0]), tl.nn.Linear(shape[1], shape[0])
    torch.nn.utils.parametrizations.orthogonal(a, orthogonal_map=orth_map, use_trivialization=False)
    PZ.orthogonal(b, orthogonal_map=orth_map, use_trivialization=False)
    orig = (RNG.standard_normal(shape) * 0.5).astype(np.float32)
    with torch.no_grad():
        a.parametrizations.weight.original.copy_(torch.tensor(orig))
    with tl.no_grad():
        b.parametrizations.weight.original.copy_(tl.tensor(orig))
    wa, wb = a.weight, b.weight
    np.testing.assert_allclose(_np(wb), _np(wa), rtol=1e-5, atol=1e-6)
    g = RNG.standard_normal(shape).astype(np.float32)
    (wa * torch.tensor(g)).sum().backward()
    (wb * tl.tensor(g)).sum().backward()
    np.testing.assert_allclose(b.parametrizations.weight.original.grad.numpy(),
                               a.parametrizations.weight.original.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_default_keeps_the_weight_and_is_orthogonal(shape):
    m = tl.nn.Linear(shape[1], shape[0])
    PZ.orthogonal(m)
    w = _np(m.weight).astype(np.float64)
    q = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(q, np.eye(min(shape)), atol=1e-5)
    assert sorted(m.state_dict()) == ["bias", "parametrizations.weight.0.base", "parametrizations.weight.original"]
    m(tl.randn(2, shape[1])).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    m.weight = tl.tensor(np.linalg.qr(RNG.standard_normal(shape))[0] if shape[0] >= shape[1]
                         else np.linalg.qr(RNG.standard_normal(shape[::-1]))[0].T, dtype=tl.float32)
    with pytest.raises(ValueError, match="matrix"):
        PZ.orthogonal(tl.nn.Linear(3, 1), "bias")


def test_register_parametrization_chain_cache_right_inverse_errors():
    class Symmetric(tl.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()

    class Scale(tl.nn.Module):
        def forward(self, x):
            return 2 * x

        def right_inverse(self, x):
            return x / 2

    m = tl.nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale())
    w = _np(m.weight)
    np.testing.assert_allclose(w, w.T)
    sym = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]], dtype=np.float32)
    m.weight = tl.tensor(sym)  # through the right inverses, back to the stored original
    np.testing.assert_allclose(_np(m.weight), sym, rtol=1e-6)
    with P.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    m2 = P.transfer_parametrizations_and_params(m, tl.nn.Linear(3, 3))
    np.testing.assert_allclose(_np(m2.weight), sym, rtol=1e-6)
    with pytest.raises(ValueError, match="does not have a parameter"):
        P.register_parametrization(m, "nothing", Scale())
    with pytest.raises(ValueError, match="shape"):
        P.register_parametrization(tl.nn.Linear(3, 2), "weight", type("Cut", (tl.nn.Module,), {
            "forward": lambda self, x: x[:1]})())
    with pytest.raises(ValueError):
        P.remove_parametrizations(tl.nn.Linear(2, 2), "weight")


def test_clip_grad_spellings():
    w = tl.tensor([3.0, 4.0], requires_grad=True)
    w.grad = tl.tensor([3.0, 4.0])
    with pytest.warns(FutureWarning):
        total = tl.nn.utils.clip_grad_norm([w], 1.0)
    assert float(total) == 5.0
    np.testing.assert_allclose(w.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    from tinygrad_like.nn.utils import clip_grad
    clip_grad.clip_grad_value_([w], 0.7, foreach=True)
    np.testing.assert_allclose(w.grad.numpy(), [0.6, 0.7], rtol=1e-6)


def test_parameters_to_vector_and_back():
    a, b = pair()
    v = tl.nn.utils.parameters_to_vector(b.parameters())
    np.testing.assert_allclose(_np(v), _np(torch.nn.utils.parameters_to_vector(a.parameters())))
    tl.nn.utils.vector_to_parameters(v * 2, b.parameters())
    np.testing.assert_allclose(_np(b.weight), 2 * W, rtol=1e-6)
    with pytest.raises(TypeError):
        tl.nn.utils.vector_to_parameters([1.0], b.parameters())


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_and_linear_bn(transpose):
    tconv = (torch.nn.ConvTranspose2d if transpose else torch.nn.Conv2d)(2, 3, 3).eval()
    conv = (tl.nn.ConvTranspose2d if transpose else tl.nn.Conv2d)(2, 3, 3).eval()
    tbn, bn = torch.nn.BatchNorm2d(3).eval(), tl.nn.BatchNorm2d(3).eval()
    with torch.no_grad():
        tbn.running_mean.uniform_()
        tbn.running_var.uniform_(0.5, 2)
        tbn.weight.uniform_()
        tbn.bias.uniform_()
    conv.load_state_dict({k: tl.tensor(v.numpy()) for k, v in tconv.state_dict().items()})
    bn.load_state_dict({k: tl.tensor(v.numpy()) for k, v in tbn.state_dict().items()})
    fa = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn, transpose)
    fb = tl.nn.utils.fuse_conv_bn_eval(conv, bn, transpose)
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(_np(fb(tl.tensor(x))), _np(fa(torch.tensor(x))), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(fb(tl.tensor(x))), _np(bn(conv(tl.tensor(x)))), rtol=1e-4, atol=1e-5)
    lin, lbn = tl.nn.Linear(3, 4).eval(), tl.nn.BatchNorm1d(4).eval()
    with tl.no_grad():
        lbn.running_mean.uniform_()
        lbn.running_var.uniform_(0.5, 2)
    fused = tl.nn.utils.fuse_linear_bn_eval(lin, lbn)
    np.testing.assert_allclose(_np(fused(tl.tensor(X))), _np(lbn(lin(tl.tensor(X)))), rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError, match="eval"):
        tl.nn.utils.fuse_linear_bn_eval(lin.train(), lbn)


def test_functional_call_skip_init_memory_format():
    a, b = pair()
    with pytest.warns(FutureWarning):
        out = tl.nn.utils.stateless.functional_call(b, {"weight": tl.zeros(4, 3)}, (tl.tensor(X),))
    np.testing.assert_allclose(_np(out), np.broadcast_to(B, (5, 4)))
    np.testing.assert_allclose(_np(b.weight), W)  # restored
    with pytest.raises(RuntimeError, match="Missing"), pytest.warns(FutureWarning):
        tl.nn.utils.stateless.functional_call(b, {"weight": tl.zeros(4, 3)}, (tl.tensor(X),), strict=True)
    m = tl.nn.utils.skip_init(tl.nn.Linear, 6, 1)
    assert m.weight.shape == (1, 6)
    with pytest.raises(RuntimeError, match="Module"):
        tl.nn.utils.skip_init(int)
    assert tl.nn.utils.convert_conv2d_weight_memory_format(b, None) is b


@pytest.mark.parametrize("name", ["torch.nn.utils.parametrize", "torch.nn.utils.parametrizations",
                                  "torch.nn.utils.clip_grad", "torch.nn.utils.stateless", "torch.nn.utils.fusion",
                                  "torch.nn.utils.convert_parameters", "torch.nn.utils.rnn", "torch.nn.modules.loss",
                                  "torch.nn.modules.utils", "torch.nn.grad", "torch.nn.parameter",
                                  "torch.nn.attention", "torch.nn.quantized", "torch.nn.common_types"])
def test_submodules_import(name):  # (torch.X.Y is tinygrad_like.X.Y under the alias)
    ours = importlib.import_module("tinygrad_like" + name[len("torch"):])
    assert ours.__name__.endswith(name[len("torch"):])
