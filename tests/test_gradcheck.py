"""The second witness: every differentiable op's analytic gradient against float64 finite differences.

``tl.autograd.gradcheck`` builds the full Jacobian both ways (one backward per output element, two
forwards per input element), so inputs stay small and away from kinks (relu/abs at 0, clamp at its
bounds, max/min ties) where finite differences are not defined. Second derivatives are checked twice:
against torch's double backward, and (``gradgradcheck``) by finite differences of the first gradient.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np
import pytest
from conftest import WrongSquare, assert_close, make_array

import tinygrad_like as tl
from tinygrad_like.autograd import GradcheckError, gradcheck

torch = pytest.importorskip("torch")  # the oracle: this module skips without it
F = torch.nn.functional

# every test here runs with a plain backward and with create_graph=True (see conftest.backward_mode)
pytestmark = pytest.mark.usefixtures("backward_mode")


def _idx(*rows):
    return tl.tensor(list(rows))


# (id, fn over tinygrad_like tensors, input specs as (shape, data kind))
GC: list[tuple[str, Callable, tuple]] = [
    # binary, with broadcasting and scalars on either side
    ("add", lambda a, b: a + b, (((2, 1, 3), "n"), ((2, 3), "n"))),
    ("sub", lambda a, b: a - b, (((2, 3), "n"), ((3,), "n"))),
    ("mul", lambda a, b: a * b, (((2, 3), "n"), ((2, 1), "n"))),
    ("div", lambda a, b: a / b, (((2, 3), "n"), ((2, 3), "away"))),
    ("pow", lambda a, b: a ** b, (((2, 3), "pos"), ((2, 3), "n"))),
    ("pow-bcast", lambda a, b: a ** b, (((2, 3), "pos"), ((), "n"))),
    ("scalar-rsub", lambda a: 2 - a, (((2, 3), "n"),)),
    ("scalar-rdiv", lambda a: 3 / a, (((2, 3), "away"),)),
    ("scalar-rpow", lambda a: 2 ** a, (((2, 3), "n"),)),
    ("scalar-pow", lambda a: a ** 2.5, (((2, 3), "pos"),)),
    ("scalar-pow-neg", lambda a: a ** -1.5, (((2, 3), "pos"),)),
    ("scalar-mul-div", lambda a: (a * 3 + 1) / 4 - 0.5, (((2, 3), "n"),)),
    ("matmul-1d-1d", lambda a, b: a @ b, (((3,), "n"), ((3,), "n"))),
    ("matmul-1d-2d", lambda a, b: a @ b, (((3,), "n"), ((3, 2), "n"))),
    ("matmul-2d-1d", lambda a, b: a @ b, (((2, 3), "n"), ((3,), "n"))),
    ("matmul-2d-2d", lambda a, b: a @ b, (((2, 3), "n"), ((3, 2), "n"))),
    ("matmul-batched", lambda a, b: a @ b, (((2, 1, 2, 3), "n"), ((2, 3, 2), "n"))),
    ("matmul-T", lambda a, b: a.T @ b.mT, (((3, 2), "n"), ((2, 3), "n"))),
    ("maximum", lambda a, b: tl.maximum(a, b), (((2, 3), "n"), ((2, 3), "n"))),
    ("minimum", lambda a, b: tl.minimum(a, b), (((2, 3), "n"), ((3,), "n"))),
    ("where", lambda a, b: tl.where(a > b, a, b * 2), (((2, 3), "n"), ((2, 3), "n"))),
    ("where-scalar", lambda a: tl.where(a > 0, a * a, 0.5), (((2, 3), "away"),)),
    ("masked_fill", lambda a: a.masked_fill(a > 0, 0.25), (((2, 3), "away"),)),
    # unary
    ("neg", lambda x: -x, (((2, 3), "n"),)),
    ("abs", lambda x: x.abs(), (((2, 3), "away"),)),
    ("exp", lambda x: x.exp(), (((2, 3), "n"),)),
    ("log", lambda x: x.log(), (((2, 3), "pos"),)),
    ("sqrt", lambda x: x.sqrt(), (((2, 3), "pos"),)),
    ("rsqrt", lambda x: x.rsqrt(), (((2, 3), "pos"),)),
    ("sin", lambda x: x.sin(), (((2, 3), "n"),)),
    ("cos", lambda x: x.cos(), (((2, 3), "n"),)),
    ("tanh", lambda x: x.tanh(), (((2, 3), "n"),)),
    ("sigmoid", lambda x: x.sigmoid(), (((2, 3), "n"),)),
    ("relu", lambda x: x.relu(), (((2, 3), "away"),)),
    ("leaky_relu", lambda x: tl.leaky_relu(x, 0.2), (((2, 3), "away"),)),
    ("gelu", lambda x: x.gelu(), (((2, 3), "n"),)),
    ("gelu-tanh", lambda x: x.gelu(approximate="tanh"), (((2, 3), "n"),)),
    ("silu", lambda x: x.silu(), (((2, 3), "n"),)),
    ("softplus", lambda x: x.softplus(), (((2, 3), "n"),)),
    ("softplus-beta-threshold", lambda x: x.softplus(beta=2.0, threshold=1.0), (((2, 3), "away"),)),
    ("elu", lambda x: x.elu(), (((2, 3), "away"),)),
    ("elu-alpha", lambda x: x.elu(alpha=0.5), (((2, 3), "away"),)),
    ("clamp-min", lambda x: x.clamp(min=-0.5), (((2, 3), "n"),)),
    ("clamp-max", lambda x: x.clamp(max=0.5), (((2, 3), "n"),)),
    ("clamp-both", lambda x: x.clamp(-0.5, 0.5), (((2, 3), "n"),)),
    ("softmax-last", lambda x: x.softmax(-1), (((2, 3), "n"),)),
    ("softmax-0", lambda x: x.softmax(0), (((2, 3), "n"),)),
    ("log_softmax-last", lambda x: x.log_softmax(-1), (((2, 3), "n"),)),
    ("log_softmax-1-of-3d", lambda x: x.log_softmax(1), (((2, 3, 2), "n"),)),
    # reductions
    ("sum-all", lambda x: x.sum(), (((2, 3), "n"),)),
    ("sum-dim", lambda x: x.sum(1), (((2, 3), "n"),)),
    ("sum-tuple-keep", lambda x: x.sum((0, 2), keepdim=True), (((2, 3, 2), "n"),)),
    ("mean-all", lambda x: x.mean(), (((2, 3), "n"),)),
    ("mean-dim-keep", lambda x: x.mean(0, keepdim=True), (((2, 3), "n"),)),
    ("var-c1", lambda x: x.var(1), (((2, 3), "n"),)),
    ("var-c0-all", lambda x: x.var(correction=0), (((2, 3), "n"),)),
    ("var-tuple-keep", lambda x: x.var((0, 1), keepdim=True), (((2, 3), "n"),)),
    ("std-c1", lambda x: x.std(0), (((2, 3), "n"),)),
    ("std-c0-keep", lambda x: x.std(1, keepdim=True, correction=0), (((2, 3), "n"),)),
    ("max-all", lambda x: x.max(), (((2, 3), "n"),)),
    ("max-dim", lambda x: x.max(1).values, (((2, 3), "n"),)),
    ("min-dim-keep", lambda x: x.min(0, keepdim=True)[0], (((2, 3), "n"),)),
    ("min-all", lambda x: x.min(), (((2, 3), "n"),)),
    ("amax", lambda x: x.amax(1), (((2, 3), "n"),)),
    ("amin-tuple", lambda x: x.amin((0, 1)), (((2, 3), "n"),)),
    ("logsumexp", lambda x: x.logsumexp(1), (((2, 3), "n"),)),
    ("logsumexp-keep", lambda x: x.logsumexp((0, 1), keepdim=True), (((2, 3), "n"),)),
    ("cumsum-0", lambda x: x.cumsum(0), (((2, 3), "n"),)),
    ("cumsum-1", lambda x: x.cumsum(-1), (((2, 3), "n"),)),
    # views
    ("reshape", lambda x: x.reshape(3, 2) * 1.5, (((2, 3), "n"),)),
    ("view", lambda x: x.view(-1) * 1.5, (((2, 3), "n"),)),
    ("permute", lambda x: x.permute(2, 0, 1).sin(), (((2, 3, 2), "n"),)),
    ("transpose", lambda x: x.transpose(0, 1).exp(), (((2, 3), "n"),)),
    ("T-mT", lambda x: x.T * x.mT, (((2, 3), "n"),)),
    ("expand", lambda x: x.expand(2, 3, 3).sin(), (((3, 1), "n"),)),
    ("broadcast_to", lambda x: x.broadcast_to((2, 3)) * 2, (((3,), "n"),)),
    ("squeeze-unsqueeze", lambda x: x.squeeze(1).unsqueeze(0).sin(), (((2, 1, 3), "n"),)),
    ("flatten-unflatten", lambda x: x.flatten().unflatten(0, (3, 2)).cos(), (((2, 3), "n"),)),
    ("basic-index", lambda x: x[1, ::2] * 2 + x[None, :, 1:].sum(), (((2, 3), "n"),)),
    ("basic-index-ellipsis", lambda x: x[..., 0].exp(), (((2, 3, 2), "n"),)),
    ("contiguous", lambda x: x.T.contiguous() * 2, (((2, 3), "n"),)),
    # copies
    ("adv-index-dups", lambda x: x[_idx(0, 1, 0, 0)] * 2, (((2, 3), "n"),)),
    ("adv-index-pair", lambda x: x[_idx(0, 1, 1), _idx(2, 0, 0)].exp(), (((2, 3), "n"),)),
    ("bool-mask", lambda x: x[x > 0] * 3, (((2, 3), "away"),)),
    ("cat", lambda a, b: tl.cat([a, b, a], 1).sin(), (((2, 3), "n"), ((2, 1), "n"))),
    ("stack", lambda a, b: tl.stack([a, b], -1).sin(), (((2, 3), "n"), ((2, 3), "n"))),
    ("split", lambda x: x.split([1, 2], dim=1)[1] * 2, (((2, 3), "n"),)),
    ("chunk", lambda x: x.chunk(2)[0].exp(), (((3, 2), "n"),)),
    ("gather", lambda x: x.gather(1, _idx([0, 0], [2, 1])) * 2, (((2, 3), "n"),)),
    ("scatter_add", lambda x, s: x.scatter_add(1, _idx([0, 0], [2, 1]), s), (((2, 3), "n"), ((2, 2), "n"))),
    ("index_select", lambda x: x.index_select(1, _idx(2, 0, 2)) * 2, (((2, 3), "n"),)),
    ("pad", lambda x: tl.pad(x, (1, 2, 0, 1), value=0.5).sin(), (((2, 3), "n"),)),
    ("repeat", lambda x: x.repeat(2, 1, 2).sin(), (((2, 3), "n"),)),
    ("flip", lambda x: x.flip((0, 1)) * tl.arange(3, dtype=tl.float64), (((2, 3), "n"),)),
    ("tril", lambda x: x.tril() * 2, (((3, 3), "n"),)),
    ("triu", lambda x: x.triu(1) * 2, (((2, 3), "n"),)),
    ("chain", lambda a, b: ((a @ b).tanh().softmax(-1) * b.sum(0)).log_softmax(0),
     (((2, 3), "n"), ((3, 3), "n"))),
]


def _inputs(name: str, specs) -> list:
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return [tl.tensor(make_array(shape, kind, rng, "float64"), requires_grad=True) for shape, kind in specs]


@pytest.mark.parametrize("fn,specs", [(f, s) for _, f, s in GC], ids=[i for i, _, _ in GC])
def test_gradcheck(fn, specs, request) -> None:
    inputs = _inputs(request.node.callspec.id, specs)
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-5)


def test_gradcheck_ids_unique() -> None:
    ids = [i for i, _, _ in GC]
    assert len(ids) == len(set(ids))


def test_gradcheck_catches_a_wrong_gradient() -> None:
    """The witness can fail: a deliberately wrong backward is caught with both Jacobians attached."""
    x = tl.tensor([[0.5, -1.0, 2.0]], dtype=tl.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as e:
        gradcheck(WrongSquare.apply, (x,))
    np.testing.assert_allclose(e.value.analytic[0][0], np.diag([1.5, -3.0, 6.0]))
    np.testing.assert_allclose(e.value.numeric[0][0], np.diag([1.0, -2.0, 4.0]), atol=1e-6)
    assert not gradcheck(WrongSquare.apply, (x,), raise_exception=False)


# ---- second derivatives: torch's double backward, and finite differences of the first gradient --------
SECOND: list[tuple[str, Callable, Callable, tuple]] = [
    ("tanh", lambda x: x.tanh(), lambda x: x.tanh(), ((2, 3),)),
    ("sigmoid", lambda x: x.sigmoid(), lambda x: x.sigmoid(), ((2, 3),)),
    ("exp", lambda x: x.exp(), lambda x: x.exp(), ((2, 3),)),
    ("log", lambda x: (x * x + 1).log(), lambda x: (x * x + 1).log(), ((2, 3),)),
    ("sin", lambda x: x.sin(), lambda x: x.sin(), ((2, 3),)),
    ("sqrt", lambda x: (x * x + 0.5).sqrt(), lambda x: (x * x + 0.5).sqrt(), ((2, 3),)),
    ("mul", lambda a, b: a * b * a, lambda a, b: a * b * a, ((2, 3), (3,))),
    ("div", lambda a, b: a / (b * b + 1), lambda a, b: a / (b * b + 1), ((2, 3), (2, 3))),
    ("pow", lambda x: (x * x + 0.5) ** 2.5, lambda x: (x * x + 0.5) ** 2.5, ((2, 3),)),
    ("matmul", lambda a, b: (a @ b) * (a @ b), lambda a, b: (a @ b) * (a @ b), ((2, 3), (3, 2))),
    ("softmax", lambda x: x.softmax(-1), lambda x: x.softmax(-1), ((2, 3),)),
    ("log_softmax", lambda x: x.log_softmax(0), lambda x: x.log_softmax(0), ((2, 3),)),
    ("gelu", lambda x: x.gelu(), lambda x: F.gelu(x), ((2, 3),)),
    ("gelu-tanh", lambda x: x.gelu(approximate="tanh"), lambda x: F.gelu(x, approximate="tanh"), ((2, 3),)),
    ("silu", lambda x: x.silu(), lambda x: F.silu(x), ((2, 3),)),
    ("softplus", lambda x: x.softplus(), lambda x: F.softplus(x), ((2, 3),)),
    ("logsumexp", lambda x: x.logsumexp(1), lambda x: x.logsumexp(1), ((2, 3),)),
    ("var", lambda x: x.var(1) * x.sum(), lambda x: x.var(1) * x.sum(), ((2, 3),)),
    ("mean-sum", lambda x: x.mean(0) * x.sum(1, keepdim=True), lambda x: x.mean(0) * x.sum(1, keepdim=True),
     ((2, 3),)),
    ("where", lambda x: tl.where(x > 0, x * x * x, x * x), lambda x: torch.where(x > 0, x * x * x, x * x),
     ((2, 3),)),
    ("index-cat", lambda x: tl.cat([x[:, 1:], x[tl.tensor([1, 0])]], 1) ** 2,
     lambda x: torch.cat([x[:, 1:], x[torch.tensor([1, 0])]], 1) ** 2, ((2, 3),)),
]


@pytest.mark.parametrize("f_tl,f_th,shapes", [(a, b, s) for _, a, b, s in SECOND],
                         ids=[i for i, *_ in SECOND])
def test_second_derivative_vs_torch(f_tl, f_th, shapes, request) -> None:
    rng = np.random.default_rng(zlib.crc32(request.node.callspec.id.encode()))
    arrays = [make_array(s, "away", rng, "float64") for s in shapes]
    xs_tl = [tl.tensor(a, requires_grad=True) for a in arrays]
    xs_th = [torch.tensor(a, requires_grad=True) for a in arrays]
    y_tl, y_th = f_tl(*xs_tl), f_th(*xs_th)
    g = make_array(y_th.shape, "n", rng, "float64")
    v = [make_array(s, "n", rng, "float64") for s in shapes]
    g1_tl = tl.autograd.grad(y_tl, xs_tl, tl.tensor(g), create_graph=True)
    g1_th = torch.autograd.grad(y_th, xs_th, torch.tensor(g), create_graph=True)
    for a, b in zip(g1_tl, g1_th):
        assert_close(a, b)
        assert a.requires_grad, "create_graph=True must give a differentiable gradient"
    # Hessian-vector products: d/dx <grad, v>
    s_tl = sum((a * tl.tensor(w)).sum() for a, w in zip(g1_tl, v))
    s_th = sum((b * torch.tensor(w)).sum() for b, w in zip(g1_th, v))
    g2_tl = tl.autograd.grad(s_tl, xs_tl, allow_unused=True)
    g2_th = torch.autograd.grad(s_th, xs_th, allow_unused=True)
    for i, (a, b) in enumerate(zip(g2_tl, g2_th)):
        if b is None:
            assert a is None or not np.any(a.detach().numpy()), f"input {i}"
        else:
            assert a is not None, f"input {i}: no second derivative (torch has one)"
            assert_close(a, b, msg=f"second derivative, input {i}: ")


@pytest.mark.parametrize("f_tl,shapes", [(a, s) for _, a, _, s in SECOND], ids=[i for i, *_ in SECOND])
def test_gradgradcheck(f_tl, shapes, request) -> None:
    """Finite differences of the first gradient (built with create_graph=True) match its own gradient."""
    rng = np.random.default_rng(zlib.crc32(request.node.callspec.id.encode()) + 1)
    xs = [tl.tensor(make_array(s, "away", rng, "float64"), requires_grad=True) for s in shapes]
    g = tl.tensor(make_array(f_tl(*xs).shape, "n", rng, "float64"))

    def first_grad(*inputs):
        with tl.enable_grad():  # gradcheck runs its finite-difference forwards under no_grad
            return tl.autograd.grad(f_tl(*inputs), inputs, g, create_graph=True)

    assert gradcheck(first_grad, xs, eps=1e-6, atol=1e-5, rtol=1e-4)


def test_gradcheck_of_inputs_on_a_device_perturbs_them_there():
    # a device tensor's host copy is read-only: the perturbation is written on the device, and undone after
    tl.manual_seed(0)
    x = tl.randn(3, 4, dtype=tl.float64).to("sim").requires_grad_()
    before = x.detach().cpu().numpy().copy()
    assert tl.autograd.gradcheck(lambda t: (t * t).sin().sum(1), (x,))
    np.testing.assert_array_equal(x.detach().cpu().numpy(), before)
    with pytest.raises(tl.autograd.GradcheckError, match="Jacobian mismatch"):
        tl.autograd.gradcheck(WrongSquare.apply, (x,))
