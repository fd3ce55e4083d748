"""``Storage``: residency state machine, version counters, devices and the weak registry.

A second memory space (``tests/devbackend.py``: the simulated device under its own name, with fresh counted
copies and pool) stands in for a GPU, so every residency transition is tested on any machine:

    gpu --host read--> both (d2h)    both --device write--> dirty "gpu"    both --host write--> dirty "cpu"
    dirty "cpu" --next device use--> uploaded (h2d)    both --drop_host()--> gpu
"""

from __future__ import annotations

import gc
import os
import sys
import weakref

import numpy as np
import pytest
from devbackend import DevBackend

import tinygrad_like as tl
from tinygrad_like import events
from tinygrad_like.device import get_device, register_device, unregister_device

THIS_FILE = os.path.basename(__file__)


def lineno() -> int:
    return sys._getframe(1).f_lineno




def on_dev(values, dtype=tl.float32):
    return tl.tensor(values, dtype=dtype, device="testdev")


def host_write(t, values):
    """Write new values into the host mirror of a device tensor, as ``load_state_dict`` would."""
    t.storage.host_array()  # make sure the mirror exists
    t.storage.host[:] = np.asarray(values, dtype=t.dtype.np).reshape(-1)
    t.storage.mark_host_write()


# ---- a new device tensor ----------------------------------------------------------------------------
def test_new_device_tensor_lives_on_the_device(dev):
    t = on_dev([1.0, 2.0, 3.0])
    st = t.storage
    assert t.device is dev and t.device == "testdev" and str(t.device) == "testdev:0"
    assert st.residency == "gpu" and st.dirty is None and st.host is None and st.dev is not None
    assert dev.raw_backend.downloads == 0
    assert st.nbytes == 12 and st.numel == 3
    for factory in (tl.zeros(2, device="testdev"), tl.arange(4, device="testdev"),
                    tl.randn(2, 2, device="testdev"), tl.full((2,), 7, device="testdev")):
        assert factory.device is dev and factory.storage.residency == "gpu"


def test_cpu_storage_is_always_cpu_and_in_sync():
    t = tl.ones(3)
    assert t.storage.residency == "cpu" and t.storage.dirty is None
    t.numpy()
    t.add_(1)
    t.storage.mark_host_write()  # no device copy: nothing to mark
    t.storage.mark_device_write()
    assert t.storage.residency == "cpu" and t.storage.dirty is None


# ---- host reads -----------------------------------------------------------------------------------------
READERS = {
    "numpy": lambda t: t.numpy(),
    "repr": repr,
    "item": lambda t: t[1].item(),
    "tolist": lambda t: t.tolist(),
    "np.asarray": np.asarray,
    "float": lambda t: float(t[0]),
}


@pytest.mark.parametrize("reader", list(READERS))
def test_host_read_downloads_once(dev, reader):
    t = on_dev([1.0, 2.0, 3.0])
    be = dev.raw_backend
    READERS[reader](t)
    assert t.storage.residency == "both" and t.storage.dirty is None
    assert be.downloads == 1
    READERS[reader](t)
    t.numpy()
    assert be.downloads == 1, "a second read uses the host mirror"


