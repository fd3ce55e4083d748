"""Views and in-place writes with autograd, against PyTorch: a view reads its base's current history, and a
write through a view becomes the base's history (PyTorch's AsStridedBackward / CopySlices semantics).

Each case is one small program run twice, with ``lib`` bound to torch and to tinygrad_like; values,
gradients and ``requires_grad`` must agree. The first two are the fuzzer's findings (issue 15).
"""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")


def _np(t):
    return None if t is None else np.asarray(t.detach().tolist(), dtype=np.float64)


def view_then_zero_base(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    v = y[0:1]
    y.zero_()  # v must see the zeroing: torch gives x.grad = [0, 0]
    v.sum().backward()
    return {"x.grad": x.grad, "v": v, "v.requires_grad": v.requires_grad}


def view_of_plain_base_then_add_grad(lib):
    a = lib.tensor([1.0, 2.0])
    v = a[:1]
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    a.add_(b)  # a (and so v) now depends on b
    req = v.requires_grad
    (v * 5).sum().backward()
    return {"b.grad": b.grad, "v": v, "v.requires_grad": req}


def write_through_slice(lib):
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    y[0:2].mul_(3)
    w = lib.tensor([1.0, 10.0, 100.0, 1000.0])
    (y * w).sum().backward()
    return {"x.grad": x.grad, "y": y}


def overlapping_views_see_each_others_writes(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    head, tail = y[:2], y[1:]
    tail.mul_(x[1:] * 0 + 2)  # writes y[1] and y[2]; head[1] is y[1]
    (head * lib.tensor([1.0, 7.0])).sum().backward()
    return {"x.grad": x.grad, "head": head}


def write_through_a_transposed_view(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = lib.tensor([5.0, 6.0], requires_grad=True)
    y = x * 1
    yt = y.t()
    yt[0].add_(b)  # the first column of y
    (y * y).sum().backward()
    return {"x.grad": x.grad, "b.grad": b.grad, "y": y}


def setitem_on_a_view(lib):
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    s = lib.tensor(9.0, requires_grad=True)
    y = x * 2
    row = y[1]
    row[0] = s * 3
    (y * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
    return {"x.grad": x.grad, "s.grad": s.grad, "y": y, "row.requires_grad": row.requires_grad}


def view_of_a_view_then_fill(lib):
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x.sin()  # (saves x, not y: the fill is legal)
    v = y[1:][1:]  # y[2:] through two views
    y.fill_(2.0)
    (v * v).sum().backward()
    return {"x.grad": x.grad, "v": v}


def plain_view_write_without_grad_keeps_history(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    v = y[0:1]
    with lib.no_grad():
        y.add_(1)  # no new history: v keeps its slice of y's old (valid: mul by a constant saves nothing of y)
    v.sum().backward()
    return {"x.grad": x.grad, "v": v}


CASES = [view_then_zero_base, view_of_plain_base_then_add_grad, write_through_slice,
         overlapping_views_see_each_others_writes, write_through_a_transposed_view, setitem_on_a_view,
         view_of_a_view_then_fill, plain_view_write_without_grad_keeps_history]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_matches_torch(case):
    want, got = case(torch), case(tl)
    assert want.keys() == got.keys()
    for k in want:
        if isinstance(want[k], bool):
            assert got[k] == want[k], k
        else:
            np.testing.assert_allclose(_np(got[k]), _np(want[k]), rtol=1e-6, err_msg=k)


def test_the_view_gets_the_base_history_node():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    v = y[0:1]
    assert v.grad_fn.name != "ViewOfBase"
    y.zero_()
    assert v.grad_fn.name == "ViewOfBase" and v.grad_fn.next[0] is y.grad_fn


def test_in_place_on_a_view_of_a_leaf_that_requires_grad_is_refused_like_torch():
    for lib in (torch, tl):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
            w[0:1].mul_(2)
        with lib.no_grad():  # an optimizer-style write is fine
            w[0:1].mul_(2)
        assert w.tolist() == [2.0, 2.0]


def test_views_are_remembered_weakly():
    import gc

    y = tl.tensor([1.0, 2.0], requires_grad=True) * 1
    for _ in range(300):
        y[0:1]  # noqa: B018 - made and dropped
    gc.collect()
    assert len(y._storage.views) < 300  # dead ones are dropped as the list grows
    y.zero_()
    assert all(r() is not None for r in y._storage.views)
