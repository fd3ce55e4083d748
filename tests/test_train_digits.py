"""End to end: an MLP and a CNN trained on the digits track PyTorch step for step and learn.

The training code is ``examples/digits.py`` (so the example a learner runs is the one tested).
Both models start from torch's initial weights and see the same batches; every one of the first
200 losses must be within 1e-3 of torch's, and the test accuracy must reach 97% (MLP) and 98%
(CNN). Wall time is reported by the example and recorded in benchmarks/RESULTS.md, not asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sklearn")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import digits  # noqa: E402


@pytest.mark.parametrize("kind,min_accuracy", [("mlp", 0.97), ("cnn", 0.98)])
def test_digits_tracks_torch_and_reaches_accuracy(kind, min_accuracy):
    run = digits.train(kind, track_steps=200)
    assert len(run.torch_losses) == 200
    gaps = np.abs(np.subtract(run.losses[:200], run.torch_losses))
    assert gaps.max() < 1e-3, f"largest loss gap {gaps.max():.2e} at step {int(gaps.argmax())}"
    assert np.mean(run.losses[-50:]) < 0.1 * np.mean(run.losses[:10])  # it learned
    assert run.accuracy >= min_accuracy, f"{kind} test accuracy {run.accuracy:.2%} < {min_accuracy:.0%}"


def test_models_are_the_same_architecture_in_both_libraries():
    import torch

    import tinygrad_like as tl
    for kind in ("mlp", "cnn"):
        ours, theirs = digits.build(tl, kind), digits.build(torch, kind)
        assert repr(ours) == repr(theirs)
        assert [p.shape for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
