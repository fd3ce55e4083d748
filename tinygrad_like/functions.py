"""Free functions (``tl.where``, ``tl.softmax``, ``tl.sum``, ...) of Tensor methods whose family module does not
define its own: each is generated from the method (:func:`~tinygrad_like.ops._util.free_functions`), so it has the
method's signature and docstring with ``input`` first."""

from __future__ import annotations

from .ops._util import free_functions
from .ops.elementwise import Where
from .ops.indexing import nonzero, one_hot  # noqa: F401 - one_hot re-exported (nn.functional imports it from here)
from .ops.movement import cat, pad, stack  # noqa: F401 - re-exported (nn and autograd import them from here)
from .tensor import Tensor


def where(condition: Tensor, input=None, other=None):
    """``condition ? input : other`` elementwise; with the condition alone, ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes the condition alone, or the condition, input and other")
    return Where.apply(condition, input, other)


_GENERATED = ("leaky_relu", "gelu", "silu", "softplus", "elu", "softmax", "log_softmax", "numel", "detach")
__all__ = ["where", *_GENERATED]
leaky_relu, gelu, silu, softplus, elu, softmax, log_softmax, numel, detach = free_functions(Tensor, *_GENERATED)
