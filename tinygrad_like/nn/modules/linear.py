"""``torch.nn.modules.linear``: where torch defines these modules (the classes are tinygrad_like's)."""

