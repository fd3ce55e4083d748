"""``DataLoader``, as ``torch.utils.data.dataloader``: batches from a dataset, a sampler and a collate function."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import random as _random
from ...random import Generator
from ._collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` answers inside ``worker_init_fn``, with torch's fields: this worker's ``id``
    (0 to ``num_workers - 1``), ``num_workers``, its ``seed`` (the epoch's base seed + ``id``) and ``dataset``, the
    worker's own copy of the dataset (as in torch, changing it changes nothing in the loader's dataset)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's :class:`WorkerInfo` inside a DataLoader's ``worker_init_fn``; None anywhere else (the
    loader reads its dataset in this process, as torch's main process)."""
    return _worker_info


def _tqdm() -> Callable[..., Any]:
    try:
        from tqdm.auto import tqdm  # (an optional dependency: imported only where it is used)
    except ImportError as e:
        raise ImportError("DataLoader(progress=True) needs the tqdm package: pip install tqdm") from e
    return tqdm


def _check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"DataLoader: {name} must be True or False, got {value!r}")
    return bool(value)


class DataLoader:
    """Iterate over ``dataset`` in batches, with torch's arguments and defaults.

    The indices come from ``sampler`` (default: ``SequentialSampler``, or ``RandomSampler`` with
    ``shuffle=True``, drawing a new order each epoch from ``generator`` or the default generator, so
    ``tl.manual_seed`` makes runs reproducible) grouped by ``batch_sampler`` (default: ``BatchSampler`` of
    ``batch_size``, dropping a short last batch with ``drop_last``); ``batch_size=None`` turns batching off
    (each sample, with NumPy arrays made tensors). An ``IterableDataset`` is read in its own order. Batches are
    made by ``collate_fn`` (default: :func:`default_collate`, as torch's: tensors stacked, tuples of fields
    become a list of batches, dicts a dict). A ``TensorDataset`` is batched with one ``index_select`` per tensor
    instead of a Python loop per sample (same result: a list of tensors). Batches are new tensors, never views
    of the dataset.

    ``num_workers``, ``pin_memory``, ``timeout``, ``worker_init_fn``, ``multiprocessing_context``,
    ``prefetch_factor``, ``persistent_workers``, ``pin_memory_device`` and ``in_order`` are accepted and checked
    as torch checks them, and everything runs in this process: no worker processes are started, no memory is
    pinned, and the dataset is read once, in order, as with ``num_workers=0`` (an IterableDataset that shards
    itself by ``get_worker_info()`` sees None and yields everything). What torch does when it starts its workers
    is kept: with ``num_workers > 0``, ``iter(loader)`` calls ``worker_init_fn(i)`` for each worker id ``i`` in
    turn (once per epoch; once in all with ``persistent_workers``), with ``get_worker_info()`` answering inside it
    (each worker gets its own shallow copy of the dataset, and a seed: a base read per epoch off ``generator``
    or the default generator, plus ``i``). Nothing is reseeded: the calls run in this process, so what the
    function seeds or sets globally, it sets here. Extra (ours): ``progress=True`` shows a tqdm bar labelled
    ``desc``.

    >>> import tinygrad_like as tl
    >>> ds = TensorDataset(tl.arange(6))
    >>> loader = DataLoader(ds, batch_size=4, shuffle=True, generator=tl.Generator(0))
    >>> len(loader), sorted(i for (b,) in loader for i in b.tolist())
    (2, [0, 1, 2, 3, 4, 5])
    >>> len(DataLoader(ds, batch_size=4, drop_last=True))
    1
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list[Any]], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable | None = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True, progress: bool = False, desc: str | None = None):
        iterable = isinstance(dataset, IterableDataset)
        if not iterable and not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise TypeError(f"DataLoader needs a map-style dataset with __getitem__ and __len__ (or an "
                            f"IterableDataset), got {type(dataset).__name__}")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2  # (torch's default once there are workers)
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if shuffle is not None:
            _check_flag("shuffle", shuffle)
        drop_last = _check_flag("drop_last", drop_last)
        if generator is not None and not isinstance(generator, Generator):
            hint = " (a NumPy Generator won't do: use tl.Generator(seed))" if isinstance(
                generator, np.random.Generator) else ""
            raise TypeError(f"DataLoader: generator must be a tinygrad_like Generator or None, got "
                            f"{type(generator).__name__}{hint}")
        if desc is not None and not isinstance(desc, str):
            raise TypeError(f"DataLoader: desc must be a string or None, got {type(desc).__name__}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be callable, got {type(collate_fn).__name__}")
        if iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            if sampler is not None and shuffle:
                raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                                 "drop_last")
        elif isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size!r}")
        if sampler is None and not iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, int(batch_size), drop_last)

        self.dataset = dataset
        self.batch_size = None if batch_size is None else int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.pin_memory = bool(pin_memory)
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory_device = pin_memory_device
        self.in_order = in_order
        self.generator = generator
        self.progress = _check_flag("progress", progress)
        self.desc = desc
        self._auto_collation = batch_sampler is not None or (iterable and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._user_collate = collate_fn not in (default_collate, default_convert)
        self._progress_bar = _tqdm() if self.progress else None  # fail now, not in the middle of training
        self._workers_started = 0  # (how many times: each start's seeds differ)

    def __len__(self) -> int:
        """Number of batches per epoch (for an IterableDataset: from its ``__len__``, if it has one)."""
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)

    def __repr__(self) -> str:
        return (f"DataLoader({type(self.dataset).__name__} of {len(self.dataset)}, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, drop_last={self.drop_last})")

    def _fast(self) -> bool:
        """A TensorDataset whose sample access is not overridden can be batched by index_select."""
        ds = self.dataset
        return (not self._user_collate and isinstance(ds, TensorDataset)
                and type(ds).__getitem__ is TensorDataset.__getitem__ and self.batch_sampler is not None)

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers > 0 and not (self.persistent_workers and self._workers_started):
            self._start_workers()
        batches = self._batches()
        if self._progress_bar is not None:
            try:
                total = len(self)
            except TypeError:
                total = None
            return iter(self._progress_bar(batches, total=total, desc=self.desc, unit="batch"))
        return batches

    def _start_workers(self) -> None:
        """What torch's worker processes do when they start, here in turn: ``worker_init_fn(id)`` with
        ``get_worker_info()`` set for that worker. (A loader without one has nothing to run, and draws no seed.)"""
        self._workers_started += 1
        fn = self.worker_init_fn
        if fn is None:
            return
        global _worker_info
        gen = self.generator if self.generator is not None else _random.default_generator
        base = _peek_seed(gen, self._workers_started)
        for i in range(self.num_workers):
            _worker_info = WorkerInfo(i, self.num_workers, base + i, _copy_of(self.dataset))
            try:
                fn(i)
            finally:
                _worker_info = None

    def _fetch(self, idx) -> list:
        ds = self.dataset
        many = getattr(ds, "__getitems__", None)
        if callable(many):
            return many([int(i) for i in idx])
        return [ds[int(i)] for i in idx]

    def _batches(self) -> Iterator[Any]:
        ds, collate = self.dataset, self.collate_fn
        if isinstance(ds, IterableDataset):
            if self.batch_size is None:
                for sample in ds:
                    yield collate(sample)
                return
            batch = []
            for sample in ds:
                batch.append(sample)
                if len(batch) == self.batch_size:
                    yield collate(batch)
                    batch = []
            if batch and not self.drop_last:
                yield collate(batch)
            return
        if self.batch_sampler is None:
            for i in self.sampler:
                yield collate(ds[i])
            return
        bs = self.batch_sampler
        # (drawn as the batches are read, from the generator as it stands when the epoch starts)
        own = isinstance(bs, BatchSampler) and type(bs).__iter__ is BatchSampler.__iter__
        idx_batches = bs._batches() if own else bs
        if self._fast():
            for idx in idx_batches:
                yield list(ds.take(np.asarray(idx, dtype=np.int64)))
            return
        for idx in idx_batches:
            yield collate(self._fetch(idx))


def _peek_seed(gen: Generator, start: int) -> int:
    """The workers' base seed: torch draws an int64 from the generator per epoch; here it is read off the generator's
    state without drawing (a hash of it), so turning workers on leaves the shuffle order as it was, while the seed
    still follows ``manual_seed``; ``start`` (the loader's count of worker starts) makes each epoch's differ."""
    digest = hashlib.blake2b(repr((gen.get_state(), start)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1  # (non-negative, 63 bits, as torch's)


def _copy_of(dataset: Any) -> Any:
    """A worker's own dataset (torch's worker holds a copy): shallow, so attributes a ``worker_init_fn`` sets on it
    stay there, without copying the data. An object that cannot be copied is shared."""
    try:
        return copy.copy(dataset)
    except Exception:  # (whatever copy raises for an object it cannot copy)
        return dataset
