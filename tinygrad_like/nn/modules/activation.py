"""``torch.nn.modules.activation``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..activation import *  # noqa: F403
