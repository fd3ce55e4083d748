"""``tl.backends.cusparselt``: NVIDIA's structured-sparsity matmul library, which tinygrad_like does not use."""

from __future__ import annotations

__all__ = ["version", "is_available", "get_max_alg_id"]


def version() -> int | None:
    """None: no cuSPARSELt here."""
    return None


def is_available() -> bool:
    return False


def get_max_alg_id() -> int | None:
    return None
