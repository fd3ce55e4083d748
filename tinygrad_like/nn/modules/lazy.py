"""``torch.nn.modules.lazy``: where torch defines these modules (the classes are tinygrad_like's)."""

