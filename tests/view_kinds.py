"""One view of each kind, made the way a learner makes it, for the tests that check what every view frees
(``test_widgets_close.py``: closed views; ``test_widgets_lifecycle.py``: dropped and released ones)."""

from __future__ import annotations

import tinygrad_like as tl

KINDS = ("graph", "stepper", "storage", "kernels", "training", "dashboard", "dashboard_follow", "gradcheck")


def make_view(kind: str, model, loss):
    """A view of ``kind`` (one of ``KINDS``) on ``model`` and its ``loss`` (imported here: the test modules that use
    this skip first when ipywidgets or matplotlib is missing)."""
    if kind == "graph":
        from tinygrad_like.widgets.graph_view import GraphView
        return GraphView(loss, model)
    if kind == "stepper":
        from tinygrad_like.widgets.stepper import BackwardStepper
        return BackwardStepper(loss, model)
    if kind == "storage":
        from tinygrad_like.widgets.storage_view import StorageView
        return StorageView(model=model)
    if kind == "kernels":
        from tinygrad_like.widgets.kernel_view import KernelTimeline
        return KernelTimeline()
    if kind == "training":
        from tinygrad_like.widgets.training_view import TrainingMonitor
        return TrainingMonitor(10, model=model, diagnostics_every=1)
    if kind in ("dashboard", "dashboard_follow"):
        from tinygrad_like.widgets.dashboard import Dashboard
        return Dashboard(loss, model, follow=kind == "dashboard_follow")
    if kind == "gradcheck":
        from tinygrad_like.widgets.gradcheck_view import GradcheckView
        return GradcheckView(lambda a: (a * a).sum(), [tl.randn(3, dtype=tl.float64, requires_grad=True)])
    raise ValueError(f"unknown view kind {kind!r}; one of {KINDS}")
