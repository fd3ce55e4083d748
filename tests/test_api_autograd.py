"""PyTorch's context-style custom Function, autograd.functional, inference_mode and grad's keywords, vs torch."""

from __future__ import annotations

import gc
import re

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like.autograd import VersionMismatchError
from tinygrad_like.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

torch = pytest.importorskip("torch")


def _mk(lib):
    """The same ctx-style Functions written against ``lib`` (torch or tinygrad_like)."""

    class MulPow(lib.autograd.Function):
        """y = k * x**p (non-tensor args, a saved input, a stored attribute)."""

        @staticmethod
        def forward(ctx, x, k, p=2):
            ctx.save_for_backward(x)
            ctx.k, ctx.p = k, p
            return k * x ** p

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.k * ctx.p * x ** (ctx.p - 1), None, None

    class ExpOut(lib.autograd.Function):
        """Saves its own output."""

        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class Split(lib.autograd.Function):
        """Three outputs: two tensors and an int; the second tensor's grad may be missing."""

        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + 2 * b, 7

        @staticmethod
        def backward(ctx, ga, gb, gc):
            a, b = ctx.saved_tensors
            assert gc is None
            return ga * b + gb, ga * a + 2 * gb

    class ArgMaxAndVal(lib.autograd.Function):
        """A non-differentiable output (mark_non_differentiable)."""

        @staticmethod
        def forward(ctx, x):
            idx = x.argmax(dim=-1, keepdim=True)
            val = x.gather(-1, idx)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            ctx.shape = tuple(x.shape)
            return val, idx

        @staticmethod
        def backward(ctx, gval, gidx):
            (idx,) = ctx.saved_tensors
            return lib.zeros(ctx.shape, dtype=gval.dtype).scatter_add(-1, idx, gval)

    class NoMaterialize(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1.0, x * 2.0

        @staticmethod
        def backward(ctx, g1, g2):
            out = lib.zeros_like(g1 if g1 is not None else g2)
            if g1 is not None:
                out = out + g1
            if g2 is not None:
                out = out + 2 * g2
            return out

    return MulPow, ExpOut, Split, ArgMaxAndVal, NoMaterialize


TL, TO = _mk(tl), _mk(torch)


def _pair(shape, seed=0, dtype=np.float64):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a.detach().numpy() if hasattr(a, "detach") else a),
                               b.detach().numpy(), rtol=tol, atol=tol)


