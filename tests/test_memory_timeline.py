"""``tl.memory_timeline()``: the bytes alive over a span of code, by what they are for (issue 33's model).

The expected byte counts are computed by hand from what each op needs for its backward (softmax keeps its output;
a linear layer its input; attention its query, key, value, output and the log-sum-exp of each row) and from the
sizes of the tensors, never read back from the recorder. The live total on the CPU is compared with tracemalloc,
which NumPy reports every array's memory to.
"""

from __future__ import annotations

import gc
import tracemalloc

import pytest

import tinygrad_like as tl

nn, F = tl.nn, tl.nn.functional
F32 = 4


def last(mem):
    return len(mem) - 1


def test_a_linear_layer_forward_and_backward():
    tl.manual_seed(0)
    lin = nn.Linear(16, 4)
    x = tl.randn(8, 16)
    with tl.memory_timeline(model=lin) as mem:
        loss = lin(x).sum()
        loss.backward()
    params = (4 * 16 + 4) * F32
    cats = mem.by_category(last(mem))
    assert cats["parameters"] == params
    assert cats["gradients"] == params                    # weight.grad and bias.grad
    assert cats["saved for backward"] == 8 * 16 * F32      # the linear layer keeps its input x for weight's grad
    assert cats["outputs"] == F32                          # the loss
    assert cats["temporaries"] == 0                        # the (8, 4) result and backward's gradients died
    x_life = mem.allocations[x._storage.id]
    assert (x_life.start, x_life.category, x_life.saved_by.split(" #")[0]) == (-1, "saved for backward", "Linear")
    out = [a for a in mem.allocations.values() if a.nbytes == 8 * 4 * F32 and a.phase == "forward"]
    assert [(a.category, a.op, a.module) for a in out] == [("temporaries", "Linear", "Linear")]
    assert [p for _, _, p in mem.phase_spans()] == ["forward", "backward"]
    # at the peak the (8, 4) result (or its gradient) was alive beside parameters, gradients and x
    assert mem.peak.bytes >= 2 * params + 8 * 16 * F32 + F32


def test_softmax_keeps_its_output_not_its_input():
    x = tl.randn(4, 10, requires_grad=True)
    with tl.memory_timeline() as mem:
        y = x.softmax(-1)
        z = (y * y).sum()
    cats = mem.by_category(last(mem))
    assert cats["saved for backward"] == 4 * 10 * F32      # y, kept by softmax (and by the product: once)
    assert mem.allocations[y._storage.id].saved_by.startswith("Softmax")
    assert mem.allocations[x._storage.id].category == "inputs and data"
    assert cats["outputs"] == F32                          # z
    del z


def test_an_attention_block_keeps_q_k_v_the_output_and_a_log_sum_exp_per_row():
    b, h, t, d = 2, 2, 8, 4
    q, k, v = (tl.randn(b, h, t, d, requires_grad=True) for _ in range(3))
    with tl.memory_timeline() as mem:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    cats = mem.by_category(last(mem))
    qkv = b * h * t * d * F32
    assert cats["saved for backward"] == 3 * qkv + qkv + b * h * t * F32   # q, k, v, out, lse (float32 per row)
    assert mem.allocations[out._storage.id].category == "saved for backward"


def test_an_adam_step_keeps_two_moments_per_parameter():
    tl.manual_seed(0)
    net = nn.Sequential(nn.Linear(10, 20), nn.Tanh(), nn.Linear(20, 3))
    opt = tl.optim.Adam(net.parameters(), lr=1e-3)
    loss = net(tl.randn(5, 10)).sum()
    loss.backward()
    with tl.memory_timeline(model=net, optimizer=opt) as mem:
        opt.step()
    params = (10 * 20 + 20 + 20 * 3 + 3) * F32
    cats = mem.by_category(last(mem))
    assert cats["optimizer state"] == 2 * params           # exp_avg and exp_avg_sq; step is a Python int
    assert cats["parameters"] == cats["gradients"] == params
    states = [a for a in mem.allocations.values() if a.category == "optimizer state"]
    assert {a.phase for a in states} == {"optimizer"}
    assert "Adam exp_avg_sq of 0.weight" in {a.name for a in states}


