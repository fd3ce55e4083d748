"""``tl.cuda.random`` (``torch.cuda.manual_seed``, ``get_rng_state`` ...): one generator serves every device here.

tinygrad_like draws CUDA tensors' random numbers from the default generator (``tl.manual_seed``'s), so with CUDA
these seed and read that generator; without CUDA the seeding calls are no-ops and ``get_rng_state_all()`` is
``[]``, as PyTorch's on a machine without a GPU (which seeds CUDA generators nothing then reads), while
``get_rng_state()`` and ``initial_seed()`` raise as its do.
"""

from __future__ import annotations

import random as _pyrandom
from collections.abc import Iterable
from typing import Any

from .. import random as _random
from ..backends.cuda.probe import probe
from ._base import checked_index, need_cuda

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]


def get_rng_state(device: Any = "cuda") -> dict:
    """The generator's state (a dict here, where PyTorch gives a byte tensor): pass it to :func:`set_rng_state`."""
    checked_index(device, "get_rng_state()")
    return _random.get_rng_state()


def get_rng_state_all() -> list:
    """One state per GPU: ``[]`` without CUDA."""
    return [get_rng_state(i) for i in range(probe().device_count)] if probe().available else []


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Restore a state from :func:`get_rng_state`; a no-op without CUDA (PyTorch queues it for a GPU that never
    comes)."""
    if probe().available:
        checked_index(device, "set_rng_state()")
        _random.set_rng_state(new_state)


def set_rng_state_all(new_states: Iterable[Any]) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: int) -> None:
    """Seed the generator CUDA ops draw from (the default one); a no-op without CUDA."""
    if probe().available:
        _random.manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def seed() -> None:
    """Seed with a random number (a no-op without CUDA)."""
    if probe().available:
        manual_seed(_pyrandom.getrandbits(63))


def seed_all() -> None:
    seed()


def initial_seed() -> int:
    need_cuda("initial_seed()")
    return _random.initial_seed()