def test_non_tensor_args_values_grads_and_second_derivatives():
    (x, xt) = _pair((2, 3))
    y, yt = TL[0].apply(x, 3.0, 3), TO[0].apply(xt, 3.0, 3)
    _close(y, yt)
    (g,) = tl.autograd.grad(y.sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(yt.sum(), xt, create_graph=True)
    _close(g, gt)
    g.sum().backward()
    gt.sum().backward()
    _close(x.grad, xt.grad)  # d2/dx2 through the ctx backward
    # keyword args go to forward, defaults apply, as in torch
    _close(TL[0].apply(x, 2.0), TO[0].apply(xt, 2.0))


def test_saved_output_and_double_backward():
    x, xt = _pair((4,), 1)
    y, yt = TL[1].apply(x), TO[1].apply(xt)
    (g,) = tl.autograd.grad(y.sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(yt.sum(), xt, create_graph=True)
    _close(g, gt)
    (g2,) = tl.autograd.grad(g.sum(), x)
    (g2t,) = torch.autograd.grad(gt.sum(), xt)
    _close(g2, g2t)
    del y, g
    gc.collect()


@pytest.mark.parametrize("use", ["both", "first", "second"])
def test_multiple_outputs(use):
    a, at = _pair((3,), 2)
    b, bt = _pair((3,), 3)
    p, q, n = TL[2].apply(a, b)
    pt, qt, nt = TO[2].apply(at, bt)
    assert n == nt == 7
    assert p.grad_fn is not None and q.grad_fn is not None
    _close(p, pt), _close(q, qt)
    loss = {"both": lambda u, v: (u * u).sum() + (v * 3).sum(), "first": lambda u, v: (u * u).sum(),
            "second": lambda u, v: (v * 3).sum()}[use]
    loss(p, q).backward()
    loss(pt, qt).backward()
    _close(a.grad, at.grad), _close(b.grad, bt.grad)


def test_non_differentiable_output_and_materialize():
    x, xt = _pair((2, 4), 4)
    v, i = TL[3].apply(x)
    vt, it = TO[3].apply(xt)
    assert not i.requires_grad and not it.requires_grad and v.requires_grad
    assert i.tolist() == it.tolist()
    (v * 2).sum().backward()
    (vt * 2).sum().backward()
    _close(x.grad, xt.grad)
    x2, xt2 = _pair((3,), 5)
    a, _ = TL[4].apply(x2)
    at, _ = TO[4].apply(xt2)
    a.sum().backward()
    at.sum().backward()
    _close(x2.grad, xt2.grad)


def test_needs_input_grad_and_no_grad():
    seen = {}

    class Probe(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen["nig"] = ctx.needs_input_grad
            seen["recording"] = tl.is_grad_enabled()
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g, g, None

    x = tl.ones(2, requires_grad=True)
    out = Probe.apply(x, tl.ones(2), 3)
    assert seen == {"nig": (True, False, False), "recording": False}  # forward runs without recording, as torch
    with tl.no_grad():
        out2 = Probe.apply(x, tl.ones(2), 3)
    assert out.requires_grad and not out2.requires_grad and out2.grad_fn is None


def test_node_is_ctx_named_and_in_the_graph():
    x = tl.ones(3, requires_grad=True)
    y = TL[0].apply(x * 2, 3.0)
    node = y.grad_fn
    assert node.name == "MulPow" and type(node).__name__ == "MulPowBackward" and node.name() == "MulPowBackward"
    assert repr(node) == f"<tinygrad_like.autograd.function.MulPowBackward object at {id(node):#x}>"  # (torch's)
    assert node.attributes() == {"k": 3.0, "p": 2}
    assert node.next[0].name == "Mul" and node.next[1:] == (None,)
    assert node._forward_cls is TL[0]
    assert [s["shape"] for s in node.saved_info()] == [(3,)]
    steps = list(y.sum().backward_steps())
    assert "MulPow" in [s.node.name for s in steps]


def test_input_returned_as_is_is_a_new_tensor():
    class Ident(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = tl.ones(2, requires_grad=True)
    y = Ident.apply(x)
    assert y is not x and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_version_check_on_saved_tensor():
    x = tl.ones(3, requires_grad=True)
    h = x * 1
    y = TL[0].apply(h, 2.0)
    h.mul_(2)
    with pytest.raises(VersionMismatchError, match="saved by MulPow"):
        y.sum().backward()


def test_saved_tensors_freed_after_backward():
    x = tl.ones(3, requires_grad=True)
    y = TL[0].apply(x, 2.0)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def _errors(lib):
    class TooFew(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g

    class GradForNumber(TooFew):
        @staticmethod
        def backward(ctx, g):
            return g, lib.ones(1)

    class NotATensor(TooFew):
        @staticmethod
        def backward(ctx, g):
            return "a", None

    class BadShape(TooFew):
        @staticmethod
        def backward(ctx, g):
            return g[:2], None

    class SaveNumber(TooFew):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(k)
            return x * k

    class ExtraNone(TooFew):
        @staticmethod
        def backward(ctx, g):
            return g, None, None

    return TooFew, GradForNumber, NotATensor, BadShape, SaveNumber, ExtraNone


@pytest.mark.parametrize("i, exc, match", [
    (0, RuntimeError, r"function TooFewBackward returned an incorrect number of gradients \(expected 2, got 1\)"),
    (1, RuntimeError, r"returned a gradient different than None at position 2, but the corresponding forward input "
                      r"was not a Variable"),
    (2, RuntimeError, r"expected Variable or None \(got str\)"),
    (3, RuntimeError, r"BadShape.*returned an invalid gradient at index 0\W+got (shape )?\[2\] but expected shape "
                      r"compatible with \[3\]"),
    (4, TypeError, r"save_for_backward can only save variables, but argument 0 is of type int"),
])
def test_errors_as_torch(i, exc, match):
    for lib in (torch, tl):
        cls = _errors(lib)[i]
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(exc) as ei:
            cls.apply(x, 2).sum().backward()
        assert re.search(match, str(ei.value)), (lib.__name__, str(ei.value))


def test_extra_trailing_none_is_fine():
    for lib in (torch, tl):
        x = lib.ones(3, requires_grad=True)
        _errors(lib)[5].apply(x, 2).sum().backward()
        assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_setup_context_style():
    class Cube(tl.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    x = tl.tensor([1.0, 2.0], requires_grad=True)
    Cube.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]


def test_once_differentiable_and_mark_dirty():
    class Sq(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @tl.autograd.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert not tl.is_grad_enabled()
            return 2 * x * g

    x = tl.tensor([3.0], requires_grad=True)
    (g,) = tl.autograd.grad(Sq.apply(x), x, create_graph=True)
    assert g.tolist() == [6.0] and not g.requires_grad

    class AddOneInPlace(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 1

    a = tl.ones(2, requires_grad=True)
    b = a * 2
    c = AddOneInPlace.apply(b)
    assert c is b and c.tolist() == [3.0, 3.0] and c.grad_fn.name == "AddOneInPlace"
    c.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0]
    leaf = tl.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        AddOneInPlace.apply(leaf)


def test_our_own_style_is_unchanged():
    from tinygrad_like.autograd.function import Function
    assert "apply" not in TL[0].__dict__ or TL[0].apply.__func__ is not Function.apply.__func__
    assert tl.ones(2).exp().sum().item() == pytest.approx(2 * np.e)


# ---- autograd.functional ------------------------------------------------------------------------------------
def _f1(x):
    return (x ** 2).sin() * x.sum()


def _f2(a, b):
    return a * b.exp(), (a ** 2).sum() + b


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_vs_torch(create_graph):
    x, xt = _pair((3,), 6)
    j = jacobian(_f1, x, create_graph=create_graph)
    jt = torch.autograd.functional.jacobian(_f1, xt, create_graph=create_graph)
    _close(j, jt)
    assert j.requires_grad == jt.requires_grad
    a, at = _pair((2,), 7)
    b, bt = _pair((2,), 8)
    J = jacobian(_f2, (a, b))
    Jt = torch.autograd.functional.jacobian(_f2, (at, bt))
    assert len(J) == 2 and all(len(r) == 2 for r in J)
    for r, rt in zip(J, Jt):
        for e, et in zip(r, rt):
            assert tuple(e.shape) == tuple(et.shape)
            _close(e, et)


def test_jacobian_unused_input_and_strict():
    a, at = _pair((2,), 9)
    b, bt = _pair((3,), 10)
    J = jacobian(lambda u, v: u * 2, (a, b))
    Jt = torch.autograd.functional.jacobian(lambda u, v: u * 2, (at, bt))
    _close(J[1], Jt[1])
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1"):
        jacobian(lambda u, v: u * 2, (a, b), strict=True)
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        jacobian(lambda u: 3, a)


def test_hessian_vs_torch():
    x, xt = _pair((3,), 11)

    def f(v):
        return (v ** 3).sum() + (v[0] * v[1]).sin()

    _close(hessian(f, x), torch.autograd.functional.hessian(f, xt))
    a, at = _pair((2,), 12)
    b, bt = _pair((2,), 13)

    def g(u, v):
        return (u * v.exp()).sum()

    H, Ht = hessian(g, (a, b)), torch.autograd.functional.hessian(g, (at, bt))
    for r, rt in zip(H, Ht):
        for e, et in zip(r, rt):
            _close(e, et)
    with pytest.raises(RuntimeError, match="single element"):
        hessian(lambda v: v * 2, x)


def test_vjp_jvp_hvp_vhp_vs_torch():
    x, xt = _pair((3,), 14)
    v, vt = _pair((3,), 15)
    for ours, theirs in ((vjp, torch.autograd.functional.vjp), (jvp, torch.autograd.functional.jvp)):
        o, r = ours(lambda t: t.sin() * t.sum(), x, v)
        ot, rt = theirs(lambda t: t.sin() * t.sum(), xt, vt)
        _close(o, ot), _close(r, rt)
    for ours, theirs in ((vhp, torch.autograd.functional.vhp), (hvp, torch.autograd.functional.hvp)):
        o, r = ours(lambda t: (t ** 3).sum() * t[0], x, v)
        ot, rt = theirs(lambda t: (t ** 3).sum() * t[0], xt, vt)
        _close(o, ot), _close(r, rt, 1e-9)


# ---- inference_mode, grad keywords ---------------------------------------------------------------------------
def test_inference_mode_forms():
    x = tl.ones(2, requires_grad=True)
    with tl.inference_mode():
        assert tl.is_inference_mode_enabled() and not tl.is_grad_enabled()
        assert not (x * 2).requires_grad
        with tl.inference_mode(False):
            assert not tl.is_inference_mode_enabled()
    assert tl.is_grad_enabled() and not tl.is_inference_mode_enabled()

    @tl.inference_mode()
    def f(t):
        return t * 2

    @tl.inference_mode
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad and (x * 2).requires_grad
    assert tl.autograd.inference_mode is tl.inference_mode


def test_grad_keyword_names_match_torch():
    import inspect
    ours = list(inspect.signature(tl.autograd.grad).parameters)
    theirs = list(inspect.signature(torch.autograd.grad).parameters)
    assert ours == theirs
    x = tl.ones(2, requires_grad=True)
    y = tl.ones(2, requires_grad=True)
    gx, gy = tl.autograd.grad((x * 2).sum(), (x, y), materialize_grads=True)
    assert gy.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="allow_unused"):
        tl.autograd.grad((x * 2).sum(), (x, y), materialize_grads=True, allow_unused=False)
    (gb,) = tl.autograd.grad(x * 3, x, tl.eye(2), is_grads_batched=True)
    assert gb.tolist() == [[3.0, 0.0], [0.0, 3.0]]


def test_autograd_backward_function():
    x = tl.ones(2, requires_grad=True)
    y = tl.ones(2, requires_grad=True)
    tl.autograd.backward([(x * y * 3).sum()], inputs=[x])
    assert x.grad.tolist() == [3.0, 3.0] and y.grad is None
    tl.autograd.backward((x * 2).sum())
    assert x.grad.tolist() == [5.0, 5.0]


def test_ctx_functions_pass_gradcheck_in_float64():
    x = tl.tensor(np.random.default_rng(20).uniform(0.5, 1.5, (3,)), requires_grad=True)
    b = tl.tensor(np.random.default_rng(21).standard_normal(3), requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: TL[0].apply(t, 1.7, 3), (x,))
    assert tl.autograd.gradcheck(lambda t: TL[1].apply(t), (x,))
    assert tl.autograd.gradcheck(lambda u, v: TL[2].apply(u, v)[0] + TL[2].apply(u, v)[1] ** 2, (x, b))


def test_torch_module_paths_for_function_helpers():
    from tinygrad_like.autograd.function import FunctionCtx, once_differentiable
    assert once_differentiable is tl.autograd.once_differentiable and FunctionCtx is tl.autograd.FunctionCtx
    assert isinstance(TL[0].apply(tl.ones(1, requires_grad=True), 2.0).grad_fn, FunctionCtx)


def test_tensor_backward_with_inputs_fills_only_those_grads():
    for lib in (tl, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (a * b).sum().backward(inputs=[a])
        assert a.grad.tolist() == [3.0, 4.0] and b.grad is None
        (a * b).sum().backward(inputs=b)
        assert b.grad.tolist() == [1.0, 2.0] and a.grad.tolist() == [3.0, 4.0]


def test_products_with_unused_inputs_default_vectors_and_strict_vs_torch():
    """Tuple inputs of which one is unused (zeros, or an error in strict mode), and ``v`` omitted where the function
    has one element (vjp: one output; jvp, vhp: one input), as torch's."""
    x, xt = _pair((3,), 21)
    y, yt = _pair((2,), 22)
    s, st = _pair((1,), 23)
    tf = torch.autograd.functional
    for ours, theirs, f, ft, args in (
            (vjp, tf.vjp, lambda a, b: (a * a).sum(), lambda a, b: (a * a).sum(), ((x, y), (xt, yt))),
            (jvp, tf.jvp, lambda a: a.exp() * 2, lambda a: a.exp() * 2, (s, st)),
            (vhp, tf.vhp, lambda a: (a ** 3).sum(), lambda a: (a ** 3).sum(), (s, st)),
            (vhp, tf.vhp, lambda a, b: (a ** 3).sum(), lambda a, b: (a ** 3).sum(), ((x, y), (xt, yt)))):
        if ours is vhp and isinstance(args[0], tuple):  # (vhp needs v for several inputs)
            v, vt = (tl.ones(3), tl.ones(2)), (torch.ones(3), torch.ones(2))
            o, r = ours(f, args[0], v)
            ot, rt = theirs(ft, args[1], vt)
        else:
            o, r = ours(f, args[0])
            ot, rt = theirs(ft, args[1])
        _close(o, ot)
        for a, b in zip(r if isinstance(r, tuple) else (r,), rt if isinstance(rt, tuple) else (rt,)):
            _close(a, b)
        if isinstance(args[0], tuple) and ours is vjp:
            for lib_fn, lib_f, lib_args in ((ours, f, args[0]), (theirs, ft, args[1])):
                with pytest.raises(RuntimeError, match="independent of input 1"):
                    lib_fn(lib_f, lib_args, strict=True)
    with pytest.raises(RuntimeError, match="can only be None"):
        jvp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="can only be None"):
        tf.jvp(lambda a: a * 2, xt)


def test_grad_of_an_intermediate_runs_nothing_below_it_and_frees_nothing_a_later_backward_needs():
    """As torch: ``grad(z, y)`` for an intermediate ``y`` stops at ``y``'s node (autograd/pruning.py), so a later
    ``backward`` through ``y`` still finds its saved tensors, and nodes leading to no input do not run."""
    ran = []

    class Spy(tl.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            ran.append("spy")
            return g

    def build(lib, leaf):
        y = (Spy.apply(leaf) * 2).tanh() if lib is tl else (leaf * 2).tanh()
        return y, (y * y).sum() + (leaf * 3).sum()

    xs = np.array([0.5, -1.0, 2.0])
    x, tx = tl.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    (y, z), (ty, tz) = build(tl, x), build(torch, tx)
    (gy,) = tl.autograd.grad(z, y)
    (tgy,) = torch.autograd.grad(tz, ty)
    np.testing.assert_allclose(gy.numpy(), tgy.numpy(), rtol=1e-15)
    assert ran == []  # (the Spy node is below y: not run)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    assert ran == ["spy"]
    # inputs one below the other: the upper one's node runs, to reach the lower one
    x2 = tl.tensor(xs, requires_grad=True)
    a = x2 * 2
    b = a.exp()
    ga, gb = tl.autograd.grad(b.sum(), (a, b))
    np.testing.assert_allclose(ga.numpy(), np.exp(2 * xs), rtol=1e-15)
    np.testing.assert_allclose(gb.numpy(), np.ones(3))
