"""``MemoryTimelineView`` without a browser: its model (``memory_model``), its static picture and its answers to the
browser. The browser half is ``tests/browser/test_memory_view.py``."""

from __future__ import annotations

import gc
import struct

import numpy as np
import pytest

import tinygrad_like as tl

pytest.importorskip("tinygrad_like.widgets")
from tinygrad_like.widgets import selection  # noqa: E402
from tinygrad_like.widgets.memory_model import MAX_COLUMNS, _columns, alive_rows, timeline_payload  # noqa: E402
from tinygrad_like.widgets.memory_png import memory_png  # noqa: E402
from tinygrad_like.widgets.memory_view import MemoryTimelineView  # noqa: E402

nn, F = tl.nn, tl.nn.functional


def step(net, opt, batch=32):
    loss = F.cross_entropy(net(tl.randn(batch, 64)), tl.randint(0, 10, (batch,)))
    opt.zero_grad()
    loss.backward()
    opt.step()


@pytest.fixture
def mlp():
    tl.manual_seed(0)
    net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    return net, tl.optim.Adam(net.parameters(), lr=1e-3)


def test_columns_keep_every_peak():
    total = np.zeros(10_000)
    total[1234] = 7  # a one-event spike
    cols = _columns(total, 100)
    assert len(cols) == 100 and 1234 in cols
    assert list(_columns(np.arange(5), 100)) == [0, 1, 2, 3, 4]


def test_payload_of_a_training_step(mlp):
    net, opt = mlp
    with tl.memory_timeline(model=net, optimizer=opt) as mem:
        step(net, opt)
    p = timeline_payload(mem)
    (run,) = p["runs"]
    s = run["series"]
    assert s["events"] == len(mem) and len(s["x"]) == len(mem) + 1 <= MAX_COLUMNS
    params = (64 * 128 + 128 + 128 * 10 + 10) * 4
    i = s["categories"].index("parameters")
    assert s["values"][i][0] == params and s["values"][i][-1] == params
    j = s["categories"].index("optimizer state")
    assert s["values"][j][0] == 0 and s["values"][j][-1] == 2 * params
    # (the batch and the labels are made outside any op: "other" spans, before and inside the forward)
    phases = [ph for _, _, ph in run["phases"] if ph != "other"]
    assert [ph for i, ph in enumerate(phases) if i == 0 or phases[i - 1] != ph] == ["forward", "backward", "optimizer"]
    # (the total drawn includes a pool's cache; on the CPU there is none: the peak is the highest column)
    assert run["peak"]["bytes"] == max(s["total"])
    assert run["peak"]["rows"][0]["bytes"] == 64 * 128 * 4  # the largest at the peak: 0.weight or its state


def test_the_view_records_live_and_answers_the_browser(mlp):
    net, opt = mlp
    view = MemoryTimelineView(model=net, optimizer=opt)
    assert view.timeline.recording
    step(net, opt)
    view.stop()
    assert not view.timeline.recording
    sent = []
    view.widget.send = sent.append
    view.on_message({"type": "alive", "run": 0, "index": -1})  # before the step: parameters and the data
    assert sent[-1]["type"] == "alive_info" and sent[-1]["categories"][0][0] == "parameters"
    for bad in ({"type": "alive", "run": 3, "index": 0}, {"type": "alive", "run": 0, "index": 10**9},
                {"type": "alive", "run": "0", "index": 0}, {"type": "select", "storage": -5}, {"junk": 1}):
        view.on_message(bad)
    assert len(sent) == 1
    bundle = view._repr_mimebundle_()
    assert "image/png" in bundle and bundle["text/plain"].startswith("<MemoryTimelineView:")
    view.close()
    assert view.closed


def test_clicking_a_row_selects_its_node_in_the_other_views(mlp):
    net, opt = mlp
    with tl.memory_timeline(model=net, optimizer=opt) as mem:
        loss = F.cross_entropy(net(tl.randn(8, 64)), tl.randint(0, 10, (8,)))
    saved = [a for a in mem.allocations.values() if a.category == "saved for backward" and a.node is not None]
    assert saved, "the ReLU's output is saved by it"

    class Probe:
        got = None

        def on_shared_select(self, node):
            self.got = node
    probe = selection.register(Probe())
    view = MemoryTimelineView(mem)
    try:
        view.on_message({"type": "select", "storage": saved[0].storage_id})
        assert probe.got is saved[0].node
    finally:
        selection.unregister(probe)
        view.close()
    del loss


