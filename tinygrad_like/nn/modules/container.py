"""``torch.nn.modules.container``: where torch defines these modules (the classes are tinygrad_like's)."""

