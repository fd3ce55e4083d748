"""``BackwardStepper(loss)``: run a backward pass one node at a time and watch the gradients flow.

It drives ``loss.backward_steps(retain_graph=True)`` (the same generator ``backward()`` drains),
so Reset can start over: it puts every leaf's ``.grad`` back to what it was before the first step.

>>> import tinygrad_like as tl
>>> from tinygrad_like.widgets import BackwardStepper
>>> w = tl.randn(3, requires_grad=True)
>>> s = BackwardStepper((w * w).sum())
>>> s.step(); s.current_name
'Sum'
>>> s.run(); s.done, w.grad is not None
(True, True)
"""

from __future__ import annotations

import html

import ipywidgets as W
import numpy as np

from ._base import View, figure_output, html_table, weak_callback
from .graph_model import NOT_COMPUTED, build_graph
from .graph_view import STALE, draw_graph


def grad_stats(g) -> dict:
    """Shape, mean, std, min and max of a gradient (None stays None)."""
    if g is None:
        return {"shape": None}
    a = np.asarray(g.detach().numpy(), dtype=np.float64)
    if a.size == 0:
        return {"shape": tuple(a.shape), "mean": None, "std": None, "min": None, "max": None}
    return {"shape": tuple(a.shape), "mean": float(a.mean()), "std": float(a.std()), "min": float(a.min()),
            "max": float(a.max())}


def draw_heatmap(g, title: str = "incoming gradient"):
    """A small heatmap of a 1-D or 2-D gradient (None for other ranks)."""
    import matplotlib.pyplot as plt

    if g is None or g.ndim not in (1, 2) or g.numel() == 0:
        return None
    a = np.asarray(g.detach().numpy(), dtype=np.float64)
    a = a.reshape(1, -1) if a.ndim == 1 else a
    a = a[:64, :64]
    fig, ax = plt.subplots(figsize=(3.2, max(0.8, min(3.2, 3.2 * a.shape[0] / a.shape[1]))), dpi=80)
    im = ax.imshow(a, cmap="coolwarm", aspect="auto", vmin=-np.abs(a).max() or -1, vmax=np.abs(a).max() or 1)
    ax.set_title(title, fontsize=8)
    ax.tick_params(labelsize=6)
    fig.colorbar(im, ax=ax, fraction=0.05)
    return fig


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)


