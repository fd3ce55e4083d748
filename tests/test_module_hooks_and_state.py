"""nn.Module's hooks and state API against torch's: forward hooks with kwargs, prepend and always_call; full
backward hooks and pre-hooks; state-dict and load hooks; extra state; load_state_dict(assign=True); set_submodule,
get_buffer, to_empty, type, modules(remove_duplicate)."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")

LIBS = [pytest.param(tl, id="tl"), pytest.param(torch, id="torch")]


def lin(lib, n_in=2, n_out=1):
    m = lib.nn.Linear(n_in, n_out)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(np.arange(n_in * n_out, dtype=np.float32).reshape(n_out, n_in) + 1))
        m.bias.fill_(0.5)
    return m


def both(fn):
    """fn(lib) under each library; the results must be equal (nested lists, tuples, numbers)."""
    ours, theirs = fn(tl), fn(torch)
    assert ours == theirs
    return ours


def test_forward_hooks_run_in_order_with_prepend_and_kwargs():
    def run(lib):
        class Scale(lib.nn.Module):
            def forward(self, x, factor=1.0):
                return x * factor

        m, calls = Scale(), []
        m.register_forward_hook(lambda mod, args, out: calls.append("a"))
        m.register_forward_hook(lambda mod, args, out: calls.append("b"), prepend=True)
        m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": kwargs["factor"] * 10}),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["factor"], with_kwargs=True)
        out = m(lib.ones(2), factor=2.0)
        return calls, out.tolist()

    assert both(run) == (["b", "a"], [40.0, 40.0])


def test_always_call_hooks_run_when_forward_raises():
    def run(lib):
        class Broken(lib.nn.Module):
            def forward(self, x):
                raise ValueError("no")

        m, calls = Broken(), []
        m.register_forward_hook(lambda mod, args, out: calls.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, args, out: calls.append("plain"))
        with pytest.raises(ValueError):
            m(lib.ones(1))
        return calls

    assert both(run) == [("always", None)]


def test_full_backward_hook_sees_and_replaces_gradients():
    def run(lib):
        m, seen = lin(lib), []
        m.register_full_backward_pre_hook(lambda mod, gout: (gout[0] * 3,))
        m.register_full_backward_hook(lambda mod, gin, gout: seen.append((gin[0].tolist(), gout[0].tolist())))
        m.register_full_backward_hook(lambda mod, gin, gout: (gin[0] + 1,))
        x = lib.ones(2, 2, requires_grad=True)
        m(x).sum().backward()
        return seen, x.grad.tolist(), m.weight.grad.tolist()

    seen, x_grad, w_grad = both(run)
    assert seen == [([[3.0, 6.0], [3.0, 6.0]], [[3.0], [3.0]])] and x_grad == [[4.0, 7.0], [4.0, 7.0]]


def test_backward_hook_of_a_module_with_two_inputs_one_without_grad():
    def run(lib):
        class Mix(lib.nn.Module):
            def forward(self, a, b):
                return a * b

        m, seen = Mix(), []
        m.register_full_backward_hook(lambda mod, gin, gout: seen.append([g is None for g in gin]))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        m(a, lib.tensor([3.0, 4.0])).sum().backward()
        return seen, a.grad.tolist()

    assert both(run) == ([[False, False]], [3.0, 4.0])  # (torch hands zeros for the input that needs none)


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")
def test_backward_hook_without_input_grad_fires_with_none_and_refuses_a_replacement():
    def run(lib):
        m, seen = lin(lib), []
        m.register_full_backward_hook(lambda mod, gin, gout: seen.append(gin))
        m(lib.ones(1, 2)).sum().backward()
        bad = lin(lib)
        bad.register_full_backward_hook(lambda mod, gin, gout: (lib.ones(1, 2),))
        with pytest.raises(RuntimeError, match="no input requires gradient"):
            bad(lib.ones(1, 2)).sum().backward()
        return seen

    assert both(run) == [(None,)]


def test_removed_backward_hook_no_longer_runs_and_no_grad_skips_it():
    def run(lib):
        m, seen = lin(lib), []
        h = m.register_full_backward_hook(lambda mod, gin, gout: seen.append(1))
        x = lib.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        h.remove()
        m(x).sum().backward()
        with lib.no_grad():
            m(x)
        return len(seen)

    assert both(run) == 1


def test_state_dict_hooks_and_extra_state():
    def run(lib):
        class WithStep(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(1, 1)
                self.step = 3

            def get_extra_state(self):
                return {"step": self.step}

            def set_extra_state(self, state):
                self.step = state["step"]

        m, calls = WithStep(), []
        m.fc.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix)))
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append(("post", prefix, sorted(sd))))
        sd = m.state_dict()
        other = WithStep()
        other.step = 0
        other.register_load_state_dict_post_hook(lambda mod, keys: calls.append(("loaded", keys.missing_keys)))
        other.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, meta, strict, missing, unexpected, errors: calls.append(("load-pre", prefix)))
        other.load_state_dict(sd)
        return calls, other.step, sd["_extra_state"]

    calls, step, extra = both(run)
    assert step == 3 and extra == {"step": 3}
    assert calls[-1] == ("loaded", [])


def test_load_state_dict_assign_takes_the_tensors_themselves():
    def run(lib):
        m = lin(lib)
        new = {"weight": lib.full((1, 2), 7.0), "bias": lib.zeros(1)}
        m.load_state_dict(new, assign=True)
        frozen = lin(lib)
        frozen.weight.requires_grad_(False)
        frozen.load_state_dict(new, assign=True)
        with lib.no_grad():
            new["weight"].add_(1)  # (the module holds these very tensors' storage: it sees the write)
        return (type(m.weight).__name__, m.weight.requires_grad,
                frozen.weight.requires_grad, m.weight.tolist())

    assert both(run) == ("Parameter", True, False, [[8.0, 8.0]])


def test_state_dict_positional_destination_prefix():
    def run(lib):
        dest = {}
        with pytest.warns(FutureWarning) if lib is torch else _nothing():
            lin(lib).state_dict(dest, "net.")
        return sorted(dest)

    assert both(run) == ["net.bias", "net.weight"]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_tree_surgery_and_conversions():
    def run(lib):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        net.set_submodule("0", lib.nn.Linear(2, 3))
        with pytest.raises(AttributeError):
            net.set_submodule("5", lib.nn.ReLU(), strict=True)
        shared = lib.nn.ReLU()
        twice = lib.nn.Sequential(shared, shared)
        empty = lin(lib).to_empty(device="cpu")
        return (net[0].out_features, net.get_buffer("1.running_var").tolist(),
                len(list(twice.modules())), len(list(twice.modules(remove_duplicate=False))),
                str(lin(lib).type(lib.float64).weight.dtype).split(".")[-1], list(empty.weight.shape),
                net.share_memory() is net)

    assert both(run) == (3, [1.0, 1.0], 2, 3, "float64", [1, 2], True)
