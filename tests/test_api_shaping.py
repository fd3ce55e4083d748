"""The shaping and indexing family of issue 17 beyond the conformance rows (``conformance/rows_shaping.py``).

Integer and bool inputs, keyword spellings, return types, error cases (type and message, against torch), in-place
spellings and their version bumps, views, fancy indexing with torch's placement rules, finite-difference gradients,
and the few places where we chose to differ from torch.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_close, pair

import tinygrad_like as tl
from tinygrad_like.autograd import gradcheck

torch = pytest.importorskip("torch")  # the oracle: this module skips without it


def _both(fn, *arrays, dtype=None):
    """Run ``fn(m, *tensors)`` with m = tl and torch on tensors made from the same arrays."""
    pairs = [pair(a, dtype=dtype) for a in arrays]
    return fn(tl, *(p[0] for p in pairs)), fn(torch, *(p[1] for p in pairs))


def _same(got, want) -> None:
    if isinstance(want, (tuple, list)):
        assert isinstance(got, tuple) and len(got) == len(want), (got, want)
        for a, b in zip(got, want):
            _same(a, b)
        return
    assert_close(got, want)


INTS = np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]])
BOOLS = INTS % 2 == 1

# ---- values on integer and bool tensors (no gradients), against torch ---------------------------------------
VALUE_OPS = {
    "roll": lambda m, x: x.roll(2),
    "roll-dims": lambda m, x: m.roll(x, shifts=(1, 1), dims=(1, 0)),
    "rot90": lambda m, x: m.rot90(x, 3, [0, 1]),
    "fliplr": lambda m, x: x.fliplr(),
    "tile": lambda m, x: m.tile(x, (2, 1, 1)),
    "repeat_interleave": lambda m, x: x.repeat_interleave(2, dim=1),
    "repeat_interleave-tensor": lambda m, x: m.repeat_interleave(x, m.tensor([0, 2, 1]), dim=0),
    "unfold": lambda m, x: x.unfold(1, 3, 1),
    "diff": lambda m, x: m.diff(x, dim=0),
    "diff-n2": lambda m, x: x.diff(n=2),
    "take": lambda m, x: x.take(m.tensor([[0, -1], [5, 5]])),
    "take_along_dim": lambda m, x: m.take_along_dim(x, m.tensor([[0], [3], [1]]), dim=1),
    "masked_select": lambda m, x: m.masked_select(x, m.tensor([True, False, True, True])),
    "nonzero": lambda m, x: x.nonzero(),
    "nonzero-tuple": lambda m, x: m.nonzero(x, as_tuple=True),
    "argwhere": lambda m, x: m.argwhere(x),
    "where-1arg": lambda m, x: m.where(x),
    "scatter": lambda m, x: x.scatter(1, m.tensor([[0], [2], [3]]), x[:, :1].flip(0)),
    "scatter_add": lambda m, x: x.scatter_add(0, m.tensor([[0, 0, 1, 2]]), x[:1]),
    "index_copy": lambda m, x: x.index_copy(1, m.tensor([3, 0]), x[:, :2]),
    "index_fill": lambda m, x: m.index_fill(x, 0, m.tensor([2]), 1),
    "index_put": lambda m, x: x.index_put((m.tensor([0, 0]), m.tensor([1, 1])), x[0, :2], accumulate=True),
    "masked_scatter": lambda m, x: x.masked_scatter(m.tensor([[True], [False], [True]]), x.flip(1)),
    "hstack": lambda m, x: m.hstack([x, x[:, :1]]),
    "vstack": lambda m, x: m.vstack([x, x[0]]),
    "dstack": lambda m, x: m.dstack([x, x]),
    "column_stack": lambda m, x: m.column_stack([x[0], x[1]]),
    "tensor_split": lambda m, x: m.tensor_split(x, 3, dim=1),
    "fancy-mixed": lambda m, x: x[1:, [0, 2]],
    "fancy-bool": lambda m, x: x[[True, False, True], 1],
}
NUMERIC_ONLY = {"nonzero", "nonzero-tuple", "argwhere", "where-1arg", "diff", "diff-n2", "index_put"}


# (index_put and index_fill write numbers: they have no bool case)
@pytest.mark.parametrize("name,dtype", [(n, d) for n in VALUE_OPS for d in ("int64", "int32", "bool")
                                        if not (d == "bool" and n in {"index_put", "index_fill"})])
def test_values_on_ints_and_bools(name, dtype) -> None:
    data = BOOLS if dtype == "bool" else INTS
    got, want = _both(VALUE_OPS[name], data, dtype=dtype)
    _same(got, want)
    for t in got if isinstance(got, tuple) else (got,):
        assert not t.requires_grad


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32"])
def test_scatter_reduce_values(reduce, include_self, dtype) -> None:
    """Every reduction on ints and floats, with repeated targets and untouched positions; integer means round
    down (floor), as torch's."""
    src = np.array([[10, -21, 30], [40, 50, -61], [7, 8, 9]])
    index = np.array([[0, 1, 0], [1, 1, 1], [0, 0, 0]])

    def fn(m, x, s):
        return x.scatter_reduce(0, m.tensor(index), s, reduce=reduce, include_self=include_self)

    got, want = _both(fn, np.array([[1, 2, 3], [4, -5, 6], [7, 8, 9]]), src, dtype=dtype)
    assert_close(got, want)


