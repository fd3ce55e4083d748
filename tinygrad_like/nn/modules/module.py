"""``torch.nn.modules.module``: where torch defines these modules (the classes are tinygrad_like's)."""

