"""``DistributedSampler``, as ``torch.utils.data.distributed``: each replica's share of a dataset's indices.

On one process the world has one replica (``tl.distributed.init_process_group`` makes a world of size 1), but the
sampler splits for any ``num_replicas`` / ``rank`` given, exactly as torch's: padded with the first indices to an
equal share per replica (or cut with ``drop_last``), then every ``num_replicas``-th index from ``rank``. With
``shuffle`` the order is a permutation drawn from a generator seeded ``seed + epoch`` (``set_epoch``), so every
replica draws the same one; it is tinygrad_like's permutation for that seed, not torch's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from ... import distributed as dist
from ...creation import randperm
from ...random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices ``rank, rank + num_replicas, ...`` of the (shuffled, padded) dataset, as torch's.

    >>> s = DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False)
    >>> list(s), len(s)
    ([1, 4, 7, 0], 4)
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = dist.get_world_size()  # (ValueError before init_process_group, as torch's)
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = randperm(n, generator=Generator(self.seed + self.epoch)).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Make the next epoch's shuffle differ (the same on every replica): call it before each epoch."""
        self.epoch = epoch
