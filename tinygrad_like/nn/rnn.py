"""Recurrent layers: ``RNN`` (tanh or relu), ``LSTM`` (with optional projections), ``GRU``, and their cells.

PyTorch's parameters (``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, ``weight_hr_l0`` for
LSTM projections, ``..._reverse`` for the backward direction), shapes, gate order (LSTM: input, forget, cell,
output; GRU: reset, update, new) and initialisation (every weight U(-1/sqrt(hidden), 1/sqrt(hidden))), so a
torch ``state_dict`` loads as it is. Inputs are (L, N, H_in) (or (N, L, H_in) with ``batch_first``) or unbatched
(L, H_in). Each layer (and direction) is two nodes: the input projection of the whole sequence (one ``Linear``), and
one layer node (``LSTMLayer``, ``GRULayer``, ``RNNLayer``: ``ops/recurrent.py``) that runs every time step and,
backward, backpropagation through time, keeping the gates of every step for the views. Inside
``with tl.nn.recurrent_by_steps():`` each time step is instead a small graph of Tensor ops (the cells'), as
it is off the CPU. While scopes are recorded (``sites.record_scopes``: graph views), each layer pushes a
``sites.Marker``, so a graph groups a recurrent layer's nodes by layer (``rnn.l0``, ``rnn.l0_reverse``), and steps run
cell by cell by time step (``rnn.l0.t3``).

A :class:`~tinygrad_like.nn.utils.rnn.PackedSequence` input runs each sequence over its own steps only, as torch's:
the sequences still running at step t are the first ``batch_sizes[t]`` (they are sorted longest first), so a step
takes that prefix of the hidden state, and a sequence that has ended keeps the state of its own last step, which
is what ``h_n`` reports. The reverse direction starts each sequence from the initial state at its own last step.
The output is a PackedSequence with the same ``batch_sizes`` and permutations; ``h_n`` (and ``c_n``) are in the
caller's order, and a given ``hx`` is read in the caller's order, as torch's.

>>> import tinygrad_like as tl
>>> lstm = tl.nn.LSTM(4, 8, num_layers=2, batch_first=True)
>>> out, (h, c) = lstm(tl.randn(3, 5, 4))
>>> out.shape, h.shape, c.shape
(tl.Size([3, 5, 8]), tl.Size([2, 3, 8]), tl.Size([2, 3, 8]))
"""

from __future__ import annotations

import math
import numbers
import warnings

