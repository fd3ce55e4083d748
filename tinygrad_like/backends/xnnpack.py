"""``tl.backends.xnnpack``: XNNPACK, which tinygrad_like does not use (``enabled`` is False)."""

enabled = False
