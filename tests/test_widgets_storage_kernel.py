"""``StorageView`` and ``KernelTimeline``: their models, drawings and widget HTML, without a browser.

The second memory space of ``tests/devbackend.py`` stands in for a GPU, so residency "gpu" / "both",
the dirty side and host<->device transfers show up on any machine.
"""

from __future__ import annotations

import gc
import os
import sys
import time

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pytest.importorskip("ipywidgets")

import numpy as np  # noqa: E402
from devbackend import DevBackend  # noqa: E402

import tinygrad_like as tl  # noqa: E402
from tinygrad_like import events  # noqa: E402
from tinygrad_like.device import register_device, unregister_device  # noqa: E402
from tinygrad_like.widgets import _base, kernel_cells  # noqa: E402
from tinygrad_like.widgets import kernel_view as kv  # noqa: E402
from tinygrad_like.widgets import storage_view as sv  # noqa: E402

THIS_FILE = os.path.basename(__file__)
PNG_DIR = os.environ.get("TL_WIDGET_PNG_DIR", "/tmp/widget_pngs")


def lineno() -> int:
    return sys._getframe(1).f_lineno



@pytest.fixture
def views():
    """Open views through ``views(cls, ...)``; every one is closed afterwards (so none keeps listening)."""
    opened = []

    def make(cls, *args, **kwargs):
        v = cls(*args, **kwargs)
        opened.append(v)
        return v

    yield make
    for v in opened:
        v.close()


def on_dev(values):
    return tl.tensor(values, dtype=tl.float32, device="testdev")


def host_write(t, values):
    """Write into the host mirror of a device tensor, as ``load_state_dict`` does."""
    t.storage.host_array()
    t.storage.host[:] = np.asarray(values, dtype=t.dtype.np).reshape(-1)
    t.storage.mark_host_write()


def row_of(rows, t):
    found = [r for r in rows if r["id"] == t.storage.id]
    assert len(found) == 1, f"expected one row for storage {t.storage.id}, got {len(found)}"
    return found[0]


def save_png(fig, name):
    os.makedirs(PNG_DIR, exist_ok=True)
    with open(os.path.join(PNG_DIR, name), "wb") as f:
        fig.savefig(f, format="png", dpi=fig.dpi, bbox_inches="tight")


# ---- storage model ----------------------------------------------------------------------------------
def test_storage_model_lists_live_storages_with_shapes():
    a = tl.zeros(3, 4)
    b = a.T  # a view: same storage, another shape
    c = tl.ones(5, dtype=tl.int64)
    rows = sv.storage_model(shapes=sv.tensor_shapes())
    ra, rc = row_of(rows, a), row_of(rows, c)
    assert (ra["numel"], ra["dtype"], ra["nbytes"], ra["device"]) == (12, "float32", 48, "cpu")
    assert set(ra["shapes"]) == {(3, 4), (4, 3)} and b.storage is a.storage
    assert (rc["numel"], rc["dtype"], rc["nbytes"], rc["shapes"]) == (5, "int64", 40, [(5,)])
    assert ra["residency"] == "cpu" and ra["dirty"] is None and ra["fence"] is False
    assert ra["version"] == 0 and ra["last_write"] is None
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    cid = c.storage.id
    del c
    gc.collect()
    assert cid not in {r["id"] for r in sv.storage_model()}, "a dead storage is still listed"


def test_storage_model_version_and_write_site_after_inplace_op():
    t = tl.zeros(4)
    line = lineno() + 1
    t.add_(1)
    t[0] = 3.0
    r = row_of(sv.storage_model(), t)
    assert r["version"] == 2
    assert r["last_write"]["version"] == 2 and r["last_write"]["op"] == "__setitem__"
    assert f"{THIS_FILE}:{line + 1}" in r["last_write"]["site"]


def test_storage_model_names_from_model_dict_and_storage_name():
    net = tl.nn.Sequential(tl.nn.Linear(3, 2), tl.nn.ReLU(), tl.nn.Linear(2, 1))
    x = tl.randn(4, 3)
    mine = tl.zeros(2)
    mine.storage.name = "my.buffer"
    rows = sv.storage_model(names={"inputs": x, "alias": mine}, model=net)
    assert row_of(rows, net[0].weight)["name"] == "0.weight"
    assert row_of(rows, net[2].bias)["name"] == "2.bias"
    assert row_of(rows, net[0].weight)["shapes"] == [(2, 3)], "named tensors give their shape"
    assert row_of(rows, x)["name"] == "inputs"
    assert row_of(rows, mine)["name"] == "my.buffer, alias", "Storage.name comes first"
    net(x).sum().backward()
    rows = sv.storage_model(model=net)
    assert row_of(rows, net[0].weight.grad)["name"] == "0.weight.grad"
    assert row_of(rows, x)["name"] == ""


