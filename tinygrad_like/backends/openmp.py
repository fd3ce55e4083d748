"""``tl.backends.openmp``: tinygrad_like runs no OpenMP parallel regions of its own (``is_available()`` is False)."""


def is_available() -> bool:
    return False
