"""``tl.backends.python_native``: PyTorch's switches for op kernels written in Python DSLs (Triton, CuTe DSL).
tinygrad_like has no such kernels: no DSL is available, no operation belongs to one, and the switches are recorded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

all_dsls: list[str] = []
available_dsls: list[str] = []
_disabled_ops: set[str] = set()
_disabled_keys: set[str] = set()


def get_dsl_operations(dsl_name: str) -> list[str]:
    """The operations a DSL provides: none here."""
    return []


def is_dsl_disabled(dsl_name: str) -> bool:
    """True: no DSL runs here."""
    return True


def is_operation_disabled(op_symbol: str) -> bool:
    return op_symbol in _disabled_ops


def disable_operations(*op_symbols: str) -> None:
    _disabled_ops.update(op_symbols)


def enable_operations(*op_symbols: str) -> None:
    _disabled_ops.difference_update(op_symbols)


def disable_dispatch_keys(*dispatch_keys: str) -> None:
    _disabled_keys.update(dispatch_keys)


def enable_dispatch_keys(*dispatch_keys: str) -> None:
    _disabled_keys.difference_update(dispatch_keys)


@contextlib.contextmanager
def operations_disabled(*op_symbols: str) -> Iterator[None]:
    added = set(op_symbols) - _disabled_ops
    disable_operations(*added)
    try:
        yield
    finally:
        enable_operations(*added)
