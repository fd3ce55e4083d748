"""The autotuner (backends/cuda/autotune.py): which variant it keeps, when it times, what it remembers; and the
float32 GEMM's variants on the ``cuda`` device (the emulator where there is no GPU) with an injected timer."""

from __future__ import annotations

import json

import numpy as np
import pytest
from emu_driver import cuda_device

import tinygrad_like as tl
from tinygrad_like.backends.cuda.autotune import Autotuner, shape_class


def _variants(log: list, names=("a", "b", "c")):
    return [(n, lambda n=n: log.append(n)) for n in names]


def _timer(costs: dict, log: list):
    """A fake ``time_launch``: runs the launch, and reports the cost of whichever variant it ran."""
    def time_launch(launch):
        launch()
        return costs[log[-1]]
    return time_launch


def test_the_fastest_variant_is_kept_after_timing_each_once_per_class(tmp_path):
    log: list = []
    tuner = Autotuner("GPU X", _timer({"a": 3.0, "b": 1.0, "c": 2.0}, log), tmp_path / "t.json")
    assert tuner.choose("gemm", (64, 64, 64), _variants(log)) == ("b", True)
    assert sorted(set(log)) == ["a", "b", "c"] and len(log) == 3 * 4  # a warm-up and three timed runs each
    log.clear()
    assert tuner.choose("gemm", (64, 64, 64), _variants(log)) == ("b", False) and log == []  # remembered
    assert tuner.timings["gemm:64x64x64"] == {"a": 3.0, "b": 1.0, "c": 2.0}
    saved = json.loads((tmp_path / "t.json").read_text())
    assert saved == {"device": "GPU X", "version": "", "choices": {"gemm:64x64x64": "b"}}
    # a new process on the same device reads the choice and times nothing; another device does not
    again = Autotuner("GPU X", _timer({}, log), tmp_path / "t.json")
    assert again.choose("gemm", (64, 64, 64), _variants(log)) == ("b", False) and log == []
    other = Autotuner("GPU Y", _timer({"a": 1.0, "b": 2.0, "c": 3.0}, log), tmp_path / "t.json")
    assert other.choose("gemm", (64, 64, 64), _variants(log)) == ("a", True)
    # other kernel sources (a new version of the variants) are timed again
    newer = Autotuner("GPU X", _timer({"a": 1.0, "b": 2.0, "c": 3.0}, log), tmp_path / "u.json", version="v2")
    old = {"device": "GPU X", "version": "v1", "choices": {"gemm:64x64x64": "b"}}
    (tmp_path / "u.json").write_text(json.dumps(old))
    assert newer.choose("gemm", (64, 64, 64), _variants(log)) == ("a", True)


def test_two_processes_tuning_at_once_keep_both_choices(tmp_path):
    log: list = []
    one = Autotuner("GPU X", _timer({"a": 1.0, "b": 2.0}, log), tmp_path / "t.json")
    two = Autotuner("GPU X", _timer({"a": 2.0, "b": 1.0}, log), tmp_path / "t.json")
    assert one.choose("gemm", (1,), _variants(log, ("a", "b")))[0] == "a"
    assert two.choose("gemm", (2,), _variants(log, ("a", "b")))[0] == "b"
    assert json.loads((tmp_path / "t.json").read_text())["choices"] == {"gemm:1": "a", "gemm:2": "b"}


def test_without_a_timer_or_with_tuning_off_the_first_variant_is_taken_unrun(tmp_path, monkeypatch):
    log: list = []
    assert Autotuner("emu", None, tmp_path / "t.json").choose("gemm", (8,), _variants(log)) == ("a", False)
    monkeypatch.setenv("TL_CUDA_AUTOTUNE", "0")
    tuner = Autotuner("GPU X", _timer({"a": 5.0, "b": 1.0, "c": 1.0}, log), tmp_path / "t.json")
    assert tuner.choose("gemm", (8,), _variants(log)) == ("a", False) and log == []
    assert not (tmp_path / "t.json").exists()


def test_a_stale_or_unreadable_cache_is_timed_again(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("{not json")
    log: list = []
    tuner = Autotuner("GPU X", _timer({"a": 2.0, "b": 1.0}, log), path)
    assert tuner.choose("gemm", (1,), _variants(log, ("a", "b"))) == ("b", True)
    path.write_text(json.dumps({"device": "GPU X", "choices": {"gemm:1": "gone"}}))
    log.clear()
    assert Autotuner("GPU X", _timer({"a": 2.0, "b": 1.0}, log), path).choose(
        "gemm", (1,), _variants(log, ("a", "b"))) == ("b", True)


def test_shape_classes_round_up_to_powers_of_two():
    assert shape_class(1, 2, 3, 64, 65, 0) == (1, 2, 4, 64, 128, 1)


@pytest.fixture(scope="module")
def cuda():
    yield from cuda_device()


def test_the_float32_gemm_variants_on_the_device(cuda, tmp_path, monkeypatch):
    """Row-major float32 operands with K, N multiples of 4 may take the 16-byte-load kernel; the tuner times both
    (here with a timer that says the plain one is faster) and the result is right whichever ran."""
    be = cuda.raw_backend
    launched: list = []
    launch = be.rt.launch
    monkeypatch.setattr(be.rt, "launch", lambda name, *a, **k: (launched.append(name), launch(name, *a, **k))[1])
    costs = {"gemm_f32": 1.0, "gemm_f32_vec": 2.0}
    monkeypatch.setattr(be, "tuner", Autotuner("GPU X", _timer(costs, launched), tmp_path / "t.json"))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((70, 36)).astype(np.float32), rng.standard_normal((36, 44)).astype(np.float32)
    out = (tl.tensor(a, device="cuda") @ tl.tensor(b, device="cuda")).numpy()
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    assert set(launched) >= {"gemm_f32", "gemm_f32_vec"}
    launched.clear()
    out = (tl.tensor(a[:66], device="cuda") @ tl.tensor(b, device="cuda")).numpy()  # (66, 36, 44): the class of
    assert launched.count("gemm_f32") == 1 and "gemm_f32_vec" not in launched  # (70, 36, 44), remembered
    np.testing.assert_allclose(out, a[:66] @ b, rtol=1e-5, atol=1e-5)
