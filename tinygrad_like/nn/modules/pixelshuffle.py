"""``torch.nn.modules.pixelshuffle``: where torch defines these modules (the classes are tinygrad_like's)."""

