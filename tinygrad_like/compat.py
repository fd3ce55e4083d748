"""Two names PyTorch programs use that need no machinery here: ``torch.Size`` and ``torch.compile``.

``Tensor.shape`` is a plain tuple (a subclass would cost every ``.shape`` read on the op path); ``tl.Size`` is the
tuple subclass programs construct and compare with (``x.shape == torch.Size([2, 3])``), with ``numel()``.
``tl.compile`` returns what it is given: tinygrad_like runs every op eagerly, so that the views can show each one.

>>> import tinygrad_like as tl
>>> tl.ones(2, 3).shape == tl.Size([2, 3]), tl.Size([2, 3]).numel(), tl.Size([2, 3])
(True, 6, tl.Size([2, 3]))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = ["Size", "compile"]


class Size(tuple):
    """``torch.Size``: a tuple of ints with ``numel()``."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for s in sizes:
            if not isinstance(s, int) or isinstance(s, bool):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {sizes.index(s)} is "
                                f"'{type(s).__name__}')")
        return super().__new__(cls, sizes)

    def numel(self) -> int:
        return math.prod(self)

    def __repr__(self) -> str:
        return f"tl.Size({list(self)})"


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: Any = "inductor", mode: str | None = None, options: dict | None = None,
            disable: bool = False) -> Any:
    """``torch.compile``, accepted and a no-op: returns ``model`` itself (or, called without one, a decorator that
    does). Every op still runs eagerly, one at a time, which is what the views show."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise RuntimeError(f"torch.compile: expected a callable (a Module or a function), got {type(model).__name__}")
    return model
