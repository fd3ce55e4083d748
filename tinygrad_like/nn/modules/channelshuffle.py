"""``torch.nn.modules.channelshuffle``: where torch defines these modules (the classes are tinygrad_like's)."""

