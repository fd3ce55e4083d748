"""The autograd engine and its user-facing rules, checked against PyTorch where PyTorch has an answer.

Covers: the stepping generator (``backward_steps``) and its order, accumulation, ``retain_grad``,
hooks, ``detach``, grad modes, ``tl.autograd.grad`` (incl. second derivatives), deep graphs,
error messages (non-scalar backward, freed graphs, in-place writes on leaves and on saved tensors),
and node inspection.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like.autograd import Function, Step

torch = pytest.importorskip("torch")

THIS_FILE = os.path.basename(__file__)


def lineno() -> int:
    """The caller's current line number."""
    return sys._getframe(1).f_lineno


def graph_nodes(root) -> set:
    """Every Function node reachable from ``root.grad_fn``."""
    out, stack = set(), [root.grad_fn]
    while stack:
        n = stack.pop()
        if n in out:
            continue
        out.add(n)
        stack.extend(p for p in n.next if isinstance(p, Function))
    return out


def small_graph():
    """x, w leaves; a = x * w used twice (a diamond); loss a scalar."""
    x = tl.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = tl.tensor([0.5, 0.25, -1.0], requires_grad=True)
    a = x * w
    b = a.exp()
    c = a + b
    loss = (c * c).sum()
    return x, w, loss


def torch_small_graph():
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, 0.25, -1.0], requires_grad=True)
    a = x * w
    loss = ((a + a.exp()) ** 2).sum()
    loss.backward()
    return x.grad.numpy(), w.grad.numpy()


# ---- the stepping engine ------------------------------------------------------------------------
def test_backward_steps_one_step_per_node_in_reverse_topological_order():
    x, w, loss = small_graph()
    nodes = graph_nodes(loss)
    consumers = {n: [m for m in nodes if n in m.next] for n in nodes}
    steps = []
    for step in loss.backward_steps():
        assert isinstance(step, Step)
        for consumer in consumers[step.node]:  # every consumer already ran
            assert consumer in [s.node for s in steps], f"{step.node.name} ran before {consumer.name}"
        steps.append(step)
    ran = [s.node for s in steps]
    assert len(ran) == len(set(ran)) == len(nodes), "each node exactly once"
    assert set(ran) == nodes
    assert ran[0] is loss.grad_fn
    assert [s.index for s in steps] == list(range(len(steps)))


def test_backward_step_records():
    x, w, loss = small_graph()
    filled_at = {}
    for step in loss.backward_steps():
        node = step.node
        assert step.seconds >= 0
        assert isinstance(step.grad_in, tl.Tensor) and tuple(step.grad_in.shape) == tuple(node.out_shape)
        assert isinstance(step.grads_out, tuple) and len(step.grads_out) == len(node.next)
        for leaf in step.leaves:
            assert leaf.grad is not None, "a leaf listed in a step has its .grad filled by then"
            filled_at[id(leaf)] = step.index
        for leaf in (x, w):  # leaves not yet listed have no grad yet
            if id(leaf) not in filled_at:
                assert leaf.grad is None
    assert set(filled_at) == {id(x), id(w)}


def test_first_step_receives_the_implicit_gradient_one():
    x, w, loss = small_graph()
    first = next(loss.backward_steps())
    assert first.node is loss.grad_fn and first.node.name == "Sum"
    assert first.grad_in.shape == () and first.grad_in.item() == 1.0


def test_draining_backward_steps_equals_backward():
    x1, w1, loss1 = small_graph()
    for _ in loss1.backward_steps():
        pass
    x2, w2, loss2 = small_graph()
    loss2.backward()
    np.testing.assert_array_equal(x1.grad.numpy(), x2.grad.numpy())
    np.testing.assert_array_equal(w1.grad.numpy(), w2.grad.numpy())
    tx, tw = torch_small_graph()
    np.testing.assert_allclose(x2.grad.numpy(), tx, rtol=1e-5)
    np.testing.assert_allclose(w2.grad.numpy(), tw, rtol=1e-5)


