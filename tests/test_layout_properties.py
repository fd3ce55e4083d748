"""Property tests of the view algebra (``tinygrad_like.layout``) against NumPy and PyTorch.

A random chain of view ops (permute, transpose, expand, squeeze, unsqueeze, basic indexing, view)
is applied both to a :class:`Layout` over ``np.arange(n)`` and to the NumPy array itself. The Layout
is materialised with ``as_strided`` (element strides times itemsize, plus the offset) and must hold
exactly NumPy's elements. ``Layout.view`` must refuse (return ``None``) exactly where PyTorch's
``Tensor.view`` raises. The same chains then run through real tensors, which must keep sharing the
base tensor's storage.
"""

from __future__ import annotations

from math import prod

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_like as tl
from tinygrad_like.layout import Layout

torch = pytest.importorskip("torch")

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


# ---- helpers ------------------------------------------------------------------------------------
def materialize(base: np.ndarray, lay: Layout) -> np.ndarray:
    """The elements ``lay`` describes over the flat array ``base`` (a copy, for comparisons)."""
    isz = base.itemsize
    if lay.numel:
        lo, hi = lay.span()
        assert 0 <= lo and hi <= base.size, f"{lay} reads outside a storage of {base.size} elements"
        assert all(s >= 0 for s in lay.strides), f"negative stride in {lay}"
    start = base[lay.offset:] if lay.offset <= base.size else base[:0]
    return np.lib.stride_tricks.as_strided(start, shape=lay.shape,
                                           strides=tuple(s * isz for s in lay.strides)).copy()


def torch_view_ok(lay: Layout, n: int, new_shape: tuple) -> bool:
    """PyTorch's oracle: does ``view(new_shape)`` of this strided layout work without a copy?"""
    src = torch.as_strided(torch.arange(max(n, 1)), lay.shape, lay.strides, lay.offset if lay.numel else 0)
    try:
        src.view(new_shape)
    except RuntimeError:
        return False
    return True


def torch_view_strides(lay: Layout, n: int, new_shape: tuple) -> tuple:
    src = torch.as_strided(torch.arange(max(n, 1)), lay.shape, lay.strides, lay.offset if lay.numel else 0)
    return src.view(new_shape).stride()


def factorizations(numel: int, ndim: int) -> st.SearchStrategy:
    """Shapes with ``ndim`` dims whose product is ``numel`` (size-1 and, for numel 0, size-0 dims)."""
    if ndim == 0:
        return st.just(()) if numel == 1 else st.nothing()
    if numel == 0:
        return st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim).filter(lambda s: 0 in s).map(tuple)
    divisors = [d for d in range(1, numel + 1) if numel % d == 0]

    @st.composite
    def build(draw):
        rest, out = numel, []
        for _ in range(ndim - 1):
            d = draw(st.sampled_from([d for d in divisors if rest % d == 0]))
            out.append(d)
            rest //= d
        out.append(rest)
        return tuple(draw(st.permutations(out)))

    return build()


@st.composite
def basic_index(draw, shape: tuple):
    """A tuple of ints / positive-step slices / None / at most one Ellipsis valid for ``shape``."""
    nd = len(shape)
    n_real = draw(st.integers(0, nd))
    items: list = []
    for d in range(n_real):
        n = shape[d]
        kinds = ["slice"] + (["int"] if n > 0 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        else:
            bound = st.none() | st.integers(-n - 2, n + 2)
            items.append(slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3))))
    for _ in range(draw(st.integers(0, 2))):  # None inserts a size-1 dim anywhere
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        # With an Ellipsis the real indices after it address the trailing dims, so pick them
        # again for those dims: [i0, ..., i_k, Ellipsis, j_(nd-m), ..., j_(nd-1)].
        pos = draw(st.integers(0, n_real))
        tail = n_real - pos
        head = [i for i in items if i is not None][:pos]
        tail_items = []
        for d in range(nd - tail, nd):
            n = shape[d]
            if n > 0 and draw(st.booleans()):
                tail_items.append(draw(st.integers(-n, n - 1)))
            else:
                tail_items.append(slice(draw(st.none() | st.integers(-n - 2, n + 2)), None,
                                        draw(st.none() | st.integers(1, 3))))
        items = head + [Ellipsis] + tail_items
        if draw(st.booleans()):
            items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