def test_two_runs_side_by_side_on_one_scale(mlp):
    net, opt = mlp
    with tl.memory_timeline(model=net, optimizer=opt, name="batch 16") as small:
        step(net, opt, 16)
    with tl.memory_timeline(model=net, optimizer=opt, name="batch 256") as big:
        step(net, opt, 256)
    p = timeline_payload(small, big)
    assert [r["name"] for r in p["runs"]] == ["batch 16", "batch 256"]
    assert p["runs"][1]["peak"]["bytes"] > p["runs"][0]["peak"]["bytes"]
    png = memory_png(p)
    w, h = struct.unpack(">II", png[16:24])
    assert (w, h) == (480 * 2 + 8, 120)
    with pytest.raises(TypeError, match="recorded"):
        MemoryTimelineView("not a timeline")


def test_alive_rows_name_who_made_each_storage(mlp):
    net, opt = mlp
    with tl.memory_timeline(model=net, optimizer=opt) as mem:
        step(net, opt)
    info = alive_rows(mem, mem.peak.index)
    whats = {r["what"] for r in info["rows"]}
    assert "0.weight" in whats and any(w.startswith("Adam exp_avg") for w in whats)
    assert sum(b for _, b, _ in info["categories"]) == info["total"]


def test_a_live_view_draws_categories_while_it_records(mlp):
    net, opt = mlp
    view = MemoryTimelineView(model=net, optimizer=opt)
    try:
        loss = F.cross_entropy(net(tl.randn(8, 64)), tl.randint(0, 10, (8,)))
        view.refresh()  # (what a live redraw does during the cell)
        cats = view.widget.payload["runs"][0]["series"]["categories"]
        assert "saved for backward" in cats and view.widget.payload["runs"][0]["recording"]
        del loss
    finally:
        view.close()
    from tinygrad_like import events
    assert not events.ACTIVE  # (closing stopped the recording it made)


def test_a_per_cell_view_keeps_its_pause_button_and_stop_ends_it(mlp):
    net, opt = mlp
    view = MemoryTimelineView(model=net, optimizer=opt, per_cell=True, lines=False)
    try:
        step(net, opt)
        view.after_cell()
        assert view.widget.payload["runs"][0]["recording"]  # (the next cell records: Pause stays shown)
        assert view.timeline.recording
        view.stop()
        assert not view.timeline.recording and not view.per_cell
        view.after_cell()
        assert not view.timeline.recording  # (stopped: no further cell is recorded)
    finally:
        view.close()


def test_a_view_dropped_without_close_stops_its_recording(mlp):
    import gc

    from tinygrad_like import events
    net, opt = mlp
    view = MemoryTimelineView(model=net, optimizer=opt)
    assert events.ACTIVE
    from tinygrad_like.widgets._base import take_back
    take_back(view)
    del view
    gc.collect()
    assert not events.ACTIVE


def test_a_row_selects_its_storage_in_a_storage_view_and_its_node_in_a_graph_view(mlp):
    from tinygrad_like.widgets import GraphView, StorageView

    net, opt = mlp
    with tl.memory_timeline(model=net, optimizer=opt) as mem:
        loss = F.cross_entropy(net(tl.randn(8, 64)), tl.randint(0, 10, (8,)))
    saved = next(a for a in mem.allocations.values() if a.category == "saved for backward" and a.node is not None)
    storage_view = StorageView(model=net, user_ns=False)
    graph = GraphView(loss, net)
    view = MemoryTimelineView(mem)
    try:
        view.on_message({"type": "select", "storage": saved.storage_id})
        assert storage_view.widget.selected == saved.storage_id
        assert any(b["id"] == saved.storage_id for b in storage_view.widget.payload["blocks"])  # (shown: "other" open)
        assert graph.widget.selected  # (the node that made it: its box is selected)
    finally:
        for v in (view, graph, storage_view):
            v.close()


