"""``benchmarks/cuda_gpt.py``'s transformer step at a toy size on the ``cuda`` device (the CUDA emulator where
there is no GPU), beside torch on the CPU: the benchmark's own code trains both from the same weights, and this
checks what its GPU run reports: the same losses step by step, no host fallback and no driver allocation once
warm, and the launch count it measures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from emu_driver import cuda_device

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import cuda_gpt  # noqa: E402

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def cuda():
    yield from cuda_device()


def test_a_small_gpt_trains_on_cuda_as_torch_does_with_no_host_fallback(cuda):
    cfg = {"n_layer": 2, "n_head": 2, "n_embd": 32, "block": 16, "batch": 3, "vocab": 11}
    r = cuda_gpt.bench_gpt(torch, cfg, steps=4, repeats=2, torch_device="cpu")
    assert len(r["losses"]) == 4 and r["losses"][-1] < r["losses"][0]  # it learns (4 steps on 4 batches of noise)
    assert r["max_rel_loss_diff"] < 1e-5, (r["losses"], r["torch_losses"])
    assert r["host_fallbacks_while_timed"] == {}
    assert r["driver_allocs_while_timed"] == 0
    assert 50 < r["launches_per_step"] < 2000
