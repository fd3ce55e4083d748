"""The simulated device ``sim``: its own pooled memory, transfers only when the host reads or writes, and the same
values as the CPU.

Each claim of ``backends/sim.py`` is checked here: residency and dirty sides move as on a GPU (and each move is a
logged, counted transfer), the pool serves a training loop with no new allocation after warm-up and gives its cache
back, a block is never handed out while an array over it lives, and training on ``sim`` gives the CPU's numbers.
"""

from __future__ import annotations

import copy
import gc
import pickle

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like import events
from tinygrad_like.backends.protocol import PRIMITIVES
from tinygrad_like.backends.sim import SimBackend

F = tl.nn.functional


@pytest.fixture
def sim():
    """A fresh simulated device for each test (counters and pool from zero)."""
    from tinygrad_like.device import register_device, unregister_device

    unregister_device("sim")
    dev = register_device("sim", SimBackend(), 0)
    yield dev
    unregister_device("sim")


def _counts(dev) -> tuple:
    be = dev.raw_backend
    return be.uploads, be.downloads


def test_it_is_a_device_of_its_own_and_says_it_is_simulated(sim):
    x = tl.tensor([1.0, 2.0, 3.0], device="sim")
    assert x.device == "sim" and x.device == "sim:0" and str(x.device) == "sim:0"
    assert x.storage.residency == "gpu" and x.storage.host is None
    assert sim.raw_backend.simulated and sim.raw_backend.memory_stats()["simulated"] is True
    assert not sim.is_host
    with pytest.raises(RuntimeError, match="there is one simulated device, sim:0"):
        tl.device("sim:1")


def test_the_backend_serves_every_primitive_of_the_table():
    have = {n for n in dir(SimBackend) if callable(getattr(SimBackend, n))}
    assert sorted(set(PRIMITIVES) - have) == []


def test_host_reads_download_device_writes_make_the_mirror_stale_host_writes_upload_at_next_use(sim):
    v = tl.arange(6, dtype=tl.float32).to("sim")
    st = v.storage
    up, down = _counts(sim)
    assert (st.residency, st.dirty) == ("gpu", None)

    np.testing.assert_array_equal(v.numpy(), np.arange(6))  # host read: one download, a host mirror kept
    assert (st.residency, st.dirty) == ("both", None) and _counts(sim) == (up, down + 1)
    v.numpy()  # in sync: no transfer
    assert _counts(sim) == (up, down + 1)

    v.mul_(2)  # device write: the mirror is stale, nothing moves yet
    assert (st.residency, st.dirty, st.version) == ("both", "gpu", 1) and _counts(sim) == (up, down + 1)
    np.testing.assert_array_equal(v.numpy(), 2 * np.arange(6))  # downloads again
    assert st.dirty is None and _counts(sim) == (up, down + 2)

    v.copy_(tl.ones(6))  # host write (from a CPU tensor): the device copy is stale until the device's next use
    assert st.dirty == "cpu" and _counts(sim) == (up, down + 2)
    w = v + 1  # the device's next op uploads it first
    assert st.dirty is None and _counts(sim) == (up + 1, down + 2)
    np.testing.assert_array_equal(w.numpy(), np.full(6, 2.0))


def test_each_transfer_is_logged_with_direction_bytes_and_time_and_storages_report_them(sim):
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        x = tl.randn(4, 8).to("sim")  # 128 bytes up
        y = (x * 2).sum(1)
        y.numpy()  # 16 bytes down
    finally:
        unsubscribe()
    log = list(sim.raw_backend.transfers)
    assert [(t.direction, t.nbytes) for t in log] == [("h2d", 128), ("d2h", 16)]
    assert all(t.seconds >= 0 and t.time > 0 for t in log)
    moved = [e for e in seen if isinstance(e, events.StorageStateChanged) and e.direction]
    assert [(e.direction, e.nbytes) for e in moved] == [("h2d", 128), ("d2h", 16)]  # (as the backend logged them)
    kernels = [e for e in seen if isinstance(e, events.KernelTimed)]
    assert {e.device for e in kernels if e.name in ("mul", "sum")} == {"sim:0"}


def test_item_in_a_loop_is_one_download_per_call(sim):
    """``loss.item()`` each step: every step's loss is a new storage, so each call is a download (and, on a GPU, a
    wait for the queued kernels). Elements of one storage come down once: its host mirror serves the rest."""
    x = tl.randn(10).to("sim")
    _, down = _counts(sim)
    values = [(x * i).sum().item() for i in range(10)]
    assert _counts(sim)[1] == down + 10
    assert values[3] == pytest.approx(3 * float(x.cpu().sum()), rel=1e-5)
    assert _counts(sim)[1] == down + 11 and x._storage.residency == "gpu"  # (.cpu() copies out, keeping no mirror)
    [x[i].item() for i in range(10)]
    assert _counts(sim)[1] == down + 12


