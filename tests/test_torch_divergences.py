"""Where tinygrad_like used to give NaN, another dtype or no derivative where PyTorch does not (issue 15's
fuzzer findings). Each program runs against torch; values, NaN positions and dtypes must agree."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")
INF = float("inf")


def ce_with_a_minus_inf_logit(lib):
    z = lib.tensor([[1.0, -INF, 3.0]], requires_grad=True)
    loss = lib.nn.functional.cross_entropy(z, lib.tensor([0]))
    loss.backward()
    return loss, z.grad


def std_of_constant_data(lib):
    x = lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
    s = x.std()
    s.backward()
    return s, x.grad


def std_over_a_dim_with_one_constant_row(lib):
    x = lib.tensor([[1.0, 1.0], [1.0, 3.0]], requires_grad=True)
    s = x.std(dim=1)
    s.sum().backward()
    return s, x.grad


def clamp_with_an_infinite_gradient(lib):
    x = lib.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    x.clamp(-1, 1).backward(lib.tensor([INF, INF, INF]))
    return (x.grad,)


def maximum_with_an_infinite_gradient(lib):
    a = lib.tensor([1.0, 3.0, 2.0], requires_grad=True)
    b = lib.tensor([2.0, 1.0, 2.0], requires_grad=True)
    lib.maximum(a, b).backward(lib.tensor([INF, INF, 4.0]))
    return a.grad, b.grad


def minimum_with_an_infinite_gradient(lib):
    a = lib.tensor([1.0, 3.0, 2.0], requires_grad=True)
    b = lib.tensor([2.0, 1.0, 2.0], requires_grad=True)
    lib.minimum(a, b).backward(lib.tensor([INF, INF, 4.0]))
    return a.grad, b.grad


def max_of_all_with_an_infinite_gradient(lib):
    a = lib.tensor([1.0, 3.0], requires_grad=True)
    a.max().backward(lib.tensor(INF))
    return (a.grad,)


def amin_with_an_infinite_gradient(lib):  # torch's own nan off the minimum
    a = lib.tensor([1.0, 3.0], requires_grad=True)
    a.amin().backward(lib.tensor(INF))
    return (a.grad,)


def cat_of_float64_and_a_float32_leaf(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
    c = lib.cat([a, b])
    c.sum().backward()
    return c, a.grad, b.grad


def stack_of_float64_and_a_float32_leaf(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    (lib.stack([a, b]) * 2).sum().backward()
    return a.grad, b.grad


def sign_is_differentiable_with_zero_gradient(lib):
    x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    (g,) = lib.autograd.grad((x.sign() * 3).sum(), x, create_graph=True)
    return (g,)


def second_derivative_of_leaky_relu(lib):
    x = lib.tensor([-1.0, 2.0], requires_grad=True)
    (g,) = lib.autograd.grad(lib.nn.functional.leaky_relu(x, 0.1).sum(), x, create_graph=True)
    (h,) = lib.autograd.grad(g.sum(), x)
    return g, h


def second_derivative_of_relu(lib):
    x = lib.tensor([-1.0, 2.0], requires_grad=True)
    (g,) = lib.autograd.grad((x.relu() * x).sum(), x, create_graph=True)
    (h,) = lib.autograd.grad(g.sum(), x)
    return g, h


CASES = [ce_with_a_minus_inf_logit, std_of_constant_data, std_over_a_dim_with_one_constant_row,
         clamp_with_an_infinite_gradient, maximum_with_an_infinite_gradient, minimum_with_an_infinite_gradient,
         max_of_all_with_an_infinite_gradient, amin_with_an_infinite_gradient, cat_of_float64_and_a_float32_leaf,
         stack_of_float64_and_a_float32_leaf, sign_is_differentiable_with_zero_gradient,
         second_derivative_of_leaky_relu, second_derivative_of_relu]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_matches_torch(case):
    want, got = case(torch), case(tl)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_sign_of_a_bool_tensor_is_refused_clearly():
    with pytest.raises(RuntimeError, match="sign: boolean tensors are not supported"):
        tl.tensor([True, False]).sign()
    assert tl.tensor([-2, 0, 5]).sign().tolist() == [-1, 0, 1]
