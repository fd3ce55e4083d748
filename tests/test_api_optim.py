"""Optimizers and learning-rate schedules against PyTorch, step by step.

Optimizers: the same two-layer model trained from the same weights in both libraries, with two
param groups (the second with its own lr); the parameters must agree after *every* step (float64,
tight tolerance), the state must hold torch's keys and values, and a ``state_dict`` round trip in
the middle of the run (our own, and torch's state_dict loaded into ours) must continue identically.
Schedulers: the learning-rate (and, for the cyclic ones, momentum) sequence over many steps must be
torch's, including ``ReduceLROnPlateau`` fed the same metric sequence. Bad arguments fail with
torch's exception type and message.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
from conftest import assert_close, torch

import tinygrad_like as tl
import tinygrad_like.optim as optim
from tinygrad_like.autograd.function import VersionMismatchError
from tinygrad_like.optim import lr_scheduler

pytestmark = pytest.mark.skipif(torch is None, reason="needs PyTorch as the oracle")

TOL = {"float32": dict(atol=1e-5, rtol=1e-5), "float64": dict(atol=1e-12, rtol=1e-10)}


# ---- the model -----------------------------------------------------------------------------------

def _arrays(dtype: str, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal((16, 5)), rng.standard_normal((5, 7)) * 0.5, rng.standard_normal(7) * 0.1,
            rng.standard_normal((7, 3)) * 0.5]
    return [a.astype(dtype) for a in arrs]


def _loss(lib, x, params):
    w1, b1, w2 = params
    return (lib.relu(x @ w1 + b1) @ w2).pow(2).mean()


class Run:
    """One library's side: input, parameters, and an optimizer with two param groups."""

    def __init__(self, lib, opt_cls, kwargs: dict, dtype: str, group2_lr: float | None):
        self.lib = lib
        x, *ws = _arrays(dtype)
        self.x = lib.tensor(x)
        self.params = [lib.tensor(w, requires_grad=True) for w in ws]
        self.cls, self.kwargs, self.group2_lr = opt_cls, kwargs, group2_lr
        self.opt = self.make()

    def make(self):
        second = {"params": self.params[2:]}
        if self.group2_lr is not None:
            second["lr"] = self.group2_lr
        return self.cls([{"params": self.params[:2]}, second], **self.kwargs)

    def step(self):
        self.opt.zero_grad()
        _loss(self.lib, self.x, self.params).backward()
        self.opt.step()


def _to_tl(value):
    """A torch state_dict with its tensors as tinygrad_like tensors (what a converted checkpoint holds)."""
    if isinstance(value, torch.Tensor):
        return tl.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _to_tl(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_tl(v) for v in value]
    return value


def _compare_state(t_opt, p_opt, tp, pp, tol: dict, where: str) -> None:
    for i, (a, b) in enumerate(zip(tp, pp)):
        ts, ps = t_opt.state[a], p_opt.state[b]
        assert set(ts) == set(ps), f"{where}: param {i} state keys {sorted(ts)} != torch's {sorted(ps)}"
        for key in ts:
            if key == "step":
                assert ts[key] == int(ps[key].item()), f"{where}: step"
            elif key == "mu_product":  # a 0-d tensor of torch's scalar dtype
                assert_close(ts[key], ps[key], atol=0, rtol=1e-15, msg=f"{where}: mu_product ")
            else:
                assert_close(ts[key], ps[key], **tol, msg=f"{where}: param {i} state {key}: ")


OPT_CASES = [
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.005, alpha=0.9, eps=1e-6)),
    ("RMSprop", dict(lr=0.005, momentum=0.9)),
    ("RMSprop", dict(lr=0.005, centered=True)),
    ("RMSprop", dict(lr=0.005, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.005, weight_decay=0.05, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05)),
    ("Adagrad", dict(lr=0.05, initial_accumulator_value=0.3, eps=1e-6)),
    ("Adagrad", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.5, eps=1e-4)),
    ("Adadelta", dict(weight_decay=0.1)),
    ("Adadelta", dict(lr=2.0, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, maximize=True, eps=1e-6)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9))),  # rho_t passes 5 on step 3: both branches run
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, maximize=True)),
    # the options of the optimizers that were already here
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2)),
    ("SGD", dict(lr=0.002, momentum=0.9, nesterov=True, weight_decay=0.01, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, foreach=False, fused=None)),
    ("Adam", dict(lr=0.01, amsgrad=True, foreach=True)),  # (capturable=True needs CUDA in torch)
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, fused=True)),
    ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True, foreach=False)),
]
_IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}" for n, kw in OPT_CASES]


