"""Datasets, as ``torch.utils.data.dataset``: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``Subset``,
``ConcatDataset``, ``ChainDataset``, ``random_split``."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from typing import Any

import numpy as np

from ... import random as _random
from ...creation import tensor
from ...tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "Subset", "ConcatDataset", "ChainDataset",
           "random_split"]


class Dataset:
    """A map-style dataset: subclass it and define ``__getitem__(i)`` (one sample) and ``__len__``.

    ``DataLoader`` only needs those two methods, so any object that has them works as well; the base
    class is there to say so and to fail clearly when one is forgotten. ``a + b`` is ``ConcatDataset([a, b])``.

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

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclass it and define ``__iter__``. ``DataLoader`` batches what it yields, in order
    (no sampler, no shuffle). ``a + b`` chains two streams."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__() to yield samples")

    def __len__(self) -> int:  # (none, as torch's: a stream's length is unknown unless a subclass says)
        raise TypeError(f"object of type '{type(self).__name__}' has no len()")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


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


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order.

    >>> Subset([10, 20, 30, 40], [3, 0])[0], len(Subset([10, 20, 30, 40], [3, 0]))
    (40, 2)
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


class StackDataset(Dataset):
    """Several datasets of one length read side by side: sample ``i`` is ``(a[i], b[i], ...)`` for positional
    datasets, ``{"x": a[i], "y": b[i]}`` for keyword ones, as torch's.

    >>> StackDataset([1, 2], ["a", "b"])[1], StackDataset(x=[1, 2], y=["a", "b"])[0], len(StackDataset([1, 2]))
    ((2, 'b'), {'x': 1, 'y': 'a'}, 2)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                                 "input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets: tuple | dict = args
        elif kwargs:
            parts = list(kwargs.values())
            self._length = len(parts[0])
            if any(self._length != len(d) for d in parts):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    @staticmethod
    def _column(dataset, indices: list) -> list:
        if callable(getattr(dataset, "__getitems__", None)):
            items = dataset.__getitems__(indices)
            if len(items) != len(indices):
                raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
            return list(items)
        return [dataset[i] for i in indices]

    def __getitems__(self, indices: list) -> list:
        """A batch of samples, each nested dataset read with its own ``__getitems__`` where it has one."""
        if isinstance(self.datasets, dict):
            columns = {k: self._column(d, indices) for k, d in self.datasets.items()}
            return [{k: col[j] for k, col in columns.items()} for j in range(len(indices))]
        cols = [self._column(d, indices) for d in self.datasets]
        return [tuple(col[j] for col in cols) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Map-style datasets one after another; ``cumulative_sizes`` are the running lengths."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if which == 0 else self.cumulative_sizes[which - 1]
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


def _perm(n: int, generator) -> list[int]:
    gen = generator if generator is not None else _random.default_generator
    return gen.np_generator().permutation(n).tolist()


def random_split(dataset, lengths, generator=None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given ``lengths`` (counts, or fractions
    summing to 1: floors, with the remainder given out one by one from the first split, as torch does). The
    order comes from ``generator`` (a ``tl.Generator``) or the default one.

    >>> import tinygrad_like as tl
    >>> a, b = random_split(range(10), [0.7, 0.3], generator=tl.Generator(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (7, 3, True)
    """
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(len(dataset) * frac)))
        for i in range(len(dataset) - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
        for i, n in enumerate(lengths):
            if n == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _perm(sum(lengths), generator)
    return [Subset(dataset, indices[end - n:end]) for end, n in zip(itertools.accumulate(lengths), lengths)]
