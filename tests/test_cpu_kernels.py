"""Our compiled CPU kernels (``kernel_src/cpu/``, built by ``backends/cpu_kernels.py``): the vectorizable math against
a long-double reference within a stated ulp bound, each cell kernel against the NumPy code it replaces (the
reference), the disk cache, the fallback without a compiler, and the names the timeline shows."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like import events
from tinygrad_like.backends import cpu_kernels
from tinygrad_like.backends.numpy_recurrent import NumpyRecurrentPrimitives as P

if not cpu_kernels.available():
    if os.environ.get("CI") == "true":
        pytest.fail("no C compiler: CI must build the compiled CPU kernels", pytrace=False)
    pytest.skip("no C compiler here: the compiled CPU kernels cannot be built", allow_module_level=True)

DTYPES = {"f32": np.float32, "f64": np.float64}
# vmath.h's stated bounds (ulp of the correctly rounded result) on normal results
ULP = {"exp": 2.0, "tanh": 3.0, "sigmoid": 3.0, "log": 2.0, "log1p": 3.0, "softplus": 3.0}


def _reference(name: str, x):
    with np.errstate(all="ignore"):
        xl = x.astype(np.longdouble)
        return {"exp": np.exp(xl), "tanh": np.tanh(xl), "sigmoid": 1 / (1 + np.exp(-xl)), "log": np.log(xl),
                "log1p": np.log1p(xl), "softplus": np.where(xl > 20, xl, np.logaddexp(0, xl))}[name]


def _grid(dt) -> np.ndarray:
    top = 120 if dt == np.float32 else 800
    rng = np.random.default_rng(0)
    fi = np.finfo(dt)
    return np.concatenate([np.linspace(-top, top, 100_001), np.linspace(-1, 1, 50_001), rng.standard_normal(50_000) * 5,
                           # (for log and log1p: every binade, around 1, and log1p's (-1, 0) up to -1)
                           np.geomspace(fi.smallest_subnormal, fi.max, 100_001), 1 + np.linspace(-0.5, 0.5, 20_001),
                           -np.geomspace(1e-12, 1, 20_001),
                           [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30, -1e-30]]).astype(dt)


@pytest.mark.parametrize("sfx", DTYPES)
@pytest.mark.parametrize("name", ULP)
def test_vector_math_within_its_ulp_bound(name, sfx):
    dt = DTYPES[sfx]
    x = _grid(dt)
    y = np.empty_like(x)
    cpu_kernels.kernel(f"v{name}_{sfx}")(x.size, x.ctypes.data, y.ctypes.data)
    exact = _reference(name, x)
    with np.errstate(all="ignore"):
        rounded = exact.astype(dt)
    normal = np.isfinite(rounded) & (np.abs(rounded) >= np.finfo(dt).tiny)
    ulps = np.abs(y[normal].astype(np.longdouble) - exact[normal]) / np.spacing(np.abs(rounded[normal]))
    assert ulps.max() <= ULP[name], f"{name} {sfx}: {float(ulps.max()):.2f} ulp at x = {x[normal][ulps.argmax()]}"
    special = ~np.isfinite(rounded)  # inf and NaN exactly as the reference
    np.testing.assert_array_equal(y[special], rounded[special])
    tiny = np.isfinite(rounded) & ~normal  # subnormal results: within the smallest normal number
    assert np.all(np.abs(y[tiny] - rounded[tiny]) <= np.finfo(dt).tiny)


# ---- the recurrent cells against the NumPy loops ----------------------------------------------------------------
CASES = [  # (mode, hidden, proj, packed batch sizes or None, reverse)
    ("LSTM", 7, 0, None, False), ("LSTM", 7, 3, None, True), ("LSTM", 16, 0, (5, 4, 4, 2, 1), False),
    ("LSTM", 5, 2, (5, 3, 1), True), ("GRU", 7, 0, None, False), ("GRU", 9, 0, (5, 4, 2, 2, 1), True),
]


def _both(fn):
    """fn() with the compiled kernels, then with the NumPy code."""
    out = [fn()]
    cpu_kernels.enable(False)
    try:
        out.append(fn())
    finally:
        cpu_kernels.enable(True)
    return out


@pytest.mark.parametrize("sfx", DTYPES)
@pytest.mark.parametrize("mode,hidden,proj,sizes,reverse", CASES)
def test_recurrent_cells_match_the_numpy_loops(mode, hidden, proj, sizes, reverse, sfx):
    dt = DTYPES[sfx]
    rng = np.random.default_rng(hidden)
    n = sizes[0] if sizes else 4
    steps = len(sizes) if sizes else 6
    gates = (4 if mode == "LSTM" else 3) * hidden
    p = proj or hidden
    xp = rng.standard_normal((sum(sizes), gates) if sizes else (steps, n, gates)).astype(dt)
    h0, c0 = rng.standard_normal((n, p)).astype(dt), rng.standard_normal((n, hidden)).astype(dt)
    w_hh, b_hh = (rng.standard_normal((gates, p)) * 0.4).astype(dt), rng.standard_normal(gates).astype(dt)
    w_hr = (rng.standard_normal((p, hidden)) * 0.4).astype(dt) if proj else None
    if mode == "LSTM":
        fwd = _both(lambda: P.lstm_layer(xp, h0, c0, w_hh, b_hh, w_hr, reverse, sizes))
    else:
        fwd = _both(lambda: P.gru_layer(xp, h0, w_hh, b_hh, reverse, sizes))
    # float32: the kernels' transcendentals are within 3 ulp, NumPy's within its own few; the states go through
    # up to 6 steps of products and sums: 1e-5 relative. float64: 1e-12.
    tol = {"rtol": 2e-5, "atol": 2e-6} if dt == np.float32 else {"rtol": 1e-12, "atol": 1e-13}
    for ours, ref in zip(fwd[0], fwd[1]):
        if ref is not None:
            np.testing.assert_allclose(ours, ref, **tol)
    states, saved_a, saved_b = fwd[1]
    g = rng.standard_normal(states.shape).astype(dt)
    if mode == "LSTM":
        bwd = _both(lambda: P.lstm_layer_backward(g, states, saved_a, saved_b, h0, c0, w_hh, w_hr, reverse, sizes,
                                                  xp.shape[0]))
    else:
        bwd = _both(lambda: P.gru_layer_backward(g, states, saved_a, saved_b, h0, w_hh, reverse, sizes, xp.shape[0]))
    for ours, ref in zip(bwd[0], bwd[1]):
        if ref is not None:
            np.testing.assert_allclose(ours, ref, **{k: v * 10 for k, v in tol.items()})


# ---- building, caching, falling back ----------------------------------------------------------------------------
def test_a_build_is_cached_on_disk_under_a_key_of_source_compiler_flags_and_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("TL_CPU_KERNEL_CACHE", str(tmp_path))
    path, hit, _ = cpu_kernels.compile_file("vmath_test.c")
    assert not hit and path.parent == tmp_path and path.exists()
    again, hit, _ = cpu_kernels.compile_file("vmath_test.c")
    assert hit and again == path
    monkeypatch.setattr(cpu_kernels, "FLAGS", (*cpu_kernels.FLAGS, "-DTL_OTHER_FLAGS"))
    other, hit, _ = cpu_kernels.compile_file("vmath_test.c")
    assert not hit and other != path


def test_without_a_compiler_the_numpy_code_runs_with_one_note():
    code = """
