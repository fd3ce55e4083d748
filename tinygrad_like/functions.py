"""Free functions of the Tensor API (``tl.where``, ``tl.softmax``, ...)."""

from __future__ import annotations

from .ops import elementwise as E
from .ops.indexing import nonzero, one_hot  # noqa: F401 - one_hot re-exported (nn.functional imports it from here)
from .ops.movement import cat, pad, stack  # noqa: F401 - re-exported (nn and autograd import them from here)
from .tensor import Tensor


def where(condition: Tensor, input=None, other=None):
    """``condition ? input : other`` elementwise; with the condition alone, ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes the condition alone, or the condition, input and other")
    return E.Where.apply(condition, input, other)


def maximum(a: Tensor, b: Tensor) -> Tensor:
    return a.maximum(b)


def minimum(a: Tensor, b: Tensor) -> Tensor:
    return a.minimum(b)


def softmax(x: Tensor, dim: int) -> Tensor:
    return x.softmax(dim)


def log_softmax(x: Tensor, dim: int) -> Tensor:
    return x.log_softmax(dim)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    return a @ b


# ---- thin wrappers so the functional spelling works for every method -----------------------------
def _method(name: str):
    def fn(input: Tensor, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"``tl.{name}(t, ...)`` is ``t.{name}(...)``."
    return fn


_METHODS = ("add sub mul div pow neg abs exp log sqrt rsqrt sin cos tanh sigmoid relu leaky_relu gelu silu "
            "softplus elu clamp clip erf sum mean var std max min amax amin argmax argmin logsumexp cumsum "
            "any all sign isnan logical_not logical_and logical_or logical_xor eq ne lt le gt ge "
            "numel detach addcmul addcdiv heaviside logit aminmax "
            "exp_ log_ sqrt_ rsqrt_ relu_ sigmoid_ tanh_ abs_ neg_ sin_ cos_ erf_ absolute_ negative_").split()
for _n in _METHODS:
    globals()[_n] = _method(_n)
del _n
