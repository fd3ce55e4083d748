"""The NumPy backend's own erf and GELU kernels (``tinygrad_like/backends/numpy_special.py``).

erf is held to ``math.erf`` (correctly rounded to double, or nearly) on dense grids over the whole range: the
tails, +-0, +-inf, NaN and subnormals. float32: at most 2e-7 relative error for normal results and one subnormal
spacing below them; float64 (the fdlibm port, and whatever the backend uses): at most 1 ulp. The GELU kernels are
held to float64 references of torch's formulas; the graph-level GELU is compared with torch in
``test_ops_vs_torch.py`` and ``test_fused_backward_nodes.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tinygrad_like as tl
from tinygrad_like.backends import numpy_special as ns
from tinygrad_like.backends.numpy_backend import NumpyBackend

F32_MAX_REL = 2e-7


def _grid(dtype) -> np.ndarray:
    """A dense grid over [-7, 7] (erf is +-1 in float64 beyond 6), geometric grids down to the smallest subnormal
    on both sides, the branch points, random normals and the special values."""
    fi = np.finfo(dtype)
    tiny = float(fi.smallest_subnormal)
    rng = np.random.default_rng(0)
    parts = [np.linspace(-7, 7, 700_001), np.geomspace(tiny, 7, 200_000), -np.geomspace(tiny, 7, 200_000),
             np.linspace(0.83, 1.3, 50_001), np.linspace(2.8, 2.9, 10_001), np.linspace(3.8, 6.1, 20_001),
             rng.standard_normal(100_000) * 2,
             [0.0, -0.0, np.inf, -np.inf, float(fi.max), -float(fi.max), float(fi.tiny), tiny, -tiny, 1e300 if
              dtype == np.float64 else 1e30]]
    return np.concatenate([np.asarray(p, np.float64) for p in parts]).astype(dtype)


def _reference(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


@pytest.fixture(scope="module")
def grid32():
    x = _grid(np.float32)
    return x, _reference(x)


@pytest.fixture(scope="module")
def grid64():
    x = _grid(np.float64)
    return x, _reference(x)


def test_float32_erf_is_within_2e_7_relative(grid32):
    x, ref = grid32
    got = ns.erf(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    err = np.abs(got.astype(np.float64) - ref)
    normal = np.abs(ref) >= np.finfo(np.float32).tiny
    rel = err[normal] / np.abs(ref[normal])
    assert rel.max() <= F32_MAX_REL, (rel.max(), x[normal][rel.argmax()])
    # results in the subnormal range: within one spacing of the subnormals (2^-149)
    assert err[~normal].max() <= 2.0 ** -149, err[~normal].max()


def test_float64_erf_is_within_one_ulp(grid64):
    x, ref = grid64
    for name, f in (("fdlibm port", ns.erf64), ("backend erf", ns.erf)):
        got = f(x)
        assert got.dtype == np.float64, name
        ulp = np.abs(got - ref) / np.spacing(np.abs(ref))
        assert ulp.max() <= 1.0, (name, ulp.max(), x[ulp.argmax()])


@pytest.mark.parametrize("copies", [1, 400], ids=["small", "vectorised"])  # (under 512 elements: math.erf)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_special_values(dtype, copies):
    x = np.tile(np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype), copies)
    for f in (ns.erf, ns.erf64) if dtype == np.float64 else (ns.erf,):
        got = f(x).reshape(copies, 5)
        np.testing.assert_array_equal(got[:, :4], np.tile([0.0, -0.0, 1.0, -1.0], (copies, 1)))
        assert np.signbit(got[:, 1]).all() and not np.signbit(got[:, 0]).any()  # erf(-0) = -0
        assert np.isnan(got[:, 4]).all()


def test_small_arrays_agree_with_the_vectorised_path():
    x = np.random.default_rng(3).standard_normal(511) * 3
    for dt, tol in ((np.float32, F32_MAX_REL), (np.float64, 2.3e-16)):
        xs = x.astype(dt)
        np.testing.assert_allclose(ns.erf(xs), ns.erf(np.tile(xs, 2))[:511], rtol=tol, atol=0)


def test_erf_shapes_views_and_other_dtypes():
    a = np.random.default_rng(1).standard_normal((7, 5000)).astype(np.float32)  # several chunks plus a rest
    view = a[:, ::3].T  # not contiguous
    np.testing.assert_array_equal(ns.erf(view), ns.erf(np.ascontiguousarray(view)))
    assert ns.erf(np.float32(0.5) * np.ones((), np.float32)).shape == ()
    assert ns.erf(np.zeros((0, 3), np.float32)).shape == (0, 3)
    h = a[:2, :100].astype(np.float16)
    got = ns.erf(h)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, _reference(h.ravel()).astype(np.float16).reshape(h.shape))
    bf = tl.tensor(a[:2, :100]).to(tl.bfloat16)
    np.testing.assert_allclose(bf.erf().float().numpy(), _reference(bf.float().numpy().ravel()).reshape(2, 100),
                               rtol=2 ** -8, atol=0)


def test_the_backend_uses_these_kernels():
    assert NumpyBackend.erf is ns.erf and NumpyBackend.gelu is ns.gelu
    assert NumpyBackend.gelu_backward is ns.gelu_backward


# ---- GELU ------------------------------------------------------------------------------------------------
def _gelu_ref(x64: np.ndarray, approximate: str) -> tuple[np.ndarray, np.ndarray]:
    """gelu and gelu' in float64 (math.erf), torch's formulas."""
    if approximate == "tanh":
        c, k = math.sqrt(2 / math.pi), 0.044715
        t = np.tanh(c * (x64 + k * x64 ** 3))
        return 0.5 * x64 * (1 + t), 0.5 * (1 + t) + 0.5 * x64 * (1 - t * t) * c * (1 + 3 * k * x64 * x64)
    cdf = 0.5 * (1 + _reference(x64 / math.sqrt(2)))
    return x64 * cdf, cdf + x64 * np.exp(-0.5 * x64 * x64) / math.sqrt(2 * math.pi)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_kernels_match_float64_references(dtype, approximate):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(40_000) * 3, np.linspace(-10, 10, 2001), [0.0, -0.0]]).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    y, state = ns.gelu(x, approximate, True)
    y_plain, none = ns.gelu(x, approximate, False)  # no backward to follow: no state
    assert none is None
    np.testing.assert_array_equal(y, y_plain)
    y_ref, d_ref = _gelu_ref(x.astype(np.float64), approximate)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(y, y_ref, rtol=tol, atol=tol)
    assert np.signbit(y[-1]) and not np.signbit(y[-2])  # gelu(-0) = -0
    for st in (state, None):  # the state forward kept, or gelu' computed from x
        gx = ns.gelu_backward(g, x, st, approximate)
        assert gx.dtype == dtype
        np.testing.assert_allclose(gx, g * d_ref, rtol=tol, atol=5 * tol)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_kernels_on_0d_half_and_views(approximate):
    views = [np.linspace(-4, 4, n, dtype=np.float32).reshape(3, -1)[:, ::2] for n in (300, 3000)]
    for x in (np.array(0.75, np.float32), *views):  # 0-d; a strided view under and over 512 elements
        y, state = ns.gelu(x, approximate, True)
        assert y.shape == x.shape
        y_ref, d_ref = _gelu_ref(x.astype(np.float64), approximate)
        # (x Phi(x) for x << 0 cancels in 1 + erf, as in torch: ~1 ulp of 1 times |x|)
        np.testing.assert_allclose(y, y_ref, rtol=1e-6, atol=5e-7)
        for st in (state, None):
            gx = ns.gelu_backward(np.ones_like(x), x, st, approximate)
            assert gx.shape == x.shape and gx.dtype == np.float32 and type(gx) is np.ndarray
            np.testing.assert_allclose(gx, d_ref, rtol=1e-6, atol=1e-6)
    h = np.linspace(-4, 4, 101).astype(np.float16)  # computed in float32, rounded once
    y, state = ns.gelu(h, approximate, True)
    assert y.dtype == np.float16 and state.dtype == np.float32
    np.testing.assert_array_equal(y, ns.gelu(h.astype(np.float32), approximate, False)[0].astype(np.float16))
    assert ns.gelu_backward(np.ones_like(h), h, state, approximate).dtype == np.float16
