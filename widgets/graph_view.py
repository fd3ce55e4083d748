"""``GraphView(loss, model)``: the autograd graph as an interactive drawing in the browser.

Python builds the model and the layout (``graph_model``); the browser (``static/graph.js``, through
``graph_widget.GraphWidget``) draws it, zooms, pans, shows a tooltip per node and reports clicks. Large graphs
start folded by module path (at most about 60 boxes; a group of one op is never folded); click a group to expand
it. A tensor with no graph behind it (no ``grad_fn``) shows a note saying why and what to view instead.
``view.selected`` is the id of the selected box, ``view.selected_node`` its graph node (or group).

A saved notebook shows a static SVG of the same drawing where no kernel runs the widget, and a one-line
``text/plain`` summary that stays the same from run to run.

>>> import tinygrad_like as tl
>>> from tinygrad_like.widgets import GraphView
>>> x = tl.randn(3, requires_grad=True)
>>> view = GraphView((x * 2).sum(), names={"x": x})
>>> view.summary()
'<GraphView: 4 nodes, 0 stale>'
"""

from __future__ import annotations

from tinygrad_like import Tensor, events, is_grad_enabled, sites
from tinygrad_like.autograd.function import Function

from . import selection
from ._base import View
from ._static_picture import add_svg
from .graph_model import (
    MAX_BOXES,
    NO_LINE,
    GNode,
    GraphModel,
    _all_nodes,
    _fmt_shape,
    _us,
    build_graph,
    default_expanded,
    foldable,
    graph_notes,
    graph_payload,
    is_fused,
    step_rows,
)
from .graph_svg import graph_svg
from .graph_widget import GraphWidget

#: A fused recurrent layer with at most this many time steps opens into them at once (more: into their folded run)
FEW_STEPS = 32

#: How many boxes of earlier drawings (one per set of expanded groups) a view keeps: stepping back and forth through
#: a model revisits the same few sets, and each costs a layout (milliseconds to a tenth of a second) the first time.
#: Bounded by boxes, not drawings, so a view of a huge graph does not keep several copies of it (a box is ~1 KB).
LAYOUT_CACHE_BOXES = 6000


class _Stepping:
    """While a BackwardStepper runs backward nodes (a click on Step, outside any cell), other views of the same graph
    only mark themselves stale and catch up after the next cell: redrawing them on each node would make the first
    click (before the shared live-redraw budget kicks in) cost a whole redraw of every sibling view."""

    depth = 0


STEPPING = _Stepping()


