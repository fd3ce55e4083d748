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


def second_derivatives_of_pow_through_its_output(lib):
    """d/db (a ** b) = a ** b * log(a) reads the output: with create_graph the output must carry its history, or
    the second derivatives through it are missing (the grad in b was refused as unused)."""
    a = lib.tensor([2.0, 3.0], requires_grad=True, dtype=lib.float64)
    b = lib.tensor([1.5, 0.5], requires_grad=True, dtype=lib.float64)
    ga, gb = lib.autograd.grad((a ** b).sum(), (a, b), create_graph=True)
    return (ga, gb, *lib.autograd.grad(gb.sum(), (a, b), retain_graph=True), *lib.autograd.grad(ga.sum(), (a, b)))


CASES = [ce_with_a_minus_inf_logit, std_of_constant_data, std_over_a_dim_with_one_constant_row,
         clamp_with_an_infinite_gradient, maximum_with_an_infinite_gradient, minimum_with_an_infinite_gradient,
         max_of_all_with_an_infinite_gradient, amin_with_an_infinite_gradient, cat_of_float64_and_a_float32_leaf,
         stack_of_float64_and_a_float32_leaf, sign_is_differentiable_with_zero_gradient,
         second_derivative_of_leaky_relu, second_derivative_of_relu,
         second_derivatives_of_pow_through_its_output]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_matches_torch(case):
    want, got = case(torch), case(tl)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_sign_of_a_bool_tensor_is_the_bool_itself_as_in_torch():
    got, want = tl.tensor([True, False]).sign(), torch.tensor([True, False]).sign()
    assert got.dtype is tl.bool and got.tolist() == want.tolist() == [True, False]
    assert tl.tensor([-2, 0, 5]).sign().tolist() == [-1, 0, 1]


# ---- clear errors where torch refuses, and torch's answers where it does not -------------------------------
REFUSED = [
    ("int ** negative int", lambda lib: lib.tensor([1, 2]) ** -1, RuntimeError,
     "Integers to negative integer powers are not allowed"),
    ("wrong-shape bool mask", lambda lib: lib.tensor([1.0, 2.0])[lib.tensor([True, False, True])], IndexError,
     r"The shape of the mask \[3\] at index 0 does not match the shape of the indexed tensor \[2\] at index 0"),
    ("wrong-shape bool mask in setitem",
     lambda lib: lib.tensor([[1.0, 2.0]]).__setitem__((slice(None), lib.tensor([True, False, True])), 0.0),
     IndexError, r"The shape of the mask \[3\] at index 0 does not match the shape of the indexed tensor"),
    ("float class indices", lambda lib: lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([0.0, 1.0])),
     RuntimeError, "expected target dtype to be Long"),
    ("mixed-dtype matmul", lambda lib: lib.ones(2, 2) @ lib.ones(2, 2, dtype=lib.float64), RuntimeError,
     "same dtype"),
    ("mixed-dtype linear", lambda lib: lib.nn.functional.linear(lib.ones(2, 2), lib.ones(2, 2, dtype=lib.float64)),
     RuntimeError, "same dtype"),
    ("gelu of an int tensor", lambda lib: lib.nn.functional.gelu(lib.tensor([1, -2])), NotImplementedError,
     "not implemented for"),
    ("softmax of an int tensor", lambda lib: lib.tensor([1, 2]).softmax(0), NotImplementedError, "not implemented for"),
    ("leaky_relu of a bool tensor", lambda lib: lib.nn.functional.leaky_relu(lib.tensor([True])),
     NotImplementedError, "not implemented for"),
    ("relu of a bool tensor", lambda lib: lib.tensor([True]).relu(), RuntimeError, "(B|b)oolean inputs"),
    ("negation of a bool tensor", lambda lib: -lib.tensor([True]), RuntimeError, "boolean inputs"),
    ("masked_fill(-inf) on an int tensor",
     lambda lib: lib.tensor([1, 2]).masked_fill(lib.tensor([True, False]), float("-inf")), RuntimeError,
     "cannot be converted to type"),
]


