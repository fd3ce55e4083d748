"""``Dashboard(loss, model)``: the views in tabs -- Graph, Backward, Storage, Kernels, Memory.

The views are imported when the dashboard is built, not when this module is, and each is built on its own:
a view that fails to import or to build leaves an error note in its tab (and in ``dashboard.errors``) while
the other tabs work. Without a loss the Graph and Backward tabs hold a placeholder until
:meth:`Dashboard.set_loss`.

Every view refreshes itself (after each cell, and throttled while events stream in during a cell);
the dashboard adds only what tabs need: switching to a tab redraws that view, and :meth:`Dashboard.refresh`
redraws the visible one.
"""

from __future__ import annotations

import html
import importlib
import weakref

import ipywidgets

from tinygrad_like import events, sites
from tinygrad_like.autograd.torch_nodes import view_label

from ._base import View, _subscribe_weakly, weak_callback
from ._static_picture import add_svg

#: tab title -> (module in this package, class name)
VIEWS = {
    "Graph": ("graph_view", "GraphView"),
    "Backward": ("stepper", "BackwardStepper"),
    "Storage": ("storage_view", "StorageView"),
    "Kernels": ("kernel_view", "KernelTimeline"),
    "Memory": ("memory_view", "MemoryTimelineView"),
}
TITLES = tuple(VIEWS)
#: tabs that need a loss
LOSS_TABS = ("Graph", "Backward")


def _view_class(title: str):
    module, name = VIEWS[title]
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)


def _note(css: str, text_html: str) -> ipywidgets.HTML:
    w = ipywidgets.HTML(f"<div style='padding:8px;font-size:13px'>{text_html}</div>")
    w.add_class(css)
    return w


