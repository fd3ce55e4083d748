"""``BackwardStepper(loss, model)``: run a backward pass one node at a time, on the same graph drawing.

It drives ``loss.backward_steps(retain_graph=True)`` (the pass ``backward()`` runs to the end at once). Visited
nodes are coloured, the current one is outlined and kept in view, edges thicken with the norm of the gradient they
carried, and a parameter's box fills when its ``.grad`` lands. Back steps replay the recorded steps (the
drawing goes back; ``.grad`` keeps what the engine accumulated until Reset, which puts every leaf's ``.grad``
back to what it was before the first step). An error met while stepping (a ``VersionMismatchError``) shows in
the view with its node marked.

The stepper follows its node into folds: the groups that hold the current node open (a run of identical blocks
too), so the node always has its own box among its module's other ops, and ``state.current_box`` names that box;
the groups it opened fold again once it leaves them, but the groups the learner opened (a click, ``expand()``,
a search) stay open.

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

import numpy as np

from tinygrad_like import events
from tinygrad_like.autograd.function import FREED, Function
from tinygrad_like.autograd.torch_nodes import view_label

from .graph_model import NOT_COMPUTED, GNode, _fmt_shape, _own_module, box_of, is_fused
from .graph_view import STEPPING, GraphView


def grad_stats(g) -> dict:
    """Shape, L2 norm, mean, std, min and max of a gradient (None stays None)."""
    if g is None:
        return {"shape": None}
    a = np.asarray(g.detach().numpy(), dtype=np.float64)
    if a.size == 0:
        return {"shape": tuple(a.shape), "norm": 0.0, "mean": None, "std": None, "min": None, "max": None}
    return {"shape": tuple(a.shape), "norm": float(np.sqrt((a * a).sum())), "mean": float(a.mean()),
            "std": float(a.std()), "min": float(a.min()), "max": float(a.max())}


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)


def _norm(g) -> float:
    """L2 norm, summed in float64 without a float64 copy of the gradient (a ResNet's last convolution sends 2.4M)."""
    a = np.ravel(g.detach().numpy())
    if not a.size:
        return 0.0
    if a.dtype.kind == "f" and a.dtype.itemsize >= 4:
        return float(np.sqrt(np.einsum("i,i->", a, a, dtype=np.float64)))
    a = np.abs(a).astype(np.float64)  # (half floats, complex)
    return float(np.sqrt(np.dot(a, a)))


class _Root:
    """Stands for the output tensor of a graph node, for the engine (which reads only these two attributes)."""

    __slots__ = ("grad_fn",)
    requires_grad = True

    def __init__(self, node) -> None:
        self.grad_fn = node


class BackwardStepper(GraphView):
    """Buttons Back, Step, Step 10, Run to end, Reset (and the arrow keys); the same as ``back()``,
    ``step(n)``, ``run()``, ``reset()`` from Python."""

    css_class = "tl-backward-stepper"
    stepper = True
    # its own steps update it; an in-place write (an optimizer step) redraws it with the stale nodes marked
    listens_to = (events.VersionBump,)

    def __init__(self, loss, model=None, gradient=None, *, names: dict | None = None, height: int = 560) -> None:
        root = loss.grad_fn if hasattr(loss, "grad_fn") else loss
        if root is None:
            raise ValueError("BackwardStepper needs a tensor with a graph (grad_fn is None: did you compute it "
                             "from tensors with requires_grad=True, outside no_grad?)")
        self.loss, self.gradient = loss, gradient
        self.records: list = []  # the engine's step records, in order
        self._entries: list = []  # per record: [node index, [[input index, gradient norm], ...]]
        self._norms: list = []  # per record: the norm of each gradient it sent (None for none), computed once
        self.cursor = 0  # records[:cursor] are shown as done
        self.error: Exception | None = None
        self._exhausted = False
        self._gen = None
        self._stepping = False
        self._ready = False  # (set once the attributes the state needs exist)
        self._sending_state = False
        super().__init__(loss, model, names=names, height=height)
        self._leaves = [n.obj for n in self.model.nodes if n.kind in ("param", "leaf")]
        self._initial = {id(t): (None if t.grad is None else t.grad.detach().clone()) for t in self._leaves}
        self._total = sum(1 for n in self.model.nodes if n.kind == "op")
        self._ready = True
        self._send_state()

    # ---- driving ---------------------------------------------------------------------------------------------
    def _generator(self):
        if self._gen is None:
            if isinstance(self.loss, Function):  # a graph node (what Dashboard(follow=True) finds): seed with ones
                import tinygrad_like as tl
                from tinygrad_like.autograd import engine

                node = self.loss
                seed = self.gradient if self.gradient is not None else tl.ones(*node.out_shape, dtype=node.out_dtype)
                self._gen = engine.backward_steps((_Root(node),), (seed,), True, False)
            else:
                self._gen = self.loss.backward_steps(self.gradient, retain_graph=True)
        return self._gen

    def step(self, n: int = 1) -> None:
        """Show the next ``n`` nodes of the backward pass: replay recorded ones first, then run new ones.

        A graph whose backward already ran (saved tensors freed) is not stepped: the status says why.
        """
        if not self.records and self._freed():
            self._send_state()
            return
        self._stepping = True  # (the .grad writes of the steps themselves need no redraw)
        STEPPING.depth += 1  # (nor do other views of this graph: they catch up after the next cell)
        try:
            self._advance(n)
        finally:
            self._stepping = False
            STEPPING.depth -= 1
        self._stale = True  # tooltips (.grad) are rebuilt after the cell, the drawing state now
        self._send_state()

    def _advance(self, n: int) -> None:
        for _ in range(n):
            if self.cursor < len(self.records):
                self.cursor += 1
                continue
            if self._exhausted or self.error is not None:
                break
            try:
                self.records.append(next(self._generator()))
                self.cursor += 1
            except StopIteration:
                self._exhausted = True
                break
            except Exception as exc:  # noqa: BLE001 - e.g. a VersionMismatchError: show it in the view
                self.error = exc
                break
        if self.cursor == len(self.records) == self._total and not self._exhausted and self.error is None:
            self._finish()

    def _on_event(self, event) -> None:
        if not self._stepping:
            super()._on_event(event)

    def _finish(self) -> None:
        """Every node ran: close the generator so the pass counts as done without another click."""
        try:
            extra = next(self._generator())
            self.records.append(extra)  # not expected: the engine had one more node
            self.cursor += 1
        except StopIteration:
            self._exhausted = True
        except Exception as exc:  # noqa: BLE001
            self.error = exc

    def step10(self) -> None:
        self.step(10)

    def back(self, n: int = 1) -> None:
        """Go back ``n`` steps in the drawing (the recorded steps replay when you step forward again)."""
        self.cursor = max(0, self.cursor - n)
        self._send_state()

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
        self.records, self._entries, self.cursor, self.error, self._exhausted = [], [], 0, None, False
        self._norms = []
        self._send_state()

    def on_message(self, msg: dict) -> None:
        kind = msg.get("type")
        if kind == "step":
            self.step(int(msg.get("n", 1)))
        elif kind == "back":
            self.back()
        elif kind == "run":
            self.run()
        elif kind == "reset":
            self.reset()
        else:
            super().on_message(msg)

    # ---- what is shown ------------------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._exhausted and self.cursor == len(self.records)

    @property
    def steps(self) -> list:
        """The step records shown so far (node, grad_in, grads_out, seconds)."""
        return self.records[: self.cursor]

    @property
    def current(self):
        """The step record of the current node, or None before the first step."""
        return self.records[self.cursor - 1] if self.cursor else None

    @property
    def current_name(self) -> str | None:
        return None if self.current is None else view_label(self.current.node)

    @property
    def highlighted(self) -> str | None:
        """The id of the box outlined as current (the node, or the folded group that holds it)."""
        cur = self.current
        if cur is None:
            return None
        idx = self.model.node_for(cur.node)
        return None if idx is None else self._box_of(idx)

    def _box_of(self, idx: int) -> str:
        return box_of(self.model, idx, self.expanded)

    # ---- following the current node into folds -------------------------------------------------------------
    def _followed(self) -> int | None:
        """The node the drawing follows: the one that failed when an error is shown, else the current one."""
        if self.error is not None and self.cursor == len(self.records):
            node = getattr(self.error, "node", None)
            idx = self.model.node_for(node) if node is not None else None
            if idx is not None:
                return idx
        cur = self.current
        return None if cur is None else self.model.node_for(cur.node)

    def _must_show(self) -> set[str]:
        idx = self._followed()  # (a fused recurrent layer is one step of backward: its box, not its time steps)
        return set() if idx is None else {g for g in self.model.chains[idx] if not is_fused(self.model, g)}

    def _follow(self) -> bool:
        """Open the groups holding the followed node (the stepper's own), and fold again those the stepper opened
        for earlier nodes and has left, unless the learner opened them meanwhile. True when the folding changed."""
        want = self._must_show()
        leave = self._stepper_open - want - self._learner_open
        if not leave and want <= self.expanded:
            return False
        self._stepper_open = (self._stepper_open & want) | (want - self.expanded)
        self.expanded = (self.expanded - leave) | want
        return True

    def _render(self) -> None:
        self._rebuild()
        if self._ready:
            self._send_state(graph=True)
        else:
            self._send_graph()

    def _send_graph(self) -> None:
        """A new drawing renumbers the boxes: ``state.current_box`` changes with it, in the same message (the
        browser never sees a drawing with the index of another drawing's box)."""
        with self.widget.hold_sync():
            super()._send_graph()
            if self._ready and not self._sending_state:
                self.widget.state = {**self.widget.state, "current_box": self._box_index()}

    def leaf_grads(self) -> list[tuple[str, str]]:
        """(name, state of .grad) per leaf: 'not computed yet' until backward reaches it."""
        rows = []
        for n in self.model.nodes:
            if n.kind not in ("param", "leaf"):
                continue
            g = n.obj.grad
            if g is None:
                rows.append((n.label, NOT_COMPUTED))
            else:
                s = grad_stats(g)
                rows.append((n.label, f"{s['shape']} mean {_fmt(s['mean'])} max {_fmt(s['max'])}"))
        return rows

    def _step_entry(self, rec) -> list:
        idx = self.model.node_for(rec.node)
        edges = rec.node.next or ()
        norms = [None if g is None else _norm(g) for g in rec.grads_out]
        self._norms.append(norms)
        out = []
        for slot, g in enumerate(rec.grads_out):
            if g is None or slot >= len(edges) or edges[slot] is None:
                continue
            src = self.model.node_for(edges[slot])
            if src is not None:
                out.append([src, round(norms[slot], 6)])
        return [idx, out]

    def _send_state(self, graph: bool = False) -> None:
        """Send the state (and the drawing first when ``graph`` or when following the node changed the folding),
        in one message."""
        self._sending_state = True
        try:
            with self.widget.hold_sync():
                if self._follow() or graph:
                    self._send_graph()
                self._send_state_only()
        finally:
            self._sending_state = False

    def _send_state_only(self) -> None:
        shown = self.records[: self.cursor]
        while len(self._entries) < len(self.records):  # each record's norms are computed once
            self._entries.append(self._step_entry(self.records[len(self._entries)]))
        entries = self._entries
        filled = sorted({src for idx, outs in entries[: self.cursor] for src, _ in outs
                         if self.model.nodes[src].kind in ("param", "leaf")})
        err = None
        if self.error is not None:
            node = getattr(self.error, "node", None)
            idx = self.model.node_for(node) if node is not None else None
            err = {"node": idx, "text": f"{type(self.error).__name__}: {self.error}"}
        self.widget.state = {"cursor": self.cursor, "total": self._total, "steps": entries, "filled": filled,
                             "error": err, "done": self.done, "freed": self._freed(), "current_box": self._box_index()}
        self.widget.status = self._status(shown)
        cur = self.current
        if err is not None and err["node"] is not None and self.cursor == len(self.records):
            box = self._box_of(err["node"])  # the details show the node that failed, with its stale saved tensor
            if self.widget.selected != box:
                self.widget.selected = box
            else:
                self.on_selected(box)
        elif cur is not None:
            idx = self.model.node_for(cur.node)
            if idx is not None:
                box = self._box_of(idx)
                if self.widget.selected != box:
                    self.widget.selected = box  # details follow the current node
                else:
                    self.on_selected(box)
        elif self.widget.selected:
            self.on_selected(self.widget.selected)

    def _box_index(self) -> int | None:
        """Index into ``graph.boxes`` of the followed node's own box (None before the first step, or while the
        learner keeps a group around it folded)."""
        idx = self._followed()
        if idx is None:
            return None
        graph = self.widget.graph
        box = graph["owner"][idx]
        return box if graph["boxes"][box]["kind"] != "group" else None

    @property
    def current_box(self) -> int | None:
        """``state.current_box``: the index of the box the drawing centres on (see ``_box_index``)."""
        return self.widget.state.get("current_box")

    def _status(self, shown) -> str:
        if self.error is not None:
            return f"stopped at step {len(shown) + 1}: {type(self.error).__name__} (see the message above)"
        if self._freed():
            return ("backward already ran through this graph and freed its saved tensors: compute the loss again "
                    "(or pass retain_graph=True) to step through it")
        cur = self.current
        if cur is None:
            return "press Step (or →) to run the first backward node"
        idx = self.model.node_for(cur.node)
        module = _own_module(self.model, self.model.nodes[idx]) if idx is not None else None
        where = f" ({module})" if module else ""
        state = "done: " if self.done else ""
        return f"{state}step {self.cursor} of {self._total}: {view_label(cur.node)}{where}, {cur.seconds * 1e6:.1f} µs"

    def _freed(self) -> bool:
        return not self.records and any(isinstance(n.obj, Function) and n.obj.saved is FREED
                                        for n in self.model.nodes)

    def _node_details(self, n: GNode) -> dict:
        d = super()._node_details(n)
        at = next((i for i in range(self.cursor - 1, -1, -1) if self.model.node_for(self.records[i].node) == n.index),
                  None)
        if at is None:
            return d
        rec = self.records[at]
        norms = self._norms[at] if at < len(self._norms) else [None if g is None else _norm(g) for g in rec.grads_out]
        s = grad_stats(rec.grad_in)
        grads = [["incoming", f"{_fmt_shape(s['shape'] or ())} |g| {_fmt(s.get('norm'))}"]]
        edges = rec.node.next or ()
        for slot, g in enumerate(rec.grads_out):
            if slot >= len(edges) or edges[slot] is None:
                continue  # not an input that takes part in autograd (an index, an option)
            grads.append([self.input_name(n, slot), "none (no grad needed)" if g is None else
                          f"{_fmt_shape(tuple(g.shape))} |g| {_fmt(norms[slot])}"])
        d["grads"] = grads
        d["rows"].append(["backward time", f"{rec.seconds * 1e6:.1f} µs"])
        return d

    def input_name(self, n: GNode, slot: int) -> str:
        """An input's name: the op's argument name ("weight", "bias", "input") and, for a named tensor, its
        name ("weight: blocks.3.fc1.weight")."""
        arg = n.inputs[slot] if slot < len(n.inputs) else f"input {slot}"
        edges = n.obj.next or ()
        src = self.model.node_for(edges[slot]) if slot < len(edges) and edges[slot] is not None else None
        if src is not None and self.model.nodes[src].kind == "param":
            return f"{arg}: {self.model.nodes[src].label}"
        return arg

    def summary(self) -> str:
        state = "done" if self.done else "error" if self.error is not None else f"{self.cursor} steps taken"
        return f"<BackwardStepper: {state}>"


__all__ = ["BackwardStepper", "grad_stats"]
