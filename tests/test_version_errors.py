"""Write records counted, not repeated (``Storage.bump``), and what a version-mismatch error says."""

from __future__ import annotations

import os
import sys

import pytest

import tinygrad_like as tl
from tinygrad_like import optim
from tinygrad_like.autograd.function import VersionMismatchError
from tinygrad_like.storage import Bump, Write

THIS_FILE = os.path.basename(__file__)


def lineno() -> int:
    return sys._getframe(1).f_lineno


def mismatch(loss) -> VersionMismatchError:
    with pytest.raises(VersionMismatchError) as e:
        loss.backward()
    return e.value


# ---- records --------------------------------------------------------------------------------------
def test_repeated_writes_from_one_line_make_one_counted_record():
    t = tl.zeros(2)
    for _ in range(40):
        line = lineno() + 1
        t.add_(1)
    st = t.storage
    assert t._version == 40 and len(st.bumps) == 1
    b = st.bumps[0]
    assert (b.op, b.first_version, b.version, b.count, b.optimizer) == ("add_", 1, 40, 40, None)
    assert b.site.lineno == line
    assert "v1..v40" in repr(b) and "40×" in repr(b)


def test_a_different_op_or_line_starts_a_new_record_and_the_window_keeps_16_runs():
    t = tl.zeros(2)
    t.add_(1)
    t.add_(1)  # another line: a new record
    t.mul_(2)
    assert [(b.op, b.count) for b in t.storage.bumps] == [("add_", 1), ("add_", 1), ("mul_", 1)]
    for _ in range(20):  # alternating ops never coalesce: the deque keeps the newest 16 runs
        t.mul_(1)
        t.add_(0)
    assert len(t.storage.bumps) == 16 and t.storage.bumps[-1].version == t._version == 43


def test_bumps_since_trims_a_coalesced_record_and_returns_copies():
    t = tl.zeros(2)
    for _ in range(10):
        t.add_(1)  # versions 1..10, one record
    t.mul_(2)  # version 11
    since = t.storage.bumps_since(7)
    assert [(b.op, b.first_version, b.version, b.count) for b in since] == [("add_", 8, 10, 3), ("mul_", 11, 11, 1)]
    assert [b.count for b in t.storage.bumps_since(0)] == [10, 1]
    assert t.storage.bumps_since(11) == []
    assert since[0] is not t.storage.bumps[0], "a copy: the live record may still grow"
    assert t.storage.bumps[0].count == 10, "trimming does not touch the live record"
    assert t.storage.writes_since(7) == [Write("add_", since[0].site.label, 3, None),
                                         Write("mul_", since[1].site.label, 1, None)]


def test_writes_inside_an_optimizer_step_name_the_optimizer():
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    step_line = lineno() + 1
    opt.step()
    with tl.no_grad():
        w.mul_(1.0)  # a plain write after: no optimizer
    a, b = w.storage.bumps
    assert (a.op, a.optimizer, a.site.lineno) == ("add_", "SGD", step_line)
    assert b.optimizer is None
    assert tl.sites.context.optimizer is None, "reset after step()"
    assert tl.sites.context.write_site is None, "the step's one site is not left behind"


def test_a_users_own_optimizer_records_the_lines_of_its_step():
    """A built-in optimizer's writes all name the user's ``opt.step()`` line (found once per step); an optimizer the
    user wrote records the lines inside its own ``step``, which are the user's code."""
    class Halve(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

        def step(self, closure=None):
            for p in self.param_groups[0]["params"]:
                p.mul_(0.5)
            self.write_line = lineno() - 1

    w = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = Halve([w])
    opt.step()
    (bump,) = w.storage.bumps
    assert (bump.op, bump.optimizer, bump.site.lineno) == ("mul_", "Halve", opt.write_line)


def test_optimizer_attribution_is_reset_when_step_raises():
    class Broken(optim.SGD):
        def step(self, closure=None):
            raise RuntimeError("nope")

    w = tl.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="nope"):
        Broken([w], lr=0.1).step()
    assert tl.sites.context.optimizer is None