def test_storage_totals_per_device_and_residency(dev):
    c = tl.zeros(10)  # 40 B on the host
    g = on_dev([1.0, 2.0, 3.0])  # 12 B, device only
    m = on_dev([1.0, 2.0, 3.0, 4.0])  # 16 B on the device with a host mirror
    m.numpy()
    rows = sv.storage_model([c.storage, g.storage, m.storage])
    assert [r["residency"] for r in rows] == ["cpu", "gpu", "both"]
    tot = sv.storage_totals(rows)
    assert tot["storages"] == 3 and tot["bytes"] == 68 and tot["host_bytes"] == 40 + 16
    devs = {d["device"]: d for d in tot["devices"]}
    assert devs["cpu"]["bytes"] == 40 and devs["cpu"]["storages"] == 1
    assert devs["testdev:0"]["bytes"] == 28 and devs["testdev:0"]["host_mirror_bytes"] == 16
    assert [(b["device"], b["residency"], b["bytes"]) for b in tot["by_residency"]] == [
        ("cpu", "cpu", 40), ("testdev:0", "both", 16), ("testdev:0", "gpu", 12)]


def test_transfer_log_residency_and_dirty_side(dev, views):
    view = views(sv.StorageView)
    t = on_dev([1.0, 2.0, 3.0])
    view.refresh()
    assert row_of(view.rows, t)["residency"] == "gpu"
    t.numpy()  # d2h: gpu -> both
    host_write(t, [5.0, 6.0, 7.0])  # host copy newer
    view.refresh()
    r = row_of(view.rows, t)
    assert (r["residency"], r["dirty"]) == ("both", "cpu") and r["dirty_text"].startswith("device stale")
    _ = t + 1  # the device's next op uploads: h2d
    t.add_(1)  # a device write: the host mirror is stale
    view.refresh()
    r = row_of(view.rows, t)
    assert (r["residency"], r["dirty"], r["version"]) == ("both", "gpu", 1)
    tx = view.transfer_totals()
    assert (tx["d2h"]["count"], tx["d2h"]["bytes"]) == (1, 12)
    assert (tx["h2d"]["count"], tx["h2d"]["bytes"]) == (1, 12)
    assert tx["d2h"]["seconds"] > 0 and tx["h2d"]["seconds"] > 0
    assert [(e.direction, e.storage_id) for e in view.transfers] == [("d2h", t.storage.id), ("h2d", t.storage.id)]
    view.show_other = True  # t has no name: it is drawn under "other (N)"
    (block,) = [b for b in view.widget.payload["blocks"] if b["id"] == t.storage.id]
    assert [a["dir"] for a in block["arrows"]] == ["h2d", "d2h"] and block["arrows"][0]["text"].startswith("↓ h2d 1×")
    assert view.transfers_of(t.storage.id)["h2d"]["bytes"] == 12
    assert sv.transfer_summary(view.transfers) == tx
    view.clear_transfers()
    assert view.transfer_totals()["d2h"]["count"] == 0 and not view.transfers and not view.transfers_of(t.storage.id)


def test_pool_without_device_with_poolless_device_and_with_a_pool():
    from tinygrad_like.backends.numpy_backend import NumpyBackend

    assert sv.pool_text(sv.pool_model([tl.device("cpu")])) == sv.NO_POOL_TEXT

    class PoollessBackend(NumpyBackend):  # a device whose backend reports no pool (no memory_stats)
        is_host = False

    try:
        poolless = sv.pool_model([register_device("poolless", PoollessBackend())])
    finally:
        unregister_device("poolless")
    assert poolless == [{"device": "poolless:0", "available": False, "in_use_bytes": None, "cached_bytes": None,
                         "hits": None, "misses": None, "hit_rate": None}]
    assert "backend reports no pool" in sv.pool_text(poolless)

    class PooledBackend(DevBackend):
        def memory_stats(self):
            return {"in_use_bytes": 3 << 20, "cached_bytes": 1 << 20, "hits": 3, "misses": 1}

    pooled = register_device("pooldev", PooledBackend())
    try:
        p = sv.pool_model([pooled])[0]
        assert (p["available"], p["in_use_bytes"], p["cached_bytes"], p["hit_rate"]) == (True, 3 << 20, 1 << 20, 0.75)
        text = sv.pool_text([p])
        assert "3.00 MiB" in text and "1.00 MiB" in text and "75.0%" in text
    finally:
        unregister_device("pooldev")


