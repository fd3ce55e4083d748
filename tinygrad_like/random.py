"""The seedable default generator: ``tl.manual_seed(s)`` makes every random op reproducible.

It is NumPy's Philox, a counter-based generator: the state is a key (from the seed) and a counter
(the offset), so a stream can be saved and replayed exactly (gradient checkpointing needs that).
"""

from __future__ import annotations

import os

import numpy as np

_REFUSING: list[str] = []  # why random draws are refused now (vmap's randomness='error'); empty: allowed


class Generator:
    """A random stream; ``get_state``/``set_state`` save and replay it."""

    __slots__ = ("_seed", "_np")

    def __init__(self, seed: int = 0):
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> Generator:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"manual_seed expects an int, got {type(seed).__name__}")
        self._seed = seed
        self._np = np.random.Generator(np.random.Philox(seed % (1 << 64)))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def np_generator(self) -> np.random.Generator:
        if _REFUSING:  # (inside vmap(..., randomness='error'): torch refuses random ops there)
            raise RuntimeError(_REFUSING[-1])
        return self._np

    def get_state(self) -> dict:
        return {"seed": self._seed, "bit_generator": self._np.bit_generator.state}

    def set_state(self, state: dict) -> None:
        self._seed = state["seed"]
        bg = np.random.Philox()
        bg.state = state["bit_generator"]
        self._np = np.random.Generator(bg)


default_generator = Generator(0)


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (as ``torch.manual_seed``)."""
    return default_generator.manual_seed(seed)


def get_rng_state() -> dict:
    return default_generator.get_state()


def set_rng_state(state: dict) -> None:
    default_generator.set_state(state)


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def seed() -> int:
    """Seed the default generator with a non-deterministic number (from the OS), and return it (as torch)."""
    s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
    default_generator.manual_seed(s)
    return s