@pytest.mark.parametrize("reload", [None, "own", "torch"])
@pytest.mark.parametrize("name,kwargs", OPT_CASES, ids=_IDS)
def test_optimizer_matches_torch_after_every_step(name, kwargs, reload):
    """float64, 14 steps; with ``reload`` both sides are rebuilt from a state_dict after step 7: ours from
    our own (``own``) or from torch's converted to our tensors (``torch``), torch's from its own."""
    lr2 = (kwargs.get("lr", 1e-2) or 1e-2) * 0.5
    t = Run(tl, getattr(optim, name), kwargs, "float64", lr2)
    p = Run(torch, getattr(torch.optim, name), kwargs, "float64", lr2)
    assert set(t.opt.defaults) == set(p.opt.defaults) and t.opt.defaults == p.opt.defaults
    moved = 0.0
    for step in range(1, 15):
        t.step()
        p.step()
        for i, (a, b) in enumerate(zip(t.params, p.params)):
            assert_close(a, b, **TOL["float64"], msg=f"step {step}, param {i}: ")
        if step == 7 and reload is not None:
            p_sd = copy.deepcopy(p.opt.state_dict())
            t_sd = t.opt.state_dict() if reload == "own" else _to_tl(p_sd)
            assert sorted(t.opt.state_dict()["state"]) == sorted(p_sd["state"])
            for tg, pg in zip(t.opt.state_dict()["param_groups"], p_sd["param_groups"]):
                assert set(tg) == set(pg), "the param groups hold torch's keys"
            t.opt, p.opt = t.make(), p.make()
            t.opt.load_state_dict(t_sd)
            p.opt.load_state_dict(p_sd)
            assert t.opt.param_groups[1]["lr"] == lr2
        moved = max(moved, max(float(np.abs(a.detach().numpy() - w).max())
                               for a, w in zip(t.params, _arrays("float64")[1:])))
    assert moved > 1e-3, "the comparison is not vacuous: training moved the weights"
    _compare_state(t.opt, p.opt, t.params, p.params, TOL["float64"], "after 14 steps")


@pytest.mark.parametrize("name,kwargs", [c for c in OPT_CASES if c[0] not in ("SGD", "Adam", "AdamW")][::3],
                         ids=_IDS[:28][::3])
def test_optimizer_matches_torch_in_float32(name, kwargs):
    t = Run(tl, getattr(optim, name), kwargs, "float32", None)
    p = Run(torch, getattr(torch.optim, name), kwargs, "float32", None)
    for step in range(1, 11):
        t.step()
        p.step()
        for i, (a, b) in enumerate(zip(t.params, p.params)):
            assert_close(a, b, **TOL["float32"], msg=f"step {step}, param {i}: ")


def test_nadam_mu_product_is_a_scalar_tensor_of_torchs_dtype():
    """torch keeps NAdam's running product of momenta as a float32 0-d tensor (float64 when that is the
    default dtype); its rounding is part of every step, so ours is the same tensor."""
    t = Run(tl, optim.NAdam, dict(lr=0.01), "float64", None)
    p = Run(torch, torch.optim.NAdam, dict(lr=0.01), "float64", None)
    for _ in range(3):
        t.step()
        p.step()
    mt, mp = t.opt.state[t.params[0]]["mu_product"], p.opt.state[p.params[0]]["mu_product"]
    assert mt.shape == () and mt.dtype is tl.float32 and mp.dtype == torch.float32
    assert mt.item() == mp.item()
    prev = tl.get_default_dtype()
    tl.set_default_dtype(tl.float64)
    try:
        w = tl.zeros(2, dtype=tl.float64, requires_grad=True)
        o = optim.NAdam([w])
        w.grad = tl.ones(2, dtype=tl.float64)
        o.step()
        assert o.state[w]["mu_product"].dtype is tl.float64
    finally:
        tl.set_default_dtype(prev)


def test_adagrad_state_exists_before_the_first_step_like_torch():
    w, v = tl.zeros(3, requires_grad=True), torch.zeros(3, requires_grad=True)
    t_opt = optim.Adagrad([w], initial_accumulator_value=0.25)
    p_opt = torch.optim.Adagrad([v], initial_accumulator_value=0.25)
    assert set(t_opt.state[w]) == set(p_opt.state[v]) == {"step", "sum"}
    assert t_opt.state[w]["step"] == 0
    assert_close(t_opt.state[w]["sum"], p_opt.state[v]["sum"])
    assert sorted(t_opt.state_dict()["state"]) == sorted(p_opt.state_dict()["state"]) == [0]
    # a group added later gets its state at its first step
    u = tl.zeros(2, requires_grad=True)
    t_opt.add_param_group({"params": [u], "lr": 0.5})
    u.grad = tl.tensor([1.0, -2.0])
    t_opt.step()
    assert t_opt.state[u]["step"] == 1
    np.testing.assert_allclose(u.detach().numpy(), [-0.5 / 1.25 ** 0.5, 1.0 / 4.25 ** 0.5], rtol=1e-6)


@pytest.mark.parametrize("name,kwargs", [("RMSprop", dict(momentum=0.9, centered=True)), ("Adagrad", {}),
                                         ("Adadelta", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {})])
