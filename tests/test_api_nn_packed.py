"""Packed sequences (``nn.utils.rnn``) and the recurrent layers on packed input, against PyTorch.

PackedSequence is torch's NamedTuple (fields, ``to``/``cpu``/``double``..., ``is_cuda``); packing, unpacking,
``pack_sequence``/``unpack_sequence``/``unpad_sequence`` give torch's tensors and pass gradients back to the padded
input; RNN/LSTM/GRU load torch's ``state_dict`` and, on a packed batch (sorted or not, batch-first or not,
bidirectional, two layers, with or without ``hx``, LSTM projections), give torch's packed output and final states,
and the same gradients for the input, ``hx`` and every weight, with plain and create_graph backward. Bad lengths fail
with torch's exception type and message.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, torch

import tinygrad_like as tl
from tinygrad_like.nn.utils import rnn as R

pytestmark = pytest.mark.skipif(torch is None, reason="needs PyTorch as the oracle")

TOL = {"float32": dict(atol=2e-5, rtol=2e-4), "float64": dict(atol=1e-10, rtol=1e-8)}


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _pair(arr: np.ndarray, grad: bool = True):
    return tl.tensor(arr.copy(), requires_grad=grad), torch.tensor(arr.copy(), requires_grad=grad)


def _same_packed(ours: R.PackedSequence, theirs, tol=None) -> None:
    assert isinstance(ours, R.PackedSequence)
    assert_close(ours.data, theirs.data, **(tol or {}), msg="data: ")
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert ours.batch_sizes.device.type == "cpu" and ours.batch_sizes.dtype is tl.int64
    for name in ("sorted_indices", "unsorted_indices"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.tolist() == b.tolist(), name


# ---- packing and unpacking --------------------------------------------------------------------------
PACKS = [
    ("sorted", (6, 4, 3), [6, 4, 4, 1], {}),
    ("batch_first", (4, 6, 3), [6, 4, 4, 1], dict(batch_first=True)),
    ("unsorted", (6, 4, 3), [2, 6, 1, 4], dict(enforce_sorted=False)),
    ("unsorted-bf-ties", (6, 7, 2), [3, 6, 3, 1, 6, 2], dict(batch_first=True, enforce_sorted=False)),
    ("2d-tensor-lengths", (5, 3), "tensor", {}),
]


@pytest.mark.parametrize("name,shape,lengths,kw", PACKS, ids=[p[0] for p in PACKS])
def test_pack_pad_round_trip_like_torch(backward_mode, name, shape, lengths, kw):
    x = randn(*shape)
    a, b = _pair(x)
    if lengths == "tensor":
        la, lb = tl.tensor([5, 3, 3], dtype=tl.int32), torch.tensor([5, 3, 3], dtype=torch.int32)
    else:
        la, lb = lengths, lengths
    pa = R.pack_padded_sequence(a, la, **kw)
    pb = torch.nn.utils.rnn.pack_padded_sequence(b, lb, **kw)
    _same_packed(pa, pb)
    bf = kw.get("batch_first", False)
    total = shape[1 if bf else 0] + 2
    ya, la_out = R.pad_packed_sequence(pa, batch_first=bf, padding_value=-2.5, total_length=total)
    yb, lb_out = torch.nn.utils.rnn.pad_packed_sequence(pb, batch_first=bf, padding_value=-2.5, total_length=total)
    assert_close(ya, yb)
    assert_close(la_out, lb_out)
    assert la_out.device.type == "cpu"
    g = randn(*yb.shape, seed=1)
    (ya * tl.tensor(g)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    assert_close(a.grad, b.grad, msg="grad through pack and pad: ")  # zeros where the input was padding


def test_pack_sequence_unpack_sequence_unpad_sequence():
    seqs = [randn(3, 2, seed=1), randn(5, 2, seed=2), randn(1, 2, seed=3)]
    ours = [tl.tensor(s, requires_grad=True) for s in seqs]
    theirs = [torch.tensor(s, requires_grad=True) for s in seqs]
    pa = R.pack_sequence(ours, enforce_sorted=False)
    pb = torch.nn.utils.rnn.pack_sequence(theirs, enforce_sorted=False)
    _same_packed(pa, pb)
    ua, ub = R.unpack_sequence(pa), torch.nn.utils.rnn.unpack_sequence(pb)
    assert len(ua) == len(ub) == 3
    for a, b in zip(ua, ub):
        assert_close(a, b)
    sum((a * (i + 1)).sum() for i, a in enumerate(ua)).backward()
    sum((b * (i + 1)).sum() for i, b in enumerate(ub)).backward()
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        R.pack_sequence(ours)
    # unpad_sequence, time-major: ours leaves the caller's tensor as it was (torch transposes it in place)
    padded = R.pad_sequence(ours)
    lengths = tl.tensor([3, 5, 1])
    for a, s in zip(R.unpad_sequence(padded, lengths), seqs):
        np.testing.assert_array_equal(a.detach().numpy(), s)
    assert padded.shape == (5, 3, 2)


def test_invert_permutation():
    p = tl.tensor([2, 0, 3, 1])
    assert R.invert_permutation(p).tolist() == torch.nn.utils.rnn.invert_permutation(
        torch.tensor([2, 0, 3, 1])).tolist()
    assert R.invert_permutation(None) is None


def test_packed_sequence_is_torchs_named_tuple():
    packed = R.pack_padded_sequence(tl.tensor(randn(4, 3, 2), dtype=tl.float32), [4, 3, 1], enforce_sorted=False)
    assert isinstance(packed, tuple) and packed._fields == ("data", "batch_sizes", "sorted_indices",
                                                            "unsorted_indices")
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert data is packed.data and batch_sizes.tolist() == [3, 2, 2, 1]
    assert sorted_indices.tolist() == [0, 1, 2] and unsorted_indices.tolist() == [0, 1, 2]
    assert packed.to(tl.float32) is packed and packed.cpu() is packed and packed.float() is packed
    assert not packed.is_cuda
    d = packed.double()
    assert d.data.dtype is tl.float64 and d.batch_sizes is packed.batch_sizes
    assert packed.to(dtype=tl.float64).data.dtype is tl.float64
    assert packed.half().data.dtype is tl.float16 and packed.long().data.dtype is tl.int64
    assert packed.int().data.dtype is tl.int32
    for name in ("short", "char", "byte"):  # torch's int16, int8, uint8
        assert getattr(packed, name)().data.dtype is getattr(packed.data, name)().dtype
    moved = packed.to("sim")
    assert moved.data.device.type == "sim" and moved.sorted_indices.device.type == "sim"
    assert moved.unsorted_indices.device.type == "sim" and moved.batch_sizes.device.type == "cpu"
    back = moved.cpu()
    assert back.data.device.type == "cpu" and back.sorted_indices.device.type == "cpu"
    np.testing.assert_array_equal(back.data.numpy(), packed.data.numpy())
    # built from its fields (sorted_indices alone: unsorted_indices is its inverse), or torch's legacy pair
    p2 = R.PackedSequence(packed.data, packed.batch_sizes, tl.tensor([2, 0, 1]))
    assert p2.unsorted_indices.tolist() == [1, 2, 0]
    p3 = R.PackedSequence((packed.data, packed.batch_sizes))
    assert p3.batch_sizes is packed.batch_sizes and p3.sorted_indices is None
    with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
        R.PackedSequence(packed.data, packed.batch_sizes.to("sim"))


# ---- errors -----------------------------------------------------------------------------------------
def _raise_same(ours_fn, theirs_fn, match: str) -> None:
    with pytest.raises(Exception) as theirs:
        theirs_fn()
    with pytest.raises(theirs.type, match=match):
        ours_fn()


ERRORS = [
    ("unsorted", lambda m, x: m.pack_padded_sequence(x, [4, 2, 3]), "must be sorted in decreasing order when "
                                                                     "`enforce_sorted` is True"),
    ("zero", lambda m, x: m.pack_padded_sequence(x, [4, 3, 0]), "Length of all samples has to be greater than 0"),
    ("zero-unsorted", lambda m, x: m.pack_padded_sequence(x, [4, 0, 3], enforce_sorted=False),
     "Length of all samples has to be greater than 0"),
    ("count", lambda m, x: m.pack_padded_sequence(x, [4, 3]), r"Expected `len\(lengths\)` to be equal to "
                                                              r"batch_size, but got 2 \(batch_size=3\)"),
    ("2d-lengths", lambda m, x: m.pack_padded_sequence(x, (tl if m is R else torch).tensor([[4, 3, 2]])),
     "'lengths' argument should be a 1D CPU int64 tensor, but got 2D cpu Long tensor"),
    ("empty", lambda m, x: m.pack_padded_sequence(x[:, :0], []), "Cannot pack empty tensors."),
    ("total_length", lambda m, x: m.pad_packed_sequence(m.pack_padded_sequence(x, [4, 3, 2]), total_length=3),
     "Expected total_length to be at least the length of the longest sequence in input, but got total_length=3 and "
     "max sequence length being 4"),
    ("empty-list", lambda m, x: m.pack_sequence([]), "received an empty list of sequences"),
]


@pytest.mark.parametrize("name,call,match", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_like_torch(name, call, match):
    x = randn(4, 3, 2)
    _raise_same(lambda: call(R, tl.tensor(x)), lambda: call(torch.nn.utils.rnn, torch.tensor(x)), match)


def test_lengths_on_another_device_and_of_another_dtype():
    x = tl.tensor(randn(4, 3, 2))
    with pytest.raises(RuntimeError, match="'lengths' argument should be a 1D CPU int64 tensor, but got 1D sim:0 "
                                           "Long tensor"):
        R.pack_padded_sequence(x, tl.tensor([4, 3, 2]).to("sim"))
    # torch converts the lengths to int64 first (floats truncate), and so do we
    xt = torch.tensor(randn(4, 3, 2))
    for ours_len, theirs_len in ((tl.tensor([4.7, 3.0, 2.2]), torch.tensor([4.7, 3.0, 2.2])),
                                 (tl.tensor([4, 3, 2], dtype=tl.int32), torch.tensor([4, 3, 2], dtype=torch.int32))):
        _same_packed(R.pack_padded_sequence(x, ours_len), torch.nn.utils.rnn.pack_padded_sequence(xt, theirs_len))


def test_a_length_longer_than_the_input_is_an_error():
    # torch reads past the input here (batch_sizes sum to more rows than data has); we stop with the reason
    with pytest.raises(RuntimeError, match="the longest length is 5, but the input has only 4 time steps"):
        R.pack_padded_sequence(tl.tensor(randn(4, 3, 2)), [5, 3, 2])


# ---- recurrent layers on packed input ---------------------------------------------------------------
RNN_CASES = [
    ("RNN-sorted", lambda nn: nn.RNN(3, 4), [5, 4, 2, 2], dict(), False),
    ("RNN-relu-2l-bi-unsorted-hx", lambda nn: nn.RNN(3, 4, 2, "relu", bidirectional=True), [2, 5, 1, 4],
     dict(enforce_sorted=False), True),
    ("LSTM-2l-bi-unsorted", lambda nn: nn.LSTM(3, 4, 2, bidirectional=True), [3, 5, 5, 1],
     dict(enforce_sorted=False), False),
    ("LSTM-2l-bi-bf-unsorted-hx", lambda nn: nn.LSTM(3, 4, 2, batch_first=True, bidirectional=True), [2, 5, 1, 4],
     dict(enforce_sorted=False), True),
    ("LSTM-proj-bi-hx", lambda nn: nn.LSTM(3, 5, 2, proj_size=2, bidirectional=True), [5, 3, 3, 1], dict(), True),
    ("GRU-2l-bi-unsorted", lambda nn: nn.GRU(3, 4, 2, bidirectional=True), [4, 1, 5, 2],
     dict(enforce_sorted=False), False),
    ("GRU-bf-nobias-hx", lambda nn: nn.GRU(3, 4, bias=False, batch_first=True), [5, 5, 3, 1], dict(), True),
]


def _hidden_shapes(mod, batch: int) -> list:
    dirs = 2 if mod.bidirectional else 1
    h = (mod.num_layers * dirs, batch, mod.proj_size or mod.hidden_size)
    return [h, (mod.num_layers * dirs, batch, mod.hidden_size)] if isinstance(mod, torch.nn.LSTM) else [h]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,make,lengths,kw,with_hx", RNN_CASES, ids=[c[0] for c in RNN_CASES])
def test_recurrent_layers_on_packed_input_like_torch(backward_mode, name, make, lengths, kw, with_hx, dtype):
    tol = TOL[dtype]
    theirs = make(torch.nn).to(getattr(torch, dtype))
    ours = make(tl.nn).to(getattr(tl, dtype))
    ours.load_state_dict({k: tl.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    bf = theirs.batch_first
    batch, steps = len(lengths), max(lengths)
    x = randn(*((batch, steps, 3) if bf else (steps, batch, 3))).astype(dtype)
    xa, xb = _pair(x)
    pa = R.pack_padded_sequence(xa, lengths, batch_first=bf, **kw)
    pb = torch.nn.utils.rnn.pack_padded_sequence(xb, lengths, batch_first=bf, **kw)
    hs = [randn(*s, seed=7 + i).astype(dtype) for i, s in enumerate(_hidden_shapes(theirs, batch))]
    ha, hb = [tl.tensor(h, requires_grad=True) for h in hs], [torch.tensor(h, requires_grad=True) for h in hs]
    lstm = isinstance(theirs, torch.nn.LSTM)
    hxa = (tuple(ha) if lstm else ha[0]) if with_hx else None
    hxb = (tuple(hb) if lstm else hb[0]) if with_hx else None
    oa, fa = ours(pa, hxa)
    ob, fb = theirs(pb, hxb)
    _same_packed(oa, ob, tol)
    fa, fb = (list(fa), list(fb)) if lstm else ([fa], [fb])
    for i, (a, b) in enumerate(zip(fa, fb)):
        assert_close(a, b, **tol, msg=f"final state {i}: ")
    ya, _ = R.pad_packed_sequence(oa, batch_first=bf)
    yb, _ = torch.nn.utils.rnn.pad_packed_sequence(ob, batch_first=bf)
    assert_close(ya, yb, **tol)
    gs = [randn(*t.shape, seed=20 + i).astype(dtype) for i, t in enumerate([yb] + fb)]
    sum((t * tl.tensor(g)).sum() for t, g in zip([ya] + fa, gs)).backward()
    sum((t * torch.tensor(g)).sum() for t, g in zip([yb] + fb, gs)).backward()
    assert_close(xa.grad, xb.grad, **tol, msg="input grad: ")
    if with_hx:
        for i, (a, b) in enumerate(zip(ha, hb)):
            assert_close(a.grad, b.grad, **tol, msg=f"hx[{i}] grad: ")
    params = dict(theirs.named_parameters())
    for n, p in ours.named_parameters():
        assert_close(p.grad, params[n].grad, **tol, msg=f"grad of {n}: ")


def test_packed_output_ignores_the_padding():
    """What the padding holds never reaches the outputs, the final states or the real steps' gradients."""
    tl.manual_seed(0)
    lstm = tl.nn.LSTM(2, 3, bidirectional=True, batch_first=True).double()
    x = randn(3, 5, 2)
    lengths = [2, 5, 3]
    results = []
    for fill in (0.0, 100.0):
        xx = x.copy()
        for b, n in enumerate(lengths):
            xx[b, n:] = fill
        xt = tl.tensor(xx, requires_grad=True)
        out, (h, c) = lstm(R.pack_padded_sequence(xt, lengths, batch_first=True, enforce_sorted=False))
        y, _ = R.pad_packed_sequence(out, batch_first=True)
        (y.sum() + h.sum() + c.sum()).backward()
        results.append((y.detach().numpy(), h.detach().numpy(), xt.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    grad = results[0][2]
    assert not np.any(grad[0, 2:]) and not np.any(grad[2, 3:])


def test_packed_input_on_the_simulated_device():
    tl.manual_seed(1)
    gru = tl.nn.GRU(2, 3, num_layers=2, bidirectional=True)
    x = randn(4, 3, 2).astype(np.float32)
    packed = R.pack_padded_sequence(tl.tensor(x), [2, 4, 1], enforce_sorted=False)
    out, h = gru(packed)
    out_sim, h_sim = gru.to("sim")(packed.to("sim"))
    assert out_sim.data.device.type == "sim" and h_sim.device.type == "sim"
    assert out_sim.batch_sizes.device.type == "cpu"
    np.testing.assert_allclose(out_sim.data.cpu().detach().numpy(), out.data.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(h_sim.cpu().detach().numpy(), h.detach().numpy(), rtol=1e-6, atol=1e-6)


RNN_ERRORS = [
    ("hidden-batch", lambda nn, p, t: nn.GRU(2, 3)(p, t.zeros(1, 2, 3)),
     r"Expected hidden size \(1, 3, 3\), got \[1, 2, 3\]"),
    ("lstm-cell-size", lambda nn, p, t: nn.LSTM(2, 3)(p, (t.zeros(1, 3, 3), t.zeros(1, 3, 4))),
     r"Expected hidden\[1\] size \(1, 3, 3\), got \[1, 3, 4\]"),
    ("input-size", lambda nn, p, t: nn.RNN(4, 3)(p),
     r"input.size\(-1\) must be equal to input_size. Expected 4, got 2"),
    ("3d-data", lambda nn, p, t: nn.RNN(2, 3)(type(p)(p.data.unsqueeze(1), p.batch_sizes)),
     "input must have 2 dimensions, got 3"),
]


@pytest.mark.parametrize("name,call,match", RNN_ERRORS, ids=[e[0] for e in RNN_ERRORS])
def test_recurrent_errors_on_packed_input_like_torch(name, call, match):
    x = randn(4, 3, 2).astype(np.float32)
    pa = R.pack_padded_sequence(tl.tensor(x), [4, 3, 1])
    pb = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), [4, 3, 1])
    _raise_same(lambda: call(tl.nn, pa, tl), lambda: call(torch.nn, pb, torch), match)


def test_packed_gradcheck_by_finite_differences():
    """The second witness: float64 finite differences through packing, a bidirectional GRU and unpacking."""
    tl.manual_seed(2)
    gru = tl.nn.GRU(2, 2, bidirectional=True).double()
    lengths = [2, 3, 1]

    def run(x, h0):
        out, h = gru(R.pack_padded_sequence(x, lengths, enforce_sorted=False), h0)
        return R.pad_packed_sequence(out, padding_value=0.5)[0], h

    x = tl.tensor(randn(3, 3, 2), requires_grad=True)
    h0 = tl.tensor(randn(2, 3, 2, seed=1), requires_grad=True)
    assert tl.autograd.gradcheck(run, (x, h0))
