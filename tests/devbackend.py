"""A second memory space for tests: the simulated device (``backends/sim.py``) under its own name, ``testdev``.

Tests of the ``Storage`` residency state machine (cpu / gpu / both, dirty side) register it next to ``sim`` so they
start from fresh counters and an empty pool, whatever other tests did on ``sim``. It adds an allocation count and a
way to reset the transfer counts.

>>> import tinygrad_like as tl
>>> from tinygrad_like.device import register_device, unregister_device
>>> dev = register_device("testdev", DevBackend())
>>> tl.ones(3, device="testdev").storage.residency
'gpu'
>>> unregister_device("testdev")
"""

from __future__ import annotations

from tinygrad_like.backends.sim import SimBackend


class DevBackend(SimBackend):
    """The simulated device, with ``allocs`` counted and ``reset_counts()``."""

    name = "testdev"

    def __init__(self) -> None:
        super().__init__()
        self.allocs = 0

    def reset_counts(self) -> None:
        self.uploads = self.downloads = self.allocs = 0

    def alloc(self, numel: int, dtype):
        self.allocs += 1
        return super().alloc(numel, dtype)