def _device_with_pool(pool):
    """A stand-in for the cuda device whose backend holds ``pool`` (what StorageView reads)."""

    class Backend:
        pass

    Backend.pool = pool

    class FakeDevice:
        is_host = False
        raw_backend = Backend()

        def __str__(self):
            return "cuda:0"

    return FakeDevice()


def test_pool_of_the_cuda_backend_reports_its_hit_rate():
    """The real BufferPool (its stats() names the counters pool_hits / pool_misses), behind a device."""
    from itertools import count

    from tinygrad_like.backends.cuda.pool import BufferPool

    addresses = count(0x1000, 0x100000)
    pool = BufferPool(lambda n: next(addresses), lambda a: None)
    pool.free(pool.alloc(1000))
    pool.alloc(700)  # same size class: a hit
    pool.alloc(5 << 20)  # a miss

    (p,) = sv.pool_model([_device_with_pool(pool)])
    assert (p["hits"], p["misses"]) == (1, 2) and abs(p["hit_rate"] - 1 / 3) < 1e-12, p
    assert "33.3%" in sv.pool_text([p])


def test_pool_read_from_a_pool_attribute():
    class Pool:
        in_use_bytes, cached_bytes, hit_rate = 100, 50, 0.5

    (p,) = sv.pool_model([_device_with_pool(Pool())])
    assert (p["device"], p["in_use_bytes"], p["cached_bytes"], p["hit_rate"]) == ("cuda:0", 100, 50, 0.5)


def test_view_keeps_no_storage_alive(views):
    view = views(sv.StorageView)
    t = tl.ones(7)
    sid = t.storage.id
    view.refresh()
    assert sid in {r["id"] for r in view.rows}
    del t
    gc.collect()
    assert sid not in {s.id for s in tl.live_storages()}, "the view (or its model) keeps the storage alive"
    view.after_cell()
    assert sid not in {r["id"] for r in view.rows}
    assert sid not in {b["id"] for b in view.widget.payload["blocks"]}


# ---- storage widget -----------------------------------------------------------------------------------
def _block(view, t):
    found = [b for b in view.widget.payload["blocks"] if b["id"] == t.storage.id]
    assert len(found) == 1, f"storage {t.storage.id} is not drawn"
    return found[0]


def test_storage_view_payload_and_classes(views):
    gc.collect()  # no device storage left over from earlier tests
    w = tl.zeros(2, 3)
    view = views(sv.StorageView, names={"w": w}, user_ns=False)
    assert {"tl-view", "tl-storage-view"} <= set(view.widget._dom_classes)
    assert len(view.rows) == len(tl.live_storages())
    b = _block(view, w)
    assert (b["label"], b["version"], b["badge"]["text"], b["state"]) == ("w", 0, "v0", "cpu")
    w.mul_(2)
    view.after_cell()
    b = _block(view, w)
    assert b["version"] == 1 and b["badge"]["text"] == "v1"
    assert b["badge"]["site"].startswith("v1 mul_ at ") and THIS_FILE in b["badge"]["site"]
    assert view.summary() == "<StorageView>"


def test_storage_view_updates_live_from_events(views):
    t = tl.zeros(3)
    view = views(sv.StorageView, names={"t": t}, user_ns=False)
    time.sleep(1.1 / _base.MAX_REFRESH_HZ)  # past the throttle window: the next event redraws at once
    before = view.redraws
    t.fill_(2.0)  # one event (VersionBump), no temporary storage
    assert view.redraws == before + 1
    assert _block(view, t)["version"] == 1
    t.fill_(3.0)  # within the throttle window: marked stale, drawn after the cell
    assert view.redraws == before + 1 and view._stale
    view.after_cell()
    assert _block(view, t)["version"] == 2


