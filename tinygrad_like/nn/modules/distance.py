"""``torch.nn.modules.distance``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..pairwise import *  # noqa: F403