def test_backward_steps_is_lazy():
    x, w, loss = small_graph()
    gen = loss.backward_steps()
    assert x.grad is None and w.grad is None  # nothing runs until the first next()
    first = next(gen)
    assert first.node is loss.grad_fn
    gen.close()


def test_diamond_accumulates():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a, b = x * 2, x * 3
    (a * b).sum().backward()  # d/dx 6x^2 = 12x
    np.testing.assert_allclose(x.grad.numpy(), 12 * np.array([1.0, 2.0, 3.0]))


def test_leaf_grad_accumulates_across_backward_calls():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 + 3, 4 + 3])


def test_backward_with_explicit_gradient():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(tl.tensor([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 40.0])


def test_retain_grad_on_non_leaf():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y + 1
    y.retain_grad()
    assert y.retains_grad and not z.retains_grad and not x.retains_grad
    (z * z).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), 2 * (np.array([2.0, 4.0]) + 1))
    assert z.grad is None


def test_retain_grad_follows_an_inplace_op_like_torch():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.add_(1)
    assert y.retains_grad
    (y * y).sum().backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx * 2
    ty.retain_grad()
    ty.add_(1)
    (ty * ty).sum().backward()
    assert y.grad is not None, "retain_grad() was lost by the in-place op"
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_retain_grad_accumulates_over_two_backwards():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_allclose(y.grad.numpy(), 2 * 2 * np.array([2.0, 4.0]))


def test_register_hook_on_leaf_modifies_gradient_and_can_be_removed():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def double(g):
        seen.append(g.numpy().copy())
        return g * 2

    handle = x.register_hook(double)
    (x * x).sum().backward()
    np.testing.assert_allclose(seen[0], [2.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    handle.remove()
    x.grad = None
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    assert len(seen) == 1


def test_register_hook_on_non_leaf():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    handle = y.register_hook(lambda g: g * 0 + 1)  # replace d(loss)/dy by ones
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    handle.remove()
    x.grad = None
    y = x * 3
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 18 * np.array([1.0, 2.0]))


def test_register_hook_needs_requires_grad():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tl.ones(2).register_hook(lambda g: g)


def test_detach_shares_storage_and_version():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert d.storage is x.storage
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d.add_(1)  # allowed: d does not require grad
    assert x._version == d._version == 1
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 3.0])


def test_requires_grad_only_for_floating_point():
    with pytest.raises(RuntimeError, match="floating point"):
        tl.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        tl.tensor([1, 2], requires_grad=True)
    t = tl.tensor([1, 2])
    t.requires_grad_(False)  # turning it off is always fine
    assert not t.requires_grad


def test_requires_grad_false_on_non_leaf_raises():
    x = tl.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        (x * 2).requires_grad_(False)


# ---- grad modes ------------------------------------------------------------------------------------
def test_no_grad_and_enable_grad_as_context_managers():
    x = tl.tensor([1.0], requires_grad=True)
    with tl.no_grad():
        assert not tl.is_grad_enabled()
        y = x * 2
        with tl.enable_grad():
            assert tl.is_grad_enabled()
            z = x * 2
        assert not tl.is_grad_enabled()
    assert tl.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad
    assert z.grad_fn is not None and z.requires_grad


def test_grad_modes_as_decorators():
    @tl.no_grad()
    def f_call():
        return tl.is_grad_enabled()

    @tl.no_grad
    def f_bare():
        return tl.is_grad_enabled()

    @tl.set_grad_enabled(False)
    def f_set():
        return tl.is_grad_enabled()

    assert tl.is_grad_enabled(), "decorating must not switch the mode"
    assert f_call() is False and f_bare() is False and f_set() is False
    assert tl.is_grad_enabled()
    with tl.no_grad():
        @tl.enable_grad()
        def g():
            return tl.is_grad_enabled()

        assert g() is True
        assert not tl.is_grad_enabled()