class BackwardStepper(View):
    """Buttons Step, Step 10, Run to end, Reset; the same as ``step(n)``, ``run()``, ``reset()``."""

    css_class = "tl-backward-stepper"

    def __init__(self, loss, model=None, gradient=None) -> None:
        if loss.grad_fn is None:
            raise ValueError("BackwardStepper needs a tensor with a graph (grad_fn is None: did you compute it "
                             "from tensors with requires_grad=True, outside no_grad?)")
        self.loss, self.module, self.gradient = loss, model, gradient
        graph = build_graph(loss, model, max_nodes=10_000)
        self._leaves = [n.obj for n in graph.nodes.values() if n.kind in ("leaf", "param")]
        self._initial = {id(t): (None if t.grad is None else t.grad.detach().clone()) for t in self._leaves}
        self._names = {id(n.obj): n.label for n in graph.nodes.values() if n.kind in ("leaf", "param")}
        self.steps: list = []
        self.error: Exception | None = None
        self.done = False
        self._gen = None
        super().__init__(live=False)
        self._buttons = []
        for label, method in (("Step", "step"), ("Step 10", "step10"), ("Run to end", "run"), ("Reset", "reset")):
            b = W.Button(description=label)
            b.add_class("tl-stepper-button")
            b.on_click(weak_callback(self, method))
            self._buttons.append(b)
        self._current = W.HTML()
        self._current.add_class("tl-current-node")
        self._grad_panel = W.HTML()
        self._grad_panel.add_class("tl-grad-panel")
        self._heatmap = W.Output()
        self._leaf_panel = W.HTML()
        self._leaf_panel.add_class("tl-leaf-grads")
        self._graph = W.Output(layout=W.Layout(overflow="auto", max_height="560px"))
        self._error = W.HTML()
        self._error.add_class("tl-error")
        self.widget.children = (W.HBox(self._buttons), self._current, self._error,
                                W.HBox([W.VBox([self._grad_panel, self._heatmap]), self._graph]), self._leaf_panel)
        self.refresh()

    # ---- driving -------------------------------------------------------------------------------
    def _generator(self):
        if self._gen is None:
            self._gen = self.loss.backward_steps(self.gradient, retain_graph=True)
        return self._gen

    def step(self, n: int = 1) -> None:
        """Run the next ``n`` nodes of the backward pass (fewer if it ends)."""
        for _ in range(n):
            if self.done or self.error is not None:
                break
            try:
                self.steps.append(next(self._generator()))
            except StopIteration:
                self.done = True
            except Exception as exc:  # noqa: BLE001 - e.g. a VersionMismatchError: show it, don't break
                self.error = exc
        if not self.done and self.error is None and self.steps:
            self._peek_end()
        self.refresh()

    def _peek_end(self) -> None:
        """Mark done as soon as no node is left (so 'Run to end' is not needed after the last step)."""
        total = sum(1 for n in build_graph(self.loss, max_nodes=10_000).nodes.values() if n.kind == "op")
        if len(self.steps) >= total:
            try:
                self.steps.append(next(self._generator()))  # not expected: the engine had one more node
            except StopIteration:
                self.done = True
            except Exception as exc:  # noqa: BLE001 - shown in the view like any error met while stepping
                self.error = exc

    def step10(self) -> None:
        self.step(10)

    def run(self) -> None:
        """Run the rest of the backward pass."""
        self.step(10**9)

    def reset(self) -> None:
        """Start over: a fresh generator, and every leaf's .grad as it was before stepping."""
        if self._gen is not None:
            self._gen.close()
        self._gen = None
        for t in self._leaves:
            init = self._initial[id(t)]
            t.grad = None if init is None else init.clone()
        self.steps, self.error, self.done = [], None, False
        self.refresh()

    # ---- what is shown ---------------------------------------------------------------------------
    def summary(self) -> str:
        state = "done" if self.done else "error" if self.error is not None else f"{len(self.steps)} steps taken"
        return f"<BackwardStepper: {state}>"

    @property
    def current(self):
        """The last step record (node, grad_in, grads_out, seconds), or None before the first step."""
        return self.steps[-1] if self.steps else None

    @property
    def current_name(self) -> str | None:
        return None if self.current is None else self.current.node.name

    def leaf_grads(self) -> list[tuple[str, str]]:
        """(name, state of .grad) per leaf: 'not computed yet' until backward reaches it."""
        rows = []
        for t in self._leaves:
            if t.grad is None:
                rows.append((self._names[id(t)], NOT_COMPUTED))
            else:
                s = grad_stats(t.grad)
                rows.append((self._names[id(t)], f"{s['shape']} mean {_fmt(s['mean'])} max {_fmt(s['max'])}"))
        return rows

    def _render(self) -> None:
        cur = self.current
        # the graph first, so the highlight never lags behind the text below
        graph = build_graph(self.loss, self.module, max_nodes=300)
        self.highlighted = graph.node_for(cur.node) if cur is not None else None
        figure_output(draw_graph(graph, self.highlighted), self._graph)
        status = "done" if self.done else f"step {len(self.steps)}"
        if cur is None:
            self._current.value = f"<b>{status}</b>: press Step to run the first backward node"
            self._grad_panel.value = ""
            self._heatmap.outputs = ()
        else:
            self._current.value = (f"<b>{status}</b>: node <span class='tl-current-name'>{html.escape(cur.node.name)}"
                                   f"</span> (#{cur.index}, {cur.seconds * 1e6:.1f} us)")
            s = grad_stats(cur.grad_in)
            rows = [["incoming", s["shape"], _fmt(s.get("mean")), _fmt(s.get("std")), _fmt(s.get("min")),
                     _fmt(s.get("max"))]]
            edges = cur.node.next_functions or ()
            for i, g in enumerate(cur.grads_out):
                if i < len(edges) and edges[i] is None:
                    continue  # not an input that takes part in autograd (an index, an option)
                so = grad_stats(g)
                rows.append([f"to input {i}", so["shape"] if g is not None else "none (no grad needed)",
                             _fmt(so.get("mean")), _fmt(so.get("std")), _fmt(so.get("min")), _fmt(so.get("max"))])
            self._grad_panel.value = html_table(["gradient", "shape", "mean", "std", "min", "max"], rows,
                                                "tl-grad-table")
            fig = draw_heatmap(cur.grad_in)
            if fig is None:
                self._heatmap.outputs = ()
            else:
                figure_output(fig, self._heatmap)
        self._error.value = "" if self.error is None else (
            f"<pre style='color:{STALE};white-space:pre-wrap'>{type(self.error).__name__}: "
            f"{html.escape(str(self.error))}</pre>")
        self._leaf_panel.value = html_table(["leaf", ".grad"], [list(r) for r in self.leaf_grads()], "tl-leaf-table")