@st.composite
def view_op(draw, shape: tuple):
    """One random view op that is valid for ``shape``: (name, argument)."""
    nd = len(shape)
    names = ["permute", "expand", "squeeze", "unsqueeze", "getitem", "view"]
    if nd:
        names.append("transpose")
    name = draw(st.sampled_from(names))
    if name == "permute":
        return name, tuple(draw(st.permutations(range(nd))))
    if name == "transpose":
        return name, (draw(st.integers(-nd, nd - 1)), draw(st.integers(-nd, nd - 1)))
    if name == "expand":
        lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        body = tuple(draw(st.integers(0, 3)) if n == 1 else draw(st.sampled_from([n, -1])) for n in shape)
        return name, lead + body
    if name == "squeeze":
        return name, draw(st.none() | st.integers(-nd, nd - 1)) if nd else None
    if name == "unsqueeze":
        return name, draw(st.integers(-nd - 1, nd))
    if name == "getitem":
        return name, draw(basic_index(shape))
    numel = prod(shape)
    ndim = draw(st.integers(0 if numel == 1 else 1, 4))
    new = draw(factorizations(numel, ndim))
    if new and numel and draw(st.booleans()):  # spell one dim as -1
        i = draw(st.integers(0, len(new) - 1))
        new = new[:i] + (-1,) + new[i + 1:]
    return name, new


def numpy_apply(arr: np.ndarray, name: str, arg) -> np.ndarray:
    """NumPy's result for one op, with PyTorch's semantics where they differ."""
    if name == "permute":
        return arr.transpose(arg)
    if name == "transpose":
        return np.swapaxes(arr, *arg)
    if name == "expand":
        lead = len(arg) - arr.ndim
        target = tuple(arr.shape[i - lead] if (n == -1 and i >= lead) else n for i, n in enumerate(arg))
        return np.broadcast_to(arr, target)
    if name == "squeeze":  # torch ignores a dim whose size is not 1 (NumPy would raise)
        if arg is None:
            return arr.squeeze()
        return arr.squeeze(arg) if arr.shape[arg] == 1 else arr
    if name == "unsqueeze":
        return np.expand_dims(arr, arg)
    if name == "getitem":
        return arr[arg]
    if name == "view":
        return arr.reshape(arg)
    raise AssertionError(name)


def layout_apply(lay: Layout, name: str, arg):
    if name == "permute":
        return lay.permute(arg)
    if name == "transpose":
        return lay.transpose(*arg)
    if name == "expand":
        return lay.expand(arg)
    if name == "squeeze":
        return lay.squeeze(arg)
    if name == "unsqueeze":
        return lay.unsqueeze(arg)
    if name == "getitem":
        return lay.getitem(arg)
    if name == "view":
        return lay.view(arg)
    raise AssertionError(name)


def tensor_apply(t, name: str, arg):
    if name == "permute":
        return t.permute(arg)
    if name == "transpose":
        return t.transpose(*arg)
    if name == "expand":
        return t.expand(*arg)
    if name == "squeeze":
        return t.squeeze() if arg is None else t.squeeze(arg)
    if name == "unsqueeze":
        return t.unsqueeze(arg)
    if name == "getitem":
        return t[arg]
    if name == "view":
        return t.view(*arg)
    raise AssertionError(name)


def expected_view_ok(lay: Layout, n: int, arg) -> bool:
    from tinygrad_like.layout import infer_shape
    return torch_view_ok(lay, n, infer_shape(arg, lay.numel))


