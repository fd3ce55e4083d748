"""Datasets and mini-batches, as ``torch.utils.data`` (module paths as torch spells them: ``dataset``,
``sampler``, ``dataloader``).

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

from . import dataloader, datapipes, dataset, distributed, sampler
from ._collate import default_collate, default_convert
from ._worker import get_worker_info
from .dataloader import DataLoader
from .datapipes import (DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe, argument_validation, functional_datapipe,
                        guaranteed_datapipes_determinism, non_deterministic, runtime_validation,
                        runtime_validation_disabled)
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DataLoader", "default_collate", "default_convert",
           "dataloader", "dataset", "sampler", "get_worker_info", "StackDataset", "DistributedSampler", "distributed",
           "datapipes", "IterDataPipe", "MapDataPipe", "DFIterDataPipe", "DataChunk", "functional_datapipe",
           "guaranteed_datapipes_determinism", "non_deterministic", "runtime_validation", "runtime_validation_disabled",
           "argument_validation"]
