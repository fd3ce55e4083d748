"""Behaviour that used to differ quietly from PyTorch (issue 26, section 4), each checked against torch by running the
same program in both libraries:

1. ``inplace=True`` (and the ``F.*_`` functions, and the modules' ``inplace`` flag) writes into the input and returns
   it, with torch's version bumps and autograd rules (leaf refused, a later write caught at backward, gradients);
2. an integer or bool tensor cannot be made to require grad, by any entry point;
3. ``F.linear`` with a 1-D weight;
4. ``DataLoader(worker_init_fn=...)`` is called once per worker, with ``get_worker_info()`` answering inside it and
   while the worker reads.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import math
import re
import warnings

import numpy as np
import pytest
from conftest import assert_close, torch

import tinygrad_like as tl
import tinygrad_like.nn.functional as TF

pytestmark = pytest.mark.skipif(torch is None, reason="needs PyTorch as the oracle")

LIBS = ("tl", "torch")
LEAF_IN_PLACE = "a leaf Variable that requires grad is being used in an in-place operation"
MODIFIED = r"modified by an in-?place operation"  # (torch: "inplace", ours: "in-place"; both name the versions)


def lib_of(name: str):
    return tl if name == "tl" else torch


def F_of(name: str):
    return TF if name == "tl" else torch.nn.functional


def data(shape=(2, 3, 2, 2), seed: int = 0, dtype=np.float64) -> np.ndarray:
    """Values away from the kinks (0, thresholds), both signs, some beyond hardtanh's and hardswish's ranges."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.2, 4.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return x.astype(dtype)


def _outcome(fn):
    """``fn()``'s result, or the exception type and message it raised."""
    try:
        return fn(), None
    except Exception as e:  # (compared between the libraries by the caller)
        return None, e


# ---- 1. in-place activations --------------------------------------------------------------------------------
def test_every_torch_function_and_module_with_an_inplace_flag_has_one_here():
    """The list is torch's own (its signatures), not ours: a function or module torch gives ``inplace`` must exist
    here and take it, and every ``F.<name>_`` of torch must exist."""
    tf = torch.nn.functional
    funcs = [n for n in dir(tf) if not n.startswith("_") and callable(getattr(tf, n))
             and _has_param(getattr(tf, n), "inplace")]
    assert {"relu", "dropout", "rrelu", "alpha_dropout", "feature_alpha_dropout", "dropout3d"} <= set(funcs)
    for n in funcs:
        assert _has_param(getattr(TF, n), "inplace"), n
    for n in [n for n in dir(tf) if n.endswith("_") and not n.startswith("_")]:
        assert callable(getattr(TF, n, None)), f"F.{n} is missing"
    mods = [n for n in dir(torch.nn) if isinstance(getattr(torch.nn, n), type)
            and issubclass(getattr(torch.nn, n), torch.nn.Module) and _has_param(getattr(torch.nn, n), "inplace")]
    assert {"ReLU", "Dropout", "RReLU", "AlphaDropout", "FeatureAlphaDropout", "Dropout1d"} <= set(mods)
    for n in mods:
        assert _has_param(getattr(tl.nn, n), "inplace"), n


