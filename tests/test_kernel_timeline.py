"""``KernelTimeline``'s model and payload without a browser: phases, cells without ``In[n]``, the compact
100,000-launch payload (size and build time), appends that carry only new launches, the shared selection hub
(weak, notifies the others) and its link to graph views, and closing frees everything.

The canvas itself (hover, zoom, frame time, click -> graph node) is tested in a real browser by
``tests/browser/test_kernel_timeline.py``.
"""

from __future__ import annotations

import gc
import time
import weakref

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

import ipywidgets.widgets.widget as widget_module  # noqa: E402

import tinygrad_like as tl  # noqa: E402
from tinygrad_like import events, sites  # noqa: E402
from tinygrad_like.widgets import _base, kernel_cells, selection  # noqa: E402
from tinygrad_like.widgets import kernel_view as kv  # noqa: E402


@pytest.fixture
def timeline():
    view = kv.KernelTimeline()
    yield view
    view.close()


def _phases(view):
    return [(r.name, r.phase, r.op) for r in view.launch_records()]


# ---- phases and nodes ----------------------------------------------------------------------------------------
def test_phases_forward_backward_optimizer(timeline):
    w = tl.randn(4, 4, requires_grad=True)
    x = tl.randn(3, 4)
    opt = tl.optim.SGD([w], lr=0.1)
    timeline.after_cell()
    first = timeline.store.end
    loss = (x @ w).relu().sum()
    loss.backward()
    opt.step()
    timeline.after_cell()
    got = [(r.name, r.phase, r.op) for r in timeline.launch_records()[first:]]
    assert ("matmul", "forward", "Mm") in got and ("relu", "forward", "Relu") in got
    assert ("relu_backward", "backward", "Relu") in got
    assert any(n == "matmul" and p == "backward" and op == "Mm" for n, p, op in got)
    opt_rows = [g for g in got if g[1] == "optimizer"]
    assert opt_rows and all(op == "" for _, _, op in opt_rows), "optimizer kernels belong to no graph node"
    # order: forward, then backward, then optimizer
    phases = [p for _, p, _ in got]
    assert phases.index("backward") > max(i for i, p in enumerate(phases) if p == "forward")
    assert phases.index("optimizer") > max(i for i, p in enumerate(phases) if p == "backward")
    counts = timeline.phase_counts()
    assert counts["forward"] >= 3 and counts["backward"] >= 3 and counts["optimizer"] >= 1


def test_launches_name_their_node_weakly_and_the_users_line(timeline):
    a = tl.randn(5, 5, requires_grad=True)
    timeline.after_cell()
    y = a.exp()
    timeline.after_cell()
    (rec,) = [r for r in timeline.launch_records() if r.name == "exp"]
    assert rec.op == "Exp" and rec.phase == "forward"
    assert "test_kernel_timeline.py" in rec.line, "the user's line of the node (sites.listen while open)"
    seq = next(s for s in range(timeline.store.first, timeline.store.end) if timeline.store.row(s)["name"] == "exp")
    timeline.select_launch(seq)
    assert timeline.selected_node is y.grad_fn and timeline.selected_launch.name == "exp"
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None, "the timeline must not keep graph nodes alive"
    assert timeline.selected_node is None


def test_a_launch_filed_while_its_op_is_still_running_keeps_its_op(timeline, monkeypatch):
    """The inbox is filed when it is full or 0.1 s old, whichever event that is: a launch inside an op's forward,
    before the op's node is numbered, must still name the op (a loaded machine filed there; the browser test saw
    "op —")."""
    monkeypatch.setattr(kv, "DRAIN_SECONDS", 0.0)  # every launch finds the inbox due: inside every forward
    a = tl.randn(5, 5, requires_grad=True)
    timeline.after_cell()
    time.sleep(0.15)  # (past the first due time, set when the view subscribed)
    y = a.exp()
    y.tanh()
    timeline.after_cell()
    assert [(r.name, r.op) for r in timeline.launch_records() if r.name in ("exp", "tanh")] == [
        ("exp", "Exp"), ("tanh", "Tanh")]


def test_no_grad_kernels_are_forward_without_a_node(timeline):
    a = tl.randn(3, 3, requires_grad=True)
    timeline.after_cell()
    with tl.no_grad():
        _ = a * 2  # no OpRecorded follows: grad recording is off
    _ = a.exp()  # recorded: its OpRecorded must not claim the no-grad kernel
    timeline.after_cell()
    recs = {r.name: r for r in timeline.launch_records()}
    assert recs["mul"].phase == "forward" and recs["mul"].op == ""
    assert recs["exp"].op == "Exp"


