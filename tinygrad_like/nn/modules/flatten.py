"""``torch.nn.modules.flatten``: where torch defines these modules (the classes are tinygrad_like's)."""