def _has_param(fn, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# name -> the in-place call; each is deterministic (dropouts in eval, or with p in {0, 1})
IN_PLACE = {
    "relu": lambda F, x: F.relu(x, inplace=True),
    "relu_": lambda F, x: F.relu_(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2, inplace=True),
    "leaky_relu_": lambda F, x: F.leaky_relu_(x, 0.2),
    "leaky_relu_slope_0": lambda F, x: F.leaky_relu(x, 0.0, inplace=True),
    "elu": lambda F, x: F.elu(x, 1.5, inplace=True),
    "elu_": lambda F, x: F.elu_(x),
    "celu": lambda F, x: F.celu(x, 1.5, inplace=True),
    "celu_": lambda F, x: F.celu_(x, 0.5),
    "selu": lambda F, x: F.selu(x, inplace=True),
    "selu_": lambda F, x: F.selu_(x),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 2.0, inplace=True),
    "hardtanh_": lambda F, x: F.hardtanh_(x),
    "relu6": lambda F, x: F.relu6(x, inplace=True),
    "threshold": lambda F, x: F.threshold(x, 0.1, 20.0, inplace=True),
    "threshold_": lambda F, x: F.threshold_(x, -1.0, 0.5),
    "rrelu_eval": lambda F, x: F.rrelu(x, 0.1, 0.3, inplace=True),
    "rrelu_": lambda F, x: F.rrelu_(x),
    "silu": lambda F, x: F.silu(x, inplace=True),
    "mish": lambda F, x: F.mish(x, inplace=True),
    "hardswish": lambda F, x: F.hardswish(x, inplace=True),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x, inplace=True),
    "dropout_p1": lambda F, x: F.dropout(x, 1.0, True, inplace=True),
    "dropout2d_p1": lambda F, x: F.dropout2d(x, 1.0, True, inplace=True),
    "alpha_dropout_p1": lambda F, x: F.alpha_dropout(x, 1.0, True, inplace=True),
    "feature_alpha_dropout_p1": lambda F, x: F.feature_alpha_dropout(x, 1.0, True, inplace=True),
}
# calls that write nothing (identity): the input itself comes back, at the same version
IDENTITY = {
    "dropout_eval": lambda F, x: F.dropout(x, 0.5, False, inplace=True),
    "dropout_p0": lambda F, x: F.dropout(x, 0.0, True, inplace=True),
    "dropout1d_eval": lambda F, x: F.dropout1d(x, 0.5, False, inplace=True),
    "alpha_dropout_eval": lambda F, x: F.alpha_dropout(x, 0.5, False, inplace=True),
    "feature_alpha_dropout_p0": lambda F, x: F.feature_alpha_dropout(x, 0.0, True, inplace=True),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_writes_the_input_and_returns_it_like_torch(name):
    arr = data()
    got = {}
    for lib in LIBS:
        x = lib_of(lib).tensor(arr.copy())
        v0 = x._version
        assert IN_PLACE[name](F_of(lib), x) is x, f"{lib}: the input itself must come back"
        got[lib] = (x, x._version - v0)
    assert_close(got["tl"][0], got["torch"][0])
    assert got["tl"][1] == got["torch"][1], f"version bumps: ours {got['tl'][1]}, torch's {got['torch'][1]}"
    assert not np.array_equal(got["tl"][0].numpy(), arr), "the input's values must have changed"


@pytest.mark.parametrize("name", sorted(IDENTITY))
def test_in_place_identity_returns_the_input_unwritten_like_torch(name):
    for lib in LIBS:
        x = lib_of(lib).tensor(data((2, 3, 4)), requires_grad=True)  # (a leaf: nothing is written, so allowed)
        assert IDENTITY[name](F_of(lib), x) is x and x._version == 0, lib


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_on_a_leaf_that_requires_grad_is_refused_like_torch(name):
    arr = data()
    for lib in LIBS:
        x = lib_of(lib).tensor(arr.copy(), requires_grad=True)
        call = IN_PLACE[name]
        with pytest.raises(RuntimeError, match=LEAF_IN_PLACE):
            call(F_of(lib), x)
        v = x[:1]  # a view of the leaf: refused too (torch: "a view of a leaf Variable that requires grad ...")
        with pytest.raises(RuntimeError, match="a view of " + LEAF_IN_PLACE):
            call(F_of(lib), v)
        np.testing.assert_array_equal(x.detach().numpy(), arr)  # refused before writing anything
        with lib_of(lib).no_grad():  # the parameter itself, on purpose: allowed
            assert call(F_of(lib), x) is x


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_gradients_through_an_in_place_write_on_a_non_leaf_are_torchs(name, dtype):
    arr, w = data(seed=1, dtype=dtype), data(seed=2, dtype=dtype)
    grads = {}
    for lib in LIBS:
        L = lib_of(lib)
        a = L.tensor(arr.copy(), requires_grad=True)
        x = a * 1.5  # (a non-leaf: written in place, its history moves onto it)
        x.retain_grad()
        y = IN_PLACE[name](F_of(lib), x)
        (y * L.tensor(w.copy())).sum().backward()
        grads[lib] = (a.grad, x.grad, y)
    for ours, theirs in zip(grads["tl"], grads["torch"]):
        assert_close(ours, theirs, atol=1e-6 if dtype == "float32" else None, rtol=1e-5 if dtype == "float32" else None)


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_a_later_write_to_what_backward_needs_fails_as_in_torch(name):
    """torch's relu_, leaky_relu_, elu_... keep their output, which is the input they wrote: writing it again
    before backward fails the backward. The others (silu_, hardtanh_, dropout...) keep no such thing and succeed."""
    arr = data(seed=3)
    results = {}
    for lib in LIBS:
        a = lib_of(lib).tensor(arr.copy(), requires_grad=True)
        x = a * 1.0
        y = IN_PLACE[name](F_of(lib), x)
        y.mul_(2)
        _, err = _outcome(lambda y=y: y.sum().backward())
        results[lib] = (err, a.grad)
    (ours, our_grad), (theirs, their_grad) = results["tl"], results["torch"]
    assert (ours is None) == (theirs is None), (ours, theirs)
    if theirs is None:
        assert_close(our_grad, their_grad)
    else:
        for err in (ours, theirs):
            assert isinstance(err, RuntimeError) and re.search(MODIFIED, str(err)), err


def test_the_version_error_names_the_write_and_both_versions():
    a = tl.tensor([1.0, -2.0, 3.0], requires_grad=True)
    x = a * 1
    TF.elu(x, inplace=True)
    x.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an in-place operation.*version 2; expected version 1"):
        x.sum().backward()


@pytest.mark.parametrize("call, words", [
    (lambda F, x: F.leaky_relu(x, -0.2, inplace=True), "In-place leakyReLu backward calculation is triggered with "
                                                        "a negative slope which is not supported"),
    (lambda F, x: F.rrelu(x, -0.5, 0.1, inplace=True), "In-place leakyReLu backward calculation is triggered with "
                                                        "a negative slope which is not supported"),
    (lambda F, x: F.elu(x, -1.5, inplace=True), "In-place elu backward calculation is triggered with a negative "
                                                "slope which is not supported"),
    (lambda F, x: F.celu(x, -1.5, inplace=True), "In-place elu backward calculation is triggered with a negative "
                                                 "slope which is not supported"),
])
def test_a_negative_slope_in_place_computes_but_cannot_be_differentiated_like_torch(call, words):
    arr = data(seed=4)
    outs = {}
    for lib in LIBS:
        a = lib_of(lib).tensor(arr.copy(), requires_grad=True)
        y = call(F_of(lib), a * 1)  # the forward is fine
        outs[lib] = y
        with pytest.raises(RuntimeError, match=words):
            y.sum().backward()
    assert_close(outs["tl"].detach(), outs["torch"].detach())


@pytest.mark.parametrize("name", ["relu", "elu", "celu", "selu", "leaky_relu", "silu", "hardswish", "threshold"])
def test_second_derivatives_through_an_in_place_activation_are_torchs(name):
    arr = data(seed=5)
    out = {}
    for lib in LIBS:
        a = lib_of(lib).tensor(arr.copy(), requires_grad=True)
        y = IN_PLACE[name](F_of(lib), a * 1.0)
        (g,) = lib_of(lib).autograd.grad((y * y).sum(), a, create_graph=True)
        (gg,) = lib_of(lib).autograd.grad(g.sum(), a)
        out[lib] = (g, gg)
    for ours, theirs in zip(out["tl"], out["torch"]):
        assert_close(ours.detach(), theirs.detach())


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "elu", "silu", "hardtanh", "threshold", "dropout_p1"])
def test_in_place_through_a_view_of_a_non_leaf_like_torch(name):
    arr, w = data((3, 5, 2), seed=6), data((3, 5, 2), seed=7)
    res = {}
    for lib in LIBS:
        L = lib_of(lib)
        a = L.tensor(arr.copy(), requires_grad=True)
        x = a * 2.0
        v = x[:, 1:4]
        assert IN_PLACE[name](F_of(lib), v) is v
        (x * L.tensor(w.copy())).sum().backward()
        res[lib] = (x, a.grad, x._version)
    assert_close(res["tl"][0].detach(), res["torch"][0].detach())
    assert_close(res["tl"][1], res["torch"][1])
    assert res["tl"][2] == res["torch"][2]