def test_transfers_are_their_own_phase(timeline, dev):
    t = tl.tensor([1.0, 2.0, 3.0], dtype=tl.float32, device="testdev")
    timeline.after_cell()
    t.numpy()  # d2h
    timeline.after_cell()
    xfer = [r for r in timeline.launch_records() if r.phase == "transfer"]
    assert [(r.name, r.device, r.nbytes) for r in xfer] == [("d2h", "memcpy", 12)]


# ---- cells without In[n] ---------------------------------------------------------------------------------------
class _Events:
    def __init__(self):
        self.callbacks = {"pre_run_cell": [], "post_run_cell": []}

    def register(self, name, fn):
        self.callbacks[name].append(fn)


class _Info:
    store_history = False  # what nbval sends: the execution count never moves, no input history


@pytest.fixture
def run_cell(monkeypatch):
    """A stand-in IPython shell as nbval drives it (the execution count never moves): ``run_cell(body)`` runs the
    cell hooks around ``body()`` and returns what it returned."""

    class Shell:
        execution_count = 1
        events = _Events()

    shell = Shell()
    monkeypatch.setattr(kernel_cells, "CELLS", kernel_cells._Cells())
    monkeypatch.setattr(kernel_cells, "_get_ipython", lambda: shell)

    def run(body):
        for cb in shell.events.callbacks["pre_run_cell"]:
            cb(_Info())
        out = body()
        for cb in shell.events.callbacks["post_run_cell"]:
            cb(type("R", (), {"info": _Info(), "execution_count": 1})())
        return out

    return run


def test_cells_under_nbval_are_numbered_by_the_hooks(run_cell):
    view = kv.KernelTimeline()
    try:
        a = tl.ones(3)
        for _ in range(2):
            run_cell(lambda: a.exp())
            view.after_cell()
        assert [r.cell for r in view.launch_records() if r.name == "exp"] == [2, 3]
        assert view.widget.data["meta"]["cells"][-2:] == ["cell 2", "cell 3"]
    finally:
        view.close()


def test_outside_ipython_the_view_counts_cells(timeline):
    assert not timeline.ipython
    _ = tl.ones(2).exp()
    timeline.after_cell()
    _ = tl.ones(2).neg()
    timeline.after_cell()
    assert {(r.name, r.cell) for r in timeline.launch_records()} >= {("exp", 1), ("neg", 2)}


# ---- the payload -------------------------------------------------------------------------------------------------
def _emit_synthetic(n, names=("matmul", "add", "relu", "sum", "softmax", "axpy", "copy", "cross_entropy")):
    t = 1000.0
    shapes = [((64, 64), (64, 64)), ((64,),), ((256, 10),)]
    for i in range(n):
        name = names[i % len(names)]
        d = (1 + (i % 7)) * 1e-6
        events.emit(events.KernelTimed(name, "cpu", t, d, shapes[i % 3], 4096))
        t += d + 1e-7


def test_100k_launches_payload_is_compact(timeline):
    t0 = time.perf_counter()
    _emit_synthetic(100_000)
    record_s = time.perf_counter() - t0
    st = timeline.store
    t0 = time.perf_counter()
    meta, bufs = st.chunk(st.first, st.resolved, 0, st.node_first)
    build_s = time.perf_counter() - t0
    size = kv.payload_bytes(meta, bufs)
    print(f"\n100k launches: recorded in {record_s * 1e3:.0f} ms, payload {size / 1e6:.2f} MB "
          f"({size / 100_000:.1f} B/launch), built in {build_s * 1e3:.1f} ms")
    assert meta["n"] == 100_000
    assert size <= 40 * 100_000, "at most 40 bytes a launch (binary columns, strings once)"
    # (the times printed above are information, not assertions: speed is measured by the benchmarks)
    # the same payload as JSON lists would be several times larger
    assert len(meta["strs"]) < 20


