"""The recurrent layer nodes (``ops/recurrent.py``: one LSTMLayer / GRULayer / RNNLayer node per layer and direction,
backpropagation through time in one primitive, ``backends/numpy_recurrent.py``).

torch is the oracle of the modules' values and gradients in ``test_api_nn.py`` and ``test_api_nn_packed.py``; here
the layer nodes are held to finite differences (float64), to the same layer run cell by cell with Tensor ops
(``recurrent_by_steps``), and to what a node must answer: its name, its saved gates, its errors."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like.autograd import VersionMismatchError
from tinygrad_like.ops.recurrent import recurrent_layer

nn = tl.nn

MODES = ["LSTM", "LSTM-proj", "GRU", "RNN_TANH", "RNN_RELU"]
GATES = {"LSTM": 4, "LSTM-proj": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
PACKED = (4, 4, 3, 1, 1)  # a packed batch: 5 steps, sequences of lengths 5, 3, 2, 2 (batch sizes per step)


def _layer_inputs(mode: str, steps: int = 5, batch: int = 4, hidden: int = 3, proj: int = 2, packed=None,
                  seed: int = 0) -> list:
    """float64 leaves requiring grad: xp, h0, c0 (or None), w_hh, b_hh, w_hr (or None)."""
    rng = np.random.default_rng(seed)
    g = GATES[mode] * hidden
    p = proj if mode == "LSTM-proj" else hidden

    def leaf(*shape, scale=0.6):
        return tl.tensor(rng.standard_normal(shape) * scale, dtype=tl.float64, requires_grad=True)

    xp = leaf(sum(packed), g) if packed else leaf(steps, batch, g)
    lstm = mode.startswith("LSTM")
    return [xp, leaf(batch, p), leaf(batch, hidden) if lstm else None, leaf(g, p), leaf(g),
            leaf(p, hidden) if mode == "LSTM-proj" else None]


def _run(mode: str, inputs: list, reverse: bool, packed, by_steps: bool):
    """The layer's h at every step and its final state, flat in one tensor."""
    m = "LSTM" if mode.startswith("LSTM") else mode
    with nn.recurrent_by_steps(by_steps):
        hs, final = recurrent_layer(m, *inputs, reverse=reverse, batch_sizes=packed)
    return tl.cat([hs.reshape(-1), *(f.reshape(-1) for f in final)])