def test_in_place_on_an_expanded_tensor_is_refused_like_torch():
    for lib in LIBS:
        x = lib_of(lib).ones(3, 1).expand(3, 4)
        for call in (IN_PLACE["relu"], IN_PLACE["elu"], lambda F, t: F.dropout(t, 0.5, True, inplace=True)):
            with pytest.raises(RuntimeError, match="single memory location"):
                call(F_of(lib), x)


@pytest.mark.parametrize("name, ok", [("relu", True), ("hardtanh", True), ("relu6", True), ("threshold", True),
                                      ("leaky_relu", False), ("elu", False), ("silu", False), ("selu", False),
                                      ("mish", False), ("hardswish", False), ("rrelu_eval", False)])
def test_in_place_on_integers_works_or_is_refused_like_torch(name, ok):
    arr = np.array([-3, 0, 2, 9], dtype=np.int64)
    res = {lib: _outcome(lambda lib=lib: IN_PLACE[name](F_of(lib), lib_of(lib).tensor(arr.copy())))
           for lib in LIBS}
    assert (res["torch"][1] is None) == ok, res["torch"]
    if ok:
        assert res["tl"][1] is None, res["tl"][1]
        assert_close(res["tl"][0], res["torch"][0])
    else:
        assert type(res["tl"][1]) is type(res["torch"][1]) is NotImplementedError, res
        assert "int64" in str(res["tl"][1]) and "floating point" in str(res["tl"][1])


MODULES = {
    "ReLU": lambda nn: nn.ReLU(inplace=True),
    "LeakyReLU": lambda nn: nn.LeakyReLU(0.1, inplace=True),
    "ELU": lambda nn: nn.ELU(0.7, inplace=True),
    "CELU": lambda nn: nn.CELU(0.7, inplace=True),
    "SELU": lambda nn: nn.SELU(inplace=True),
    "SiLU": lambda nn: nn.SiLU(inplace=True),
    "Mish": lambda nn: nn.Mish(inplace=True),
    "Hardswish": lambda nn: nn.Hardswish(inplace=True),
    "Hardsigmoid": lambda nn: nn.Hardsigmoid(inplace=True),
    "Hardtanh": lambda nn: nn.Hardtanh(-0.5, 0.5, inplace=True),
    "ReLU6": lambda nn: nn.ReLU6(inplace=True),
    "Threshold": lambda nn: nn.Threshold(0.1, 20.0, inplace=True),
    "RReLU": lambda nn: nn.RReLU(0.1, 0.3, inplace=True).eval(),
    "Dropout": lambda nn: nn.Dropout(1.0, inplace=True),
    "Dropout1d": lambda nn: nn.Dropout1d(1.0, inplace=True),
    "Dropout2d": lambda nn: nn.Dropout2d(1.0, inplace=True),
    "Dropout3d": lambda nn: nn.Dropout3d(1.0, inplace=True),
}


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_modules_compute_out_of_place_even_with_inplace_true_like_torch(name):
    """torch's two modules do not pass ``inplace`` on to ``F.alpha_dropout``: the input is left as it was."""
    arr = data((2, 3, 4, 2), seed=8)
    for lib in LIBS:
        x = lib_of(lib).tensor(arr.copy())
        y = getattr(lib_of(lib).nn, name)(1.0, inplace=True)(x)
        assert y is not x and x._version == 0 and np.array_equal(x.numpy(), arr), lib
        assert np.all(y.numpy() == 0), lib


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_with_inplace_true_write_their_input_like_torch(name):
    shape = {"Dropout1d": (2, 3, 4), "Dropout3d": (2, 3, 2, 2, 2)}.get(name, (2, 3, 4, 2))
    arr = data(shape, seed=8)
    res = {}
    for lib in LIBS:
        mod = MODULES[name](lib_of(lib).nn)
        x = lib_of(lib).tensor(arr.copy())
        assert mod(x) is x
        res[lib] = (x, x._version, repr(mod))
        with pytest.raises(RuntimeError, match=LEAF_IN_PLACE):
            mod(lib_of(lib).tensor(arr.copy(), requires_grad=True))
    assert_close(res["tl"][0], res["torch"][0])
    assert res["tl"][1:] == res["torch"][1:]


def test_modules_repr_their_flags_like_torch():
    for make in (lambda nn: nn.RReLU(), lambda nn: nn.RReLU(0.2, 0.25, True), lambda nn: nn.Dropout2d(0.2, True),
                 lambda nn: nn.AlphaDropout(), lambda nn: nn.FeatureAlphaDropout(0.1), lambda nn: nn.Dropout1d(),
                 lambda nn: nn.Dropout3d(0.3), lambda nn: nn.SELU(True), lambda nn: nn.Hardswish(True)):
        assert repr(make(tl.nn)) == repr(make(torch.nn))
    for lib in LIBS:
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            lib_of(lib).nn.AlphaDropout(1.5)


