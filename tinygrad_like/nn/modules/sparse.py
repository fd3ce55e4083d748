"""``torch.nn.modules.sparse``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..sparse import *  # noqa: F403
