"""``torch.nn.modules.normalization``: where torch defines these modules (the classes are tinygrad_like's)."""