def test_each_step_bumps_param_and_state_versions(name, kwargs):
    t = Run(tl, getattr(optim, name), kwargs, "float32", None)
    for step in range(1, 4):
        t.opt.zero_grad()
        _loss(tl, t.x, t.params).backward()
        before = [p._version for p in t.params]
        state_before = {id(s): s._version for st in t.opt.state.values() for s in st.values()
                        if isinstance(s, tl.Tensor)}
        t.opt.step()
        for p, v in zip(t.params, before):
            assert p._version > v, f"step {step}: the parameter was written in place"
            bump = p.storage.bumps[-1]
            assert bump.site is not None and bump.site.filename == __file__, "the write site is the user's line"
            assert bump.optimizer == name
        for st in t.opt.state.values():
            for key, s in st.items():
                if isinstance(s, tl.Tensor) and id(s) in state_before:
                    assert s._version > state_before[id(s)], f"step {step}: state {key} was written in place"
                if isinstance(s, tl.Tensor):
                    assert s.grad_fn is None and not s.requires_grad
    assert all(p.is_leaf and p.grad_fn is None for p in t.params)


@pytest.mark.parametrize("cls", [optim.RMSprop, optim.Adagrad, optim.Adadelta, optim.Adamax, optim.NAdam, optim.RAdam])
def test_step_between_forward_and_backward_is_caught(cls):
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = cls([w])
    (w * w).sum().backward()
    y = (w * w).sum()
    opt.step()
    with pytest.raises(VersionMismatchError, match="modified by an in-place operation"):
        y.backward()


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_closure_and_params_without_grad_like_torch(name):
    t = Run(tl, getattr(optim, name), {}, "float64", None)
    p = Run(torch, getattr(torch.optim, name), {}, "float64", None)
    frozen = t.params[1].detach().numpy().copy()

    def closure(run):
        def f():
            run.opt.zero_grad()
            loss = _loss(run.lib, run.x, run.params)
            loss.backward()
            run.params[1].grad = None  # b1 gets no gradient: skipped, no state
            return loss
        return f

    for _ in range(3):
        lt, lp = t.opt.step(closure(t)), p.opt.step(closure(p))
        assert_close(lt, lp.detach(), **TOL["float64"])
    np.testing.assert_array_equal(t.params[1].detach().numpy(), frozen)
    for a, b in zip(t.params, p.params):
        assert_close(a, b, **TOL["float64"])
    if name != "Adagrad":  # (Adagrad makes every state at construction)
        assert not t.opt.state.get(t.params[1]) and not p.opt.state.get(p.params[1])


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_device_params_update_like_host_ones(dev, name):
    t = Run(tl, getattr(optim, name), {}, "float32", None)
    x = t.x.to("testdev")
    dp = [q.detach().to("testdev").requires_grad_() for q in t.params]
    opt = getattr(optim, name)(dp)
    for _ in range(3):
        t.step()
        opt.zero_grad()
        _loss(tl, x, dp).backward()
        opt.step()
    assert all(s.device == dev for st in opt.state.values() for s in st.values() if isinstance(s, tl.Tensor))
    for a, b in zip(dp, t.params):
        np.testing.assert_allclose(a.numpy(force=True), b.detach().numpy(), rtol=1e-5, atol=1e-6)


# ---- constructor arguments: torch's defaults, accepted switches, and torch's errors ----------------

@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
                                  "RAdam"])
def test_signature_and_defaults_are_torchs(name):
    import inspect
    ours, theirs = inspect.signature(getattr(optim, name)), inspect.signature(getattr(torch.optim, name))
    assert list(ours.parameters) == list(theirs.parameters)
    for k, par in theirs.parameters.items():
        assert ours.parameters[k].default == par.default, k
        assert ours.parameters[k].kind == par.kind, k


def test_implementation_switches_change_nothing():
    """``foreach``, ``fused`` and ``capturable`` pick how torch batches the same arithmetic: accepted and kept."""
    runs = [Run(tl, optim.RMSprop, dict(momentum=0.9, **kw), "float64", None)
            for kw in ({}, dict(foreach=True), dict(foreach=False, capturable=True))]
    for r in runs:
        for _ in range(4):
            r.step()
    for other in runs[1:]:
        for a, b in zip(runs[0].params, other.params):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert runs[1].opt.param_groups[0]["foreach"] is True


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(fused=True, foreach=True)),
                                         ("Adam", dict(fused=True, foreach=True)),
                                         ("Adagrad", dict(fused=True, foreach=True)),
                                         ("SGD", dict(fused=True, differentiable=True)),
                                         ("AdamW", dict(fused=True, differentiable=True))])
def test_conflicting_switches_fail_like_torch(name, kwargs):
    with pytest.raises(RuntimeError) as want:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(RuntimeError) as got:
        getattr(optim, name)([tl.zeros(2, requires_grad=True)], **kwargs)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_differentiable_steps_are_refused_clearly(name):
    with pytest.raises(NotImplementedError, match="differentiable=True is not supported"):
        getattr(optim, name)([tl.zeros(2, requires_grad=True)], differentiable=True)


