"""``torch.nn.modules.fold``: where torch defines these modules (the classes are tinygrad_like's)."""

