"""Elementwise chains (``backends/chains.py``): a formula written once and run as one compiled C loop on the CPU,
as its steps through a backend's primitives (the reference), and with Tensor ops (higher derivatives). Checked here:
the grammar and its errors, the compiled loop against the steps within a stated ulp bound on every dtype it takes,
SiLU, ELU, Mish and softplus's backward (built on chains) against torch to the third derivative, the node names
torch gives, and what the timeline shows."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.nn.functional as F
from tinygrad_like import events
from tinygrad_like.autograd import gradcheck, gradgradcheck
from tinygrad_like.backends import cpu_kernels
from tinygrad_like.backends.chains import Chain, ChainError, TensorSteps
from tinygrad_like.backends.numpy_backend import NumpyBackend
from tinygrad_like.ops.activation import (
    ELU,
    ELU_GRAD,
    LEAKY_RELU,
    LEAKY_RELU_GRAD,
    MISH,
    MISH_GRAD,
    SILU,
    SILU_GRAD,
    SOFTPLUS_GRAD,
)

torch = pytest.importorskip("torch")

if not cpu_kernels.available():
    if os.environ.get("CI") == "true":
        pytest.fail("no C compiler: CI must build the compiled CPU kernels", pytrace=False)
    pytest.skip("no C compiler here: the compiled CPU kernels cannot be built", allow_module_level=True)

N = 20_000  # elements: above NumpyBackend's _CHAIN_MIN, so the compiled loop runs


# ---- the grammar --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,says", [
    ("x.exp()", "'x.exp()'"),
    ("y * 2", "the unknown name 'y'"),
    ("x ** 4", "a power other than ** 2 or ** 3"),
    ("where(x > 0, x)", "where() with 2 arguments (it takes 3)"),
    ("erf(x)", "'erf(x)'"),
    ("x and x", "'x and x'"),
    ("'a' * x", "a non-number"),
    ("x +", "is not an expression"),
])
def test_a_formula_outside_the_grammar_is_refused_with_the_reason(text, says):
    with pytest.raises(ChainError, match="chain 'bad'") as e:
        Chain("bad", text)
    assert says in str(e.value)


def test_numbers_on_either_side_and_powers_run_as_written():
    c = Chain("poly", "2 - x ** 2 / 4 + 3 * x ** 3 - a", params=("a",))
    x = np.linspace(-3, 3, 50)
    np.testing.assert_allclose(c.run(NumpyBackend, (x,), (0.5,)), 2 - x ** 2 / 4 + 3 * x ** 3 - 0.5, rtol=4e-15,
                               atol=1e-14)
    big = np.linspace(-3, 3, N)
    np.testing.assert_allclose(NumpyBackend.elementwise_chain(c, (big,), (0.5,)),
                               2 - big ** 2 / 4 + 3 * big ** 3 - 0.5, rtol=1e-14, atol=1e-13)


# ---- the compiled loop against the steps ---------------------------------------------------------------------------
def _inputs(dtype, k: int):
    rng = np.random.default_rng(k)
    arrays = [(rng.standard_normal(N) * 4).astype(dtype) for _ in range(k)]
    x = arrays[-1]
    x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 200.0, -200.0, 1e-30]
    return tuple(arrays)


def _steps_and_compiled(chain, arrays, params=()):
    cpu_kernels.LAUNCHED[0] = None
    ours = NumpyBackend.elementwise_chain(chain, arrays, params)
    assert cpu_kernels.LAUNCHED[0] == chain.name  # (the compiled loop ran, and the timeline names it)
    return ours, chain.run(NumpyBackend, arrays, params)


# the ulp bound: the steps round after each operation and call NumPy's exp; the loop may contract a*b+c into one FMA
# and calls vmath.h's exp/sigmoid (within 2 / 3 ulp). A formula of a few such steps stays within 8 ulp of the
# magnitude of its terms (|g| * (1 + |x|) for these: the derivatives cancel near their zeros, as torch's do).
ULP = 8


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("chain,params", [(SILU, ()), (SILU_GRAD, ()), (ELU, (0.7,)), (ELU_GRAD, (1.3,)), (MISH, ()),
                                          (MISH_GRAD, ()), (SOFTPLUS_GRAD, (2.0, 5.0)), (LEAKY_RELU, (0.01,)),
                                          (LEAKY_RELU_GRAD, (0.2,))])
def test_the_compiled_loop_equals_the_steps_within_its_ulp_bound(chain, params, dtype):
    arrays = _inputs(dtype, len(chain.inputs))
    with np.errstate(all="ignore"):
        ours, ref = _steps_and_compiled(chain, arrays, params)
        scale = np.abs(arrays[0]) * (1 + np.abs(arrays[-1])) if len(arrays) == 2 else 1 + np.abs(arrays[0])
    assert ours.dtype == ref.dtype == dtype and ours.shape == ref.shape
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    finite = np.isfinite(ref) & np.isfinite(scale)
    np.testing.assert_array_equal(ours[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)])
    err = np.abs(ours[finite] - ref[finite]) / scale[finite]
    assert err.max() <= ULP * np.finfo(dtype).eps, err.max() / np.finfo(dtype).eps


def test_a_strided_or_broadcast_input_runs_compiled_from_a_copy():
    x = np.linspace(-2, 2, 2 * N)[::2]
    g = np.broadcast_to(np.float64(1.5), x.shape)
    ours, ref = _steps_and_compiled(SILU_GRAD, (g, x))
    np.testing.assert_allclose(ours, ref, rtol=0, atol=ULP * np.finfo(np.float64).eps * 4)


def test_small_float16_or_mixed_arrays_run_the_steps():
    x = np.linspace(-2, 2, 100, dtype=np.float32)
    for arrays in [(x,), (np.linspace(-2, 2, N, dtype=np.float16),), (np.ones(N, np.float32), np.ones(N))]:
        cpu_kernels.LAUNCHED[0] = None
        chain = SILU if len(arrays) == 1 else SILU_GRAD
        ours = NumpyBackend.elementwise_chain(chain, arrays)
        assert cpu_kernels.LAUNCHED[0] is None
        np.testing.assert_array_equal(ours, chain.run(NumpyBackend, arrays))


def test_the_generated_c_is_kept_beside_its_library(tmp_path, monkeypatch):
    monkeypatch.setenv("TL_CPU_KERNEL_CACHE", str(tmp_path))
    chain = Chain("kept_for_reading", "x * x + 1")
    path, hit, _ = cpu_kernels.compile_file(f"chain_{chain.name}_{chain.key}.c", chain.c_source())
    assert not hit and path.exists() and path.with_suffix(".c").read_text() == chain.c_source()
    assert "x * x" in chain.text and "kept_for_reading_f32" in chain.c_source()


def test_tensor_steps_give_the_same_values_as_the_backend_steps():
    x = np.linspace(-3, 3, 31)
    g = np.cos(x)
    t = TensorSteps
    for chain, arrays, params in [(SILU, (x,), ()), (SILU_GRAD, (g, x), ()), (ELU, (x,), (0.5,)),
                                  (ELU_GRAD, (g, x), (0.5,))]:
        ours = chain.run(t, tuple(tl.tensor(a) for a in arrays), params).numpy()
        np.testing.assert_allclose(ours, chain.run(NumpyBackend, arrays, params), rtol=1e-15, atol=1e-15)


# ---- the activations built on chains, against torch ------------------------------------------------------------
CASES = {"silu": (F.silu, torch.nn.functional.silu),
         "elu": (lambda t: F.elu(t, 0.7), lambda t: torch.nn.functional.elu(t, 0.7)),
         "mish": (F.mish, torch.nn.functional.mish),
         "leaky_relu": (lambda t: F.leaky_relu(t, 0.2), lambda t: torch.nn.functional.leaky_relu(t, 0.2)),
         "softplus": (lambda t: F.softplus(t, 2.0, 5.0), lambda t: torch.nn.functional.softplus(t, 2.0, 5.0))}


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("name", CASES)
def test_the_activations_on_chains_match_torch(name, dtype):
    ours_fn, torch_fn = CASES[name]
    rng = np.random.default_rng(3)
    xs, gs = rng.standard_normal(N) * 3, rng.standard_normal(N)
    tdt = getattr(torch, dtype)
    tx = torch.tensor(xs, dtype=tdt, requires_grad=True)
    ty = torch_fn(tx)
    ty.backward(torch.tensor(gs, dtype=tdt))
    x = tl.tensor(tx.detach().double().numpy(), dtype=getattr(tl, dtype), requires_grad=True)  # (torch's rounding)
    y = ours_fn(x)
    y.backward(tl.tensor(gs, dtype=getattr(tl, dtype)))
    tol = {"float32": 1e-6, "float64": 1e-14, "bfloat16": 8e-3}[dtype]
    scale = 1 + np.abs(xs)
    for ours, theirs in [(y, ty), (x.grad, tx.grad)]:
        err = np.abs(ours.detach().double().numpy() - theirs.detach().double().numpy())
        assert (err / scale).max() <= tol


@pytest.mark.parametrize("name", [n for n in CASES if n != "leaky_relu"])  # (its second derivative is 0: no graph)
def test_higher_derivatives_through_the_chain_match_torch(name):
    ours_fn, torch_fn = CASES[name]
    xs = np.random.default_rng(4).standard_normal(N)
    x, tx = tl.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    got, want = [ours_fn(x).sum()], [torch_fn(tx).sum()]
    for order in range(3):
        (gx,) = tl.autograd.grad(got[-1], x, create_graph=order < 2)
        (tgx,) = torch.autograd.grad(want[-1], tx, create_graph=order < 2)
        np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=1e-11, atol=1e-12)
        got.append(gx.sum())
        want.append(tgx.sum())


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", CASES)
def test_gradcheck_and_gradgradcheck_on_both_paths(name, compiled, monkeypatch):
    from tinygrad_like.backends import numpy_backend

    monkeypatch.setattr(numpy_backend, "_CHAIN_MIN", 8 if compiled else 10**9)  # (12 elements, either path)
    x = tl.tensor(np.random.default_rng(12).standard_normal(12) * 3, requires_grad=True)
    cpu_kernels.LAUNCHED[0] = None
    assert gradcheck(CASES[name][0], (x,)) and gradgradcheck(CASES[name][0], (x,))


def test_the_nodes_carry_torchs_names_and_the_timeline_the_chains():
    x = tl.randn(N, requires_grad=True)
    got = []
    unsubscribe = events.subscribe(lambda e: got.append(e) if isinstance(e, events.KernelTimed) else None)
    try:
        y = F.silu(x)
        (gx,) = tl.autograd.grad(y.sum(), x, create_graph=True)
        z = F.elu(x)
        z.sum().backward()
    finally:
        unsubscribe()
    assert y.grad_fn.name() == "SiluBackward0" and gx.grad_fn.name() == "SiluBackwardBackward0"
    assert z.grad_fn.name() == "EluBackward0" and F.mish(x).grad_fn.name() == "MishBackward0"
    names = {(e.name, e.device) for e in got}
    assert {("silu_fwd", "cpu, compiled"), ("silu_bwd", "cpu, compiled"), ("elu_fwd", "cpu, compiled"),
            ("elu_bwd", "cpu, compiled")} <= names


def test_two_chains_of_one_name_are_refused():
    first, second = Chain("named_twice", "x + 1"), Chain("named_twice", "x + 2")
    assert cpu_kernels.chain_kernel(first, "f32") is not None
    with pytest.raises(ValueError, match="two elementwise chains are named 'named_twice'"):
        cpu_kernels.chain_kernel(second, "f32")