def test_updates_append_only_new_launches(timeline, monkeypatch):
    sent = []
    monkeypatch.setattr(timeline.widget, "send", lambda content, buffers=None: sent.append((content, buffers)))
    monkeypatch.setattr(kv, "SNAPSHOT_ROWS", 10)
    _emit_synthetic(50)
    timeline.after_cell()
    rev = timeline.widget.data["meta"]["rev"]
    (first,) = sent
    assert first[0]["type"] == "append" and first[0]["base"] == 0 and first[0]["n"] == 50
    _emit_synthetic(7)
    timeline.after_cell()
    msg, bufs = sent[-1]
    assert (msg["base"], msg["n"], msg["rev"]) == (50, 7, rev) and msg["strs"] == []
    assert len(bufs) == len(kv.COLUMNS) + len(kv.NODE_COLUMNS) and bufs[0].nbytes == 7 * 8
    timeline.on_message({"type": "hello", "rev": rev, "end": 57})  # a view that has everything: nothing sent
    assert timeline.widget.data["meta"]["rev"] == rev
    timeline.on_message({"type": "sync"})  # a view that missed something gets a fresh snapshot
    assert timeline.widget.data["meta"]["rev"] == rev + 1 and timeline.widget.data["meta"]["n"] == 57


def test_small_histories_go_into_the_widget_state(timeline):
    _emit_synthetic(30)
    timeline.after_cell()
    meta = timeline.widget.data["meta"]
    assert meta["n"] == 30 and len(timeline.widget.data["buffers"]) == len(kv.COLUMNS) + len(kv.NODE_COLUMNS)


def test_the_store_trims_and_the_nodes_follow():
    st = kv.LaunchStore(max_rows=10)

    class Node:
        pass

    nodes = [Node() for _ in range(40)]
    for i, n in enumerate(nodes):
        n.seq, n.name = i, "Op"  # (recorded graph nodes have a seq)
        st.add("k", "cpu", float(i), 1e-3, (), 0, 0, kv.FWD, n)
    assert len(st) <= 13 and st.end == 40
    st.trim()
    assert len(st) == 10 and st.first == 30 and st.node_first == 30 and st.node(35) is nodes[35]
    assert st.node(5) is None


def test_no_redraw_while_paused_or_hidden_then_one_when_shown(timeline):
    timeline.widget.paused = True  # the Pause button
    before = timeline.redraws
    _emit_synthetic(20)
    timeline.after_cell()
    assert timeline.redraws == before and timeline._stale and timeline._sent[0] == 0
    timeline.widget.paused = False  # Resume: one redraw, with the launches missed meanwhile
    assert timeline.redraws == before + 1 and timeline._sent[0] == 20
    timeline.widget.visible = False  # scrolled away
    _emit_synthetic(5)
    timeline.after_cell()
    assert timeline.redraws == before + 1 and timeline._sent[0] == 20
    timeline.widget.visible = True
    assert timeline.redraws == before + 2 and timeline._sent[0] == 25


def test_chrome_trace_export(timeline, tmp_path):
    _ = tl.randn(4, 4) @ tl.randn(4, 4)
    timeline.after_cell()
    import json

    path = timeline.export_chrome_trace(tmp_path / "t.json")
    trace = json.load(open(path))
    xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert any(e["name"] == "matmul" and e["cat"] == "forward" for e in xs)


def test_png_fallback_is_a_png(timeline):
    _emit_synthetic(2000)
    timeline.after_cell()
    png = timeline.to_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < 50_000


# ---- the selection hub ------------------------------------------------------------------------------------
class _Probe:
    def __init__(self):
        self.got = []

    def on_shared_select(self, node):
        self.got.append(node)


class _Node:
    pass


def test_selection_hub_notifies_the_others_and_holds_nothing():
    a, b = _Probe(), _Probe()
    selection.register(a)
    selection.register(b)
    n = _Node()
    try:
        assert selection.select(n, source=a) >= 1
        assert a.got == [] and b.got == [n] and selection.current() is n
        ref_b, ref_n = weakref.ref(b), weakref.ref(n)
        del b, n
        gc.collect()
        assert ref_b() is None, "the hub must not keep a view alive"
        assert ref_n() is None and selection.current() is None, "nor the selected node"
        assert ref_b not in [weakref.ref(v) for v in selection.registered()]
    finally:
        selection.unregister(a)


def test_a_broken_view_does_not_stop_the_others(capsys):
    class Broken:
        def on_shared_select(self, node):
            raise RuntimeError("boom")

    bad, good = Broken(), _Probe()
    selection.register(bad)
    selection.register(good)
    try:
        selection.select(_n := _Node())
        assert good.got == [_n] and "boom" in capsys.readouterr().err
    finally:
        selection.unregister(bad)
        selection.unregister(good)


