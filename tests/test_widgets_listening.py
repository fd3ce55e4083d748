"""What an open view costs a training step: hidden views are not called, the timeline files its events in bulk.

A view that nobody sees (a Dashboard tab not selected, a view scrolled away, a paused view) used to receive every
event of its kinds only to mark itself stale. Now its handler is unsubscribed: the first event after it was hidden
reaches a marker that marks it stale and unsubscribes itself, and nothing more arrives until it is shown again.
What a view cannot rebuild from the core (the storage view's transfer log, the timeline's launches) still arrives.
The timeline's events land in an inbox, filed into its store before anything reads it.
"""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

import tinygrad_like as tl  # noqa: E402
import tinygrad_like.nn as nn  # noqa: E402
from tinygrad_like import events  # noqa: E402
from tinygrad_like.widgets import _base, kernel_cells  # noqa: E402
from tinygrad_like.widgets import kernel_view as kv  # noqa: E402
from tinygrad_like.widgets.graph_view import GraphView  # noqa: E402
from tinygrad_like.widgets.storage_view import StorageView  # noqa: E402


@pytest.fixture
def counting(monkeypatch):
    """Counts calls of each view class's ``_on_event`` (the handler) and ``_mark_stale`` (the hidden marker)."""
    calls: dict[str, int] = {}
    for cls in (GraphView, StorageView):
        for name in ("_on_event", "_mark_stale"):
            original = getattr(cls, name)

            def counted(self, event, _original=original, _key=f"{cls.__name__}.{name}"):
                calls[_key] = calls.get(_key, 0) + 1
                return _original(self, event)

            monkeypatch.setattr(cls, name, counted)
    yield calls
    assert not events.ACTIVE, "a test left a subscription behind"


def _train_steps(model, opt, x, n: int) -> None:
    for _ in range(n):
        loss = model(x).relu().sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


def _model():
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return model, tl.optim.SGD(model.parameters(), lr=0.01), tl.randn(3, 4)


def test_a_hidden_view_gets_one_event_then_none_and_redraws_once_when_shown(counting):
    model, opt, x = _model()
    view = StorageView(model=model)
    try:
        _train_steps(model, opt, x, 1)
        shown_calls = counting.get("StorageView._on_event", 0)
        assert shown_calls > 0, "a shown view is called for its events"
        view.refresh()  # (up to date: a view hidden while stale needs no marker, it redraws when shown anyway)
        view.set_shown(False)
        redraws = view.redraws
        _train_steps(model, opt, x, 5)
        assert counting.get("StorageView._mark_stale", 0) == 1, "hidden: the first event only marks it stale"
        assert counting.get("StorageView._on_event", 0) == shown_calls, "hidden: the handler is not called"
        assert view._stale and view.redraws == redraws
        view.set_shown(True)
        assert view.redraws == redraws + 1 and not view._stale
        _train_steps(model, opt, x, 1)
        assert counting["StorageView._on_event"] > shown_calls, "shown again: the handler is back"
    finally:
        view.close()


def test_a_paused_view_is_not_called_and_catches_up_on_resume(counting):
    model, opt, x = _model()
    loss = model(x).sum()
    view = GraphView(loss, model)
    try:
        view.pause()
        redraws = view.redraws
        _train_steps(model, opt, x, 3)  # version bumps of the parameters this graph saved
        assert counting.get("GraphView._on_event", 0) == 0
        assert counting.get("GraphView._mark_stale", 0) == 1
        assert view.redraws == redraws
        view.resume()
        assert view.redraws == redraws + 1
    finally:
        view.close()


def test_a_hidden_view_that_stays_unchanged_is_not_redrawn_when_shown(counting):
    model, opt, x = _model()
    view = StorageView(model=model)
    try:
        view.set_shown(False)
        redraws = view.redraws
        view.set_shown(True)  # nothing happened meanwhile: no redraw
        assert view.redraws == redraws and counting.get("StorageView._mark_stale", 0) == 0
    finally:
        view.close()