BAD = [
    ("RMSprop", dict(lr=-1)), ("RMSprop", dict(eps=-1e-8)), ("RMSprop", dict(momentum=-0.1)),
    ("RMSprop", dict(weight_decay=-1)), ("RMSprop", dict(alpha=-0.5)),
    ("Adagrad", dict(lr=-0.5)), ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(weight_decay=-1)),
    ("Adagrad", dict(initial_accumulator_value=-0.1)), ("Adagrad", dict(eps=-1.0)),
    ("Adadelta", dict(lr=-1)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(rho=-0.1)),
    ("Adadelta", dict(eps=-1e-6)), ("Adadelta", dict(weight_decay=-2)),
    ("Adamax", dict(lr=-1)), ("Adamax", dict(eps=-1)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))), ("Adamax", dict(weight_decay=-1)),
    ("NAdam", dict(lr=-1)), ("NAdam", dict(eps=-1)), ("NAdam", dict(betas=(1.5, 0.9))),
    ("NAdam", dict(betas=(0.9, 1.0))), ("NAdam", dict(weight_decay=-1)), ("NAdam", dict(momentum_decay=-1)),
    ("RAdam", dict(lr=-1)), ("RAdam", dict(eps=-1)), ("RAdam", dict(betas=(-0.1, 0.9))),
    ("RAdam", dict(betas=(0.9, 1.0))), ("RAdam", dict(weight_decay=-1)),
    ("SGD", dict(lr=-1)), ("SGD", dict(momentum=-1)), ("SGD", dict(weight_decay=-1)),
    ("Adam", dict(lr=-1)), ("AdamW", dict(betas=(0.9, 1.0))),
]


@pytest.mark.parametrize("name,kwargs", BAD, ids=[f"{n}-{kw}" for n, kw in BAD])
def test_bad_hyperparameters_fail_with_torchs_message(name, kwargs):
    with pytest.raises(ValueError) as want:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as got:
        getattr(optim, name)([tl.zeros(2, requires_grad=True)], **kwargs)
    assert str(got.value) == str(want.value)
    # the same check guards a param group with its own options (naming the group)
    with pytest.raises(ValueError, match=f"^{str(want.value)[:20]}.*param group 1"):
        getattr(optim, name)([{"params": [tl.zeros(2, requires_grad=True)]},
                              {"params": [tl.zeros(2, requires_grad=True)], **kwargs}])


def test_non_numeric_hyperparameters_are_refused():
    with pytest.raises(TypeError, match="alpha must be a number, got str"):
        optim.RMSprop([tl.zeros(2, requires_grad=True)], alpha="0.9")
    with pytest.raises(TypeError, match="betas must be a pair"):
        optim.NAdam([tl.zeros(2, requires_grad=True)], betas=0.9)


def test_bad_gradient_is_refused_before_anything_changes():
    a, b = tl.zeros(2, requires_grad=True), tl.zeros(2, 3, requires_grad=True)
    opt = optim.RMSprop([a, b], lr=0.1)
    a.grad, b._grad = tl.ones(2), tl.zeros(3)
    with pytest.raises(RuntimeError, match=r"param 1 in group 0 has shape \(3,\)"):
        opt.step()
    assert a.tolist() == [0.0, 0.0] and all(not s for s in opt.state.values())


# ---- schedulers -----------------------------------------------------------------------------------

def _sched_opts(kind: str = "SGD", lrs=(0.1, 0.03)):
    tw = [tl.zeros(2, requires_grad=True) for _ in lrs]
    pw = [torch.zeros(2, requires_grad=True) for _ in lrs]
    extra = dict(momentum=0.9) if kind == "SGD" else {}
    t_opt = getattr(optim, kind)([{"params": [w], "lr": lr} for w, lr in zip(tw, lrs)], **extra)
    p_opt = getattr(torch.optim, kind)([{"params": [w], "lr": lr} for w, lr in zip(pw, lrs)], **extra)
    return t_opt, p_opt


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def _build(lib_sched, name, opt, kwargs):
    kwargs = dict(kwargs)
    if name in ("SequentialLR", "ChainedScheduler"):
        children = [getattr(lib_sched, n)(opt, **kw) for n, kw in kwargs.pop("children")]
        if name == "ChainedScheduler":
            return lib_sched.ChainedScheduler(children, **kwargs)
        return lib_sched.SequentialLR(opt, children, **kwargs)
    return getattr(lib_sched, name)(opt, **kwargs)


class Halve:
    """A callable object: LambdaLR saves its attributes in state_dict."""

    def __init__(self, base):
        self.base = base

    def __call__(self, epoch):
        return self.base ** epoch