def test_clicking_a_launch_selects_its_node_in_a_graph_view(timeline):
    from tinygrad_like.widgets import GraphView

    w = tl.randn(4, 4, requires_grad=True)
    timeline.after_cell()
    loss = (w.exp() * 2).sum()
    timeline.after_cell()
    graph = GraphView(loss)
    try:
        seq = next(s for s in range(timeline.store.first, timeline.store.end)
                   if timeline.store.row(s)["name"] == "exp")
        timeline.widget.selected = seq  # what a click in the browser does (two-way traitlet)
        idx = graph.model.node_for(timeline.selected_node)
        assert idx is not None and graph.selected == graph.model.nodes[idx].id
        assert graph.selected_node.label == "Exp"
    finally:
        graph.close()
    assert graph not in selection.registered()


# ---- closing ---------------------------------------------------------------------------------------------------
def test_close_frees_the_view_its_widget_and_subscriptions():
    gc.collect()
    widgets_before, subs_before = len(widget_module._instances), len(events._subscribers)
    view = kv.KernelTimeline()
    a = tl.randn(3, 3, requires_grad=True)
    a.exp().sum().backward()
    _emit_synthetic(1000)
    view.after_cell()
    view.widget.selected = view.store.first
    ref = weakref.ref(view)
    view.on_message({"type": "close"})  # the Close button
    del view
    gc.collect()
    assert ref() is None
    assert len(widget_module._instances) == widgets_before
    assert len(events._subscribers) == subs_before and not events.ACTIVE and sites._listeners == 0
    assert ref not in set(_base._OPEN)


def test_launches_of_ops_that_record_no_node_are_not_given_the_next_ops_node(timeline):
    """Before, a launch waited for the next recorded op and took its node: a division of the input data (no grad)
    showed as part of the first layer's matmul. Each launch now says which node launched it."""
    w = tl.randn(4, 4, requires_grad=True)
    x = tl.randn(3, 4)
    timeline.after_cell()
    first = timeline.store.end
    scaled = x / 255.0  # no input needs grad: no node
    mask = scaled > 0  # a comparison: no node
    with tl.no_grad():
        _ = w * 2  # grad recording off: no node
    y = (scaled @ w) * mask
    y.sum().backward()
    timeline.after_cell()
    got = [(r.name, r.phase, r.op) for r in timeline.launch_records()[first:]]
    assert got[:4] == [("div", "forward", ""), ("gt", "forward", ""), ("mul", "forward", ""),
                       ("matmul", "forward", "Mm")], got
    assert ("mul", "forward", "Mul") in got[4:]
    assert all(op for name, phase, op in got if phase == "backward" and name != "full"), got


def test_an_op_inside_another_ops_forward_is_the_outer_ops_launch(timeline):
    from tinygrad_like.autograd.function import Function

    class ExpTwice(Function):
        """A user's op whose forward runs Tensor ops: its kernels belong to it."""

        def forward(self, x):
            with tl.no_grad():
                return (x.exp().exp()).detach()

        def backward(self, g):
            raise NotImplementedError

    x = tl.randn(3, requires_grad=True)
    timeline.after_cell()
    first = timeline.store.end
    ExpTwice.apply(x)
    timeline.after_cell()
    got = [(r.name, r.op) for r in timeline.launch_records()[first:]]
    assert got == [("exp", "ExpTwice"), ("exp", "ExpTwice")], got


def test_launches_of_a_graph_dropped_before_the_view_files_them_keep_their_op(timeline):
    w = tl.randn(4, requires_grad=True)
    timeline.after_cell()
    first = timeline.store.end
    for _ in range(3):
        (w * 2).sum().backward()  # each graph is garbage at the end of its line
    gc.collect()
    timeline.after_cell()
    got = [(r.name, r.phase, r.op) for r in timeline.launch_records()[first:] if r.name == "mul"]
    assert got == [("mul", "forward", "Mul"), ("mul", "backward", "Mul")] * 3, got


def test_phase_seconds_sum_the_kept_launches_by_phase(timeline):
    w = tl.randn(8, 8, requires_grad=True)
    opt = tl.optim.SGD([w], lr=0.1)
    timeline.after_cell()
    (w @ w).relu().sum().backward()
    opt.step()
    timeline.after_cell()
    seconds = timeline.phase_seconds()
    launches = timeline.launch_records()
    for phase in kv.PHASES:
        want = sum(r.seconds for r in launches if r.phase == phase)
        assert seconds[phase] == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert seconds["forward"] > 0 and seconds["backward"] > 0 and seconds["optimizer"] > 0


