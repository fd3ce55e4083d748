"""torch's shaping, factory, dtype, predicate and settings names that tinygrad_like gained from the census,
checked against real torch (values, gradients, errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_like as tl

torch = pytest.importorskip("torch")


def _same(ours, theirs, rtol=1e-6, atol=1e-7):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t, rtol, atol)
        return
    np.testing.assert_allclose(np.asarray(ours.detach().numpy(), dtype=np.float64),
                               theirs.detach().numpy().astype(np.float64), rtol=rtol, atol=atol)
    assert tuple(ours.shape) == tuple(theirs.shape)


def _pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


# ---- shaping ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [((2, 2), (1, 2), 1), ((3, 2), (2, 1), 0), ((2, 3), (0, 1), 2), ((4,), (3,), None)])
def test_as_strided_values_and_grad(args):
    x, tx = _pair(3, 4)
    y, ty = x.as_strided(*args), tx.as_strided(*args)
    _same(y, ty)
    w = np.arange(1, y.numel() + 1, dtype=np.float32).reshape(tuple(ty.shape))
    (y * tl.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    _same(x.grad, tx.grad)


def test_as_strided_out_of_bounds_is_refused():
    with pytest.raises(RuntimeError, match="out of bounds"):
        tl.zeros(4).as_strided((3,), (2,))
    with pytest.raises(RuntimeError):
        torch.zeros(4).as_strided((3,), (2,))


@pytest.mark.parametrize("name,args", [("hsplit", (2,)), ("vsplit", ([1],)), ("dsplit", (2,)),
                                       ("split_with_sizes", ([1, 2],)), ("unsafe_split", (2,)),
                                       ("unsafe_chunk", (2,)), ("unsafe_split_with_sizes", ([2, 1],))])
def test_splits(name, args):
    x, tx = _pair(3, 4, 2)
    _same(getattr(tl, name)(x, *args), getattr(torch, name)(tx, *args))
    _same(getattr(x, name)(*args), getattr(tx, name)(*args))


def test_split_errors_match_torch():
    for f in (lambda m: m.hsplit(3), lambda m: m.vsplit(2), lambda m: m.split_with_sizes([1, 1])):
        with pytest.raises(RuntimeError):
            f(torch.zeros(3, 4))
        with pytest.raises(RuntimeError):
            f(tl.zeros(3, 4))


@pytest.mark.parametrize("name,args", [
    ("permute_copy", ((1, 0, 2),)), ("t_copy", ()), ("transpose_copy", (0, 2)), ("squeeze_copy", ()),
    ("unsqueeze_copy", (1,)), ("select_copy", (1, 2)), ("slice_copy", (1, 1, 3)), ("diagonal_copy", ()),
    ("expand_copy", ((2, 3, 4, 2),)), ("view_copy", ((6, 4),)), ("unbind_copy", (0,)), ("split_copy", (2, 1)),
    ("split_with_sizes_copy", ([1, 3], 1)), ("unfold_copy", (1, 2, 1)), ("alias_copy", ()), ("detach_copy", ()),
    ("as_strided_copy", ((2, 2), (1, 2))), ("narrow_copy", (1, 1, 2)), ("ravel", ())])
def test_copy_variants(name, args):
    x, tx = _pair(3, 4, 2) if name not in ("t_copy",) else _pair(3, 4)
    ours, theirs = getattr(tl, name)(x, *args), getattr(torch, name)(tx, *args)
    _same(ours, theirs)
    if name.endswith("_copy") and name != "detach_copy":
        first = ours[0] if isinstance(ours, tuple) else ours
        assert first.storage is not x.storage


@pytest.mark.parametrize("op,args", [("transpose_", (0, 1)), ("swapaxes_", (0, 1)), ("swapdims_", (1, 0)),
                                     ("t_", ()), ("squeeze_", ()), ("unsqueeze_", (0,))])
def test_inplace_views_and_grad(op, args):
    x, tx = _pair(3, 1) if op == "squeeze_" else _pair(3, 2)
    y, ty = x * 2, tx * 2
    assert getattr(y, op)(*args) is y
    getattr(ty, op)(*args)
    _same(y, ty)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    _same(x.grad, tx.grad)
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(tl.zeros(2, 2, requires_grad=True), op if op != "squeeze_" else "t_")(*((0, 1) if op in (
            "transpose_", "swapaxes_", "swapdims_") else (0,) if op == "unsqueeze_" else ()))


def test_tril_triu_cumsum_cumprod_inplace():
    for op, args in [("tril_", (0,)), ("triu_", (1,)), ("cumsum_", (1,)), ("cumprod_", (0,))]:
        x, tx = _pair(3, 3)
        y, ty = x * 1, tx * 1
        getattr(y, op)(*args)
        getattr(ty, op)(*args)
        _same(y, ty, rtol=1e-5)
        y.sum().backward()
        ty.sum().backward()
        _same(x.grad, tx.grad, rtol=1e-5)


def test_sum_to_size():
    x, tx = _pair(2, 3, 4)
    for size in [(1, 4), (3, 1), (4,), (2, 1, 4), (1, 1, 1)]:
        _same(x.sum_to_size(*size), tx.sum_to_size(*size), rtol=1e-5)
    with pytest.raises(RuntimeError, match="expandable"):
        x.sum_to_size(5)


def test_scatter_forms():
    x, tx = _pair(3, 4)
    s, ts = _pair(4, seed=1)
    _same(tl.select_scatter(x, s, 0, 1), torch.select_scatter(tx, ts, 0, 1))
    s2, ts2 = _pair(3, 2, seed=2)
    _same(tl.slice_scatter(x, s2, 1, 0, 4, 2), torch.slice_scatter(tx, ts2, 1, 0, 4, 2))
    s3, ts3 = _pair(2, 2, seed=3)
    out, tout = tl.as_strided_scatter(x, s3, (2, 2), (1, 2), 1), torch.as_strided_scatter(tx, ts3, (2, 2), (1, 2), 1)
    _same(out, tout)
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    (out * tl.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    # torch 2.13's gradient for ``input`` here is not the derivative (it keeps w at positions 0..4 and zeroes the
    # rest); ours is: w, except where src overwrote (storage positions 1, 2, 3, 4)
    expected = w.reshape(-1).copy()
    expected[[1, 2, 3, 4]] = 0
    np.testing.assert_array_equal(x.grad.numpy().reshape(-1), expected)
    _same(s3.grad, ts3.grad)


def test_put_and_index_put_():
    x, tx = tl.zeros(2, 3), torch.zeros(2, 3)
    idx, tidx = tl.tensor([0, -1, 3]), torch.tensor([0, -1, 3])
    src, tsrc = tl.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0])
    _same(x.put(idx, src), tx.put(tidx, tsrc))
    _same(tl.put(x, tl.tensor([1, 1]), tl.tensor([1.0, 2.0]), True), torch.put(tx, torch.tensor([1, 1]),
                                                                             torch.tensor([1.0, 2.0]), True))
    x.put_(idx, src)
    tx.put_(tidx, tsrc)
    _same(x, tx)
    tl.index_put_(x, (tl.tensor([1]),), tl.tensor([9.0]))
    torch.index_put_(tx, (torch.tensor([1]),), torch.tensor([9.0]))
    _same(x, tx)
    with pytest.raises(IndexError):
        x.put(tl.tensor([6]), tl.tensor([1.0]))


def test_resize_new_set():
    x, tx = tl.arange(6.0), torch.arange(6.0)
    x.resize_(2, 2)
    tx.resize_(2, 2)
    _same(x, tx)
    x.resize_(2, 3)
    tx.resize_(2, 3)
    _same(x, tx)
    y = tl.zeros(1)
    y.resize_as_(tl.zeros(3, 3))
    assert y.shape == (3, 3)
    with pytest.raises(RuntimeError, match="resize"):
        tl.zeros(2, requires_grad=True).resize_(4)
    a, ta = tl.ones(2, 3), torch.ones(2, 3)
    assert a.new(4, 2).shape == ta.new(4, 2).shape and a.new().shape == ta.new().shape
    _same(a.new([1.0, 2.0]), ta.new([1.0, 2.0]))
    b = tl.zeros(1)
    b.set_(a)
    assert b.is_set_to(a) and b.shape == (2, 3)
    assert a.new_empty_strided((2, 3), (1, 2)).stride() == ta.new_empty_strided((2, 3), (1, 2)).stride()


# ---- factories ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
                                  "kaiser_window"])
@pytest.mark.parametrize("n,periodic", [(0, True), (1, True), (5, True), (8, False), (7, False)])
def test_windows(name, n, periodic):
    _same(getattr(tl, name)(n, periodic), getattr(torch, name)(n, periodic), rtol=1e-5, atol=1e-6)
    _same(getattr(tl, name)(n, periodic, dtype=tl.float64), getattr(torch, name)(n, periodic, dtype=torch.float64),
          rtol=1e-12, atol=1e-12)


def test_simple_factories():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(tl.range(1, 4), torch.range(1, 4))
        _same(tl.range(0, 1, 0.25), torch.range(0, 1, 0.25))
    _same(tl.scalar_tensor(3), torch.scalar_tensor(3))
    assert tl.scalar_tensor(3).dtype is tl.float32
    base = tl.ones(2)
    alias = tl.asarray(base, requires_grad=True)
    assert alias.requires_grad and not base.requires_grad and alias.storage is base.storage
    a = np.arange(4.0)
    t = tl.asarray(a)
    a[0] = 7
    assert t[0].item() == 7  # shares the array's memory, as torch.asarray does
    _same(tl.asarray([1, 2]), torch.asarray([1, 2]))
    assert tl.asarray([1, 2]).dtype is tl.int64
    buf = bytearray(np.arange(4, dtype=np.float32).tobytes())
    _same(tl.frombuffer(buf, dtype=tl.float32, count=2, offset=4),
          torch.frombuffer(bytearray(buf), dtype=torch.float32, count=2, offset=4))
    for size, stride in [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((0, 2), (2, 1))]:
        assert tl.empty_strided(size, stride).stride() == torch.empty_strided(size, stride).stride()
    assert tl.empty_permuted((2, 3, 4), (0, 2, 1)).stride() == torch.empty_permuted((2, 3, 4), (0, 2, 1)).stride()


def test_from_file(tmp_path):
    p = tmp_path / "f.bin"
    np.arange(5, dtype=np.float32).tofile(p)
    _same(tl.from_file(str(p), size=5, dtype=tl.float32), torch.from_file(str(p), size=5, dtype=torch.float32))


def test_combinatorics():
    v, tv = tl.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    for n, inc in [(None, False), (4, True), (2, False)]:
        _same(tl.vander(v, n, inc), torch.vander(tv, n, inc))
    _same(tl.cartesian_prod(v, tl.tensor([4, 5])), torch.cartesian_prod(tv, torch.tensor([4, 5])))
    for r, rep in [(2, False), (2, True), (3, False), (4, False)]:
        _same(tl.combinations(v, r, rep), torch.combinations(tv, r, rep))
    _same(tl.block_diag(tl.ones(1, 2), tl.tensor(3.0), tl.tensor([4.0, 5.0])),
          torch.block_diag(torch.ones(1, 2), torch.tensor(3.0), torch.tensor([4.0, 5.0])))
    _same(tl.unravel_index(tl.tensor([5, 0, -1, 7]), (2, 4)), torch.unravel_index(torch.tensor([5, 0, -1, 7]), (2, 4)))


def test_fill_functions():
    x, tx = tl.ones(2, 2), torch.ones(2, 2)
    _same(tl.fill(x, 3.0), torch.fill(tx, 3.0))
    tl.fill_(x, 2.0)
    torch.fill_(tx, 2.0)
    _same(x, tx)
    tl.zero_(x)
    torch.zero_(tx)
    _same(x, tx)


# ---- dtypes -------------------------------------------------------------------------------------------------------
_DT = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("a", _DT)
@pytest.mark.parametrize("b", _DT)
def test_promote_types_and_can_cast(a, b):
    assert tl.promote_types(getattr(tl, a), getattr(tl, b)).name == str(
        torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[1]
    assert tl.can_cast(getattr(tl, a), getattr(tl, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo(name):
    ours, theirs = tl.finfo(getattr(tl, name)), torch.finfo(getattr(torch, name))
    for attr in ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]:
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    with pytest.raises(TypeError):
        tl.iinfo(getattr(tl, name))


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    ours, theirs = tl.iinfo(getattr(tl, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (theirs.bits, theirs.min, theirs.max, theirs.dtype)
    with pytest.raises(TypeError):
        tl.finfo(getattr(tl, name))


def test_result_type_typename_and_dtype_class():
    assert tl.result_type(tl.zeros(2, dtype=tl.int32), 2.5) is tl.float32
    assert tl.result_type(2, 3) is tl.int64
    assert tl.typename(tl.zeros(2)) == torch.typename(torch.zeros(2)) == "torch.FloatTensor"
    assert tl.typename(3) == torch.typename(3)
    assert isinstance(tl.float32, tl.dtype) and isinstance(tl.complex64, tl.dtype) and not isinstance(3, tl.dtype)
    assert tl.float32.to_complex() is tl.complex64 and tl.complex128.to_real() is tl.float64
    assert not tl.float32.is_complex


# ---- real tensors asked complex questions -------------------------------------------------------------------------
def test_complex_helpers_on_real_tensors():
    a = np.array([-1.5, 0.0, 2.0, np.nan], dtype=np.float32)
    x, tx = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = tl.angle(x), torch.angle(tx)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-6)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert tl.angle(tl.tensor([-2, 3])).dtype is tl.float32
    for name in ["real", "conj", "conj_physical", "resolve_conj", "resolve_neg"]:
        _same(getattr(tl, name)(x), getattr(torch, name)(tx))
    assert tl.isreal(x).all().item() and tl.isreal(x).dtype is tl.bool
    assert x.real is x
    with pytest.raises(RuntimeError, match="imag"):
        tl.imag(x)
    with pytest.raises(RuntimeError):
        torch.imag(tx)
    with pytest.raises(RuntimeError, match="complex"):
        tl.view_as_real(x)
    assert not x.is_conj() and not x.is_neg() and not tl.is_conj(x)


# ---- Tensor predicates and properties ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["is_cpu", "is_meta", "is_mps", "is_xpu", "is_xla", "is_ipu", "is_maia", "is_mtia",
                                  "is_vulkan", "is_mkldnn", "is_sparse", "is_sparse_csr", "is_quantized", "is_nested",
                                  "name", "output_nr", "itemsize"])
def test_properties_match_torch(name):
    assert getattr(tl.zeros(2, 3), name) == getattr(torch.zeros(2, 3), name)


def test_predicates_and_methods():
    x, tx = tl.zeros(2, 3), torch.zeros(2, 3)
    for name in ["is_pinned", "is_shared", "is_distributed", "is_signed", "is_inference", "get_device", "dim_order"]:
        assert getattr(x, name)() == getattr(tx, name)(), name
    assert x.t().dim_order() == tx.t().dim_order() == (1, 0)
    assert tl.is_nonzero(tl.tensor([2.0])) and not tl.is_nonzero(tl.tensor([0.0]))
    with pytest.raises(RuntimeError, match="more than one"):
        x.is_nonzero()
    assert tl.is_same_size(x, tl.ones(2, 3)) and not x.is_same_size(tl.ones(3, 2))
    assert not tl.tensor([True]).is_signed() and not tl.tensor([1], dtype=tl.uint8).is_signed()
    assert x.share_memory_().is_shared()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch's TypedStorage deprecation)
        for dt in ("float32", "int64", "bool", "bfloat16"):
            assert (tl.zeros(1, dtype=getattr(tl, dt)).storage_type().__name__ ==
                    torch.zeros(1, dtype=getattr(torch, dt)).storage_type().__name__)
    assert x.data_ptr() == x.const_data_ptr() and x[1].data_ptr() == x.data_ptr() + 3 * 4
    with pytest.raises(RuntimeError, match="sparse"):
        x.is_coalesced()
    for name in ["xpu", "ipu", "mtia"]:
        with pytest.raises(RuntimeError):
            getattr(x, name)()
    m, tm = _pair(2, 3)
    _same(m.H, tm.H)
    _same(m.mH, tm.mH)
    _same(m.adjoint(), tm.adjoint())
    _same(tl.adjoint(m), torch.adjoint(tm))
    with pytest.raises(RuntimeError, match="matrices"):
        _ = tl.zeros(2, 2, 2).H
    p = tl.zeros(2)
    assert p.module_load(tl.ones(2)) is not None and p.tolist() == [1.0, 1.0]

    class Sub(tl.Tensor):
        pass

    s = m.as_subclass(Sub)
    assert type(s) is Sub and s.grad_fn is m.grad_fn and s.requires_grad


# ---- settings -----------------------------------------------------------------------------------------------------
def test_threads_round_trip():
    before = tl.get_num_threads()
    try:
        tl.set_num_threads(1)
        assert tl.get_num_threads() == 1
    finally:
        tl.set_num_threads(before)
    with pytest.raises(RuntimeError):
        tl.set_num_threads(0)
    assert tl.get_num_interop_threads() >= 1
    tl.init_num_threads()


def test_determinism_and_precision_flags():
    try:
        tl.use_deterministic_algorithms(True, warn_only=True)
        assert tl.are_deterministic_algorithms_enabled() and tl.is_deterministic_algorithms_warn_only_enabled()
        assert tl.get_deterministic_debug_mode() == 1
        tl.set_deterministic_debug_mode("error")
        assert tl.get_deterministic_debug_mode() == 2 and not tl.is_deterministic_algorithms_warn_only_enabled()
    finally:
        tl.set_deterministic_debug_mode(0)
    assert not tl.are_deterministic_algorithms_enabled()
    assert tl.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    tl.set_float32_matmul_precision("high")
    assert tl.get_float32_matmul_precision() == "high"
    tl.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError):
        tl.set_float32_matmul_precision("fast")
    tl.set_warn_always(True)
    assert tl.is_warn_always_enabled()
    tl.set_warn_always(False)
    assert tl.set_flush_denormal(False) in (True, False)


def test_default_tensor_type():
    try:
        tl.set_default_tensor_type(tl.DoubleTensor)
        assert tl.zeros(1).dtype is tl.float64
        tl.set_default_tensor_type("torch.FloatTensor")
        assert tl.zeros(1).dtype is tl.float32
        with pytest.raises(TypeError):
            tl.set_default_tensor_type(tl.LongTensor)
    finally:
        tl.set_default_dtype(tl.float32)


def test_autocast_state_functions():
    assert tl.get_autocast_dtype("cpu") is tl.bfloat16 and tl.get_autocast_dtype("cuda") is tl.float16
    assert not tl.is_autocast_enabled("cpu")
    with tl.autocast("cpu"):
        assert tl.is_autocast_enabled("cpu")
    try:
        tl.set_autocast_enabled("cpu", True)
        assert tl.is_autocast_enabled("cpu")
        tl.set_autocast_dtype("cpu", tl.float16)
        assert tl.get_autocast_dtype("cpu") is tl.float16
    finally:
        tl.set_autocast_enabled("cpu", False)
        tl.set_autocast_dtype("cpu", tl.bfloat16)
    assert tl.autocast_increment_nesting() == 1 and tl.autocast_decrement_nesting() == 0
    assert tl.is_autocast_cache_enabled() == torch.is_autocast_cache_enabled()
    tl.clear_autocast_cache()
    assert (tl.has_lapack, tl.has_spectral, tl.is_vulkan_available()) == (True, True, False)
    assert tl.get_device_module("cpu").is_available()


def test_seed_functions():
    tl.manual_seed(123)
    assert tl.initial_seed() == 123
    s = tl.seed()
    assert tl.initial_seed() == s and tl.default_generator.initial_seed() == s


# ---- vmap, cond, fork ---------------------------------------------------------------------------------------------
def test_vmap_matches_torch():
    a = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    x, tx = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    w, tw = tl.tensor(b), torch.tensor(b)
    f = lambda v, m: (v * m.sum(), v.sum())  # noqa: E731
    tf = lambda v, m: (v * m.sum(), v.sum())  # noqa: E731
    out, tout = tl.vmap(f, in_dims=(0, 1), out_dims=(1, 0))(x, w), torch.vmap(tf, in_dims=(0, 1), out_dims=(1, 0))(
        tx, tw)
    _same(out, tout, rtol=1e-5)
    (out[0].sum() + out[1].sum()).backward()
    (tout[0].sum() + tout[1].sum()).backward()
    _same(x.grad, tx.grad, rtol=1e-5)
    _same(tl.vmap(lambda v: v @ w, in_dims=0)(x), torch.vmap(lambda v: v @ tw)(tx), rtol=1e-5)
    _same(tl.vmap(tl.vmap(lambda s: s * 2))(x), torch.vmap(torch.vmap(lambda s: s * 2))(tx))
    with pytest.raises(ValueError):
        tl.vmap(lambda p, q: p + q)(tl.zeros(2), tl.zeros(3))
    with pytest.raises(ValueError):
        tl.vmap(lambda p: p, in_dims=None)(tl.zeros(2))


def test_cond_fork_wait():
    x = tl.tensor([1.0, 2.0])
    assert tl.cond(tl.tensor(True), lambda v: v + 1, lambda v: v - 1, (x,)).tolist() == [2.0, 3.0]
    assert tl.cond(False, lambda v: v + 1, lambda v: v - 1, [x]).tolist() == [0.0, 1.0]
    with pytest.raises(RuntimeError):
        tl.cond(tl.ones(2), lambda: 1, lambda: 2)
    fut = tl.fork(lambda v: v * 3, x)
    assert isinstance(fut, tl.Future) and fut.done() and tl.wait(fut).tolist() == [3.0, 6.0]
    f2 = tl.Future()
    chained = f2.then(lambda f: f.wait() + 1)
    f2.set_result(1)
    assert chained.wait() == 2


def test_sym_helpers_and_exceptions():
    for name, args in [("sym_int", (3.7,)), ("sym_int", (-3.7,)), ("sym_float", (2,)), ("sym_max", (2, 3.5)),
                       ("sym_max", (2.0, 1)), ("sym_min", (1, 2)), ("sym_not", (True,)), ("sym_sqrt", (4,)),
                       ("sym_sum", ([1, 2, 3],)), ("sym_ite", (True, 1, 2))]:
        ours, theirs = getattr(tl, name)(*args), getattr(torch, name)(*args)
        assert ours == theirs and type(ours) is type(theirs), name
    assert issubclass(tl.OutOfMemoryError, RuntimeError) and issubclass(tl.AcceleratorError, RuntimeError)


# ---- statistics ---------------------------------------------------------------------------------------------------
def _grad_same(f, tf, *shape, rtol=1e-5, atol=1e-6):
    x, tx = _pair(*shape)
    y, ty = f(x), tf(tx)
    _same(y, ty, rtol, atol)
    w = np.random.default_rng(9).standard_normal(tuple(ty.shape)).astype(np.float32)
    (y * tl.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    _same(x.grad, tx.grad, rtol, atol)


def test_cov_corrcoef():
    _grad_same(lambda v: tl.cov(v), lambda v: torch.cov(v), 3, 6)
    _grad_same(lambda v: tl.cov(v, correction=0), lambda v: torch.cov(v, correction=0), 6)
    fw, afw = tl.tensor([1, 2, 1, 3, 1, 1]), torch.tensor([1, 2, 1, 3, 1, 1])
    aw, taw = tl.tensor([0.5, 1.0, 2.0, 1.0, 0.1, 1.0]), torch.tensor([0.5, 1.0, 2.0, 1.0, 0.1, 1.0])
    _grad_same(lambda v: tl.cov(v, fweights=fw, aweights=aw), lambda v: torch.cov(v, fweights=afw, aweights=taw),
               2, 6)
    _grad_same(lambda v: tl.corrcoef(v), lambda v: torch.corrcoef(v), 3, 6)
    with pytest.raises(RuntimeError):
        tl.cov(tl.zeros(2, 2, 2))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(interpolation):
    q, tq = tl.tensor([0.0, 0.25, 0.5, 0.9, 1.0]), torch.tensor([0.0, 0.25, 0.5, 0.9, 1.0])
    _grad_same(lambda v: tl.quantile(v, q, 1, True, interpolation=interpolation),
               lambda v: torch.quantile(v, tq, 1, True, interpolation=interpolation), 3, 7)
    _grad_same(lambda v: tl.quantile(v, 0.3, interpolation=interpolation),
               lambda v: torch.quantile(v, 0.3, interpolation=interpolation), 4, 5)
    _grad_same(lambda v: v.quantile(0.7, 0, interpolation=interpolation),
               lambda v: v.quantile(0.7, 0, interpolation=interpolation), 4, 5)
    a = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4, [4.0, 1.0, 2.0, 3.0]], dtype=np.float32)
    for name in ("quantile", "nanquantile"):
        ours = getattr(tl, name)(tl.tensor(a), 0.4, 1, interpolation=interpolation)
        theirs = getattr(torch, name)(torch.tensor(a), 0.4, 1, interpolation=interpolation)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError):
        tl.quantile(tl.zeros(3), 1.5)
    with pytest.raises(RuntimeError):
        tl.quantile(tl.tensor([1, 2]), 0.5)


def test_integration_and_gradient():
    _grad_same(lambda v: tl.trapezoid(v), lambda v: torch.trapezoid(v), 3, 5)
    _grad_same(lambda v: tl.trapz(v, dx=0.5, dim=0), lambda v: torch.trapz(v, dx=0.5, dim=0), 3, 5)
    xs, txs = tl.tensor([0.0, 1.0, 3.0, 4.0, 7.0]), torch.tensor([0.0, 1.0, 3.0, 4.0, 7.0])
    _grad_same(lambda v: tl.trapezoid(v, xs), lambda v: torch.trapezoid(v, txs), 3, 5)
    _grad_same(lambda v: tl.cumulative_trapezoid(v, xs), lambda v: torch.cumulative_trapezoid(v, txs), 3, 5)
    for kw in [{}, {"spacing": 2.0}, {"spacing": [0.5, 2.0], "edge_order": 2}, {"dim": 1},
               {"spacing": (txs,), "dim": 1}, {"spacing": (txs,), "dim": 1, "edge_order": 2}]:
        ours_kw = dict(kw)
        if "spacing" in kw and isinstance(kw["spacing"], tuple):
            ours_kw["spacing"] = (xs,)
        _grad_same(lambda v, k=ours_kw: tl.stack(tl.gradient(v, **k)),
                   lambda v, k=kw: torch.stack(torch.gradient(v, **k)), 4, 5)
    with pytest.raises(RuntimeError):
        tl.gradient(tl.zeros(2), edge_order=2)


def test_isin_renorm_nonzero_static_histogramdd():
    e, te = tl.tensor([[1, 2], [3, 4]]), torch.tensor([[1, 2], [3, 4]])
    for invert in (False, True):
        assert (tl.isin(e, tl.tensor([2, 4, 9]), invert=invert).numpy() ==
                torch.isin(te, torch.tensor([2, 4, 9]), invert=invert).numpy()).all()
    assert (tl.isin(e, 3).numpy() == torch.isin(te, 3).numpy()).all()
    _grad_same(lambda v: tl.renorm(v, 2, 0, 1.0), lambda v: torch.renorm(v, 2, 0, 1.0), 3, 4)
    _grad_same(lambda v: v.renorm(1, 1, 0.5), lambda v: v.renorm(1, 1, 0.5), 3, 4)
    x, tx = tl.tensor([[0, 1], [2, 0]]), torch.tensor([[0, 1], [2, 0]])
    for size in (0, 1, 2, 4):
        assert (tl.nonzero_static(x, size=size).numpy() == torch.nonzero_static(tx, size=size).numpy()).all()
    assert (x.nonzero_static(size=3, fill_value=7).numpy() == tx.nonzero_static(size=3, fill_value=7).numpy()).all()
    p, tp = _pair(10, 2)
    h, edges = tl.histogramdd(p, bins=[3, 2])
    th, tedges = torch.histogramdd(tp.detach(), bins=[3, 2])
    _same(h, th)
    _same(edges, tedges, rtol=1e-6, atol=1e-6)


# ---- random fills and samplers ------------------------------------------------------------------------------------
def test_cauchy_log_normal_geometric_fills():
    g = tl.Generator().manual_seed(0)
    c = tl.empty(20000).cauchy_(1.0, 2.0, generator=g)
    assert abs(float(c.median()) - 1.0) < 0.1  # the Cauchy median
    ln = tl.empty(20000, dtype=tl.float64).log_normal_(0.5, 0.25, generator=g)
    assert abs(float(ln.log().mean()) - 0.5) < 0.01 and abs(float(ln.log().std()) - 0.25) < 0.01
    k = tl.empty(20000).geometric_(0.25, generator=g)
    assert float(k.min()) >= 1 and abs(float(k.mean()) - 4.0) < 0.1  # mean 1/p
    assert (k == k.round()).all()
    for f in (lambda t: t.cauchy_(0, -1), lambda t: t.log_normal_(0, 0), lambda t: t.geometric_(1.5)):
        with pytest.raises(RuntimeError):
            f(tl.empty(2))
        with pytest.raises(RuntimeError):
            f(torch.empty(2))


def test_poisson_binomial():
    tl.manual_seed(0)
    rates = tl.full((20000,), 3.0)
    p = tl.poisson(rates)
    assert p.dtype is tl.float32 and abs(float(p.mean()) - 3.0) < 0.05 and (p == p.round()).all()
    b = tl.binomial(tl.full((20000,), 10.0), tl.full((20000,), 0.3))
    assert abs(float(b.mean()) - 3.0) < 0.05 and float(b.max()) <= 10
    with pytest.raises(RuntimeError, match="non-negative"):
        tl.poisson(tl.tensor([-1.0]))
    with pytest.raises(ValueError):
        tl.binomial(tl.tensor([5]), tl.tensor([0.5]))
    with pytest.raises(ValueError):
        torch.binomial(torch.tensor([5]), torch.tensor([0.5]))


def test_python_function_methods_and_hash():
    x, tx = tl.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0])
    _same(x.apply_(lambda v: v * v + 1), tx.apply_(lambda v: v * v + 1))
    _same(x.map_(tl.tensor([1.0, 0.0, 2.0]), lambda a, b: a - b), tx.map_(torch.tensor([1.0, 0.0, 2.0]),
                                                                            lambda a, b: a - b))
    _same(x.map2_(tl.tensor(2.0), tl.tensor([1.0, 1.0, 1.0]), lambda a, b, c: a * b + c),
          tx.map2_(torch.tensor(2.0), torch.tensor([1.0, 1.0, 1.0]), lambda a, b, c: a * b + c))
    for a, dim in [(np.array([1, 2, 7]), None), (np.array([[1.0, 2.0], [3.0, 4.0]]), 1),
                   (np.array([[1.5, -2.0], [3.0, 4.0]], dtype=np.float32), 0)]:
        ours = tl.hash_tensor(tl.tensor(a), dim).numpy()
        theirs = torch.hash_tensor(torch.tensor(a), dim).numpy()
        assert (ours.view(np.uint64) == theirs.astype(np.uint64)).all()


def test_small_free_functions_and_removed_names():
    x, tx = tl.tensor([-2.0, 0.5, 3.0]), torch.tensor([-2.0, 0.5, 3.0])
    _same(tl.clamp_(x.clone(), -1, 1), torch.clamp_(tx.clone(), -1, 1))
    _same(tl.clip_(x.clone(), 0, 1), torch.clip_(tx.clone(), 0, 1))
    _same(x.clone().clip_(max=0), tx.clone().clip_(max=0))
    y = x * 1
    assert tl.detach_(y) is y and y.grad_fn is None
    assert tl.get_device(x) == torch.get_device(tx) == -1
    assert tl.is_distributed(x) == torch.is_distributed(tx)
    assert tl.cudnn_is_acceptable(x) == torch.cudnn_is_acceptable(tx)
    z = tl.zeros(1)
    tl.resize_as_(z, tl.zeros(2, 2))
    assert z.shape == (2, 2)
    assert x.grad_dtype is tl.float32
    with pytest.warns(UserWarning, match="volatile"):
        assert x.volatile is False
    with pytest.raises(RuntimeError, match="removed"):
        x.reinforce(1)
    for name in ("cfloat", "cdouble", "chalf"):
        with pytest.raises(NotImplementedError, match="complex"):
            getattr(x, name)()
    assert tl.bit is tl.uint1 and tl.bit.itemsize == torch.bit.itemsize
    assert tl.SUM.value == torch.SUM.value and tl.AVG.value == torch.AVG.value
    assert tl.thread_safe_generator() is None and torch.thread_safe_generator() is None
    assert issubclass(tl.FatalError, Exception) and not issubclass(tl.FatalError, RuntimeError)
    assert tl.GradScaler is tl.amp.GradScaler
    with pytest.raises(NotImplementedError, match="export"):
        tl.export.export(None, ())


def test_set_printoptions_matches_torch():
    a = np.array([[1.123456, 22.5, 1e-3], [4.0, 5.0, 6.0]], dtype=np.float32)
    try:
        for kw in [{"precision": 2}, {"precision": 6}, {"sci_mode": True}, {"sci_mode": False, "precision": 3},
                   {"profile": "short"}, {"threshold": 5, "edgeitems": 1}, {"linewidth": 20}]:
            tl.set_printoptions(**kw)
            torch.set_printoptions(**kw)
            assert str(tl.tensor(a)) == str(torch.tensor(a)), kw
            assert str(tl.arange(20.0)) == str(torch.arange(20.0)), kw
    finally:
        tl.set_printoptions(profile="default", sci_mode=None)
        torch.set_printoptions(profile="default", sci_mode=None)


def test_vmap_randomness():
    x = tl.ones(3, 2)
    with pytest.raises(RuntimeError, match="randomness"):
        tl.vmap(lambda v: v + tl.rand(2))(x)
    with pytest.raises(RuntimeError, match="randomness"):
        torch.vmap(lambda v: v + torch.rand(2))(torch.ones(3, 2))
    tl.rand(1)  # allowed again after the error
    same = tl.vmap(lambda v: v + tl.rand(2), randomness="same")(x)
    assert (same == same[0]).all()
    different = tl.vmap(lambda v: v + tl.rand(2), randomness="different")(x)
    assert not (different == different[0]).all()
    with pytest.raises(RuntimeError):
        tl.vmap(lambda v: v, randomness="sometimes")


def test_cpu_stream_and_event_as_torch():
    s, ts = tl.Stream(), torch.Stream("cpu")
    e, te = tl.Event("cpu"), torch.Event("cpu")
    assert str(s) == str(ts) and str(e) == str(te)
    assert s.query() == ts.query() and s.synchronize() is None and s == tl.Stream("cpu")
    assert e.query() == te.query() and e.wait() is None and s.wait_event(e) is None
    for ours, theirs in [(lambda: s.record_event(), lambda: ts.record_event()),
                         (lambda: e.record(), lambda: te.record()),
                         (lambda: s.wait_stream(s), lambda: ts.wait_stream(ts))]:
        with pytest.raises(RuntimeError, match="events"):
            ours()
        with pytest.raises(RuntimeError, match="events"):
            theirs()
    with pytest.raises(ValueError):
        e.elapsed_time(e)
    with s:
        pass


@pytest.mark.parametrize("kw", [{"n_fft": 8}, {"n_fft": 8, "hop_length": 3, "win_length": 6, "normalized": True},
                                {"n_fft": 7, "center": False, "onesided": False},
                                {"n_fft": 8, "pad_mode": "constant"}])
def test_stft_real_form(kw):
    a = np.random.default_rng(0).standard_normal((2, 40)).astype(np.float32)
    win = kw.get("win_length")
    x, tx = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = tl.stft(x, window=tl.hann_window(win) if win else None, return_complex=False, **kw)
        tout = torch.stft(tx, window=torch.hann_window(win) if win else None, return_complex=False, **kw)
    _same(out, tout, rtol=1e-5, atol=1e-5)
    g = np.random.default_rng(1).standard_normal(tuple(tout.shape)).astype(np.float32)
    (out * tl.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    _same(x.grad, tx.grad, rtol=1e-5, atol=1e-5)


def test_stft_errors_as_torch():
    x = tl.zeros(16)
    with pytest.raises(RuntimeError, match="return_complex"):
        tl.stft(x, 4)
    with pytest.raises(RuntimeError, match="return_complex"):
        torch.stft(torch.zeros(16), 4)
    with pytest.raises(NotImplementedError, match="complex"):
        x.stft(4, return_complex=True)
    with pytest.raises(RuntimeError, match="complex"):
        tl.istft(x, 4)
    with pytest.raises(RuntimeError, match="complex"):
        torch.istft(torch.zeros(3, 5), 4)


def test_slice_inverse():
    base, tbase = tl.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    src, tsrc = tl.zeros(3, 4), torch.zeros(3, 4)
    r, tr = tl.slice_inverse(base[:, 1:3], src, 1, 1, 3), torch.slice_inverse(tbase[:, 1:3], tsrc, 1, 1, 3)
    _same(r, tr)
    assert r.stride() == tr.stride() and r.storage is base.storage
    with pytest.raises(RuntimeError, match="out of bounds"):
        tl.slice_inverse(base[1:], tl.zeros(5, 4), 0, 1)


def test_dtype_repr_under_the_torch_alias(tmp_path):
    import subprocess
    import sys
    prog = tmp_path / "p.py"
    prog.write_text("import torch\nprint(torch.zeros(1).dtype, torch.int16, torch.complex64)\n")
    out = subprocess.run([sys.executable, "-m", "tinygrad_like.run", str(prog)], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["torch.float32", "torch.int16", "torch.complex64"]
    assert repr(tl.float32) == "tinygrad_like.float32"