def test_no_grad_saves_nothing_and_frees_as_it_goes():
    tl.manual_seed(0)
    net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
    x = tl.randn(16, 32)
    with tl.memory_timeline(model=net) as with_grad:
        y = net(x)
    del y
    with tl.no_grad(), tl.memory_timeline(model=net) as without:
        y = net(x)
    assert tuple(y.shape) == (16, 2)
    # x for the first layer, then each ReLU's output (kept by the ReLU and by the next layer: counted once)
    assert with_grad.by_category(last(with_grad))["saved for backward"] == (16 * 32 + 2 * 16 * 64) * F32
    assert without.by_category(last(without))["saved for backward"] == 0
    peak_with = with_grad.peak.bytes - with_grad.by_category(-1)["parameters"]
    peak_without = without.peak.bytes - without.by_category(-1)["parameters"]
    assert peak_without < peak_with


def test_the_live_total_agrees_with_tracemalloc_on_a_50_mb_model():
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with tl.memory_timeline(lines=False) as mem:
            net = nn.Sequential(*(nn.Linear(2048, 2048) for _ in range(3)))   # 3 x 16 MiB of weights
            y = net(tl.randn(64, 2048))
        traced = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    live = int(mem.totals("cpu")[-1])
    assert live > 48 * 2**20
    # what tracemalloc sees beyond the storages: Python objects and NumPy's bookkeeping, within 2%
    assert abs(traced - live) <= 0.02 * live, (traced, live)
    del net, y


def test_recording_needs_no_view_and_costs_nothing_once_stopped():
    from tinygrad_like import events, storage

    tracking = storage._tracking  # (another test may have listed the storages: that keeps a registry for good)
    with tl.memory_timeline() as mem:
        a = tl.ones(100)
    assert mem.allocations[a._storage.id].category == "inputs and data"
    assert not events.ACTIVE and storage._tracking == tracking  # (the recording started no registry)
    before = dict(events._free_watch)
    b = tl.ones(100) + 1
    assert events._free_watch == before  # (nobody listens: no storage is watched for its death any more)
    if not tracking:
        assert b._st is None  # (a fresh result gets no storage until asked: the recording left nothing on)
    with pytest.raises(RuntimeError, match="records once"):
        mem.start()


def test_device_pools_and_the_default_device():
    tl.manual_seed(0)
    net = nn.Linear(8, 8).to("sim")
    with tl.memory_timeline(model=net) as mem:
        y = net(tl.randn(4, 8).to("sim"))
        y.sum().backward()
    s = mem.series()
    assert mem._default_device() == "sim:0"
    assert s["parameters"][-1] == (64 + 8) * F32
    cache = s["pool cache (free)"]
    assert len(cache) == len(mem) + 1
    # each free gives its buffer back to the pool: the cache grows at that very event (not one event late)
    pool = tl.device("sim").raw_backend.pool
    frees = [a for a in mem.allocations.values() if a.end is not None and a.device == "sim:0"]
    assert frees and all(cache[a.end + 1] > cache[a.end] or cache[a.end + 1] >= a.nbytes for a in frees[:3])
    assert cache[-1] == pool.cached
    # the peak on another device is that device's
    cpu_peak = mem.peak_on("cpu")
    assert cpu_peak.device == "cpu" and cpu_peak.bytes == max(mem.totals("cpu"))


def test_gradients_dropped_by_zero_grad_are_still_gradients():
    # a training loop's zero_grad() (set to None) frees the gradients before the recording ends: they were seen
    # when the optimizer stepped
    tl.manual_seed(0)
    net = nn.Linear(12, 5)
    opt = tl.optim.SGD(net.parameters(), lr=0.1)
    with tl.memory_timeline(model=net, optimizer=opt) as mem:
        net(tl.randn(3, 12)).sum().backward()
        opt.step()
        opt.zero_grad()
    grads = [a for a in mem.allocations.values() if a.category == "gradients"]
    assert sorted(a.name for a in grads) == ["bias.grad", "weight.grad"]
    assert all(a.end is not None for a in grads)  # (freed inside the recording)
    assert sum(a.nbytes for a in grads) == (12 * 5 + 5) * F32


