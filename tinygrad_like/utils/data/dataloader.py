"""``DataLoader``, as ``torch.utils.data.dataloader``: batches from a dataset, a sampler and a collate function.

Workers run in this process. torch starts ``num_workers`` processes (fork or spawn, depending on the platform),
each with its own copy of the dataset, its own RNG seeded ``base_seed + id``, ``worker_init_fn(id)`` called at its
start and ``get_worker_info()`` answering inside it, and hands batches out round-robin. Here each worker is an
object holding the same things (its copy of the dataset, its RNG state, its iterator over an IterableDataset), and
a batch is read "in" worker ``k``: with ``get_worker_info()`` answering ``k``'s WorkerInfo and ``k``'s RNG state
swapped in for the default generator and Python's ``random``, so what a program can observe is torch's: which
worker reads which batch, the interleaved order of an IterableDataset split by worker, a dataset mutated in a
worker leaving the main one as it was, per-worker seeds, ``persistent_workers`` keeping the workers (and the
iterator object) across epochs. Why not processes: real workers need picklable datasets and a ``__main__``
guard under spawn (macOS, Windows, Jupyter), and fork is unsafe with threads; in-process workers run every
program the same way everywhere, and the data here is NumPy in memory, which processes would only copy.
What differs: nothing runs in parallel (no speed-up), ``timeout`` is checked after a batch is read rather than
while waiting, NumPy's global RNG and other process-wide state a worker changes are shared with the main process,
and the dataset copy shares its tensors and NumPy arrays with the original (as fork's copy-on-write shares pages;
writing into them in place is seen by both, where torch's fork would copy them).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import io
import multiprocessing
import pickle
import random as _py_random
import time
import traceback
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ... import random as _random
from ...random import Generator
from ...tensor import Tensor
from ._collate import default_collate, default_convert
from ._worker import WorkerInfo, _local, get_worker_info
from .datapipes import IterDataPipe, apply_shuffle_settings
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


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

    ``num_workers > 0`` gives torch's worker semantics with in-process workers (see the module docstring):
    ``iter(loader)`` starts the workers (``worker_init_fn(id)`` for each, with ``get_worker_info()`` answering),
    batch ``k`` is read by worker ``k % num_workers`` on its own copy of the dataset, and an IterableDataset is
    iterated once per worker (each yields what it decides from ``get_worker_info()``), its batches interleaved
    round-robin across the workers that still have data. ``persistent_workers=True`` keeps the workers, and
    ``iter(loader)`` returns the same iterator object, epoch after epoch. ``prefetch_factor``,
    ``multiprocessing_context``, ``timeout`` and ``in_order`` are checked as torch checks them; ``pin_memory``
    pins nothing (on a machine without CUDA it warns as torch does). Extra (ours): ``progress=True`` shows a tqdm
    bar labelled ``desc``.

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
        _check_context(multiprocessing_context, num_workers)
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
            if isinstance(dataset, IterDataPipe):
                dataset = apply_shuffle_settings(dataset, shuffle=shuffle)  # (torch: turns the pipe's shuffle on/off)
            elif shuffle not in (False, None):
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
        self._iterator: _DataLoaderIter | None = None  # (kept across epochs with persistent_workers)
        self._IterableDataset_len_called: int | None = None  # (torch's name: the len() a stream promised)

    def __len__(self) -> int:
        """Number of batches per epoch (for an IterableDataset: from its ``__len__``, if it has one)."""
        if isinstance(self.dataset, IterableDataset):
            n = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)

    def __repr__(self) -> str:
        try:
            size = f" of {len(self.dataset)}"
        except TypeError:
            size = ""
        return (f"DataLoader({type(self.dataset).__name__}{size}, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, drop_last={self.drop_last})")

    def _fast(self, ds: Any) -> bool:
        """A TensorDataset whose sample access is not overridden can be batched by index_select."""
        return (not self._user_collate and isinstance(ds, TensorDataset)
                and type(ds).__getitem__ is TensorDataset.__getitem__ and self.batch_sampler is not None)

    def _get_iterator(self) -> _DataLoaderIter:
        return _DataLoaderIter(self)

    def __iter__(self) -> Iterator[Any]:
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset()
            it: Iterator[Any] = self._iterator
        else:
            it = self._get_iterator()
        if self._progress_bar is not None:
            try:
                total = len(self)
            except TypeError:
                total = None
            return iter(self._progress_bar(it, total=total, desc=self.desc, unit="batch"))
        return it


def _check_context(context: Any, num_workers: int) -> None:
    """torch's checks of ``multiprocessing_context`` (accepted, then unused: the workers run in this process)."""
    if context is None:
        return
    if num_workers == 0:
        raise ValueError(f"multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                         f"but got num_workers={num_workers}")
    if isinstance(context, str):
        valid = multiprocessing.get_all_start_methods()
        if context not in valid:
            raise ValueError(f"multiprocessing_context option should specify a valid start method in {valid!r}, "
                             f"but got multiprocessing_context={context!r}")
    elif not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(f"multiprocessing_context option should be a valid context object or a string specifying "
                        f"the start method, but got multiprocessing_context={context}")


class _Worker:
    """One in-process worker: its WorkerInfo (and so its copy of the dataset), its RNG states, its stream."""

    def __init__(self, info: WorkerInfo) -> None:
        self.info = info
        seeded = Generator(info.seed)  # (torch's worker calls torch.manual_seed(seed))
        self.rng = (seeded._seed, seeded._np)
        state = _py_random.getstate()
        _py_random.seed(info.seed)  # (torch's worker calls random.seed(seed) too)
        self.py_rng = _py_random.getstate()
        _py_random.setstate(state)
        self.stream: Iterator[Any] | None = None  # an IterableDataset's iterator, made in the worker
        self.active = True

    def __enter__(self) -> _Worker:
        gen = _random.default_generator
        self._main = (gen._seed, gen._np, _py_random.getstate(), getattr(_local, "info", None))
        gen._seed, gen._np = self.rng
        _py_random.setstate(self.py_rng)
        _local.info = self.info
        return self

    def __exit__(self, *exc: Any) -> None:
        gen = _random.default_generator
        self.rng = (gen._seed, gen._np)
        self.py_rng = _py_random.getstate()
        gen._seed, gen._np, state, _local.info = self._main
        _py_random.setstate(state)


class _StreamEnd(Exception):
    """A worker's IterableDataset has no more batches."""


class _DataLoaderIter:
    """``iter(loader)``, as torch's ``_BaseDataLoaderIter``: ``next`` gives the batches, ``len`` the number of
    batches (a TypeError for an IterableDataset, as torch's). With workers it owns them; with
    ``persistent_workers`` the loader keeps it and ``_reset`` starts the next epoch on the same workers."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._dataset = loader.dataset
        self._iterable = isinstance(loader.dataset, IterableDataset)
        if loader.pin_memory and not _accelerator_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=3)
        self._workers: list[_Worker] = []
        if loader.num_workers > 0:
            loader._workers_started += 1
            gen = loader.generator if loader.generator is not None else _random.default_generator
            base = _peek_seed(gen, loader._workers_started)
            for i in range(loader.num_workers):
                w = _Worker(WorkerInfo(i, loader.num_workers, base + i, _copy_of(loader.dataset)))
                if loader.worker_init_fn is not None:
                    with w, _as_worker_error(i):
                        loader.worker_init_fn(i)
                self._workers.append(w)
        self._reset()

    def _reset(self) -> None:
        loader = self._loader
        self._num_yielded = 0
        self._next_worker = 0
        self._index_batches: Iterator[Any] | None = None
        if self._iterable:
            self._single: Iterator[Any] | None = None
            for w in self._workers:
                w.stream, w.active = None, True
        else:
            bs = loader.batch_sampler
            if bs is not None:
                # (drawn as the batches are read, from the generator as it stands when the epoch starts)
                own = isinstance(bs, BatchSampler) and type(bs).__iter__ is BatchSampler.__iter__
                self._index_batches = iter(bs._batches() if own else bs)
            else:
                self._index_batches = iter(loader.sampler)
        # (persistent workers keep their dataset copies, RNG states and seeds across epochs, as torch's)

    def __iter__(self) -> _DataLoaderIter:
        return self

    def __len__(self) -> int:
        if self._iterable:
            raise TypeError("object of type '_InfiniteConstantSampler' has no len()")
        return len(self._loader)

    def __next__(self) -> Any:
        loader = self._loader
        start = time.monotonic()
        if self._iterable:
            batch = self._next_from_stream()
        else:
            idx = next(self._index_batches)  # (the sampler runs in the main process, as torch's)
            if self._workers:
                w = self._workers[self._next_worker]
                self._next_worker = (self._next_worker + 1) % len(self._workers)
                with w, _as_worker_error(w.info.id):
                    batch = self._read(w.info.dataset, idx)
            else:
                batch = self._read(self._dataset, idx)
        if self._workers and loader.timeout > 0 and time.monotonic() - start > loader.timeout:
            raise RuntimeError(f"DataLoader timed out after {loader.timeout} seconds")
        self._num_yielded += 1
        promised = loader._IterableDataset_len_called
        if self._iterable and promised is not None and self._num_yielded > promised:
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be {promised} (when accessing "
                          f"len(dataloader)), but {self._num_yielded} samples have been fetched. ", stacklevel=2)
        return batch

    def _read(self, ds: Any, idx: Any) -> Any:
        """One batch of a map-style dataset: ``idx`` is a list of indices (or one index without batching)."""
        loader = self._loader
        if loader.batch_sampler is None:
            return loader.collate_fn(ds[idx])
        if loader._fast(ds):
            return list(ds.take(np.asarray(idx, dtype=np.int64)))
        many = getattr(ds, "__getitems__", None)
        samples = many([int(i) for i in idx]) if callable(many) else [ds[int(i)] for i in idx]
        return loader.collate_fn(samples)

    def _batch_of(self, stream: Iterator[Any]) -> Any:
        """The next batch from one stream, as torch's fetcher makes it (a short last batch unless drop_last)."""
        loader = self._loader
        if loader.batch_size is None:
            try:
                return loader.collate_fn(next(stream))
            except StopIteration:
                raise _StreamEnd from None
        batch = []
        for sample in stream:
            batch.append(sample)
            if len(batch) == loader.batch_size:
                break
        if not batch or (len(batch) < loader.batch_size and loader.drop_last):
            raise _StreamEnd
        return loader.collate_fn(batch)

    def _next_from_stream(self) -> Any:
        if not self._workers:
            if self._single is None:
                self._single = iter(self._dataset)
            try:
                return self._batch_of(self._single)
            except _StreamEnd:
                raise StopIteration from None
        # round-robin over the workers that still have data, as torch hands out its fetch requests
        while any(w.active for w in self._workers):
            w = self._workers[self._next_worker]
            self._next_worker = (self._next_worker + 1) % len(self._workers)
            if not w.active:
                continue
            with w, _as_worker_error(w.info.id):
                try:
                    if w.stream is None:
                        w.stream = iter(w.info.dataset)
                    return self._batch_of(w.stream)
                except _StreamEnd:
                    w.active = False
        raise StopIteration


class _KeyErrorMessage(str):
    """KeyError shows the repr of its argument; this message reads as itself (torch's KeyErrorMessage)."""

    def __repr__(self) -> str:
        return self


@contextlib.contextmanager
def _as_worker_error(worker_id: int) -> Iterator[None]:
    """An error raised while a worker reads is re-raised as torch re-raises it from a worker process: the same
    type, its message saying "Caught <type> in DataLoader worker process <id>." and the original traceback."""
    try:
        yield
    except (_StreamEnd, StopIteration):
        raise
    except Exception as e:
        msg = (f"Caught {type(e).__name__} in DataLoader worker process {worker_id}.\nOriginal "
               f"{traceback.format_exc()}")
        if isinstance(e, KeyError):
            msg = _KeyErrorMessage(msg)
        try:
            wrapped = type(e)(msg)
        except Exception:  # (an exception type that takes other arguments: torch falls back the same way)
            raise RuntimeError(msg) from e
        raise wrapped from e


def _accelerator_available() -> bool:
    from ... import cuda  # (waits: the device namespaces are loaded by the package after utils.data)
    return bool(cuda.is_available())


def _peek_seed(gen: Generator, start: int) -> int:
    """The workers' base seed: torch draws an int64 from the generator per epoch; here it is read off the generator's
    state without drawing (a hash of it), so turning workers on leaves the shuffle order as it was, while the seed
    still follows ``manual_seed``; ``start`` (the loader's count of worker starts) makes each epoch's differ."""
    digest = hashlib.blake2b(repr((gen.get_state(), start)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1  # (non-negative, 63 bits, as torch's)


_BY_REFERENCE = (Tensor, np.ndarray, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                 functools.partial, type, types.ModuleType)


class _SharedArrays(pickle.Pickler):
    """Pickles an object with its tensors, NumPy arrays and functions left out (kept by reference: data is not
    copied, and a lambda transform, which pickle cannot save, is shared as fork would share it)."""

    def __init__(self, file: Any, kept: list[Any]) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.kept = kept

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _BY_REFERENCE):
            self.kept.append(obj)
            return len(self.kept) - 1
        return None


class _Restore(pickle.Unpickler):
    def __init__(self, file: Any, kept: list[Any]) -> None:
        super().__init__(file)
        self.kept = kept

    def persistent_load(self, pid: Any) -> Any:
        return self.kept[pid]


def _copy_of(dataset: Any) -> Any:
    """A worker's own dataset, as torch's worker holds a copy: a deep copy whose tensors, arrays and functions are
    shared with the original (as fork shares pages until written), so a worker's changes to the dataset's Python
    state stay in the worker without copying the data. What pickle cannot copy even so (a generator, a lock, an
    open file) is deep-copied, or failing that shallow-copied, or failing that shared."""
    kept: list[Any] = []
    try:
        buf = io.BytesIO()
        _SharedArrays(buf, kept).dump(dataset)
        buf.seek(0)
        return _Restore(buf, kept).load()
    except Exception:  # (whatever pickle raises for an object it cannot save: lambdas, generators, files)
        pass
    for how in (copy.deepcopy, copy.copy):
        try:
            return how(dataset)
        except Exception:  # (whatever copy raises for an object it cannot copy)
            continue
    return dataset
