"""``torch.nn.modules.adaptive``: where torch defines these modules (the classes are tinygrad_like's)."""

