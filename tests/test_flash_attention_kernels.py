"""The flash-attention kernels of ``kernel_src/flash_attention.cu`` on the CPU emulator
(``tinygrad_like.backends.cuda_emu``), launched directly (arguments packed as PyCUDA packs them) and checked
against attention written here in float64 NumPy: the output, each row's log-sum-exp, and the three gradients.

What the cases reach: both head-dim templates at and below their size (E, Ev zero-padded), E != Ev, L and S not
multiples of the tiles, causal masking with L < S and L > S, an additive mask read through broadcast (0) strides
with a row masked everywhere, operands read in place through two batch strides (a (B, T, H, hs) view of a
(B, T, H * hs) projection), a grid smaller than the batch (the grid-stride loop), and float16.
What they cannot: speed, and races between blocks (each block writes only its own rows here, by construction).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tinygrad_like.backends.cuda_emu import Emulator, EmuToolchainError

pytestmark = pytest.mark.cuda

ROWS = {64: (32, 16), 128: (16, 8)}  # query rows per block, forward and backward (FaRows in the .cu)


@pytest.fixture(scope="module")
def emu():
    e = Emulator()
    try:
        e.build(["flash_attention.cu"])
    except EmuToolchainError as err:
        pytest.skip(f"CUDA emulator unavailable: {err}")
    return e


def _p(a: np.ndarray) -> int:
    return a.ctypes.data if a is not None else 0


def _el(a: np.ndarray, axis: int) -> int:
    return a.strides[axis] // a.itemsize


def _geom(q, k, v, m, causal: bool) -> tuple:
    """AttnGeom's 20 fields for (B0, B1, L, E) views q, k, v and a (B0, B1, L, S) view m (or None)."""
    b0, b1, L, E = q.shape
    S, Ev = k.shape[2], v.shape[3]
    ms = (0, 0, 0, 0) if m is None else tuple(_el(m, a) for a in range(4))
    return (b0 * b1, b1, L, S, E, Ev, _el(q, 0), _el(q, 1), _el(q, 2), _el(k, 0), _el(k, 1), _el(k, 2),
            _el(v, 0), _el(v, 1), _el(v, 2), *ms, int(causal))


def reference(q, k, v, m, causal: bool, scale: float, g):
    """float64: (out, lse, dq, dk, dv); a row with every key masked gives zeros, -inf and no gradient."""
    q, k, v, g = (a.astype(np.float64) for a in (q, k, v, g))
    s = scale * q @ np.swapaxes(k, -1, -2)
    if m is not None:
        s = s + m.astype(np.float64)
    if causal:
        L, S = s.shape[-2:]
        s = np.where(np.arange(S)[None, :] > np.arange(L)[:, None], -np.inf, s)
    top = s.max(-1, keepdims=True)
    dead = np.isneginf(top)
    e = np.exp(s - np.where(dead, 0.0, top))
    total = e.sum(-1, keepdims=True)
    w = np.where(dead, 0.0, e / np.where(dead, 1.0, total))
    lse = np.where(dead, -np.inf, np.where(dead, 0.0, top) + np.log(np.where(dead, 1.0, total)))[..., 0]
    out = w @ v
    dv = np.swapaxes(w, -1, -2) @ g
    dp = g @ np.swapaxes(v, -1, -2)
    ds = w * (dp - (g * out).sum(-1, keepdims=True)) * scale
    return out, lse, ds @ k, np.swapaxes(ds, -1, -2) @ q, dv


