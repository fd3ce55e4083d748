"""``tl.backends.mps``: Apple's Metal backend, which tinygrad_like does not have (``is_available()`` is False)."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
