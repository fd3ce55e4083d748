"""``tl.backends.mps``: Apple's Metal backend, which tinygrad_like does not have (``is_available()`` is False); the
queries about an MPS device raise, as PyTorch's do without one."""

from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False


def _no_mps(what: str) -> RuntimeError:
    return RuntimeError(f"Cannot execute {what} without MPS backend: tinygrad_like has no Metal backend")


def is_macos_or_newer(major: int, minor: int) -> bool:
    raise _no_mps("isOnMacOSorNewer()")


def is_macos13_or_newer(minor: int = 0) -> bool:
    return is_macos_or_newer(13, minor)


def get_name() -> str:
    raise _no_mps("get_name()")


def get_core_count() -> int:
    raise _no_mps("get_core_count()")
