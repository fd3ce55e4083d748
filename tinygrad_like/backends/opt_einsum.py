"""``tl.backends.opt_einsum``: whether the ``opt_einsum`` package is there, and the switches PyTorch reads to order
an einsum's contractions. Recorded here: ``tl.einsum`` orders contractions with NumPy's optimizer."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Iterator
from typing import Any


def is_available() -> bool:
    """Whether the ``opt_einsum`` package can be imported (as PyTorch's)."""
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum() -> Any:
    """The ``opt_einsum`` package, or None when it is not installed."""
    return importlib.import_module("opt_einsum") if is_available() else None


enabled = is_available()
strategy = "auto" if is_available() else None
_STRATEGIES = ("auto", "greedy", "optimal")


def set_flags(_enabled=None, _strategy=None):
    """Set the switches given; returns the previous ones. Errors as PyTorch's for a bad strategy or when
    ``opt_einsum`` is missing."""
    global enabled, strategy
    orig = (enabled, strategy)
    if _enabled is not None:
        if _enabled and not is_available():
            raise ValueError("opt_einsum is not available, so setting `enabled` to True will not reap the benefits "
                             "of calculating an optimal path for einsum. torch.einsum will fall back to contracting "
                             "from left to right. To enable this optimal path calculation, please install "
                             "opt-einsum.")
        enabled = _enabled
    if _strategy is not None:
        if not is_available():
            raise ValueError(f"opt_einsum is not available, so setting a strategy ({_strategy}) will not be "
                             f"meaningful. torch.einsum will bypass path calculation and simply contract from left "
                             f"to right. Please install opt_einsum or unset `strategy`.")
        if not enabled:
            raise ValueError(f"opt_einsum is not enabled, so setting a strategy ({_strategy}) will not be "
                             f"meaningful. torch.einsum will bypass path calculation and simply contract from left "
                             f"to right. Please set `enabled` to `True` as well or unset `strategy`.")
        if _strategy not in _STRATEGIES:
            raise ValueError(f"`{_strategy}` is not a valid strategy, must be one of {list(_STRATEGIES)}")
        strategy = _strategy
    return orig


@contextlib.contextmanager
def flags(enabled=None, strategy=None) -> Iterator[None]:
    orig = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*orig)