def test_storage_view_limits_rows():
    keep = [tl.zeros(1) for _ in range(3)]
    view = sv.StorageView(live=False, max_rows=2, user_ns={f"k{i}": k for i, k in enumerate(keep)})
    try:
        view.refresh()
        assert len(view.widget.payload["blocks"]) == 2
        assert any("not drawn" in n["text"] for n in view.widget.payload["notes"])
    finally:
        view.close()


# ---- kernel model ------------------------------------------------------------------------------------------
L = kv.Launch


def test_kernel_stats_and_cell_summary():
    launches = [L("matmul", "cpu", 0.0, 3e-3, 1), L("add", "cpu", 0.004, 1e-3, 1), L("matmul", "cpu", 10.0, 1e-3, 2),
                L("add", "testdev:0", 10.002, 3e-3, 2)]
    rows = kv.kernel_stats(launches)
    assert [(r["name"], r["device"], r["calls"]) for r in rows] == [
        ("matmul", "cpu", 2), ("add", "testdev:0", 1), ("add", "cpu", 1)]
    assert rows[0]["total_s"] == pytest.approx(4e-3) and rows[0]["mean_s"] == pytest.approx(2e-3)
    assert [r["share"] for r in rows] == pytest.approx([0.5, 0.375, 0.125])
    cells = kv.cell_summary(launches)
    assert [(c["cell"], c["launches"]) for c in cells] == [(1, 2), (2, 2)]
    assert cells[0]["kernel_s"] == pytest.approx(4e-3) and cells[0]["span_s"] == pytest.approx(5e-3)
    assert cells[1]["span_s"] == pytest.approx(5e-3)


def test_compressed_x_cuts_idle_time_between_cells():
    launches = [L("a", "cpu", 100.0, 1e-3, 0), L("b", "cpu", 100.002, 3e-3, 0), L("a", "cpu", 500.0, 1e-3, 1)]
    x, span = kv.compressed_x([r.start for r in launches], [r.seconds for r in launches], [r.cell for r in launches])
    assert list(x[:2]) == pytest.approx([0.0, 0.002])
    assert x[2] == pytest.approx(0.005 + 0.02 * 0.006), "cell 2 starts right after cell 1, not 400 s later"
    assert span == pytest.approx(x[2] + 1e-3)


# ---- kernel widget ----------------------------------------------------------------------------------------------
def test_kernel_timeline_records_groups_by_cell_and_renders(views):
    view = views(kv.KernelTimeline)
    assert {"tl-view", "tl-kernel-timeline"} <= set(view.widget._dom_classes)
    a = tl.randn(8, 8)
    _ = a @ a
    view.after_cell()  # outside IPython the view counts cells itself
    _ = a + 1
    view.after_cell()
    recs = view.launch_records()
    assert ("matmul", 1) in {(r.name, r.cell) for r in recs} and ("add", 2) in {(r.name, r.cell) for r in recs}
    assert all(r.device == "cpu" and r.seconds >= 0 for r in recs)
    html = view.table.value
    assert "<table class='tl-kernel-table'" in html and "data-kernel='matmul'" in html and "data-kernel='add'" in html
    assert "tl-cell-table" in view.cells_html.value and "cell 2" in view.cells_html.value
    assert view.widget.tables["stats"] == html
    meta = view.widget.data["meta"]
    assert meta["n"] == len(recs) and meta["cells"] == ["cell 1", "cell 2"]
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == "<KernelTimeline>" and bundle["image/png"]
    view.clear()
    assert not view.launches and view.seen == 0 and "data-kernel=" not in view.table.value
    assert view.widget.data["meta"]["n"] == 0


def test_kernel_timeline_incremental_tables_match_the_pure_model(views):
    view = views(kv.KernelTimeline)
    a = tl.randn(16, 16, requires_grad=True)
    (a @ a).relu().sum().backward()
    view.after_cell()
    _ = a.detach() * 2
    view.after_cell()
    recs = view.launch_records()
    assert len(recs) == view.seen > 5
    assert view.stats() == kv.kernel_stats(recs)
    assert view.cells() == kv.cell_summary(recs)


class _Info:
    def __init__(self, store_history):
        self.store_history = store_history


class _Result:
    def __init__(self, info, n):
        self.info, self.execution_count = info, n