SCHEDULERS = [
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e)),
    ("LambdaLR", dict(lr_lambda=[lambda e: 1 / (e + 1), lambda e: 0.9 ** (e // 3)])),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.97)),
    ("MultiplicativeLR", dict(lr_lambda=[lambda e: 0.9, lambda e: 1.0 if e % 2 else 0.8])),
    ("StepLR", dict(step_size=4, gamma=0.7)),
    ("MultiStepLR", dict(milestones=[3, 10, 10, 25], gamma=0.5)),
    ("ConstantLR", dict()),
    ("ConstantLR", dict(factor=0.25, total_iters=9)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.1, end_factor=0.6, total_iters=17)),
    ("ExponentialLR", dict(gamma=0.93)),
    ("PolynomialLR", dict(total_iters=30, power=2.0)),
    ("CosineAnnealingLR", dict(T_max=12, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=7)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.002)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=5)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=4, step_size_down=7, mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.97,
                      base_momentum=0.7, max_momentum=0.95)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=61)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.2], epochs=6, steps_per_epoch=11, pct_start=0.25,
                        anneal_strategy="linear", div_factor=10.0)),
    ("OneCycleLR", dict(max_lr=0.3, total_steps=70, three_phase=True, base_momentum=0.8, max_momentum=0.9)),
    ("OneCycleLR", dict(max_lr=0.3, total_steps=70, cycle_momentum=False, final_div_factor=100.0)),
    ("SequentialLR", dict(children=[("LinearLR", dict(start_factor=0.2, total_iters=5)),
                                    ("ExponentialLR", dict(gamma=0.9))], milestones=[5])),
    ("SequentialLR", dict(children=[("ConstantLR", dict(factor=0.5, total_iters=3)),
                                    ("StepLR", dict(step_size=4, gamma=0.5)),
                                    ("CosineAnnealingLR", dict(T_max=10))], milestones=[6, 20])),
    ("ChainedScheduler", dict(children=[("ConstantLR", dict(factor=0.5, total_iters=4)),
                                        ("ExponentialLR", dict(gamma=0.95))])),
    ("ChainedScheduler", dict(children=[("LinearLR", dict(start_factor=0.3, total_iters=8)),
                                        ("MultiStepLR", dict(milestones=[10, 30]))])),
]


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)])
def test_scheduler_sequence_matches_torch(name, kwargs, kind):
    """60 steps (OneCycleLR: its total), comparing lr, momentum or beta1, last_epoch and get_last_lr each step."""
    t_opt, p_opt = _sched_opts(kind)
    ts, ps = _build(lr_scheduler, name, t_opt, kwargs), _build(torch.optim.lr_scheduler, name, p_opt, kwargs)
    assert ts.get_last_lr() == ps.get_last_lr()
    assert _momenta(t_opt) == _momenta(p_opt)
    steps = getattr(ps, "total_steps", 61) - 1
    seen = set()
    for step in range(1, steps + 1):
        t_opt.step()
        p_opt.step()
        ts.step()
        ps.step()
        want = ps.get_last_lr()
        got = ts.get_last_lr()
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0, err_msg=f"step {step}")
        assert got == want, f"step {step}: the same formula in the same order gives the same floats"
        assert [g["lr"] for g in t_opt.param_groups] == [g["lr"] for g in p_opt.param_groups]
        assert _momenta(t_opt) == _momenta(p_opt), f"step {step}: momentum"
        assert getattr(ts, "last_epoch", None) == getattr(ps, "last_epoch", None)
        seen.add(round(got[0], 12))
    assert len(seen) >= 2, "the schedule actually changed the learning rate"


@pytest.mark.parametrize("name,kwargs", SCHEDULERS[::2], ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)][::2])
def test_scheduler_state_dict_resumes_identically(name, kwargs):
    t_opt, _ = _sched_opts()
    sched = _build(lr_scheduler, name, t_opt, kwargs)
    for _ in range(13):
        t_opt.step()
        sched.step()
    sd, opt_sd = copy.deepcopy(sched.state_dict()), t_opt.state_dict()
    assert "optimizer" not in sd

    t_opt2, _ = _sched_opts(lrs=(5.0, 5.0))
    sched2 = _build(lr_scheduler, name, t_opt2, kwargs)
    t_opt2.load_state_dict(opt_sd)
    sched2.load_state_dict(sd)
    for _ in range(20 if name != "OneCycleLR" else 5):
        for o, s in ((t_opt, sched), (t_opt2, sched2)):
            o.step()
            s.step()
        assert sched.get_last_lr() == sched2.get_last_lr()
        assert _momenta(t_opt) == _momenta(t_opt2)


