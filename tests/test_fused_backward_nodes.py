"""The fused backward kernels are graph nodes of their own (issue 15, part 3): the formula ``loss.backward()`` runs
is the one ``create_graph=True`` records, and its own derivative is right.

Each case computes first derivatives with ``create_graph=True``, checks that the recorded graph holds the fused
node, then differentiates again: against PyTorch's second derivatives, and against finite differences of the first
derivatives in float64 (``gradcheck`` of the function ``x -> d f / d x``).
"""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")  # the oracle: this module skips without it

F, TF = tl.nn.functional, torch.nn.functional
TARGET = np.array([0, 2, 4, 1])


def _rng():
    return np.random.default_rng(7)


# name, fused node expected in the graph of the first derivative, f(lib, functional, *inputs), input arrays
CASES = [
    ("relu", "ReluBackward", lambda L, FF, z: (z.relu() ** 3).sum(), lambda r: [r.standard_normal((4, 5))]),
    ("leaky_relu", "LeakyReluBackward", lambda L, FF, z: (FF.leaky_relu(z, 0.1) ** 3).sum(),
     lambda r: [r.standard_normal((4, 5))]),
    ("tanh", "TanhBackward", lambda L, FF, z: (z.tanh() ** 2).sum(), lambda r: [r.standard_normal((4, 5))]),
    ("sigmoid", "SigmoidBackward", lambda L, FF, z: (z.sigmoid() ** 2).sum(), lambda r: [r.standard_normal((4, 5))]),
    ("gelu", "GeluBackward", lambda L, FF, z: (FF.gelu(z * 2) ** 2).sum(), lambda r: [r.standard_normal((4, 5))]),
    ("gelu_tanh", "GeluBackward", lambda L, FF, z: (FF.gelu(z * 2, approximate="tanh") ** 2).sum(),
     lambda r: [r.standard_normal((4, 5))]),
    ("softmax", "SoftmaxBackward", lambda L, FF, z: (z.softmax(1) ** 2).sum(), lambda r: [r.standard_normal((4, 5))]),
    ("log_softmax", "LogSoftmaxBackward", lambda L, FF, z: (z.log_softmax(1) ** 2).sum(),
     lambda r: [r.standard_normal((4, 5))]),
    ("conv2d", "ConvInputGrad", lambda L, FF, x, w: (FF.conv2d(x, w, padding=1) ** 2).sum(),
     lambda r: [r.standard_normal((2, 2, 5, 5)), r.standard_normal((3, 2, 3, 3))]),
    ("conv2d_stride2", "ConvWeightGrad", lambda L, FF, x, w: (FF.conv2d(x, w, stride=2) ** 2).sum(),
     lambda r: [r.standard_normal((2, 2, 5, 5)), r.standard_normal((3, 2, 3, 3))]),
    ("max_pool2d", "MaxPool2dBackward", lambda L, FF, x: (FF.max_pool2d(x, 2) ** 3).sum(),
     lambda r: [r.standard_normal((2, 2, 4, 4))]),
    ("layer_norm", "LayerNormBackward", lambda L, FF, z, w, b: (FF.layer_norm(z, (5,), w, b) ** 3).sum(),
     lambda r: [r.standard_normal((4, 5)), r.standard_normal(5), r.standard_normal(5)]),
    ("cross_entropy", "CrossEntropyBackward",
     lambda L, FF, z: FF.cross_entropy(z, L.tensor(TARGET), label_smoothing=0.1) * 3,
     lambda r: [r.standard_normal((4, 5))]),
]


def _graph_names(t) -> set:
    seen, stack = set(), [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen or not isinstance(n, tl.autograd.Function):
            continue
        seen.add(n)
        stack += list(n.next)
    return {n.name for n in seen}


@pytest.mark.parametrize("name,node,f,make", CASES, ids=[c[0] for c in CASES])
def test_second_derivatives_through_fused_nodes_match_torch(name, node, f, make):
    arrs = make(_rng())
    xs = [tl.tensor(a, requires_grad=True) for a in arrs]
    ts = [torch.tensor(a, requires_grad=True) for a in arrs]
    gs = tl.autograd.grad(f(tl, F, *xs), xs, create_graph=True)
    gts = torch.autograd.grad(f(torch, TF, *ts), ts, create_graph=True)
    for g, gt in zip(gs, gts):
        np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), rtol=1e-7, atol=1e-9)
    assert node in set().union(*(_graph_names(g) for g in gs)), f"{node} is not a node of the recorded backward"
    s = sum(((g * g).sum() for g in gs), tl.tensor(0.0, dtype=tl.float64))
    st = sum(((g * g).sum() for g in gts), torch.tensor(0.0, dtype=torch.float64))
    g2 = tl.autograd.grad(s, xs, allow_unused=True)
    g2t = torch.autograd.grad(st, ts, allow_unused=True)
    for a, b in zip(g2, g2t):
        a = None if a is None else a.detach().numpy()
        b = None if b is None else b.detach().numpy()
        if a is None or b is None:  # an input the second derivative does not reach: zero on the other side
            np.testing.assert_allclose(a if a is not None else 0.0, b if b is not None else 0.0, atol=0)
            continue
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name,node,f,make", CASES, ids=[c[0] for c in CASES])
def test_first_derivatives_are_differentiable_by_finite_differences(name, node, f, make):
    """gradcheck of x -> df/dx: the fused node's own backward against finite differences (float64)."""
    xs = [tl.tensor(a, requires_grad=True) for a in make(_rng())]

    def first(*inputs):
        with tl.enable_grad():  # (gradcheck evaluates fn under no_grad for its finite differences)
            inputs = [t if t.requires_grad else t.detach().requires_grad_() for t in inputs]
            return tl.autograd.grad(f(tl, F, *inputs), inputs, create_graph=True)[0]

    assert tl.autograd.gradcheck(first, xs, eps=1e-6, atol=1e-5, rtol=1e-4)


def test_a_plain_backward_records_nothing_and_runs_the_same_nodes():
    """Without create_graph the fused nodes run but record nothing: the gradients are plain tensors."""
    x = tl.tensor(_rng().standard_normal((3, 4)), requires_grad=True)
    steps = list((x.tanh().relu() ** 2).sum().backward_steps())
    assert [s.node.name for s in steps] == ["Sum", "Pow", "Relu", "Tanh"]
    assert all(g is None or g.grad_fn is None for s in steps for g in s.grads_out)