def test_host_read_values_and_views(dev):
    t = on_dev([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert "device='testdev:0'" in repr(t)
    np.testing.assert_array_equal(t.numpy(), [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(t.T[1:].numpy(), np.array([[1, 2, 3], [4, 5, 6]]).T[1:])
    assert t.T.storage is t.storage
    assert t[1, 2].item() == 6.0 and t.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert dev.raw_backend.downloads == 1
    with pytest.raises(ValueError):
        t.numpy()[0, 0] = 9  # the host mirror is read-only through .numpy()


# ---- device writes -----------------------------------------------------------------------------
def test_device_write_marks_host_mirror_stale(dev, recorded):
    t = on_dev([1.0, 2.0, 3.0])
    be = dev.raw_backend
    t.numpy()
    t.add_(1)
    assert t.storage.residency == "both" and t.storage.dirty == "gpu"
    np.testing.assert_array_equal(t.numpy(), [2.0, 3.0, 4.0])
    assert be.downloads == 2 and t.storage.dirty is None
    t.numpy()
    assert be.downloads == 2
    changes = [e for e in recorded
               if isinstance(e, events.StorageStateChanged) and e.storage_id == t.storage.id]
    assert [(e.residency, e.dirty, e.direction) for e in changes] == [
        ("both", None, "d2h"), ("both", "gpu", None), ("both", None, "d2h")]
    assert changes[0].nbytes == 12 and changes[0].seconds >= 0


@pytest.mark.parametrize("write", ["add_", "mul_", "setitem", "fill_", "zero_", "copy_", "iadd"])
def test_every_kind_of_device_write_marks_the_mirror_stale(dev, write):
    t = on_dev([1.0, 2.0, 3.0])
    t.numpy()
    if write == "add_":
        t.add_(1)
    elif write == "mul_":
        t.mul_(on_dev([2.0, 2.0, 2.0]))
    elif write == "setitem":
        t[0] = 9.0
    elif write == "fill_":
        t.fill_(4.0)
    elif write == "zero_":
        t.zero_()
    elif write == "copy_":
        t.copy_(on_dev([7.0, 8.0, 9.0]))
    else:
        t += 1
    assert t.storage.dirty == "gpu"
    assert t._version == 1
    expected = {"add_": [2, 3, 4], "mul_": [2, 4, 6], "setitem": [9, 2, 3], "fill_": [4, 4, 4],
                "zero_": [0, 0, 0], "copy_": [7, 8, 9], "iadd": [2, 3, 4]}[write]
    np.testing.assert_array_equal(t.numpy(), expected)


def test_device_write_without_mirror_stays_gpu(dev):
    t = on_dev([1.0, 2.0])
    t.mul_(3)
    assert t.storage.residency == "gpu" and t.storage.dirty is None
    np.testing.assert_array_equal(t.numpy(), [3.0, 6.0])


# ---- host writes ------------------------------------------------------------------------------------
def test_host_write_is_uploaded_once_at_the_next_device_op(dev, recorded):
    t = on_dev([1.0, 2.0, 3.0])
    be = dev.raw_backend
    host_write(t, [10.0, 20.0, 30.0])
    assert t.storage.dirty == "cpu" and t.storage in dev.pending
    be.reset_counts()
    u = t + 1
    assert be.uploads == 1
    assert t.storage.dirty is None and not dev.pending
    np.testing.assert_array_equal(u.numpy(), [11.0, 21.0, 31.0])
    _ = t * 2
    assert be.uploads == 1, "already in sync: no second upload"
    h2d = [e for e in recorded if isinstance(e, events.StorageStateChanged) and e.direction == "h2d"]
    assert len(h2d) == 1 and h2d[0].storage_id == t.storage.id and h2d[0].nbytes == 12
    marks = [e for e in recorded if isinstance(e, events.StorageStateChanged) and e.dirty == "cpu"]
    assert len(marks) == 1 and marks[0].direction is None


@pytest.mark.parametrize("use", ["compare", "argmax", "any", "sign", "view", "sum", "to_cpu", "matmul"])
def test_host_write_is_seen_by_every_kind_of_device_use(dev, use):
    t = on_dev([3.0, -2.0, 1.0])
    host_write(t, [10.0, 20.0, -30.0])
    ops = {
        "compare": lambda: (t > 15).tolist() == [False, True, False],
        "argmax": lambda: t.argmax().item() == 1,
        "any": lambda: (t < -20).any().item() is True,
        "sign": lambda: t.sign().tolist() == [1.0, 1.0, -1.0],
        "view": lambda: (t[1:] * 1).tolist() == [20.0, -30.0],
        "sum": lambda: t.sum().item() == 0.0,
        "to_cpu": lambda: t.cpu().tolist() == [10.0, 20.0, -30.0],
        "matmul": lambda: (t @ on_dev([1.0, 1.0, 1.0])).item() == 0.0,
    }
    assert ops[use](), f"{use} computed with the stale device copy"
    assert t.storage.dirty is None or use == "to_cpu"


def test_pending_upload_and_timing_observers_compose(dev):
    """Subscribing while an upload is pending: the upload still happens first, then ops are timed."""
    t = on_dev([1.0, 2.0])
    host_write(t, [5.0, 6.0])
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        u = t * 2
    finally:
        unsubscribe()
    np.testing.assert_array_equal(u.numpy(), [10.0, 12.0])
    kernels = [e for e in seen if isinstance(e, events.KernelTimed)]
    assert [(k.name, k.device) for k in kernels] == [("mul", "testdev:0")]
    assert dev.backend is dev.raw_backend and not dev.pending


def test_host_write_then_device_write_keeps_both(dev):
    """A partial device write after a host write must not lose the host write."""
    t = on_dev([1.0, 2.0, 3.0])
    host_write(t, [10.0, 20.0, 30.0])
    t[0] = 5.0
    np.testing.assert_array_equal(t.numpy(), [5.0, 20.0, 30.0])
    assert not dev.pending


def test_drop_host(dev):
    t = on_dev([1.0, 2.0])
    t.numpy()
    t.storage.drop_host()
    assert t.storage.residency == "gpu" and t.storage.host is None and t.storage.dirty is None
    host_write(t, [5.0, 6.0])  # downloads a new mirror, then writes it
    dev.raw_backend.reset_counts()
    t.storage.drop_host()  # the newer host copy is uploaded before the mirror goes
    assert dev.raw_backend.uploads == 1 and t.storage.residency == "gpu" and not dev.pending
    np.testing.assert_array_equal(t.numpy(), [5.0, 6.0])


# ---- moving between devices -----------------------------------------------------------------------
@pytest.mark.parametrize("values,dtype", [([1.5, -2.0], tl.float32), ([[1, 2], [3, 4]], tl.int64),
                                          (3.0, tl.float64), ([True, False], tl.bool), ([], tl.float32)])
def test_to_device_and_back_round_trips(dev, values, dtype):
    c = tl.tensor(values, dtype=dtype)
    d = c.to("testdev")
    assert d.device is dev and d.dtype is dtype and d.shape == c.shape
    assert d.storage is not c.storage
    back = d.cpu()
    assert back.device is tl.device("cpu") and back.dtype is dtype
    np.testing.assert_array_equal(back.numpy(), c.numpy())
    assert c.to("cpu") is c and d.to("testdev") is d  # same device: no copy


def test_to_copies_and_does_not_alias(dev):
    c = tl.tensor([1.0, 2.0])
    d = c.to("testdev")
    c.add_(10)
    np.testing.assert_array_equal(d.numpy(), [1.0, 2.0])
    back = d.cpu()
    d.add_(1)
    np.testing.assert_array_equal(back.numpy(), [1.0, 2.0])


def test_autograd_through_to(dev):
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.to("testdev")
    assert y.grad_fn is not None and y.device is dev
    loss = (y * y).sum()
    assert loss.device is dev
    loss.backward()
    assert x.grad.device is tl.device("cpu")
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_to_is_recorded_as_a_graph_op(dev, recorded):
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x.to("testdev")
    ops = [e for e in recorded if isinstance(e, events.OpRecorded)]
    assert [e.op for e in ops] == ["ToDevice"] and ops[0].node is y.grad_fn and ops[0].device == "testdev:0"
    assert y.grad_fn.next[0] is x


def test_autograd_from_device_leaf_to_cpu(dev):
    w = tl.tensor([1.0, -1.0], device="testdev", requires_grad=True)
    loss = (w.cpu() * 3).sum()
    loss.backward()
    assert w.grad.device is dev
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0])


def test_mixing_devices_in_one_op_names_both(dev):
    a, b = tl.ones(2), tl.ones(2, device="testdev")
    for op in (lambda: a + b, lambda: b * a, lambda: a @ b, lambda: tl.cat([a, b]), lambda: a.add_(b),
               lambda: tl.where(a > 0, a, b)):
        with pytest.raises(RuntimeError) as e:
            op()
        msg = str(e.value)
        assert "cpu" in msg and "testdev" in msg, msg


@pytest.mark.skipif(tl.cuda.is_available(), reason="CUDA is available on this machine")
def test_cuda_is_unavailable_with_an_explanation():
    with pytest.raises(RuntimeError, match="not available"):
        tl.device("cuda")
    with pytest.raises(RuntimeError, match="not available"):
        tl.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="not available"):
        tl.ones(2).cuda()
    with pytest.raises(RuntimeError, match="unknown device"):
        tl.device("tpu")


def test_unregistered_device_is_gone(dev):
    assert get_device("testdev") is dev
    unregister_device("testdev")
    with pytest.raises(RuntimeError, match="unknown device"):
        tl.device("testdev")
    assert dev._set_timed not in events._activation_hooks, "an unregistered device must not stay hooked"
    register_device("testdev", DevBackend())  # for the fixture's teardown


# ---- versions ------------------------------------------------------------------------------------------
def test_version_bumps_are_recorded_with_sites():
    t = tl.zeros(3)
    first = lineno() + 1
    t.add_(1)
    t[0] = 4.0
    bumps = list(t.storage.bumps)
    assert [(b.version, b.op) for b in bumps] == [(1, "add_"), (2, "__setitem__")]
    assert [b.site.lineno for b in bumps] == [first, first + 1]
    assert all(os.path.basename(b.site.filename) == THIS_FILE for b in bumps)
    assert bumps[0].site.function == "test_version_bumps_are_recorded_with_sites"
    assert f"{THIS_FILE}:{first}" in str(bumps[0].site)
    assert [b.op for b in t.storage.bumps_since(1)] == ["__setitem__"]


def test_bump_history_is_bounded():
    t = tl.zeros(1)
    for _ in range(100):
        t.add_(1)
    assert t._version == 100
    assert len(t.storage.bumps) <= 16 and t.storage.bumps[-1].version == 100


@pytest.mark.parametrize("device", ["cpu", "testdev"])
def test_version_is_shared_across_views(dev, device):
    x = tl.zeros(2, 3, device=device)
    views = {"view": x.view(3, 2), "index": x[0], "T": x.T, "detach": x.detach(), "slice": x[:, 1:],
             "expand": x[0:1].expand(4, 3), "unsqueeze": x.unsqueeze(0)}
    for v in views.values():
        assert v.storage is x.storage
    x.add_(1)
    assert x._version == 1
    assert {k: v._version for k, v in views.items()} == dict.fromkeys(views, 1)
    views["index"].mul_(5)  # a write through a view moves the base too
    assert x._version == 2 and views["T"]._version == 2
    np.testing.assert_array_equal(x.numpy(), [[5, 5, 5], [1, 1, 1]])


def test_copies_do_not_share_versions():
    x = tl.zeros(2)
    c = x.clone()
    x.add_(1)
    assert c._version == 0 and c.storage is not x.storage


# ---- the weak registry -------------------------------------------------------------------------------
def test_live_storages_is_weak():
    t = tl.ones(5)
    st_ref = weakref.ref(t.storage)
    sid = t.storage.id
    assert any(s.id == sid for s in tl.live_storages())
    del t
    gc.collect()
    assert st_ref() is None, "the registry must not keep storages alive"
    assert all(s.id != sid for s in tl.live_storages())


def test_device_storage_in_registry_and_pending_does_not_leak(dev):
    t = on_dev([1.0, 2.0])
    host_write(t, [3.0, 4.0])
    _ = t + 0  # uploads: the pending set is emptied
    st_ref = weakref.ref(t.storage)
    del t, _
    gc.collect()
    assert st_ref() is None
    assert not dev.pending


def test_storage_repr_and_ids_are_unique(dev):
    a, b = tl.ones(2), on_dev([1.0])
    assert a.storage.id != b.storage.id
    r = repr(b.storage)
    assert "residency='gpu'" in r and "testdev" in r and "version=0" in r


def test_storage_allocated_event(dev, recorded):
    t = on_dev([1.0, 2.0, 3.0, 4.0])
    allocs = [e for e in recorded if isinstance(e, events.StorageAllocated) and e.storage_id == t.storage.id]
    assert len(allocs) == 1
    assert allocs[0].device == "testdev:0" and allocs[0].dtype == "float32" and allocs[0].nbytes == 16


def test_live_storages_finds_those_made_before_anyone_asked():
    """New storages register only once a tool has listed them; the first listing finds the older ones too
    (a fresh process, so that no earlier test has asked yet)."""
    import subprocess
    import sys

    code = ("import gc, tinygrad_like as tl\n"
            "from tinygrad_like import storage\n"
            "assert not storage._tracking, 'importing the package listed the storages'\n"
            "x = tl.ones(3); y = x * 2; dead = (x + 1).storage.id\n"
            "gc.collect()\n"
            "ids = [s.id for s in tl.live_storages()]\n"
            "assert storage._tracking and ids == sorted(ids), ids\n"
            "assert x.storage.id in ids and y.storage.id in ids and dead not in ids, ids\n"
            "z = tl.zeros(2)\n"
            "assert z.storage.id in [s.id for s in tl.live_storages()]\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_live_storage_count_follows_births_and_deaths():
    import gc

    from tinygrad_like.storage import live_storage_count, live_storages

    gc.collect()
    n = live_storage_count()
    assert n == len(live_storages())
    made = [tl.ones(3) for _ in range(5)]
    assert live_storage_count() == n + 5
    del made
    gc.collect()
    assert live_storage_count() == n


@pytest.fixture
def lazy_storages():
    """Storages made on first use, as in a process where no tool has listed them yet (an earlier test may have)."""
    from tinygrad_like import storage
    was = storage.eager[0]
    storage.eager[0] = False
    try:
        yield
    finally:
        storage.eager[0] = was


def test_a_fresh_result_makes_its_storage_on_first_use_sharing_one_version_counter(lazy_storages):
    """A host op's result gets its Storage when something asks (a view, a write, ``.storage``), at version 0, and
    every later alias (a view, ``detach()``) shares that one storage, so a write through any of them is seen by
    all (the version check of autograd relies on it)."""
    x = tl.ones(4, requires_grad=True)
    y = x * 2
    assert y._st is None and y._version == 0  # nothing asked yet
    z = y.exp()  # saves its output, and Mul saved nothing of y: y still has no storage
    v = y[1:]  # a view: the base's storage is made and shared
    assert y._st is not None and v.storage is y.storage and y.detach().storage is y.storage
    v.add_(1.0)
    assert y._version == 1 and v._version == 1
    z.sum().backward()  # exp's kept output is z's own storage, untouched
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2.0) * np.ones(4), rtol=1e-6)


def test_a_storage_made_late_is_not_announced_but_one_made_while_listening_is(lazy_storages):
    """Reading a tensor made while nobody listened makes its storage without a ``StorageAllocated`` event (its
    bytes were allocated back then; an observer reading tensors must not set off events, or a view redrawing on
    allocations would recurse); a tensor made while someone listens gets its storage, and the event, at once."""
    before = tl.ones(3) * 2
    seen = []
    unsubscribe = tl.events.subscribe(seen.append, kinds=(tl.events.StorageAllocated,))
    try:
        st = before.storage
        assert [e for e in seen if e.storage_id == st.id] == []
        during = tl.ones(3) * 3
        assert during._st is not None
        assert [e.storage_id for e in seen if e.storage_id == during._st.id] == [during._st.id]
    finally:
        unsubscribe()


def test_assigning_data_shares_the_storage_even_before_it_was_made(lazy_storages):
    p = tl.zeros(3, requires_grad=True)
    fresh = tl.ones(3) * 2
    p.data = fresh
    assert p.storage is fresh.storage
    fresh.add_(1.0)
    assert p._version == fresh._version == 1 and p.detach().numpy().tolist() == [3.0, 3.0, 3.0]
