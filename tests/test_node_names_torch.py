"""Graph nodes are named as torch's ``grad_fn`` names them, and the views show that name: ``transpose`` is
``Transpose`` (not our one ``Permute`` class's name), ``view`` is ``View``, ``split`` is ``Split``, and ``x += y``
on a non-leaf records one ``AddBackward0``, with no ``Clone`` the learner never wrote. Checked against PyTorch
itself running the same code."""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like.widgets import build_graph

torch = pytest.importorskip("torch")

# (what a learner writes, as a function of the library and a float tensor of shape (2, 6, 4) with history)
METHODS = {
    "split": lambda lib, a: a.split(2, dim=1)[1],
    "split sizes": lambda lib, a: a.split([2, 4], dim=1)[0],
    "chunk": lambda lib, a: a.chunk(3, dim=1)[2],
    "unbind": lambda lib, a: a.unbind(1)[0],
    "narrow": lambda lib, a: a.narrow(1, 1, 2),
    "slice": lambda lib, a: a[:, 1:3],
    "select": lambda lib, a: a[:, 1],
    "transpose": lambda lib, a: a.transpose(1, 2),
    "transpose 2-D": lambda lib, a: a[0].transpose(0, 1),
    "swapaxes": lambda lib, a: a.swapaxes(0, 2),
    "mT": lambda lib, a: a.mT,
    "t": lambda lib, a: a[0].t(),
    "T": lambda lib, a: a[0].T,
    "permute": lambda lib, a: a.permute(2, 0, 1),
    "permute swap": lambda lib, a: a.permute(0, 2, 1),
    "permute 2-D": lambda lib, a: a[0].permute(1, 0),
    "movedim": lambda lib, a: a.movedim(0, 2),
    "view": lambda lib, a: a.view(12, 4),
    "reshape": lambda lib, a: a.reshape(2, 24),
    "flatten": lambda lib, a: a.flatten(1),
    "contiguous": lambda lib, a: a.transpose(1, 2).contiguous(),
    "squeeze": lambda lib, a: a[:, :1].squeeze(1),
    "unsqueeze": lambda lib, a: a.unsqueeze(0),
    "expand": lambda lib, a: a[:, :1].expand(2, 6, 4),
    "masked_fill": lambda lib, a: a.masked_fill(a > 1, 0.0),
    "softmax": lambda lib, a: a.softmax(-1),
    "dropout": lambda lib, a: lib.nn.functional.dropout(a, 0.5, True),
    "layer_norm": lambda lib, a: lib.nn.functional.layer_norm(a, (4,)),
    "gelu": lambda lib, a: lib.nn.functional.gelu(a),
    "stack": lambda lib, a: lib.stack([a, a * 2, a], dim=1),
    "stack last": lambda lib, a: lib.stack(list(a.unbind(0)), dim=-1),
}


def _input(lib):
    x = lib.tensor(np.arange(48, dtype=np.float32).reshape(2, 6, 4) / 10, requires_grad=True)
    return x * 1  # (a non-leaf, as inside a model)


@pytest.mark.parametrize("case", list(METHODS))
def test_node_class_is_torchs(case):
    ours = type(METHODS[case](tl, _input(tl)).grad_fn).__name__
    theirs = type(METHODS[case](torch, _input(torch)).grad_fn).__name__
    assert ours == theirs