def test_scatter_reduce_bool_and_nan() -> None:
    got, want = _both(lambda m, x, s: x.scatter_reduce(0, m.tensor([0, 0, 1]), s, "amax"), [False, False, True],
                      [False, True, False])
    assert_close(got, want)
    got, want = _both(lambda m, x, s: x.scatter_reduce(0, m.tensor([0, 0, 1]), s, "amin", include_self=False),
                      [1.0, 2.0, 3.0], [np.nan, 0.5, 2.0])
    assert_close(got, want)


def test_scatter_with_reduce_argument() -> None:
    """The deprecated ``reduce=`` of scatter: 'add' and 'multiply', with a tensor (torch warns) or a number."""
    for reduce in ("add", "multiply"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = _both(lambda m, x, s, r=reduce: x.scatter(0, m.tensor([[0, 1, 0], [1, 1, 1]]), s, reduce=r),
                              np.arange(6.0).reshape(2, 3) + 1, np.arange(6.0).reshape(2, 3) + 10)
        assert_close(got, want)
        with pytest.warns(UserWarning, match="Use torch.scatter_reduce instead"):
            tl.ones(3).scatter(0, tl.tensor([0]), tl.ones(1), reduce=reduce)
        got, want = _both(lambda m, x, r=reduce: m.scatter(x, 1, m.tensor([[0, 0]]), value=2.5, reduce=r),
                          np.ones((2, 3)))
        assert_close(got, want)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_linspace_logspace(dtype) -> None:
    for args, kw in [((0, 10, 4), {}), ((0.5, 10.7, 4), {}), ((-0.5, 3.9, 3), {}), ((2, -3, 6), {}),
                     ((0, 1, 1), {}), ((0, 1, 0), {})]:
        for fn in ("linspace", "logspace"):
            got = getattr(tl, fn)(*args, dtype=getattr(tl, dtype), **kw)
            want = getattr(torch, fn)(*args, dtype=getattr(torch, dtype), **kw)
            assert_close(got, want, rtol=1e-6)
    got = tl.logspace(start=0, end=3, steps=4, base=2.5, dtype=getattr(tl, dtype))
    assert_close(got, torch.logspace(start=0, end=3, steps=4, base=2.5, dtype=getattr(torch, dtype)), rtol=1e-6)
    assert_close(tl.logspace(-2, 2, 5), torch.logspace(-2, 2, 5), rtol=1e-6)
    assert_close(tl.linspace(tl.tensor(0.0), tl.tensor(1.0), 3), torch.linspace(torch.tensor(0.0),
                                                                               torch.tensor(1.0), 3))
    assert tl.logspace(0, 1, 3, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="non-negative"):
        tl.logspace(0, 1, -1)


def test_meshgrid() -> None:
    a, b = tl.arange(3.0), tl.arange(2.0)
    with pytest.warns(UserWarning, match="indexing argument"):
        x, y = tl.meshgrid(a, b)
    assert x.shape == y.shape == (3, 2)
    x, y = tl.meshgrid([a, b], indexing="xy")
    assert x.shape == (2, 3) and x.stride() == (0, 1)  # expanded views, as in torch
    tx, ty = torch.meshgrid(torch.arange(3.0), torch.arange(2.0), indexing="xy")
    assert_close(x, tx)
    assert_close(y, ty)
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij"'):
        tl.meshgrid(a, b, indexing="foo")
    with pytest.raises(RuntimeError, match="same dtype"):
        tl.meshgrid(a, b.long(), indexing="ij")
    with pytest.raises(RuntimeError, match="0D or 1D"):
        tl.meshgrid(a, tl.zeros(2, 2), indexing="ij")
    with pytest.raises(RuntimeError, match="non-empty"):
        tl.meshgrid(indexing="ij")


def test_nonzero_0d_and_where_one_argument() -> None:
    for v in (1.0, 0.0):
        got, want = _both(lambda m, x: (x.nonzero(), x.nonzero(as_tuple=True)), np.array(v))
        _same(got, want)
    got, want = _both(lambda m, x: m.where(x > 1), INTS)
    assert isinstance(got, tuple) and len(got) == 2
    _same(got, want)
    with pytest.raises(TypeError):
        tl.where(tl.tensor([True]), tl.tensor([1.0]))


def test_chunk_split_tensor_split_edges() -> None:
    for fn in (lambda m, x: x.chunk(2), lambda m, x: x.split(0), lambda m, x: x.chunk(4, 1)):
        got, want = _both(fn, np.zeros((0, 2)))
        assert [t.shape for t in got] == [tuple(t.shape) for t in want]
    got, want = _both(lambda m, x: x.chunk(4), np.zeros((6, 2)))
    assert [t.shape for t in got] == [tuple(t.shape) for t in want]
    for ios in (3, [1, 3], (1, 5, 2), [], 5):
        got, want = _both(lambda m, x, i=ios: x.tensor_split(i, dim=1), INTS)
        _same(got, want)
    got, want = _both(lambda m, x: m.tensor_split(x, m.tensor(2), 1), INTS)
    _same(got, want)


def test_repeat_interleave_forms() -> None:
    got, want = _both(lambda m, r: m.repeat_interleave(r), np.array([1, 2, 3]))
    assert_close(got, want)
    got, want = _both(lambda m, x: x.repeat_interleave(m.tensor(2), dim=1), INTS)
    assert_close(got, want)
    out = tl.tensor([1.0, 2.0]).repeat_interleave(1)
    assert out.storage is not tl.tensor([1.0]).storage and out.tolist() == [1.0, 2.0]


def test_unfold_is_a_view_and_its_gradient_sums_windows() -> None:
    x = tl.arange(10.0)
    u = x.unfold(0, 4, 2)
    t = torch.arange(10.0).unfold(0, 4, 2)
    assert u.shape == tuple(t.shape) and u.stride() == t.stride()
    assert u.storage is x.storage and u._version == x._version
    with tl.no_grad():
        x[4] = 100.0  # shows through both windows that hold it
    assert u[1, 2].item() == u[2, 0].item() == 100.0
    a = tl.arange(6.0, requires_grad=True)
    a.unfold(0, 3, 1).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0, 3.0, 3.0, 2.0, 1.0]