def test_lambda_state_dict_keeps_callable_objects_but_not_functions():
    t_opt, p_opt = _sched_opts()
    fn = Halve(0.9)
    ts = lr_scheduler.LambdaLR(t_opt, [fn, lambda e: 1.0])
    ps = torch.optim.lr_scheduler.LambdaLR(p_opt, [Halve(0.9), lambda e: 1.0])
    sd = ts.state_dict()
    assert sd["lr_lambdas"] == ps.state_dict()["lr_lambdas"] == [{"base": 0.9}, None]
    assert set(sd) == set(ps.state_dict())
    other = Halve(0.5)
    t_opt2, _ = _sched_opts()
    ts2 = lr_scheduler.LambdaLR(t_opt2, [other, lambda e: 1.0])
    ts2.load_state_dict(sd)
    assert other.base == 0.9 and "lr_lambdas" in sd, "the caller's dict is left as it was"


def test_chained_scheduler_of_a_sequential_one_matches_torch():
    t_opt, p_opt = _sched_opts()
    chains = []
    for S, opt in ((lr_scheduler, t_opt), (torch.optim.lr_scheduler, p_opt)):
        seq = S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.5, total_iters=2), S.ExponentialLR(opt, gamma=0.8)],
                             milestones=[3])
        chains.append(S.ChainedScheduler([seq, S.MultiStepLR(opt, milestones=[5, 9])]))
    assert chains[0].get_last_lr() == chains[1].get_last_lr()
    for step in range(25):
        t_opt.step()
        p_opt.step()
        for s in chains:
            s.step()
        assert chains[0].get_last_lr() == chains[1].get_last_lr(), f"step {step}"


PLATEAU = [
    dict(),
    dict(factor=0.5, patience=2),
    dict(factor=0.5, patience=1, cooldown=3),
    dict(mode="max", factor=0.3, patience=2),
    dict(threshold_mode="abs", threshold=0.05, patience=1),
    dict(mode="max", threshold_mode="abs", threshold=0.01, patience=0, factor=0.9),
    dict(factor=0.2, patience=1, min_lr=[0.005, 0.01]),
    dict(factor=0.2, patience=0, min_lr=0.002, eps=1e-3),
]


def _metrics(n: int = 120) -> list[float]:
    """A noisy loss that falls, plateaus, bumps and falls again (with exact repeats and a 0-d tensor or two)."""
    rng = np.random.default_rng(5)
    base = np.concatenate([np.linspace(2.0, 1.0, 30), np.full(30, 1.0), np.linspace(1.0, 1.4, 20),
                           np.linspace(1.4, 0.3, 40)])
    vals = base[:n] + rng.normal(0, 0.02, n)
    vals[40:45] = vals[39]  # exact ties
    return [float(v) for v in vals]


@pytest.mark.parametrize("kwargs", PLATEAU, ids=[str(k) for k in PLATEAU])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    t_opt, p_opt = _sched_opts()
    ts = lr_scheduler.ReduceLROnPlateau(t_opt, **kwargs)
    ps = torch.optim.lr_scheduler.ReduceLROnPlateau(p_opt, **kwargs)
    assert isinstance(ts, lr_scheduler.LRScheduler)
    lrs = set()
    for i, m in enumerate(_metrics()):
        t_opt.step()
        p_opt.step()
        ts.step(tl.tensor(m, dtype=tl.float64) if i % 7 == 0 else m)  # a 0-d tensor metric is accepted
        ps.step(m)
        assert ts.get_last_lr() == ps.get_last_lr(), f"epoch {i}"
        assert (ts.num_bad_epochs, ts.cooldown_counter, ts.best, ts.last_epoch) == \
               (ps.num_bad_epochs, ps.cooldown_counter, ps.best, ps.last_epoch), f"epoch {i}"
        lrs.add(ts.get_last_lr()[0])
    assert len(lrs) > 1, "the plateau cut the learning rate at least once"


def test_reduce_lr_on_plateau_state_dict_resumes():
    t_opt, _ = _sched_opts()
    ts = lr_scheduler.ReduceLROnPlateau(t_opt, factor=0.5, patience=2, cooldown=1)
    ms = _metrics()
    for m in ms[:50]:
        ts.step(m)
    sd, opt_sd = copy.deepcopy(ts.state_dict()), t_opt.state_dict()
    t_opt2, _ = _sched_opts()
    ts2 = lr_scheduler.ReduceLROnPlateau(t_opt2, mode="max")
    t_opt2.load_state_dict(opt_sd)
    ts2.load_state_dict(sd)
    assert ts2.mode == "min" and ts2.mode_worse == math.inf
    for m in ms[50:]:
        ts.step(m)
        ts2.step(m)
        assert ts.get_last_lr() == ts2.get_last_lr()


