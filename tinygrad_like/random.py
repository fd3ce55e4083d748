"""The seedable default generator: ``tl.manual_seed(s)`` makes every random op reproducible.

It is NumPy's Philox, a counter-based generator: the state is a key (from the seed) and a counter
(the offset), so a stream can be saved and replayed exactly (gradient checkpointing needs that).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

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


def set_rng_state(new_state: dict) -> None:
    default_generator.set_state(new_state)


def initial_seed() -> int:
    """The seed the default generator was last seeded with (as ``torch.initial_seed``)."""
    return default_generator.initial_seed()


def seed() -> int:
    """Seed the default generator with a non-deterministic number and return it (as ``torch.seed``)."""
    s = int(np.random.SeedSequence().entropy) % (1 << 63)
    default_generator.manual_seed(s)
    return s


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type=None) -> Iterator[None]:
    """Run the ``with`` block on a forked random stream: the default generator's state is restored on exit.

    tinygrad_like draws every device's random numbers from this one generator, so ``devices`` and ``device_type``
    change nothing (they are accepted as torch's are)."""
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)


def thread_safe_generator() -> Generator | None:
    """The generator of the DataLoader thread worker this runs in, else None (the default generator), as torch."""
    from .utils.data import get_worker_info  # (random is imported by the data loader: look it up when called)
    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" and getattr(info, "rng", None):
        return getattr(info.rng, "torch_generator", info.rng)
    return None