class Dashboard(View):
    """Graph, Backward, Storage, Kernels and Memory views in an ``ipywidgets.Tab`` (class ``tl-dashboard-tabs``).

    ``follow=True`` keeps the Graph and Backward tabs on the newest graph: after each cell they show the graph
    of the last op recorded (in a training loop, the last step's loss), so they never show a graph the
    optimizer has since made stale. A graph whose backward already ran (every step of a training loop) cannot be
    stepped: its saved tensors are freed. The Graph tab still shows it; the Backward tab says so and how to get a
    graph it can step (a loss computed without ``backward()``, which it picks up after the cell, or
    ``retain_graph=True``).

    ``views`` maps each tab title to its view (None for a placeholder or a view that failed to build);
    ``errors`` maps a title to the reason its view is missing. ``refresh()`` redraws the visible tab,
    ``close()`` closes every view and the dashboard.
    """

    css_class = "tl-dashboard"
    listens_to = ()

    def __init__(self, loss=None, model=None, *, follow: bool = False) -> None:
        self.loss, self.module = None, model
        self.follow = follow
        self._latest = None  # follow=True: a weak reference to the newest recorded graph node
        self._backward_root = None  # follow=True: the root node of the newest backward pass (held)
        self._follow_unsubscribe = _subscribe_weakly(self, "_note_op", (events.OpRecorded, events.BackwardStep)) \
            if follow else None
        if follow:  # the next forward pass records its lines (until an optimizer steps: a loop does not pay for them)
            sites.request_lines()
        self.views: dict[str, View | None] = dict.fromkeys(TITLES)
        self.errors: dict[str, str] = {}
        self._pages: dict[str, ipywidgets.Widget] = {}
        super().__init__(live=False)
        self.tab = ipywidgets.Tab()
        self.tab.add_class("tl-dashboard-tabs")
        self.widget.children = (self._controls(), self.tab)
        for title in ("Storage", "Kernels", "Memory"):
            self._build(title)
        if loss is None:
            for title in LOSS_TABS:
                self._placeholder(title)
        else:
            for title in LOSS_TABS:
                self._build(title, loss)
            self.loss = loss
        self._update_tabs()
        # (weakly: the Tab sits in ipywidgets' registry until closed, and a bound method would keep the dashboard,
        # its views and their graphs alive with it)
        self.tab.observe(weak_callback(self, "_on_select"), names="selected_index")

    # ---- building ------------------------------------------------------------------------------------
    def _build(self, title: str, loss=None) -> None:
        """Make one tab's view; on failure put the reason in the tab instead. A graph whose backward already ran
        cannot be stepped: the Backward tab then explains how to get one that can (see :func:`freed_note`)."""
        if title == "Backward" and graph_freed(loss):
            self.views[title] = None
            self.errors.pop(title, None)
            self._pages[title] = _note("tl-dashboard-note", freed_note(loss, self.follow))
            return
        try:
            cls = _view_class(title)
            if title in LOSS_TABS:
                view = cls(loss, model=self.module)
            elif title == "Storage":
                view = cls(model=self.module)
            elif title == "Memory":  # (each cell's memory, recorded only while this tab is the one shown)
                view = cls(model=self.module, per_cell=True, lines=False)
            else:
                view = cls()
        except Exception as exc:  # noqa: BLE001 - one broken view must not take the dashboard down
            reason = f"{type(exc).__name__}: {exc}"
            self.views[title], self.errors[title] = None, reason
            self._pages[title] = _note("tl-dashboard-error",
                                       f"<b>{title}</b> view unavailable: {html.escape(reason)}")
            return
        self.views[title] = view
        self.errors.pop(title, None)
        self._pages[title] = view.widget

    def _placeholder(self, title: str) -> None:
        self.views[title] = None
        self.errors.pop(title, None)
        self._pages[title] = _note(
            "tl-dashboard-placeholder",
            f"<b>{title}</b>: no loss yet. Compute one and call <code>dashboard.set_loss(loss)</code>.")

    def _update_tabs(self) -> None:
        selected = self.tab.selected_index
        self.tab.children = tuple(self._pages[t] for t in TITLES)
        self.tab.titles = TITLES
        if selected is not None and selected != self.tab.selected_index:
            self.tab.selected_index = selected
        self._show_selected()

    def _show_selected(self) -> None:
        """Only the visible tab's view does live work; the others remember what changed and catch up when shown."""
        current = self.selected
        for title, view in self.views.items():
            if view is not None:
                view.set_shown(title == current and not self.paused, catch_up=False)  # (refresh() draws it)

    def set_loss(self, loss, model=None) -> None:
        """Show the graph of ``loss`` and step its backward (replacing the views of an earlier loss).

        ``model`` (optional) names parameters by their module path; it replaces the dashboard's model,
        and the Storage view is rebuilt with it.
        """
        if model is not None and model is not self.module:
            self.module = model
            self._close_view("Storage")
            self._build("Storage")
        for title in LOSS_TABS:
            self._close_view(title)
            self._build(title, loss)
        self.loss = loss
        self._update_tabs()

    def _close_view(self, title: str) -> None:
        view = self.views.get(title)
        if view is not None:
            view.close()
        self.views[title] = None

    # ---- refreshing ------------------------------------------------------------------------------------
    @property
    def selected(self) -> str | None:
        """The title of the visible tab."""
        i = self.tab.selected_index
        return None if i is None else TITLES[i]

    def select(self, title: str) -> None:
        """Show tab ``title`` (which redraws its view)."""
        self.tab.selected_index = TITLES.index(title)

    def _render(self) -> None:
        title = self.selected
        view = self.views.get(title) if title is not None else None
        if view is not None:
            view.refresh()

    def _on_select(self) -> None:
        self._show_selected()
        if self.tab.selected_index is not None:
            self.refresh()

    def pause(self) -> None:
        """Pause every tab's live updates (they catch up on ``resume()``)."""
        super().pause()
        self._show_selected()

    def resume(self) -> None:
        super().resume()
        self._show_selected()
        self.refresh()

    def after_cell(self) -> None:
        """With ``follow=True``: show the newest graph once the cell ends (each view refreshes itself).

        The newest graph is the one of the last op recorded while it is alive (the user's ``loss`` keeps it),
        else the one the last backward pass ran through (a training step inside a function, whose loss is gone).
        """
        if not self.follow:
            return
        node = self._latest() if self._latest is not None else None
        if node is None:
            node = self._backward_root
        shown = self.loss.grad_fn if hasattr(self.loss, "grad_fn") else self.loss
        if node is not None and node is not shown:
            self.set_loss(node)

    def _note_op(self, event) -> None:
        """follow=True: remember the newest recorded graph node weakly (the user's loss keeps it alive), and the
        root of the newest backward pass strongly (its saved tensors are freed by then: a small graph)."""
        kind = type(event)
        if kind is events.OpRecorded:
            self._latest = weakref.ref(event.node)
        elif kind is events.BackwardStep and event.index == 0:
            self._backward_root = event.node

    def close(self) -> None:
        """Close every view, then the dashboard."""
        if self._follow_unsubscribe is not None:
            self._follow_unsubscribe()
            self._follow_unsubscribe = None
        self._latest = self._backward_root = None
        for title in TITLES:
            self._close_view(title)
        super().close()

    def _repr_mimebundle_(self, **kwargs):
        """The widget, plus the Graph tab's drawing as a static SVG for a saved notebook (nbconvert, GitHub)."""
        data = super()._repr_mimebundle_(**kwargs)
        graph = self.views.get("Graph")
        return add_svg(data, graph.to_svg() if graph is not None and hasattr(graph, "to_svg") else None)

    def summary(self) -> str:
        tabs = ", ".join(t if self.views[t] is not None else f"{t} (empty)" for t in TITLES)
        return f"<Dashboard: {tabs}>"


