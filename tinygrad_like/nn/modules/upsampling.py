"""``torch.nn.modules.upsampling``: where torch defines these modules (the classes are tinygrad_like's)."""

