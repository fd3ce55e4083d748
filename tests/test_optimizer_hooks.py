"""Optimizer hooks against torch's: step pre/post hooks (per optimizer and global), state-dict and load hooks."""

from __future__ import annotations

import pytest

import tinygrad_like as tl
from tinygrad_like.optim import optimizer as our_optimizer

torch = pytest.importorskip("torch")
from torch.optim import optimizer as torch_optimizer  # noqa: E402

CASES = [pytest.param(tl, our_optimizer, id="tl"), pytest.param(torch, torch_optimizer, id="torch")]


def run_hooks(lib, module):
    w = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
    opt = lib.optim.SGD([w], lr=0.5, momentum=0.9)
    calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", type(o).__name__)))
    h = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", w.tolist())))
    g = module.register_optimizer_step_pre_hook(lambda o, args, kwargs: calls.append("global-pre"))
    w.grad = lib.tensor([1.0, 1.0])
    opt.step()
    h.remove()
    g.remove()
    opt.step()
    opt.register_state_dict_pre_hook(lambda o: calls.append("sd-pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    sd = opt.state_dict()
    other = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1, momentum=0.9)

    def drop_extra(o, state_dict):
        calls.append(("load-pre", sorted(state_dict)))
        return {k: v for k, v in state_dict.items() if k != "extra"}

    other.register_load_state_dict_pre_hook(drop_extra)
    other.register_load_state_dict_post_hook(lambda o: calls.append("load-post"))
    other.load_state_dict(sd)
    return calls, other.param_groups[0]["lr"], w.tolist()


@pytest.mark.parametrize("lib,module", CASES)
def test_hooks_run_as_torch_runs_them(lib, module):
    calls, lr, w = run_hooks(lib, module)
    theirs = run_hooks(torch, torch_optimizer)
    assert (calls, lr, w) == theirs
    assert calls[:3] == ["global-pre", ("pre", "SGD"), ("post", [0.5, 1.5])]


def test_a_pre_hook_can_replace_the_step_arguments():
    def run(lib):
        w = lib.nn.Parameter(lib.tensor([3.0]))
        opt = lib.optim.LBFGS([w], lr=1, max_iter=2)

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        opt.register_step_pre_hook(lambda o, args, kwargs: ((o,), {"closure": closure}))  # (args[0] is o)
        return opt.step(lambda: 1 / 0).item()  # (the hook swaps in the real closure)

    assert run(tl) == pytest.approx(run(torch))