# ---- in-place spellings: results, version bumps, leaves ------------------------------------------------------
INPLACE = {
    "scatter_": lambda m, x: x.scatter_(1, m.tensor([[0], [2], [1]]), m.tensor([[9.0], [8.0], [7.0]])),
    "scatter_-value": lambda m, x: x.scatter_(0, m.tensor([[1, 0]]), value=-1.0),
    "scatter_add_": lambda m, x: x.scatter_add_(0, m.tensor([[2, 2, 2]]), m.ones(1, 3)),
    "scatter_reduce_": lambda m, x: x.scatter_reduce_(1, m.tensor([[0, 0], [1, 1], [2, 2]]), m.ones(3, 2) * 5,
                                                      "amax", include_self=False),
    "index_add_": lambda m, x: x.index_add_(0, m.tensor([0, 0]), m.ones(2, 3), alpha=3),
    "index_copy_": lambda m, x: x.index_copy_(1, m.tensor([2]), m.zeros(3, 1)),
    "index_fill_": lambda m, x: x.index_fill_(1, m.tensor([0, 2]), 4.0),
    "index_put_": lambda m, x: x.index_put_((m.tensor([1]), m.tensor([2])), m.tensor(-3.0)),
    "masked_fill_": lambda m, x: x.masked_fill_(x > 4, 0.0),
    "masked_scatter_": lambda m, x: x.masked_scatter_(x > 4, m.arange(10.0)),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_spellings(name) -> None:
    (a, b) = pair(np.arange(9.0).reshape(3, 3), dtype="float32")
    v = a._version
    got, want = INPLACE[name](tl, a), INPLACE[name](torch, b)
    assert got is a and want is b
    assert_close(a, b)
    assert a._version > v, "an in-place write bumps the version"
    leaf = tl.ones(3, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        INPLACE[name](tl, leaf)
    with tl.no_grad():
        INPLACE[name](tl, leaf)  # allowed outside autograd, as in torch


def test_inplace_on_a_view_writes_the_base() -> None:
    x = tl.zeros(3, 4)
    x[1].index_fill_(0, tl.tensor([0, 3]), 1.0)
    x[:, 2].scatter_(0, tl.tensor([2]), tl.tensor([5.0]))
    t = torch.zeros(3, 4)
    t[1].index_fill_(0, torch.tensor([0, 3]), 1.0)
    t[:, 2].scatter_(0, torch.tensor([2]), torch.tensor([5.0]))
    assert_close(x, t)


def test_inplace_saved_tensor_is_refused_in_backward() -> None:
    w = tl.ones(3, requires_grad=True)
    y = w * 2
    z = y * y  # saves y
    y.index_add_(0, tl.tensor([0]), tl.ones(1))
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.sum().backward()


# ---- fancy indexing: torch's rules ---------------------------------------------------------------------------
A = np.arange(120.0).reshape(2, 3, 4, 5)
READS = [
    lambda x: x[[0, 1], :, [1, 2]],
    lambda x: x[0, :, [1, 2]],
    lambda x: x[:, [0, 1], 0, [1, 2]],
    lambda x: x[[0, 1], None, [1, 2]],
    lambda x: x[None, [0, 1], [1, 2]],
    lambda x: x[..., [0, 1]],
    lambda x: x[[1], ..., [0, 1]],
    lambda x: x[True],
    lambda x: x[False],
    lambda x: x[:, True, [0, 1]],
    lambda x: x[range(2)],
    lambda x: x[(0, 1), 1:, range(0, 4, 2)],
    lambda x: x[[[0], [1]], [1, 2]],
    lambda x: x[:, [True, False, True]],
    lambda x: x[[True, False]],
    lambda x: x[[]],
    lambda x: x[:, []],
    lambda x: x[np.array([[0, 1], [1, 0]])],
    lambda x: x[np.int64(1), [2, 0]],
    lambda x: x[[0, 1.7]],
    lambda x: x[1, ..., None, [4, 0]],
]


@pytest.mark.parametrize("i", range(len(READS)))
def test_fancy_reads_match_torch(i) -> None:
    a, b = pair(A)
    assert_close(READS[i](a), READS[i](b))


def test_zero_d_int_tensor_index_is_a_view_as_in_torch() -> None:
    x = tl.arange(12.0).reshape(3, 4)
    v = x[tl.tensor(1)]
    assert v.storage is x.storage
    v += 100
    assert x[1, 0].item() == 104.0


def test_list_of_sequences_is_a_tuple_with_torchs_warning() -> None:
    a, b = pair(A)
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        got = a[[[0, 1], [1, 2]]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(got, b[[[0, 1], [1, 2]]])
        assert_close(a[[slice(None), 0]], b[[slice(None), 0]])


WRITES = [
    (lambda x: (0, slice(None), [1, 2]), np.arange(30.0).reshape(3, 2, 5)),
    (lambda x: ([0, 1], 0), 1.5),
    (lambda x: ([0, 1], slice(None), [1, 2]), np.arange(15.0).reshape(3, 5) * -1),
    (lambda x: (slice(None), [True, False, True]), 7.0),
    (lambda x: (True,), 2.0),
    (lambda x: ([0, 0, 1],), np.arange(60.0).reshape(3, 4, 5)),
    (lambda x: (range(2), 1, [3, 0]), np.array([[1.0], [2.0]])),
    (lambda x: (1, ..., [4, 0]), np.arange(24.0).reshape(3, 4, 2)),
]


@pytest.mark.parametrize("i", range(len(WRITES)))
def test_fancy_writes_match_torch(i) -> None:
    index, value = WRITES[i]
    a, b = pair(A)
    v = pair(value)[0] if isinstance(value, np.ndarray) else value
    w = torch.tensor(value) if isinstance(value, np.ndarray) else value
    ver = a._version
    a[index(a)] = v
    b[index(b)] = w
    assert_close(a, b)
    assert a._version == ver + 1


def test_fancy_write_with_grad_through_a_view() -> None:
    """``x[0, :, [1, 2]] = v`` writes through the view ``x[0]``: gradients reach both ``x`` and ``v``."""
    xs, vs = np.random.default_rng(0).standard_normal((2, 3, 4)), np.arange(6.0).reshape(3, 2)
    out = []
    for m in (tl, torch):
        x, v = m.tensor(xs, requires_grad=True), m.tensor(vs, requires_grad=True)
        y = x * 1
        y[0, :, [1, 2]] = v * v
        (y * y).sum().backward()
        out.append((y, x.grad, v.grad))
    for a, b in zip(*out):
        assert_close(a, b)
    leaf = tl.ones(2, 3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        leaf[0, :, [1, 2]] = 0.0


# ---- errors: torch's type, and a message that says what was wrong --------------------------------------------
X = np.arange(12.0).reshape(3, 4)
ERRORS = [
    (lambda m, x: x[[0, 1], [0, 1, 2]], "shape mismatch"),
    (lambda m, x: x[[5]], "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda m, x: x[:, [5]], "out of bounds"),
    (lambda m, x: x[[True, False]], "shape of the mask"),
    (lambda m, x: x[0, 0, 0], "too many indices"),
    (lambda m, x: x[m.tensor([0.5])], "tensors used as indices must be long"),
    (lambda m, x: x.roll((1, 2), 0), "shifts and dimensions must align"),
    (lambda m, x: m.tensor(1.0).roll(1, 0), "has no dimensions"),
    (lambda m, x: x.rot90(1, (0,)), "expected total rotation dims == 2"),
    (lambda m, x: x.rot90(1, (0, 0)), "expected rotation dims to be different"),
    (lambda m, x: x[0].rot90(), "expected total dims >= 2"),
    (lambda m, x: x.rot90(1, (0, 2)), "Dimension out of range"),
    (lambda m, x: x.repeat_interleave(-1), "non-negative"),
    (lambda m, x: x.repeat_interleave(m.tensor([1, -1, 2]), dim=0), "repeats can not be negative"),
    (lambda m, x: x.repeat_interleave(m.tensor([1, 2]), dim=0), "repeats must have the same size"),
    (lambda m, x: x.repeat_interleave(2, 0, output_size=5), "allocated size does not match"),
    (lambda m, x: x.unfold(1, 5, 1), "maximum size for tensor at dimension 1 is 4 but size is 5"),
    (lambda m, x: x.unfold(1, 2, 0), "step is 0 but must be > 0"),
    (lambda m, x: x.diff(n=-1), "order must be non-negative"),
    (lambda m, x: m.tensor(1.0).diff(), "at least one-dimensional"),
    (lambda m, x: x.diff(prepend=m.zeros(3)), "same dimension as input"),
    (lambda m, x: x.take(m.tensor([12])), "out of range: tried to access index 12 on a tensor of 12 elements"),
    (lambda m, x: x.take(m.tensor([1], dtype=m.int32)), "Expected a long tensor for index"),
    (lambda m, x: x.take_along_dim(m.tensor([[[0, 1]]]), 1), "same number of dimensions"),
    (lambda m, x: x.select(1, 4), "select\\(\\): index 4 out of range"),
    (lambda m, x: x.narrow(1, 3, 2), "exceeds dimension size"),
    (lambda m, x: x.narrow(1, 0, -1), "length must be non-negative"),
    (lambda m, x: x.tensor_split(0, dim=1), "number of sections must be larger than 0"),
    (lambda m, x: x.split(0, dim=1), "split_size can only be 0 if dimension size is 0"),
    (lambda m, x: x.masked_select(x), "expected BoolTensor for mask"),
    (lambda m, x: x.masked_scatter(m.tensor([1, 0, 1, 0]), x), "only supports boolean masks"),
    (lambda m, x: x.masked_scatter(x > 5, m.ones(3)), "Number of elements of source < number of ones in mask"),
    (lambda m, x: x.masked_scatter(x > 5, x.double()), "same dtypes"),
    (lambda m, x: m.zeros(3).masked_fill_(m.tensor([[True, False, True]]), 1.0), "doesn't match the broadcast"),
    (lambda m, x: x.scatter(0, m.tensor([[0, 5]]), 1.0), "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda m, x: x.scatter(0, m.tensor([[0.0]]), 1.0), "dtype int32/int64 for index|dtype int64 for index"),
    (lambda m, x: x.scatter(0, m.tensor([[0]]), m.ones(1, 1, dtype=m.float64)), "self.dtype to be equal to src"),
    (lambda m, x: x.scatter(0, m.tensor([0]), 1.0), "same number of dimensions as self"),
    (lambda m, x: x.scatter(0, m.tensor([[0]]), m.ones(1, 1, 1)), "same number of dimensions as src"),
    (lambda m, x: x.scatter(0, m.tensor([[0, 1, 1, 1, 1]]), 1.0), "to be no larger than self"),
    (lambda m, x: x.scatter(0, m.tensor([[0]]), x, reduce="sum"), "either add or multiply"),
    (lambda m, x: x.scatter_reduce(0, m.tensor([[0]]), x, "foo"), "must be either sum, prod, mean, amax or amin"),
    (lambda m, x: x.gather(0, m.tensor([[5]])), "index 5 is out of bounds"),
    (lambda m, x: x.index_add(0, m.tensor([0, 5]), m.ones(2, 4)), "index 5 is out of bounds"),
    (lambda m, x: x.index_add(0, m.tensor([0, 1]), m.ones(2, 3)), "source tensor shape must match self"),
    (lambda m, x: x.index_add(0, m.tensor([0, 1]), m.ones(2, 4, dtype=m.float64)), "same scalar type"),
    (lambda m, x: x.index_add(0, m.tensor([[1]]), m.ones(1, 4)), "Index is supposed to be a vector"),
    (lambda m, x: x.index_copy(1, m.tensor([0, 1]), m.ones(3, 3)), "Number of indices \\(2\\) should be equal"),
    (lambda m, x: x.index_copy(0, m.tensor([5]), m.ones(1, 4)), "index 5 is out of bounds"),
    (lambda m, x: x.index_copy(0, m.tensor([1]), m.ones(1, 4, dtype=m.float64)), "same dtype"),
    (lambda m, x: x.index_fill(1, m.tensor([0, 9]), -1), "index 9 is out of bounds"),
    (lambda m, x: x.index_fill(1, m.tensor([[0, 1]]), -1), "Index has to be a vector/scalar"),
    (lambda m, x: x.index_fill(1, m.tensor([0]), m.tensor([-1.0])), "only supports a 0-dimensional value"),
    (lambda m, x: x.index_put((m.tensor([5]),), m.ones(1)), "index 5 is out of bounds"),
    (lambda m, x: x.index_put((m.tensor([1]),), m.ones(1, dtype=m.float64)), "dtypes match"),
    (lambda m, x: x.index_put((None, m.tensor([0])), m.ones(1)), "expected Tensor as element 0"),
    (lambda m, x: x.index_put((m.tensor([1]),), 1.0), "must be Tensor"),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_like_torch(i) -> None:
    fn, match = ERRORS[i]
    a, b = pair(X, dtype="float32")
    with pytest.raises(Exception) as want:
        fn(torch, b)
    with pytest.raises(want.type, match=match):
        fn(tl, a)


def test_index_out_of_range_in_a_setitem_is_an_index_error() -> None:
    x = tl.zeros(3)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[[0, 5]] = 1.0
    with pytest.raises(RuntimeError, match="shape mismatch"):
        x[[0, 1]] = tl.ones(3)


# ---- gradients by finite differences (float64) ---------------------------------------------------------------
def _r(*shape, seed=0, kind="n"):
    rng = np.random.default_rng(seed + len(shape))
    a = rng.standard_normal(shape) if kind == "n" else rng.integers(-1, 2, shape).astype(np.float64)
    return tl.tensor(a, requires_grad=True)


GRADCHECK = {
    "roll": (lambda x: x.roll((1, -1), (0, 1)) * x, [(3, 4)]),
    "rot90": (lambda x: x.rot90(1) ** 2, [(2, 3)]),
    "unfold": (lambda x: x.unfold(1, 3, 2) ** 2, [(2, 7)]),
    "repeat_interleave": (lambda x: x.repeat_interleave(tl.tensor([2, 0, 1]), dim=0) ** 2, [(3, 2)]),
    "diff": (lambda x, p: x.diff(n=2, dim=0, prepend=p) ** 2, [(4, 3), (1, 3)]),
    "take_along_dim": (lambda x: x.take_along_dim(tl.tensor([[0], [2]]), 1) * x[:, :1], [(2, 3)]),
    "scatter": (lambda x, s: x.scatter(1, tl.tensor([[0, 2], [1, 0]]), s) ** 2, [(2, 3), (2, 2)]),
    "scatter_reduce-prod": (lambda x, s: x.scatter_reduce(0, tl.tensor([[0, 0, 1], [0, 1, 1]]), s, "prod"),
                            [(2, 3), (2, 3)]),
    "scatter_reduce-mean": (lambda x, s: x.scatter_reduce(0, tl.tensor([[0, 0, 1], [0, 1, 1]]), s, "mean",
                                                          include_self=False), [(2, 3), (2, 3)]),
    "scatter_reduce-amax": (lambda x, s: x.scatter_reduce(1, tl.tensor([[0, 0], [1, 0]]), s, "amax"),
                            [(2, 3), (2, 2)]),
    "index_add": (lambda x, s: x.index_add(1, tl.tensor([2, 2]), s, alpha=0.5) ** 2, [(2, 3), (2, 2)]),
    "index_put-acc": (lambda x, v: x.index_put((tl.tensor([0, 0]),), v, accumulate=True) ** 2, [(2, 3), (3,)]),
    "masked_scatter": (lambda x, s: x.masked_scatter(tl.tensor([True, False, True]), s) ** 2, [(2, 3), (5,)]),
    "fancy-mixed": (lambda x: x[0, :, [1, 2]] * x[[1, 0], :, 0].T, [(2, 3, 4)]),
}


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_gradcheck(name) -> None:
    fn, shapes = GRADCHECK[name]
    xs = [_r(*s, seed=i) for i, s in enumerate(shapes)]
    assert gradcheck(fn, xs)


# ---- where we differ from torch, on purpose ----------------------------------------------------------------
def test_scatter_with_reduce_has_a_gradient() -> None:
    """torch's ``scatter(..., reduce=)`` has no derivative (its backward raises); ours is scatter_reduce's."""
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.warns(UserWarning):
        y = x.scatter(0, tl.tensor([0, 0]), x[:2] * 1, reduce="multiply")
    y.sum().backward()
    assert x.grad.tolist() == [2 * 1 * 2, 1 * 1 + 1, 1.0]  # y = (x0 * x0 * x1, x1, x2)


def test_src_larger_than_index_gets_zero_gradient_outside_it() -> None:
    """torch's backward refuses (the gradient has the index's shape); ours pads it with zeros."""
    s = tl.ones(4, requires_grad=True)
    tl.zeros(3).scatter(0, tl.tensor([0, 1]), s).sum().backward()
    assert s.grad.tolist() == [1.0, 1.0, 0.0, 0.0]


# ---- other devices: the simulated one and CUDA (the emulator where no GPU is) ----------------------------------
@pytest.fixture(scope="module")
def cuda():
    from emu_driver import cuda_device

    yield from cuda_device()


def _device_program(dev) -> list:
    x = tl.arange(24.0, device=dev).reshape(2, 3, 4)
    ix = tl.tensor([[[0, 0, 1]] * 3] * 2, device=dev)
    out = [x.roll(1, 0), x.roll(-2), x.unfold(2, 2, 1).sum(-1), x[0, :, [1, 2]], x[[1, 0], 1:],
           x.scatter(2, ix, -x[..., :3]), x.scatter_reduce(2, ix, x[..., :3], "amax", include_self=False),
           x.index_add(1, tl.tensor([2, 2], device=dev), x[:, :2], alpha=2),
           x.repeat_interleave(tl.tensor([1, 2], device=dev), dim=0), x.masked_scatter(x > 10, x.flip(0)),
           x.take(tl.tensor([1, 5], device=dev)), x.masked_select(x > 20), tl.logspace(0, 1, 3, device=dev),
           x.rot90(1, (1, 2)), x.diff(dim=1), x.take_along_dim(tl.tensor([[[3]]], device=dev), 2)]
    y = x.clone()
    y[0, :, [1, 2]] = tl.ones(3, 2, device=dev)
    y.index_fill_(2, tl.tensor([0], device=dev), -1.0)
    y.index_put_((tl.tensor([1], device=dev),), tl.tensor(5.0, device=dev), accumulate=True)
    out.append(y)
    w = tl.ones(2, 3, 4, device=dev, requires_grad=True)
    ((w * x).unfold(2, 3, 1) ** 2).sum().backward()
    out.append(w.grad)
    return [o.cpu().numpy() for o in out]


@pytest.mark.parametrize("device", ["sim", "cuda"])
def test_the_family_on_other_devices(device, request) -> None:
    dev = request.getfixturevalue("cuda") if device == "cuda" else tl.device("sim")
    for got, want in zip(_device_program(dev), _device_program("cpu")):
        np.testing.assert_array_equal(got, want)


def test_cat_skips_legacy_empty_pieces_wherever_they_are():
    """torch skips 1-D empty pieces in cat; a leading one raised an IndexError here (found by review)."""
    for first in (True, False):
        outs = []
        for lib in (tl, torch):
            e = lib.zeros(0, requires_grad=True)
            b = lib.arange(6.0).reshape(2, 3).requires_grad_()
            r = lib.cat([e, b, lib.zeros(0)] if first else [b, e], 1)
            (r * lib.arange(r.numel()).reshape(r.shape)).sum().backward()
            outs.append((r.detach().numpy(), e.grad.numpy(), b.grad.numpy()))
        for a, c in zip(*outs):
            np.testing.assert_array_equal(a, c)
    with pytest.raises(RuntimeError, match="tensor 1 has shape"):
        tl.cat([tl.zeros(0), tl.ones(2, 3), tl.ones(3, 3)], 1)