def test_set_grad_enabled_as_call_and_context_manager():
    try:
        tl.set_grad_enabled(False)
        assert not tl.is_grad_enabled()
        assert (tl.tensor([1.0], requires_grad=True) * 2).grad_fn is None
    finally:
        tl.set_grad_enabled(True)
    assert tl.is_grad_enabled()
    with tl.set_grad_enabled(False):
        assert not tl.is_grad_enabled()
        with tl.set_grad_enabled(True):
            assert tl.is_grad_enabled()
        assert not tl.is_grad_enabled()
    assert tl.is_grad_enabled()


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with tl.no_grad():
            raise ValueError("boom")
    assert tl.is_grad_enabled()


# ---- tl.autograd.grad ----------------------------------------------------------------------------
def test_autograd_grad_multiple_inputs_and_allow_unused():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = tl.tensor([3.0, 4.0], requires_grad=True)
    unused = tl.tensor([5.0], requires_grad=True)
    out = (x * y).sum()
    gx, gy = tl.autograd.grad(out, [x, y], retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(gy.numpy(), [1.0, 2.0])
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        tl.autograd.grad(out, [x, unused], retain_graph=True)
    gx2, gu = tl.autograd.grad(out, [x, unused], allow_unused=True)
    assert gu is None
    np.testing.assert_allclose(gx2.numpy(), [3.0, 4.0])
    assert x.grad is None and y.grad is None and unused.grad is None, "grad() must not touch .grad"


def test_autograd_grad_of_intermediate():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    (gh,) = tl.autograd.grad((h * h).sum(), [h])
    np.testing.assert_allclose(gh.numpy(), [6.0, 12.0])


def test_second_derivative_with_create_graph():
    xs = np.array([-1.5, 0.5, 2.0])
    x = tl.tensor(xs, requires_grad=True)
    (g,) = tl.autograd.grad((x ** 3).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * xs ** 2, rtol=1e-6)
    assert g.requires_grad and g.grad_fn is not None
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * xs, rtol=1e-6)


def test_create_graph_backward_matches_torch():
    xs = np.array([0.3, -0.7, 1.1])
    x = tl.tensor(xs, requires_grad=True)
    y = (x.sin() * x).sum()
    y.backward(create_graph=True)
    gx = x.grad
    x.grad = None
    gx.sum().backward()
    tx = torch.tensor(xs, requires_grad=True)
    (tg,) = torch.autograd.grad((tx.sin() * tx).sum(), tx, create_graph=True)
    tg.sum().backward()
    np.testing.assert_allclose(gx.detach().numpy(), tg.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


# ---- deep graphs and error messages -------------------------------------------------------------
def test_deep_chain_has_no_recursion_limit():
    x = tl.tensor([1.0], dtype=tl.float64, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0001 ** 10_000], rtol=1e-9)


def test_backward_on_non_scalar_needs_gradient_and_names_the_shape():
    x = tl.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        (x * 2).backward()
    assert "(2, 3)" in str(e.value)
    assert "scalar" in str(e.value)


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        tl.ones(2).sum().backward()


def test_second_backward_through_freed_graph_raises_and_retain_graph_allows_it():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True") as e:
        y.backward()
    assert isinstance(e.value, tl.autograd.SavedTensorsFreedError)
    x.grad = None
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * np.array([1.0, 2.0]))


def test_saved_info_after_release_says_freed():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.sum().backward()
    assert y.grad_fn.saved_info() == [{"freed": True}]


# ---- in-place ops -----------------------------------------------------------------------------------
def test_inplace_on_leaf_requiring_grad_raises_but_works_under_no_grad():
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.add_(1)
    with pytest.raises(RuntimeError, match="leaf"):
        w[0] = 3.0
    assert w._version == 0
    with tl.no_grad():
        w.sub_(0.5)
        w[1] = 7.0
    assert w._version == 2
    np.testing.assert_array_equal(w.detach().numpy(), [0.5, 7.0])
    assert w.is_leaf and w.requires_grad


