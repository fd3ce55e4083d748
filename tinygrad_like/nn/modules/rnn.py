"""``torch.nn.modules.rnn``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..rnn import *  # noqa: F403
