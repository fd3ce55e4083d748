"""Two names PyTorch programs use that need no machinery here: ``torch.Size`` and ``torch.compile``.

``Tensor.shape`` and ``Tensor.size()`` are a ``tl.Size``: a tuple of ints with ``numel()``, whose slices, sums and
repeats are ``Size`` again, as torch's. Its ``repr`` names the type; its ``str`` (``print``, f-strings, so every
error message and view label) is the tuple's ``(2, 3)`` in the project's style, and ``torch.Size([2, 3])`` (both
``str`` and ``repr``) under the torch alias, as torch prints it. It is made from the native array's shape tuple on each
read (about 0.1 us); the core's own hot paths read ``x._x.shape``, the plain tuple. ``tl.compile`` returns what it
is given: tinygrad_like runs every op eagerly, so that the views can show each one.

>>> import tinygrad_like as tl
>>> x = tl.ones(2, 3)
>>> x.shape, x.shape == (2, 3), x.shape.numel(), x.shape[1:]
(tl.Size([2, 3]), True, 6, tl.Size([3]))
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from ._format import STYLE as _STYLE

__all__ = ["Size", "compile"]

_tuple_new, _tuple_getitem, _tuple_add, _tuple_mul = tuple.__new__, tuple.__getitem__, tuple.__add__, tuple.__mul__
_tuple_repr = tuple.__repr__


class Size(tuple):
    """``torch.Size``: a tuple of ints with ``numel()``."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        out = []
        for i, s in enumerate(sizes):  # anything with __index__ (a NumPy int, a 0-d integer tensor) is an int
            try:
                out.append(operator.index(s))
            except TypeError:
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(s).__name__}')") \
                    from None
        return super().__new__(cls, out)

    def numel(self) -> int:
        return math.prod(self)

    # slices, concatenations and repeats of a Size are a Size (a plain index is an int), as in torch
    def __getitem__(self, i):
        r = _tuple_getitem(self, i)
        return _tuple_new(Size, r) if type(i) is slice else r

    def __add__(self, other):
        return _tuple_new(Size, _tuple_add(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return _tuple_new(Size, _tuple_add(other, self))

    def __mul__(self, n):
        return _tuple_new(Size, _tuple_mul(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return Size, (tuple(self),)

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})" if _STYLE.torch else f"tl.Size({list(self)})"

    def __str__(self) -> str:
        # the project's style: str() (print, f-strings: every error message and view label that shows a shape) is
        # the tuple's "(2, 3)"; under the torch alias, torch's "torch.Size([2, 3])", as books and lectures show
        return f"torch.Size({list(self)})" if _STYLE.torch else _tuple_repr(self)


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