def test_a_subclass_step_calling_super_is_attributed_to_the_subclass():
    class MySGD(optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    w = tl.tensor([1.0], requires_grad=True)
    opt = MySGD([w], lr=0.1)
    (w * 2).sum().backward()
    opt.step()
    assert w.storage.bumps[-1].optimizer == "MySGD"


# ---- the error ------------------------------------------------------------------------------------
def test_360_optimizer_steps_are_listed_once_with_their_count_and_the_rerun_forward_advice():
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.01)
    stale = (w * w).sum()  # saves w at version 0
    for _ in range(360):
        opt.zero_grad()
        (w * w).sum().backward()
        step_line = lineno() + 1
        opt.step()
    err = mismatch(stale)
    msg = str(err)
    site = f"{THIS_FILE}:{step_line}"
    assert msg.count(site) == 1, msg
    assert "add_ at " + site in msg and "(360×, by SGD.step())" in msg, msg
    assert "forward pass again after `optimizer.step()`" in msg and "backward()` before `step()`" in msg
    assert "clone" not in msg
    assert "earlier write" not in msg
    assert err.from_optimizer is True and err.unrecorded == 0
    assert err.writes == [Write("add_", site + " in test_360_optimizer_steps_are_listed_once_with_their_count_"
                                "and_the_rerun_forward_advice", 360, "SGD")]
    assert (err.saved_version, err.current_version) == (0, 360)
    assert [b.count for b in err.bumps] == [360] and isinstance(err.bumps[0], Bump)


def test_fused_adam_steps_are_attributed_too():
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.01)
    stale = (w * w).sum()
    for _ in range(20):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    err = mismatch(stale)
    assert err.from_optimizer and len(err.writes) == 1 and err.writes[0].count == 20
    assert err.writes[0].optimizer == "Adam" and "(20×, by Adam.step())" in str(err)


def test_a_plain_in_place_write_keeps_the_clone_advice():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    c = a * 1
    d = c * a  # saves c
    line = lineno() + 1
    c.mul_(2)
    err = mismatch(d.sum())
    msg = str(err)
    assert f"mul_ at {THIS_FILE}:{line}" in msg and "×" not in msg and "step()" not in msg
    assert "`.clone()`" in msg and "forward pass again" not in msg
    assert err.from_optimizer is False and [w.count for w in err.writes] == [1]


def test_two_sites_are_both_listed_with_their_counts():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    c = a * 1
    d = c * a
    for _ in range(3):
        first = lineno() + 1
        c.mul_(2)
    for _ in range(5):
        second = lineno() + 1
        c.add_(1)
    err = mismatch(d.sum())
    msg = str(err)
    assert f"mul_ at {THIS_FILE}:{first} in" in msg and "(3×)" in msg, msg
    assert f"add_ at {THIS_FILE}:{second} in" in msg and "(5×)" in msg, msg
    assert msg.index("(3×)") < msg.index("(5×)"), "oldest first"
    assert [(w.op, w.count) for w in err.writes] == [("mul_", 3), ("add_", 5)]


def test_alternating_writes_are_merged_per_site_and_lost_ones_are_counted():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    c = a * 1
    d = c * a
    for _ in range(30):  # 60 runs of 1: the window keeps the newest 16
        c.mul_(1)
        c.add_(0)
    err = mismatch(d.sum())
    msg = str(err)
    assert [(w.op, w.count) for w in err.writes] == [("mul_", 8), ("add_", 8)]
    assert err.unrecorded == 44 and "and 44 earlier writes" in msg
    assert msg.count("mul_ at") == 1 and msg.count("add_ at") == 1


def test_an_optimizer_step_mixed_with_a_user_write_keeps_the_clone_advice():
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    stale = (w * w).sum()
    (w * w).sum().backward()
    opt.step()
    with tl.no_grad():
        w.mul_(0.5)
    err = mismatch(stale)
    assert err.from_optimizer is False and [w.optimizer for w in err.writes] == ["SGD", None]
    assert "by SGD.step()" in str(err) and "`.clone()`" in str(err)


def test_saved_info_lists_the_writes_like_the_error():
    w = tl.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    y = w * w
    for _ in range(4):
        (w * 3).sum().backward()
        opt.step()
    info = y.grad_fn.saved_info()
    assert [wr.count for wr in info[0]["writes"]] == [4] and info[0]["writes"][0].optimizer == "SGD"
    assert [b.count for b in info[0]["bumps"]] == [4]
