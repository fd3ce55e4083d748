"""The linalg family's API against torch, beyond the conformance rows (``tests/conformance/rows_linalg.py``): integer
and bool dtypes, keyword spellings, return types, error conditions and their messages, the diagonal as a view, the
in-place products and their version bumps, edges (NaN, empty tensors, norms at zero), einsum on random equations,
finite-difference and second-order gradients, ``tl.linalg``, and the ops on a second memory space and the CUDA
emulator."""

from __future__ import annotations

import math
import random
import re
import warnings

import numpy as np
import pytest
from conftest import assert_close, pair

import tinygrad_like as tl

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(17)
M34, M45 = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5))
V3, V4 = RNG.standard_normal(3), RNG.standard_normal(4)
B234, B245 = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
INTS34, INTS45 = RNG.integers(-3, 4, (3, 4)), RNG.integers(-3, 4, (4, 5))


def _both(fn, *arrays, dtype=None, requires_grad=False):
    """``fn`` applied to the tl and torch tensors made from ``arrays``: (tl result, torch result)."""
    tls, ths = zip(*(pair(a, requires_grad=requires_grad, dtype=dtype) for a in arrays))
    return fn(tl, *tls), fn(torch, *ths)


# ---- errors: the type torch raises, and a message that says what was wrong ------------------------------
ERRORS = [
    ("mm-3d", lambda m: m.mm(m.ones(2, 3, 4), m.ones(4, 5)), "self must be a matrix"),
    ("mm-1d", lambda m: m.mm(m.ones(3, 4), m.ones(4)), "mat2 must be a matrix"),
    ("mm-shapes", lambda m: m.mm(m.ones(3, 4), m.ones(3, 4)),
     r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x4\)"),
    ("mm-dtype", lambda m: m.mm(m.ones(3, 4), m.ones(4, 2, dtype=m.float64)), "same dtype"),
    ("mm-bool", lambda m: m.mm(m.ones(2, 2) > 0, m.ones(2, 2) > 0), "Bool"),
    ("bmm-2d", lambda m: m.bmm(m.ones(3, 4), m.ones(2, 4, 5)), "batch1 must be a 3D tensor"),
    ("bmm-2d-b", lambda m: m.bmm(m.ones(2, 3, 4), m.ones(4, 5)), "batch2 must be a 3D tensor"),
    ("bmm-batch", lambda m: m.bmm(m.ones(2, 3, 4), m.ones(3, 4, 5)),
     r"Expected size for first two dimensions of batch2 tensor to be: \[2, 4\] but got: \[3, 4\]"),
    ("bmm-inner", lambda m: m.bmm(m.ones(2, 3, 4), m.ones(2, 3, 5)), r"to be: \[2, 4\] but got: \[2, 3\]"),
    ("mv-shapes", lambda m: m.mv(m.ones(3, 4), m.ones(5)), r"size mismatch, got input \(3\), mat \(3x4\), vec \(5\)"),
    ("mv-2d", lambda m: m.mv(m.ones(3, 4), m.ones(4, 4)), "vector \\+ matrix @ vector expected, got 1, 2, 2"),
    ("addmm-1d", lambda m: m.addmm(m.ones(5), m.ones(4), m.ones(4, 5)), "mat1 must be a matrix, got 1-D"),
    ("addmm-shapes", lambda m: m.addmm(m.ones(5), m.ones(3, 4), m.ones(3, 5)), "shapes cannot be multiplied"),
    ("addmm-input", lambda m: m.addmm(m.ones(2, 5), m.ones(3, 4), m.ones(4, 5)),
     r"The expanded size of the tensor \(3\) must match the existing size \(2\) at non-singleton dimension 0"),
    ("addmm-dtype", lambda m: m.addmm(m.ones(5, dtype=m.float64), m.ones(3, 4), m.ones(4, 5)), "same dtype"),
    ("baddbmm-input", lambda m: m.baddbmm(m.ones(3, 3, 5), m.ones(2, 3, 4), m.ones(2, 4, 5)),
     "The expanded size of the tensor"),
    ("baddbmm-2d", lambda m: m.baddbmm(m.ones(5), m.ones(3, 4), m.ones(2, 4, 5)), "batch1 must be a 3D tensor"),
    ("addbmm-batch", lambda m: m.addbmm(m.ones(3, 5), m.ones(2, 3, 4), m.ones(3, 4, 5)), "first two dimensions"),
    ("addmv-shapes", lambda m: m.addmv(m.ones(3), m.ones(3, 4), m.ones(5)), "size mismatch"),
    ("outer-2d", lambda m: m.outer(m.ones(3, 4), m.ones(3)), "outer: Expected 1-D argument self, but got 2-D"),
    ("dot-2d", lambda m: m.dot(m.ones(3, 4), m.ones(3)), "1D tensors expected, but got 2D and 1D tensors"),
    ("dot-sizes", lambda m: m.dot(m.ones(3), m.ones(4)),
     r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
    ("dot-dtype", lambda m: m.dot(m.ones(3), m.ones(3, dtype=m.float64)), "expected both vectors to have same dtype"),
    ("dot-bool", lambda m: m.dot(m.ones(3) > 0, m.ones(3) > 0), "Bool"),
    ("vdot-2d", lambda m: m.vdot(m.ones(3, 4), m.ones(3)), "1D tensors expected"),
    ("inner-last", lambda m: m.inner(m.ones(3, 4), m.ones(5, 3)),
     r"inner\(\) the last dimension must match on both input tensors but got shapes \[3, 4\] and \[5, 3\]"),
    ("inner-dtype", lambda m: m.inner(m.ones(3, 4), m.ones(4, dtype=m.float64)), "same dtype"),
    ("tensordot-neg", lambda m: m.tensordot(m.ones(3, 4), m.ones(3, 4), -1), "tensordot expects dims >= 0"),
    ("tensordot-many", lambda m: m.tensordot(m.ones(3, 4), m.ones(3, 4), 3), "tensordot expects dims < ndim_a"),
    ("tensordot-sizes", lambda m: m.tensordot(m.ones(3, 4), m.ones(3, 4), 1),
     "contracted dimensions need to match, but first has size 4 in dim -1 and second has size 3 in dim 0"),
    ("tensordot-lens", lambda m: m.tensordot(m.ones(3, 4), m.ones(3, 4), ([0, 1], [1])),
     "both dimension lists should have same length"),
    ("tensordot-repeat", lambda m: m.tensordot(m.ones(3, 3), m.ones(3, 3), ([0, 0], [0, 1])),
     "dim 0 appears multiple times in the list of dims"),
    ("tensordot-dtype", lambda m: m.tensordot(m.ones(3, 4), m.ones(4, dtype=m.float64), 1), "same dtype"),
    ("tensordot-dim-range", lambda m: m.tensordot(m.ones(3, 4), m.ones(3, 4), ([2], [0])), "Dimension out of range"),
    ("einsum-fewer", lambda m: m.einsum("ij,jk", m.ones(2, 2)), "fewer operands were provided than specified"),
    ("einsum-more", lambda m: m.einsum("ij", m.ones(2, 2), m.ones(2, 2)), "more operands were provided than specified"),
    ("einsum-sizes", lambda m: m.einsum("ij,jk", m.ones(3, 4), m.ones(3, 4)),
     "subscript j has size 3 for operand 1 which does not broadcast with previously seen size 4"),
    ("einsum-ndim", lambda m: m.einsum("ijk", m.ones(3, 4)),
     r"the number of subscripts in the equation \(3\) does not match the number of dimensions \(2\) for operand 0"),
    ("einsum-ell-ndim", lambda m: m.einsum("ijk...", m.ones(3, 4)), r"is more than the number of dimensions \(2\)"),
    ("einsum-out-repeat", lambda m: m.einsum("ij->ii", m.ones(3, 4)), "output subscript i appears more than once"),
    ("einsum-out-missing", lambda m: m.einsum("ij->k", m.ones(3, 4)),
     "output subscript k does not appear in the equation for any input operand"),
    ("einsum-bad-char", lambda m: m.einsum("i1->", m.ones(3, 4)),
     r"invalid subscript given at index 1 in the equation string, subscripts must be in \[a-zA-Z\]"),
    ("einsum-bad-arrow", lambda m: m.einsum("ij-k", m.ones(3, 4)), "invalid subscript given at index 2"),
    ("einsum-two-ellipses", lambda m: m.einsum("...i...->", m.ones(3, 4)),
     "found '.' for operand 0 for which an ellipsis was already found"),
    ("einsum-repeat-sizes", lambda m: m.einsum("ii->i", m.ones(3, 4)),
     "subscript i is repeated for operand 0 but the sizes don't match, 3 != 4"),
    ("einsum-dtype", lambda m: m.einsum("ij,jk", m.ones(3, 4), m.ones(4, 2, dtype=m.float64)), "Float|float32"),
    ("einsum-no-operands", lambda m: m.einsum("ij->"), "must specify the equation string and at least one operand"),
    ("norm-int", lambda m: m.norm(m.arange(3)), "Expected a floating point or complex tensor as input"),
    ("norm-fro-3dims", lambda m: m.norm(m.ones(2, 3, 4), "fro", dim=(0, 1, 2)), "dim must be a 2-tuple"),
    ("norm-bad-order", lambda m: m.norm(m.ones(2, 3), "foo"), "Order foo not supported"),
    ("norm-dim-twice", lambda m: m.norm(m.ones(2, 3), dim=(0, 0)), "appears multiple times in the list of dims"),
    ("norm-inf-empty", lambda m: m.norm(m.ones(0, 3), math.inf), "cannot compute the inf norm on an empty tensor"),
    ("norm-dim-range", lambda m: m.norm(m.ones(2, 3), dim=2), "Dimension out of range"),
    ("vector_norm-str", lambda m: m.linalg.vector_norm(m.ones(3), "fro"), "must be"),
    ("vector_norm-int-dtype", lambda m: m.linalg.vector_norm(m.arange(3), dtype=m.float32), "floating point"),
    ("matrix_norm-1d", lambda m: m.linalg.matrix_norm(m.ones(3)), "must have at least 2 dimensions"),
    ("matrix_norm-order", lambda m: m.linalg.matrix_norm(m.ones(3, 3), 3), "Order 3 not supported"),
    ("matrix_norm-same-dims", lambda m: m.linalg.matrix_norm(m.ones(2, 3, 4), dim=(0, 0)), "dims must be different"),
    ("linalg-norm-3d-ord", lambda m: m.linalg.norm(m.ones(2, 3, 4), 2),
     "If dim is not specified but ord is, the input must be 1D or 2D. Got 3D"),
    ("linalg-norm-3dims", lambda m: m.linalg.norm(m.ones(2, 3, 4), dim=(0, 1, 2)), "must be of length 1 or 2"),
    ("dist-int", lambda m: m.dist(m.arange(3), m.arange(3)), "input dtype should be either floating point"),
    ("cdist-1d", lambda m: m.cdist(m.ones(3), m.ones(3)), "cdist only supports at least 2D tensors, X1 got: 1D"),
    ("cdist-cols", lambda m: m.cdist(m.ones(3, 4), m.ones(2, 3)),
     "X1 and X2 must have the same number of columns. X1: 4 X2: 3"),
    ("cdist-p", lambda m: m.cdist(m.ones(3, 4), m.ones(2, 4), p=-1), "cdist only supports non-negative p values"),
    ("cdist-int", lambda m: m.cdist(m.ones(3, 4).long(), m.ones(2, 4).long()), "cdist only supports floating-point"),
    ("cdist-dtype", lambda m: m.cdist(m.ones(3, 4), m.ones(2, 4, dtype=m.float64)), "Float|dtype"),
    ("cdist-batch", lambda m: m.cdist(m.ones(2, 3, 4), m.ones(3, 2, 4)), "2|3"),
    ("cross-len", lambda m: m.cross(m.ones(3, 4), m.ones(3, 4), dim=1),
     "linalg.cross: inputs dimension 1 must have length 3. Got 4 and 4"),
    ("cross-ndim", lambda m: m.linalg.cross(m.ones(4, 3), m.ones(3)),
     "linalg.cross: inputs must have the same number of dimensions"),
    ("cross-dtype", lambda m: m.linalg.cross(m.ones(4, 3), m.ones(4, 3, dtype=m.float64)), "Float|dtype"),
    ("cross-bcast", lambda m: m.linalg.cross(m.ones(2, 3), m.ones(4, 3)), "2|4"),
    ("linalg-cross-default-dim", lambda m: m.linalg.cross(m.ones(3, 4), m.ones(3, 4)),
     "inputs dimension -1 must have length 3"),
    ("trace-3d", lambda m: m.trace(m.ones(2, 3, 4)), "trace: expected a matrix, but got tensor with dim 3"),
    ("trace-1d", lambda m: m.trace(m.ones(3)), "trace: expected a matrix, but got tensor with dim 1"),
    ("diag-3d", lambda m: m.diag(m.ones(2, 3, 4)), r"diag\(\): Supports 1D or 2D tensors. Got 3D"),
    ("diag-0d", lambda m: m.diag(m.tensor(1.0)), "Got 0D"),
    ("diagonal-same", lambda m: m.diagonal(m.ones(3, 4), 0, 1, 1), "diagonal dimensions cannot be identical 1, 1"),
    ("diagonal-1d", lambda m: m.diagonal(m.ones(3)), r"Dimension out of range \(expected to be in range of \[-1, 0\]"),
    ("diag_embed-same", lambda m: m.diag_embed(m.ones(3, 4), 1, 0, 0), "diagonal dimensions cannot be identical"),
    ("diag_embed-0d", lambda m: m.diag_embed(m.tensor(1.0)), "Dimension out of range"),
    ("diagonal_scatter-size", lambda m: m.diagonal_scatter(m.zeros(3, 4), m.ones(2)),
     r"expected src to have a size equal to the slice of self. src size = \[2\], slice size = \[3\]"),
    ("tril_indices-neg", lambda m: m.tril_indices(-1, 4), "row must be non-negative"),
    ("triu_indices-neg-col", lambda m: m.triu_indices(3, -2), "col must be non-negative"),
    ("tril_indices-float", lambda m: m.tril_indices(3, 3, dtype=m.float32), "not implemented for"),
    ("addmm_-leaf", lambda m: m.ones(3, 5, requires_grad=True).addmm_(m.ones(3, 4), m.ones(4, 5)),
     "a leaf Variable that requires grad is being used in an in-place operation"),
    ("addmm_-shape", lambda m: m.ones(5).addmm_(m.ones(3, 4), m.ones(4, 5)), r"doesn't match the broadcast shape"),
    ("matrix_power-rect", lambda m: m.linalg.matrix_power(m.ones(3, 4), 2), "square matrices"),
]


@pytest.mark.parametrize("fn, pattern", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_match_torch(fn, pattern):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(theirs.type) as ours:
        fn(tl)
    assert re.search(pattern, str(ours.value)), f"ours: {ours.value!s}\ntorch: {theirs.value!s}"


def test_what_needs_an_inverse_is_computed():
    # (more in tests/test_api_census_linalg.py)
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    assert_close(tl.linalg.matrix_power(tl.tensor(a), -1), torch.linalg.matrix_power(torch.tensor(a), -1))
    assert_close(tl.linalg.cond(tl.tensor(a), "fro"), torch.linalg.cond(torch.tensor(a), "fro"))


def test_non_tensor_arguments_are_type_errors():
    for fn in (lambda: tl.mm(tl.ones(2, 2), [[1.0]]), lambda: tl.ones(2).dot(3.0), lambda: tl.einsum("i", [1.0]),
               lambda: tl.cdist([[1.0]], tl.ones(1, 1)), lambda: tl.trace(np.ones((2, 2)))):
        with pytest.raises(TypeError):
            fn()


# ---- integer dtypes, return types and keyword spellings --------------------------------------------------
INT_OPS = [
    ("mm", lambda m, a, b: m.mm(a, b), (INTS34, INTS45)),
    ("matmul-method", lambda m, a, b: a.mm(b), (INTS34, INTS45)),
    ("bmm", lambda m, a, b: m.bmm(a, b), (INTS34[None], INTS45[None])),
    ("mv", lambda m, a, b: m.mv(a, b), (INTS34, INTS45[:, 0])),
    ("dot", lambda m, a, b: m.dot(a, b), (INTS34[0], INTS45[:, 1])),
    ("inner", lambda m, a, b: m.inner(a, b), (INTS34, INTS45.T)),
    ("outer", lambda m, a, b: m.outer(a, b), (INTS34[0], INTS45[0])),
    ("kron", lambda m, a, b: m.kron(a, b), (INTS34, INTS45)),
    ("einsum", lambda m, a, b: m.einsum("ij,jk->ki", a, b), (INTS34, INTS45)),
    ("einsum-sum", lambda m, a, b: m.einsum("ij->j", a), (INTS34, INTS45)),
    ("tensordot", lambda m, a, b: m.tensordot(a, b, 1), (INTS34, INTS45)),
    ("addmm", lambda m, a, b: m.addmm(a[:, :1], a, b, beta=2, alpha=3), (INTS34, INTS45)),
    ("addmm-float-scalars", lambda m, a, b: m.addmm(a[:, :1], a, b, beta=1.7, alpha=2.2), (INTS34, INTS45)),
    ("cross", lambda m, a, b: m.linalg.cross(a[:, :3], b[:3, :3]), (INTS34, INTS45)),
    ("trace", lambda m, a, b: m.trace(a), (INTS34, INTS45)),
    ("diag", lambda m, a, b: m.diag(a, 1), (INTS34, INTS45)),
    ("diag-vec", lambda m, a, b: m.diag(a[0], -1), (INTS34, INTS45)),
    ("diagonal", lambda m, a, b: m.diagonal(a, -1), (INTS34, INTS45)),
    ("diag_embed", lambda m, a, b: m.diag_embed(a), (INTS34, INTS45)),
    ("diagflat", lambda m, a, b: m.diagflat(a[:2]), (INTS34, INTS45)),
]


@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("fn, arrays", [o[1:] for o in INT_OPS], ids=[o[0] for o in INT_OPS])
def test_integer_inputs_keep_torchs_dtype_and_values(fn, arrays, dtype):
    got, want = _both(fn, *arrays, dtype=dtype)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    assert not got.requires_grad
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_keyword_spellings_are_torchs():
    a, b, v = (tl.tensor(x) for x in (M34, M45, V4))
    cases = [
        (tl.mm(input=a, mat2=b), a @ b), (a.mm(mat2=b), a @ b), (tl.mv(input=a, vec=v), a @ v),
        (tl.dot(input=v, tensor=v), v @ v), (v.dot(tensor=v), v @ v), (tl.vdot(input=v, other=v), v @ v),
        (tl.outer(input=v, vec2=v), v.unsqueeze(1) * v), (tl.ger(input=v, vec2=v), v.unsqueeze(1) * v),
        (tl.inner(input=v, other=v), v @ v), (tl.kron(input=v, other=v), tl.outer(v, v).reshape(-1)),
        (tl.addmm(input=a @ b, mat1=a, mat2=b, beta=2, alpha=3), 5 * (a @ b)),
        (tl.addmv(input=a @ v, mat=a, vec=v, beta=0.5), 1.5 * (a @ v)),
        (tl.tensordot(a=a, b=b, dims=1), a @ b),
        (tl.norm(input=a, p=1, dim=0, keepdim=True), a.abs().sum(0, keepdim=True)),
        (a.norm(p=1, dim=0, keepdim=True), a.abs().sum(0, keepdim=True)), (a.norm(1, 0, True), a.abs().sum(0, True)),
        (tl.dist(input=a, other=a * 0, p=1), a.abs().sum()),
        (tl.cdist(x1=a, x2=a, p=1.0, compute_mode="donot_use_mm_for_euclid_dist"), tl.cdist(a, a, 1.0)),
        (tl.trace(input=a), a.diagonal().sum()), (tl.diag(input=a, diagonal=1), a.diagonal(1)),
        (tl.diagonal(input=a, offset=1, dim1=1, dim2=0), a.T.diagonal(1)),
        (a.diagonal(offset=-1, dim1=1, dim2=0), a.T.diagonal(-1)),
        (tl.diag_embed(input=v, offset=1, dim1=0, dim2=1), tl.diag(v, 1)), (tl.diagflat(input=v, offset=0), tl.diag(v)),
        (tl.linalg.vector_norm(x=a, ord=1, dim=0, keepdim=True, dtype=tl.float64),
         a.double().abs().sum(0, keepdim=True)),
        (tl.linalg.matrix_norm(input=a, ord="fro", dim=(0, 1)), a.norm()),
        (tl.linalg.norm(input=a, ord=None, dim=None), a.norm()),
        (tl.linalg.vecdot(x=a, y=a, dim=0), (a * a).sum(0)),
        (tl.linalg.cross(input=a[:, :3], other=a[:, 1:], dim=1), tl.cross(a[:, :3], a[:, 1:], dim=1)),
        (tl.linalg.diagonal(a, offset=1, dim1=1, dim2=0), a.T.diagonal(1)),
        (tl.einsum("ij,jk", [a, b]), a @ b), (tl.matrix_power(input=a[:, :3], n=2), a[:, :3] @ a[:, :3]),
    ]
    for got, want in cases:
        assert got.shape == want.shape and got.dtype is want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError):
        tl.addmm(a @ b, a, b, 2, 3)  # beta and alpha are keyword-only, as in torch


def test_tril_and_triu_indices_match_torch():
    for row, col in [(3, 4), (4, 3), (1, 1), (0, 3), (3, 0), (5, 5)]:
        for offset in (-6, -2, -1, 0, 1, 3, 7):
            for name in ("tril_indices", "triu_indices"):
                got, want = getattr(tl, name)(row, col, offset), getattr(torch, name)(row, col, offset)
                assert got.dtype is tl.int64 and got.shape == tuple(want.shape)
                np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = tl.tril_indices(3, 3, dtype=tl.int32, device="cpu")
    assert got.dtype is tl.int32 and got.tolist() == torch.tril_indices(3, 3, dtype=torch.int32).tolist()
    assert tl.triu_indices(row=2, col=3, offset=1).tolist() == torch.triu_indices(row=2, col=3, offset=1).tolist()


def test_norm_dtypes_and_results():
    a, h = pair(M34.astype(np.float32))
    assert a.norm().dtype is tl.float32 and a.norm(dtype=tl.float64).dtype is tl.float64
    assert_close(tl.norm(a, dtype=tl.float64), torch.norm(h, dtype=torch.float64))
    assert_close(tl.linalg.vector_norm(a, dtype=tl.float64), torch.linalg.vector_norm(h, dtype=torch.float64))
    for p in (0, 0.5, 1, 2, 3, -1, math.inf, -math.inf):  # numbers as ints or floats alike
        assert_close(a.norm(p, dim=1), h.norm(p, dim=1))
    assert tl.norm(tl.zeros(0, 3)).item() == 0.0
    assert tuple(tl.norm(tl.zeros(0, 3), math.inf, dim=1).shape) == (0,)
    assert tl.linalg.vector_norm(tl.tensor(M34), dim=()).item() == pytest.approx(np.linalg.norm(M34))


def test_trace_diag_and_cdist_of_empty_tensors():
    assert tl.trace(tl.zeros(0, 3)).item() == 0.0
    assert tl.diag(tl.zeros(0)).shape == (0, 0) and tl.diag(tl.zeros(3, 4), 5).shape == (0,)
    got, want = _both(lambda m, a, b: m.cdist(a, b), np.zeros((3, 0)), np.zeros((2, 0)))
    assert_close(got, want)
    got, want = _both(lambda m, a, b: m.cdist(a, b, math.inf), np.zeros((3, 0)), np.zeros((2, 0)))
    assert_close(got, want)


def test_nan_and_inf():
    nan_in = np.full((3, 5), np.nan)
    got, want = _both(lambda m, i, a, b: m.addmm(i, a, b, beta=0), nan_in, M34, M45)
    assert_close(got, want)
    assert not np.isnan(got.numpy()).any()  # beta=0: the input's values are never read
    x = np.array([[1.0, np.nan, 3.0], [np.inf, -2.0, 0.0]])
    for p in (1, 2, 3, math.inf, -math.inf, 0):
        got, want = _both(lambda m, t, p=p: m.norm(t, p, dim=1), x)
        assert_close(got, want)


# ---- views and in-place ---------------------------------------------------------------------------------
def test_diagonal_is_a_view_sharing_storage_and_version():
    x = tl.tensor(M34)
    d = x.diagonal(1)
    assert d.storage is x.storage and d._base is x and d.stride() == (5,) and d.storage_offset() == 1
    d.mul_(0)
    assert x._version == 1 and d._version == 1
    want = M34.copy()
    want[[0, 1, 2], [1, 2, 3]] = 0
    np.testing.assert_array_equal(x.numpy(), want)
    x.T.diagonal().fill_(7.0)  # (a view of a view)
    assert np.all(np.diagonal(x.numpy()) == 7.0)
    assert tl.diag(x).storage is not x.storage  # diag of a matrix is a copy, as in torch


def test_writes_through_a_diagonal_record_autograd_as_torch():
    def run(m):
        x = m.tensor(M34, requires_grad=True)
        y = x * 2
        y.diagonal(-1).mul_(3)
        y.diagonal().add_(y[0, :3])
        (y * y).sum().backward()
        return y, x.grad
    (y_tl, g_tl), (y_th, g_th) = run(tl), run(torch)
    assert_close(y_tl, y_th)
    assert_close(g_tl, g_th)


def test_a_diagonal_saved_for_backward_then_written_is_refused():
    x = tl.tensor(M34[:, :3], requires_grad=True)
    y = x * 1
    z = (y.diagonal() ** 2).sum()
    y.diagonal().zero_()
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.backward()


@pytest.mark.parametrize("name, args", [
    ("addmm_", ((3, 5), (3, 4), (4, 5))), ("addmv_", ((3,), (3, 4), (4,))),
    ("baddbmm_", ((2, 3, 5), (2, 3, 4), (2, 4, 5))), ("addbmm_", ((3, 5), (2, 3, 4), (2, 4, 5)))])
def test_in_place_products(name, args):
    arrays = [RNG.standard_normal(s) for s in args]
    (ti, th), *mats = [pair(a) for a in arrays]
    out = getattr(ti, name)(*(m[0] for m in mats), beta=0.5, alpha=2)
    getattr(th, name)(*(m[1] for m in mats), beta=0.5, alpha=2)
    assert out is ti and ti._version == 1
    assert_close(ti, th)
    # with autograd: the input's history is replaced, the factors get their gradients
    def run(m, arrs):
        i, a, b = (m.tensor(x, requires_grad=True) for x in arrs)
        y = i * 1
        getattr(y, name)(a, b, beta=-1, alpha=0.5)
        (y * y).sum().backward()
        return y, i.grad, a.grad, b.grad
    for ours, theirs in zip(run(tl, arrays), run(torch, arrays)):
        assert_close(ours, theirs)


def test_functional_addmv_in_place_and_no_grad_path():
    i, a, v = tl.zeros(3, dtype=tl.float64), tl.tensor(M34), tl.tensor(V4)
    out = tl.addmv_(i, a, v)
    assert out is i and i._version == 1
    np.testing.assert_allclose(i.numpy(), M34 @ V4)
    p = tl.zeros(3, 5, dtype=tl.float64, requires_grad=True)
    with tl.no_grad():
        p.addmm_(tl.tensor(M34), tl.tensor(M45))  # a parameter update: allowed without grad
    np.testing.assert_allclose(p.detach().numpy(), M34 @ M45)
    assert p.grad_fn is None


# ---- torch.cross without dim, kron of non-contiguous inputs ------------------------------------------------
def test_cross_without_dim_takes_the_first_dim_of_size_3_and_warns():
    a, b = RNG.standard_normal((3, 3, 4)), RNG.standard_normal((3, 3, 4))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        got = tl.cross(tl.tensor(a), tl.tensor(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.cross(torch.tensor(a), torch.tensor(b))
    assert_close(got, want)
    with pytest.raises(RuntimeError, match="no dimension of size 3"):
        tl.cross(tl.ones(2, 4), tl.ones(2, 4))


def test_kron_of_a_transposed_input():
    """torch 2.13's kron refuses a transposed first input (it views where it must copy); ours works."""
    got = tl.kron(tl.tensor(M34).T, tl.tensor(V3))
    assert_close(got, torch.kron(torch.tensor(M34.T.copy()), torch.tensor(V3)))


# ---- einsum on random equations -----------------------------------------------------------------------
def _random_einsum(rng: random.Random, seed: int):
    letters = "abcdeAB"
    sizes = {c: rng.randint(1, 3) for c in letters}
    ell = tuple(rng.randint(1, 3) for _ in range(rng.randint(0, 2)))
    use_ell = rng.random() < 0.3
    terms, arrays = [], []
    for _ in range(rng.randint(1, 3)):
        t = [rng.choice(letters) for _ in range(rng.randint(0, 3))]
        shape = [sizes[c] if rng.random() > 0.15 else 1 for c in t]
        shape = [shape[t.index(c)] for c in t]  # a repeated subscript has one size
        term = "".join(t)
        if use_ell and rng.random() < 0.8:
            k, pos = rng.randint(0, len(ell)), rng.randint(0, len(t))
            es = [e if rng.random() > 0.2 else 1 for e in ell[len(ell) - k:]]
            term, shape = term[:pos] + "..." + term[pos:], shape[:pos] + es + shape[pos:]
        terms.append(term)
        arrays.append(np.random.default_rng(seed).standard_normal(shape))
    eq = ",".join(terms)
    if rng.random() < 0.6:
        present = sorted({c for t in terms for c in t if c != "."})
        rng.shuffle(present)
        out = "".join(present[:rng.randint(0, len(present))])
        if any("..." in t for t in terms) and rng.random() < 0.7:
            p = rng.randint(0, len(out))
            out = out[:p] + "..." + out[p:]
        eq += "->" + out
    return eq, arrays


@pytest.mark.parametrize("chunk", range(4))
def test_einsum_on_random_equations_matches_torch(chunk):
    """300 random equations (1-3 operands, repeated subscripts, ellipses, size-1 broadcasting, implicit and explicit
    outputs): the same values and gradients as torch, and an error exactly where torch raises one."""
    rng = random.Random(chunk)
    compared = 0
    for trial in range(75):
        eq, arrays = _random_einsum(rng, trial)
        ths = [torch.tensor(a, requires_grad=True) for a in arrays]
        tls = [tl.tensor(a, requires_grad=True) for a in arrays]
        try:
            want = torch.einsum(eq, *ths)
        except RuntimeError:
            with pytest.raises(RuntimeError, match="einsum"):
                tl.einsum(eq, *tls)
            continue
        got = tl.einsum(eq, *tls)
        assert_close(got, want, msg=f"{eq} {[a.shape for a in arrays]}: ")
        g = np.random.default_rng(trial).standard_normal(tuple(want.shape))
        want.backward(torch.tensor(g))
        got.backward(tl.tensor(g))
        for a, b in zip(tls, ths):
            assert_close(a.grad, b.grad, msg=f"grad of {eq}: ")
        compared += 1
    assert compared > 40


def test_einsum_returns_a_new_tensor_and_caches_plans_by_shape():
    x = tl.tensor(M34)
    same = tl.einsum("ij->ij", x)
    assert same is not x and same.storage is x.storage  # (a view, as torch's)
    for shape in [(3, 4), (2, 2), (1, 5)]:  # one equation, several shapes: each its own plan
        a = RNG.standard_normal(shape)
        assert_close(tl.einsum("ij->j", tl.tensor(a)), torch.einsum("ij->j", torch.tensor(a)))


# ---- gradients: finite differences and second order ------------------------------------------------------
GRADCHECK = [
    ("einsum", lambda a, b: tl.einsum("ij,kj->ik", a, b), [(3, 4), (2, 4)]),
    ("einsum-diag", lambda a, b: tl.einsum("ii,ij->j", a[:, :3], b[:3].T), [(3, 4), (4, 3)]),
    ("tensordot", lambda a, b: tl.tensordot(a, b, ([0], [1])), [(3, 2), (2, 3)]),
    ("addmm", lambda i, a, b: tl.addmm(i, a, b, beta=0.7, alpha=-1.3), [(3,), (2, 4), (4, 3)]),
    ("baddbmm", lambda i, a, b: tl.baddbmm(i, a, b, alpha=2), [(2, 1, 3), (2, 2, 4), (2, 4, 3)]),
    ("addbmm", lambda i, a, b: tl.addbmm(i, a, b), [(2, 3), (2, 2, 4), (2, 4, 3)]),
    ("addmv", lambda i, a, v: tl.addmv(i, a, v, beta=2), [(3,), (3, 4), (4,)]),
    ("kron", lambda a, b: tl.kron(a, b), [(2, 2), (3,)]),
    ("norm-2", lambda x: x.norm(dim=1), [(3, 4)]),
    ("norm-3", lambda x: x.norm(3, dim=(0, 1)), [(2, 3)]),
    ("norm-1.5", lambda x: x.norm(1.5), [(2, 3)]),
    ("matrix_norm-1", lambda x: tl.linalg.matrix_norm(x, 1), [(3, 4)]),
    ("dist", lambda a, b: tl.dist(a, b, 2.5), [(3, 4), (4,)]),
    ("cdist", lambda a, b: tl.cdist(a, b), [(3, 4), (2, 4)]),
    ("cdist-p1", lambda a, b: tl.cdist(a, b, 1), [(2, 3), (2, 3)]),
    ("cross", lambda a, b: tl.linalg.cross(a, b), [(2, 3), (1, 3)]),
    ("trace", lambda x: tl.trace(x * x), [(3, 4)]),
    ("diag", lambda x: tl.diag(x, -1), [(3,)]),
    ("diagonal", lambda x: x.diagonal(1, 0, 2).exp(), [(3, 2, 4)]),
    ("diag_embed", lambda x: tl.diag_embed(x, 1, 0, 2) ** 2, [(2, 3)]),
    ("diagonal_scatter", lambda x, s: tl.diagonal_scatter(x * x, s.exp(), -1), [(3, 3), (2,)]),
]


@pytest.mark.parametrize("fn, shapes", [g[1:] for g in GRADCHECK], ids=[g[0] for g in GRADCHECK])
def test_finite_differences(fn, shapes):
    rng = np.random.default_rng(3)
    inputs = [tl.tensor(rng.uniform(0.5, 1.5, s) * rng.choice([-1.0, 1.0], s), requires_grad=True) for s in shapes]
    assert tl.autograd.gradcheck(fn, inputs)


SECOND_ORDER = [
    ("norm", lambda m, x: m.norm(x, dim=1) ** 2, [(3, 4)]),
    ("norm-3", lambda m, x: m.norm(x, 3), [(3, 4)]),
    ("einsum", lambda m, a, b: m.einsum("ij,jk->ik", a * a, b).sin(), [(3, 4), (4, 2)]),
    ("dist", lambda m, a, b: m.dist(a * a, b, 3), [(3, 4), (4,)]),  # (torch has no second derivative of cdist)
    ("cross", lambda m, a, b: m.linalg.cross(a * a, b, dim=0), [(3, 2), (3, 2)]),
    ("addmm", lambda m, i, a, b: m.addmm(i * i, a * a, b, beta=2, alpha=0.5), [(2,), (3, 4), (4, 2)]),
    ("diag_embed", lambda m, x: m.diag_embed(x * x).exp(), [(2, 3)]),
]


@pytest.mark.parametrize("fn, shapes", [g[1:] for g in SECOND_ORDER], ids=[g[0] for g in SECOND_ORDER])
def test_second_derivatives_match_torch(fn, shapes):
    """Differentiate the gradient again (create_graph=True) and compare a Hessian-vector product with torch's."""
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in shapes]
    results = []
    for m in (tl, torch):
        xs = [m.tensor(a, requires_grad=True) for a in arrays]
        y = fn(m, *xs).sum()
        gs = m.autograd.grad(y, xs, create_graph=True)
        sum((g * g).sum() for g in gs).backward()
        results.append([x.grad for x in xs])
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)


# ---- tl.linalg and the rest of its names -----------------------------------------------------------------
def test_linalg_namespace_lists_what_it_has():
    assert tl.linalg.matmul is tl.matmul
    for name in tl.linalg.__all__:
        assert callable(getattr(tl.linalg, name)) and hasattr(torch.linalg, name)
    for name in ("mm", "bmm", "einsum", "tensordot", "cdist", "tril_indices", "trace", "diag_embed"):
        assert name in tl.__all__ or hasattr(tl, name)


def test_linalg_norm_dispatch():
    a3 = RNG.standard_normal((2, 3, 4))
    cases = [lambda m, x: m.linalg.norm(x), lambda m, x: m.linalg.norm(x, dim=(1, 2)),
             lambda m, x: m.linalg.norm(x, math.inf, dim=(0, 2), keepdim=True),
             lambda m, x: m.linalg.norm(x, 1, dim=1), lambda m, x: m.linalg.norm(x[0], "fro"),
             lambda m, x: m.linalg.norm(x[0, 0], 3), lambda m, x: m.linalg.norm(x[0], -math.inf),
             lambda m, x: m.norm(x, "fro", dim=1), lambda m, x: m.norm(x, None)]
    for fn in cases:
        got, want = _both(fn, a3)
        assert_close(got, want)


def test_multi_dot_and_matrix_power():
    a, b, v = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 4)), RNG.standard_normal(3)
    got, want = _both(lambda m, x, y, z: m.linalg.multi_dot([z, x, y, y, y.T[:, :1]]), a, b, v)
    assert_close(got, want)
    for n in (0, 1, 2, 5):
        got, want = _both(lambda m, y, n=n: m.linalg.matrix_power(y, n), b)
        assert_close(got, want)
    with pytest.raises(RuntimeError, match="multi_dot"):
        tl.linalg.multi_dot([tl.ones(3, 3)])