def _layer_node(t):
    """The layer node under ``t`` (_run's output: a Cat of views of its output)."""
    stack = [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None and n.name.endswith("Layer"):
            return n
        stack.extend(f for f, _ in (n.next_functions if n is not None else ()))
    return None


@pytest.mark.parametrize("packed", [None, PACKED], ids=["padded", "packed"])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("mode", MODES)
def test_the_layer_node_matches_the_layer_run_cell_by_cell(mode, reverse, packed):
    inputs = _layer_inputs(mode, packed=packed)
    fused = _run(mode, inputs, reverse, packed, False)
    assert _layer_node(fused).name == ("LSTMLayer" if mode.startswith("LSTM") else mode.split("_")[0] + "Layer")
    steps = _run(mode, inputs, reverse, packed, True)
    np.testing.assert_allclose(fused.detach().numpy(), steps.detach().numpy(), rtol=1e-13, atol=1e-14)
    g = tl.tensor(np.random.default_rng(9).standard_normal(fused.shape))
    present = [t for t in inputs if t is not None]
    ours = tl.autograd.grad(fused, present, g)
    theirs = tl.autograd.grad(steps, present, g)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("packed", [None, PACKED], ids=["padded", "packed"])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("mode", MODES)
def test_the_layer_node_gradients_against_finite_differences(mode, reverse, packed):
    inputs = _layer_inputs(mode, steps=4, batch=4, hidden=2, proj=1, packed=packed and (4, 3, 1, 1), seed=1)
    present = [i for i, t in enumerate(inputs) if t is not None]

    def layer(*ts):
        full = list(inputs)
        for i, t in zip(present, ts):
            full[i] = t
        return _run(mode, full, reverse, packed and (4, 3, 1, 1), False)

    assert tl.autograd.gradcheck(layer, [inputs[i] for i in present], eps=1e-6, atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_second_derivatives_through_the_layer_node(mode):
    """create_graph: the node's backward runs the cells again with Tensor ops, which the engine differentiates."""
    inputs = _layer_inputs(mode, steps=3, batch=2, hidden=2, seed=2)
    present = [i for i, t in enumerate(inputs) if t is not None]

    def layer(*ts):
        full = list(inputs)
        for i, t in zip(present, ts):
            full[i] = t
        return _run(mode, full, False, None, False)

    assert tl.autograd.gradgradcheck(layer, [inputs[i] for i in present], eps=1e-6, atol=1e-6, rtol=1e-4)


def test_an_lstm_is_one_layer_node_per_layer_and_direction_named_as_torch():
    tl.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    out, (h, c) = lstm(tl.randn(5, 2, 3))
    nodes, stack, seen = [], [out.grad_fn, h.grad_fn, c.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen or not hasattr(n, "next_functions"):
            continue
        seen.add(id(n))
        nodes.append(n)
        stack.extend(f for f, _ in n.next_functions)
    layers = [n for n in nodes if n.name == "LSTMLayer"]
    assert len(layers) == 4
    node = layers[0]
    assert type(node).__name__ == "MkldnnRnnLayerBackward0"  # torch's CPU LSTM layer node
    # torch's inputs are the tensors: xp, h0, c0, w_hh, b_hh (no projection: None)
    assert len(node.next_functions) == 6
    shapes = [tuple(t.shape) for t in node.saved_tensors if t is not None]
    assert (5, 2, 16) in shapes, "the gates of every step are kept (and shown)"
    assert (5, 2, 8) in shapes, "the states [h | c] after every step"


def test_gates_are_saved_after_their_nonlinearities():
    inputs = _layer_inputs("LSTM", steps=3, batch=2, hidden=3)
    node = _layer_node(_run("LSTM", inputs, False, None, False))
    gates, states = node.saved_tensors[6].detach().numpy(), node.saved_tensors[-1].detach().numpy()
    i, f, g, o = np.split(gates, 4, -1)
    assert (0 < i).all() and (i < 1).all() and (0 < f).all() and (o < 1).all() and (np.abs(g) < 1).all()
    c = states[..., 3:]
    c_prev = np.concatenate([inputs[2].detach().numpy()[None], c[:-1]])
    np.testing.assert_allclose(c, f * c_prev + i * g, rtol=1e-12)


def test_a_weight_written_in_place_before_backward_is_named_in_the_error():
    tl.manual_seed(0)
    lstm = nn.LSTM(3, 4)
    out, _ = lstm(tl.randn(5, 2, 3))
    with tl.no_grad():
        lstm.weight_hh_l0.add_(1.0)
    with pytest.raises(VersionMismatchError, match="LSTMLayer"):
        out.sum().backward()


def test_a_second_backward_needs_retain_graph():
    tl.manual_seed(0)
    gru = nn.GRU(3, 4)
    x = tl.randn(5, 2, 3, requires_grad=True)
    out, _ = gru(x)
    loss = out.sum()
    loss.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-6)
    out, _ = gru(x)
    loss = out.sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_other_dtypes_run_cell_by_cell():
    tl.manual_seed(0)
    rnn = nn.RNN(3, 4).to(tl.bfloat16)
    out, _ = rnn(tl.randn(5, 2, 3, dtype=tl.bfloat16))
    assert out.grad_fn.name != "RNNLayer"  # (no bfloat16 layer kernel: one small graph per step)
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    ref = torch.nn.RNN(3, 4)
    ours = nn.RNN(3, 4)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    a = ours.to(tl.bfloat16)(tl.tensor(x, dtype=tl.bfloat16))[0].float().detach().numpy()
    b = ref.to(torch.bfloat16)(torch.tensor(x, dtype=torch.bfloat16))[0].float().detach().numpy()
    np.testing.assert_allclose(a, b, atol=0.05)


def test_an_empty_sequence_is_refused_as_torch():
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
        nn.LSTM(3, 4)(tl.randn(0, 2, 3))
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
        torch.nn.LSTM(3, 4)(torch.randn(0, 2, 3))


def test_recurrent_by_steps_nests_and_restores():
    tl.manual_seed(0)
    lstm = nn.LSTM(3, 4)
    x = tl.randn(4, 2, 3)

    def layer_node_used() -> bool:
        out, _ = lstm(x)
        return out.grad_fn.next_functions[0][0].name == "LSTMLayer"

    assert layer_node_used()
    with nn.recurrent_by_steps():
        assert not layer_node_used()
        with nn.recurrent_by_steps(False):
            assert layer_node_used()
        assert not layer_node_used()
    assert layer_node_used()
    with pytest.raises(KeyError), nn.recurrent_by_steps():
        raise KeyError("an error inside the block")
    assert layer_node_used()


def test_no_grad_keeps_nothing_for_backward():
    tl.manual_seed(0)
    lstm = nn.LSTM(3, 4)
    with tl.no_grad():
        out, _ = lstm(tl.randn(5, 2, 3))
    assert out.grad_fn is None and not out.requires_grad
