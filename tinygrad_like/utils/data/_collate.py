"""``default_collate`` and ``default_convert``: samples into batches, as torch's."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ... import dtypes
from ...creation import tensor
from ...functions import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]


def _np_tensor(a) -> Tensor:
    a = np.asarray(a)
    if a.dtype.kind in "SUO":
        raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                        f"a NumPy array of dtype {a.dtype}")
    if a.dtype in dtypes._BY_NP:  # (the ten dtypes: a uint8 image batch stays uint8, as torch's)
        return tensor(np.ascontiguousarray(a))
    return tensor(a.astype(np.int64 if a.dtype.kind in "iu" else np.float32))


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into one batch, keeping the structure of a sample (as ``torch``'s).

    Tensors are stacked on a new first dim; Python floats become a float64 tensor, ints an int64 one (bools a
    bool one); NumPy arrays and scalars keep their dtype; strings stay a list; dicts become a dict of batches,
    named tuples a named tuple, and other sequences (tuples too, as in torch) a list of batches.

    >>> import tinygrad_like as tl
    >>> xb, yb = default_collate([(tl.zeros(2), 0), (tl.ones(2), 1)])
    >>> tuple(xb.shape), yb.tolist()
    ((2, 2), [0, 1])
    """
    if not batch:
        raise ValueError("default_collate: cannot collate an empty list of samples")
    first = batch[0]
    if isinstance(first, Tensor):
        bad = next((s for s in batch if not isinstance(s, Tensor)), None)
        if bad is not None:
            raise TypeError(f"default_collate: samples mix Tensor and {type(bad).__name__}")
        return stack(list(batch))  # (a tuple of fields from zip, or the list of samples)
    if isinstance(first, np.ndarray):
        return stack([_np_tensor(s) for s in batch])
    if isinstance(first, (np.bool_, np.number)):
        return _np_tensor(np.array(batch))
    if isinstance(first, bool):
        return tensor(list(batch))
    if isinstance(first, numbers.Integral):
        return tensor(list(batch), dtype=dtypes.int64)
    if isinstance(first, numbers.Real):
        return tensor(list(batch), dtype=dtypes.float64)
    if isinstance(first, (str, bytes)):
        return batch  # (the batch as given, as torch's)
    if isinstance(first, Mapping):
        out = {k: default_collate([s[k] for s in batch]) for k in first}
        try:
            return type(first)(out)
        except TypeError:
            return out
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(default_collate(f) for f in zip(*batch)))
    if isinstance(first, Sequence):
        n = len(first)
        if any(len(s) != n for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(f) for f in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(first).__name__} (return those from __getitem__, or pass collate_fn)")


def default_convert(data: Any) -> Any:
    """What ``DataLoader(batch_size=None)`` applies to each sample: NumPy arrays become tensors (inside dicts,
    named tuples and sequences too); everything else is left as it is."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SUO":
        return _np_tensor(data)
    if isinstance(data, Mapping):
        out = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(out)
        except TypeError:
            return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
