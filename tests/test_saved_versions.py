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


# ---- ops save only what their backward reads (valid programs torch runs must run here too) ----------------
def pow_output_written(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x ** 2
    y += 1  # Pow keeps x, not its output
    y.sum().backward()
    return x.grad


def reciprocal_output_written(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = 1 / x
    y.mul_(3)
    y.sum().backward()
    return x.grad


def max_pool_output_written(lib):
    x = lib.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
    y = lib.nn.functional.max_pool2d(x, 2)
    y.add_(1)
    (y * y).sum().backward()
    return x.grad


def matmul_weight_updated_when_input_needs_no_grad(lib):
    x = lib.tensor([[1.0, 2.0], [0.5, -1.0]])
    w = lib.tensor([[3.0, 1.0], [4.0, 2.0]], requires_grad=True)
    y = x @ w
    with lib.no_grad():
        w.add_(1)  # w's gradient reads x only
    y.sum().backward()
    return w.grad


def matmul_vector_times_matrix(lib):
    x = lib.tensor([1.0, 2.0])
    w = lib.tensor([[3.0, 1.0], [4.0, 2.0]], requires_grad=True)
    y = x @ w
    with lib.no_grad():
        w.mul_(2)
    y.sum().backward()
    return w.grad


def linear_weight_updated_when_input_needs_no_grad(lib):
    x = lib.tensor([[1.0, 2.0]])
    w = lib.tensor([[3.0, 4.0]], requires_grad=True)
    b = lib.tensor([0.5], requires_grad=True)
    y = lib.nn.functional.linear(x, w, b)
    with lib.no_grad():
        w.add_(1)
    y.sum().backward()
    return w.grad


def cross_entropy_logits_written(lib):
    z = lib.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 2.0]], requires_grad=True)
    logits = z * 1
    loss = lib.nn.functional.cross_entropy(logits, lib.tensor([2, 0]))
    logits.mul_(0)  # the loss kept its log-probabilities
    loss.backward()
    return z.grad


def mul_in_place_where_only_the_other_needs_grad(lib):
    a = lib.tensor([1.0, 2.0])
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    a.mul_(b)
    a.sum().backward()
    return b.grad


def div_in_place_where_only_the_other_needs_grad(lib):
    a = lib.tensor([1.0, 2.0])
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    a.div_(b)
    a.sum().backward()
    return b.grad


def pow_at_zero_to_the_zero(lib):
    x = lib.tensor([0.0, 2.0], requires_grad=True)
    y = lib.tensor([0.0, 3.0], requires_grad=True)
    (x ** y).sum().backward()
    return lib.cat([x.grad, y.grad])


VALID = [pow_output_written, reciprocal_output_written, max_pool_output_written,
         matmul_weight_updated_when_input_needs_no_grad, matmul_vector_times_matrix,
         linear_weight_updated_when_input_needs_no_grad, cross_entropy_logits_written,
         mul_in_place_where_only_the_other_needs_grad, div_in_place_where_only_the_other_needs_grad,
         pow_at_zero_to_the_zero]


@pytest.mark.parametrize("case", VALID, ids=[c.__name__ for c in VALID])
def test_valid_programs_run_and_match_torch(case):
    np.testing.assert_allclose(case(tl).numpy(), case(torch).numpy(), rtol=1e-5, atol=1e-6)


def test_a_graph_of_cross_entropys_backward_still_checks_the_logits():
    """create_graph differentiates through the logits, so there a write to them must still be refused."""
    z = tl.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    logits = z * 1
    loss = tl.nn.functional.cross_entropy(logits, tl.tensor([2]))
    logits.mul_(0)
    with pytest.raises(tl.autograd.function.VersionMismatchError, match="CrossEntropy"):
        tl.autograd.grad(loss, z, create_graph=True)


def test_only_the_operand_the_other_gradient_reads_is_kept():
    a = tl.randn(3, requires_grad=True)
    c = tl.randn(3)
    y = a * c  # a's gradient reads c; nobody's reads a
    assert y.grad_fn.saved[0] is None and y.grad_fn.saved[1] is c
    m = a @ tl.randn(3, 2)  # (recorded as torch records it: squeeze(mm(a.unsqueeze(0), w)))
    mm = m.grad_fn.next[0]
    assert type(mm).__name__ == "MmBackward0" and mm.saved[0] is None and mm.saved[1] is not None
    m2 = a.unsqueeze(0) @ tl.randn(3, 2)
    assert m2.grad_fn.saved[0] is None and m2.grad_fn.saved[1] is not None
