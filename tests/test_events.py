"""``tinygrad_like.events``: the one channel from the core to observers.

Subscribing flips ``events.ACTIVE`` and swaps each device's backend for a timed one; unsubscribing
swaps it back, so with no observer nothing is timed and no record is built.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like import events
from tinygrad_like.device import TimedBackend

THIS_FILE = os.path.basename(__file__)
CPU = tl.device("cpu")


def lineno() -> int:
    return sys._getframe(1).f_lineno



def of_type(seen, kind):
    return [e for e in seen if isinstance(e, kind)]


# ---- subscribe / unsubscribe --------------------------------------------------------------------------
def test_active_flag_follows_subscribers():
    assert events.ACTIVE is False, "another test left a subscriber behind"
    seen_a, seen_b = [], []
    un_a = events.subscribe(seen_a.append)
    assert events.ACTIVE is True
    un_b = events.subscribe(seen_b.append)
    un_a()
    assert events.ACTIVE is True, "one subscriber is still listening"
    n_a = len(seen_a)
    _ = tl.ones(2)
    assert seen_b and len(seen_a) == n_a, "only the remaining subscriber gets events"
    un_b()
    assert events.ACTIVE is False
    un_b()  # unsubscribing twice is harmless
    assert events.ACTIVE is False
    n = len(seen_b)
    _ = tl.ones(2)
    assert len(seen_b) == n, "no delivery after unsubscribe"


def test_subscribe_rejects_non_callables():
    with pytest.raises(TypeError, match="callable"):
        events.subscribe(42)
    assert events.ACTIVE is False


def test_activation_hooks_run_on_first_and_last_subscriber():
    calls = []
    events.on_activation(calls.append)
    try:
        un1 = events.subscribe(lambda e: None)
        un2 = events.subscribe(lambda e: None)
        un1()
        un2()
        assert calls == [True, False]
    finally:
        events._activation_hooks.remove(calls.append)


def test_event_records_are_frozen(recorded):
    _ = tl.ones(2)
    ev = of_type(recorded, events.StorageAllocated)[0]
    with pytest.raises(AttributeError):
        ev.nbytes = 0


# ---- OpRecorded -----------------------------------------------------------------------------------------
def test_op_recorded_for_recorded_ops_only(recorded):
    x = tl.ones(2, 3, requires_grad=True)
    y = x * 2
    ops = of_type(recorded, events.OpRecorded)
    assert len(ops) == 1
    ev = ops[0]
    assert ev.op == "Mul" and ev.node is y.grad_fn
    assert ev.output_shape == (2, 3) and ev.input_shapes[0] == (2, 3)
    assert ev.dtype == "float32" and ev.device == "cpu"
    _ = tl.ones(2) + 1  # nothing requires grad: nothing recorded
    with tl.no_grad():
        _ = x * 2
    _ = x.detach() * 2
    assert len(of_type(recorded, events.OpRecorded)) == 1
    _ = y.T  # views are graph nodes too
    ops = of_type(recorded, events.OpRecorded)
    assert [e.op for e in ops] == ["Mul", "Permute"]


def test_op_recorded_order_matches_graph_creation(recorded):
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    ((x.exp() + x) * x).sum()
    assert [e.op for e in of_type(recorded, events.OpRecorded)] == ["Exp", "Add", "Mul", "Sum"]


# ---- BackwardStep ------------------------------------------------------------------------------------
def test_backward_step_per_node(recorded):
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    loss = ((x.exp() + x) * x).sum()
    steps = list(loss.backward_steps())
    evs = of_type(recorded, events.BackwardStep)
    assert len(evs) == len(steps) == 4
    assert [e.index for e in evs] == list(range(4))
    assert [e.node for e in evs] == [s.node for s in steps]
    assert [e.op for e in evs] == [s.node.name for s in steps]
    assert all(e.seconds >= 0 for e in evs)


def test_no_backward_events_without_subscriber():
    seen = []
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    un = events.subscribe(seen.append)
    un()
    loss.backward()
    assert seen == []


# ---- VersionBump --------------------------------------------------------------------------------------
def test_version_bump_event_has_the_user_site(recorded):
    t = tl.zeros(3)
    line = lineno() + 1
    t.add_(1)
    t[0] = 2.0
    bumps = of_type(recorded, events.VersionBump)
    assert [(b.storage_id, b.version, b.op) for b in bumps] == [
        (t.storage.id, 1, "add_"), (t.storage.id, 2, "__setitem__")]
    assert [b.site.lineno for b in bumps] == [line, line + 1]
    assert os.path.basename(bumps[0].site.filename) == THIS_FILE
    assert str(bumps[0].site) == f"{THIS_FILE}:{line} in test_version_bump_event_has_the_user_site"


# ---- KernelTimed ------------------------------------------------------------------------------------
def test_kernel_timed_only_while_subscribed():
    a, b = tl.ones(2, 3), tl.ones(3, 4)
    assert CPU.backend is CPU.raw_backend, "no observer: the plain backend"
    seen = []
    un = events.subscribe(seen.append)
    try:
        assert isinstance(CPU.backend, TimedBackend)
        _ = a + 1
        m = a @ b
    finally:
        un()
    kernels = of_type(seen, events.KernelTimed)
    assert [k.name for k in kernels] == ["add", "matmul"]
    add, mm = kernels
    assert add.device == "cpu" and add.seconds >= 0 and add.shapes == ((2, 3),)
    assert mm.shapes == ((2, 3), (3, 4)) and mm.nbytes == (6 + 12 + 8) * 4
    assert mm.start >= add.start + add.seconds
    np.testing.assert_array_equal(m.numpy(), np.full((2, 4), 3.0))
    assert CPU.backend is CPU.raw_backend, "the raw backend is back after the last unsubscribe"
    seen.clear()
    _ = a + 1
    _ = a @ b
    assert seen == []


def test_memory_ops_are_not_timed(recorded):
    t = tl.arange(6).reshape(2, 3)
    _ = t.T[0]
    assert of_type(recorded, events.KernelTimed) and all(
        k.name not in ("view", "adopt", "from_numpy") for k in of_type(recorded, events.KernelTimed))


def test_kernel_timed_in_backward(recorded):
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    names = [k.name for k in of_type(recorded, events.KernelTimed)]
    assert names.count("mul") >= 3  # forward, and one per input in backward


# ---- robustness --------------------------------------------------------------------------------------
def test_raising_subscriber_does_not_break_computation(capsys):
    good = []

    def bad(event):
        raise ValueError("observer bug")

    un_bad = events.subscribe(bad)
    un_good = events.subscribe(good.append)
    try:
        x = tl.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward()
    finally:
        un_bad()
        un_good()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    assert of_type(good, events.OpRecorded) and of_type(good, events.BackwardStep)
    err = capsys.readouterr().err
    assert "ValueError" in err and "observer bug" in err


def test_subscriber_may_unsubscribe_itself_during_delivery():
    got = []

    def once(event):
        got.append(event)
        unsubscribe()

    unsubscribe = events.subscribe(once)
    _ = tl.ones(2) + 1
    assert len(got) == 1 and events.ACTIVE is False


# ---- StorageAllocated ---------------------------------------------------------------------------------
def test_storage_allocated(recorded):
    t = tl.ones(3, dtype=tl.float64)
    allocs = [e for e in of_type(recorded, events.StorageAllocated) if e.storage_id == t.storage.id]
    assert len(allocs) == 1
    ev = allocs[0]
    assert (ev.device, ev.dtype, ev.nbytes) == ("cpu", "float64", 24)
    n = len(of_type(recorded, events.StorageAllocated))
    _ = t.T
    _ = t[1:]
    assert len(of_type(recorded, events.StorageAllocated)) == n, "views allocate nothing"


def test_a_subscriber_can_ask_for_some_event_classes_only():
    import tinygrad_like as tl
    from tinygrad_like import events as ev

    everything, kernels, ops_and_steps = [], [], []
    offs = [ev.subscribe(everything.append), ev.subscribe(kernels.append, kinds=(ev.KernelTimed,)),
            ev.subscribe(ops_and_steps.append, kinds=[ev.OpRecorded, ev.BackwardStep])]
    try:
        x = tl.ones(3, requires_grad=True)
        (x * 2).sum().backward()
    finally:
        for off in offs:
            off()
    assert kernels and all(type(e) is ev.KernelTimed for e in kernels)
    assert {type(e) for e in ops_and_steps} == {ev.OpRecorded, ev.BackwardStep}
    assert [e for e in everything if type(e) is ev.KernelTimed] == kernels  # the same records, in the same order
    assert [e for e in everything if type(e) in (ev.OpRecorded, ev.BackwardStep)] == ops_and_steps
    assert not ev.ACTIVE and not ev._subscribers
    with pytest.raises(TypeError, match="expects event classes"):
        ev.subscribe(print, kinds=("KernelTimed",))


def test_the_timed_backend_reads_plain_attributes_afresh_and_times_primitives():
    import numpy as np

    from tinygrad_like.device import TimedBackend

    class Inner:
        counter = 0

        def add(self, a, b):
            return a + b

        def helper(self):
            return "not a primitive"

    inner = Inner()
    timed = TimedBackend(inner, "cpu")
    assert timed.counter == 0
    inner.counter = 3
    assert timed.counter == 3, "a plain attribute is not cached: it may change"
    assert timed.helper() == "not a primitive" and timed.helper == inner.helper
    seen = []
    unsubscribe = events.subscribe(seen.append, (events.KernelTimed,))
    try:
        a = np.ones((2, 3), np.float32)
        out = timed.add(a, 2.0)
    finally:
        unsubscribe()
    assert (out == 3).all()
    (k,) = seen
    assert (k.name, k.device, k.shapes, k.nbytes) == ("add", "cpu", ((2, 3),), 48)
    assert k.seconds >= 0


def test_records_nobody_wants_are_not_built():
    """A subscriber of one class makes the core listen (ACTIVE), but the sites of other frequent events do not build
    their records: a timeline listening for kernels pays nothing for allocations, ops and version bumps."""
    built = []
    kinds = (events.StorageAllocated, events.OpRecorded, events.VersionBump, events.BackwardStep)
    originals = {k: k.__new__ for k in kinds}
    seen = []
    unsubscribe = events.subscribe(seen.append, (events.KernelTimed,))
    try:
        for k in kinds:
            k.__new__ = (lambda orig: lambda cls, *a, **kw: built.append(cls) or orig(cls, *a, **kw))(originals[k])
        x = tl.ones(3, requires_grad=True)
        y = (x * 2).sum()
        y.backward()
        tl.zeros(2).add_(1)
        assert events.wants(events.KernelTimed) and not events.wants(events.OpRecorded)
    finally:
        for k in kinds:
            k.__new__ = originals[k]
        unsubscribe()
    assert built == [] and any(type(e) is events.KernelTimed for e in seen)
    again = []
    unsubscribe = events.subscribe(again.append)  # everything: every kind is built and delivered
    try:
        tl.zeros(2).add_(1)
    finally:
        unsubscribe()
    assert {type(e) for e in again} >= {events.StorageAllocated, events.VersionBump}