class GraphView(View):
    """The autograd graph reachable from ``tensor`` (parameters named through ``model``, other tensors through
    ``names``: ``{"a": a, "b": b}``). Redraws after an in-place write (stale saved tensors) and after a
    backward (gradients filled, saved tensors freed)."""

    css_class = "tl-graph-view"
    listens_to = (events.VersionBump, events.BackwardStep)
    stepper = False

    def __init__(self, tensor, model=None, *, names: dict | None = None, timings=None, max_boxes: int = MAX_BOXES,
                 height: int = 560, live: bool = True) -> None:
        self.tensor, self.module, self.names, self.timings = tensor, model, names, timings
        self.max_boxes = max_boxes
        self.model: GraphModel = build_graph(tensor, model, names, timings)
        self._model_is_fresh = True  # (the first drawing uses it: building it again cost 70-90 ms at 4,010 nodes)
        self._index_events()
        self.expanded: set[str] = default_expanded(self.model, max_boxes)
        self._learner_open: set[str] = set()  # groups the learner opened (expand, click, search): left open
        self._stepper_open: set[str] = set()  # groups a stepper opened to show its node: folded again when it leaves
        self._fold_note = False  # folded to fit (a "fold_to_fit" message): say so above the drawing
        self._payloads: dict[frozenset, dict] = {}  # expanded set -> drawing, for this model
        self._height = height
        # the next forward pass records the user's line of each node (a graph built before says "re-run the cell"),
        # until an optimizer steps: a view left open does not keep a training loop walking the stack for every op
        sites.request_lines()
        super().__init__(live=live)
        self.refresh()
        selection.register(self)  # weakly: a KernelTimeline click selects our node (see on_shared_select)

    def _make_widget(self) -> GraphWidget:
        return GraphWidget(self, stepper=self.stepper, height=self._height)

    # ---- what the user does ----------------------------------------------------------------------------
    @property
    def selected(self) -> str:
        """The id of the selected box: a node ("n12") or a folded group ("group:blocks.3"); "" for none."""
        return self.widget.selected

    @property
    def selected_node(self) -> GNode | object | None:
        """The selected graph node (a :class:`GNode`), group (a ``Group``), or None."""
        sel = self.widget.selected
        if not sel:
            return None
        return self.model.groups.get(sel) or self.model.by_id(sel)

    def select(self, what) -> None:
        """Select a node: its id ("n12"), index, graph node (Function), leaf Tensor, name, or a group id.
        A node inside a folded group is revealed first (its groups expand)."""
        idx = self._resolve(what)
        if isinstance(idx, str):  # a group
            self.widget.selected = idx
            return
        self.reveal(idx)

    def reveal(self, index: int) -> None:
        """Expand the groups around node ``index`` and select it."""
        chain = set(self.model.chains[index])
        self._opened_by_learner(chain)
        if not chain <= self.expanded:
            self.expanded |= chain
            self._send_graph()
        self.widget.selected = self.model.nodes[index].id

    def expand(self, group: str) -> None:
        """Unfold a group: "blocks.3", "group:blocks.3" or a run id such as "run:blocks.0-39". The groups around it
        unfold too, so that it shows: ``expand("blocks.3")`` opens the run "blocks.0-39 x40" folded around it."""
        gid = self._group_id(group)
        chain, g = set(), gid
        while g is not None:
            chain.add(g)
            g = self.model.groups[g].parent
        if is_fused(self.model, gid):  # a fused layer opens straight into its steps when there are few to read
            chain |= {c for c in self.model.groups[gid].children
                      if self.model.groups[c].kind == "run" and len(self.model.groups[c].children) <= FEW_STEPS}
        self._opened_by_learner(chain)
        self.expanded |= chain
        self._send_graph()

    def collapse(self, group: str) -> None:
        gid = self._group_id(group)
        inner = {g for g in self.expanded if g == gid or self._inside(g, gid)}
        self.expanded -= inner
        self._learner_open -= inner
        self._stepper_open -= inner
        self._send_graph()

    def fold_to_fit(self) -> None:
        """What the browser asks when Fit would shrink the labels below 10 px: back to the overview (the default
        folding, plus the groups that must stay open: a stepper's current node), with a note saying so."""
        keep = self._must_show()
        base = default_expanded(self.model, self.max_boxes)
        self._stepper_open = keep - base
        self._learner_open = set()
        self.expanded = base | keep
        self._fold_note = True
        self._send_graph()

    def _must_show(self) -> set[str]:
        """Groups that stay open whatever the learner folds (none; a stepper keeps its current node's groups)."""
        return set()

    def _opened_by_learner(self, groups: set[str]) -> None:
        """The learner opened these (a click, ``expand``, a search): no stepper folds them again; the drawing is no
        longer the folded overview."""
        self._learner_open |= groups
        self._stepper_open -= groups
        self._fold_note = False

    def toggle(self, box_id: str) -> None:
        """What a click on a group does: expand it, or collapse it when expanded. For a node, collapse the
        innermost group around it."""
        if box_id in self.model.groups:
            (self.collapse if box_id in self.expanded else self.expand)(box_id)
            self.widget.selected = box_id
        elif box_id.startswith("n"):
            fold = foldable(self.model)  # (a group of one op never folds: fold the innermost one that does)
            chain = [g for g in self.model.chains[int(box_id[1:])] if g in fold]
            if chain:
                self.collapse(chain[-1])
                self.widget.selected = chain[-1]

    def on_message(self, msg: dict) -> None:
        kind = msg.get("type")
        if kind == "toggle":
            self.toggle(str(msg.get("id", "")))
        elif kind == "reveal":
            self.reveal(int(msg["node"]))
        elif kind == "fold_to_fit":
            self.fold_to_fit()
        elif kind == "pause":  # the toolbar's Pause / Resume / Close (every view has them: see View)
            self.pause()
        elif kind == "resume":
            self.resume()
        elif kind == "close":
            self.close()

    def on_shared_select(self, node) -> None:
        """Another view (a KernelTimeline bar) selected ``node``: select its box if this graph shows it."""
        idx = self.model.node_for(node) if node is not None else None
        if idx is not None:
            self.reveal(idx)

    def on_selected(self, box_id: str) -> None:
        self.widget.details = self.details(box_id) if box_id else {}

    # ---- helpers -------------------------------------------------------------------------------------------
    def _group_id(self, group: str) -> str:
        gid = group if group.startswith(("group:", "run:")) else f"group:{group}"
        if gid not in self.model.groups:
            known = ", ".join(sorted(g.split(":", 1)[1] for g in self.model.groups)[:12])
            raise KeyError(f"no group {group!r} in this graph; groups are named by module path: {known}")
        return gid

    def _inside(self, gid: str, outer: str) -> bool:
        g = self.model.groups[gid].parent
        while g is not None:
            if g == outer:
                return True
            g = self.model.groups[g].parent
        return False

    def _resolve(self, what) -> int | str:
        m = self.model
        if isinstance(what, (Function, Tensor)):
            idx = m.node_for(what)
            if idx is None:
                raise KeyError(f"{what!r} is not a node of this graph")
            return idx
        if isinstance(what, int):
            if not 0 <= what < len(m.nodes):
                raise IndexError(f"node index {what} out of range: this graph has {len(m.nodes)} nodes")
            return what
        if isinstance(what, str):
            if what in m.groups:
                return what
            if what.startswith("n") and what[1:].isdigit() and int(what[1:]) < len(m.nodes):
                return int(what[1:])
            hits = [n.index for n in m.nodes if n.label == what or f"{n.module}.{n.label}" == what]
            if hits:
                return hits[0]
            if f"group:{what}" in m.groups:
                return f"group:{what}"
            raise KeyError(f"no node or group named {what!r} in this graph")
        raise TypeError(f"select() takes a node id, index, name, Function or Tensor, got {type(what).__name__}")

    # ---- drawing --------------------------------------------------------------------------------------------
    def _rebuild(self) -> None:
        if self._model_is_fresh:  # (nothing ran since __init__ built it)
            self._model_is_fresh = False
            return
        old = self.model
        self.model = build_graph(self.tensor, self.module, self.names, self.timings)
        if len(self.model.nodes) != len(old.nodes):  # a different graph: fold it afresh
            self.expanded = default_expanded(self.model, self.max_boxes)
            self._learner_open, self._stepper_open = set(), set()
        groups = set(self.model.groups)
        self.expanded &= groups
        self._learner_open &= groups
        self._stepper_open &= groups
        self._payloads = {}  # (the drawings show the old model's tooltips and marks)
        self._index_events()

    def _index_events(self) -> None:
        """What of the model the event filter looks up: the saved tensors whose writes matter to the drawing, and
        the graph's own nodes (a backward through another graph does not concern it)."""
        self._watch = _saved_storages(self.model)
        self._own = _op_ids(self.model)

    def _on_event(self, event) -> None:
        """A backward pass matters only when it runs through this graph's nodes. An in-place write matters to the
        drawing only when it hits a tensor a node of this graph saved and turns that node stale. Writes elsewhere
        are ignored; writes to a tensor already drawn as modified (every later optimizer step of a training loop)
        move only the version numbers of the details panel, so they wait for the end of the cell instead of
        redrawing the graph live."""
        kind = type(event)
        if kind is events.VersionBump:
            shown = self._watch.get(event.storage_id)
            if shown is None:
                return
            if shown:
                self._stale = True
                return
        elif kind is events.BackwardStep:
            if id(event.node) not in self._own:
                return  # (the backward of another graph, e.g. every later step of a training loop)
            if STEPPING.depth:
                self._stale = True  # a stepper's click: redraw after the next cell, not on the click
                return
        super()._on_event(event)

    def _notes(self, n_boxes: int) -> list[dict]:
        notes = graph_notes(self.model, n_boxes)
        if self._fold_note and n_boxes < len(self.model.nodes):  # (an overview that shows every node folds nothing)
            shown = f"{len(self.model.nodes)} nodes shown as"
            notes = [n for n in notes if not n["text"].startswith(shown)]
            notes.append({"level": "info", "text": f"Folded to fit: {len(self.model.nodes)} nodes shown as {n_boxes} "
                                                   f"boxes; open a group to read its ops."})
        if isinstance(self.tensor, Tensor) and self.tensor.grad_fn is None:
            notes.append({"level": "warn", "text": no_graph_note(self.tensor)})
        return notes

    def _send_graph(self) -> None:
        key = frozenset(self.expanded)
        cached = self._payloads.get(key)
        if cached is None:
            cached = graph_payload(self.model, self.expanded, notes=[])
            kept = sum(len(p["boxes"]) for p in self._payloads.values())
            while self._payloads and kept + len(cached["boxes"]) > LAYOUT_CACHE_BOXES:  # the oldest go first
                kept -= len(self._payloads.pop(next(iter(self._payloads)))["boxes"])
            self._payloads[key] = cached
        payload = dict(cached)  # (the notes change with the folding note; the drawing does not)
        payload["notes"] = self._notes(len(payload["boxes"]))
        self.widget.graph = payload
        if self.widget.selected:
            self.on_selected(self.widget.selected)

    def _render(self) -> None:
        self._rebuild()
        self._send_graph()

    def close(self) -> None:
        selection.unregister(self)
        super().close()

    def after_cell(self) -> None:
        """Redraw after a cell only when something it shows changed (an in-place write, a backward, a step), and only
        while it is on screen and not paused."""
        if self._stale and self._live():
            self.refresh()

    # ---- details of the selection ---------------------------------------------------------------------------
    def details(self, box_id: str) -> dict:
        """What the details panel shows for a box (plain data; the browser renders it)."""
        m = self.model
        if box_id in m.groups and is_fused(m, box_id):  # a fused recurrent layer: its node, and its steps to open
            node = m.nodes[next(i for i in m.groups[box_id].members if m.nodes[i].kind == "op")]
            return self._node_details(node) | {"actions": ["collapse" if box_id in self.expanded else "expand"]}
        if box_id in m.groups:
            g = m.groups[box_id]
            ids = _all_nodes(m.groups, box_id)
            ops = [m.nodes[i] for i in ids if m.nodes[i].kind == "op"]
            steps = sum(1 for i in ids if m.nodes[i].kind == "step")  # (drawn boxes, not graph nodes)
            rows = [["group", g.label], ["kind", g.type_name], ["nodes", str(len(ids) - steps)],
                    ["ops", str(len(ops))]]
            if steps and not ops:  # a run of a fused layer's time steps: no ops of their own
                rows[-1] = ["time steps", f"{steps}, inside one layer node"]
            if g.kind == "run":
                rows.append(["blocks", ", ".join(m.groups[c].short for c in g.children[:4])
                             + (" …" if len(g.children) > 4 else "")])
            return {"title": g.label, "rows": rows, "saved": [], "grads": [],
                    "actions": ["collapse" if box_id in self.expanded else "expand"]}
        if not (box_id.startswith("n") and box_id[1:].isdigit()) or int(box_id[1:]) >= len(m.nodes):
            return {}
        return self._node_details(m.nodes[int(box_id[1:])])

    def _module_label(self, n: GNode) -> str | None:
        """The node's module as the drawing names it ("layer1.0.relu (call 2)", "Sequential[0]"), not its raw path."""
        g = self.model.groups.get(f"group:{n.module}") if n.module else None
        if g is not None and g.marker == "fused" and g.parent is not None:  # a fused layer's node: its layer
            g = self.model.groups[g.parent]
        return g.label if g is not None else n.module

    def _node_details(self, n: GNode) -> dict:
        m = self.model
        module = self._module_label(n)
        title = f"{n.label} · {module}" if n.module and n.kind == "op" else n.label
        if n.kind == "step":  # a time step of a fused recurrent layer: what the layer node saved for it
            return {"title": f"{n.label} · {module}", "rows": step_rows(n), "saved": [], "grads": [],
                    "actions": ["collapse"]}
        if n.kind == "op":
            rows = [["op", n.label], ["module", module or "—"], ["output", f"{_fmt_shape(n.shape)} {n.dtype}"],
                    ["device", m.device], ["created at", n.site or NO_LINE]]
            for src, dst, slot, shape in m.edges:
                if dst == n.index:
                    name = n.inputs[slot] if slot < len(n.inputs) else f"input {slot}"
                    rows.append([f"in: {name}", f"{m.nodes[src].label} {shape}"])
            attrs = {k: v for k, v in n.obj.attributes().items() if _plain(v)}
            rows += [[k, str(v)] for k, v in attrs.items()]
        else:
            rows = [["tensor", n.label], ["kind", {"param": "parameter", "leaf": "leaf tensor"}.get(n.kind, n.kind)],
                    ["shape", f"{_fmt_shape(n.shape)} {n.dtype}"], ["device", n.device]]
            if n.kind != "output" or n.grad:
                rows.append([".grad", n.grad])
        for key, val in (("forward time", _us(n.forward_s)), ("backward time", _us(n.backward_s))):
            if val is not None:
                rows.append([key, val])
        saved = []
        if n.saved and n.saved[0].get("freed"):
            saved.append({"text": "saved tensors: freed after backward (use retain_graph=True to keep them)",
                          "stale": False})
        else:
            for i, r in enumerate(n.saved):
                where = "; ".join(r["writes"])
                saved.append({"text": f"saved {i}: {_fmt_shape(r['shape'])} {r['dtype']}, version at save "
                                      f"{r['saved_version']}, now {r['current_version']}"
                                      + (f" — modified by {where}" if where and r["stale"] else ""),
                              "stale": bool(r["stale"])})
        return {"title": title, "rows": rows, "saved": saved, "grads": [],
                "actions": ["collapse"] if m.chains[n.index] else []}

    # ---- display ----------------------------------------------------------------------------------------------
    def summary(self) -> str:
        return f"<{type(self).__name__}: {len(self.model.nodes)} nodes, {len(self.model.stale_nodes)} stale>"

    def to_svg(self) -> str:
        """The current drawing as a static SVG document (what nbconvert and GitHub show)."""
        return graph_svg(self.widget.graph, self.widget.state if self.stepper else None)

    def _repr_mimebundle_(self, **kwargs):
        return add_svg(super()._repr_mimebundle_(**kwargs), self.to_svg())


