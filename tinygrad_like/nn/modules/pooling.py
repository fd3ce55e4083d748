"""``torch.nn.modules.pooling``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..pooling import *  # noqa: F403