def test_stack_is_one_node_with_one_edge_per_input():
    """torch records ``stack`` as one StackBackward0 (a recurrent layer's outputs: one Unsqueeze per step would fill
    the drawing); its gradients are each input's slice, as torch computes them."""
    ours, theirs = _input(tl), _input(torch)
    w = np.random.default_rng(0).standard_normal((2, 3, 6, 4)).astype(np.float32)
    y, ty = tl.stack([ours, ours * 2, ours], 1), torch.stack([theirs, theirs * 2, theirs], 1)
    assert len(y.grad_fn.next_functions) == len(ty.grad_fn.next_functions) == 3
    (y * tl.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    assert ours.grad is None  # (a non-leaf) — compare the leaf's gradient through the graph instead
    leaf = ours.grad_fn.next[0]
    np.testing.assert_allclose(leaf.grad.numpy(), theirs.grad_fn.next_functions[0][0].variable.grad.numpy(), rtol=1e-6)


def test_our_short_names_stay():
    """``node.name`` (our API, read by events and tests) keeps our op class's name."""
    a = _input(tl)
    assert a.transpose(1, 2).grad_fn.name == "Permute" and a.view(12, 4).grad_fn.name == "Reshape"
    assert a.transpose(1, 2).grad_fn.name() == "TransposeBackward0"


def _strip(name: str) -> str:
    return re.sub(r"Backward\d+$", "", name)


def _torch_graph(out) -> list:
    seen, names, stack = set(), [], [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        if type(n).__name__ != "AccumulateGrad":
            names.append(_strip(type(n).__name__))
        stack.extend(f for f, _ in n.next_functions)
    return names


def _attention(lib, x, bias):
    """A nanoGPT attention block without its Linear layers, as a learner writes it (B, T, C = 2, 4, 6; 2 heads)."""
    B, T, C = x.size()
    q, k, v = x.split(C // 3, dim=2)
    k = k.view(B, T, 2, 1).transpose(1, 2)
    q = q.view(B, T, 2, 1).transpose(1, 2)
    v = v.view(B, T, 2, 1).transpose(1, 2)
    att = (q * k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (a broadcast product: no batched @)
    att = att.masked_fill(bias[:, :, :T, :T] == 0, float("-inf"))
    att = att.softmax(dim=-1)
    y = (att * v.transpose(-2, -1)).sum(-1, keepdim=True)
    y = y.transpose(1, 2).contiguous().view(B, T, 2)
    r = y.tanh() * 2
    r += y  # a residual added in place, on a non-leaf
    return r.sum()


def test_view_labels_are_torchs_names_on_a_learners_attention():
    data = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)
    x_tl = tl.tensor(data, requires_grad=True)
    x_t = torch.tensor(data, requires_grad=True)
    bias = np.tril(np.ones((4, 4), np.float32)).reshape(1, 1, 4, 4)
    out_tl = _attention(tl, x_tl, tl.tensor(bias))
    out_t = _attention(torch, x_t, torch.tensor(bias))
    labels = Counter(n.label for n in build_graph(out_tl).ops)
    theirs = Counter(_torch_graph(out_t))
    assert labels["Split"] == 3 * theirs.pop("Split")  # (torch: one node with three outputs; ours: one each)
    del labels["Split"]
    assert labels == theirs
    for wrote in ("Transpose", "View", "MaskedFill", "Clone", "Add"):
        assert labels[wrote], wrote
    assert "Permute" not in labels and "Reshape" not in labels and "Slice" not in labels
    out_tl.backward()
    out_t.backward()
    np.testing.assert_allclose(x_tl.grad.numpy(), x_t.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "relu_", "add_"])
def test_in_place_on_a_non_leaf_records_what_torch_records(op):
    """``x += y`` is one ``AddBackward0`` over x's old history and y (torch's own clone of what it saves is
    internal); the gradients are torch's."""
    def run(lib):
        a = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        b = lib.tensor([0.5, 4.0, -1.0], requires_grad=True)
        x = a * 2
        if op == "+=":
            x += b
        elif op == "-=":
            x -= b
        elif op == "*=":
            x *= b
        elif op == "/=":
            x /= b
        elif op == "relu_":
            x.relu_()
        else:
            x.add_(b)
        (x * x).sum().backward()
        return x, a.grad.numpy(), b.grad
    x_tl, ga_tl, gb_tl = run(tl)
    x_t, ga_t, gb_t = run(torch)
    assert _torch_graph(x_tl) == _torch_graph(x_t)
    assert "Clone" not in _torch_graph(x_tl)
    np.testing.assert_allclose(ga_tl, ga_t, rtol=1e-6)
    assert (gb_tl is None) == (gb_t is None)
    if gb_t is not None:
        np.testing.assert_allclose(gb_tl.numpy(), gb_t.numpy(), rtol=1e-6)


def test_in_place_keeps_what_the_op_saved_and_its_version_check():
    """Without the clone node, ``x *= y`` still saves x's old value (a copy), and a later write to a tensor a node
    saved still fails the backward, as in torch."""
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    b = tl.tensor([3.0, 4.0], requires_grad=True)
    x = a * 1
    x *= b
    x.sum().backward()
    assert b.grad.tolist() == [1.0, 2.0] and a.grad.tolist() == [3.0, 4.0]
    y = (a * 1).exp()  # exp saves its output
    y += 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()