class _Events:
    def __init__(self):
        self.callbacks = {"pre_run_cell": [], "post_run_cell": []}

    def register(self, name, fn):
        self.callbacks[name].append(fn)


@pytest.fixture
def fake_shell(monkeypatch):
    """A stand-in IPython shell: kv's cell clock hooks it; the test fires pre/post_run_cell itself."""

    class History:
        input_hist_raw = ["", "import tinygrad_like as tl", "view = KernelTimeline()"]

    class Shell:
        history_manager = History()
        execution_count = 3  # IPython 9: the running cell (In[2]) is already counted
        events = _Events()

    shell = Shell()
    monkeypatch.setattr(kernel_cells, "CELLS", kernel_cells._Cells())
    monkeypatch.setattr(kernel_cells, "_get_ipython", lambda: shell)
    monkeypatch.setattr(kernel_cells, "_EC_AHEAD", True)
    return shell


def _run_cell(shell, store_history, fn):
    info = _Info(store_history)
    if store_history:
        shell.execution_count += 1
    for cb in shell.events.callbacks["pre_run_cell"]:
        cb(info)
    fn()
    for cb in shell.events.callbacks["post_run_cell"]:
        cb(_Result(info, shell.execution_count - 1))


def test_kernel_timeline_tags_launches_with_the_ipython_cell(views, fake_shell):
    view = views(kv.KernelTimeline)
    assert view.ipython and kernel_cells._pre_run_cell in fake_shell.events.callbacks["pre_run_cell"]
    a = tl.ones(2)
    _ = a.exp()  # still in the cell that made the view: In[2] from the history
    _run_cell(fake_shell, True, lambda: a.neg())
    view.after_cell()
    assert [(r.name, r.cell) for r in view.launch_records()] == [("full", 2), ("exp", 2), ("neg", 3)]
    assert "In[3]" in view.cells_html.value and "In[2]" in view.cells_html.value


def test_kernel_timeline_numbers_cells_under_nbval_without_history(views, fake_shell):
    """nbval runs cells with store_history=False: no In[n], the execution count never moves; the cell
    clock still gives each cell its own number."""
    fake_shell.history_manager.input_hist_raw = [""]
    view = views(kv.KernelTimeline)
    a = tl.ones(2)
    for _ in range(3):
        _run_cell(fake_shell, False, lambda: a.exp())
        view.after_cell()
    assert [r.cell for r in view.launch_records() if r.name == "exp"] == [2, 3, 4]
    assert [c["launches"] for c in view.cells()] == [1, 1, 1, 1]
    assert view.widget.data["meta"]["cells"] == ["cell 1", "cell 2", "cell 3", "cell 4"]
    assert "In[" not in view.cells_html.value


def test_bare_interactive_shell_is_not_a_running_ipython():
    from IPython.core.interactiveshell import InteractiveShell

    InteractiveShell.instance()  # what IPython's display formatting creates in a plain process
    assert kernel_cells._get_ipython() is None


def test_kernel_timeline_compile_events(views):
    view = views(kv.KernelTimeline)
    events.emit(events.KernelCompiled("fill", "kernel_src/fill.cu", 0.25, False, events.now()))
    events.emit(events.KernelCompiled("fill", "kernel_src/fill.cu", 0.001, True, events.now()))
    view.after_cell()
    html = view.compile_html.value
    assert "<table class='tl-compile-table'" in html
    assert html.index("hit") < html.index("miss"), "newest first"
    assert "2 compiles: 1 cache hits, 1 misses" in html


def test_kernel_timeline_is_bounded(views):
    view = views(kv.KernelTimeline, max_launches=10)
    t = tl.zeros(4)
    for _ in range(30):
        t.add_(1)
    view.after_cell()
    assert len(view.launches) <= 10 * 1.25 and view.seen >= 30
    view.store.trim()
    assert len(view.launches) == 10
    view.refresh()
    assert f"{view.seen} launches" in view.header.value and "the timeline shows the last 10" in view.header.value
    # the tables count every launch since the view opened, not only those the timeline keeps
    (add,) = [r for r in view.stats() if r["name"] == "add"]
    assert add["calls"] == 30 and sum(c["launches"] for c in view.cells()) == view.seen
    assert "<td>30</td>" in view.table.value


