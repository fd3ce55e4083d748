"""``torch.nn.modules.padding``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..padding import *  # noqa: F403