# ---- 1b. the random ones (dropouts in training, rrelu in training): torch's structure, our generator ------------
RANDOM = {  # name -> (call(F, x, inplace), shape, version bumps in place, what is drawn per: "element" or "channel")
    "dropout": (lambda F, x, ip: F.dropout(x, 0.4, True, inplace=ip), (4, 6, 5), 1, "element"),
    "dropout1d": (lambda F, x, ip: F.dropout1d(x, 0.4, True, inplace=ip), (4, 6, 5), 1, "channel"),
    "dropout1d_unbatched": (lambda F, x, ip: F.dropout1d(x, 0.4, True, inplace=ip), (6, 5), None, "channel"),
    "dropout2d": (lambda F, x, ip: F.dropout2d(x, 0.4, True, inplace=ip), (4, 6, 5, 3), 1, "channel"),
    "dropout3d": (lambda F, x, ip: F.dropout3d(x, 0.4, True, inplace=ip), (4, 6, 2, 3, 2), 1, "channel"),
    "alpha_dropout": (lambda F, x, ip: F.alpha_dropout(x, 0.4, True, inplace=ip), (4, 6, 5), 2, "element"),
    "feature_alpha_dropout": (lambda F, x, ip: F.feature_alpha_dropout(x, 0.4, True, inplace=ip), (4, 6, 5), 2,
                              "channel"),
    "rrelu": (lambda F, x, ip: F.rrelu(x, 0.1, 0.3, True, inplace=ip), (4, 6, 5), 1, "element"),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_in_place_writes_what_the_out_of_place_form_gives_under_the_same_seed(name):
    """Values cannot match torch's draws; what can: in place returns the input, bumps its version as torch's, and
    writes exactly what the out-of-place call gives under the same seed (in both libraries)."""
    call, shape, bumps, _ = RANDOM[name]
    arr = data(shape, seed=9)
    for lib in LIBS:
        L = lib_of(lib)
        L.manual_seed(5)
        expected = call(F_of(lib), L.tensor(arr.copy()), False)
        L.manual_seed(5)
        x = L.tensor(arr.copy())
        assert call(F_of(lib), x, True) is x
        np.testing.assert_allclose(x.numpy(), expected.numpy(), rtol=1e-12, atol=0, err_msg=lib)
        if bumps is not None:  # (torch's unbatched dropout1d also counts its unsqueeze_/squeeze_: 3; ours 1)
            assert x._version == bumps, (lib, x._version)


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_dropouts_have_torchs_structure_and_gradient(name):
    call, shape, _, per = RANDOM[name]
    arr = data(shape, seed=10)
    for lib in LIBS:
        L = lib_of(lib)
        L.manual_seed(3)
        a = L.tensor(arr.copy(), requires_grad=True)
        x = a * 1.0
        y = call(F_of(lib), x, True)
        assert y is x
        y.sum().backward()
        out, g = y.detach().numpy(), a.grad.numpy()
        if name == "rrelu":  # positives kept, negatives scaled by a slope in [lower, upper]; the slope is the grad
            assert np.all(g[arr > 0] == 1) and np.all((g[arr < 0] >= 0.1) & (g[arr < 0] <= 0.3)), lib
            np.testing.assert_allclose(out, arr * g, rtol=1e-12)
            continue
        np.testing.assert_allclose(g, _scale_of(name, out, arr), rtol=1e-12, atol=1e-12, err_msg=lib)
        if "alpha" not in name:  # each factor is 0 (dropped) or 1/(1-p) (kept), about 1-p of them kept
            factors = np.unique(np.round(g, 12))
            assert set(factors) <= {0.0, round(1 / 0.6, 12)} and len(factors) == 2, (lib, factors)
            units = g.reshape(shape[:1 if name == "dropout1d_unbatched" else 2] + (-1,))[..., 0] if per == "channel" \
                else g
            assert abs(np.mean(units != 0) - 0.6) < 0.25, (lib, np.mean(units != 0))
        if per == "channel":  # one draw per (sample, channel): the gradient is constant over the rest
            lead = 1 if name == "dropout1d_unbatched" else 2
            g2 = g.reshape(shape[:lead] + (-1,))
            assert np.all(g2 == g2[..., :1]), lib


def _scale_of(name: str, out: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The gradient each element must get: the factor its input was multiplied by (alpha dropout adds a constant
    too, so its factor is read from whether the element was kept)."""
    p = 0.4
    if "alpha" not in name:
        return out / x
    s = 1.7580993408473766
    a = 1.0 / math.sqrt((s * s * p + 1) * (1 - p))
    kept = ~np.isclose(out, -a * s * (1 - p) + 0.0, rtol=0, atol=1e-12)
    return np.where(kept, a, 0.0)


@pytest.mark.parametrize("fn", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_constants_and_statistics_are_torchs(fn):
    """On zeros the outputs are exactly the two constants (kept, dropped); on N(0, 1) data mean and variance stay."""
    values = {}
    for lib in LIBS:
        L, F = lib_of(lib), F_of(lib)
        L.manual_seed(0)
        z = getattr(F, fn)(L.zeros(400, 50, dtype=L.float64), 0.3, True)
        values[lib] = np.unique(np.round(z.numpy(), 12))
        L.manual_seed(1)
        y = getattr(F, fn)(L.tensor(np.random.default_rng(0).standard_normal((2000, 100))), 0.3, True).numpy()
        assert abs(y.mean()) < 0.05 and abs(y.var() - 1) < 0.05, (lib, y.mean(), y.var())
    np.testing.assert_allclose(values["tl"], values["torch"], rtol=1e-12)


@pytest.mark.parametrize("call, exc, words", [
    (lambda F, L: F.dropout1d(L.ones(3), 0.5), RuntimeError, "dropout1d: Expected 2D or 3D input, but received a 1D "
                                                             "input"),
    (lambda F, L: F.dropout1d(L.ones(2, 3, 4, 5), 0.5), RuntimeError, "but received a 4D input"),
    (lambda F, L: F.feature_alpha_dropout(L.ones(3), 0.5, True), RuntimeError, "(?i)feature dropout requires at "
                                                                               "least 2 dimensions in the input"),
    (lambda F, L: F.alpha_dropout(L.ones(3), 1.5), ValueError, "dropout probability has to be between 0 and 1, but "
                                                               "got 1.5"),
    (lambda F, L: F.dropout2d(L.ones(2, 3, 4, 4), -0.1), ValueError, "dropout probability has to be between 0 and "
                                                                     "1, but got -0.1"),
    (lambda F, L: F.rrelu(L.ones(3), 0.5, 0.1), RuntimeError, "(?i)lower bound should be less than or equal to the "
                                                              "upper bound"),
])
def test_dropout_and_rrelu_argument_errors_are_torchs(call, exc, words):
    for lib in LIBS:
        with pytest.raises(exc, match=words):
            call(F_of(lib), lib_of(lib))


@pytest.mark.parametrize("call, words", [
    (lambda F, L: F.dropout2d(L.ones(3, 3), 0.5), "dropout2d: Received a 2-D input to dropout2d, which is deprecated"),
    (lambda F, L: F.dropout2d(L.ones(2, 3, 3), 0.5), "dropout2d: Received a 3D input to dropout2d and assuming that "
                                                     "channel-wise 1D dropout behavior is desired"),
    (lambda F, L: F.dropout3d(L.ones(2, 3, 3), 0.5), "dropout3d: Received a 3-D input to dropout3d, which is "
                                                     "deprecated"),
])
def test_dropout_nd_warnings_are_torchs(call, words):
    for lib in LIBS:
        with pytest.warns(UserWarning, match=words):
            call(F_of(lib), lib_of(lib))


def test_the_other_dropouts_return_the_input_itself_when_not_training_or_empty():
    for lib in LIBS:
        L, F = lib_of(lib), F_of(lib)
        x = L.ones(2, 3, 4)
        for fn in (F.dropout1d, F.dropout2d, F.alpha_dropout, F.feature_alpha_dropout):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (dropout2d's 3-D warning)
                assert fn(x, 0.5, False) is x, (lib, fn)
        e = L.ones(0, 3)
        assert F.alpha_dropout(e, 0.5, True) is e and F.feature_alpha_dropout(e, 0.5, True) is e


# ---- 2. requires_grad on integer and bool tensors -------------------------------------------------------------
def _set_requires_grad(t):
    t.requires_grad = True
    return t


REQUIRES_GRAD_ENTRY_POINTS = {
    "setter int": lambda L: _set_requires_grad(L.tensor([1, 2])),
    "setter bool": lambda L: _set_requires_grad(L.tensor([True, False])),
    "setter uint8": lambda L: _set_requires_grad(L.tensor([1], dtype=L.uint8)),
    "requires_grad_": lambda L: L.tensor([1, 2]).requires_grad_(),
    "requires_grad_ of a detached int": lambda L: L.tensor([1, 2]).detach().requires_grad_(True),
    "tensor int": lambda L: L.tensor([1, 2], requires_grad=True),
    "tensor float data, int dtype": lambda L: L.tensor([1.0, 2.0], dtype=L.int32, requires_grad=True),
    "tensor bool": lambda L: L.tensor([True], requires_grad=True),
    "zeros": lambda L: L.zeros(2, dtype=L.int64, requires_grad=True),
    "ones bool": lambda L: L.ones(2, dtype=L.bool, requires_grad=True),
    "empty": lambda L: L.empty(2, dtype=L.int32, requires_grad=True),
    "full (int fill)": lambda L: L.full((2,), 3, requires_grad=True),
    "arange": lambda L: L.arange(3, requires_grad=True),
    "linspace": lambda L: L.linspace(0, 3, 4, dtype=L.int64, requires_grad=True),
    "eye": lambda L: L.eye(3, dtype=L.int64, requires_grad=True),
    "randint": lambda L: L.randint(0, 3, (2,), requires_grad=True),
    "randperm": lambda L: L.randperm(3, requires_grad=True),
    "zeros_like": lambda L: L.zeros_like(L.tensor([1, 2]), requires_grad=True),
    "ones_like": lambda L: L.ones_like(L.tensor([1.0]), dtype=L.int64, requires_grad=True),
    "full_like": lambda L: L.full_like(L.tensor([1, 2]), 3, requires_grad=True),
    "empty_like": lambda L: L.empty_like(L.tensor([1, 2]), requires_grad=True),
    "randint_like": lambda L: L.randint_like(L.tensor([1, 2]), 3, requires_grad=True),
    "new_zeros": lambda L: L.tensor([1.0]).new_zeros(2, dtype=L.int64, requires_grad=True),
    "new_ones": lambda L: L.tensor([1]).new_ones(2, requires_grad=True),
    "new_empty": lambda L: L.tensor([1]).new_empty(2, requires_grad=True),
    "new_full": lambda L: L.tensor([1]).new_full((2,), 3, requires_grad=True),
    "Parameter": lambda L: L.nn.Parameter(L.tensor([1, 2])),
}


@pytest.mark.parametrize("name", sorted(REQUIRES_GRAD_ENTRY_POINTS))
def test_integer_and_bool_tensors_cannot_require_grad_by_any_entry_point(name):
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point"):
            REQUIRES_GRAD_ENTRY_POINTS[name](lib_of(lib))
    with pytest.raises(RuntimeError, match=r"got (dtype )?(int|bool|uint)"):  # ours says which dtype it got
        REQUIRES_GRAD_ENTRY_POINTS[name](tl)


def test_a_refused_setter_leaves_the_flag_alone_and_false_is_always_fine():
    for lib in LIBS:
        t = lib_of(lib).tensor([1, 2])
        with pytest.raises(RuntimeError):
            t.requires_grad = True
        assert t.requires_grad is False
        t.requires_grad = False
        assert t.requires_grad is False
        assert lib_of(lib).tensor([1, 2], requires_grad=False).requires_grad is False
        assert lib_of(lib).nn.Parameter(lib_of(lib).tensor([1, 2]), requires_grad=False).requires_grad is False


def test_floating_tensors_still_require_grad_by_every_entry_point():
    for lib in LIBS:
        L = lib_of(lib)
        for dt in (L.float16, L.bfloat16, L.float32, L.float64):
            t = L.zeros(2, dtype=dt)
            t.requires_grad = True
            assert t.requires_grad and t.is_leaf
        assert L.tensor([1.0]).new_tensor([1, 2], requires_grad=True).requires_grad  # (float: the tensor's dtype)
        assert L.tensor([1.0]).new_zeros(2, requires_grad=True).requires_grad
        assert L.randint(0, 3, (2,), dtype=L.float32, requires_grad=True).requires_grad


def test_setting_requires_grad_on_a_non_leaf_is_refused_like_torch():
    for lib in LIBS:
        y = lib_of(lib).tensor([1.0, 2.0], requires_grad=True) * 2
        for flag in (False, True):  # (torch refuses both through the setter)
            with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
                y.requires_grad = flag
        with pytest.raises(RuntimeError, match="If you want to use a computed variable in a subgraph that doesn't "
                                               "require differentiation use var_no_grad = var.detach()"):
            y.requires_grad_(False)
        assert y.requires_grad_(True) is y and y.requires_grad  # (the method allows what changes nothing)


def test_an_integer_result_of_a_graph_cannot_be_made_to_require_grad():
    for lib in LIBS:
        n = (lib_of(lib).tensor([1.5, 2.5], requires_grad=True) * 2).long()
        assert not n.requires_grad
        with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point"):
            n.requires_grad = True


# ---- 3. F.linear with a 1-D weight --------------------------------------------------------------------------
LINEAR_1D = [  # (input shape, bias shape or None); the output is input.shape[:-1]
    ((2, 3, 4), None),
    ((5, 4), None),
    ((4,), None),
    ((0, 4), None),
    ((2, 3, 4), ()),
    ((2, 3, 4), (2, 3)),
    ((2, 2, 3, 4), (1, 1, 1)),
    ((4,), ()),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("xs, bs", LINEAR_1D)
def test_linear_with_a_1d_weight_matches_torch(xs, bs, dtype):
    rng = np.random.default_rng(11)
    arrs = [rng.standard_normal(xs), rng.standard_normal(4)] + ([] if bs is None else [rng.standard_normal(bs)])
    arrs = [a.astype(dtype) for a in arrs]
    res = {}
    for lib in LIBS:
        ts = [lib_of(lib).tensor(a.copy(), requires_grad=True) for a in arrs]
        y = F_of(lib).linear(*ts)
        assert tuple(y.shape) == xs[:-1]
        (y * 3.0).sum().backward()
        res[lib] = [y] + [t.grad for t in ts]
    tol = dict(atol=1e-5, rtol=1e-5) if dtype == "float32" else {}
    for ours, theirs in zip(res["tl"], res["torch"]):
        assert_close(ours, theirs, **tol)


def test_linear_with_a_1d_weight_on_integers_matches_torch():
    x, w = np.arange(8).reshape(2, 4), np.array([1, -1, 2, 0])
    assert_close(TF.linear(tl.tensor(x), tl.tensor(w)), torch.nn.functional.linear(torch.tensor(x), torch.tensor(w)))


def test_linear_with_a_1d_weight_and_a_bias_torch_refuses_on_its_fused_path():
    """torch's (N, in) input with a bias goes to addmm, which refuses a 1-D weight ("mat2 must be a matrix"), while
    a 3-D input computes the same arithmetic: here both compute it, as torch's 3-D path does."""
    rng = np.random.default_rng(12)
    x, w, b = rng.standard_normal((5, 4)), rng.standard_normal(4), rng.standard_normal(())
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b))
    ours = TF.linear(tl.tensor(x), tl.tensor(w), tl.tensor(b))
    assert_close(ours, torch.tensor(x) @ torch.tensor(w) + torch.tensor(b))