def _root(loss):
    return loss.grad_fn if hasattr(loss, "grad_fn") else loss


def graph_freed(loss, limit: int = 256) -> bool:
    """Whether backward already ran through the graph of ``loss`` (a tensor or a graph node) without
    ``retain_graph``: the first nodes that save tensors have them freed. Looks at ``limit`` nodes at most."""
    from tinygrad_like.autograd.function import FREED, Function

    root = _root(loss)
    stack, seen = ([root] if root is not None else []), set()
    while stack and len(seen) < limit:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        saved = getattr(node, "saved", None)
        if saved is FREED:
            return True
        if saved:  # (a node holding its saved tensors: this graph can be stepped)
            return False
        stack.extend(p for p in (getattr(node, "next", None) or ()) if isinstance(p, Function))
    return False


def freed_note(loss, follow: bool) -> str:
    """What the Backward tab says about a graph whose backward already ran (HTML)."""
    root = _root(loss)
    name = view_label(root)  # (what the graph's boxes call it: torch's names)
    origin = getattr(root, "origin", None)
    site = getattr(origin, "site", None) if origin is not None else None
    made = f" made at {html.escape(site.label)}" if site is not None else ""
    which = "The newest graph" if follow else "This graph"
    then = ("After the cell, this tab steps it." if follow
            else "Then call <code>dashboard.set_loss(loss)</code>.")
    return (f"<b>Backward</b>: {which} (the loss{made}, last op <code>{html.escape(name)}</code>) has already been "
            f"through <code>backward()</code>, which frees the tensors each backward step needs: it cannot be stepped "
            f"any more. The Graph tab still shows it, with its gradients.<br>"
            f"To step through a backward pass, compute a loss and leave its backward to this tab:"
            f"<pre style='margin:4px 0'>loss = loss_fn(model(x), y)   # no loss.backward() in this cell</pre>"
            f"{then} To keep every step of a loop steppable, call <code>loss.backward(retain_graph=True)</code> "
            f"(each graph then keeps its saved tensors until the next one replaces it).")
