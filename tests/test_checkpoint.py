"""Gradient checkpointing: the same numbers as without it, dropout included, for less kept state."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like.autograd.function import VersionMismatchError
from tinygrad_like.utils.checkpoint import checkpoint, checkpoint_sequential

nn, F = tl.nn, tl.nn.functional


def make_net():
    tl.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 16), nn.Tanh(),
                         nn.Dropout(0.3), nn.Linear(16, 3))


def grads_of(net, run, seed=1, x_grad=False):
    net.zero_grad()
    x = tl.tensor(np.random.default_rng(0).standard_normal((8, 5)).astype(np.float32), requires_grad=x_grad)
    tl.manual_seed(seed)
    y = run(net, x)
    (y * y).sum().backward()
    out = [y.detach().numpy().copy()] + [p.grad.numpy().copy() for p in net.parameters()]
    return out + ([x.grad.numpy().copy()] if x_grad else [])


@pytest.mark.parametrize("x_grad", [False, True])
@pytest.mark.parametrize("segments", [1, 2, 3, 7])
def test_checkpoint_sequential_matches_plain_run_with_dropout(backward_mode, segments, x_grad):
    net = make_net()
    plain = grads_of(net, lambda n, x: n(x), x_grad=x_grad)
    ckpt = grads_of(net, lambda n, x: checkpoint_sequential(n, segments, x), x_grad=x_grad)
    for a, b in zip(plain, ckpt):
        np.testing.assert_array_equal(a, b)


def test_without_rng_restore_the_masks_differ():
    """The control: not restoring the generator gives different masks on recomputation."""
    net = make_net()
    plain = grads_of(net, lambda n, x: n(x))
    ckpt = grads_of(net, lambda n, x: checkpoint(n, x, preserve_rng_state=False))
    assert not all(np.array_equal(a, b) for a, b in zip(plain[1:], ckpt[1:]))


def test_checkpoint_keeps_only_inputs_and_leaves_the_generator_where_it_was():
    net = make_net()
    x = tl.randn(4, 5, requires_grad=True)
    y = checkpoint(net, x)
    node = y.grad_fn
    assert node.name == "Checkpoint"
    assert [s["shape"] for s in node.saved_info()] == [(4, 5)]  # no activations kept
    after_forward = tl.rand(3).numpy()
    tl.manual_seed(42)
    expected = tl.rand(3).numpy()
    tl.manual_seed(42)
    y.sum().backward()  # recomputes with the saved state, then puts the generator back
    np.testing.assert_array_equal(tl.rand(3).numpy(), expected)
    assert after_forward.shape == (3,)


def test_checkpoint_function_with_extra_arguments_and_closure_params():
    lin = nn.Linear(3, 2)
    x = tl.randn(4, 3, requires_grad=True)
    b = tl.randn(2, requires_grad=True)

    def seg(x, scale, b):
        return lin(x) * scale + b

    y = checkpoint(seg, x, 2.0, b)
    y.pow(2).sum().backward()
    gx, gb, gw = x.grad.numpy().copy(), b.grad.numpy().copy(), lin.weight.grad.numpy().copy()
    x.grad = b.grad = None
    lin.zero_grad()
    seg(x, 2.0, b).pow(2).sum().backward()
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gb, b.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gw, lin.weight.grad.numpy(), rtol=1e-6)


def test_checkpoint_errors_and_no_grad():
    lin = nn.Linear(3, 2)
    with pytest.raises(TypeError, match="expected a callable"):
        checkpoint(3, tl.zeros(1))
    with pytest.raises(TypeError, match="first input must be a Tensor"):
        checkpoint(lambda s, x: x, 2.0, tl.zeros(1))
    with pytest.raises(TypeError, match="must return one Tensor, got tuple"):
        checkpoint(lambda x: (x, x), tl.zeros(2, requires_grad=True))
    with pytest.raises(ValueError, match=r"segments must be in \[1, 3\]"):
        checkpoint_sequential(nn.Sequential(lin, nn.ReLU(), nn.Identity()), 5, tl.zeros(1, 3))
    with tl.no_grad():
        y = checkpoint(lin, tl.zeros(1, 3))
    assert y.grad_fn is None


def test_in_place_change_of_a_checkpointed_input_is_caught():
    x = tl.randn(4, 3, requires_grad=True)
    h = x * 1.0
    y = checkpoint(nn.Linear(3, 2), h)
    h.mul_(2)
    with pytest.raises(VersionMismatchError, match="saved by Checkpoint"):
        y.sum().backward()


def test_closure_parameters_get_gradients_when_the_input_needs_none(backward_mode):
    tl.manual_seed(0)
    lin = nn.Linear(3, 3)
    x = tl.randn(2, 3)
    checkpoint(lambda t: lin(t).relu(), x).sum().backward()
    got = lin.weight.grad.numpy().copy()
    lin.zero_grad()
    lin(x).relu().sum().backward()
    np.testing.assert_array_equal(got, lin.weight.grad.numpy())
    with pytest.warns(UserWarning, match="will have no gradient"):
        checkpoint(lambda t: t * 2, tl.randn(2))


def test_checkpoint_output_never_aliases_an_input():
    x = tl.randn(2, 3, requires_grad=True)
    y = checkpoint(lambda t: t.reshape(-1), x)
    assert y.storage is not x.storage
    with tl.no_grad():
        y.add_(1)
    assert x._version == 0
