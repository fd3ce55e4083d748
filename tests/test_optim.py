"""Optimizers, schedulers and gradient clipping against PyTorch (the oracle), plus their contracts.

Each optimizer trains the same small two-layer network from the same weights in both libraries,
``(relu(x @ W1 + b1) @ W2).pow(2).mean()``, for 20 steps; the parameters must agree within float
rounding. The contracts checked beside the numbers: updates are in-place writes that bump the
storage version (so a graph that saved the old weights refuses to backpropagate), state_dict
round trips continue identically, and bad input fails with an error that says what is wrong.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import assert_close, torch

import tinygrad_like as tl
import tinygrad_like.nn.utils as tl_utils
import tinygrad_like.optim as optim
from tinygrad_like.autograd.function import VersionMismatchError
from tinygrad_like.optim import lr_scheduler

STEPS = 20
TOL = {"float32": dict(atol=1e-5, rtol=1e-5), "float64": dict(atol=1e-10, rtol=1e-10)}

# ---- the shared model ------------------------------------------------------------------------


def model_arrays(dtype: str = "float32", seed: int = 0) -> list[np.ndarray]:
    """x, W1, b1, W2 for the two-layer model, as NumPy arrays of ``dtype``."""
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal((16, 5)), rng.standard_normal((5, 7)) * 0.5, rng.standard_normal(7) * 0.1,
            rng.standard_normal((7, 3)) * 0.5]
    return [a.astype(dtype) for a in arrs]


def loss_of(lib, x, params):
    w1, b1, w2 = params
    return (lib.relu(x @ w1 + b1) @ w2).pow(2).mean()


def make_pair(dtype: str = "float32", seed: int = 0):
    """(tl x, tl params), (torch x, torch params): the same values, each library its own copy."""
    x, *ws = model_arrays(dtype, seed)
    tl_side = (tl.tensor(x), [tl.tensor(w, requires_grad=True) for w in ws])
    if torch is None:  # (tests using only the tl side run without the oracle)
        return tl_side, None
    torch_side = (torch.tensor(x), [torch.tensor(w, requires_grad=True) for w in ws])
    return tl_side, torch_side


def train(lib, opt, x, params, steps: int = STEPS) -> None:
    for _ in range(steps):
        opt.zero_grad()
        loss_of(lib, x, params).backward()
        opt.step()


def run_both(tl_cls, torch_cls, kwargs: dict, dtype: str, steps: int = STEPS):
    (tx, tp), (px, pp) = make_pair(dtype)
    t_opt, p_opt = tl_cls(tp, **kwargs), torch_cls(pp, **kwargs)
    train(tl, t_opt, tx, tp, steps)
    train(torch, p_opt, px, pp, steps)
    return (tp, t_opt), (pp, p_opt)


def assert_params_match(tp, pp, dtype: str) -> None:
    for i, (a, b) in enumerate(zip(tp, pp)):
        assert_close(a, b, **TOL[dtype], msg=f"param {i}: ")


def assert_moved(tp, dtype: str) -> None:
    """The comparison is not vacuous: training changed every parameter."""
    for i, (p, w0) in enumerate(zip(tp, model_arrays(dtype)[1:])):
        assert np.abs(p.detach().numpy() - w0).max() > 1e-3, f"param {i} barely moved"


# ---- optimizers vs torch ---------------------------------------------------------------------

SGD_CASES = [
    dict(lr=0.05),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True),
    dict(lr=0.05, weight_decay=0.1),
    dict(lr=0.05, momentum=0.8, weight_decay=0.1, nesterov=True),
    dict(lr=0.01, maximize=True),
    dict(lr=0.01, momentum=0.9, dampening=0.1, weight_decay=0.05, maximize=True),
]
ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, maximize=True),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6),
    dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True),
    dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
]
ADAMW_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, weight_decay=0.3, amsgrad=True),
    dict(lr=0.01, maximize=True),
    dict(lr=0.01, betas=(0.5, 0.9), weight_decay=0.0),
]
GRID = ([("SGD", kw) for kw in SGD_CASES] + [("Adam", kw) for kw in ADAM_CASES]
        + [("AdamW", kw) for kw in ADAMW_CASES])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", GRID, ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}"
                                                   for n, kw in GRID])
def test_matches_torch(name, kwargs, dtype):
    (tp, t_opt), (pp, p_opt) = run_both(getattr(optim, name), getattr(torch.optim, name), kwargs, dtype)
    assert_moved(tp, dtype)
    assert_params_match(tp, pp, dtype)
    # the optimizer's state holds the same buffers as torch's
    for a, b in zip(tp, pp):
        ts, ps = t_opt.state[a], p_opt.state[b]
        assert set(ts) == set(ps), f"state keys {sorted(ts)} != torch's {sorted(ps)}"
        for key in ts:
            if key == "step":
                assert ts[key] == int(ps[key].item())
            else:
                assert_close(ts[key], ps[key], **TOL[dtype], msg=f"state {key}: ")


def test_param_groups_with_their_own_options_match_torch():
    (tx, (w1, b1, w2)), (px, (v1, c1, v2)) = make_pair()
    t_opt = optim.SGD([{"params": [w1, b1]}, {"params": [w2], "lr": 0.2, "momentum": 0.5}], lr=0.02, momentum=0.9)
    p_opt = torch.optim.SGD([{"params": [v1, c1]}, {"params": [v2], "lr": 0.2, "momentum": 0.5}], lr=0.02,
                            momentum=0.9)
    assert [g["lr"] for g in t_opt.param_groups] == [0.02, 0.2]
    assert [g["momentum"] for g in t_opt.param_groups] == [0.9, 0.5]
    train(tl, t_opt, tx, [w1, b1, w2])
    train(torch, p_opt, px, [v1, c1, v2])
    assert_params_match([w1, b1, w2], [v1, c1, v2], "float32")

    (tx, (w1, b1, w2)), (px, (v1, c1, v2)) = make_pair()
    t_opt = optim.Adam([{"params": [w1], "lr": 0.05, "amsgrad": True}, {"params": [b1, w2]}], lr=0.001)
    p_opt = torch.optim.Adam([{"params": [v1], "lr": 0.05, "amsgrad": True}, {"params": [c1, v2]}], lr=0.001)
    train(tl, t_opt, tx, [w1, b1, w2])
    train(torch, p_opt, px, [v1, c1, v2])
    assert_params_match([w1, b1, w2], [v1, c1, v2], "float32")


def test_add_param_group_later_matches_torch():
    (tx, (w1, b1, w2)), (px, (v1, c1, v2)) = make_pair()
    t_opt, p_opt = optim.Adam([w1, b1], lr=0.01), torch.optim.Adam([v1, c1], lr=0.01)
    train(tl, t_opt, tx, [w1, b1, w2], 5)
    train(torch, p_opt, px, [v1, c1, v2], 5)
    t_opt.add_param_group({"params": w2, "lr": 0.1})
    p_opt.add_param_group({"params": v2, "lr": 0.1})
    assert t_opt.param_groups[1]["betas"] == (0.9, 0.999)  # defaults fill the new group
    train(tl, t_opt, tx, [w1, b1, w2], 5)
    train(torch, p_opt, px, [v1, c1, v2], 5)
    assert_params_match([w1, b1, w2], [v1, c1, v2], "float32")


def test_params_without_grad_are_skipped():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    b = tl.tensor([3.0], requires_grad=True)
    for opt in (optim.SGD([a, b], lr=0.1, momentum=0.9), optim.Adam([a, b], lr=0.1)):
        a.grad, b.grad = tl.ones(2), None
        v = b._version
        opt.step()
        assert b.tolist() == [3.0] and b._version == v
        assert b not in opt.state and a in opt.state


def test_closure_is_evaluated_with_grad_and_its_loss_returned():
    (tx, tp), (px, pp) = make_pair()
    t_opt, p_opt = optim.SGD(tp, lr=0.1), torch.optim.SGD(pp, lr=0.1)

    def closure_tl():
        t_opt.zero_grad()
        loss = loss_of(tl, tx, tp)
        loss.backward()
        return loss

    def closure_torch():
        p_opt.zero_grad()
        loss = loss_of(torch, px, pp)
        loss.backward()
        return loss

    for _ in range(3):
        lt, lp = t_opt.step(closure_tl), p_opt.step(closure_torch)
        assert_close(lt, lp.detach())
    assert_params_match(tp, pp, "float32")


# ---- in-place writes: versions, write sites, stale graphs ------------------------------------

@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.1, amsgrad=True),
                                  lambda ps: optim.AdamW(ps, lr=0.1)], ids=["SGD", "Adam", "AdamW"])
def test_each_step_bumps_param_and_state_versions(make):
    (tx, tp), _ = make_pair()
    opt = make(tp)
    for step in range(1, 4):
        opt.zero_grad()
        loss_of(tl, tx, tp).backward()
        before = [p._version for p in tp]
        state_before = {id(t): t._version for s in opt.state.values() for t in s.values() if isinstance(t, tl.Tensor)}
        opt.step()
        assert [p._version for p in tp] == [v + 1 for v in before], f"step {step}: each param written once"
        for p in tp:
            bump = p.storage.bumps[-1]
            assert bump.op in ("add_", "adam_step")
            assert bump.site is not None and bump.site.filename == __file__, "the write site is the user's line"
        for s in opt.state.values():
            for key, t in s.items():
                if isinstance(t, tl.Tensor) and id(t) in state_before:
                    assert t._version > state_before[id(t)], f"step {step}: state {key} was written in place"


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1), lambda ps: optim.Adam(ps, lr=0.1)],
                         ids=["SGD", "Adam"])
def test_step_between_forward_and_backward_is_caught(make):
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = make([w])
    (w * w).sum().backward()
    y = (w * w).sum()  # saves w at its current version
    opt.step()
    with pytest.raises(VersionMismatchError, match="modified by an in-place operation"):
        y.backward()


def test_step_does_not_record_the_graph():
    (tx, tp), _ = make_pair()
    opt = optim.SGD(tp, lr=0.1, momentum=0.9)
    loss_of(tl, tx, tp).backward()
    opt.step()
    assert all(p.is_leaf and p.grad_fn is None and p.requires_grad for p in tp)
    assert all(s["momentum_buffer"].grad_fn is None and not s["momentum_buffer"].requires_grad
               for s in opt.state.values())
    assert tl.is_grad_enabled()



@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.05, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True))])
def test_device_params_update_and_host_mirror_goes_stale(dev, name, kwargs):
    (tx, tp), (px, pp) = make_pair()
    dx, dp = tx.to("testdev"), [p.detach().to("testdev").requires_grad_() for p in tp]
    opt, ref = getattr(optim, name)(dp, **kwargs), getattr(torch.optim, name)(pp, **kwargs)
    for _ in range(5):
        for p in dp:
            p.numpy(force=True)  # make a host mirror, which the next step must mark stale
        train(tl, opt, dx, dp, 1)
        train(torch, ref, px, pp, 1)
        assert all(p.storage.dirty == "gpu" for p in dp), "a device write leaves the host mirror stale"
        assert all(s.device == dev for st in opt.state.values() for s in st.values() if isinstance(s, tl.Tensor))
        assert_params_match(dp, pp, "float32")


# ---- zero_grad ---------------------------------------------------------------------------------

def test_zero_grad_sets_none_by_default_or_zeros_in_place():
    (tx, tp), _ = make_pair()
    opt = optim.SGD(tp, lr=0.1)
    loss_of(tl, tx, tp).backward()
    opt.zero_grad()
    assert all(p.grad is None for p in tp)

    loss_of(tl, tx, tp).backward()
    grads = [p.grad for p in tp]
    versions = [g._version for g in grads]
    opt.zero_grad(set_to_none=False)
    for p, g, v in zip(tp, grads, versions):
        assert p.grad is g, "zeroed in place, the same tensor"
        assert not g.numpy().any() and g._version == v + 1


def test_zero_grad_set_to_false_detaches_a_graph_grad():
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    (w * w * w).sum().backward(create_graph=True)
    assert w.grad.grad_fn is not None
    optim.SGD([w]).zero_grad(set_to_none=False)
    assert w.grad.grad_fn is None and not w.grad.requires_grad and w.grad.tolist() == [0.0, 0.0]


# ---- state_dict ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)), ("AdamW", dict(lr=0.01))])
def test_state_dict_round_trip_continues_identically(name, kwargs):
    cls = getattr(optim, name)
    (tx, tp), (px, pp) = make_pair()
    opt = cls([{"params": tp[:2]}, {"params": tp[2:], "lr": 0.02}], **kwargs)
    train(tl, opt, tx, tp, 10)

    sd = opt.state_dict()
    # PyTorch's shape, with plain numbers and tensors
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sorted(sd["state"]) == [0, 1, 2]
    assert sd["param_groups"][1]["lr"] == 0.02
    torch_opt = getattr(torch.optim, name)([{"params": pp[:2]}, {"params": pp[2:], "lr": 0.02}], **kwargs)
    train(torch, torch_opt, px, pp, 1)
    assert set(sd["state"][0]) == set(torch_opt.state_dict()["state"][0])

    copies = [p.detach().clone().requires_grad_() for p in tp]
    other = cls([{"params": copies[:2]}, {"params": copies[2:]}], lr=123.0)  # group options come from sd
    other.load_state_dict(sd)
    assert other.param_groups[1]["lr"] == 0.02 and other.param_groups[0]["params"][0] is copies[0]
    train(tl, opt, tx, tp, 10)
    train(tl, other, tx, copies, 10)
    for a, b in zip(tp, copies):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    # the loaded optimizer owns its state: no buffer is shared with the one that saved it
    own = {id(t) for s in opt.state.values() for t in s.values() if isinstance(t, tl.Tensor)}
    loaded = [t for s in other.state.values() for t in s.values() if isinstance(t, tl.Tensor)]
    assert loaded and not any(id(t) in own for t in loaded)


def test_load_state_dict_rejects_a_mismatched_optimizer():
    a, b = tl.zeros(2, requires_grad=True), tl.zeros(3, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    a.grad, b.grad = tl.ones(2), tl.ones(3)
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([a]).load_state_dict(sd)
    with pytest.raises(ValueError, match=r"'momentum_buffer' of param 0 has shape \(2,\).*shape \(3,\)"):
        optim.SGD([b, a]).load_state_dict(sd)
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        optim.SGD([a]).load_state_dict({"params": []})


# ---- schedulers vs torch ----------------------------------------------------------------------

def _scheduled_pair(lrs=(0.1, 0.03)):
    tw = [tl.zeros(2, requires_grad=True) for _ in lrs]
    t_opt = optim.SGD([{"params": [w], "lr": lr} for w, lr in zip(tw, lrs)], momentum=0.9)
    if torch is None:  # (tests using only the tl side run without the oracle)
        return t_opt, None
    pw = [torch.zeros(2, requires_grad=True) for _ in lrs]
    p_opt = torch.optim.SGD([{"params": [w], "lr": lr} for w, lr in zip(pw, lrs)], momentum=0.9)
    return t_opt, p_opt


SCHEDULERS = [
    ("StepLR", dict(step_size=7, gamma=0.5)),
    ("StepLR", dict(step_size=1, gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=10)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
    ("CosineAnnealingLR", dict(T_max=50, eta_min=0.01)),
]


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[f"{n}-{kw}" for n, kw in SCHEDULERS])
def test_scheduler_matches_torch_over_50_steps(name, kwargs):
    t_opt, p_opt = _scheduled_pair()
    ts = getattr(lr_scheduler, name)(t_opt, **kwargs)
    ps = getattr(torch.optim.lr_scheduler, name)(p_opt, **kwargs)
    assert ts.get_last_lr() == ps.get_last_lr() and ts.base_lrs == ps.base_lrs
    assert [g["initial_lr"] for g in t_opt.param_groups] == [0.1, 0.03]
    seen = set()
    for epoch in range(1, 51):
        t_opt.step()
        p_opt.step()
        ts.step()
        ps.step()
        assert ts.last_epoch == ps.last_epoch == epoch
        got, want = ts.get_last_lr(), ps.get_last_lr()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, err_msg=f"epoch {epoch}")
        assert got == want, f"epoch {epoch}: same formula, same rounding order, so the same floats"
        assert [g["lr"] for g in t_opt.param_groups] == got
        seen.add(round(got[0], 12))
        if epoch == 23:  # a change from outside carries on in the recursive schedules, as in torch
            for g, h in zip(t_opt.param_groups, p_opt.param_groups):
                g["lr"] *= 0.5
                h["lr"] *= 0.5
    assert len(seen) > 3, "the schedule actually changed the learning rate"


def test_scheduled_lr_drives_the_optimizer_like_torch():
    (tx, tp), (px, pp) = make_pair()
    t_opt, p_opt = optim.SGD(tp, lr=0.1, momentum=0.9), torch.optim.SGD(pp, lr=0.1, momentum=0.9)
    ts = lr_scheduler.CosineAnnealingLR(t_opt, T_max=5)
    ps = torch.optim.lr_scheduler.CosineAnnealingLR(p_opt, T_max=5)
    for _ in range(12):
        train(tl, t_opt, tx, tp, 1)
        train(torch, p_opt, px, pp, 1)
        ts.step()
        ps.step()
    assert_params_match(tp, pp, "float32")


@pytest.mark.parametrize("name,kwargs", [("StepLR", dict(step_size=3, gamma=0.5)),
                                         ("CosineAnnealingLR", dict(T_max=8, eta_min=0.01))])
def test_scheduler_state_dict_resumes_identically(name, kwargs):
    cls = getattr(lr_scheduler, name)
    t_opt, _ = _scheduled_pair()
    sched = cls(t_opt, **kwargs)
    for _ in range(11):
        t_opt.step()
        sched.step()
    sd, opt_sd = sched.state_dict(), t_opt.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 11

    t_opt2, _ = _scheduled_pair(lrs=(5.0, 5.0))
    sched2 = cls(t_opt2, **kwargs)
    t_opt2.load_state_dict(opt_sd)
    sched2.load_state_dict(sd)
    for _ in range(20):
        for o, s in ((t_opt, sched), (t_opt2, sched2)):
            o.step()
            s.step()
        assert sched.get_last_lr() == sched2.get_last_lr()


def test_second_scheduler_keeps_the_first_initial_lr_like_torch():
    t_opt, p_opt = _scheduled_pair()
    t1, p1 = lr_scheduler.StepLR(t_opt, step_size=2), torch.optim.lr_scheduler.StepLR(p_opt, step_size=2)
    for _ in range(5):
        t_opt.step()
        p_opt.step()
        t1.step()
        p1.step()
    t2 = lr_scheduler.CosineAnnealingLR(t_opt, T_max=4)
    p2 = torch.optim.lr_scheduler.CosineAnnealingLR(p_opt, T_max=4)
    assert t2.base_lrs == p2.base_lrs == [0.1, 0.03]  # initial_lr is set once, not overwritten
    for _ in range(10):
        t_opt.step()
        p_opt.step()
        for t, p in ((t1, p1), (t2, p2)):
            t.step()
            p.step()
        assert t2.get_last_lr() == p2.get_last_lr()


def test_scheduler_warns_when_stepped_before_the_optimizer():
    t_opt, _ = _scheduled_pair()
    sched = lr_scheduler.StepLR(t_opt, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    t_opt2, _ = _scheduled_pair()
    sched2 = lr_scheduler.StepLR(t_opt2, step_size=2)
    t_opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_scheduler_errors():
    t_opt, _ = _scheduled_pair()
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], step_size=2)
    with pytest.raises(ValueError, match="step_size must be a positive integer, got 0"):
        lr_scheduler.StepLR(t_opt, step_size=0)
    with pytest.raises(ValueError, match="T_max must be a positive number of epochs, got 0"):
        lr_scheduler.CosineAnnealingLR(t_opt, T_max=0)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(t_opt, step_size=2, last_epoch=3)


# ---- gradient clipping vs torch ---------------------------------------------------------------

def _grad_pairs(scale: float = 1.0, dtype: str = "float32"):
    rng = np.random.default_rng(3)
    shapes = [(4, 3), (3,), (2, 2, 2)]
    tw, pw = [], []
    for s in shapes:
        w, g = rng.standard_normal(s).astype(dtype), (rng.standard_normal(s) * scale).astype(dtype)
        a, b = tl.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
        a.grad, b.grad = tl.tensor(g), torch.tensor(g)
        tw.append(a)
        pw.append(b)
    return tw, pw


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm_type", [2.0, math.inf, 1.0, 3.0, "inf"])
def test_clip_grad_norm_matches_torch(norm_type, dtype):
    tw, pw = _grad_pairs(dtype=dtype)
    versions = [w.grad._version for w in tw]
    tn = tl_utils.clip_grad_norm_(tw, max_norm=0.5, norm_type=norm_type)
    pn = torch.nn.utils.clip_grad_norm_(pw, max_norm=0.5, norm_type=float(norm_type))
    assert tn.shape == () and tn.dtype.name == dtype
    assert tn.item() > 0.5, "the norm was over the limit, so this case clips"
    assert_close(tn, pn)
    for a, b, v in zip(tw, pw, versions):
        assert_close(a.grad, b.grad)
        assert a.grad._version == v + 1, "scaled in place"
    clipped = tl_utils.get_total_norm([w.grad for w in tw], norm_type).item()
    assert clipped == pytest.approx(0.5, rel=1e-4)


@pytest.mark.parametrize("norm_type", [2.0, math.inf])
def test_clip_grad_norm_leaves_small_norms_untouched(norm_type):
    tw, pw = _grad_pairs(scale=1e-3)
    before = [w.grad.numpy().copy() for w in tw]
    tn = tl_utils.clip_grad_norm_(tw, max_norm=10.0, norm_type=norm_type)
    pn = torch.nn.utils.clip_grad_norm_(pw, max_norm=10.0, norm_type=norm_type)
    assert_close(tn, pn)
    for a, b, w0 in zip(tw, pw, before):
        np.testing.assert_array_equal(a.grad.numpy(), w0)
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_clip_grad_norm_skips_missing_grads_and_accepts_one_tensor():
    tw, pw = _grad_pairs()
    tw[1].grad = pw[1].grad = None
    assert_close(tl_utils.clip_grad_norm_(iter(tw), 1.0), torch.nn.utils.clip_grad_norm_(iter(pw), 1.0))
    assert tw[1].grad is None
    for a, b in zip(tw[::2], pw[::2]):
        assert_close(a.grad, b.grad)
    assert_close(tl_utils.clip_grad_norm_(tw[0], 0.1), torch.nn.utils.clip_grad_norm_(pw[0], 0.1))
    assert_close(tw[0].grad, pw[0].grad)
    assert tl_utils.clip_grad_norm_([], 1.0).item() == 0.0


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # NumPy's inf * 0
def test_clip_grad_norm_nonfinite():
    tw, pw = _grad_pairs()
    tw[0].grad[0, 0] = math.inf
    pw[0].grad[0, 0] = math.inf
    with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
        tl_utils.clip_grad_norm_(tw, 1.0, error_if_nonfinite=True)
    assert np.isinf(tw[0].grad.numpy()[0, 0]), "nothing was scaled before the error"
    tn = tl_utils.clip_grad_norm_(tw, 1.0)
    pn = torch.nn.utils.clip_grad_norm_(pw, 1.0)
    assert math.isinf(tn.item()) and math.isinf(pn.item())
    for a, b in zip(tw, pw):
        assert_close(a.grad, b.grad)  # scaled by 0: zeros, and nan where the inf was


def test_clip_grad_value_matches_torch():
    tw, pw = _grad_pairs(scale=2.0)
    tl_utils.clip_grad_value_(tw, 0.7)
    torch.nn.utils.clip_grad_value_(pw, 0.7)
    for a, b in zip(tw, pw):
        assert_close(a.grad, b.grad)
        assert np.abs(a.grad.numpy()).max() == pytest.approx(0.7)


# ---- errors -------------------------------------------------------------------------------------

def _w(*shape):
    return tl.zeros(*shape, requires_grad=True)


@pytest.mark.parametrize("build,exc,match", [
    (lambda: optim.SGD(_w(2)), TypeError, "iterable of Tensors or dicts"),
    (lambda: optim.SGD([]), ValueError, "empty parameter list"),
    (lambda: optim.SGD({_w(2)}), TypeError, "ordered collections"),
    (lambda: optim.SGD([np.zeros(2)]), TypeError, "can only optimize Tensors, but param 0 of group 0 is "
                                                  "numpy.ndarray"),
    (lambda: optim.SGD([_w(2), tl.zeros(3)]), ValueError, r"doesn't require gradients \(param 1 of group 0, "
                                                          r"shape \(3,\)\)"),
    (lambda: optim.SGD([_w(2) * 2]), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda: (lambda w: optim.SGD([w, _w(1), w]))(_w(2)), ValueError, "same parameter twice in group 0 "
                                                                      r"\(params 0 and 2"),
    (lambda: (lambda w: optim.SGD([{"params": [w]}, {"params": [w]}]))(_w(2)), ValueError,
     "more than one parameter group"),
    (lambda: optim.SGD([_w(2)], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda: optim.SGD([_w(2)], momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    (lambda: optim.SGD([_w(2)], weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    (lambda: optim.SGD([_w(2)], nesterov=True), ValueError, "Nesterov momentum requires a momentum and zero "
                                                            "dampening"),
    (lambda: optim.SGD([_w(2)], momentum=0.9, dampening=0.1, nesterov=True), ValueError, "dampening=0.1"),
    (lambda: optim.SGD([{"params": [_w(2)]}, {"params": [_w(2)], "lr": -1.0}], lr=0.1), ValueError,
     r"Invalid learning rate: -1.0 \(param group 1\)"),
    (lambda: optim.SGD([_w(2)], lr=tl.tensor(0.1)), TypeError, "lr must be a number, got "),
    (lambda: optim.SGD([_w(2)], lr="0.1"), TypeError, "lr must be a number, got str"),
    (lambda: optim.Adam([_w(2)], lr=-1e-3), ValueError, "Invalid learning rate: -0.001"),
    (lambda: optim.Adam([_w(2)], betas=(1.0, 0.999)), ValueError, "Invalid beta parameter at index 0: 1.0"),
    (lambda: optim.Adam([_w(2)], betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
    (lambda: optim.Adam([_w(2)], betas=0.9), TypeError, "betas must be a pair"),
    (lambda: optim.Adam([_w(2)], eps=-1e-8), ValueError, "Invalid epsilon value: -1e-08"),
    (lambda: optim.AdamW([_w(2)], weight_decay=-0.01), ValueError, "Invalid weight_decay value: -0.01"),
    (lambda: optim.SGD([_w(2)]).add_param_group([_w(2)]), TypeError, "param_group must be a dict"),
])
def test_bad_construction_is_refused_clearly(build, exc, match):
    with pytest.raises(exc, match=match):
        build()


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam])
@pytest.mark.parametrize("grad,match", [
    (lambda: tl.zeros(3), r"param 1 in group 0 has shape \(3,\) but the parameter has shape \(2, 3\)"),
    (lambda: tl.zeros(2, 3, dtype=tl.float64), "has dtype float64 but the parameter has dtype float32"),
    (lambda: np.zeros((2, 3), np.float32), "is a numpy.ndarray, not a Tensor"),
])
def test_mismatched_grad_is_refused_at_step_before_anything_changes(cls, grad, match):
    """A bad gradient that got past the assignment check (here set on the raw slot, as a buggy hook could)
    stops step() before it changes any parameter or any state: param 0 was fine and stays untouched."""
    a, b = _w(2), _w(2, 3)
    opt = cls([a, b], lr=0.1)
    a.grad, b._grad = tl.ones(2), grad()
    before = a.detach().numpy().copy()
    with pytest.raises((RuntimeError, TypeError), match=match):
        opt.step()
    np.testing.assert_array_equal(a.detach().numpy(), before)
    assert not opt.state or all(not s for s in opt.state.values())


@pytest.mark.parametrize("grad,match", [
    (lambda: tl.zeros(3), r"attempting to assign a gradient of size '\[3\]' to a tensor of size '\[2, 3\]'"),
    (lambda: tl.zeros(2, 3, dtype=tl.float64), "attempting to assign a gradient with dtype '(float64|double)'"),
    (lambda: np.zeros((2, 3), np.float32), "assigned grad expected to be a Tensor or None"),
])
def test_assigning_a_mismatched_grad_is_refused_like_torch(grad, match):
    w, t = _w(2, 3), torch.zeros(2, 3, requires_grad=True)
    with pytest.raises((RuntimeError, TypeError), match=match):
        w.grad = grad()
    with pytest.raises((RuntimeError, TypeError), match=match):
        g = grad()
        t.grad = torch.from_numpy(g.numpy()) if isinstance(g, tl.Tensor) else g
    assert w.grad is None


def test_grad_on_another_device_is_refused(dev):
    w = _w(2)
    opt = optim.Adam([w])
    with pytest.raises(RuntimeError, match="assigned grad has data located on a different device"):
        w.grad = tl.ones(2, device="testdev")
    w._grad = tl.ones(2, device="testdev")
    with pytest.raises(RuntimeError, match="is on testdev:0 but the parameter is on cpu"):
        opt.step()


def test_repr_lists_groups_like_torch():
    opt = optim.SGD([_w(2)], lr=0.1)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.1\n" in text and text.endswith("\n)")


def test_named_params_are_accepted_and_saved_like_torch():
    a, b = _w(2), _w(3)
    opt = optim.SGD([("fc.weight", a), ("fc.bias", b)], lr=0.1)
    ref = torch.optim.SGD([("fc.weight", torch.zeros(2, requires_grad=True)),
                           ("fc.bias", torch.zeros(3, requires_grad=True))], lr=0.1)
    assert [p is q for p, q in zip(opt.param_groups[0]["params"], (a, b))] == [True, True]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ref.state_dict()["param_groups"][0]["param_names"]
    with pytest.raises(ValueError, match="with/without names"):
        optim.SGD([("w", _w(2)), _w(2)])


@pytest.mark.parametrize("ext", ["safetensors", "npz"])
@pytest.mark.parametrize("name,kwargs", [("Adam", dict(lr=0.01, betas=(0.8, 0.99), amsgrad=True)),
                                         ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1))])
def test_state_dict_through_a_checkpoint_file_continues_bit_identically(tmp_path, ext, name, kwargs):
    cls = getattr(optim, name)
    (tx, tp), _ = make_pair()
    opt = cls([{"params": tp[:2]}, {"params": tp[2:], "lr": 0.02}], **kwargs)
    train(tl, opt, tx, tp, 3)
    path = tmp_path / f"opt.{ext}"
    tl.save(opt.state_dict(), path)
    sd = tl.load(path)
    assert sorted(sd["state"]) == [0, 1, 2] and [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert all(type(g[k]) is type(v) for g, og in zip(sd["param_groups"], opt.param_groups) for k, v in og.items())

    copies = [p.detach().clone().requires_grad_() for p in tp]
    resumed = cls([{"params": copies[:2]}, {"params": copies[2:]}], lr=123.0)  # everything comes from the file
    resumed.load_state_dict(sd)
    train(tl, opt, tx, tp, 5)  # the optimizer that was never saved
    train(tl, resumed, tx, copies, 5)
    for a, b in zip(tp, copies):
        assert a.detach().numpy().tobytes() == b.detach().numpy().tobytes()
