"""Closing a view frees everything it made: its widgets, its event subscriptions and the objects it observed.

Before, a closed Dashboard stayed alive for good (its Tab, still in ipywidgets' registry, observed it through a
bound method, and so held its views, their graphs and the model), and every ``View.close()`` left 6-57 child
widgets (pages, buttons, Layout and Style widgets) in the registry. Each view here is drawn, refreshed and used,
then closed and dropped: it must be garbage (a weak reference), the registry must be back to its size before,
and no subscription may be left (``events.ACTIVE`` is False, so the backends are no longer timed).
"""

from __future__ import annotations

import gc
import weakref

import pytest

W = pytest.importorskip("ipywidgets")
pytest.importorskip("matplotlib")

import ipywidgets.widgets.widget as widget_module  # noqa: E402
from view_kinds import KINDS, make_view  # noqa: E402

import tinygrad_like as tl  # noqa: E402
import tinygrad_like.nn as nn  # noqa: E402
from tinygrad_like import events, sites  # noqa: E402
from tinygrad_like.widgets import _base  # noqa: E402


def _registry() -> int:
    """How many widgets ipywidgets holds (every widget made and not yet closed)."""
    return len(widget_module._instances)


def _make(kind: str, model, x):
    return make_view(kind, model, model(x).sum())


@pytest.mark.parametrize("kind", KINDS)
def test_a_closed_view_is_freed_with_its_widgets_and_subscriptions(kind):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = tl.randn(5, 3)
    gc.collect()
    widgets_before, subscribers_before = _registry(), len(events._subscribers)
    view = _make(kind, model, x)
    view.refresh()
    model(x).sum().backward()  # events while it is open (kernels, storages, a backward pass)
    view.after_cell()
    if kind.startswith("dashboard"):
        for title in ("Storage", "Kernels", "Graph"):
            view.select(title)  # the Tab's observer redraws the page
    made = _registry() - widgets_before
    assert made > 0
    ref = weakref.ref(view)
    view.close()
    del view
    gc.collect()
    assert ref() is None, f"a closed {kind} view is still alive"
    assert _registry() == widgets_before, f"{kind}: {_registry() - widgets_before} of its {made} widgets left open"
    assert len(events._subscribers) == subscribers_before
    assert not events.ACTIVE and sites._listeners == 0
    assert ref not in set(_base._OPEN)


def test_a_dashboard_survives_while_open_and_its_tabs_still_redraw():
    """The weak observer must not lose the dashboard while the user holds it: switching tabs still redraws."""
    from tinygrad_like.widgets.dashboard import Dashboard

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    dash = Dashboard(model(tl.randn(2, 3)).sum(), model)
    gc.collect()
    storage = dash.views["Storage"]
    before = storage.redraws
    dash.select("Storage")
    assert storage.redraws == before + 1
    dash.close()


def test_close_tree_closes_nested_containers_layouts_and_styles():
    button = W.Button(description="b")
    inner = W.VBox([button, W.HTML("x")])
    tab = W.Tab(children=(inner, W.Label("y")))
    root = W.VBox([tab])
    ids = [w.model_id for w in (button, button.layout, button.style, inner, tab, root)]
    _base.close_tree(root)
    assert all(i not in widget_module._instances for i in ids)
    _base.close_tree(root)  # closing again does nothing


def test_only_the_visible_tab_of_a_dashboard_redraws_and_a_paused_one_waits():
    """Views in hidden tabs (and all of them while the dashboard is paused) only remember that something changed;
    the one shown catches up once."""
    from tinygrad_like.widgets.dashboard import Dashboard

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    opt = tl.optim.SGD(model.parameters(), lr=0.1)
    dash = Dashboard(model(tl.randn(2, 3)).sum(), model)
    dash.select("Graph")
    storage, kernels = dash.views["Storage"], dash.views["Kernels"]
    before = storage.redraws, kernels.redraws

    def cell():
        loss = model(tl.randn(2, 3)).sum()
        loss.backward()
        opt.step()  # kernels, allocations and version bumps: both hidden views become stale
        _base.refresh_open_views()  # the end of the cell

    cell()
    assert (storage.redraws, kernels.redraws) == before and storage._stale and kernels._stale
    dash.select("Storage")
    assert storage.redraws == before[0] + 1 and not storage._stale and kernels.redraws == before[1]
    dash.pause()
    cell()
    assert storage.redraws == before[0] + 1 and storage._stale  # paused: waits
    dash.resume()
    assert storage.redraws == before[0] + 2 and not storage._stale
    dash.close()
