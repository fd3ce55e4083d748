"""torch.autograd's names the census found missing, against PyTorch: anomaly detection, gradgradcheck, forward-mode
AD (forward_ad), NestedIOFunction, set_multithreading_enabled, enforce_grad_layout_policy, grad_mode's names."""

from __future__ import annotations

import inspect
import sys
import warnings

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.autograd.forward_ad as fwAD
from tinygrad_like.autograd import grad_mode

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad


# ---- anomaly detection ------------------------------------------------------------------------------------

def _anomaly(lib, fn):
    """The error message and the warnings of ``fn(x).backward()`` under detect_anomaly."""
    x = lib.tensor([0.0, 1.0, 4.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.detect_anomaly():
            y = fn(lib, x)  # the forward line the warning must show
            with pytest.raises(RuntimeError) as err:
                y.backward()
    return str(err.value), [str(w.message) for w in caught]


@pytest.mark.parametrize("fn", [lambda lib, x: (x / x).sum(), lambda lib, x: (lib.sqrt(x) * 0).sum(),
                                lambda lib, x: (x.log() * x).sum()], ids=["div", "sqrt", "log"])
def test_detect_anomaly_names_the_node_that_returned_nan_like_torch(fn):
    ours, theirs = _anomaly(tl, fn), _anomaly(torch, fn)
    assert ours[0] == theirs[0]
    assert ours[1][0] == theirs[1][0]  # "Anomaly Detection has been enabled. ..."
    name = theirs[0].split("'")[1]
    forward = [w for w in ours[1] if w.startswith(f"Error detected in {name}. Traceback of forward call")]
    # the innermost line of user code that made the node (torch prints the whole stack down to it)
    assert forward and f'File "{__file__}"' in forward[0] and "in <lambda>" in forward[0], ours[1]
    assert any("in <lambda>" in w for w in theirs[1])


def test_a_custom_function_that_returns_nan_is_named_like_torch():
    def message(lib):
        class Spiky(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly(), pytest.raises(RuntimeError) as err:
                Spiky.apply(x).sum().backward()
        return str(err.value)
    assert message(tl) == message(torch) == "Function 'SpikyBackward' returned nan values in its 0th output."


def test_without_anomaly_mode_nan_gradients_pass_silently_like_torch():
    for lib in (tl, torch):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        (x / x).sum().backward()
        assert bool(x.grad.isnan().any())


def test_check_nan_false_and_the_flags():
    x = tl.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tl.autograd.detect_anomaly(check_nan=False):
            assert tl.is_anomaly_enabled() and not tl.is_anomaly_check_nan_enabled()
            (x / x).sum().backward()  # no NaN check: no error, as torch
    assert not tl.is_anomaly_enabled() and tl.is_anomaly_check_nan_enabled()
    assert (tl.is_anomaly_enabled(), tl.is_anomaly_check_nan_enabled()) == \
        (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    tl.set_anomaly_enabled(True)
    try:
        assert tl.is_anomaly_enabled()
    finally:
        tl.set_anomaly_enabled(False)
    with tl.autograd.set_detect_anomaly(True):
        assert tl.is_anomaly_enabled()
    assert not tl.is_anomaly_enabled()
    tl.autograd.set_detect_anomaly(True)  # as a call: stays on
    assert tl.is_anomaly_enabled()
    tl.autograd.set_detect_anomaly(False)
    assert not tl.is_anomaly_enabled()

    @tl.autograd.set_detect_anomaly(True)
    def inside():
        return tl.is_anomaly_enabled()
    assert not tl.is_anomaly_enabled() and inside() and not tl.is_anomaly_enabled()


def test_anomaly_mode_warns_with_the_forward_line_when_a_backward_raises():
    class Bad(tl.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")
    x = tl.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tl.autograd.detect_anomaly():
            y = Bad.apply(x).sum()
            with pytest.raises(ValueError, match="broken backward"):
                y.backward()
    assert any("Error detected in" in str(w.message) and "Bad.apply(x)" in str(w.message) for w in caught)


# ---- gradgradcheck ----------------------------------------------------------------------------------------

FUNCS = [
    lambda lib, a, b: (a.sin() * b.exp() + a * a * b).sum(dim=0, keepdim=True),
    lambda lib, a, b: a.tanh() * b.sigmoid() / (1 + a * a),
    lambda lib, a, b: a.reshape(3, 1) @ b.reshape(1, 3),
    lambda lib, a, b: lib.softmax(a * b, dim=0).log(),
]


@pytest.mark.parametrize("k", range(len(FUNCS)))
def test_gradgradcheck_passes_where_torch_passes(k):
    a, b = np.array([0.3, 1.2, -0.7]), np.array([0.5, 0.1, 2.0])
    results = []
    for lib in (tl, torch):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        y = lib.tensor(b, dtype=lib.float64, requires_grad=True)
        results.append(lib.autograd.gradgradcheck(lambda p, q, lib=lib: FUNCS[k](lib, p, q), (x, y)))
    assert results == [True, True]


def test_gradgradcheck_fails_on_a_backward_that_is_not_differentiable_like_torch():
    """A backward that detaches what it multiplies by has the wrong second derivative: both libraries say so."""
    def make(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * (2 * x).detach()
        return Square
    for lib, err in ((tl, tl.autograd.GradcheckError), (torch, sys.modules["torch.autograd.gradcheck"].GradcheckError)):
        x = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=True)
        sq = make(lib)
        assert lib.autograd.gradcheck(sq.apply, (x,))
        assert lib.autograd.gradgradcheck(sq.apply, (x,), raise_exception=False) is False
        with pytest.raises(err):
            lib.autograd.gradgradcheck(sq.apply, (x,))


def test_gradgradcheck_with_given_grad_outputs_and_torchs_parameter_names():
    x = tl.tensor([0.2, 0.4], dtype=tl.float64, requires_grad=True)
    go = tl.tensor([1.0, -2.0], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradgradcheck(lambda t: t.exp() * t, x, go)
    ours = list(inspect.signature(tl.autograd.gradgradcheck).parameters)
    assert ours == list(inspect.signature(torch.autograd.gradgradcheck).parameters)
    assert list(inspect.signature(tl.autograd.gradcheck).parameters) == \
        list(inspect.signature(torch.autograd.gradcheck).parameters)


# ---- forward_ad -------------------------------------------------------------------------------------------

JVP_FUNCS = [
    ("square", lambda lib, x, w: x * x),
    ("chain", lambda lib, x, w: (x.sin() * w).exp().sum(dim=-1)),
    ("matmul", lambda lib, x, w: lib.tanh(x @ w.T)),
    ("softmax", lambda lib, x, w: lib.softmax(x * w, dim=-1)),
    ("norm", lambda lib, x, w: (x - x.mean()) / (x.pow(2).mean() + 1).sqrt()),
]


@pytest.mark.parametrize("name,fn", JVP_FUNCS, ids=[n for n, _ in JVP_FUNCS])
def test_forward_ad_tangents_match_torchs(name, fn):
    rng = np.random.default_rng(0)
    x, t, w = (rng.standard_normal((2, 3)) for _ in range(3))
    out = []
    for lib, fw in ((tl, fwAD), (torch, tfw)):
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor(x), lib.tensor(t))
            y = fn(lib, dual, lib.tensor(w))
            primal, tangent = fw.unpack_dual(y)
            out.append((primal.detach().numpy(), tangent.numpy()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-4, atol=1e-5)


def test_forward_ad_two_duals_and_unpacking_a_dual_itself():
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    res = []
    for lib, fw in ((tl, fwAD), (torch, tfw)):
        with fw.dual_level():
            x = fw.make_dual(lib.tensor(a), lib.tensor([1.0, 0.5]))
            y = fw.make_dual(lib.tensor(b), lib.tensor([0.0, 2.0]))
            z = x * y + x.exp()
            own = fw.unpack_dual(x)
            plain = fw.unpack_dual(lib.tensor(a))
            res.append((fw.unpack_dual(z).tangent.numpy(), own.tangent.numpy(), own.primal.numpy(), plain.tangent))
        res[-1] += (fw.unpack_dual(z).tangent,)  # outside the level: no tangent
    for x, y in zip(res[0][:3], res[1][:3]):
        np.testing.assert_allclose(x, y, rtol=1e-6)
    assert res[0][3] is None and res[1][3] is None and res[0][4] is None and res[1][4] is None
    assert isinstance(fwAD.unpack_dual(tl.ones(1)), fwAD.UnpackedDualTensor)
    assert fwAD.UnpackedDualTensor._fields == tfw.UnpackedDualTensor._fields


def test_forward_ad_errors_are_torchs():
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(tl.ones(2), tl.ones(2))
    level = fwAD.enter_dual_level()
    try:
        assert level == 0
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(tl.ones(3), tl.ones(2))
        with pytest.raises(RuntimeError, match="Nested forward mode AD"):
            fwAD.enter_dual_level()
    finally:
        fwAD.exit_dual_level(level=level)
    for name in ("make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level"):
        assert list(inspect.signature(getattr(fwAD, name)).parameters) == \
            list(inspect.signature(getattr(tfw, name)).parameters)


# ---- NestedIOFunction, grad_mode names --------------------------------------------------------------------

def test_nested_io_function_computes_and_differentiates():
    """torch 2.13's own NestedIOFunction fails when called (its legacy call path is gone); ours works, checked
    against the same computation as a torch Function."""
    class Scale(tl.autograd.NestedIOFunction):
        def forward_extended(self, x, y):
            self.save_for_backward(x, y)
            return x * y

        def backward_extended(self, g):
            x, y = self.saved_tensors
            return g * y, g * x

    class TScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    x, y = tl.tensor(a, requires_grad=True), tl.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    out, tout = Scale()(x, y), TScale.apply(tx, ty)
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())
    with pytest.raises(NotImplementedError):
        tl.autograd.NestedIOFunction()(x)


@pytest.mark.parametrize("name,arg", [("set_multithreading_enabled", "mode"),
                                      ("enforce_grad_layout_policy", "enable")])
def test_switches_restore_and_decorate_like_torch(name, arg):
    cls = getattr(tl.autograd, name)
    assert list(inspect.signature(cls).parameters) == list(inspect.signature(getattr(torch.autograd, name)).parameters)
    assert cls._value is True
    with cls(False):
        assert cls._value is False
    assert cls._value is True

    @cls(False)
    def inside():
        return cls._value
    assert cls._value is True and inside() is False and cls._value is True
    x = tl.ones(2, requires_grad=True)
    with cls(False):
        (x * 2).sum().backward()  # backward works the same either way
    assert x.grad.tolist() == [2.0, 2.0]


def test_grad_mode_module_has_torchs_names():
    assert grad_mode.inference_mode is tl.inference_mode
    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "set_multithreading_enabled",
                 "enforce_grad_layout_policy"):
        assert hasattr(grad_mode, name) and hasattr(torch.autograd.grad_mode, name)
    assert list(inspect.signature(tl.no_grad).parameters) == list(inspect.signature(torch.no_grad).parameters)
    assert list(inspect.signature(tl.enable_grad).parameters) == \
        list(inspect.signature(torch.enable_grad).parameters)
