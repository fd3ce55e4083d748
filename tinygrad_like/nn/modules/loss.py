"""``torch.nn.modules.loss``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..loss import *  # noqa: F403
from ..loss import _Loss, _WeightedLoss  # noqa: F401