# ---- the view algebra against NumPy --------------------------------------------------------------
@SETTINGS
@given(shape=shapes, data=st.data())
def test_layout_chains_match_numpy(shape, data):
    n = prod(shape)
    base = np.arange(n, dtype=np.int64)
    arr = base.reshape(shape)
    lay = Layout.contiguous(shape)
    np.testing.assert_array_equal(materialize(base, lay), arr)
    for _ in range(data.draw(st.integers(1, 6), label="chain length")):
        name, arg = data.draw(view_op(lay.shape), label="op")
        if name == "view" and not expected_view_ok(lay, n, arg):
            assert lay.view(arg) is None, f"view{arg} of {lay} should need a copy (torch refuses)"
            break
        new = layout_apply(lay, name, arg)
        assert new is not None, f"{name}{arg} of {lay} returned None but torch can view it"
        arr = numpy_apply(arr, name, arg)
        lay = new
        assert lay.shape == arr.shape, f"after {name}{arg}: shape {lay.shape} != NumPy's {arr.shape}"
        np.testing.assert_array_equal(materialize(base, lay), arr, err_msg=f"after {name}{arg}: {lay}")


@SETTINGS
@given(shape=nonempty_shapes, data=st.data())
def test_view_returns_none_exactly_when_torch_refuses(shape, data):
    """Start from a non-contiguous layout (permuted, sliced with steps), then ask for a view."""
    n = prod(shape)
    base = np.arange(n, dtype=np.int64)
    lay = Layout.contiguous(shape)
    arr = base.reshape(shape)
    for name in ("permute", "getitem", "unsqueeze"):
        if data.draw(st.booleans(), label=f"apply {name}"):
            _, arg = data.draw(view_op(lay.shape).filter(lambda o, k=name: o[0] == k), label=name)
            lay, arr = layout_apply(lay, name, arg), numpy_apply(arr, name, arg)
    ndim = data.draw(st.integers(0 if lay.numel == 1 else 1, 4), label="ndim")
    new_shape = data.draw(factorizations(lay.numel, ndim), label="new shape")
    got = lay.view(new_shape)
    ok = torch_view_ok(lay, n, new_shape)
    assert (got is not None) == ok, f"Layout.view({new_shape}) of {lay}: got {got}, torch view ok: {ok}"
    if got is not None:
        np.testing.assert_array_equal(materialize(base, got), arr.reshape(new_shape))
        if got.numel > 1:  # strides of size-1 dims are arbitrary; the others must be torch's
            want = torch_view_strides(lay, n, new_shape)
            for size, s, w in zip(new_shape, got.strides, want):
                if size > 1:
                    assert s == w, f"view{new_shape} of {lay}: strides {got.strides}, torch {want}"


@pytest.mark.parametrize("shape,strides,new_shape,ok", [
    ((2, 3), (3, 1), (3, 2), True),
    ((3, 2), (1, 3), (6,), False),  # a transpose cannot be flattened
    ((3, 2), (1, 3), (3, 2, 1), True),
    ((2, 3, 4), (12, 1, 3), (2, 12), False),
    ((2, 3, 4), (12, 1, 3), (6, 4), False),
    ((2, 3, 4), (24, 4, 1), (6, 4), False),  # a step on dim 0: dims 0 and 1 cannot merge
    ((2, 3, 4), (24, 4, 1), (2, 12), True),  # ... but the inner block stays contiguous
    ((2, 3, 4), (24, 4, 1), (24,), False),
    ((4, 1, 3), (1, 99, 4), (4, 3), True),  # size-1 dims may carry any stride
    ((2, 0, 3), (5, 7, 11), (3, 0), True),  # zero elements: always viewable
])
def test_view_known_cases(shape, strides, new_shape, ok):
    lay = Layout(shape, strides, 0)
    assert torch_view_ok(lay, 64, new_shape) == ok  # the table itself agrees with torch
    assert (lay.view(new_shape) is not None) == ok