def test_inplace_into_an_expanded_tensor_is_refused_like_torch():
    torch = pytest.importorskip("torch")
    col = tl.tensor([10.0, 20.0, 30.0]).unsqueeze(1)
    wide = col.expand(3, 4)
    writes = {"add_": lambda t: t.add_(tl.tensor([0.0, 1.0, 2.0, 3.0])),
              "copy_": lambda t: t.copy_(tl.ones(3, 4)), "__setitem__": lambda t: t.__setitem__(0, 5.0)}
    for op, write in writes.items():
        with pytest.raises(RuntimeError, match=rf"{op}: more than one element .* strides \[(1, )?0\].*clone\(\)"):
            write(wide)
        with pytest.raises(RuntimeError):  # the oracle refuses the same write
            write_t = {"add_": lambda t: t.add_(torch.tensor([0.0, 1.0, 2.0, 3.0])),
                       "copy_": lambda t: t.copy_(torch.ones(3, 4)), "__setitem__": lambda t: t.__setitem__(0, 5.0)}
            write_t[op](torch.tensor([10.0, 20.0, 30.0]).unsqueeze(1).expand(3, 4))
    np.testing.assert_array_equal(col.numpy().ravel(), [10.0, 20.0, 30.0])  # nothing was written
    assert col._version == 0
    col.add_(1)  # the tensor itself, and a size-1 dim with stride 0, are still writable
    row = tl.zeros(3).expand(1, 3)
    assert row.stride() == (0, 1)
    row.add_(1)
    tl.zeros(1, 0).expand(3, 0).add_(1)  # no element at all: nothing is shared
    wide[:, 0] = tl.tensor([1.0, 2.0, 3.0])  # a region without shared elements may be written, as in torch
    twide = torch.tensor([10.0, 20.0, 30.0]).unsqueeze(1).expand(3, 4)
    twide[:, 0] = torch.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(col.numpy().ravel(), twide[:, 0].numpy())
    col.copy_(tl.tensor([[11.0], [21.0], [31.0]]))
    np.testing.assert_array_equal(col.numpy().ravel(), [11.0, 21.0, 31.0])
    wide.clone().add_(1)  # the fix the message names
    wide.fill_(2.0)  # one value for every element: well defined, and torch allows it too
    np.testing.assert_array_equal(col.numpy().ravel(), [2.0, 2.0, 2.0])


