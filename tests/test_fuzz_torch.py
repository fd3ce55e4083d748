"""The bounded, seeded slice of the differential fuzzer (``tests/fuzz_torch.py``) that ``make test`` runs.

2,000 random programs (seeds 0-1999, ~4 s) of op chains with broadcasting, views, indexing, in-place writes on
non-leaf tensors and views, reductions, matmul and conv/pool, each compared with PyTorch step by step and
after backward. ``make fuzz`` runs a long slice from another seed. A mismatch prints the program.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from fuzz_torch import Mismatch, run_program  # noqa: E402

BLOCKS = 20
PER_BLOCK = 100


@pytest.mark.parametrize("block", range(BLOCKS))
def test_random_programs_agree_with_torch(block):
    failures = []
    for seed in range(block * PER_BLOCK, (block + 1) * PER_BLOCK):
        try:
            run_program(seed, steps=10)
        except Mismatch as e:
            failures.append(str(e))
    assert not failures, f"{len(failures)} program(s) differ from torch; the first:\n{failures[0]}"


def test_the_fuzzer_catches_a_divergence(monkeypatch):
    """The harness itself: break one op and the slice must notice."""
    import tinygrad_like as tl

    real = tl.Tensor.tanh
    monkeypatch.setattr(tl.Tensor, "tanh", lambda self: real(self) * 1.01)
    with pytest.raises(Mismatch, match="tanh: values differ"):
        for seed in range(300):
            run_program(seed, steps=10)
