"""``WorkerInfo`` and ``get_worker_info``: which DataLoader worker is reading now (None in the main process)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` answers inside a worker (``worker_init_fn``, the dataset's ``__getitem__`` /
    ``__iter__``, ``collate_fn``), with torch's fields: this worker's ``id`` (0 to ``num_workers - 1``),
    ``num_workers``, its ``seed`` (the iterator's base seed + ``id``) and ``dataset``, the worker's own copy of the
    dataset (changing it changes nothing in the loader's dataset)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_local = threading.local()  # (the worker reading now, per thread)


def get_worker_info() -> WorkerInfo | None:
    """The current worker's :class:`WorkerInfo` while a DataLoader worker reads; None in the main process, as
    torch's. An IterableDataset uses it to split its stream between workers."""
    return getattr(_local, "info", None)
