"""``tl.backends.kleidiai``: Arm's KleidiAI micro-kernels, which tinygrad_like does not use."""


def is_available() -> bool:
    return False
