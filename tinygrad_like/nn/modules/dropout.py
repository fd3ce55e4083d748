"""``torch.nn.modules.dropout``: where torch defines these modules (the classes are tinygrad_like's)."""