import warnings
warnings.simplefilter("always")
import tinygrad_like as tl
from tinygrad_like.backends import cpu_kernels
with warnings.catch_warnings(record=True) as w:
    m = tl.nn.LSTM(3, 4)
    out, _ = m(tl.randn(5, 2, 3))
    out.sum().backward()
    m(tl.randn(5, 2, 3))
notes = [str(x.message) for x in w if "compiled CPU kernels" in str(x.message)]
print(len(notes), cpu_kernels.available(), notes[0] if notes else "")
"""
    env = {**os.environ, "CC": "/nonexistent/cc", "PATH": "/nonexistent", "TL_CPU_KERNEL_CACHE": "/nonexistent/x"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    count, available, note = out.stdout.strip().split(" ", 2)
    assert count == "1" and available == "False"
    assert "no C compiler found" in note and "install one" in note


def test_a_compile_error_is_reported_with_the_compilers_message(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_kernels, "FLAGS", (*cpu_kernels.FLAGS, "-DTL_BROKEN", "-include", "nonexistent.h"))
    monkeypatch.setenv("TL_CPU_KERNEL_CACHE", str(tmp_path))
    with pytest.raises(RuntimeError, match="compiling kernel_src/cpu/vmath_test.c failed.*nonexistent.h"):
        cpu_kernels.compile_file("vmath_test.c")


def test_the_timeline_names_the_compiled_kernel():
    got = []
    unsubscribe = events.subscribe(lambda e: got.append(e) if isinstance(e, events.KernelTimed) else None)
    try:
        tl.manual_seed(0)
        m = tl.nn.GRU(4, 6)
        out, _ = m(tl.randn(5, 2, 4))
        out.sum().backward()
    finally:
        unsubscribe()
    names = {(e.name, e.device) for e in got}
    assert ("gru_layer_fwd", "cpu, compiled") in names and ("gru_layer_bwd", "cpu, compiled") in names
    assert ("matmul", "cpu") in names  # (the others keep their primitive's name)


# ---- the optimizer and the embedding's backward: equal to NumPy bit for bit ---------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weight_decay,decoupled,amsgrad", [(0.0, False, False), (0.01, True, False),
                                                            (0.1, False, True), (0.05, True, True)])
def test_adam_step_equals_numpys_bit_for_bit(dtype, weight_decay, decoupled, amsgrad):
    from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives as NN

    rng = np.random.default_rng(0)
    base = [rng.standard_normal(1037).astype(dtype) for _ in range(3)] + [rng.random(1037).astype(dtype)]
    base[1][:3] = [np.nan, np.inf, 0.0]  # special values go through alike
    vmax = rng.random(1037).astype(dtype) if amsgrad else None
    runs = []
    for use in (True, False):
        p, g, m, v = (a.copy() for a in base)
        vm = None if vmax is None else vmax.copy()
        cpu_kernels.enable(use)
        try:
            for step in (1, 2, 7):
                NN.adam_step(p, g, m, v, step, 1e-3, 0.9, 0.999, 1e-8, weight_decay, decoupled, vm)
        finally:
            cpu_kernels.enable(True)
        runs.append((p, m, v) + (() if vm is None else (vm,)))
    for ours, ref in zip(*runs):
        np.testing.assert_array_equal(ours, ref)


def test_adam_on_a_strided_or_mixed_array_runs_numpy():
    from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives as NN

    got = []
    unsubscribe = events.subscribe(lambda e: got.append(e) if isinstance(e, events.KernelTimed) else None)
    try:
        p = tl.nn.Parameter(tl.randn(8, 8))
        opt = tl.optim.Adam([p], lr=0.1)
        p.grad = tl.randn(8, 8)
        opt.step()
    finally:
        unsubscribe()
    assert ("adam_step", "cpu, compiled") in {(e.name, e.device) for e in got}
    p, g = np.ones((4, 4), np.float32)[:, ::2], np.ones((4, 2), np.float32)  # (a strided parameter)
    m, v = np.zeros((4, 2), np.float32), np.zeros((4, 2), np.float32)
    NN.adam_step(p, g, m, v, 1, 0.1, 0.9, 0.999, 1e-8, 0.0, False)
    np.testing.assert_allclose(p, 0.9, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("alpha", [-0.1, 0.3, -1e-3, 2.5])
def test_axpy_equals_numpys_product_then_sum_bit_for_bit(dtype, alpha):
    from tinygrad_like.backends.numpy_backend import NumpyBackend

    rng = np.random.default_rng(2)
    y0, x = rng.standard_normal(40_007).astype(dtype), rng.standard_normal(40_007).astype(dtype)
    x[:4] = [np.nan, np.inf, -0.0, 1e30]  # special values go through alike
    ref = y0 + np.multiply(x, alpha)  # NumPy's two roundings, written out here
    y = y0.copy()
    NumpyBackend.axpy(y, x, alpha)
    np.testing.assert_array_equal(y, ref)
    y_self = y0.copy()
    NumpyBackend.axpy(y_self, y_self, alpha)  # x is y (p.add_(p, alpha=...)): no aliasing assumption
    np.testing.assert_array_equal(y_self, y0 + np.multiply(y0, alpha))
    got = []
    unsubscribe = events.subscribe(lambda e: got.append(e) if isinstance(e, events.KernelTimed) else None)
    try:
        t = tl.tensor(y0)
        t.add_(tl.tensor(x), alpha=alpha)  # (through the dispatch: the timeline names the kernel)
    finally:
        unsubscribe()
    np.testing.assert_array_equal(t.numpy(), ref)
    if cpu_kernels.available():
        assert [(e.name, e.device) for e in got] == [("axpy", "cpu, compiled")]


def test_axpy_rounds_alike_above_and_below_the_kernels_size_with_a_numpy_scalar_alpha():
    from tinygrad_like.backends.numpy_backend import NumpyBackend

    rng = np.random.default_rng(4)
    y0, x = rng.standard_normal(40_000).astype(np.float32), rng.standard_normal(40_000).astype(np.float32)
    large, small = y0.copy(), y0[:1000].copy()
    NumpyBackend.axpy(large, x, np.float64(0.1))  # the kernel (a float32 product, as with a Python float) ...
    NumpyBackend.axpy(small, x[:1000], np.float64(0.1))  # ... and NumPy's two passes, below the kernel's size
    np.testing.assert_array_equal(large[:1000], small)
    np.testing.assert_array_equal(small, y0[:1000] + np.multiply(x[:1000], np.float32(0.1)))


def test_axpy_leaves_small_strided_and_mixed_arrays_to_numpy():

    got = []
    unsubscribe = events.subscribe(lambda e: got.append(e) if isinstance(e, events.KernelTimed) else None)
    try:
        y = tl.ones(400, 100)
        y[:, ::2].add_(tl.ones(400, 50), alpha=0.5)  # a strided view
        y[:10].add_(tl.ones(10, 100), alpha=0.5)  # small
        y.add_(tl.ones(100), alpha=0.5)  # broadcast
        y.add_(tl.ones(400, 100, dtype=tl.float64), alpha=0.5)  # mixed dtypes
    finally:
        unsubscribe()
    assert [e.name for e in got if e.device == "cpu, compiled"] == []
    y = y.numpy()
    np.testing.assert_array_equal(y[:10, 0], 3.0)  # 1 + 0.5 (strided) + 0.5 (small) + 0.5 + 0.5
    np.testing.assert_array_equal(y[:10, 1], 2.5)
    np.testing.assert_array_equal(y[10:, 1], 2.0)


def test_an_sgd_step_runs_the_compiled_axpy_and_equals_torchs_within_one_ulp():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    w0, g0 = rng.standard_normal((256, 256)).astype(np.float32), rng.standard_normal((256, 256)).astype(np.float32)
    p = tl.nn.Parameter(tl.tensor(w0))
    p.grad = tl.tensor(g0)
    got = []
    unsubscribe = events.subscribe(lambda e: got.append(e) if isinstance(e, events.KernelTimed) else None)
    try:
        tl.optim.SGD([p], lr=0.1).step()
    finally:
        unsubscribe()
    if cpu_kernels.available():
        assert ("axpy", "cpu, compiled") in {(e.name, e.device) for e in got}
    tp = torch.nn.Parameter(torch.tensor(w0))
    tp.grad = torch.tensor(g0)
    torch.optim.SGD([tp], lr=0.1).step()
    # torch fuses the product into the sum (one rounding); NumPy and we round the product too. Apart: half an ulp of
    # the product plus half an ulp of the result from each sum, the result being up to twice the larger term: within
    # 2 ulp of the larger term (the result itself may be near zero, where its own ulp is far smaller)
    ours, theirs = p.detach().numpy(), tp.detach().numpy()
    ulp = np.spacing(np.maximum(np.abs(w0), np.abs(np.float32(0.1) * g0)))
    assert np.all(np.abs(ours - theirs) <= 2 * ulp), np.max(np.abs(ours - theirs) / ulp)
    assert np.mean(ours == theirs) > 0.5  # (most elements round alike)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_backward_equals_add_at_bit_for_bit(dtype):
    from tinygrad_like.backends.numpy_backend import _index_add

    rng = np.random.default_rng(1)
    ids = rng.integers(-50, 50, 700)  # repeats, and negative ids counted from the end
    g = rng.standard_normal((700, 33)).astype(dtype)
    out = _index_add((50, 33), tl.float32 if dtype == np.float32 else tl.float64, (ids, slice(None)), g)
    ref = np.zeros((50, 33), dtype)
    np.add.at(ref, ids, g)
    np.testing.assert_array_equal(out, ref)
    emb = tl.nn.Embedding(50, 33)
    emb(tl.tensor(ids % 50)).sum().backward()
    counts = np.bincount(ids % 50, minlength=50).astype(np.float32)
    np.testing.assert_array_equal(emb.weight.grad.numpy(), np.repeat(counts[:, None], 33, 1))


# ---- row kernels: softmax, log-softmax, layer norm (rows.c) against the NumPy code ----------------------------------
def _numpy_too(fn, *args):
    """(fn(*args) with the compiled kernels, fn(*args) with NumPy's code, the compiled kernel that ran in the first)."""
    cpu_kernels.LAUNCHED[0] = None
    ours = fn(*args)
    ran = cpu_kernels.LAUNCHED[0]
    cpu_kernels.enable(False)
    try:
        ref = fn(*args)
    finally:
        cpu_kernels.enable(True)
    return ours, ref, ran


def _rows_input(dtype, cols: int, special: bool):
    rng = np.random.default_rng(cols)
    x = (rng.standard_normal((7, cols)) * 4).astype(dtype)
    if special and cols > 2:
        x[1, 1] = np.nan             # a NaN makes its row NaN
        x[2, :] = -np.inf            # a row of -inf: NaN (0/0), as NumPy
        x[3, 0] = -np.inf            # one -inf: probability 0
        x[4, 2] = np.finfo(dtype).max  # one huge logit takes everything
    return x


ROW_TOL = {np.float32: {"rtol": 1e-5, "atol": 1e-6}, np.float64: {"rtol": 1e-13, "atol": 1e-14}}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cols", [1, 3, 65, 1000])
@pytest.mark.parametrize("special", [False, True])
def test_softmax_and_log_softmax_rows_match_numpy(dtype, cols, special):
    from tinygrad_like.backends.numpy_backend import NumpyBackend as B

    x = _rows_input(dtype, cols, special)
    g = np.random.default_rng(3).standard_normal(x.shape).astype(dtype)
    with np.errstate(all="ignore"):
        for fwd, bwd, name in ((B.softmax, B.softmax_backward, "softmax"),
                               (B.log_softmax, B.log_softmax_backward, "log_softmax")):
            ours, ref, ran = _numpy_too(fwd, x, 1)
            assert ran == f"{name}_fwd"
            np.testing.assert_allclose(ours, ref, **ROW_TOL[dtype], equal_nan=True)
            y = ref
            ours, ref, ran = _numpy_too(bwd, g, y, -1)
            assert ran == f"{name}_bwd"
            np.testing.assert_allclose(ours, ref, **{k: v * 10 for k, v in ROW_TOL[dtype].items()}, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", [((7, 64), (1,)), ((3, 5, 12), (2,)), ((4, 3, 5), (1, 2)), ((2, 1), (1,))])
def test_layer_norm_rows_match_numpy(dtype, shape, axes):
    from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives as NN

    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 3 + 1).astype(dtype)
    ours, ref, ran = _numpy_too(NN.layer_norm, x, axes, 1e-5)
    assert ran == "layer_norm_fwd"
    for a, b in zip(ours, ref):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, **ROW_TOL[dtype])
    xhat, _, rstd = ref
    g = rng.standard_normal(shape).astype(dtype)
    ours, ref, ran = _numpy_too(NN.layer_norm_backward, g, xhat, rstd, axes)
    assert ran == "layer_norm_bwd"
    np.testing.assert_allclose(ours, ref, **{k: v * 10 for k, v in ROW_TOL[dtype].items()})


