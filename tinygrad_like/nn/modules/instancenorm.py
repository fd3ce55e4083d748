"""``torch.nn.modules.instancenorm``: where torch defines these modules (the classes are tinygrad_like's)."""

