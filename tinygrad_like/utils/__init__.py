"""Training utilities, PyTorch-shaped: ``utils.data`` (datasets and batch loading) and
``utils.checkpoint`` (gradient checkpointing: recompute activations in backward to save memory).

>>> import tinygrad_like as tl
>>> from tinygrad_like.utils import data
>>> len(data.DataLoader(data.TensorDataset(tl.zeros(10, 2)), batch_size=4))
3
"""

from . import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