@pytest.mark.parametrize("what,fn,exc,match", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_clearly_where_torch_refuses(what, fn, exc, match):
    with pytest.raises(exc):
        fn(torch)
    with pytest.raises(exc, match=match):
        fn(tl)


def test_linear_names_a_wrong_shape_bias():
    with pytest.raises(RuntimeError, match=r"the bias has shape \(5,\) but the weight has 4 output features"):
        tl.nn.functional.linear(tl.ones(2, 3), tl.ones(4, 3), tl.ones(5))


ANSWERED = [
    ("int tensor ** int tensor with a negative power",
     lambda lib: lib.tensor([1, 2, -1, 3]) ** lib.tensor([-1, 2, -3, -2])),
    ("3 ** int tensor", lambda lib: 3 ** lib.tensor([-1, 2, 0])),
    ("-1 ** int tensor", lambda lib: (-1) ** lib.tensor([-1, -2, 3])),
    ("relu of an int tensor", lambda lib: lib.tensor([1, -2]).relu()),
    ("sigmoid of an int tensor", lambda lib: lib.tensor([1, -2]).sigmoid()),
    ("Linear with in_features=0", lambda lib: lib.nn.Linear(0, 3)(lib.ones(2, 0)).shape),
    ("masked_fill of a float on an int tensor",
     lambda lib: lib.tensor([1, 2]).masked_fill(lib.tensor([True, False]), 2.5)),
]


@pytest.mark.parametrize("what,fn", ANSWERED, ids=[r[0] for r in ANSWERED])
def test_answers_where_torch_answers(what, fn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that initialising a zero-element tensor is a no-op
        want, got = fn(torch), fn(tl)
    if isinstance(want, torch.Size):
        assert tuple(got) == tuple(want)
        return
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_a_bfloat16_safetensors_file_from_torch_loads_as_bfloat16(tmp_path):
    """(Once a divergence: before tl.bfloat16 existed, BF16 loaded widened to float32.)"""
    st = pytest.importorskip("safetensors.torch")
    path = tmp_path / "bf16.safetensors"
    w = torch.tensor([[1.5, -2.25], [3.0e-3, 1.0e30]], dtype=torch.bfloat16)
    st.save_file({"w": w, "b": torch.arange(3, dtype=torch.int64)}, str(path))
    d = tl.load(path)
    assert d["w"].dtype is tl.bfloat16 and d["b"].dtype is tl.int64
    np.testing.assert_array_equal(d["w"].float().numpy(), w.float().numpy())  # the same 16 bits
    assert d["b"].tolist() == [0, 1, 2]


# ---- found by tests/fuzz_torch.py ------------------------------------------------------------------------
def _both(fn):
    """Run ``fn(lib)`` in both libraries: both raise, or both return equal values."""
    out = []
    for lib in (torch, tl):
        try:
            out.append(fn(lib))
        except RuntimeError as e:
            out.append(e)
    return out


def test_in_place_with_a_partially_overlapping_input_is_refused_like_torch():
    """x.add_(x[0]) on a contiguous tensor, x.mul_(x.unsqueeze(0)): the input shares part of the memory written."""
    def add_row(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]]).reshape(4)
        return x.add_(x[:2].repeat(2) * 0 + x[1:3].sum() * 0 + x[0])  # (a fresh input: allowed)

    want, got = _both(add_row)
    assert not isinstance(want, Exception) and got.tolist() == want.tolist()
    for fn in (lambda lib: (lambda v: v.add_(v[0]))(lib.tensor([0.5]).exp()),
               lambda lib: (lambda v: v.mul_(v.unsqueeze(0)))(lib.ones(1, 3) * 2)):
        want, got = _both(fn)
        assert isinstance(want, RuntimeError)
        assert isinstance(got, RuntimeError) and "refer to a single memory location" in str(got)


def test_copying_a_tensor_onto_itself_is_allowed_even_expanded():
    for lib in (torch, tl):
        e = (lib.ones(3) * 2).expand(2, 3)
        assert e.copy_(e).tolist() == [[2.0] * 3] * 2


def test_pow_with_a_tensor_exponent_keeps_its_output_like_torch():
    """torch keeps x ** t's output (its exponent gradient reads it): writing it is an error in both."""
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x ** lib.tensor([2.0, 3.0])
        y.add_(1)
        y.sum().backward()
        return x.grad

    want, got = _both(prog)
    assert isinstance(want, RuntimeError) and isinstance(got, RuntimeError)


def test_setitem_through_an_expanded_view_writes_every_alias_like_torch():
    def prog(lib):
        base = lib.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        e = base.expand(2, 3)
        e[0] = lib.tensor(5.0, requires_grad=True) * 2
        return e.detach()

    want, got = _both(prog)
    assert got.tolist() == want.tolist() == [[10.0] * 3] * 2
