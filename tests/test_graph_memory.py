"""A graph is freed by reference counting alone: no op leaves a reference cycle behind.

Ops whose backward reads their own output (relu, tanh, exp, softmax, ...) keep it for backward. Were they to keep
the output tensor itself, output -> grad_fn -> saved output would be a cycle, and every activation of a training
step would wait for Python's cyclic garbage collector (which runs rarely for old objects) to be freed.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import tinygrad_like as tl

# every op that keeps its own output for backward (Function.save_output), plus a few that do not
OPS = {
    "relu": lambda x: x.relu(), "tanh": lambda x: x.tanh(), "sigmoid": lambda x: x.sigmoid(),
    "exp": lambda x: x.exp(), "sqrt": lambda x: x.abs().sqrt(), "rsqrt": lambda x: (x.abs() + 1).rsqrt(),
    "reciprocal": lambda x: x.reciprocal(), "softmax": lambda x: x.softmax(-1),
    "log_softmax": lambda x: x.log_softmax(-1), "logsumexp": lambda x: x.logsumexp(-1),
    "amax": lambda x: x.amax(-1), "max": lambda x: x.max(), "std": lambda x: x.std(-1),
    "mul": lambda x: x * x, "matmul": lambda x: x @ x.mT, "pow": lambda x: x.abs() ** x,
}


@pytest.fixture
def no_cycle_collector():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("name", sorted(OPS))
def test_the_output_and_its_node_die_with_the_last_reference(name, no_cycle_collector):
    x = tl.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
    y = OPS[name](x)
    node = weakref.ref(y.grad_fn)
    out = weakref.ref(y)
    del y
    assert out() is None and node() is None, f"{name}: its output or node outlived the last reference (a cycle)"


def test_a_training_step_leaves_nothing_for_the_cycle_collector(no_cycle_collector):
    tl.manual_seed(0)
    model = tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.Tanh(), tl.nn.Linear(8, 8), tl.nn.ReLU(), tl.nn.Linear(8, 3))
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    x, y = tl.randn(5, 4), tl.tensor([0, 1, 2, 1, 0])
    for _ in range(3):
        loss = tl.nn.functional.cross_entropy(model(x).softmax(-1).log(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    del loss
    assert gc.collect() == 0


def test_a_recorded_backward_still_differentiates_through_the_kept_output():
    """With create_graph the kept output comes back with its node as history: tanh's second derivative is
    -2 tanh(x) (1 - tanh(x)^2), which needs the path through the output."""
    x0 = np.array([0.3, -1.2, 2.0])
    x = tl.tensor(x0, requires_grad=True)
    (g,) = tl.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (h,) = tl.autograd.grad(g.sum(), x)
    t = np.tanh(x0)
    np.testing.assert_allclose(h.numpy(), -2 * t * (1 - t * t), rtol=1e-12)
    y = x.relu()
    with tl.no_grad():  # (as a plain backward reads it: the alias alone)
        assert y.grad_fn.saved_tensors[0].grad_fn is None
    kept = y.grad_fn.saved_tensors[0]  # (while recording: the output again, with its node)
    assert kept.grad_fn is y.grad_fn and kept.storage is y.storage