# ---- work done for clicks, and idle time, on the time axis -------------------------------------------------------
def _busy_share(view) -> float:
    """The share of the timeline's x axis (as the browser and the PNG lay it out) covered by launches."""
    import numpy as np

    st = view.store
    start, dur = np.frombuffer(st.cols["start"], np.float64), np.frombuffer(st.cols["dur"], np.float64)
    x, span = kv.compressed_x(start, dur, np.frombuffer(st.cols["cell"], np.uint16).astype(np.int64))
    return float(dur.sum()) / span


def test_a_steppers_clicks_are_filed_under_the_cell_that_made_it_not_the_last_cell(run_cell):
    """A Step click runs between cells (a comm message): its launches go to a group named by the stepper's cell,
    and the cell that ran last keeps its own span."""
    from tinygrad_like.widgets.stepper import BackwardStepper

    view = kv.KernelTimeline()
    try:
        w = tl.randn(8, 8, requires_grad=True)
        stepper = run_cell(lambda: BackwardStepper((w.exp() * 2).sum()))  # cell 2 makes the stepper
        run_cell(lambda: tl.ones(4).neg())  # cell 3 runs last
        stepper.widget._handle_custom_msg({"type": "step", "n": 3}, [])  # a click, between cells
        run_cell(lambda: None)  # the next cell files it
        labels = view._cell_labels()
        group = "cell 2 · BackwardStepper"
        assert group in labels
        st = view.store
        rows = [st.row(seq) for seq in range(st.first, st.end)]
        clicked = {view.cell_name(st.cells[r["cell_index"]]) for r in rows if r["phase"] == "backward"}
        assert clicked == {group}
        assert {r.cell for r in view.launch_records() if r.name == "neg"} == {3}
        assert any(row[0] == group for row in view._cell_table())  # its own row in the cell table
    finally:
        view.close()


def test_a_long_idle_stretch_inside_a_cell_is_cut_out_of_the_time_axis(timeline):
    """Ten quick steps, then 30 s of nothing (a figure redrawn, a pause), then ten more, in one cell: the steps fill
    the axis instead of an eighth of it (before, real time within a cell was drawn as it was)."""
    t = 500.0
    for _burst in range(2):
        for _ in range(200):
            events.emit(events.KernelTimed("matmul", "cpu", t, 1e-4, ((8, 8),), 256))
            t += 1.2e-4
        t += 30.0
    events.emit(events.KernelTimed("matmul", "cpu", t, 1e-4, ((8, 8),), 256))  # one more after another pause
    assert _busy_share(timeline) > 0.6
    labels = timeline._cell_labels()
    assert labels.count("cell 1") == 1 and set(labels) == {"cell 1", ""}  # one cell, labelled once
    assert [r["cell"] for r in timeline.cells()] == [1]  # the tables still count it as one cell


def test_many_cells_share_a_fifth_of_the_axis_for_their_gaps():
    import numpy as np

    cells = np.repeat(np.arange(50), 4)
    start = cells * 100.0 + np.arange(200) % 4  # 50 cells of 4 back-to-back launches, 100 s apart
    dur = np.full(200, 1.0)
    x, span = kv.compressed_x(start, dur, cells)
    assert dur.sum() / span > 0.75  # (2% per gap would be 98% of the launches' time in gaps alone)


def test_two_clicks_on_one_view_with_a_cell_between_are_two_stretches(timeline, monkeypatch):
    """Click, a cell, click again (each a tenth of a second apart): the clicks' group is drawn as two stretches, so
    its span does not run from the first click to the last over the cell (before, the second click went back to
    the first one's stretch)."""
    monkeypatch.setattr(kernel_cells, "CELLS", kernel_cells._Cells())
    cells = kernel_cells.CELLS
    group = cells.group(1, "cell 1", "BackwardStepper")

    def launch(t: float, acting) -> None:
        cells.acting = acting
        events.emit(events.KernelTimed("matmul", "cpu", t, 1e-4, ((8, 8),), 256))
        timeline._drain()
        cells.acting = None

    launch(100.0, group)
    launch(100.1, None)  # a cell (outside IPython: the view's own counter)
    launch(100.2, group)
    st = timeline.store
    keys = [st.cells[st.row(seq)["cell_index"]] for seq in range(st.first, st.end)]
    assert keys[0] == group and keys[1] not in (group, keys[2])
    assert isinstance(keys[2], tuple) and keys[2][0] == group  # a later stretch of the group: unlabelled
    assert timeline._cell_labels().count("cell 1 · BackwardStepper") == 1
    timeline.clear()
    launch(200.0, group)  # clear() forgets the stretches: the group starts again at its first
    assert [st.cells[st.row(seq)["cell_index"]] for seq in range(st.first, st.end)] == [group]
