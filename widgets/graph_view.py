"""``GraphView(tensor)``: the autograd graph as a layered drawing, with a details panel per node.

>>> import tinygrad_like as tl
>>> from tinygrad_like.widgets import GraphView
>>> x = tl.randn(3, requires_grad=True)
>>> view = GraphView((x * 2).relu().sum())
>>> sorted(n.label for n in view.model.nodes.values())
['Mul', 'Relu', 'Sum', 'leaf', 'output']
"""

from __future__ import annotations

import html

import ipywidgets as W

from tinygrad_like import events

from ._base import View, figure_output, weak_callback
from .graph_model import NOT_COMPUTED, GraphModel, build_graph

COLORS = {"leaf": "#cfe8ff", "param": "#b9e4c9", "op": "#eeeeee", "output": "#ffe08a", "module": "#e3d5f5"}
DEVICE_EDGE = {"cpu": "#444444", "cuda": "#2e7d32"}
STALE = "#d32f2f"
HIGHLIGHT = "#ff6f00"


def draw_graph(model: GraphModel, highlight: str | None = None, selected: str | None = None,
               max_width_in: float = 11.0):
    """A matplotlib Figure of ``model``: boxes by kind, inputs at the top, the output at the bottom.

    Stale nodes (a saved tensor modified in place) get a red border and a ``v saved->now`` line;
    ``highlight`` (the node being stepped) gets a thick orange border.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    n_layers = max(model.layers.values(), default=0) + 1
    width = max((sum(1 for v in model.layers.values() if v == k) for k in range(n_layers)), default=1)
    fig_w = min(max_width_in, 1.6 + 1.7 * width)
    fig_h = min(40.0, 0.9 + 1.0 * n_layers)
    fig, ax = plt.subplots(figsize=(fig_w, fig_h), dpi=80)
    ax.set_axis_off()
    pos = {}
    for nid, lay in model.layers.items():
        row = [k for k, v in model.layers.items() if v == lay]
        x = (model.order[nid] + 0.5) / len(row)
        pos[nid] = (x, 1 - (lay + 0.5) / n_layers)
    bw, bh = min(0.9 / width, 0.22), min(0.55 / n_layers, 0.12)
    for src, dst, label in model.edges:
        (x0, y0), (x1, y1) = pos[src], pos[dst]
        ax.annotate("", xy=(x1, y1 + bh / 2), xytext=(x0, y0 - bh / 2),
                    arrowprops=dict(arrowstyle="->", color="#888888", lw=0.8))
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, label, fontsize=6, color="#555555", ha="center", va="center",
                bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8))
    for nid, node in model.nodes.items():
        x, y = pos[nid]
        edge = DEVICE_EDGE["cuda" if node.device.startswith("cuda") else "cpu"]
        lw = 1.0
        if node.stale:
            edge, lw = STALE, 2.0
        if nid == highlight:
            edge, lw = HIGHLIGHT, 3.0
        if nid == selected:
            lw = max(lw, 2.5)
        ax.add_patch(FancyBboxPatch((x - bw / 2, y - bh / 2), bw, bh, boxstyle="round,pad=0.005",
                                    fc=COLORS[node.kind], ec=edge, lw=lw, gid=nid))
        text = node.label
        if node.kind in ("leaf", "param", "output") and node.shape is not None:
            text += f"\n{tuple(node.shape)}"
        if node.kind == "op" and node.stale:
            moved = [f"v{r['saved_version']}->{r['current_version']}" for r in node.saved if r.get("stale")]
            text += "\n" + " ".join(moved)
        if node.forward_s is not None or node.backward_s is not None:
            f = f"{node.forward_s * 1e6:.0f}" if node.forward_s is not None else "-"
            b = f"{node.backward_s * 1e6:.0f}" if node.backward_s is not None else "-"
            text += f"\nfwd {f}us bwd {b}us"
        ax.text(x, y, text, ha="center", va="center", fontsize=7,
                color=STALE if node.stale and node.kind != "output" else "black")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    return fig


def node_details_html(model: GraphModel, nid: str) -> str:
    """The details panel for one node: kind, shape, saved tensors with versions, grad state, timings."""
    n = model.nodes[nid]
    rows = [("kind", n.kind), ("shape", tuple(n.shape) if n.shape is not None else ""), ("dtype", n.dtype)]
    if n.kind in ("leaf", "param"):
        rows.append(("grad", n.grad))
    if n.kind == "op":
        attrs = n.obj.attributes() if hasattr(n.obj, "attributes") else {}
        rows += [(k, v) for k, v in attrs.items() if k not in ("cols", "mask", "logp", "coef", "coef_sum", "xhat",
                                                                "rstd", "fn", "rng_state")]
        rows.append(("device", "CPU (NumPy): no compiled kernel"))
    if n.forward_s is not None:
        rows.append(("forward time", f"{n.forward_s * 1e6:.1f} us"))
    if n.backward_s is not None:
        rows.append(("backward time", f"{n.backward_s * 1e6:.1f} us"))
    if n.kind == "module":
        rows.append(("folded", f"{n.folded} nodes; view.expand({n.module!r}) shows them"))
    body = "".join(f"<tr><td><b>{html.escape(str(k))}</b></td><td>{html.escape(str(v))}</td></tr>" for k, v in rows)
    saved = ""
    if n.saved:
        if n.saved[0].get("freed"):
            saved = "<p>saved tensors: freed after backward (use retain_graph=True to keep them)</p>"
        else:
            items = []
            for i, r in enumerate(n.saved):
                color = STALE if r["stale"] else "black"
                where = "; ".join(r["writes"]) if r["writes"] else ""
                items.append(f"<li style='color:{color}'>saved {i}: {r['shape']} {r['dtype']}, version at save "
                             f"{r['saved_version']}, now {r['current_version']}"
                             f"{' &mdash; modified by ' + html.escape(where) if where else ''}</li>")
            saved = "<p>saved tensors:</p><ul>" + "".join(items) + "</ul>"
    return (f"<div class='tl-node-details'><h4 style='margin:2px'>{html.escape(n.label)}</h4>"
            f"<table>{body}</table>{saved}</div>")


class GraphView(View):
    """The autograd graph reachable from ``tensor`` (parameters named through ``model``, other tensors through
    ``names``: ``{"a": a, "b": b}``). Redraws after an in-place write (stale saved tensors) and after a backward
    (gradients filled, saved tensors freed)."""

    css_class = "tl-graph-view"
    listens_to = (events.VersionBump, events.BackwardStep)

    def __init__(self, tensor, model=None, *, names: dict | None = None, timings=None, max_nodes: int = 300,
                 live: bool = True) -> None:
        self.tensor, self.module, self.timings, self.max_nodes = tensor, model, timings, max_nodes
        self.names = names
        self.expanded: tuple = ()
        self.highlight: str | None = None
        self.model = build_graph(tensor, model, names, timings=timings, max_nodes=max_nodes)
        super().__init__(live=live)
        self._figure = W.Output(layout=W.Layout(overflow="auto", max_height="640px"))
        self._select = W.Dropdown(description="node", options=self._options())
        self._select.observe(weak_callback(self, "_show_details"), names="value")
        self._details = W.HTML()
        self._note = W.HTML()
        self.widget.children = (self._note, self._figure, self._select, self._details)
        self.refresh()

    def _options(self):
        return [(f"{n.label} ({n.kind})", nid) for nid, n in sorted(
            self.model.nodes.items(), key=lambda kv: (self.model.layers[kv[0]], self.model.order[kv[0]]))]

    def summary(self) -> str:
        return f"<GraphView: {len(self.model.nodes)} nodes, {len(self.model.stale_nodes)} stale>"

    def select(self, nid: str) -> None:
        """Show the details of node ``nid`` (also what the dropdown does)."""
        self._select.value = nid

    def expand(self, module: str) -> None:
        """Unfold a module that was folded to keep a large graph readable."""
        self.expanded = (*self.expanded, module)
        self.refresh()

    def _live_update(self) -> None:
        """During a cell: rebuild the model and its note (stale versions show at once); the figure
        is redrawn after the cell."""
        self.model = build_graph(self.tensor, self.module, self.names, timings=self.timings, max_nodes=self.max_nodes,
                                 expanded=self.expanded)
        self._note.value = self._note_html()
        self._show_details()

    def _note_html(self) -> str:
        note = f"{len(self.model.nodes)} nodes"
        if self.model.folded:
            parts = ", ".join(f"{m} ({len(ids)} nodes)" for m, ids in self.model.folded.items())
            note += f"; folded by module to stay readable: {parts}. Expand one with view.expand(name)."
        stale = self.model.stale_nodes
        if stale:
            note += (f" <span style='color:{STALE}'>{len(stale)} node(s) hold a saved tensor modified in place "
                     f"since: backward through them will fail.</span>")
        return f"<div class='tl-graph-note'>{note}</div>"

    def _render(self) -> None:
        self.model = build_graph(self.tensor, self.module, self.names, timings=self.timings, max_nodes=self.max_nodes,
                                 expanded=self.expanded)
        self._note.value = self._note_html()
        figure_output(draw_graph(self.model, self.highlight), self._figure)
        opts = self._options()
        if [o[1] for o in self._select.options] != [o[1] for o in opts]:
            self._select.options = opts
        self._show_details()

    def _show_details(self) -> None:
        nid = self._select.value
        if nid is None or nid not in self.model.nodes:
            self._details.value = ""
            return
        self._details.value = node_details_html(self.model, nid)


__all__ = ["GraphView", "draw_graph", "node_details_html", "NOT_COMPUTED"]