def test_row_kernels_leave_other_layouts_to_numpy():
    from tinygrad_like.backends.numpy_backend import NumpyBackend as B

    x = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32)
    for arr, axis in ((x, 0), (x.T, 1), (x.astype(np.float16), 1), (x[:0], 1), (x[0, 0], -1)):
        cpu_kernels.LAUNCHED[0] = None
        out = B.softmax(arr, axis)
        assert cpu_kernels.LAUNCHED[0] is None and out.shape == arr.shape


def _gelu64(x, approximate: str):
    """GELU and its derivative in float64 (math.erf, math.tanh), for finite float32 inputs."""
    import math

    ys, ds = [], []
    for v in x.astype(float):
        if approximate == "tanh":
            c, k = math.sqrt(2 / math.pi), 0.044715
            t = math.tanh(c * (v + k * v ** 3))
            ys.append(0.5 * v * (1 + t))
            ds.append(0.5 * v * (1 - t * t) * c * (1 + 3 * k * v * v) + 0.5 * (1 + t))
        else:
            cdf = 0.5 * (1 + math.erf(v / math.sqrt(2)))
            ys.append(v * cdf)
            ds.append(cdf + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi))
    return np.array(ys), np.array(ds)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_the_numpy_float32_formulas(approximate):
    from tinygrad_like.backends import numpy_special

    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(5000) * 4, np.linspace(-12, 12, 2001), [0.0, -0.0, 1e-30, -1e-30,
                        np.inf, -np.inf, np.nan]]).astype(np.float32)
    (y, d), (y_ref, d_ref), ran = _numpy_too(numpy_special.gelu, x, approximate, True)
    assert ran == ("gelu_tanh_fwd" if approximate == "tanh" else "gelu_fwd")
    special = ~np.isfinite(x)
    np.testing.assert_array_equal(y[special], y_ref[special])
    # against float64: the kernel is no less accurate than the NumPy code it replaces (both are float32; where x is
    # large and negative, 1 + tanh(...) cancels, and the error of tanh near -1 (an ulp, 6e-8) shows)
    fin = ~special
    y64, d64 = _gelu64(x[fin], approximate)
    scale = np.maximum(1.0, np.abs(x[fin].astype(float))) ** 3
    for ours, ref, truth in ((y[fin], y_ref[fin], y64), (d[fin], d_ref[fin], d64)):
        err_ours, err_ref = np.abs(ours - truth) / scale, np.abs(ref - truth) / scale
        assert err_ours.max() <= max(err_ref.max(), 1.2e-6) * 1.1
    if approximate == "none":  # and torch's own float32 bound: 1.2e-6 relative to max(1, |y|)
        assert (np.abs(y[fin] - y64) / np.maximum(1.0, np.abs(y64))).max() < 1.2e-6


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted,ignore", [(False, -100), (True, -100), (False, 2), (True, 2)])
def test_cross_entropy_matches_numpy(dtype, weighted, ignore):
    from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives as NN

    rng = np.random.default_rng(4)
    logits = (rng.standard_normal((40, 17)) * 3).astype(dtype)
    logits[5, 3] = -np.inf  # a class with no chance
    logits[6, 0] = np.nan   # a NaN row
    target = rng.integers(0, 17, 40)
    weight = rng.random(17).astype(dtype) if weighted else None
    (loss, state, a, a_y), (loss_r, logp_r, a_r, a_y_r), ran = _numpy_too(NN.cross_entropy, logits, target, weight,
                                                                          ignore, 0.0)
    assert ran == "cross_entropy_fwd" and a is None
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(loss, loss_r, **ROW_TOL[dtype], equal_nan=True)
        np.testing.assert_allclose(state.logp, logp_r, **ROW_TOL[dtype], equal_nan=True)
        np.testing.assert_array_equal(a_y, a_y_r)
        dense, dense_sum = NN.cross_entropy_coefs(state, a, a_y)  # (a differentiable backward reads these)
        np.testing.assert_array_equal(dense, a_r)
        np.testing.assert_array_equal(dense_sum, a_y_r)
        for g in (rng.standard_normal(40).astype(dtype), np.broadcast_to(np.asarray(0.025, dtype), (40,))):
            ours = NN.cross_entropy_backward(g, state, a, a_y)
            ref = NN.cross_entropy_backward(g, logp_r, a_r, a_y_r)
            np.testing.assert_allclose(ours, ref, **{k: v * 10 for k, v in ROW_TOL[dtype].items()}, equal_nan=True)


def test_cross_entropy_with_label_smoothing_stays_numpy():
    from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives as NN

    cpu_kernels.LAUNCHED[0] = None
    _, logp, a, _ = NN.cross_entropy(np.zeros((3, 4), np.float32), np.array([0, 1, 2]), None, -100, 0.1)
    assert cpu_kernels.LAUNCHED[0] is None and isinstance(logp, np.ndarray) and a is not None
