"""Datasets and mini-batches, as ``torch.utils.data``: ``Dataset``, ``TensorDataset``, ``DataLoader``.

Why a loader at all: training loops want the same few things every time (batches of a fixed size,
a fresh shuffle each epoch that ``tl.manual_seed`` makes reproducible, an optional progress bar), and
for data already held in tensors they want it without a Python loop per sample. ``DataLoader`` over a
``TensorDataset`` takes each batch with one ``index_select`` per tensor.

>>> import tinygrad_like as tl
>>> from tinygrad_like.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(tl.arange(10).float().reshape(5, 2), tl.arange(5))
>>> for xb, yb in DataLoader(ds, batch_size=2):
...     print(tuple(xb.shape), yb.tolist())
(2, 2) [0, 1]
(2, 2) [2, 3]
(1, 2) [4]
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .. import random as _random
from ..creation import tensor
from ..functions import stack
from ..random import Generator
from ..tensor import Tensor

__all__ = ["Dataset", "TensorDataset", "DataLoader", "default_collate"]


class Dataset:
    """A map-style dataset: subclass it and define ``__getitem__(i)`` (one sample) and ``__len__``.

    ``DataLoader`` only needs those two methods, so any object that has them works as well; the base
    class is there to say so and to fail clearly when one is forgotten.

    >>> from tinygrad_like.utils.data import DataLoader
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i, i * i
    >>> [b for b in DataLoader(Squares(), batch_size=4)][0][1].tolist()
    [0, 1, 4, 9]
    """

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index) to return one sample")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__() to return the number of samples")


class TensorDataset(Dataset):
    """Samples are rows: sample ``i`` is ``(t[i] for t in tensors)``. All tensors share their first dim.

    >>> import tinygrad_like as tl
    >>> ds = TensorDataset(tl.zeros(3, 4), tl.tensor([0, 1, 2]))
    >>> len(ds), [tuple(t.shape) for t in ds[1]]
    (3, [(4,), ()])
    >>> TensorDataset(tl.zeros(3, 4), tl.zeros(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: Size mismatch between tensors: ... got 3, 2 (shapes (3, 4), (2,))
    """

    def __init__(self, *tensors: Tensor):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset expects Tensors; argument {i} is a {type(t).__name__}")
            if t.ndim == 0:
                raise ValueError(f"TensorDataset needs tensors with at least one dimension (the samples); "
                                 f"argument {i} is 0-d")
        sizes = [t.shape[0] for t in tensors]
        if len(set(sizes)) != 1:
            raise ValueError(f"Size mismatch between tensors: TensorDataset needs the same first dimension (number "
                             f"of samples) in every tensor, got {', '.join(map(str, sizes))} "
                             f"(shapes {', '.join(str(tuple(t.shape)) for t in tensors)})")
        self.tensors: tuple[Tensor, ...] = tuple(tensors)

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def take(self, indices: np.ndarray) -> tuple[Tensor, ...]:
        """Rows ``indices`` of every tensor, as new tensors: one ``index_select`` per tensor, no Python loop.

        >>> import tinygrad_like as tl
        >>> TensorDataset(tl.tensor([10, 20, 30])).take(np.array([2, 0]))[0].tolist()
        [30, 10]
        """
        idx = tensor(np.asarray(indices, dtype=np.int64))
        per_device: dict[Any, Tensor] = {idx.device: idx}
        out = []
        for t in self.tensors:
            i = per_device.get(t.device)
            if i is None:
                i = per_device[t.device] = idx.to(t.device)
            out.append(t.index_select(0, i))
        return tuple(out)


def default_collate(samples: Sequence[Any]) -> Any:
    """Stack a list of samples into one batch, keeping the structure of a sample.

    Tensors are stacked on a new first dim; numbers become a 1-d tensor; NumPy arrays are stacked;
    tuples, lists and named tuples become a tuple (or named tuple) of batches, dicts a dict of them.

    >>> import tinygrad_like as tl
    >>> xb, yb = default_collate([(tl.zeros(2), 0), (tl.ones(2), 1)])
    >>> tuple(xb.shape), yb.tolist()
    ((2, 2), [0, 1])
    """
    if not samples:
        raise ValueError("default_collate: cannot collate an empty list of samples")
    first = samples[0]
    if isinstance(first, Tensor):
        bad = next((s for s in samples if not isinstance(s, Tensor)), None)
        if bad is not None:
            raise TypeError(f"default_collate: samples mix Tensor and {type(bad).__name__}")
        return stack(list(samples))
    if isinstance(first, (numbers.Number, np.bool_, np.number)):
        return tensor(list(samples))
    if isinstance(first, np.ndarray):
        return tensor(np.stack(samples))
    if isinstance(first, Mapping):
        return {k: default_collate([s[k] for s in samples]) for k in first}
    if isinstance(first, (tuple, list)):
        n = len(first)
        if any(not isinstance(s, (tuple, list)) or len(s) != n for s in samples):
            raise ValueError(f"default_collate: every sample must be a tuple of the same length ({n}), got "
                             f"lengths {sorted({len(s) if isinstance(s, (tuple, list)) else -1 for s in samples})}")
        fields = [default_collate([s[j] for s in samples]) for j in range(n)]
        return type(first)(*fields) if hasattr(first, "_fields") else tuple(fields)
    raise TypeError(f"default_collate: cannot batch samples of type {type(first).__name__}; return Tensors, "
                    f"numbers, NumPy arrays, or tuples/dicts of them from __getitem__, or pass collate_fn")


def _tqdm() -> Callable[..., Any]:
    try:
        from tqdm.auto import tqdm
    except ImportError as e:
        raise ImportError("DataLoader(progress=True) needs the tqdm package: pip install tqdm") from e
    return tqdm


def _check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"DataLoader: {name} must be True or False, got {value!r}")
    return bool(value)


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size``; a new shuffle every epoch if ``shuffle``.

    The order comes from ``generator`` (a ``tl.Generator``) or the default generator, so after
    ``tl.manual_seed(s)`` every run sees the same sequence of epochs; each epoch visits every sample
    exactly once. ``drop_last`` drops a final short batch. A ``TensorDataset`` is batched with one
    ``index_select`` per tensor and yields a tuple of tensors; other datasets are fetched sample by
    sample and combined by ``collate_fn`` (``default_collate``: stack tensors, tuples of them, ...).
    Batches are new tensors, never views of the dataset, so writing into one leaves the data alone.
    ``progress=True`` shows a tqdm bar (labelled ``desc``).

    >>> import tinygrad_like as tl
    >>> ds = TensorDataset(tl.arange(6))
    >>> loader = DataLoader(ds, batch_size=4, shuffle=True, generator=tl.Generator(0))
    >>> len(loader), sorted(i for (b,) in loader for i in b.tolist())
    (2, [0, 1, 2, 3, 4, 5])
    >>> len(DataLoader(ds, batch_size=4, drop_last=True))
    1
    """

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False, drop_last: bool = False,
                 generator: Generator | None = None, progress: bool = False, desc: str | None = None,
                 collate_fn: Callable[[list[Any]], Any] | None = None):
        if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise TypeError(f"DataLoader needs a map-style dataset with __getitem__ and __len__, got "
                            f"{type(dataset).__name__}")
        if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        if generator is not None and not isinstance(generator, Generator):
            hint = " (a NumPy Generator won't do: use tl.Generator(seed))" if isinstance(
                generator, np.random.Generator) else ""
            raise TypeError(f"DataLoader: generator must be a tinygrad_like Generator or None, got "
                            f"{type(generator).__name__}{hint}")
        if desc is not None and not isinstance(desc, str):
            raise TypeError(f"DataLoader: desc must be a string or None, got {type(desc).__name__}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be callable, got {type(collate_fn).__name__}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = _check_flag("shuffle", shuffle)
        self.drop_last = _check_flag("drop_last", drop_last)
        self.progress = _check_flag("progress", progress)
        self.generator = generator
        self.desc = desc
        self.collate_fn = collate_fn
        self._progress_bar = _tqdm() if self.progress else None  # fail now, not in the middle of training

    def __len__(self) -> int:
        """Number of batches per epoch."""
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __repr__(self) -> str:
        return (f"DataLoader({type(self.dataset).__name__} of {len(self.dataset)}, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, drop_last={self.drop_last})")

    def _fast(self) -> bool:
        """A TensorDataset whose sample access is not overridden can be batched by index_select."""
        ds = self.dataset
        return (self.collate_fn is None and isinstance(ds, TensorDataset)
                and type(ds).__getitem__ is TensorDataset.__getitem__)

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        # drawn now, when the epoch starts, from the generator as it stands (so manual_seed applies)
        gen = self.generator if self.generator is not None else _random.default_generator
        order = gen.np_generator().permutation(n) if self.shuffle else np.arange(n)
        batches = self._batches(order)
        if self._progress_bar is not None:
            return iter(self._progress_bar(batches, total=len(self), desc=self.desc, unit="batch"))
        return batches

    def _batches(self, order: np.ndarray) -> Iterator[Any]:
        bs, n = self.batch_size, len(order)
        stop = n - n % bs if self.drop_last else n
        fast = self._fast()
        collate = self.collate_fn or default_collate
        for start in range(0, stop, bs):
            idx = order[start:start + bs]
            if fast:
                yield self.dataset.take(idx)
            else:
                yield collate([self.dataset[int(i)] for i in idx])
