"""Notebook views for tinygrad_like, installed as ``tinygrad_like.widgets``.

``GraphView`` (the autograd graph), ``BackwardStepper`` (one backward node at a time),
``StorageView`` (residency, dirty side, version, bytes, fence, pool), ``KernelTimeline`` (kernel
launches and their timings), ``GradcheckView`` (analytic vs finite-difference Jacobians), ``TrainingMonitor``
(loss and diagnostics while training), ``LaunchView`` (what the threads of one kernel launch on the emulated
device did: ``tl.cuda.trace()``), ``MemoryTimelineView`` (bytes alive over a training step, by what they are for:
``tl.memory_timeline()``), ``FigureWidget`` (a matplotlib figure as SVG in the page's light or dark
theme, with clickable axes) and ``Dashboard`` (the views in tabs). ``%load_ext tinygrad_like.widgets``
refreshes open views after every cell.

Views free what they hold (``lifecycle``): a view whose cell is run again, or whose output was cleared, closes and
leaves a shell that says so (IPython's output history ``Out`` would otherwise keep every old view and its graph);
a view dropped without ``close()`` closes its widgets; a closed view displays as "closed".

Widgets observe the core only through :mod:`tinygrad_like.events` (``subscribe(fn) -> unsubscribe``)
and the core's public objects; the core never imports anything from here, nor ipywidgets, matplotlib
or IPython. This folder lives at the top of the repository and is mapped into the package at install
time (see ``package-dir`` in pyproject.toml).
"""

from tinygrad_like import sites as _sites

from ._base import load_ipython_extension, refresh_open_views, unload_ipython_extension
from .graph_model import build_graph, record_timings
from .graph_view import GraphView
from .stepper import BackwardStepper

# The graph views group ops by the module that made them: from now on the core records each graph node's module
# scope (one attribute read per op; tl.sites.record_scopes(False) turns it off), and each node's line of user code
# (a stack walk per op, which costs more: tl.sites.origin) until an optimizer first steps, so a training loop
# does not pay for it. A view that shows lines asks for them again when it is made (sites.request_lines: until the
# next optimizer step, however long the view stays open); a graph built while they were off says "re-run the cell to
# record lines". tl.sites.record_origins() records them always.
_sites.record_scopes(True)
_sites.request_lines()

__all__ = ["GraphView", "BackwardStepper", "build_graph", "record_timings", "refresh_open_views",
           "load_ipython_extension", "unload_ipython_extension"]

try:  # views written alongside; exported once present
    from .storage_view import StorageView  # noqa: F401
    from .kernel_view import KernelTimeline  # noqa: F401
    from .layouts import draw_layouts  # noqa: F401
    __all__ += ["StorageView", "KernelTimeline", "draw_layouts"]
except ImportError:  # pragma: no cover
    pass
try:
    from .gradcheck_view import GradcheckView  # noqa: F401
    from .dashboard import Dashboard  # noqa: F401
    from .training_view import TrainingMonitor, draw_filters  # noqa: F401
    from .diagnostics import LayerDiagnostics, draw_confusion, draw_diagnostics  # noqa: F401
    from .figure_widget import FigureWidget  # noqa: F401
    from .launch_view import LaunchView  # noqa: F401
    from .memory_view import MemoryTimelineView  # noqa: F401
    __all__ += ["GradcheckView", "Dashboard", "TrainingMonitor", "draw_filters", "LayerDiagnostics", "draw_confusion",
                "draw_diagnostics", "FigureWidget", "LaunchView", "MemoryTimelineView"]
except ImportError:  # pragma: no cover
    pass