from .. import events, sites
from ..creation import empty, tensor, zeros
from ..functions import stack
from ..ops.recurrent import gru_cell as _gru_step
from ..ops.recurrent import lstm_cell as _lstm_step
from ..ops.recurrent import recurrent_by_steps, recurrent_layer
from ..ops.recurrent import rnn_cell as _rnn_step
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module, Parameter
from .utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "recurrent_by_steps"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """The parameters and the loop shared by RNN, LSTM and GRU."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        dirs = 2 if bidirectional else 1
        names = []
        for layer in range(num_layers):
            for d in range(dirs):
                in_size = input_size if layer == 0 else real_hidden * dirs
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (gate, in_size)), ("weight_hh", (gate, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for base, shape in shapes:
                    self.register_parameter(base + sfx, Parameter(empty(*shape, dtype=dtype, device=device)))
                    names.append(base + sfx)
        self._flat_weights_names = names
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op (cuDNN's weight packing, which PyTorch programs call; nothing to pack here)."""

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        w = self._flat_weights
        return [w[i:i + per] for i in range(0, len(w), per)]

    def _weights(self, layer: int, d: int):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        get = self._parameters.get
        return (get("weight_ih" + sfx), get("weight_hh" + sfx), get("bias_ih" + sfx), get("bias_hh" + sfx),
                get("weight_hr" + sfx))

    # ---- checks -----------------------------------------------------------------------------------
    def _check_input(self, input: Tensor, packed: bool = False) -> bool:
        if not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__}: expected a Tensor or a PackedSequence input, got "
                            f"{type(input).__name__}")
        if packed and input.ndim != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {input.ndim}")
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D tensor instead")
        w0 = self.weight_ih_l0
        if input.dtype is not w0.dtype:
            raise ValueError(f"input must have the type {w0.dtype}, got type {input.dtype}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")
        return input.ndim == 3

    def _expected_hidden(self, batch: int, cell: bool = False) -> tuple:
        size = self.hidden_size if cell or not self.proj_size else self.proj_size
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    @staticmethod
    def _check_hidden(h: Tensor, want: tuple, msg: str) -> None:
        if h.shape != want:
            raise RuntimeError(msg.format(want, list(h.shape)))

    # ---- the loop ---------------------------------------------------------------------------------
    def _enter_step(self, t: int):
        """While scopes are recorded and a layer runs cell by cell (off the CPU, or in a dtype the layer nodes do
        not take), time step ``t``'s ops go in a group of their own (``rnn.l0.t3``). Returns what ends it."""
        outer = sites.enter(sites.Marker(f"t{t}", f"t = {t}", "step", f"{type(self).__name__} step"))

        def end():
            sites.context.scope = outer
        return end

    def _direction(self, xp: Tensor, state: list, weights: tuple, reverse: bool, batch_sizes: list | None):
        """One direction of one layer over the projected inputs ``xp``: (L, N, gates) padded, or (sum of lengths,
        gates) packed with ``batch_sizes``. Returns (output, final state).

        ``recurrent_layer`` gives h after every step and the final state; a packed output is the rows of the
        sequences running at each step."""
        w_hh, b_hh, w_hr = weights
        hs, final = recurrent_layer(self.mode, xp, state[0], state[1] if len(state) > 1 else None, w_hh, b_hh, w_hr,
                                    reverse, batch_sizes, self._enter_step if events.ORIGINS else None)
        if batch_sizes is None:
            return hs, final
        n = hs.shape[1]
        rows = tensor([t * n + i for t, b in enumerate(batch_sizes) for i in range(b)], device=xp.device)
        return hs.reshape(-1, hs.shape[-1]).index_select(0, rows), final

    def _run(self, x: Tensor, hs: list, batch_sizes: list | None = None):
        """x: (L, N, H_in), or packed (sum of lengths, H_in) with ``batch_sizes``; hs: the initial states, each
        (layers * dirs, N, H). Returns (output, final states)."""
        if (x.shape[0] if batch_sizes is None else len(batch_sizes)) == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        dirs = 2 if self.bidirectional else 1
        finals = [[] for _ in hs]
        rec = events.ORIGINS
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, d)
                # While scopes are recorded, the layer's ops go in a group, ``rnn.l0``: its input projection and its
                # one layer node (or, cell by cell, its steps)
                if rec:
                    outer = sites.enter(sites.Marker(f"l{layer}" + ("_reverse" if d else ""),
                                                     f"layer {layer}" + (" reverse" if d else ""), "layer",
                                                     f"{type(self).__name__} layer"))
                try:
                    xp = F.linear(x, w_ih, b_ih)  # the whole sequence's input projection at once
                    state = [h[layer * dirs + d] for h in hs]
                    y, state = self._direction(xp, state, (w_hh, b_hh, w_hr), bool(d), batch_sizes)
                finally:
                    if rec:
                        sites.context.scope = outer
                for f, s in zip(finals, state):
                    f.append(s)
                outs.append(y)
            x = outs[0] if dirs == 1 else F.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, [stack(f) for f in finals]

    def _initial_states(self, hx, n: int, like: Tensor, nd: int) -> list:
        """The initial states as a list (h, or [h, c]): zeros, or ``hx`` checked (``nd``-D, torch's messages)."""
        lstm = self.mode == "LSTM"
        if hx is None:
            h0 = zeros(*self._expected_hidden(n), dtype=like.dtype, device=like.device)
            return [h0, zeros(*self._expected_hidden(n, True), dtype=like.dtype, device=like.device)] if lstm else [h0]
        hs = list(hx) if lstm else [hx]
        if lstm and len(hs) != 2:
            raise RuntimeError(f"{type(self).__name__}: hx must be a tuple (h_0, c_0), got {len(hs)} tensors")
        if any(h.ndim != nd for h in hs):
            dims = ", ".join(f"{h.ndim}-D" for h in hs)
            what = "hx and cx" if lstm else "hx"
            got = f"({dims}) tensors" if lstm else f"{dims} tensor"
            raise RuntimeError(f"For {'unbatched 2-D' if nd == 2 else 'batched 3-D'} input, {what} should also be "
                               f"{nd}-D but got {got}")
        return hs

    def _check_states(self, hs: list, n: int) -> None:
        if self.mode == "LSTM":
            self._check_hidden(hs[0], self._expected_hidden(n), "Expected hidden[0] size {}, got {}")
            self._check_hidden(hs[1], self._expected_hidden(n, True), "Expected hidden[1] size {}, got {}")
        else:
            self._check_hidden(hs[0], self._expected_hidden(n), "Expected hidden size {}, got {}")

    def _forward_packed(self, input: PackedSequence, hx):
        data, batch_sizes, sorted_indices, unsorted_indices = input
        self._check_input(data, packed=True)
        sizes = [int(b) for b in batch_sizes.tolist()]
        hs = self._initial_states(hx, sizes[0], data, 3)
        self._check_states(hs, sizes[0])
        if hx is not None and sorted_indices is not None:  # hx is in the caller's order, the batch is sorted
            hs = [h.index_select(1, sorted_indices) for h in hs]
        out, finals = self._run(data, hs, sizes)
        if unsorted_indices is not None:
            finals = [f.index_select(1, unsorted_indices) for f in finals]
        packed = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        return (packed, (finals[0], finals[1])) if self.mode == "LSTM" else (packed, finals[0])

    def forward(self, input: Tensor, hx=None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        batched = self._check_input(input)
        lstm = self.mode == "LSTM"
        if not batched:
            x = input.unsqueeze(1)
        else:
            x = input.transpose(0, 1) if self.batch_first else input
        n = x.shape[1]
        hs = self._initial_states(hx, n, input, 3 if batched else 2)
        if hx is not None:
            if not batched:
                hs = [h.unsqueeze(1) for h in hs]
            self._check_states(hs, n)
        out, finals = self._run(x, hs)
        if not batched:
            out, finals = out.squeeze(1), [f.squeeze(1) for f in finals]
        elif self.batch_first:
            out = out.transpose(0, 1)
        return (out, (finals[0], finals[1])) if lstm else (out, finals[0])

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None) -> None:
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory; returns ``(output, (h_n, c_n))``. With ``proj_size`` > 0 the hidden state is
    projected by ``weight_hr`` to ``proj_size`` features."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit; returns ``(output, h_n)``."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)


# ---- cells ------------------------------------------------------------------------------------
class RNNCellBase(Module):
    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, dtype=dtype, device=device))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input: Tensor, hx, n_states: int):
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expected a Tensor input, got {type(input).__name__}")
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        states = None if hx is None else (list(hx) if n_states == 2 else [hx])
        if states is not None and any(h.ndim not in (1, 2) for h in states):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {states[0].ndim}D instead")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if input.dtype is not self.weight_ih.dtype:
            raise RuntimeError(f"{name}: expected the input dtype {input.dtype.name} to match the weights' "
                               f"{self.weight_ih.dtype.name}")
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} expected {self.input_size}")
        if states is None:
            states = [zeros(x.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
                      for _ in range(n_states)]
        else:
            states = [h if batched else h.unsqueeze(0) for h in states]
            for i, h in enumerate(states):
                if h.shape[0] != x.shape[0]:
                    raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden{i} batch size "
                                       f"{h.shape[0]}")
                if h.shape[1] != self.hidden_size:
                    raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, expected "
                                       f"{self.hidden_size}")
        return x, states, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), batched = self._prepare(input, hx, 1)
        h = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                      self.nonlinearity == "relu")
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx=None):
        x, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), batched = self._prepare(input, hx, 1)
        h = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
