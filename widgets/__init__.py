"""Notebook views for tinygrad_like, installed as ``tinygrad_like.widgets``.

The views themselves -- ``GraphView`` (the autograd graph), ``BackwardStepper`` (one backward node at a
time), ``StorageView`` (residency, dirty side, version, bytes, fence, pool), ``KernelTimeline`` (kernel
launches and their timings) and ``Dashboard`` (all of them in tabs) -- arrive with the widgets issue.
Nothing is exported yet.

Widgets observe the core only through :mod:`tinygrad_like.events` (``subscribe(fn) -> unsubscribe``)
and the core's public objects; the core never imports anything from here, nor ipywidgets, matplotlib
or IPython. This folder lives at the top of the repository and is mapped into the package at install
time (see ``package-dir`` in pyproject.toml).
"""

__all__: list[str] = []