# ---- throttling and closing ---------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [sv.StorageView, kv.KernelTimeline])
def test_burst_of_events_causes_few_redraws(views, cls, monkeypatch):
    view = views(cls)
    seen = []
    clock = [1000.0]

    def fake_clock():  # a deterministic clock: 10 us per reading, whatever the machine's speed
        clock[0] += 1e-5
        return clock[0]

    unsubscribe = events.subscribe(seen.append)
    try:
        t = tl.zeros(16)
        before = view.redraws
        monkeypatch.setattr(time, "perf_counter", fake_clock)
        t0 = time.perf_counter()
        for _ in range(2000):
            t.add_(1)
        elapsed = time.perf_counter() - t0
        monkeypatch.undo()
    finally:
        unsubscribe()
    relevant = [e for e in seen if isinstance(e, cls.listens_to)]
    assert len(relevant) >= 2000
    drawn = view.redraws - before
    assert drawn <= elapsed * _base.MAX_REFRESH_HZ + 2, f"{drawn} redraws in {elapsed:.3f}s"
    assert drawn < 50
    view.after_cell()  # the last state is drawn once the cell ends
    assert view.redraws == before + drawn + 1
    if cls is sv.StorageView:
        assert next(r for r in view.rows if r["id"] == t.storage.id)["version"] == 2000
    else:
        assert view.seen >= 2000 and "data-kernel='add'" in view.table.value


def test_close_unsubscribes():
    assert not events.ACTIVE, "precondition: nothing else listens"
    s, k = sv.StorageView(), kv.KernelTimeline()
    assert events.ACTIVE
    s.close()
    assert events.ACTIVE, "the kernel timeline still listens"
    launches = k.launches  # (a closed view keeps only plain numbers: take its list of launches before closing)
    k.close()
    assert not events.ACTIVE
    assert tl.device("cpu").backend is tl.device("cpu").raw_backend, "timing switched off again"
    before = (s.redraws, k.redraws, len(launches))
    t = tl.zeros(3)
    t.add_(1)
    assert (s.redraws, k.redraws, len(launches)) == before
    assert s not in _base._OPEN and k not in _base._OPEN


# ---- in a real IPython kernel (nbclient; no browser) -----------------------------------------------------
@pytest.mark.slow
def test_in_a_kernel_cells_are_numbered_and_views_refresh_after_each_cell(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = [
        "%load_ext tinygrad_like.widgets\n"
        "import tinygrad_like as tl\n"
        "from tinygrad_like.widgets.storage_view import StorageView\n"
        "from tinygrad_like.widgets.kernel_view import KernelTimeline\n"
        "w = tl.zeros(3, 4)\n"
        "sv, kv = StorageView(names={'w': w}), KernelTimeline()",
        "_ = (w @ w.T).relu().sum()",
        "w.fill_(2.0)",  # the views refresh through post_run_cell, not by hand
        "import json\n"
        "row = next(r for r in sv.rows if r['names'][:1] == ['w'])\n"
        "print(json.dumps({'cells': sorted({l.cell for l in kv.launch_records()}), 'version': row['version'],\n"
        "                  'html': any(b['id'] == row['id'] and b['badge']['text'] == 'v1'\n"
        "                              for b in sv.widget.payload['blocks']),\n"
        "                  'in2': 'In[2]' in kv.cells_html.value, 'ipython': kv.ipython}))",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", record_timing=False,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells for o in c.outputs if o.get("output_type") == "error"]
    assert not errors, errors
    import json

    (out,) = [o for o in nb.cells[3].outputs if o.get("output_type") == "stream"]
    got = json.loads(out["text"])
    assert got == {"cells": [2, 3], "version": 1, "html": True, "in2": True, "ipython": True}


def test_a_live_storage_view_of_tensors_made_before_it_prints_nothing(capsys):
    """A live StorageView named tensors whose storages were not made yet (host results made while nobody
    listened): drawing them must not recurse through its own allocation events (it did, printing a RecursionError
    from its subscriber to stderr)."""
    from tinygrad_like import storage
    was, storage.eager[0] = storage.eager[0], False  # (as before any tool listed storages in this process)
    try:
        x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x_plus = x + 1
        assert x_plus._st is None
    finally:
        storage.eager[0] = was
    view = sv.StorageView(names={"x": x, "x_plus": x_plus})
    try:
        names = {r.get("name") for r in view.rows}
        assert {"x", "x_plus"} <= names, names
        assert capsys.readouterr().err == ""
    finally:
        view.close()
