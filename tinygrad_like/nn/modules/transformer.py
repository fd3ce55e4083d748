"""``torch.nn.modules.transformer``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..transformer import *  # noqa: F403