@pytest.mark.parametrize("xs, ws, bs, words", [
    ((2, 3, 4), (5,), None, "linear: input of shape \\(2, 3, 4\\) has 4 features but weight of shape \\(5,\\) "
                            "expects 5"),
    ((), (4,), None, "linear: both arguments need to be at least 1-D"),
    ((2, 4), (), None, "linear: both arguments need to be at least 1-D"),
    ((2, 4), (2, 3, 4), None, "the weight must be 2-D \\(out_features, in_features\\) or 1-D \\(in_features,\\), got "
                              "shape \\(2, 3, 4\\)"),
    ((2, 3, 4), (4,), (2, 3, 3), "the bias of shape \\(2, 3, 3\\) does not broadcast to it"),
])
def test_linear_with_a_wrong_shape_is_refused_clearly_where_torch_refuses(xs, ws, bs, words):
    rng = np.random.default_rng(13)
    arrs = [rng.standard_normal(xs), rng.standard_normal(ws)] + ([] if bs is None else [rng.standard_normal(bs)])
    with pytest.raises(RuntimeError):
        torch.nn.functional.linear(*[torch.tensor(a) for a in arrs])
    with pytest.raises(RuntimeError, match=words):
        TF.linear(*[tl.tensor(a) for a in arrs])


# ---- 4. DataLoader's worker_init_fn ---------------------------------------------------------------------------
class Numbers:
    """A map-style dataset of 0..n-1."""

    def __init__(self, n: int = 6):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        return i


