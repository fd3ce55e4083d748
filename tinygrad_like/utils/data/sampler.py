"""Samplers, as ``torch.utils.data.sampler``: which indices a ``DataLoader`` visits, and in which batches.

Random samplers draw from a ``tl.Generator`` (``generator=``) or the default one (so ``tl.manual_seed`` makes
them reproducible), once per epoch when iteration starts. The orders are NumPy's Philox draws, not PyTorch's
(same distribution, other numbers): compare with PyTorch by passing the same explicit order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ... import random as _random
from ...creation import tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


def _np_gen(generator) -> np.random.Generator:
    return (generator if generator is not None else _random.default_generator).np_generator()


class Sampler:
    """Base class: define ``__iter__`` (indices) and, if known, ``__len__``."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def _order(self) -> np.ndarray:
        return np.arange(len(self.data_source))

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order of the samples: a permutation (several, for ``num_samples`` > len), or ``num_samples``
    draws with replacement."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples="
                             f"{self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def _order(self) -> np.ndarray:
        n, k = len(self.data_source), self.num_samples
        g = _np_gen(self.generator)
        if self.replacement:
            return g.integers(0, n, size=k)
        if k == n:
            return g.permutation(n)
        parts = [g.permutation(n) for _ in range(-(-k // n))]
        return np.concatenate(parts)[:k]

    def __iter__(self) -> Iterator[int]:
        return iter(self._order().tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _np_gen(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices in ``[0, len(weights))`` drawn with probability proportional to ``weights``."""

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(weights.tolist() if hasattr(weights, "tolist") and not isinstance(weights, np.ndarray)
                       else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0, or a weight negative, "
                               "inf or nan)")
        if not replacement and num_samples > int((w > 0).sum()):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")

        self.weights = tensor(w)
        self._w = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        p = self._w / self._w.sum()
        return iter(_np_gen(self.generator).choice(len(p), size=self.num_samples, replace=self.replacement,
                                                   p=p).tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless ``drop_last``).

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, (bool, np.bool_)):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = bool(drop_last)

    def _batches(self) -> Iterator:
        """Index arrays per batch (NumPy slices of one order array when the sampler can give it at once)."""
        own = type(self.sampler).__iter__ in (SequentialSampler.__iter__, RandomSampler.__iter__)
        order_of = self.sampler._order if own else None
        if order_of is None:
            yield from (np.asarray(b, dtype=np.int64) for b in self)
            return
        order, bs = order_of(), self.batch_size
        n = len(order)
        stop = n - n % bs if self.drop_last else n
        for start in range(0, stop, bs):
            yield order[start:start + bs]

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
