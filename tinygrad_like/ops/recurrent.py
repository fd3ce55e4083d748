"""Recurrent layers as graph nodes: one :class:`LSTMLayer`, :class:`GRULayer` or :class:`RNNLayer` node runs one
layer (one direction) over a whole sequence, as cuDNN's RNN is one call and PyTorch's CPU LSTM is one
``MkldnnRnnLayerBackward0`` node; and the cells (:func:`lstm_cell`, :func:`gru_cell`, :func:`rnn_cell`), one time
step written with Tensor ops, which ``nn.LSTMCell``/``GRUCell``/``RNNCell`` run.

A layer node takes the input projection of every step (``xp = x @ W_ih^T + b_ih``, a ``Linear`` node of its own),
the initial state and the recurrent weights, and returns the state after every step (``states``: for LSTM
``[h_t | c_t]``, (L, N, P + H); for GRU and RNN ``h_t``, (L, N, H); see ``backends/numpy_recurrent.py``). The
layer's output and final state are views of it. The node keeps the gates of every step as a saved tensor (the
views and the stepper show them), and its backward runs backpropagation through time in one primitive.

When a graph of the backward is recorded (``create_graph=True``), the node's backward runs the same layer again as
cells over the steps, with Tensor ops, and differentiates that: higher derivatives come from the engine, as they
do for PyTorch's CPU GRU (cuDNN's RNN has none).

Inside ``with recurrent_by_steps():`` (``tl.nn.recurrent_by_steps``), on devices other than the CPU and for dtypes
other than float32 and float64, :func:`recurrent_layer` runs the cells over the steps instead of the node: the same
``states``, through one small graph per step, which the graph views group by time step. That is the way to see
inside a layer (each gate of each step a node of its own), at about ten times the cost.

>>> import tinygrad_like as tl
>>> xp, h0, c0 = tl.randn(5, 2, 12), tl.zeros(2, 3), tl.zeros(2, 3)
>>> w_hh = tl.randn(12, 3, requires_grad=True)
>>> hs, (h_n, c_n) = recurrent_layer("LSTM", xp, h0, c0, w_hh, None, None)
>>> hs.shape, c_n.shape, hs.grad_fn.next_functions[0][0].name
(tl.Size([5, 2, 3]), tl.Size([2, 3]), 'LSTMLayer')
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..autograd import grad_mode
from ..autograd.function import Function
from .linear import linear
from .movement import cat, stack

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

__all__ = ["recurrent_layer", "recurrent_by_steps", "lstm_cell", "gru_cell", "rnn_cell", "LSTMLayer", "GRULayer",
           "RNNLayer"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

_FUSED_DTYPES = ("float32", "float64")
_by_steps = [False]  # inside recurrent_by_steps()


@contextlib.contextmanager
def recurrent_by_steps(enabled: bool = True):
    """Inside it, ``nn.LSTM``/``GRU``/``RNN`` layers run cell by cell with Tensor ops (one small graph per time step,
    grouped by step in the graph views) instead of one layer node each. Nests; usable as a decorator."""
    prev = _by_steps[0]
    _by_steps[0] = bool(enabled)
    try:
        yield
    finally:
        _by_steps[0] = prev


# ---- one time step, with Tensor ops (the cells; and the layers where no node runs them) ---------------------------
def rnn_cell(xp: Tensor, h: Tensor, w_hh, b_hh, relu: bool) -> Tensor:
    """``act(xp + h W_hh^T + b_hh)``: one step of an Elman RNN (``xp``: the step's input projection)."""
    pre = xp + linear(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


def lstm_cell(xp: Tensor, h: Tensor, c: Tensor, w_hh, b_hh, w_hr):
    """One LSTM step: ``(h', c')`` from the gates ``xp + h W_hh^T + b_hh`` (input, forget, cell, output)."""
    gates = xp + linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = linear(h, w_hr)
    return h, c


def gru_cell(xp: Tensor, h: Tensor, w_hh, b_hh) -> Tensor:
    """One GRU step: reset, update and new gates; ``h' = n + z * (h - n)``."""
    xr, xz, xn = xp.chunk(3, -1)
    hr, hz, hn = linear(h, w_hh, b_hh).chunk(3, -1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (h - n)


def _cell(mode: str, x_t, state: list, w_hh, b_hh, w_hr) -> list:
    if mode == "LSTM":
        return list(lstm_cell(x_t, state[0], state[1], w_hh, b_hh, w_hr))
    if mode == "GRU":
        return [gru_cell(x_t, state[0], w_hh, b_hh)]
    return [rnn_cell(x_t, state[0], w_hh, b_hh, mode == "RNN_RELU")]


def _run_steps(mode: str, xp, h0, c0, w_hh, b_hh, w_hr, reverse: bool, batch_sizes, enter_step=None):
    """A layer cell by cell with Tensor ops: the graph of every step; the state of sequences that are not running is
    kept as it is. Returns (each state's value after every step, in time order: ``[hs]`` or ``[hs, cs]``; the final
    state). ``enter_step(t)``, if given, is called before step t and returns what ends it (the views' scopes)."""
    n = h0.shape[0]
    if batch_sizes is None:
        n_steps = xp.shape[0]
        sizes, starts = [n] * n_steps, None
    else:
        n_steps, sizes, starts = len(batch_sizes), list(batch_sizes), [0]
        for b in sizes:
            starts.append(starts[-1] + b)
    state = [h0, c0] if mode == "LSTM" else [h0]
    out = [[None] * n_steps for _ in state]
    for t in (range(n_steps - 1, -1, -1) if reverse else range(n_steps)):
        end = enter_step(t) if enter_step is not None else None
        try:
            rows = sizes[t]
            x_t = xp[t] if starts is None else xp[starts[t]:starts[t + 1]]
            new = _cell(mode, x_t, [s[:rows] for s in state] if rows < n else state, w_hh, b_hh, w_hr)
            state = [cat([a, s[rows:]]) for a, s in zip(new, state)] if rows < n else new
            for o, s in zip(out, state):
                o[t] = s
        finally:
            if end is not None:
                end()
    return out, state


def layer_by_steps(mode: str, xp, h0, c0, w_hh, b_hh, w_hr, reverse: bool = False, batch_sizes=None):
    """The ``states`` a layer node returns, computed cell by cell with Tensor ops (its backward's graph)."""
    out, _ = _run_steps(mode, xp, h0, c0, w_hh, b_hh, w_hr, reverse, batch_sizes)
    return stack(out[0]) if len(out) == 1 else cat([stack(o) for o in out], -1)


# ---- the layer nodes ------------------------------------------------------------------------------------------
class _Layer(Function):
    """What the three layer nodes share: the step order, the packed batch sizes, and the backward with a graph."""

    __slots__ = ("reverse", "batch_sizes")
    save_output = True
    mode = ""

    def _by_steps(self, g, inputs: tuple):
        """``create_graph``: the gradients of the inputs, through the layer run again cell by cell with Tensor ops
        (each input's gradient, or None where it needs none)."""
        from ..autograd.api import grad  # (the autograd's user API sits above the ops)

        want = [t for t, e in zip(inputs, self.next) if t is not None and e is not None]
        states = layer_by_steps(self.mode, *self._cell_args(inputs), self.reverse, self.batch_sizes)
        grads = iter(grad(states, want, g, create_graph=True, allow_unused=True))
        return tuple(next(grads) if t is not None and e is not None else None for t, e in zip(inputs, self.next))

    def _xp_rows(self, xp) -> int:
        return xp._x.shape[0]

    def step_values(self) -> dict | None:
        """What every time step computed, for the views: name -> array (L, N, ...) in time order, from the saved
        tensors (LSTM: the input, forget, cell and output gates after their nonlinearities, then ``h`` and ``c``;
        GRU: the reset, update and new gates, then ``h``; RNN: ``h``). A gate is zero in the rows of sequences
        that were not running at that step. None once backward has freed the saved tensors, or where a
        saved-tensors hook packed them."""
        saved = self.saved
        if not isinstance(saved, tuple) or any(t is not None and not hasattr(t, "_x") for t in saved):
            return None
        return self._parts([None if t is None else t._x for t in saved])

    def _parts(self, saved: list) -> dict:
        return {"h": saved[-1]}


class LSTMLayer(_Layer):
    """One LSTM layer (one direction) over the whole sequence. Inputs: the input projection ``xp``, ``h0``, ``c0``,
    ``w_hh``, ``b_hh`` and ``w_hr`` (None where absent); saved: the gates of every step after their nonlinearities
    (L, N, 4H: input, forget, cell, output), ``o * tanh(c)`` before a projection, and the states."""

    __slots__ = ()
    mode = "LSTM"

    def forward(self, xp, h0, c0, w_hh, b_hh, w_hr, reverse, batch_sizes):
        self.reverse, self.batch_sizes = reverse, batch_sizes
        states, gates, ms = xp._dev.backend.lstm_layer(xp._x, h0._x, c0._x, w_hh._x, _native(b_hh), _native(w_hr),
                                                       reverse, batch_sizes)
        if _grad_mode.enabled:
            wrap = xp._wrap
            self.save_for_backward(xp, h0, c0, w_hh, b_hh, w_hr, wrap(gates, xp._dev),
                                   None if ms is None else wrap(ms, xp._dev))
        return states

    def backward(self, g):
        xp, h0, c0, w_hh, b_hh, w_hr, gates, ms, states = self.saved_tensors
        if _grad_mode.enabled:
            return (*self._by_steps(g, (xp, h0, c0, w_hh, b_hh, w_hr)), None, None)
        be = g._dev.backend
        grads = be.lstm_layer_backward(g._x, states._x, gates._x, _native(ms), h0._x, c0._x, w_hh._x,
                                       _native(w_hr), self.reverse, self.batch_sizes, self._xp_rows(xp))
        return (*_wrapped(g, grads, self.next), None, None)

    @staticmethod
    def _cell_args(inputs):
        return inputs

    def _parts(self, saved: list) -> dict:
        h0, c0, gates, states = saved[1], saved[2], saved[6], saved[-1]
        proj, hidden = h0.shape[-1], c0.shape[-1]
        names = ("input gate", "forget gate", "cell gate", "output gate")
        return {n: gates[..., k * hidden:(k + 1) * hidden] for k, n in enumerate(names)} | {
            "h": states[..., :proj], "c": states[..., proj:]}


class GRULayer(_Layer):
    """One GRU layer (one direction). Inputs: ``xp``, ``h0``, ``w_hh``, ``b_hh``; saved: the gates ``[r, z, n]`` of
    every step after their nonlinearities (L, N, 3H), ``h W_hn^T + b_hn`` (L, N, H), and the states."""

    __slots__ = ()
    mode = "GRU"

    def forward(self, xp, h0, w_hh, b_hh, reverse, batch_sizes):
        self.reverse, self.batch_sizes = reverse, batch_sizes
        states, gates, hns = xp._dev.backend.gru_layer(xp._x, h0._x, w_hh._x, _native(b_hh), reverse, batch_sizes)
        if _grad_mode.enabled:
            self.save_for_backward(xp, h0, w_hh, b_hh, xp._wrap(gates, xp._dev), xp._wrap(hns, xp._dev))
        return states

    def backward(self, g):
        xp, h0, w_hh, b_hh, gates, hns, states = self.saved_tensors
        if _grad_mode.enabled:
            return (*self._by_steps(g, (xp, h0, w_hh, b_hh)), None, None)
        grads = g._dev.backend.gru_layer_backward(g._x, states._x, gates._x, hns._x, h0._x, w_hh._x, self.reverse,
                                                  self.batch_sizes, self._xp_rows(xp))
        return (*_wrapped(g, grads, self.next), None, None)

    @staticmethod
    def _cell_args(inputs):
        xp, h0, w_hh, b_hh = inputs
        return xp, h0, None, w_hh, b_hh, None

    def _parts(self, saved: list) -> dict:
        gates, hidden = saved[4], saved[1].shape[-1]
        names = ("reset gate", "update gate", "new gate")
        return {n: gates[..., k * hidden:(k + 1) * hidden] for k, n in enumerate(names)} | {"h": saved[-1]}


class RNNLayer(_Layer):
    """One Elman RNN layer (tanh, or relu), one direction. Inputs: ``xp``, ``h0``, ``w_hh``, ``b_hh``; saved: the
    states (the derivative of tanh and relu is read from their output)."""

    __slots__ = ("relu",)

    @property
    def mode(self) -> str:
        return "RNN_RELU" if self.relu else "RNN_TANH"

    def forward(self, xp, h0, w_hh, b_hh, relu, reverse, batch_sizes):
        self.relu, self.reverse, self.batch_sizes = relu, reverse, batch_sizes
        states = xp._dev.backend.rnn_layer(xp._x, h0._x, w_hh._x, _native(b_hh), relu, reverse, batch_sizes)
        if _grad_mode.enabled:
            self.save_for_backward(xp, h0, w_hh, b_hh)
        return states

    def backward(self, g):
        xp, h0, w_hh, b_hh, states = self.saved_tensors
        if _grad_mode.enabled:
            return (*self._by_steps(g, (xp, h0, w_hh, b_hh)), None, None, None)
        grads = g._dev.backend.rnn_layer_backward(g._x, states._x, h0._x, w_hh._x, self.relu, self.reverse,
                                                  self.batch_sizes, self._xp_rows(xp))
        return (*_wrapped(g, grads, self.next), None, None, None)

    @staticmethod
    def _cell_args(inputs):
        xp, h0, w_hh, b_hh = inputs
        return xp, h0, None, w_hh, b_hh, None


def _native(t):
    return None if t is None else t._x


def _wrapped(g, grads: tuple, edges: tuple) -> tuple:
    """The backward primitive's arrays as tensors, None for the inputs that need no gradient (or have none)."""
    return tuple(None if a is None or e is None else g._wrap(a, g._dev) for a, e in zip(grads, edges))


# ---- the entry point ------------------------------------------------------------------------------------------
def recurrent_layer(mode: str, xp, h0, c0, w_hh, b_hh, w_hr, reverse: bool = False, batch_sizes=None,
                    enter_step=None):
    """One recurrent layer (``mode``: ``"LSTM"``, ``"GRU"``, ``"RNN_TANH"`` or ``"RNN_RELU"``) over the input
    projection ``xp``: one layer node on the CPU in float32 and float64, else cell by cell (see the module
    docstring). ``batch_sizes``: a packed ``xp``'s batch size per step (a tuple of ints), or None. Returns (h after
    every step, (L, N, P); the final state, ``[h_n]`` or ``[h_n, c_n]``, where each sequence's run ended)."""
    sizes = None if batch_sizes is None else tuple(int(b) for b in batch_sizes)
    if (_by_steps[0] or xp.device.type != "cpu" or xp.dtype.name not in _FUSED_DTYPES
            or not _same_dtype(xp, h0, c0, w_hh, b_hh, w_hr)):
        out, final = _run_steps(mode, xp, h0, c0, w_hh, b_hh, w_hr, bool(reverse), sizes, enter_step)
        return stack(out[0]), final
    if mode == "LSTM":
        states = LSTMLayer.apply(xp, h0, c0, w_hh, b_hh, w_hr, bool(reverse), sizes)
    elif mode == "GRU":
        states = GRULayer.apply(xp, h0, w_hh, b_hh, bool(reverse), sizes)
    else:
        states = RNNLayer.apply(xp, h0, w_hh, b_hh, mode == "RNN_RELU", bool(reverse), sizes)
    last = states[0 if reverse else -1]  # (every sequence keeps its state at the steps it does not run)
    if mode != "LSTM":
        return states, [last]
    p = h0.shape[-1]
    return states[..., :p], [last[:, :p], last[:, p:]]


def _same_dtype(xp, *others) -> bool:
    return all(t is None or (t.dtype is xp.dtype and t.device == xp.device) for t in others)