def test_inplace_with_autograd_on_a_view_becomes_the_base_history():
    """(Refused until issue 15; tests/test_view_inplace.py compares more cases with torch.)"""
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y[1:].mul_(2)
    assert y.grad_fn.name == "WriteThroughView"
    (y * tl.tensor([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 20.0, 200.0])
    with tl.no_grad():
        y[1:].mul_(2)  # without autograd a view may be written
    np.testing.assert_array_equal(y.detach().numpy(), [1.0, 8.0, 12.0])


def test_inplace_on_non_leaf_matches_torch():
    xs = np.array([1.0, -2.0, 3.0])
    x = tl.tensor(xs, requires_grad=True)
    y = x * 2
    y.add_(1)
    y.mul_(3)
    (y * y).sum().backward()
    tx = torch.tensor(xs, requires_grad=True)
    ty = tx * 2
    ty.add_(1)
    ty.mul_(3)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    assert y.grad_fn.name == "Mul" and not y.is_leaf


def test_setitem_on_non_leaf_matches_torch():
    xs = np.array([1.0, -2.0, 3.0])
    x = tl.tensor(xs, requires_grad=True)
    y = x * 2
    y[0] = 5
    (y * y).sum().backward()
    tx = torch.tensor(xs, requires_grad=True)
    ty = tx * 2
    ty[0] = 5
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_setitem_with_a_tensor_that_requires_grad_matches_torch():
    xs, vs = np.array([1.0, -2.0, 3.0]), np.array([4.0, 5.0])
    x, v = tl.tensor(xs, requires_grad=True), tl.tensor(vs, requires_grad=True)
    y = x * 1
    y[1:] = v * v
    (y * x).sum().backward()
    tx, tv = torch.tensor(xs, requires_grad=True), torch.tensor(vs, requires_grad=True)
    ty = tx * 1
    ty[1:] = tv * tv
    (ty * tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy())


def test_modifying_a_saved_tensor_raises_version_mismatch_naming_op_and_site():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    b = tl.tensor([3.0, 4.0], requires_grad=True)
    c = a * 1
    d = c * b  # Mul saves c (version 0)
    write_line = lineno() + 1
    c.mul_(2)
    with pytest.raises(tl.autograd.VersionMismatchError) as e:
        d.sum().backward()
    msg = str(e.value)
    assert "Mul" in msg
    assert "[2]" in msg and "float32" in msg
    assert "version 1" in msg and "version 0" in msg
    assert f"{THIS_FILE}:{write_line}" in msg, msg
    err = e.value
    assert (err.saved_version, err.current_version, err.shape, err.dtype) == (0, 1, (2,), "float32")
    assert err.bumps and err.bumps[0].site.lineno == write_line and err.bumps[0].op == "mul_"


def test_modifying_a_saved_output_names_exp():
    x = tl.tensor([0.5, 1.5], dtype=tl.float64, requires_grad=True)
    y = (x * 1).exp()  # Exp saves its output
    write_line = lineno() + 2
    with tl.no_grad():
        y.add_(1)
    with pytest.raises(tl.autograd.VersionMismatchError) as e:
        y.sum().backward()
    msg = str(e.value)
    assert "Exp" in msg and "float64" in msg
    assert f"{THIS_FILE}:{write_line}" in msg, msg


def test_saved_info_shows_stale_tensor():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    c = a * 1
    d = c * a
    info = d.grad_fn.saved_info()
    assert [row["stale"] for row in info] == [False, False]
    with tl.no_grad():
        c.zero_()
    info = d.grad_fn.saved_info()
    assert info[0]["stale"] is True and info[1]["stale"] is False
    assert info[0]["saved_version"] == 0 and info[0]["current_version"] == 1
    assert info[0]["shape"] == (2,) and info[0]["dtype"] == "float32"
    assert [b.op for b in info[0]["bumps"]] in (["zero_"], ["fill_"])


# ---- node inspection ---------------------------------------------------------------------------
def test_function_node_inspection():
    x = tl.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    w = tl.tensor([[0.5], [1.0]], requires_grad=True)
    m = x * w  # broadcast (2, 3)
    node = m.grad_fn
    assert node.name == "Mul"
    assert len(node.next) == 2
    assert node.next[0] is x and node.next[1] is w  # leaves accumulate .grad
    # the shape and dtype each input's gradient is reduced to (the engine un-broadcasts from these)
    assert node.input_meta() == (((1, 3), tl.float32), ((2, 1), tl.float32))
    assert (x * 2).grad_fn.input_meta() == (((1, 3), tl.float32), None)  # a number gets no gradient
    saved = node.saved_tensors
    assert [tuple(t.shape) for t in saved] == [(1, 3), (2, 1)]
    s = m.sum(1)
    assert s.grad_fn.name == "Sum"
    assert s.grad_fn.next[0] is node
    p = m.permute(1, 0)
    assert p.grad_fn.name == "Permute" and p.grad_fn.attributes()["dims"] == (1, 0)
    assert repr(node) == f"<MulBackward0 object at {id(node):#x}>"  # (torch's repr)


def test_integer_and_bool_outputs_are_not_recorded():
    x = tl.tensor([1.5, -2.0], requires_grad=True)
    for out in (x.long(), x.argmax(), x > 0, x.int()):
        assert out.grad_fn is None and not out.requires_grad, out.dtype
    f = x.long().float()
    assert f.grad_fn is None and not f.requires_grad


def test_ops_on_tensors_without_grad_record_nothing():
    a, b = tl.ones(2), tl.ones(2)
    c = a * b + 1
    assert c.grad_fn is None and not c.requires_grad and c.is_leaf


def test_mixed_devices_error():
    from devbackend import DevBackend

    from tinygrad_like.device import register_device, unregister_device

    register_device("testdev", DevBackend())
    try:
        a = tl.ones(2, requires_grad=True)
        b = tl.ones(2, device="testdev")
        with pytest.raises(RuntimeError) as e:
            a * b
        assert "cpu" in str(e.value) and "testdev" in str(e.value)
    finally:
        unregister_device("testdev")