def test_a_tensor_made_inside_a_forward_outside_any_op_is_forward():
    class WithPositions(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(16, 4)

        def forward(self, x):
            return x + self.emb(tl.arange(x.shape[1]))

    m = WithPositions()
    with tl.memory_timeline(model=m) as mem:
        y = m(tl.randn(2, 6, 4))
    positions = [a for a in mem.allocations.values() if a.start >= 0 and a.dtype == "int64" and a.nbytes == 6 * 8]
    assert [a.phase for a in positions] == ["forward"]
    assert [p for _, _, p in mem.phase_spans()] == ["other", "forward"]  # (the input, then the forward)
    del y


def test_one_block_of_a_transformer_keeps_what_its_ops_read_back():
    # a pre-norm block on x of (B, T, C): per op, what its backward reads, in units U = B*T*C floats:
    # ln_1: its input (U); qkv Linear: ln_1's output (U); q @ k^T and att @ v: the qkv buffer (3U, one storage);
    # softmax: its output (B * heads * T * T floats); the causal mask (bool T*T); out projection: its input (U);
    # ln_2: its input (U); fc Linear: ln_2's output (U); GELU: its input (4U); fc2: GELU's output (4U). The block's
    # input is not its own (made before), its output is (the next op keeps it): 16U + softmax's + T*T bytes.
    B, T, C, H = 4, 8, 16, 2

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
            self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            self.fc, self.gelu, self.fc2 = nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C)
            self.register_buffer("mask", tl.tril(tl.ones(T, T)).view(1, 1, T, T))

        def forward(self, x):
            q, k, v = self.qkv(self.ln_1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (C // H) ** 0.5)
            att = att.masked_fill(self.mask == 0, float("-inf")).softmax(-1)
            x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))
            return x + self.fc2(self.gelu(self.fc(self.ln_2(x))))

    tl.manual_seed(0)
    net = nn.Sequential(Block(), Block(), nn.LayerNorm(C))
    with tl.memory_timeline(model=net) as mem:
        out = net(tl.randn(B, T, C))
    first, last_ = mem.span("1")
    kept = mem.by_category(last_)["saved for backward"] - mem.by_category(first - 1)["saved for backward"]
    U = B * T * C * F32
    assert kept == 16 * U + B * H * T * T * F32 + T * T  # (the mask: one byte per bool)
    with pytest.raises(KeyError, match="no allocation was made inside module 'nope'"):
        mem.span("nope")
    del out


@pytest.mark.cuda
def test_on_the_emulated_gpu_its_pool_cache_is_drawn_too():
    try:
        tl.device("cuda-emu")
    except RuntimeError as e:
        pytest.skip(str(e))
    tl.manual_seed(0)
    net = nn.Linear(16, 8).to("cuda-emu")
    opt = tl.optim.SGD(net.parameters(), lr=0.1)
    with tl.memory_timeline(model=net, optimizer=opt) as mem:
        for _ in range(2):
            net(tl.randn(4, 16).to("cuda-emu")).sum().backward()
            opt.step()
            opt.zero_grad()
    assert mem._default_device() == "cuda-emu:0"
    s = mem.series()
    assert s["parameters"][-1] == (16 * 8 + 8) * F32
    assert (s["pool cache (free)"] > 0).any()  # (freed buffers wait in the device's pool for the next step)
    assert {a.name for a in mem.allocations.values() if a.category == "gradients"} == {"weight.grad", "bias.grad"}


def test_gradients_of_every_step_are_gradients():
    tl.manual_seed(0)
    net = nn.Linear(10, 6)
    opt = tl.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    with tl.memory_timeline(model=net, optimizer=opt) as mem:
        for _ in range(3):
            opt.zero_grad()
            net(tl.randn(4, 10)).sum().backward()
            opt.step()
    params = (10 * 6 + 6) * F32
    grads = sum(a.nbytes for a in mem.allocations.values() if a.category == "gradients")
    assert grads == 3 * params  # (each step's, the first two freed by the next zero_grad)


def test_the_gradients_a_recording_starts_with_are_gradients():
    tl.manual_seed(0)
    net = nn.Linear(10, 6)
    opt = tl.optim.SGD(net.parameters(), lr=0.1)
    net(tl.randn(4, 10)).sum().backward()  # (gradients exist before the recording)
    with tl.memory_timeline(model=net, optimizer=opt) as mem:
        opt.zero_grad()  # (frees them first thing)
    assert {a.name for a in mem.allocations.values() if a.category == "gradients"} == {"weight.grad", "bias.grad"}