def no_graph_note(t: Tensor) -> str:
    """Why a tensor has no graph behind it (its ``grad_fn`` is None), from its state, and what to do instead."""
    if t.requires_grad:
        return ("No graph to draw: this tensor is a leaf (requires_grad=True, grad_fn=None), made directly rather "
                "than computed from other tensors, so autograd recorded nothing before it. Backward ends here and "
                "fills its .grad. View a result computed from it instead, e.g. GraphView(loss, model).")
    why = ("it was computed while gradients were off (you are inside no_grad() or inference_mode() now)"
           if not is_grad_enabled() else
           "it was computed under no_grad() or inference_mode(), or from tensors that do not require grad, or "
           "detached")
    return (f"No graph to draw: this tensor has requires_grad=False and grad_fn=None: {why}, so autograd recorded "
            f"no graph. Make the inputs you want gradients for with requires_grad=True (or use a model's "
            f"parameters), compute outside no_grad(), then view the result.")


def _plain(v) -> bool:
    return isinstance(v, (int, float, str, bool, tuple)) and len(str(v)) < 60


__all__ = ["GraphView"]


def _saved_storages(model) -> dict[int, bool]:
    """Storage id -> whether the drawing already shows it modified, for every tensor a node of ``model`` saved."""
    watch: dict[int, bool] = {}
    for n in model.nodes:
        for r in n.saved:
            sid = r.get("storage_id")
            if sid is not None:
                watch[sid] = watch.get(sid, False) or bool(r["stale"])
    return watch


def _op_ids(model) -> set[int]:
    """``id()`` of every graph node (Function) the drawing shows (the view holds them alive through its tensor)."""
    return {id(n.obj) for n in model.nodes if n.kind == "op"}