def test_payload_marks_the_copies_between_host_and_device():
    tl.manual_seed(0)
    net = nn.Linear(8, 4).to("sim")
    with tl.memory_timeline(model=net) as mem:
        y = net(tl.randn(2, 8).to("sim"))         # 64 bytes up
        y.tolist()                                # 32 bytes down
        net.weight.detach().numpy()               # 128 bytes down
    on_device = timeline_payload(mem)["runs"][0]
    assert on_device["device"] == "sim:0"
    tr = on_device["transfers"]
    assert tr["count"] == 3 and tr["d2h"] == [2, 32 + 128] and tr["h2d"] == [1, 64]
    assert [(m[1], m[2], m[3]) for m in tr["marks"]] == [("h2d", 64, "sim:0"), ("d2h", 32, "sim:0"),
                                                          ("d2h", 128, "sim:0")]
    # the host copies are drawn on the host's timeline, with every device's copies; each download's host copy
    # appears at the very column of its mark (every event is a column here)
    on_host = timeline_payload(mem, device="cpu")["runs"][0]
    assert on_host["transfers"]["count"] == 3
    s = on_host["series"]
    assert s["x"] == list(range(len(mem) + 1))
    copies = s["values"][s["categories"].index("host copies")]
    for x, direction, nbytes, _ in on_host["transfers"]["marks"]:
        assert copies[x] - copies[x - 1] == (nbytes if direction == "d2h" else 0)
    assert max(copies) == 32 + 128
    assert "host copies" not in on_device["series"]["categories"]
    assert memory_png(timeline_payload(mem, device="cpu")).startswith(b"\x89PNG")


def test_the_browser_chooses_the_device_drawn():
    gc.collect()  # (no device storage of an earlier test alive, as a rule: this recording holds cpu storages only)
    with tl.memory_timeline(name="cpu only") as other:
        tl.randn(64, 64).sum()
    other_has_sim = "sim:0" in other.devices  # (a storage another test left alive on sim would put it there)
    tl.manual_seed(0)
    net = nn.Linear(8, 4).to("sim")
    with tl.memory_timeline(model=net, name="sim") as mem:
        net(tl.randn(2, 8).to("sim")).tolist()
    view = MemoryTimelineView(mem, compare=other)
    runs = view.widget.payload["runs"]
    assert runs[0]["device"] == "sim:0" and set(runs[0]["devices"]) == {"sim:0", "cpu"}
    view.on_message({"type": "device", "device": "cpu"})
    runs = view.widget.payload["runs"]
    assert [r["device"] for r in runs] == ["cpu", "cpu"]
    assert "host copies" in runs[0]["series"]["categories"]
    assert "on cpu" in view.summary()
    sent = []
    view.widget.send = sent.append
    (copy,) = [t for t in mem.transfers if t.direction == "d2h"]
    view.on_message({"type": "alive", "run": 0, "index": copy.index})  # answered on the device drawn
    assert ["host copies", 32, "32 B"] in sent[-1]["categories"]
    # a device the recording does not have, or no name, changes nothing
    for bad in ({"type": "device", "device": "cuda:7"}, {"type": "device", "device": 0}, {"type": "device"}):
        view.on_message(bad)
        assert view.device == "cpu"
    view.on_message({"type": "device", "device": "sim:0"})
    runs = view.widget.payload["runs"]
    # (the compared run is drawn on sim:0 only if it has storages there; else on its own default, the cpu)
    assert [r["device"] for r in runs] == ["sim:0", "sim:0" if other_has_sim else "cpu"]
    view.close()
    # a device named as a learner would ("sim", not "sim:0"); one the recording lacks draws its default
    named = MemoryTimelineView(mem, device="sim")
    assert named.widget.payload["runs"][0]["device"] == "sim:0" and "on sim:0" in named.summary()
    named.close()
    absent = MemoryTimelineView(other, device="sim") if not other_has_sim else None
    if absent is not None:
        assert absent.widget.payload["runs"][0]["device"] == "cpu"
        absent.close()
    with pytest.raises(RuntimeError):
        MemoryTimelineView(mem, device="tpu")