def _record(path, worker_id: int) -> None:
    """A worker_init_fn that writes what it saw to ``path`` (torch's workers are other processes)."""
    info = _worker_info()
    with open(path, "a") as f:
        f.write(json.dumps({"arg": worker_id, "id": info.id, "num_workers": info.num_workers, "seed": info.seed,
                            "dataset": type(info.dataset).__name__, "n": len(info.dataset)}) + "\n")


def _worker_info():
    """Whichever library's worker is asking (torch's answers in its worker processes, ours in this one)."""
    return torch.utils.data.get_worker_info() or tl.utils.data.get_worker_info()


def _records(path) -> list[dict]:
    if not path.exists():
        return []
    with open(path) as f:
        return [json.loads(line) for line in f]


def _data_module(lib: str):
    return tl.utils.data if lib == "tl" else torch.utils.data


def _loader(lib: str, dataset, **kw):
    """A DataLoader of either library; torch's workers are forked, so that nothing here needs pickling."""
    if kw.get("num_workers"):
        kw.setdefault("multiprocessing_context", "fork")
    return _data_module(lib).DataLoader(dataset, **kw)


@pytest.mark.parametrize("num_workers, persistent, epochs", [(0, False, 2), (2, False, 2), (2, True, 2)])
def test_worker_init_fn_is_called_once_per_worker_as_torch_starts_them(tmp_path, num_workers, persistent, epochs):
    seen = {}
    for lib in LIBS:
        path = tmp_path / f"{lib}.jsonl"
        loader = _loader(lib, Numbers(), batch_size=2, num_workers=num_workers,
                         worker_init_fn=functools.partial(_record, path), persistent_workers=persistent)
        batches = [[b.tolist() for b in loader] for _ in range(epochs)]
        assert batches == [[[0, 1], [2, 3], [4, 5]]] * epochs, lib
        assert _data_module(lib).get_worker_info() is None
        seen[lib] = _records(path)
    ours, theirs = seen["tl"], seen["torch"]
    key = (lambda r: (r["arg"], r["id"], r["num_workers"], r["dataset"], r["n"]))
    assert sorted(map(key, ours)) == sorted(map(key, theirs))
    expected = 0 if num_workers == 0 else num_workers * (1 if persistent else epochs)
    assert len(ours) == expected
    for recs in (ours, theirs):  # seed: one base per start of the workers, plus the worker id
        for start in range(0, len(recs), max(num_workers, 1)):
            group = sorted(recs[start:start + num_workers], key=lambda r: r["id"])
            assert [r["seed"] - group[0]["seed"] for r in group] == list(range(len(group)))


