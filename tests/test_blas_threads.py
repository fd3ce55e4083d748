"""The BLAS thread policy (backends/blas_threads.py): mid-sized products on one thread, the count put back after,
only on the main thread, under whatever cap the rest of the process set."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from tinygrad_like.backends import blas_threads

threadpoolctl = pytest.importorskip("threadpoolctl")


class FakeBlas:
    """Stands in for OpenBLAS's set/get pair, recording every count set."""

    def __init__(self, count: int):
        self.count, self.calls = count, []

    def set(self, n: int) -> None:
        self.calls.append(n)
        self.count = n

    def get(self) -> int:
        return self.count


@pytest.fixture
def fake(monkeypatch):
    blas = FakeBlas(4)
    monkeypatch.setattr(blas_threads, "_found", (blas.set, blas.get, "fake"))
    monkeypatch.setattr(blas_threads, "_probed", True)
    monkeypatch.setattr(blas_threads, "_on", True)
    return blas


def _pair(m: int, k: int, n: int):
    rng = np.random.default_rng(0)
    return rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)


def test_mid_sized_product_runs_on_one_thread_and_the_count_is_put_back(fake):
    a, b = _pair(16, 128, 512)  # m*n*k = 1M: OpenBLAS would thread it
    np.testing.assert_array_equal(blas_threads.matmul(a, b), np.matmul(a, b))
    assert fake.calls == [1, 4] and fake.count == 4


@pytest.mark.parametrize("shape", [(8, 8, 8), (64, 64, 64)])
def test_small_products_switch_nothing(fake, shape):
    blas_threads.matmul(*_pair(*shape))  # at most 65536*4 = 64^3: OpenBLAS computes on the calling thread anyway
    assert fake.calls == []


def test_large_products_keep_every_thread(fake):
    a, b = _pair(512, 512, 256)  # 64M > LARGE_MNK
    assert 512 * 512 * 256 > blas_threads.LARGE_MNK
    blas_threads.matmul(a, b)
    assert fake.calls == []


def test_batched_and_vector_products_are_sized_per_product(fake):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 16, 16), dtype=np.float32)  # 64 products of 4096 each: below OpenBLAS's threshold
    blas_threads.matmul(a, a)
    assert fake.calls == []
    v, w = rng.standard_normal(1024, dtype=np.float32), rng.standard_normal((1024, 512), dtype=np.float32)
    np.testing.assert_allclose(blas_threads.matmul(v, w), v @ w, rtol=1e-5, atol=1e-4)  # m=1: 512K
    assert fake.calls == [1, 4]


def test_a_cap_of_one_set_outside_is_left_alone(fake):
    fake.count = 1  # threadpool_limits(1), OPENBLAS_NUM_THREADS=1 or tl.set_num_threads(1)
    blas_threads.matmul(*_pair(16, 128, 512))
    assert fake.calls == [] and fake.count == 1


def test_the_count_is_put_back_when_the_product_raises(fake, monkeypatch):
    def fails(a, b, out=None):
        raise MemoryError("out of memory")

    monkeypatch.setattr(blas_threads.np, "matmul", fails)
    with pytest.raises(MemoryError):
        blas_threads.matmul(*_pair(16, 128, 512))
    assert fake.calls == [1, 4] and fake.count == 4


def test_other_threads_do_not_switch(fake):
    a, b = _pair(16, 128, 512)
    t = threading.Thread(target=blas_threads.matmul, args=(a, b))
    t.start()
    t.join()
    assert fake.calls == []


def test_enable_turns_it_off_and_on(fake):
    a, b = _pair(16, 128, 512)
    assert blas_threads.enable(False) is True
    blas_threads.matmul(a, b)
    assert fake.calls == []
    assert blas_threads.enable(True) is False
    blas_threads.matmul(a, b)
    assert fake.calls == [1, 4]


def test_the_tensor_matmul_goes_through_the_policy(fake):
    import tinygrad_like as tl

    a, b = _pair(16, 128, 512)
    out = tl.tensor(a) @ tl.tensor(b)
    np.testing.assert_array_equal(out.numpy(), np.matmul(a, b))
    assert fake.calls == [1, 4]


# ---- against the real OpenBLAS NumPy loaded ---------------------------------------------------------------------
def _openblas_threads() -> int | None:
    pools = threadpoolctl.threadpool_info()
    counts = [p["num_threads"] for p in pools if p.get("internal_api") == "openblas"]
    return counts[0] if counts else None


@pytest.mark.skipif(_openblas_threads() is None, reason="NumPy's BLAS here is not OpenBLAS")
def test_real_openblas_count_is_unchanged_after_products_and_respects_threadpool_limits():
    info = blas_threads.info()
    assert info["blas"] == "openblas" and info["library"]
    before = _openblas_threads()
    a, b = _pair(16, 128, 512)
    blas_threads.matmul(a, b)
    assert _openblas_threads() == before
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        blas_threads.matmul(a, b)
        assert _openblas_threads() == 1
    assert _openblas_threads() == before


def test_environment_variable_turns_it_off():
    code = ("from tinygrad_like.backends import blas_threads; import numpy as np; "
            "blas_threads.matmul(np.ones((16, 128), np.float32), np.ones((128, 512), np.float32)); "
            "print(blas_threads._on)")
    env = {**os.environ, "TL_BLAS_POLICY": "off"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_matmul_into_writes_the_out_array_under_the_same_policy(fake):
    a, b = _pair(16, 128, 512)
    out = np.empty((16, 512), np.float32)
    assert blas_threads.matmul_into(a, b, out) is out
    np.testing.assert_array_equal(out, np.matmul(a, b))
    assert fake.calls == [1, 4]