def launch_all(emu, q, k, v, m, causal, scale, g, D, grid_y=None):
    """Forward, then the three backward kernels: (out, lse, dq, dk, dv) as float32 / float16 arrays."""
    sfx = "f16" if q.dtype == np.float16 else "f32"
    b0, b1, L, E = q.shape
    S, Ev = k.shape[2], v.shape[3]
    nb = b0 * b1
    gy = nb if grid_y is None else grid_y
    geom = _geom(q, k, v, m, causal)
    out = np.full((b0, b1, L, Ev), np.nan, q.dtype)
    lse = np.full((b0, b1, L), np.nan, np.float32)
    pack = "QQQQQQ" + "q" * 20 + "f"
    emu.kernel(f"flash_attn_fwd_{sfx}_d{D}").launch(
        (-(-L // ROWS[D][0]), gy, 1), (128, 1, 1),
        struct.pack("<" + pack, _p(out), _p(lse), _p(q), _p(k), _p(v), _p(m), *geom, scale))
    g = np.ascontiguousarray(g.astype(q.dtype))
    dvec = np.full(nb * L, np.nan, np.float32)
    emu.kernel(f"flash_attn_bwd_pre_{sfx}").launch((3, 1, 1), (256, 1, 1),
                                                   struct.pack("<QQQqq", _p(dvec), _p(g), _p(out), nb * L, Ev))
    np.testing.assert_allclose(dvec, (g.astype(np.float64) * out).sum(-1).ravel(), rtol=1e-5, atol=1e-5)
    dq = np.full((b0, b1, L, E), np.nan, q.dtype)
    dk = np.full((b0, b1, S, E), np.nan, q.dtype)
    dv = np.full((b0, b1, S, Ev), np.nan, q.dtype)
    emu.kernel(f"flash_attn_bwd_dq_{sfx}_d{D}").launch(
        (-(-L // ROWS[D][1]), gy, 1), (128, 1, 1),
        struct.pack("<QQQQQQQQ" + "q" * 20 + "f", _p(dq), _p(q), _p(k), _p(v), _p(m), _p(g), _p(lse), _p(dvec),
                    *geom, scale))
    emu.kernel(f"flash_attn_bwd_dkv_{sfx}_d{D}").launch(
        (-(-S // 32), gy, 1), (128, 1, 1),
        struct.pack("<QQQQQQQQQ" + "q" * 20 + "f", _p(dk), _p(dv), _p(q), _p(k), _p(v), _p(m), _p(g), _p(lse),
                    _p(dvec), *geom, scale))
    return out, lse, dq, dk, dv


def _check(got, want, tol):
    names = ("out", "lse", "dq", "dk", "dv")
    for name, a, b in zip(names, got, want):
        a = a.astype(np.float64)
        assert np.array_equal(np.isneginf(a), np.isneginf(b)), name
        fin = np.isfinite(b)
        assert np.isfinite(a[fin]).all(), name
        scale = max(1.0, float(np.abs(b[fin]).max()) if fin.any() else 1.0)
        np.testing.assert_allclose(a[fin], b[fin], rtol=0, atol=tol * scale, err_msg=name)


def _rand(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("D,E,Ev", [(64, 64, 64), (64, 40, 24), (128, 128, 128), (128, 100, 72)])
@pytest.mark.parametrize("causal", [False, True])
def test_matches_float64_attention(emu, D, E, Ev, causal):
    rng = np.random.default_rng(D + E + causal)
    L, S = (45, 37) if causal else (37, 70)  # causal with L > S: rows past S see every key
    q, k, v = _rand(rng, (1, 2, L, E)), _rand(rng, (1, 2, S, E)), _rand(rng, (1, 2, S, Ev))
    g = _rand(rng, (1, 2, L, Ev))
    scale = 1 / np.sqrt(E)
    _check(launch_all(emu, q, k, v, None, causal, scale, g, D), reference(q, k, v, None, causal, scale, g), 2e-6)


def test_causal_with_fewer_queries_than_keys_and_a_grid_smaller_than_the_batch(emu):
    rng = np.random.default_rng(1)
    q, k, v = _rand(rng, (3, 1, 20, 16)), _rand(rng, (3, 1, 50, 16)), _rand(rng, (3, 1, 50, 16))
    g = _rand(rng, (3, 1, 20, 16))
    _check(launch_all(emu, q, k, v, None, True, 0.3, g, 64, grid_y=2), reference(q, k, v, None, True, 0.3, g), 2e-6)


def test_additive_mask_through_broadcast_strides_with_a_row_masked_everywhere(emu):
    rng = np.random.default_rng(2)
    L, S = 33, 40
    q, k, v = _rand(rng, (2, 2, L, 32)), _rand(rng, (2, 2, S, 32)), _rand(rng, (2, 2, S, 32))
    base = _rand(rng, (1, 2, L, S))  # one mask per head, shared by the batch: b0 stride 0
    base[0, 1, 5] = -np.inf  # head 1's row 5 sees nothing
    base[0, 0, :, 3] = -np.inf  # key 3 hidden from head 0
    m = np.broadcast_to(base, (2, 2, L, S))
    g = _rand(rng, (2, 2, L, 32))
    got = launch_all(emu, q, k, v, m, False, 0.25, g, 64)
    want = reference(q, k, v, m, False, 0.25, g)
    _check(got, want, 2e-6)
    assert np.all(got[0][:, 1, 5] == 0) and np.all(np.isneginf(got[1][:, 1, 5])) and np.all(got[2][:, 1, 5] == 0)


def test_head_views_of_one_projection_are_read_in_place(emu):
    """q, k, v as nanoGPT makes them: (B, T, 3 * H * hs) split and viewed as (B, H, T, hs): strides
    (T * 3C, hs, 3C, 1), no copy."""
    rng = np.random.default_rng(3)
    B, T, H, hs = 2, 40, 3, 16
    C = H * hs
    qkv = _rand(rng, (B, T, 3 * C))
    q, k, v = (qkv[:, :, i * C:(i + 1) * C].reshape(B, T, H, hs).transpose(0, 2, 1, 3) for i in range(3))
    assert not q.flags.c_contiguous and _el(q, 2) == 3 * C
    g = _rand(rng, (B, H, T, hs))
    _check(launch_all(emu, q, k, v, None, True, 0.25, g, 64), reference(q, k, v, None, True, 0.25, g), 2e-6)


def test_float16_operands_float32_arithmetic(emu):
    rng = np.random.default_rng(4)
    q, k, v = (_rand(rng, s, np.float16) for s in ((1, 2, 30, 64), (1, 2, 45, 64), (1, 2, 45, 64)))
    g = _rand(rng, (1, 2, 30, 64), np.float16)
    got = launch_all(emu, q, k, v, None, True, 0.125, g, 64)
    # float16 results: within a few float16 ulps (2^-11 relative) of the float64 attention of the same operands
    _check(got, reference(q, k, v, None, True, 0.125, g), 4e-3)


def test_a_nan_score_makes_its_row_nan_whether_or_not_other_keys_were_seen_first(emu):
    """fmaxf skips NaN: a row whose first tile is all NaN would otherwise look masked (zeros). Row 3's NaN comes
    with its first key, row 9's in a later tile (key 40), through the mask; PyTorch gives NaN rows for both."""
    rng = np.random.default_rng(5)
    L, S = 12, 45
    q, k, v = _rand(rng, (1, 1, L, 16)), _rand(rng, (1, 1, S, 16)), _rand(rng, (1, 1, S, 16))
    q[0, 0, 3, 0] = np.nan  # every score of row 3
    m = np.zeros((1, 1, L, S), np.float32)
    m[0, 0, 9, 40] = np.nan
    g = _rand(rng, (1, 1, L, 16))
    out, lse, dq, dk, dv = launch_all(emu, q, k, v, m, False, 0.25, g, 64)
    for row in (3, 9):
        assert np.isnan(out[0, 0, row]).all() and np.isnan(lse[0, 0, row]) and np.isnan(dq[0, 0, row]).all()
    ok = [r for r in range(L) if r not in (3, 9)]
    assert np.isfinite(out[0, 0, ok]).all() and np.isfinite(lse[0, 0, ok]).all()
    assert np.isnan(dk).any() and np.isnan(dv).any()  # (a NaN row's weights reach every key, as in PyTorch)