class Probe(Numbers):
    """Each sample says which worker read it (-1: the main process), as get_worker_info() answers there."""

    def __getitem__(self, i):
        info = _worker_info_now()
        return i, -1 if info is None else info.id


def _worker_info_now():
    """Ours while our loader's worker reads; torch's in a torch worker process (ours is None there)."""
    ours = tl.utils.data.get_worker_info()
    return ours if ours is not None else torch.utils.data.get_worker_info()


def test_worker_init_fn_runs_when_iteration_starts_and_get_worker_info_answers_while_workers_read():
    calls = []

    def init(i):
        info = tl.utils.data.get_worker_info()
        calls.append((i, info.id, info.num_workers, type(info.dataset).__name__))

    loader = tl.utils.data.DataLoader(Probe(4), batch_size=2, num_workers=3, worker_init_fn=init)
    assert calls == [] and tl.utils.data.get_worker_info() is None
    it = iter(loader)
    assert calls == [(0, 0, 3, "Probe"), (1, 1, 3, "Probe"), (2, 2, 3, "Probe")]
    ours = [[t.tolist() for t in b] for b in it]
    theirs = [[t.tolist() for t in b] for b in torch.utils.data.DataLoader(Probe(4), batch_size=2, num_workers=3)]
    assert ours == theirs == [[[0, 1], [0, 0]], [[2, 3], [1, 1]]]  # (batch k read by worker k % 3, in torch too)
    assert [b[1].tolist() for b in tl.utils.data.DataLoader(Probe(4), batch_size=2)] == [[-1, -1]] * 2
    assert tl.utils.data.get_worker_info() is None


def test_worker_info_is_frozen_like_torchs():
    for lib in LIBS:
        info = _capture_info(_data_module(lib))
        with pytest.raises(dataclasses.FrozenInstanceError):
            info.id = 5
        assert {"id", "num_workers", "seed", "dataset"} <= {f.name for f in dataclasses.fields(info)}


def _capture_info(mod):
    if mod is torch.utils.data:  # (torch's is only made in a worker process: its class, built directly)
        from torch.utils.data._utils.worker import WorkerInfo
        return WorkerInfo(id=0, num_workers=1, seed=0, dataset=None)
    got = []
    list(mod.DataLoader(Numbers(2), num_workers=1, worker_init_fn=lambda i: got.append(mod.get_worker_info())))
    return got[0]


class Range:
    """torch's documented IterableDataset, sharded by a worker_init_fn that narrows the worker's own copy."""

    def __init__(self, start: int, end: int):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))


def _shard_range(worker_id: int) -> None:
    info = _worker_info()
    ds = info.dataset
    per = int(math.ceil((ds.end - ds.start) / float(info.num_workers)))
    ds.start = ds.start + worker_id * per
    ds.end = min(ds.start + per, ds.end)


def _iterable(lib: str, cls):
    return type(cls.__name__, (cls, _data_module(lib).IterableDataset), {})