def test_reduce_lr_on_plateau_with_a_new_param_group():
    t_opt, p_opt = _sched_opts()
    for opt, S, w in ((t_opt, lr_scheduler, tl.zeros(1, requires_grad=True)),
                      (p_opt, torch.optim.lr_scheduler, torch.zeros(1, requires_grad=True))):
        s = S.ReduceLROnPlateau(opt, patience=0, min_lr=0.001)
        opt.add_param_group({"params": [w], "lr": 0.5})
        s.step(1.0)
        s.step(2.0)
        assert s.min_lrs == [0.001] * 3
    assert [g["lr"] for g in t_opt.param_groups] == [g["lr"] for g in p_opt.param_groups]
    for opt, S, w in ((t_opt, lr_scheduler, tl.zeros(1, requires_grad=True)),
                      (p_opt, torch.optim.lr_scheduler, torch.zeros(1, requires_grad=True))):
        s = S.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0, 0.0, 0.0])
        opt.add_param_group({"params": [w]})
        s.step(1.0)
        with pytest.raises(RuntimeError, match=r"The number of param groups in the `optimizer` \(4\) differs"):
            s.step(2.0)


def test_one_cycle_drives_adam_betas_and_the_training_like_torch():
    tr = Run(tl, optim.Adam, dict(lr=0.01), "float64", None)
    pr = Run(torch, torch.optim.Adam, dict(lr=0.01), "float64", None)
    ts = lr_scheduler.OneCycleLR(tr.opt, max_lr=0.05, total_steps=20, three_phase=True)
    ps = torch.optim.lr_scheduler.OneCycleLR(pr.opt, max_lr=0.05, total_steps=20, three_phase=True)
    for _ in range(19):
        tr.step()
        pr.step()
        ts.step()
        ps.step()
        assert tr.opt.param_groups[0]["betas"] == pr.opt.param_groups[0]["betas"]
    tr.step()
    pr.step()
    for a, b in zip(tr.params, pr.params):
        assert_close(a, b, **TOL["float64"])


def test_schedules_drive_the_new_optimizers_like_torch():
    tr = Run(tl, optim.RMSprop, dict(lr=0.01, momentum=0.5), "float64", 0.004)
    pr = Run(torch, torch.optim.RMSprop, dict(lr=0.01, momentum=0.5), "float64", 0.004)
    ts = lr_scheduler.CyclicLR(tr.opt, base_lr=0.001, max_lr=0.02, step_size_up=3)
    ps = torch.optim.lr_scheduler.CyclicLR(pr.opt, base_lr=0.001, max_lr=0.02, step_size_up=3)
    for _ in range(15):
        tr.step()
        pr.step()
        ts.step()
        ps.step()
    for a, b in zip(tr.params, pr.params):
        assert_close(a, b, **TOL["float64"])


def test_one_cycle_refuses_to_step_past_its_total_like_torch():
    t_opt, p_opt = _sched_opts()
    ts = lr_scheduler.OneCycleLR(t_opt, max_lr=0.1, total_steps=3)
    ps = torch.optim.lr_scheduler.OneCycleLR(p_opt, max_lr=0.1, total_steps=3)
    for s, o in ((ts, t_opt), (ps, p_opt)):
        for _ in range(3):
            o.step()
            s.step()
    with pytest.raises(ValueError) as want:
        ps.step()
    with pytest.raises(ValueError) as got:
        ts.step()
    assert str(got.value) == str(want.value) == "Tried to step 4 times. The specified number of total steps is 3"


def test_epoch_argument_uses_the_closed_form_and_warns_like_torch():
    t_opt, p_opt = _sched_opts()
    ts = lr_scheduler.MultiStepLR(t_opt, milestones=[2, 5])
    ps = torch.optim.lr_scheduler.MultiStepLR(p_opt, milestones=[2, 5])
    t_opt.step()
    p_opt.step()
    for epoch in (3, 7, 1):
        with pytest.warns(UserWarning, match="epoch parameter"):
            ts.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ps.step(epoch)
        assert ts.get_last_lr() == ps.get_last_lr() and ts.last_epoch == epoch
    tw = lr_scheduler.CosineAnnealingWarmRestarts(t_opt, T_0=4, T_mult=2)
    pw = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(p_opt, T_0=4, T_mult=2)
    for epoch in (0.5, 3.25, 4.0, 13.7, 2.0, 40):  # fractional epochs: per-batch stepping
        tw.step(epoch)
        pw.step(epoch)
        assert tw.get_last_lr() == pw.get_last_lr() and (tw.T_i, tw.T_cur) == (pw.T_i, pw.T_cur)


def test_get_lr_outside_step_warns_like_torch():
    t_opt, _ = _sched_opts()
    s = lr_scheduler.LinearLR(t_opt)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()


def test_resuming_with_last_epoch_continues_the_schedule():
    t_opt, p_opt = _sched_opts()
    for g, h in zip(t_opt.param_groups, p_opt.param_groups):
        g["initial_lr"] = h["initial_lr"] = g["lr"]
    for name, kw in [("ExponentialLR", dict(gamma=0.9)), ("StepLR", dict(step_size=3)),
                     ("CosineAnnealingLR", dict(T_max=10))]:
        ts = getattr(lr_scheduler, name)(t_opt, last_epoch=4, **kw)
        ps = getattr(torch.optim.lr_scheduler, name)(p_opt, last_epoch=4, **kw)
        t_opt.step()
        p_opt.step()
        for _ in range(5):
            ts.step()
            ps.step()
            assert ts.get_last_lr() == ps.get_last_lr(), name