def test_a_view_of_an_older_storage_changes_neither_its_maker_nor_the_phase():
    w = tl.randn(8, 4, requires_grad=True)
    x = tl.randn(3, 4)
    with tl.memory_timeline() as mem:
        y = x @ w.t()
    life = mem.allocations[w._storage.id]
    assert (life.start, life.op) == (-1, None)
    assert mem.allocations[y._storage.id].op is not None
    assert "other" not in mem.phases[-1:]  # (the product's result: forward)


def test_a_temporary_outside_any_graph_is_a_temporary():
    h = tl.randn(256, 256)
    with tl.no_grad(), tl.memory_timeline() as mem:
        h.add_(1)  # (computed in a temporary, copied back)
    made = [a for a in mem.allocations.values() if a.start >= 0]
    assert [a.category for a in made] == ["temporaries"] * len(made)
    with tl.memory_timeline() as mem:
        batch = tl.randn(64, 64)
        out = batch @ batch
    assert mem.allocations[batch._storage.id].category == "inputs and data"  # (it outlived an op)
    del out


def test_a_deep_copy_made_while_recording_is_recorded():
    import copy

    tl.manual_seed(0)
    net = nn.Linear(32, 32)
    with tl.memory_timeline() as mem:
        ema = copy.deepcopy(net)
    made = sum(a.nbytes for a in mem.allocations.values() if a.start >= 0)
    assert made == (32 * 32 + 32) * F32
    del ema
    gc.collect()


def test_overlapping_recordings_leave_the_scope_setting_as_it_was():
    from tinygrad_like import sites

    before = sites._scopes
    a = tl.memory_timeline().start()
    b = tl.memory_timeline().start()
    a.stop()  # (stopped in the other order than started)
    assert sites._scopes is True
    b.stop()
    assert sites._scopes == before


def test_a_recording_dropped_while_it_runs_stops_listening():
    from tinygrad_like import events, sites

    requested = sites._requested
    mem = tl.memory_timeline().start()
    assert events.ACTIVE
    del mem
    gc.collect()
    assert not events.ACTIVE
    assert sites._requested == requested  # (a recording asks for no graph lines: it walks the stack itself)


def test_a_profile_does_not_make_storages_watched():
    from tinygrad_like import events


    before = len(events._free_watch)
    with tl.profile():
        keep = [tl.ones(10) + i for i in range(5)]
    assert len(events._free_watch) == before  # (only a subscriber that names StorageFreed pays for it)
    del keep


def test_max_events_stops_a_runaway_recording():
    with tl.memory_timeline(max_events=10) as mem:
        for _ in range(20):
            tl.ones(4) + 1
    assert mem.truncated and len(mem) == 10 and not mem.recording
    assert "stopped at 10 events" in mem.summary()


def test_bfloat16_halves_what_is_kept_and_the_parameters():
    def run(dtype):
        tl.manual_seed(0)
        net = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64)).to(dtype)
        x = tl.randn(16, 64).to(dtype)
        with tl.memory_timeline(model=net) as mem:
            y = net(x)
        cats = mem.by_category(len(mem) - 1)
        del y
        return cats

    f32, bf16 = run(tl.float32), run(tl.bfloat16)
    assert bf16["parameters"] * 2 == f32["parameters"] == (64 * 128 + 128 + 128 * 64 + 64) * 4
    assert bf16["saved for backward"] * 2 == f32["saved for backward"] > 0


