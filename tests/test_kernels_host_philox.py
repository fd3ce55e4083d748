"""Host-side checks of kernel_src/philox.cuh (the math of kernel_src/philox.cu), against NumPy's Philox.

The per-block work items of the Philox kernels are compiled for the CPU with nvcc (tests/cuda_host/
philox_harness.cu) and run over every block of the grid; the tests show that the device-side generator
reproduces ``np.random.Philox`` (Philox4x64-10) word for word for several keys, counters (carries across
counter words included) and stream offsets, that the float32 uniforms equal ``Generator(Philox).random(
dtype=np.float32)`` bit for bit, and that the dropout keep-mask equals NumpyNNPrimitives.dropout_mask's.
Only verified on a GPU: ``__umul64hi`` (the device's 64-bit high multiply; the host uses __int128) and the
device libm for the Box-Muller normals (checked here against NumPy to float32 rounding).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from host_harness import build_harnesses

pytestmark = pytest.mark.cuda

M64 = (1 << 64) - 1

KEYS = [(0, 0), (1, 2), (0xDEADBEEFCAFEF00D, 0x0123456789ABCDEF), (M64, M64)]
COUNTERS = [(0, 0, 0, 0), (5, 0, 0, 0), (M64 - 2, M64, 0, 7), (M64, M64, M64, 3)]
OFFSETS_N = [(0, 1), (0, 13), (3, 9), (5, 64), (17, 3)]


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return build_harnesses(tmp_path_factory, "philox_harness")[0]


def run(harness, tmp_path, op, key, ctr, offset, n, dtype, *extra):
    out = tmp_path / f"{op}.bin"
    args = [str(harness), op, *map(str, key), *map(str, ctr), str(offset), str(n), str(out), *map(str, extra)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return np.fromfile(out, dtype)


def numpy_philox(key, ctr):
    return np.random.Philox(key=np.array(key, np.uint64), counter=np.array(ctr, np.uint64))


def stream_position(bit_generator_state: dict) -> tuple[tuple, tuple, int]:
    """(key, counter, offset64) at which the kernels continue a NumPy Philox in any state: the next
    ``random_raw()`` word is word64(offset64) of PhiloxState(key, counter). (For 32-bit draws, the next
    uint32 is word32(2 * offset64 - 1) when ``has_uint32`` is set, else word32(2 * offset64).)"""
    st = bit_generator_state["state"]
    ctr = sum(int(w) << (64 * i) for i, w in enumerate(st["counter"]))
    pos = bit_generator_state["buffer_pos"]
    if pos < 4:  # the buffer holds the block of the current counter: continue inside it
        ctr, offset = (ctr - 1) % (1 << 256), pos
    else:
        offset = 0
    return tuple(int(k) for k in st["key"]), tuple((ctr >> (64 * i)) & M64 for i in range(4)), offset


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("ctr", COUNTERS)
def test_raw_u64_matches_numpy_word_for_word(harness, tmp_path, key, ctr):
    for offset, n in OFFSETS_N:
        want = numpy_philox(key, ctr).random_raw(offset + n)[offset:]
        got = run(harness, tmp_path, "raw_u64", key, ctr, offset, n, np.uint64)
        np.testing.assert_array_equal(got, want, err_msg=f"key={key} ctr={ctr} offset={offset}")


@pytest.mark.parametrize("key", KEYS[1:3])
@pytest.mark.parametrize("ctr", COUNTERS[:3])
def test_raw_u32_and_uniform_f32_match_numpy(harness, tmp_path, key, ctr):
    for offset, n in OFFSETS_N:
        words = numpy_philox(key, ctr).random_raw((offset + n + 1) // 2 + 1).view(np.uint32)
        got = run(harness, tmp_path, "raw_u32", key, ctr, offset, n, np.uint32)
        np.testing.assert_array_equal(got, words[offset:offset + n])
        # Generator.random(float32) draws next_uint32 >> 8 scaled by 2^-24: bit-identical
        want = np.random.Generator(numpy_philox(key, ctr)).random(offset + n, dtype=np.float32)[offset:]
        got = run(harness, tmp_path, "uniform_f32", key, ctr, offset, n, np.float32)
        np.testing.assert_array_equal(got, want)


def test_uniform_f16_is_exact_and_below_one(harness, tmp_path):
    key, ctr, n = (7, 9), (0, 0, 0, 0), 4096
    words = numpy_philox(key, ctr).random_raw(n // 2).view(np.uint32)
    got = run(harness, tmp_path, "uniform_f16", key, ctr, 0, n, np.float16)
    np.testing.assert_array_equal(got.astype(np.float64), (words >> 21) * 2.0 ** -11)
    assert got.min() >= 0 and got.max() < 1


def test_continues_a_numpy_generator_mid_block(harness, tmp_path):
    for draws in (0, 1, 3, 4, 6):
        bg = numpy_philox((11, 12), (M64, 0, 0, 0))
        bg.random_raw(draws)
        key, ctr, offset = stream_position(bg.state)
        want = bg.random_raw(10)
        got = run(harness, tmp_path, "raw_u64", key, ctr, offset, 10, np.uint64)
        np.testing.assert_array_equal(got, want, err_msg=f"after {draws} draws")


def box_muller_reference(words32: np.ndarray) -> np.ndarray:
    lo, hi = words32[0::2].astype(np.float32), (words32[1::2] >> 8).astype(np.float32)
    u1 = (lo + np.float32(1)) * np.float32(2.0 ** -32)
    u2 = hi * np.float32(2.0 ** -24)
    r = np.sqrt(np.float32(-2) * np.log(u1))
    theta = np.float32(2 * np.pi) * u2
    z = np.empty(words32.size, np.float32)
    z[0::2], z[1::2] = r * np.cos(theta), r * np.sin(theta)
    return z


def test_normal_formula_and_moments(harness, tmp_path):
    key, ctr, n = (3, 4), (0, 0, 0, 0), 200_000
    words = numpy_philox(key, ctr).random_raw(n // 2 + 8).view(np.uint32)
    z = box_muller_reference(words)
    got = run(harness, tmp_path, "normal_f32", key, ctr, 0, n, np.float32, 0.0, 1.0)
    np.testing.assert_allclose(got, z[:n], rtol=2e-5, atol=2e-6)
    assert abs(got.mean()) < 0.01 and abs(got.std() - 1) < 0.01
    assert np.isfinite(got).all() and np.abs(got).max() < 6.7
    # an odd offset starts with the sine of a pair; mean/std are applied after
    got = run(harness, tmp_path, "normal_f32", key, ctr, 5, 11, np.float32, 2.0, 0.5)
    np.testing.assert_allclose(got, 2.0 + 0.5 * z[5:16], rtol=2e-5, atol=2e-6)
    got16 = run(harness, tmp_path, "normal_f16", key, ctr, 5, 11, np.float16, 2.0, 0.5)
    np.testing.assert_allclose(got16, (2.0 + 0.5 * z[5:16]).astype(np.float16), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9])
def test_dropout_matches_the_numpy_backend_mask(harness, tmp_path, p):
    from tinygrad_like.backends.numpy_nn import NumpyNNPrimitives

    class Gen:  # what dropout_mask expects: an object with np_generator()
        def __init__(self, key):
            self._g = np.random.Generator(numpy_philox(key, (0, 0, 0, 0)))

        def np_generator(self):
            return self._g

    import tinygrad_like as tl

    key, n = (21, 22), 1001
    scale = np.float32(1.0 / (1.0 - p))
    want_mask = NumpyNNPrimitives.dropout_mask(Gen(key), (n,), p, tl.float32)  # keep * scale
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    got = run(harness, tmp_path, "dropout_f32", key, (0, 0, 0, 0), 0, n, np.float32, p, repr(float(scale)),
              tmp_path / "x.bin", tmp_path / "mask.bin")
    mask = np.fromfile(tmp_path / "mask.bin", np.uint8)
    np.testing.assert_array_equal(mask.astype(bool), want_mask != 0)
    np.testing.assert_array_equal(got, np.where(mask != 0, x * scale, np.float32(0)))
    # backward from the mask
    g = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    (tmp_path / "g.bin").write_bytes(g.tobytes())
    gb = run(harness, tmp_path, "dropout_backward_f32", key, (0, 0, 0, 0), 0, n, np.float32, repr(float(scale)),
             tmp_path / "g.bin", tmp_path / "mask.bin")
    np.testing.assert_array_equal(gb, np.where(mask != 0, g * scale, np.float32(0)))
    # float16: same mask, values rounded once
    (tmp_path / "x16.bin").write_bytes(x.astype(np.float16).tobytes())
    got16 = run(harness, tmp_path, "dropout_f16", key, (0, 0, 0, 0), 0, n, np.float16, p, repr(float(scale)),
                tmp_path / "x16.bin", tmp_path / "mask16.bin")
    np.testing.assert_array_equal(np.fromfile(tmp_path / "mask16.bin", np.uint8), mask)
    want16 = np.where(mask != 0, x.astype(np.float16).astype(np.float32) * scale, 0).astype(np.float16)
    np.testing.assert_array_equal(got16, want16)


def test_continues_a_numpy_generator_float32_stream(harness, tmp_path):
    for draws in (0, 1, 2, 5, 8, 9):
        gen = np.random.Generator(numpy_philox((5, 6), (0, 0, 0, 0)))
        gen.random(draws, dtype=np.float32)
        st = gen.bit_generator.state
        key, ctr, offset64 = stream_position(st)
        offset32 = 2 * offset64 - (1 if st["has_uint32"] else 0)
        want = gen.random(12, dtype=np.float32)
        got = run(harness, tmp_path, "uniform_f32", key, ctr, offset32, 12, np.float32)
        np.testing.assert_array_equal(got, want, err_msg=f"after {draws} draws")
