"""Choosing among kernels that compute the same thing, by timing them on the device at first use.

A kernel family (the float32 GEMM's tile shapes and load widths) has several variants that give the same result;
which is fastest depends on the GPU and on the problem's shape. At the first launch of a *shape class* (the sizes
rounded up to powers of two, plus whatever the caller adds: a layout, a dtype) every applicable variant runs on
the real operands, each timed with CUDA events (one warm-up launch, then the median of ``REPEATS``), and the
fastest is kept: in memory, and in a JSON file per device under the kernel cache (``cache_dir()``), so the next
process does not time again. The last variant timed leaves the output computed, so choosing costs a few extra
launches once per class and nothing after.

Off on the CUDA emulator (its timings say nothing about a GPU; the first variant applicable is taken), and
whenever ``TL_CUDA_AUTOTUNE=0``. Tests inject a timer.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from .compiler import cache_dir, kernel_dir

REPEATS = 3


def sources_hash(*names: str) -> str:
    """A short hash of ``kernel_src`` files: the version of the variants a choice was made among."""
    h = hashlib.sha256()
    for name in names:
        h.update((kernel_dir() / name).read_bytes())
    return h.hexdigest()[:16]


def shape_class(*sizes: int) -> tuple:
    """Each size rounded up to a power of two (at least 1): problems in one class take the same variant."""
    return tuple(1 << max(0, int(n) - 1).bit_length() for n in sizes)


class Autotuner:
    """``choose(family, key, variants)`` -> the name of the fastest variant for ``key``, timing them the first time.

    ``variants`` are ``(name, launch)`` pairs; ``launch()`` enqueues that variant on the real operands.
    ``time_launch(launch) -> seconds`` times one call (CUDA events on the GPU); None turns timing off."""

    def __init__(self, device_name: str, time_launch: Callable[[Callable[[], None]], float] | None,
                 path: Path | None = None, version: str = ""):
        self.device_name = device_name
        self.version = version  # (of the kernels' sources: choices made for other sources are timed again)
        self.time_launch = time_launch
        safe = "".join(c if c.isalnum() else "_" for c in device_name)
        self.path = path if path is not None else cache_dir() / f"autotune-{safe}.json"
        self.choices: dict[str, str] = {}
        self.timings: dict[str, dict[str, float]] = {}  # what was measured in this process (for reports)
        self._loaded = False

    @property
    def enabled(self) -> bool:
        return self.time_launch is not None and os.environ.get("TL_CUDA_AUTOTUNE", "1") != "0"

    def _stored(self) -> dict[str, str]:
        """The choices in the file, if it is this device's and this version's."""
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        if not (isinstance(data, dict) and data.get("device") == self.device_name
                and data.get("version", "") == self.version and isinstance(data.get("choices"), dict)):
            return {}
        return {k: v for k, v in data["choices"].items() if isinstance(v, str)}

    def _load(self) -> None:
        self._loaded = True
        self.choices.update(self._stored())

    def _save(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            merged = {**self._stored(), **self.choices}  # (another process's choices since we read are kept)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"device": self.device_name, "version": self.version, "choices": merged},
                                      indent=1, sort_keys=True))
            tmp.replace(self.path)  # (atomic: a reader never sees half a file)
        except OSError:
            pass  # a read-only cache: the choice still holds for this process

    def choose(self, family: str, key: tuple, variants: Sequence[tuple[str, Callable[[], None]]]) -> tuple[str, bool]:
        """(the variant to use for ``key``, whether it already ran): the first time (tuning on) each one is run
        and timed, and the output holds the result on return. With tuning off the first variant is taken."""
        names = [name for name, _ in variants]
        if len(variants) == 1 or not self.enabled:
            return names[0], False
        if not self._loaded:
            self._load()
        k = f"{family}:{'x'.join(map(str, key))}"
        chosen = self.choices.get(k)
        if chosen in names:
            return chosen, False
        times = {}
        for name, launch in variants:
            launch()  # warm-up (and the first launch of a freshly loaded module)
            times[name] = statistics.median(self.time_launch(launch) for _ in range(REPEATS))
        chosen = min(times, key=times.get)
        self.choices[k], self.timings[k] = chosen, times
        self._save()
        return chosen, True