def test_a_device_tensor_read_on_the_host_keeps_a_host_copy_until_it_or_the_copy_is_dropped():
    x = tl.randn(250, device="sim")  # 1,000 bytes of float32
    with tl.memory_timeline() as mem:
        y = x * 2
        y.numpy()                 # a download (d2h) into a host copy the storage keeps
        y.add_(1)                 # a device write: the copy is stale, no bytes made
        y.numpy()                 # downloaded again, into the same copy
        y._storage.drop_host()    # the copy is dropped: the storage is on the device only
        values = y.tolist()       # read once more: a second copy
        sid = y._storage.id
        del y                     # the storage dies, and its copy with it
    assert len(values) == 250
    home = mem.allocations[sid]
    moved = [t for t in mem.transfers if t.storage_id == sid]
    assert [(t.direction, t.nbytes, t.device) for t in moved] == [("d2h", 1000, "sim:0")] * 3
    assert all(t.line and "test_memory_timeline.py" in t.line for t in moved)
    copies = [c for c in mem.host_copies if c.storage_id == sid]
    assert [(c.device, c.nbytes, c.category) for c in copies] == [("cpu", 1000, "host copies")] * 2
    first, second = copies
    assert first.start == moved[0].index and moved[0].index < moved[1].index < first.end < second.start
    assert second.start == moved[2].index and second.end == home.end
    assert "host copy of" in first.name and "sim:0" in first.name
    # counted on the host, not on the device; the device's bytes are the storage's own
    on_cpu = mem.series("cpu")["host copies"]
    assert on_cpu[moved[0].index + 1] - on_cpu[moved[0].index] == 1000
    assert on_cpu[first.end + 1] - on_cpu[first.end] == -1000
    assert on_cpu[-1] == on_cpu[0]
    assert "host copies" not in {a.category for a in mem.alive_at(moved[0].index, "sim:0")}
    assert mem.transfer_totals("sim:0") == {"d2h": (3, 3000), "h2d": (0, 0)}
    assert "to the host (d2h)" in mem.summary()


def test_a_host_write_into_a_device_tensor_is_uploaded_at_its_next_use():
    y = tl.zeros(250, device="sim")
    y.numpy()  # a host copy made before the recording: alive from its start
    with tl.memory_timeline() as mem:
        y.copy_(tl.ones(250))  # written into the host copy: nothing moves yet
        z = y + 1              # the device's next use uploads it (h2d)
    sid = y._storage.id
    assert [(t.direction, t.nbytes) for t in mem.transfers if t.storage_id == sid] == [("h2d", 1000)]
    upload = next(t for t in mem.transfers if t.storage_id == sid)
    assert upload.index < mem.allocations[z._storage.id].start
    (copy,) = [c for c in mem.host_copies if c.storage_id == sid]
    assert copy.start == -1 and copy.end is None
    assert mem.transfer_totals() == {"d2h": (0, 0), "h2d": (1, 1000)}
    assert z.tolist() == [2.0] * 250


def test_on_the_cpu_nothing_is_copied():
    tl.manual_seed(0)
    net = nn.Linear(16, 4)
    with tl.memory_timeline(model=net) as mem:
        net(tl.randn(8, 16)).sum().backward()
        grad = net.weight.grad.numpy()
    assert grad.shape == (4, 16)
    assert mem.transfers == [] and mem.host_copies == []
    assert mem.transfer_totals() == {"d2h": (0, 0), "h2d": (0, 0)}


def test_a_host_copy_made_before_the_recording_ends_with_its_storage_and_to_device_is_an_upload():
    y = tl.ones(100, device="sim")
    y.numpy()  # a host copy before the recording: alive from its start
    sid = y._storage.id
    with tl.memory_timeline() as mem:
        z = tl.arange(50.0).to("sim")  # an upload into a new storage: 200 bytes up
        del y                          # the storage dies, and its host copy with it
        w = z.cpu()                    # down into a new host tensor: no host copy kept by z's storage
    (copy,) = [c for c in mem.host_copies if c.storage_id == sid]
    assert copy.start == -1 and copy.end == mem.allocations[sid].end is not None
    up, down = mem.transfers
    assert (up.direction, up.nbytes, up.storage_id) == ("h2d", 200, z._storage.id)
    assert (down.direction, down.nbytes, down.storage_id) == ("d2h", 200, z._storage.id)
    assert up.index == mem.allocations[z._storage.id].start + 1  # (right after the storage it fills)
    assert z._storage.residency == "gpu" and w.tolist() == [float(i) for i in range(50)]
    on_cpu = mem.series("cpu")["host copies"]
    assert on_cpu[0] == 400 and on_cpu[-1] == 0  # (y's copy alive at the start; z's made and dropped by .cpu())
