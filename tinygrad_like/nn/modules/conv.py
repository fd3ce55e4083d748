"""``torch.nn.modules.conv``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..conv import *  # noqa: F403
from ..conv import _ConvNd, _ConvTransposeNd  # noqa: F401