SCHED_ERRORS = [
    ("LambdaLR", dict(lr_lambda=[lambda e: 1.0]), ValueError),
    ("MultiplicativeLR", dict(lr_lambda=[lambda e: 1.0] * 3), ValueError),
    ("MultiplicativeLR", dict(lr_lambda=0.5), TypeError),
    ("ConstantLR", dict(factor=1.5), ValueError),
    ("ConstantLR", dict(factor=-0.1), ValueError),
    ("LinearLR", dict(start_factor=0.0), ValueError),
    ("LinearLR", dict(end_factor=1.5), ValueError),
    ("ReduceLROnPlateau", dict(factor=1.0), ValueError),
    ("ReduceLROnPlateau", dict(mode="middle"), ValueError),
    ("ReduceLROnPlateau", dict(threshold_mode="relative"), ValueError),
    ("ReduceLROnPlateau", dict(min_lr=[0.1]), ValueError),
    ("CosineAnnealingWarmRestarts", dict(T_0=0), ValueError),
    ("CosineAnnealingWarmRestarts", dict(T_0=2.5), ValueError),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=0), ValueError),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, eta_min="0"), ValueError),
    ("CyclicLR", dict(base_lr=0.1, max_lr=1.0, mode="sawtooth"), ValueError),
    ("CyclicLR", dict(base_lr=[0.1], max_lr=1.0), ValueError),
    ("OneCycleLR", dict(max_lr=0.1), ValueError),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=0), ValueError),
    ("OneCycleLR", dict(max_lr=0.1, epochs=0, steps_per_epoch=3), ValueError),
    ("OneCycleLR", dict(max_lr=0.1, epochs=2, steps_per_epoch=-1), ValueError),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, pct_start=1.5), ValueError),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, pct_start=0), ValueError),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, anneal_strategy="cosine"), ValueError),
    ("OneCycleLR", dict(max_lr=[0.1, 0.2, 0.3], total_steps=10), ValueError),
]


@pytest.mark.parametrize("name,kwargs,exc", SCHED_ERRORS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(SCHED_ERRORS)])
def test_scheduler_errors_match_torch(name, kwargs, exc):
    t_opt, p_opt = _sched_opts()
    with pytest.raises(exc) as want:
        getattr(torch.optim.lr_scheduler, name)(p_opt, **kwargs)
    with pytest.raises(exc) as got:
        getattr(lr_scheduler, name)(t_opt, **kwargs)
    assert str(got.value) == str(want.value)


def test_cycle_momentum_needs_an_optimizer_with_momentum_like_torch():
    class Plain(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def step(self, closure=None):
            return None

    opt = Plain([tl.zeros(1, requires_grad=True)])
    for S in (lr_scheduler.OneCycleLR, lr_scheduler.CyclicLR):
        kw = dict(max_lr=0.1, total_steps=5) if S is lr_scheduler.OneCycleLR else dict(base_lr=0.01, max_lr=0.1)
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            S(opt, **kw)
        S(opt, cycle_momentum=False, **kw)


def test_combined_scheduler_errors_match_torch():
    t_opt, p_opt = _sched_opts()
    t_other, p_other = _sched_opts()
    cases = [
        (lambda S, o, x: S.SequentialLR(o, [], milestones=[]), ValueError),
        (lambda S, o, x: S.SequentialLR(o, [S.StepLR(o, 2), S.StepLR(o, 3)], milestones=[]), ValueError),
        (lambda S, o, x: S.SequentialLR(o, [S.StepLR(o, 2), S.ReduceLROnPlateau(o)], milestones=[3]), ValueError),
        (lambda S, o, x: S.ChainedScheduler([]), ValueError),
        (lambda S, o, x: S.ChainedScheduler([S.StepLR(o, 2), object()]), TypeError),
        (lambda S, o, x: S.ChainedScheduler([S.StepLR(o, 2), S.ReduceLROnPlateau(o)]), ValueError),
    ]
    for build, exc in cases:
        with pytest.raises(exc) as want:
            build(torch.optim.lr_scheduler, p_opt, p_other)
        with pytest.raises(exc) as got:
            build(lr_scheduler, t_opt, t_other)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        lr_scheduler.SequentialLR(t_opt, [lr_scheduler.StepLR(t_opt, 2), lr_scheduler.StepLR(t_other, 2)],
                                  milestones=[3])
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.ReduceLROnPlateau([])


def test_scheduler_exports_match_torch():
    names = set(torch.optim.lr_scheduler.__all__) - {"LRScheduler"}
    assert names <= set(lr_scheduler.__all__)
    for n in ("RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"):
        assert n in optim.__all__ and issubclass(getattr(optim, n), optim.Optimizer)
