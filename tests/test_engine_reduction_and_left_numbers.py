"""What the engine does with each gradient now that ops return them unreduced (issue 15, part 3), and the numbers on
the left of an operator: ``2 - x`` and ``2 ** x`` are Sub and Pow with a 0-d operand, ``2 / x`` is
``reciprocal(x) * 2`` (as in torch)."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")  # the oracle: this module skips without it


def test_a_gradient_the_input_shape_does_not_broadcast_to_is_refused_naming_the_node():
    class Transposed(tl.autograd.Function):
        def forward(self, x):
            return x._x * 2

        def backward(self, g):
            return (g.T,)  # wrong: (3, 2) for a (2, 3) input

    x = tl.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Transposed.backward returned an invalid gradient at index 0: got shape "
                                           r"\[3, 2\] but expected shape compatible with \[2, 3\]"):
        Transposed.apply(x).sum().backward()
    assert x.grad is None


def test_a_broadcast_gradient_is_summed_back_by_the_engine():
    class Broadcasting(tl.autograd.Function):
        def forward(self, x):
            return x._x.copy()

        def backward(self, g):
            return (g.expand(4, *g.shape) * 1.0,)  # an extra leading dim: summed away

    x = tl.ones(2, 3, requires_grad=True)
    Broadcasting.apply(x).sum().backward()
    assert x.grad.tolist() == [[4.0] * 3] * 2


def test_an_incoming_gradient_of_another_dtype_is_cast_to_the_output_dtype():
    a, b = tl.ones(2, 3, requires_grad=True), tl.ones(3, 4, requires_grad=True)
    at, bt = torch.ones(2, 3, requires_grad=True), torch.ones(3, 4, requires_grad=True)
    (a @ b).backward(tl.ones(2, 4, dtype=tl.float64))
    (at @ bt).backward(torch.ones(2, 4, dtype=torch.float64))
    assert a.grad.dtype.name == str(at.grad.dtype).replace("torch.", "") == "float32"
    np.testing.assert_array_equal(a.grad.numpy(), at.grad.numpy())
    lin = tl.nn.Linear(3, 2)
    lin(tl.ones(4, 3)).backward(tl.ones(4, 2, dtype=tl.float64))
    assert lin.weight.grad.dtype is tl.float32


def test_double_backward_through_layer_norm_without_retain_graph():
    """The layer norm's fused backward node keeps the statistics itself (the forward node lets them go after the
    first backward): a gradient graph that does not pass through the layer norm's own node again works without
    retain_graph, as in torch; one that does is refused in both."""
    rng = np.random.default_rng(0)
    x0, c0 = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(x0, requires_grad=True)
        (gx,) = lib.autograd.grad((lib.nn.functional.layer_norm(x, (5,)) * lib.tensor(c0)).sum(), x,
                                  create_graph=True, retain_graph=False)
        (gx * gx).sum().backward()
        grads.append(x.grad.detach().numpy())
    np.testing.assert_allclose(*grads, rtol=1e-7, atol=1e-9)
    for lib in (tl, torch):  # the cubic's gradient reads the layer norm's output: its node was freed
        x = lib.tensor(x0, requires_grad=True)
        (gx,) = lib.autograd.grad((lib.nn.functional.layer_norm(x, (5,)) ** 3).sum(), x, create_graph=True,
                                  retain_graph=False)
        with pytest.raises(RuntimeError, match="second time"):
            gx.sum().backward()


def test_the_divisor_may_be_written_after_number_over_it():
    """``1 / h`` keeps its result privately (reciprocal, then a product with the number), as torch does."""
    for lib in (tl, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1
        y = 2 / h
        h.mul_(3)
        y.mul_(5)
        y.sum().backward()
        assert np.allclose(x.grad.tolist(), [-10.0, -2.5])
    assert (2 / tl.tensor([1.0, 2.0], requires_grad=True)).grad_fn.name == "Mul"


CASES = [(dt, nd, v, op) for dt in ("float32", "float16", "float64", "int32", "int64", "bool") for nd in (1, 0)
         for v in (2, 2.5, -3, True) for op in ("sub", "div", "pow")]


@pytest.mark.parametrize("dt,nd,v,op", CASES, ids=[f"{v}-{op}-{dt}-{nd}d" for dt, nd, v, op in CASES])
def test_a_number_on_the_left_gives_torchs_dtype_value_and_errors(dt, nd, v, op):
    def make(lib):
        t = lib.tensor([1, 2, 3]).to(getattr(lib, dt))
        return t if nd else t[1]

    f = {"sub": lambda a: v - a, "div": lambda a: v / a, "pow": lambda a: v ** a}[op]
    try:
        want = f(make(torch))
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises((RuntimeError, NotImplementedError, TypeError)):
            f(make(tl))
        assert "bool" in str(e) or op == "pow"
        return
    got = f(make(tl))
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(np.asarray(got.tolist(), float), np.asarray(want.tolist(), float), rtol=1e-3)


@pytest.mark.parametrize("op", ["rsub", "rdiv", "rpow"])
def test_gradients_through_a_number_on_the_left_match_torch_in_float64(op):
    x0 = np.array([0.5, 1.5, 2.0])
    f = {"rsub": lambda a: (3 - a) ** 2, "rdiv": lambda a: 3 / a, "rpow": lambda a: 2 ** a}[op]
    x, xt = tl.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    f(x).sum().backward()
    f(xt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_draining_without_records_still_reports_steps_and_keeps_the_callers_grad_mode():
    """``backward_steps(..., steps=False)`` (what Tensor.backward drains) yields no records, still reports each node
    to an observer with its time, and runs each node in the pass's grad mode but leaves the caller's between nodes,
    so a consumer that pauses or stops half-way keeps its own mode."""
    from tinygrad_like.autograd import engine

    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).exp().sum()
    seen = []
    unsubscribe = tl.events.subscribe(seen.append)
    try:
        out = list(engine.backward_steps((y,), (tl.tensor(1.0),), steps=False))
    finally:
        unsubscribe()
    assert out == [None, None, None] and tl.is_grad_enabled()
    steps = [e for e in seen if isinstance(e, tl.events.BackwardStep)]
    assert [e.op for e in steps] == ["Sum", "Exp", "Mul"] and all(e.seconds > 0 for e in steps)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0]) * np.exp([1.0, 4.0]), rtol=1e-6)

    z = (x * x).exp().sum()
    gen = engine.backward_steps((z,), (tl.tensor(1.0),), steps=False)
    next(gen)
    assert tl.is_grad_enabled() and (x * 2).grad_fn is not None  # paused: the caller's mode, ops record
    with tl.no_grad():
        gen.close()
        assert not tl.is_grad_enabled()
    assert tl.is_grad_enabled()
    w = (x * 3).sum()
    with tl.no_grad():  # a pass that records its graph, run from inside no_grad: the pass's mode, then the caller's
        (g,) = tl.autograd.grad(w, x, create_graph=True)
        assert not tl.is_grad_enabled()


def test_numpy_numbers_are_numbers_as_in_torch():
    x = tl.tensor([1.0, 2.0])
    xt = torch.tensor([1.0, 2.0])
    for f in (lambda a: np.float64(2) / a, lambda a: a * np.float64(3), lambda a: np.int64(5) - a,
              lambda a: a - np.True_, lambda a: np.float64(2) ** a):
        got, want = f(x), f(xt)
        assert got.dtype.name == str(want.dtype).replace("torch.", ""), f
        np.testing.assert_allclose(got.numpy(), want.numpy())
    y = tl.tensor([1.0, 2.0])
    with pytest.raises(TypeError):
        y.mul_(np.complex128(1j))  # not a real number: refused, not written as zeros
    assert y.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_an_integer_too_large_for_the_dtype_wraps_as_in_torch(dt):
    for nd in (0, 1):
        for f in (lambda a: 2**40 - a, lambda a: (2**33 + 3) ** a, lambda a: -(2**40) - a):
            x, xt = tl.tensor([1, 2]).to(getattr(tl, dt)), torch.tensor([1, 2]).to(getattr(torch, dt))
            if not nd:
                x, xt = x[0], xt[0]
            got, want = f(x), f(xt)
            assert got.dtype.name == str(want.dtype).replace("torch.", "") and got.tolist() == want.tolist()


def test_a_value_with_leading_ones_written_into_a_slot_gets_its_gradient():
    """``y[0] = v`` with ``v`` of shape (1, 3) into a (3,) row: the row's gradient has fewer dims than ``v``, which
    broadcasts to it after dropping its leading ones (as NumPy's and torch's assignment do)."""
    for shape, index in (((1, 3), 0), ((1, 1, 3), (slice(None), slice(None)))):
        grads = []
        for lib in (tl, torch):
            v = lib.ones(*shape, requires_grad=True)
            y = lib.zeros(2, 3).clone()
            y[index] = v * 2
            (y * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
            grads.append(v.grad.detach().numpy())
        np.testing.assert_array_equal(*grads)