# ---- on a second memory space and the CUDA backend --------------------------------------------------------
def _device_workload(device):
    def t(a):
        return tl.tensor(a.astype(np.float32), device=device)
    a, b, c = t(M34), t(M45), t(B234)
    return [tl.mm(a, b), tl.bmm(c, t(B245)), tl.addmm(t(V3[:, None]), a, b, beta=0.5), tl.einsum("bij,jk->bki", c, b),
            tl.einsum("ii->i", a[:, :3]), tl.tensordot(c, a, ([1, 2], [0, 1])), a.norm(), a.norm(1, dim=0),
            tl.cdist(a, a), tl.linalg.cross(a[:, :3], a[:, 1:]), a.trace(), tl.diag(a), tl.diag(a[0]),
            tl.diag_embed(a), a.diagonal(1), tl.kron(a[:2, :2], a[:2]), tl.tril_indices(3, 4, device=device),
            tl.triu_indices(4, 3, 1, device=device)]


def test_the_ops_run_on_a_second_memory_space(dev):
    host = _device_workload("cpu")
    for got, want in zip(_device_workload("testdev"), host):
        assert got.device == dev and got.dtype is want.dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    x = tl.tensor(M34, device="testdev", requires_grad=True)  # (float64)
    (tl.einsum("ij,ij->i", x, x).sum() + x.diagonal().sum() + tl.diag_embed(x).sum() + x.norm()).backward()
    assert x.grad.device == dev
    h = tl.tensor(M34, requires_grad=True)
    (tl.einsum("ij,ij->i", h, h).sum() + h.diagonal().sum() + tl.diag_embed(h).sum() + h.norm()).backward()
    np.testing.assert_allclose(x.grad.numpy(), h.grad.numpy())


def test_the_ops_on_the_cuda_backend():
    from emu_driver import cuda_device
    gen = cuda_device()
    cuda = next(gen)
    try:
        be = cuda.raw_backend
        before = be.fallbacks["cross"]
        host = _device_workload("cpu")
        for got, want in zip(_device_workload("cuda"), host):
            assert got.dtype is want.dtype
            np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
        assert be.fallbacks["cross"] == before + 1  # (no kernel: a counted host fallback)
    finally:
        gen.close()