def test_layout_errors_are_pytorch_like():
    lay = Layout.contiguous((2, 3))
    with pytest.raises(RuntimeError, match="permutation"):
        lay.permute((0, 0))
    with pytest.raises(IndexError, match="out of range"):
        lay.transpose(0, 2)
    with pytest.raises(RuntimeError, match="must match the existing size"):
        lay.expand((4, 3, 4))
    with pytest.raises(IndexError, match="out of bounds"):
        lay.getitem((2,))
    with pytest.raises(IndexError, match="too many indices"):
        lay.getitem((0, 0, 0))
    with pytest.raises(ValueError, match="step must be greater than zero"):
        lay.getitem((slice(None, None, -1),))
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        lay.view((4, 2))


# ---- broadcasting ----------------------------------------------------------------------------------
@SETTINGS
@given(st.lists(st.lists(st.integers(0, 3), max_size=4).map(tuple), min_size=0, max_size=4))
def test_broadcast_shapes_matches_numpy(shape_list):
    try:
        want = np.broadcast_shapes(*shape_list)
    except ValueError:
        with pytest.raises(ValueError, match="cannot be broadcast"):
            tl.broadcast_shapes(*shape_list)
        return
    assert tl.broadcast_shapes(*shape_list) == want


def test_broadcast_shapes_error_names_shapes_and_dim():
    with pytest.raises(ValueError) as e:
        tl.broadcast_shapes((2, 3), (4, 3))
    msg = str(e.value)
    assert "(2, 3)" in msg and "(4, 3)" in msg and "dim -2" in msg


@SETTINGS
@given(a=shapes, b=shapes)
def test_tensor_broadcasting_matches_numpy(a, b):
    x, y = np.arange(prod(a)).reshape(a), np.arange(prod(b)).reshape(b) * 10
    try:
        want = x + y
    except ValueError:
        with pytest.raises(RuntimeError, match="broadcast"):
            tl.tensor(x) + tl.tensor(y)
        return
    np.testing.assert_array_equal((tl.tensor(x) + tl.tensor(y)).numpy(), want)


# ---- the same chains through real tensors -------------------------------------------------------
@SETTINGS
@given(shape=shapes, data=st.data())
def test_tensor_view_chains_share_storage(shape, data):
    n = prod(shape)
    base = tl.arange(n)
    t = base.reshape(shape)
    arr = np.arange(n).reshape(shape)
    assert t.storage is base.storage
    for _ in range(data.draw(st.integers(1, 5), label="chain length")):
        name, arg = data.draw(view_op(tuple(t.shape)), label="op")
        if name == "view" and not expected_view_ok(t.layout, n, arg):
            with pytest.raises(RuntimeError, match="view size is not compatible"):
                t.view(*arg)
            break
        t = tensor_apply(t, name, arg)
        arr = numpy_apply(arr, name, arg)
        assert tuple(t.shape) == arr.shape, f"after {name}{arg}"
        assert t.storage is base.storage, f"{name}{arg} copied instead of viewing"
        np.testing.assert_array_equal(t.numpy(), arr, err_msg=f"after {name}{arg}")
        assert t.layout == t.layout  # layouts compare by value
        np.testing.assert_array_equal(materialize(base.numpy(), t.layout), arr)


def test_write_through_a_view_is_seen_by_the_base():
    base = tl.zeros(3, 4)
    v = base.T[1:, ::2]
    v.fill_(7.0)
    want = np.zeros((3, 4), np.float32)
    want.T[1:, ::2] = 7.0
    np.testing.assert_array_equal(base.numpy(), want)
    assert base._version == v._version == 1


def test_reshape_copies_only_when_it_must():
    t = tl.arange(6).reshape(2, 3)
    assert t.T.reshape(6).storage is not t.storage  # needs a copy
    assert t.reshape(3, 2).storage is t.storage
    np.testing.assert_array_equal(t.T.reshape(6).numpy(), np.arange(6).reshape(2, 3).T.reshape(6))
