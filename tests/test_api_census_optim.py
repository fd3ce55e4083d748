"""The optimizers the census found missing (LBFGS, Rprop, ASGD, Adafactor, SparseAdam, Muon), swa_utils and
swap_in_optimizer_params_and_state, against PyTorch step by step.

Each optimizer trains the same small model from the same weights in both libraries; the parameters must agree
after every step (float64 tight; float32 within a few ulp's worth, LBFGS's float32 reductions within 1e-4), the
state must hold torch's keys, and a state_dict round trip in the middle of the run must continue identically.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

import tinygrad_like as tl
import tinygrad_like.optim as optim
from tinygrad_like.optim import swa_utils

torch = pytest.importorskip("torch")

TOL = {"float32": dict(atol=2e-6, rtol=1e-5), "float64": dict(atol=1e-12, rtol=1e-10)}


def _arrays(dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal((16, 5)), rng.standard_normal((5, 7)) * 0.5, rng.standard_normal(7) * 0.1,
            rng.standard_normal((7, 3)) * 0.5]
    return [a.astype(dtype) for a in arrs]


class Run:
    """One library's side: the model's weights, a loss, and an optimizer (two groups unless ``one_group``)."""

    def __init__(self, lib, name: str, kwargs: dict, dtype: str, one_group: bool = False):
        self.lib, self.kwargs, self.one_group = lib, kwargs, one_group
        self.cls = getattr(lib.optim, name)
        x, *ws = _arrays(dtype)
        self.x = lib.tensor(x)
        self.params = [lib.tensor(w, requires_grad=True) for w in ws]
        self.opt = self.make()

    def make(self):
        if self.one_group:
            return self.cls(self.params, **self.kwargs)
        return self.cls([{"params": self.params[:2]}, {"params": self.params[2:], "lr": 0.05}], **self.kwargs)

    def closure(self):
        self.opt.zero_grad()
        w1, b1, w2 = self.params
        loss = (self.lib.relu(self.x @ w1 + b1) @ w2).pow(2).mean()
        loss.backward()
        return loss

    def step(self):
        if self.one_group:  # LBFGS: the closure is evaluated inside step
            return float(self.opt.step(self.closure))
        self.closure()
        self.opt.step()

    def weights(self) -> list[np.ndarray]:
        return [p.detach().numpy().copy() for p in self.params]


def _close(ours: list[np.ndarray], theirs: list[np.ndarray], tol: dict, what: str) -> None:
    for i, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, **tol, err_msg=f"{what}, param {i}")


CASES = [
    ("Rprop", {}), ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))), ("Rprop", dict(maximize=True)),
    ("ASGD", {}), ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=3)), ("ASGD", dict(weight_decay=0.1, t0=0)),
    ("ASGD", dict(maximize=True, t0=5)),
    ("Adafactor", {}), ("Adafactor", dict(lr=0.1, beta2_decay=-0.5, eps=(1e-4, 1e-2), d=1.5)),
    ("Adafactor", dict(weight_decay=0.1, maximize=True)),
    ("LBFGS", {}), ("LBFGS", dict(lr=0.5, history_size=3)), ("LBFGS", dict(line_search_fn="strong_wolfe")),
    ("LBFGS", dict(line_search_fn="strong_wolfe", history_size=2, max_iter=7, max_eval=9)),
    ("LBFGS", dict(tolerance_grad=1e-3, tolerance_change=1e-4)),
]
_IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}" for n, kw in CASES]


@pytest.mark.parametrize("reload", [None, "own", "torch"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=_IDS)
def test_optimizer_matches_torch_after_every_step(name, kwargs, reload):
    lbfgs = name == "LBFGS"
    ours, theirs = Run(tl, name, kwargs, "float64", lbfgs), Run(torch, name, kwargs, "float64", lbfgs)
    assert ours.opt.defaults == theirs.opt.defaults
    for step in range(1, 9 if not lbfgs else 5):
        lo, lt = ours.step(), theirs.step()
        if lbfgs:
            assert lo == pytest.approx(lt, rel=1e-10)
        # LBFGS feeds dot products back into its steps: their summation order (NumPy's, torch's) shows at 1e-10
        # (after step 3 the history is ill-conditioned, 1/y.s ~ 2e7, and amplifies those last-bit differences)
        tol = TOL["float64"] if not lbfgs else dict(atol=1e-8, rtol=1e-5) if reload == "torch" and step > 3 \
            else dict(atol=1e-9, rtol=1e-7)
        _close(ours.weights(), theirs.weights(), tol, f"step {step}")
        if step == 3 and reload is not None:
            sd = copy.deepcopy(theirs.opt.state_dict())
            assert sorted(ours.opt.state_dict()["state"]) == sorted(sd["state"])
            for i in sd["state"]:
                assert set(ours.opt.state_dict()["state"][i]) == set(sd["state"][i]), "torch's state keys"
            for tg, pg in zip(ours.opt.state_dict()["param_groups"], sd["param_groups"]):
                assert set(tg) == set(pg), "the param groups hold torch's keys"
            mine = ours.opt.state_dict() if reload == "own" else _to_tl(sd)
            ours.opt, theirs.opt = ours.make(), theirs.make()
            ours.opt.load_state_dict(mine)
            theirs.opt.load_state_dict(sd)
    moved = max(float(np.abs(a - w).max()) for a, w in zip(ours.weights(), _arrays("float64")[1:]))
    assert moved > 1e-3, "training moved the weights: the comparison is not vacuous"


def _to_tl(value):
    """A torch state_dict with its tensors as ours (what a converted checkpoint holds)."""
    if isinstance(value, torch.Tensor):
        return tl.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _to_tl(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_tl(v) for v in value]
    return value


@pytest.mark.parametrize("name,kwargs", CASES[::2], ids=_IDS[::2])
def test_optimizer_matches_torch_in_float32(name, kwargs):
    lbfgs = name == "LBFGS"
    ours, theirs = Run(tl, name, kwargs, "float32", lbfgs), Run(torch, name, kwargs, "float32", lbfgs)
    tol = dict(atol=1e-4, rtol=1e-4) if lbfgs else TOL["float32"]  # LBFGS feeds sums back into its steps
    for step in range(1, 4 if lbfgs else 8):
        ours.step()
        theirs.step()
        _close(ours.weights(), theirs.weights(), tol, f"step {step}")


def test_asgd_keeps_eta_and_mu_as_float32_scalars_like_torch():
    ours, theirs = Run(tl, "ASGD", dict(t0=2), "float64"), Run(torch, "ASGD", dict(t0=2), "float64")
    for _ in range(4):
        ours.step()
        theirs.step()
    for key in ("eta", "mu"):
        a, b = ours.opt.state[ours.params[0]][key], theirs.opt.state[theirs.params[0]][key]
        assert a.dtype is tl.float32 and b.dtype == torch.float32 and a.item() == b.item()
    np.testing.assert_allclose(ours.opt.state[ours.params[0]]["ax"].numpy(),
                               theirs.opt.state[theirs.params[0]]["ax"].detach().numpy(), atol=1e-12)


def test_adafactor_factors_a_matrix_and_keeps_a_vector_whole():
    ours = Run(tl, "Adafactor", {}, "float64")
    ours.step()
    w1, b1, w2 = ours.params
    assert ours.opt.state[w1]["row_var"].shape == (5, 1) and ours.opt.state[w1]["col_var"].shape == (1, 7)
    assert ours.opt.state[b1]["variance"].shape == (7,)


def test_lbfgs_strong_wolfe_minimizes_rosenbrock_like_torch():
    def solve(lib):
        x = lib.tensor([-1.5, 2.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=1, max_iter=50, line_search_fn="strong_wolfe", history_size=10)

        def closure():
            opt.zero_grad()
            loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
            loss.backward()
            return loss
        for _ in range(3):
            opt.step(closure)
        return x.detach().numpy(), opt.state[x]["func_evals"], opt.state[x]["n_iter"]
    (a, ea, na), (b, eb, nb) = solve(tl), solve(torch)
    np.testing.assert_allclose(a, b, atol=1e-9)
    np.testing.assert_allclose(a, [1.0, 1.0], atol=1e-3)
    assert (ea, na) == (eb, nb)


def test_lbfgs_refuses_groups_bad_line_search_and_a_missing_closure():
    w = tl.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [w]}, {"params": [tl.zeros(1, requires_grad=True)]}])
    with pytest.raises(ValueError, match="strong_wolfe"):
        optim.LBFGS([w], line_search_fn="armijo")
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.LBFGS([w], lr=-1)
    with pytest.raises(RuntimeError, match="closure"):
        optim.LBFGS([w]).step(None)


@pytest.mark.parametrize("kwargs", [{}, dict(lr=0.1, betas=(0.8, 0.9), eps=1e-6), dict(lr=0.05, maximize=True)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_adam_on_an_embedding_matches_torchs_sparse_gradients(kwargs, dtype):
    """torch's Embedding(sparse=True) gives a sparse gradient; ours a dense one whose other rows are zero: the
    looked-up rows move, the others (and their moments) stay, exactly as in torch."""
    w = np.random.default_rng(2).standard_normal((10, 3)).astype(dtype)

    def run(lib):
        emb = lib.nn.Embedding(10, 3, sparse=True).to(getattr(lib, dtype))
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w))
        opt = lib.optim.SparseAdam(list(emb.parameters()), **kwargs)
        out = []
        for idx in ([1, 2, 2], [3], [1, 5, 9], [0, 0], [7]):
            opt.zero_grad()
            (emb(lib.tensor(idx)) ** 2).sum().backward()
            opt.step()
            out.append(emb.weight.detach().numpy().copy())
        return out, opt.state[emb.weight]
    (a, sa), (b, sb) = run(tl), run(torch)
    for step, (x, y) in enumerate(zip(a, b)):
        np.testing.assert_allclose(x, y, **TOL[dtype], err_msg=f"step {step}")
    assert sa["step"] == sb["step"] == 5
    np.testing.assert_allclose(sa["exp_avg_sq"].numpy(), sb["exp_avg_sq"].numpy(), **TOL[dtype])
    assert np.array_equal(a[-1][4], w[4]) and np.array_equal(a[-1][6], w[6]), "rows never looked up never move"
    assert not np.array_equal(a[-1][1], w[1])


def test_sparse_adam_checks_like_torch():
    w = tl.zeros(2, requires_grad=True)
    for kwargs, match in ((dict(lr=0.0), "Invalid learning rate"), (dict(eps=0.0), "Invalid epsilon"),
                          (dict(betas=(1.0, 0.9)), "beta parameter at index 0")):
        with pytest.raises(ValueError, match=match):
            optim.SparseAdam([w], **kwargs)
        with pytest.raises(ValueError, match=match):
            torch.optim.SparseAdam([torch.zeros(2, requires_grad=True)], **kwargs)


@pytest.mark.parametrize("kwargs", [{}, dict(lr=0.02, nesterov=False, momentum=0.9, weight_decay=0.01),
                                    dict(lr=0.01, adjust_lr_fn="match_rms_adamw"),
                                    dict(lr=0.01, ns_steps=3, ns_coefficients=(2.0, -1.5, 0.5))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_muon_matches_torch(kwargs, dtype):
    """The Newton-Schulz iteration runs in bfloat16 in both: the same roundings, so the same weights."""
    rng = np.random.default_rng(1)
    arrs = [rng.standard_normal((6, 4)), rng.standard_normal((4, 9)), rng.standard_normal((8, 6))]

    def run(lib):
        w1, w2 = (lib.tensor(a.astype(dtype), requires_grad=True) for a in arrs[:2])
        x = lib.tensor(arrs[2].astype(dtype))
        opt = lib.optim.Muon([w1, w2], **kwargs)
        out = []
        for _ in range(4):
            opt.zero_grad()
            (lib.tanh(x @ w1) @ w2).pow(2).mean().backward()
            opt.step()
            out.append([w1.detach().numpy().copy(), w2.detach().numpy().copy()])
        return out
    for step, (a, b) in enumerate(zip(run(tl), run(torch))):
        _close(a, b, dict(atol=1e-7 if dtype == "float32" else 1e-12, rtol=1e-6), f"step {step}")


def test_muon_refuses_what_torch_refuses():
    with pytest.raises(ValueError, match="2D parameters"):
        optim.Muon([tl.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="not supported"):
        optim.Muon([tl.zeros((2, 2), requires_grad=True)], adjust_lr_fn="other")


@pytest.mark.parametrize("name,kwargs,match", [
    ("Rprop", dict(etas=(1.1, 1.2)), "Invalid eta values"), ("Rprop", dict(lr=-1.0), "Invalid learning rate"),
    ("ASGD", dict(weight_decay=-1.0), "Invalid weight_decay"),
    ("Adafactor", dict(beta2_decay=0.5), "beta2_decay should be <= 0"),
    ("Adafactor", dict(d=0.5), "Clipping threshold d"), ("Adafactor", dict(eps=(-1.0, 1e-3)), "epsilon1"),
])
def test_bad_hyperparameters_raise_torchs_error(name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        getattr(optim, name)([tl.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError, match=match):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)


# ---- swa_utils ------------------------------------------------------------------------------------

def _net(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    w = np.random.default_rng(3)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(w.standard_normal(tuple(p.shape)).astype("float32")))
    return net


@pytest.mark.parametrize("how", ["swa", "ema_multi", "ema", "swa_fn", "buffers"])
def test_averaged_model_matches_torch(how):
    data = np.random.default_rng(4).standard_normal((5, 8, 3)).astype("float32")

    def run(lib):
        su = lib.optim.swa_utils
        net = _net(lib)
        kw = {"ema_multi": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9)), "ema": dict(avg_fn=su.get_ema_avg_fn(0.8)),
              "swa_fn": dict(avg_fn=su.get_swa_avg_fn()), "buffers": dict(use_buffers=True)}
        avg = su.AveragedModel(net, **kw.get(how, {}))
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        for batch in data:
            opt.zero_grad()
            net(lib.tensor(batch)).pow(2).mean().backward()
            opt.step()
            avg.update_parameters(net)
        return [t.detach().numpy().copy() for t in avg.state_dict().values()], int(avg.n_averaged), avg
    (a, na, avg), (b, nb, _) = run(tl), run(torch)
    assert na == nb == 5
    _close(a, b, dict(atol=1e-6, rtol=1e-5), how)
    out = avg(tl.tensor(data[0]))
    assert tuple(out.shape) == (8, 2)


def test_averaged_model_refuses_two_averaging_functions():
    with pytest.raises(AssertionError):
        swa_utils.AveragedModel(tl.nn.Linear(1, 1), avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    with pytest.raises(ValueError, match="Invalid decay"):
        swa_utils.get_ema_avg_fn(1.5)


def test_update_bn_recomputes_running_statistics_like_torch():
    data = [np.random.default_rng(i).standard_normal((8, 3)).astype("float32") for i in range(4)]

    def run(lib):
        net = _net(lib)
        net.eval()
        lib.optim.swa_utils.update_bn([(lib.tensor(d), 0) for d in data], net)
        bn = net[1]
        return bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(), bn.momentum, net.training
    (m1, v1, mom1, tr1), (m2, v2, mom2, tr2) = run(tl), run(torch)
    np.testing.assert_allclose(m1, m2, atol=1e-6)
    np.testing.assert_allclose(v1, v2, atol=1e-5)
    assert mom1 == mom2 == 0.1 and tr1 is tr2 is False


@pytest.mark.parametrize("kwargs", [dict(swa_lr=0.05), dict(swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear"),
                                    dict(swa_lr=[0.01, 0.2], anneal_epochs=0)])
def test_swalr_schedule_matches_torch(kwargs):
    def run(lib):
        ps = [lib.zeros(2, requires_grad=True), lib.zeros(1, requires_grad=True)]
        opt = lib.optim.SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.3}], lr=0.5)
        sched = lib.optim.swa_utils.SWALR(opt, **kwargs)
        lrs = []
        for _ in range(12):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        return lrs, sched.state_dict()
    (a, sda), (b, sdb) = run(tl), run(torch)
    np.testing.assert_allclose(a, b, rtol=1e-12)
    assert set(sda) == set(sdb)
    with pytest.raises(ValueError, match="anneal_strategy"):
        swa_utils.SWALR(optim.SGD([tl.zeros(1, requires_grad=True)], lr=0.1), swa_lr=0.1, anneal_strategy="exp")


# ---- swap_in_optimizer_params_and_state ------------------------------------------------------------

def test_swap_in_steps_other_params_with_other_state_and_restores_like_torch():
    def run(lib):
        live = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.Adam([live], lr=0.1)
        live.grad = lib.tensor([1.0, -1.0])
        opt.step()
        sd = copy.deepcopy(opt.state_dict())
        other = lib.tensor([5.0, -5.0], requires_grad=True)
        other.grad = lib.tensor([0.5, 0.5])
        sd["param_groups"][0]["lr"] = 0.01
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, sd):
            assert opt.param_groups[0]["params"][0] is other and opt.param_groups[0]["lr"] == 0.01
            opt.step()
        assert opt.param_groups[0]["params"][0] is live and opt.param_groups[0]["lr"] == 0.1
        return other.detach().numpy(), live.detach().numpy(), sd["state"][0]["exp_avg"].numpy()
    for x, y in zip(run(tl), run(torch)):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_swap_in_refuses_an_uninitialized_optimizer():
    opt = optim.SGD([tl.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    with pytest.raises(RuntimeError, match="initialized optimizer state"):
        with optim.swap_in_optimizer_params_and_state(opt, {}, {"state": {}, "param_groups": []}):
            pass


def test_math_module_used():  # (keeps the imports honest: the cosine anneal is torch's formula)
    assert swa_utils.SWALR._cosine_anneal(0.5) == pytest.approx((1 - math.cos(math.pi * 0.5)) / 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert swa_utils.SWALR._linear_anneal(0.25) == 0.25
