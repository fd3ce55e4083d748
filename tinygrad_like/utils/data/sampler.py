"""Samplers, as ``torch.utils.data.sampler``: which indices a ``DataLoader`` visits, and in which batches.

Random samplers draw from a ``tl.Generator`` (``generator=``) or the default one (so ``tl.manual_seed`` makes
them reproducible), when iteration starts and as it goes: constructing one, or asking its ``len``, draws
nothing, and no sampler holds more than one pass over its data source at once (``num_samples=int(1e10)`` costs
nothing until read). The orders are NumPy's Philox draws, not PyTorch's
(same distribution, other numbers): compare with PyTorch by passing the same explicit order.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

import numpy as np

from ... import random as _random
from ...creation import tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


_CHUNK = 32  # indices drawn per step with replacement, as torch's RandomSampler: iteration never holds them all


def _np_gen(generator) -> np.random.Generator:
    return (generator if generator is not None else _random.default_generator).np_generator()


def _epoch_gen(generator) -> np.random.Generator:
    """The stream one epoch draws from: ``generator`` itself, or (as torch) a private stream seeded by one draw
    off the default generator when the epoch starts, so drawing its indices chunk by chunk does not interleave
    with the training loop's own draws from the default generator."""
    if generator is not None:
        return generator.np_generator()
    seed = int(_random.default_generator.np_generator().integers(0, 1 << 63))
    return np.random.Generator(np.random.Philox(seed))


class Sampler:
    """Base class: define ``__iter__`` (indices) and, if known, ``__len__``. (No ``__init__``, as torch 2.13's:
    ``super().__init__(data_source)`` in a subclass is a TypeError there too.)"""

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def _index_chunks(self) -> Iterator[np.ndarray]:
        n = len(self.data_source)
        step = max(_CHUNK, 1 << 16)  # (no randomness to keep in step with torch: large slices are cheaper)
        for start in range(0, n, step):
            yield np.arange(start, min(start + step, n), dtype=np.int64)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order of the samples: permutations of them (several, for ``num_samples`` > len, the last one cut
    short), or ``num_samples`` draws with replacement. Nothing is drawn before iteration, and iteration draws as
    it goes (32 indices at a time with replacement, one permutation of the data at a time without), so
    ``num_samples=int(1e10)`` costs nothing until read, as torch's."""

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

    def _index_chunks(self) -> Iterator[np.ndarray]:
        n, k = len(self.data_source), self.num_samples
        if n == 0:  # (the same error types as torch's, which fail here too, with words that say why)
            if self.replacement:
                raise RuntimeError(f"RandomSampler: cannot draw {k} samples with replacement from an empty "
                                   f"data_source")
            raise ZeroDivisionError(f"RandomSampler: cannot permute an empty data_source to draw {k} samples")
        g = _epoch_gen(self.generator)
        if self.replacement:
            full, rest = divmod(k, _CHUNK)
            for _ in range(full):
                yield g.integers(0, n, size=_CHUNK, dtype=np.int64)
            if rest:
                yield g.integers(0, n, size=rest, dtype=np.int64)
            return
        full, rest = divmod(k, n)
        for _ in range(full):
            yield g.permutation(n)
        if rest:
            yield g.permutation(n)[:rest]

    def __iter__(self) -> Iterator[int]:
        for chunk in self._index_chunks():
            yield from chunk.tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (one permutation of them per epoch, drawn when reading starts)."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _np_gen(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices in ``[0, len(weights))`` drawn with probability proportional to ``weights``.

    With replacement they are drawn as read, 32 at a time; without, all at once when reading starts (at most
    ``len(weights)`` of them), and once the positive weights are used up the zero-weight indices follow, as
    torch's. Bad weights are refused here, with torch's words, where torch refuses them at the first read."""

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(weights.tolist() if hasattr(weights, "tolist") and not isinstance(weights, np.ndarray)
                       else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        if (w < 0).any() or np.isnan(w).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if np.isinf(w).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and num_samples > len(w):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")

        self.weights = tensor(w)
        self._w = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def _index_chunks(self) -> Iterator[np.ndarray]:
        g, p = _np_gen(self.generator), self._w / self._w.sum()
        if not self.replacement:
            # (exponential races: the k smallest of Exp(1) / w; a zero weight's time is inf, so it comes last)
            with np.errstate(divide="ignore"):
                times = g.standard_exponential(len(p)) / self._w
            yield np.argsort(times, kind="stable")[:self.num_samples].astype(np.int64)
            return
        full, rest = divmod(self.num_samples, _CHUNK)
        for _ in range(full):
            yield g.choice(len(p), size=_CHUNK, p=p).astype(np.int64)
        if rest:
            yield g.choice(len(p), size=rest, p=p).astype(np.int64)

    def __iter__(self) -> Iterator[int]:
        for chunk in self._index_chunks():
            yield from chunk.tolist()

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

    def _batches(self) -> Iterator[np.ndarray]:
        """Index arrays per batch, cut from the sampler's chunks as they are drawn (never all at once)."""
        bs, pending, have = self.batch_size, [], 0
        for chunk in _index_chunks(self.sampler):
            pending.append(chunk)
            have += len(chunk)
            if have < bs:
                continue
            joined = np.concatenate(pending) if len(pending) > 1 else pending[0]
            cut = have - have % bs
            for start in range(0, cut, bs):
                yield joined[start:start + bs]
            pending, have = [joined[cut:]], have - cut
        if have and not self.drop_last:
            yield np.concatenate(pending)

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


def _index_chunks(sampler) -> Iterator[np.ndarray]:
    """``sampler``'s indices in order, as int64 arrays: our samplers' own chunks, or (for any other iterable of
    indices, or a subclass that reorders them in its own ``__iter__``) ``__iter__``'s, ``_CHUNK`` at a time."""
    own = (SequentialSampler.__iter__, RandomSampler.__iter__, WeightedRandomSampler.__iter__)
    if type(sampler).__iter__ in own:
        yield from sampler._index_chunks()
        return
    it = iter(sampler)
    while chunk := list(itertools.islice(it, _CHUNK)):
        yield np.asarray(chunk, dtype=np.int64)