def test_a_training_loop_allocates_nothing_new_after_warm_up_and_matches_the_cpu(sim):
    def run(device):
        tl.manual_seed(0)
        model = tl.nn.Sequential(tl.nn.Linear(8, 16), tl.nn.ReLU(), tl.nn.Linear(16, 3)).to(device)
        opt = tl.optim.Adam(model.parameters(), lr=1e-2)
        x = tl.randn(32, 8).to(device)
        y = tl.randint(0, 3, (32,)).to(device)
        losses, allocs = [], []
        for _ in range(6):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if device == "sim":
                allocs.append(sim.raw_backend.memory_stats()["driver_allocs"])
        return losses, allocs, [p.detach().cpu().numpy() for p in model.parameters()]

    cpu_losses, _, cpu_params = run("cpu")
    sim_losses, allocs, sim_params = run("sim")
    assert sim_losses == cpu_losses  # the same NumPy arithmetic, bit for bit
    for a, b in zip(cpu_params, sim_params):
        np.testing.assert_array_equal(a, b)
    assert allocs[1] == allocs[-1], f"driver allocations kept growing after warm-up: {allocs}"
    stats = sim.raw_backend.memory_stats()
    assert stats["pool_hits"] > 3 * stats["pool_misses"]


def test_empty_cache_gives_cached_blocks_back_and_the_next_step_refills_it(sim):
    x = tl.randn(64, 64).to("sim")
    for _ in range(3):
        (x @ x).relu().sum()
    be = sim.raw_backend
    before = be.memory_stats()
    assert before["cached_bytes"] > 0
    be.empty_cache()
    after = be.memory_stats()
    assert after["cached_bytes"] == 0 and after["driver_frees"] > before["driver_frees"]
    assert after["in_use_bytes"] == before["in_use_bytes"]  # x's block stays
    (x @ x).sum()
    assert be.memory_stats()["cached_bytes"] > 0


def test_a_block_is_not_handed_out_again_while_an_array_over_it_lives(sim):
    """A native array taken from a tensor outlives the tensor: its block stays out of the pool until it dies."""
    t = tl.arange(256, dtype=tl.float32).to("sim")
    native = t._x  # a NumPy array over the block
    del t
    gc.collect()
    others = [tl.full((256,), 7.0, device="sim") for _ in range(8)]  # same size class: would reuse a free block
    np.testing.assert_array_equal(native, np.arange(256, dtype=np.float32))
    cached = sim.raw_backend.memory_stats()["cached_bytes"]
    del native
    gc.collect()
    assert sim.raw_backend.memory_stats()["cached_bytes"] == cached + 1024  # now it is free
    assert all(float(o.sum()) == 7.0 * 256 for o in others)


def test_load_state_dict_into_a_sim_model_uploads_at_next_use(sim):
    tl.manual_seed(0)
    src = tl.nn.Linear(3, 2)
    dst = tl.nn.Linear(3, 2).to("sim")
    for p in dst.parameters():  # host mirrors exist and are current (a print, a widget)
        p.detach().numpy()
    up, _ = _counts(sim)
    dst.load_state_dict(src.state_dict())
    assert dst.weight.storage.dirty == "cpu" and _counts(sim)[0] == up  # written on the host, not moved yet
    assert dst.weight.storage in sim.pending
    out = dst(tl.ones(1, 3).to("sim"))
    assert dst.weight.storage.dirty is None and _counts(sim)[0] >= up + 2  # weight and bias uploaded
    np.testing.assert_allclose(out.detach().numpy(), src(tl.ones(1, 3)).detach().numpy(), rtol=1e-6)


def test_copies_and_pickles_stay_on_the_one_sim_device(sim):
    model = tl.nn.Linear(3, 2).to("sim")
    model(tl.ones(1, 3).to("sim")).sum().backward()
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        for p, q in zip(model.parameters(), clone.parameters()):
            assert type(q) is type(p) and q.device is p.device and q.requires_grad
            assert q.storage is not p.storage  # a copy, not the same memory
            np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
            np.testing.assert_array_equal(q.grad.numpy(), p.grad.numpy())
            assert q.grad.device is p.device
        x = tl.ones(1, 3).to("sim")
        np.testing.assert_array_equal(clone(x).detach().numpy(), model(x).detach().numpy())
    y = model(tl.ones(1, 3).to("sim"))
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(y)


def test_mixing_sim_and_cpu_in_one_op_is_a_clear_error(sim):
    with pytest.raises(RuntimeError, match="same device.*cpu and sim:0|same device.*sim:0 and cpu"):
        tl.ones(2, device="sim") + tl.ones(2)


def test_gradients_flow_back_across_the_transfer(sim):
    x = tl.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = (x.to("sim") ** 2).relu().sum()
    y.backward()
    assert x.grad.device == "cpu"
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -4.0, 6.0])