@pytest.mark.parametrize("num_workers", [1, 2])
def test_a_dataset_sharded_by_worker_init_fn_yields_every_sample_once_like_torch(num_workers):
    """torch's documented recipe: worker_init_fn narrows ``get_worker_info().dataset``, the worker's copy; each worker
    iterates its copy, the batches interleaved round-robin: torch's order, and the loader's dataset untouched."""
    got = {}
    for lib in LIBS:
        ds = _iterable(lib, Range)(3, 10)
        loader = _loader(lib, ds, num_workers=num_workers, worker_init_fn=_shard_range)
        got[lib] = [int(b) for b in loader]
        assert (ds.start, ds.end) == (3, 10), lib  # the loader's own dataset is not the workers' copies
    assert got["tl"] == got["torch"]
    assert sorted(got["tl"]) == list(range(3, 10))


class SelfSharding:
    """An IterableDataset that shards itself by ``get_worker_info()`` in ``__iter__`` (torch's other recipe)."""

    def __iter__(self):
        info = _worker_info()
        n, k = (1, 0) if info is None else (info.num_workers, info.id)
        return iter(range(k, 12, n))


def test_a_self_sharding_iterable_dataset_yields_every_sample_once_like_torch():
    got = {}
    for lib in LIBS:
        loader = _loader(lib, _iterable(lib, SelfSharding)(), batch_size=None, num_workers=2)
        got[lib] = [int(b) for b in loader]
    assert got["tl"] == got["torch"] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]  # (worker 0 has the evens)


def _fail(worker_id: int) -> None:
    raise ZeroDivisionError(f"worker {worker_id} cannot start")


def test_an_error_in_worker_init_fn_surfaces_like_torch():
    for lib in LIBS:
        loader = _loader(lib, Numbers(), batch_size=2, num_workers=2, worker_init_fn=_fail)
        with pytest.raises(ZeroDivisionError, match="worker 0 cannot start"):
            list(loader)
        assert _data_module(lib).get_worker_info() is None


def test_worker_seeds_follow_the_generator_and_differ_per_epoch():
    def seeds(**kw):
        got = []
        loader = tl.utils.data.DataLoader(Numbers(), num_workers=2,
                                          worker_init_fn=lambda i: got.append(tl.utils.data.get_worker_info().seed),
                                          **kw)
        for _ in range(2):
            list(loader)
        return got

    tl.manual_seed(0)
    a = seeds()
    tl.manual_seed(0)
    assert seeds() == a and a[1] == a[0] + 1 and a[2] != a[0]  # reproducible; a new base each epoch
    assert seeds(generator=tl.Generator(7)) == seeds(generator=tl.Generator(7))
    b = seeds(generator=tl.Generator(7), persistent_workers=True)
    assert len(b) == 2  # persistent workers start once


def test_a_loader_without_worker_init_fn_draws_nothing_from_the_generator():
    """No function to run, no seed to hand it: the shuffle order is the one ``num_workers=0`` gives."""
    orders = []
    for nw in (0, 2):
        tl.manual_seed(1)
        loader = tl.utils.data.DataLoader(Numbers(8), batch_size=8, shuffle=True, num_workers=nw)
        orders.append([b.tolist() for b in loader])
    assert orders[0] == orders[1]


def test_worker_init_fn_leaves_the_shuffle_order_as_without_workers():
    """Turning on workers is a speed setting: the seeded order of the data must not move (the workers' seeds are
    read off the generator's state, not drawn from it)."""
    def order(**kw):
        tl.manual_seed(1)
        loader = tl.utils.data.DataLoader(tl.utils.data.TensorDataset(tl.arange(8)), batch_size=8, shuffle=True, **kw)
        return [b.tolist() for _ in range(2) for (b,) in loader]

    plain = order()
    assert order(num_workers=2, worker_init_fn=lambda i: None) == plain
    assert order(num_workers=2, worker_init_fn=lambda i: None, persistent_workers=True) == plain


@pytest.mark.parametrize("value", [1, 1.0, None, 0])
def test_requires_grad_takes_only_a_bool_like_torch(value):
    for lib in (tl, torch):
        t = lib.zeros(2)
        with pytest.raises(RuntimeError, match="requires_grad must be a bool"):
            t.requires_grad = value
        with pytest.raises(TypeError, match="must be bool"):
            t.requires_grad_(value)
        assert t.requires_grad is False


@pytest.mark.parametrize("xs, bs", [((3,), (1,)), ((2, 3), (1,)), ((2, 3), (2, 4)), ((2, 3), (1, 4)),
                                    ((2, 3), (2, 1)), ((5, 2, 3), (2, 4)), ((5, 2, 3), (5, 2, 4)), ((5, 2, 3), (1,))])
def test_linear_with_a_2d_weight_adds_a_bias_that_broadcasts_like_torch(xs, bs):
    rng = np.random.default_rng(5)
    x, w, b = rng.standard_normal(xs), rng.standard_normal((4, 3)), rng.standard_normal(bs)
    got = [lib.nn.functional.linear(*(lib.tensor(a, requires_grad=True) for a in (x, w, b))) for lib in (tl, torch)]
    np.testing.assert_allclose(got[0].detach().numpy(), got[1].detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("xs, bs", [((2, 3), (3,)), ((2, 3), (5, 2, 4)), ((3,), (2, 4))])
def test_linear_with_a_2d_weight_refuses_a_bias_that_does_not_broadcast_like_torch(xs, bs):
    with pytest.raises(RuntimeError):
        torch.nn.functional.linear(torch.zeros(xs), torch.zeros(4, 3), torch.zeros(bs))
    with pytest.raises(RuntimeError, match=r"linear: the bias has shape .* expected a bias of shape \(4,\)"):
        tl.nn.functional.linear(tl.zeros(xs), tl.zeros(4, 3), tl.zeros(bs))
