"""GraphView and BackwardStepper: their models, drawings and buttons, without a browser."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tinygrad_like as tl  # noqa: E402
from tinygrad_like import events  # noqa: E402
from tinygrad_like.widgets import BackwardStepper, GraphView, build_graph, record_timings  # noqa: E402
from tinygrad_like.widgets.graph_model import NOT_COMPUTED  # noqa: E402
from tinygrad_like.widgets.graph_view import HIGHLIGHT, STALE, draw_graph, node_details_html  # noqa: E402

nn, F = tl.nn, tl.nn.functional


def mlp_loss(seed=0):
    tl.manual_seed(seed)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    return m, F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))


def patch_for(fig, nid):
    return next(p for p in fig.axes[0].patches if p.get_gid() == nid)


def test_graph_model_names_shapes_and_layers():
    m, loss = mlp_loss()
    g = build_graph(loss, m)
    labels = sorted(n.label for n in g.nodes.values())
    assert labels == sorted(["0.weight", "0.bias", "2.weight", "2.bias", "Linear", "Linear", "Relu", "CrossEntropy",
                             "Sum", "Div", "output"])
    kinds = {n.label: n.kind for n in g.nodes.values()}
    assert kinds["0.weight"] == "param" and kinds["output"] == "output" and kinds["Relu"] == "op"
    assert all(g.layers[s] < g.layers[d] for s, d, _ in g.edges)  # inputs above, output at the bottom
    assert g.layers["output"] == max(g.layers.values())
    edge_labels = {(g.nodes[s].label, g.nodes[d].label): lab for s, d, lab in g.edges}
    assert edge_labels[("0.weight", "Linear")] == "(8, 4)" and edge_labels[("Relu", "Linear")] == "(5, 8)"
    assert all(n.grad == NOT_COMPUTED for n in g.nodes.values() if n.kind == "param")  # never zeros
    loss.backward()
    g2 = build_graph(loss, m)
    assert all(n.grad.startswith("(") for n in g2.nodes.values() if n.kind == "param")


def test_stale_saved_tensor_is_red_with_versions_and_the_write_site():
    x = tl.randn(3, requires_grad=True)
    h = x * 1.0
    y = (h * h).sum()
    with tl.no_grad():
        h.add_(1)  # moves the version of a tensor the Mul saved
    g = build_graph(y)
    stale = [g.nodes[i] for i in g.stale_nodes]
    assert [n.label for n in stale] == ["Mul"]
    row = stale[0].saved[0]
    assert (row["saved_version"], row["current_version"], row["stale"]) == (0, 1, True)
    assert "add_ at" in row["writes"][0] and "test_widgets_graph.py" in row["writes"][0]
    fig = draw_graph(g)
    assert matplotlib.colors.to_hex(patch_for(fig, stale[0].id).get_edgecolor()) == STALE
    fresh = next(n for n in g.nodes.values() if n.label == "Sum")
    assert matplotlib.colors.to_hex(patch_for(fig, fresh.id).get_edgecolor()) != STALE
    assert "modified by add_ at" in node_details_html(g, stale[0].id)
    view = GraphView(y, live=False)
    assert "will fail" in view._note.value


def test_large_graph_folds_by_module_and_expands():
    tl.manual_seed(0)
    m = nn.Sequential(*[nn.Linear(6, 6) for _ in range(12)])
    loss = m(tl.randn(2, 6)).sum()
    full = build_graph(loss, m)
    g = build_graph(loss, m, max_nodes=20)
    assert len(g.nodes) < len(full.nodes)
    assert set(g.folded) == {str(i) for i in range(12)}
    assert all(n.kind == "module" and n.folded == 3 for n in g.nodes.values() if n.label.endswith("folded]"))
    view = GraphView(loss, m, max_nodes=20, live=False)
    assert "folded by module" in view._note.value
    view.expand("3")
    assert "3" not in view.model.folded and any(n.label == "3.weight" for n in view.model.nodes.values())


def test_long_chain_builds_without_recursion():
    x = tl.randn(2, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0
    g = build_graph(y.sum())
    assert len(g.nodes) == 10_003


def test_timings_from_a_profiled_run():
    m, _ = mlp_loss()
    with record_timings() as t:
        loss = F.cross_entropy(m(tl.randn(5, 4)), tl.randint(0, 3, (5,)))
        loss.backward()
    g = build_graph(loss, m, timings=t)
    ops = [n for n in g.nodes.values() if n.kind == "op"]
    assert all(n.forward_s is not None and n.forward_s > 0 for n in ops if n.label == "Linear")
    assert all(n.backward_s is not None for n in ops)
    assert not events.ACTIVE


def test_graph_view_widget_select_and_live_refresh():
    m, loss = mlp_loss()
    view = GraphView(loss, m)
    assert "tl-graph-view" in view.widget._dom_classes
    nid = next(i for i, n in view.model.nodes.items() if n.label == "0.weight")
    view.select(nid)
    assert "0.weight" in view._details.value and NOT_COMPUTED in view._details.value
    view.close()
    # live: an in-place write during a "cell" updates the note at once; the figure follows after the cell
    from tinygrad_like.widgets import _base
    x = tl.randn(3, requires_grad=True)
    h = x * 1.0
    view = GraphView((h * h).sum())
    assert "will fail" not in view._note.value
    view._last_draw, _base._BUDGET.next_allowed = 0.0, 0.0
    before = view.redraws
    with tl.no_grad():
        h.add_(1)  # a VersionBump event
    assert "will fail" in view._note.value and view.redraws == before
    view.after_cell()
    assert view.redraws == before + 1
    view.close()
    assert not events.ACTIVE


def test_graph_view_names_tensors_and_redraws_after_backward():
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    b = tl.tensor([3.0, 4.0], requires_grad=True)
    loss = (a * b).sum()
    view = GraphView(loss, names={"a": a, "b": b})
    labels = {n.label for n in view.model.nodes.values() if n.kind in ("leaf", "param")}
    assert labels == {"a", "b"}, labels
    nid = next(i for i, n in view.model.nodes.items() if n.label == "a")
    view.select(nid)
    assert NOT_COMPUTED in view._details.value
    loss.backward()  # BackwardStep events: the view notices without being told
    assert view._stale or view.redraws > 1
    view.after_cell()
    assert NOT_COMPUTED not in view._details.value, view._details.value
    view.close()
    assert not events.ACTIVE


def test_stepper_steps_highlights_and_fills_leaf_grads():
    m, loss = mlp_loss()
    s = BackwardStepper(loss, m)
    assert "tl-backward-stepper" in s.widget._dom_classes
    assert all(state == NOT_COMPUTED for _, state in s.leaf_grads())
    names, highlights, panels = [], [], []
    for _ in range(3):
        s._buttons[0].click()  # the Step button
        names.append(s.current_name)
        highlights.append(s.highlighted)
        panels.append(s._grad_panel.value)
    assert names == ["Div", "Sum", "CrossEntropy"]
    assert len(set(highlights)) == 3 and len(set(panels)) == 3
    assert "incoming" in panels[-1] and "tl-current-name" in s._current.value
    fig = draw_graph(build_graph(loss, m), s.highlighted)
    assert matplotlib.colors.to_hex(patch_for(fig, s.highlighted).get_edgecolor()) == HIGHLIGHT
    s.step(2)
    filled = dict(s.leaf_grads())
    assert filled["2.weight"] != NOT_COMPUTED and filled["0.weight"] == NOT_COMPUTED
    s.run()
    assert s.done and all(state != NOT_COMPUTED for _, state in s.leaf_grads())
    ref = {n: p.grad.numpy().copy() for n, p in m.named_parameters()}
    s.reset()
    assert all(state == NOT_COMPUTED for _, state in s.leaf_grads()) and s.current is None
    s._buttons[2].click()  # Run to end, again: the same gradients as the first time
    for n, p in m.named_parameters():
        np.testing.assert_array_equal(p.grad.numpy(), ref[n])


def test_stepper_shows_a_version_error_instead_of_raising():
    x = tl.randn(3, requires_grad=True)
    h = x * 1.0
    y = (h * h).sum()
    with tl.no_grad():
        h.add_(1)
    s = BackwardStepper(y)
    s.run()
    assert s.error is not None and not s.done
    assert "modified by an in-place operation" in s._error.value
    with pytest.raises(ValueError, match="needs a tensor with a graph"):
        BackwardStepper(tl.ones(2))


def test_views_do_not_keep_themselves_or_the_graph_alive():
    import gc
    import weakref

    from tinygrad_like.widgets import KernelTimeline, StorageView
    w = tl.randn(3, requires_grad=True)
    loss = (w * w).sum()
    alive = weakref.ref(loss)
    views = [GraphView(loss), StorageView(), KernelTimeline(), BackwardStepper(loss)]
    views[-1]._buttons[0].click()
    assert events.ACTIVE
    del views, loss
    gc.collect()
    tl.zeros(1).add_(1)  # an event: dead views' subscriptions remove themselves
    assert alive() is None and not events.ACTIVE