def test_a_view_redrawn_on_request_while_hidden_watches_for_the_next_change(counting):
    model, opt, x = _model()
    view = StorageView(model=model)
    try:
        view.set_shown(False)
        _train_steps(model, opt, x, 1)
        assert view._stale and view._unsubscribe is None  # the marker fired and left
        view.refresh()  # drawn on request (a notebook calling refresh())
        assert not view._stale and view._unsubscribe is not None, "the marker is back"
        _train_steps(model, opt, x, 1)
        assert view._stale
    finally:
        view.close()


def test_a_hidden_storage_view_still_logs_transfers():
    shown, hidden = StorageView(), StorageView()
    try:
        hidden.set_shown(False)
        a = tl.ones(256).to("sim")
        for _ in range(3):
            _ = (a * 2).cpu()  # a download each
            a = a + 1
        directions = [(e.direction, e.nbytes) for e in hidden.transfers]
        assert directions == [("h2d", 1024)] + [("d2h", 1024)] * 3  # (.to("sim")'s upload, then a download each)
        assert directions == [(e.direction, e.nbytes) for e in shown.transfers]
    finally:
        shown.close()
        hidden.close()


def test_only_the_shown_tab_of_a_dashboard_is_called_during_training(counting):
    from tinygrad_like.widgets.dashboard import Dashboard

    model, opt, x = _model()
    dash = Dashboard(model(x).sum(), model)
    try:
        assert dash.tab.selected_index == 0 and dash.views["Storage"] is not None
        _train_steps(model, opt, x, 1)  # (the hidden tabs' markers fire once)
        before = dict(counting)
        _train_steps(model, opt, x, 5)
        assert counting.get("StorageView._on_event", 0) == before.get("StorageView._on_event", 0)
        assert counting.get("StorageView._mark_stale", 0) == before.get("StorageView._mark_stale", 0) <= 1
        timeline = dash.views["Kernels"]
        assert timeline.seen > 0, "the hidden timeline still records launches"
    finally:
        dash.close()


# ---- the timeline's inbox ---------------------------------------------------------------------------------------
def test_the_timeline_files_its_inbox_before_any_read():
    view = kv.KernelTimeline()
    try:
        a = tl.ones(8, requires_grad=True)
        (a.exp() * 2).sum().backward()
        assert view._inbox, "events wait in the inbox"
        names = [r.name for r in view.launch_records()]
        assert not view._inbox
        assert "exp" in names and view.seen == len(names)
        phases = {r.name: r.phase for r in view.launch_records()}
        assert phases["exp"] == "forward"
        assert "backward" in phases.values()
        assert view.stats() and view.cells()
    finally:
        view.close()


def test_the_inbox_is_filed_during_a_long_cell_and_the_view_redraws_live(monkeypatch):
    monkeypatch.setattr(kv, "DRAIN_EVENTS", 8)
    view = kv.KernelTimeline()
    try:
        view._last_draw = 0.0
        _base._BUDGET.next_allowed = 0.0
        redraws = view.redraws
        a = tl.ones(4)
        for _ in range(10):
            a = a + 1
        assert len(view._inbox) < 8, "filed every DRAIN_EVENTS events"
        assert view.redraws > redraws, "a live redraw during the cell"
    finally:
        view.close()


def test_launches_keep_the_cell_they_ran_in_when_filed_later(monkeypatch):
    """The inbox is filed before a new cell starts, so launches filed late still belong to the cell that ran them."""
    class Shell:
        class events:
            callbacks: dict = {}

            @classmethod
            def register(cls, name, fn):
                cls.callbacks.setdefault(name, []).append(fn)

            @classmethod
            def unregister(cls, name, fn):
                cls.callbacks[name].remove(fn)
        execution_count = 1
        history_manager = None

    shell = Shell()
    monkeypatch.setattr(kernel_cells, "_get_ipython", lambda: shell)
    monkeypatch.setattr(kernel_cells, "CELLS", kernel_cells._Cells())
    view = kv.KernelTimeline()
    try:
        _ = tl.ones(2).exp()  # the first cell: nothing reads the view before the next starts
        info = type("Info", (), {"store_history": True})()
        for fn in Shell.events.callbacks["pre_run_cell"]:
            fn(info)
        _ = tl.ones(2).neg()
        records = view.launch_records()
        cells = {r.name: r.cell for r in records}
        assert cells["exp"] != cells["neg"], cells
    finally:
        view.close()
        for fns in Shell.events.callbacks.values():
            fns.clear()
