"""Every tensor a backward reads is saved with its version (issue 15's fuzzer findings).

Writing into one of them between forward and backward must raise, as in PyTorch, never send the gradient to
the wrong place. Each case runs against torch too: both must refuse.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")


def max_dim_indices(lib):
    x = lib.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    v, i = x.max(dim=1)
    i.zero_()
    v.sum().backward()


def min_dim_indices(lib):
    x = lib.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    v, i = x.min(dim=0, keepdim=True)
    i.fill_(1)
    v.sum().backward()


def getitem_index(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    idx = lib.tensor([0, 2])
    y = x[idx]
    idx.zero_()
    y.sum().backward()


def getitem_index_in_a_tuple(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    rows = lib.tensor([1, 0])
    y = x[rows, 1]
    rows.fill_(0)
    y.sum().backward()


def setitem_index(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    idx = lib.tensor([0, 2])
    y[idx] = lib.tensor([5.0, 6.0], requires_grad=True)
    idx.fill_(1)
    (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()


CASES = [max_dim_indices, min_dim_indices, getitem_index, getitem_index_in_a_tuple, setitem_index]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_writing_a_tensor_backward_reads_is_refused_like_torch(case):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        case(torch)
    with pytest.raises(tl.autograd.function.VersionMismatchError, match="modified by an in-place operation"):
        case(tl)


def test_unwritten_indices_still_give_torchs_gradients():
    for lib in (torch, tl):
        x = lib.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
        v, i = x.max(dim=1)
        idx = lib.tensor([1, 1, 0])
        (v.sum() + x.reshape(-1)[idx].sum()).backward()
        if lib is torch:
            want = x.grad.numpy()
        else:
            np.testing.assert_array_equal(x.grad.numpy(), want)


def test_layer_norm_without_affine_returns_its_own_array():
    """F.layer_norm without weight and bias returned the array it keeps for backward: an in-place op on the
    output changed the gradient."""
    out = {}
    for lib in (torch, tl):
        x = lib.tensor([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]], requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (3,))
        y.mul_(2)
        (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        out[lib] = x.grad.numpy()
    np.testing.assert_allclose(out[tl], out[torch], rtol=1e-5, atol=1e-6)


def test_layer_norm_weight_grad_keeps_its_shape_with_create_graph():
    for lib in (torch, tl):
        x = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
        w = lib.tensor([1.0, 0.5, 2.0], requires_grad=True)
        b = lib.tensor([0.0, 0.1, 0.2], requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (3,), w, b)
        gx, gw, gb = (lib.autograd.grad((y * y).sum(), (x, w, b), create_graph=True))
        assert tuple(gw.shape) == (3,) and tuple(gb.shape) == (3,), lib.__name__
        if lib is torch:
            want = [g.detach().numpy() for g in (gx, gw, gb)]
        else:
            for g, t in zip((gx, gw, gb), want):
                np.testing.assert_allclose(g.detach().numpy(), t, rtol=1e-5, atol=1e-6)


def test_max_grad_with_an_infinite_incoming_gradient_is_torchs():
    """max(dim): inf where the max was and 0 elsewhere, not nan; amax: torch's own nan off the max."""
    for lib in (torch, tl):
        x = lib.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
        v, _ = x.max(dim=1)
        v.backward(lib.tensor([float("inf"), 1.0]))
        m = x.amax()
        x2 = lib.tensor([1.0, 4.0, 2.0], requires_grad=True)
        x2.amax().backward(lib.tensor(float("inf")))
        if lib is torch:
            want, want2 = x.grad.numpy(), x2.grad.numpy()
        else:
            np.testing.assert_array_equal(x.grad.numpy(), want)
            np.testing.assert_array_equal(x2.grad.numpy(), want2)
        del m


def test_no_numpy_runtime_warning_reaches_the_user():
    """Division by zero, log(0), 0/0, overflow: IEEE results and silence, as in torch; the user's own NumPy
    code still warns."""
    import subprocess
    import sys

    code = ("import numpy as np, tinygrad_like as tl\n"
            "x = tl.tensor([0.0, 1.0], requires_grad=True)\n"
            "y = (1 / x) + x.log() + (x / x) + tl.tensor([1e30]) * 1e30 + x.sqrt() + (x - 1).sqrt()\n"
            "y.sum().backward()\n"
            "print(y.tolist())\n"
            "np.array([1.0]) / np.array([0.0])\n")
    r = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[nan, inf]"
    warnings = [line for line in r.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warnings) == 1 and warnings[0].startswith("<string>:6:"), r.stderr
