"""``NestedIOFunction``: PyTorch's legacy instance-style custom Function (``F()(x)``), kept for old code.

An instance is called on tensors: ``forward_extended(*inputs)`` computes the outputs (without recording),
``backward_extended(*grad_outputs)`` returns one gradient per input; ``save_for_backward`` / ``saved_tensors``,
``mark_dirty`` and ``mark_non_differentiable`` work on the instance. It runs on the context-style
:class:`~tinygrad_like.autograd.Function` (one node per call, named after the subclass).

In torch 2.13 the class is still exported but calling an instance fails inside torch (``'super' object has no
attribute '_do_forward'``): the legacy call path it relies on was removed. Here it works as its documentation
describes. It is a plain class, not a subclass of ``Function`` (its non-static ``forward`` would make it one of
our own-style nodes, which it is not).

>>> import tinygrad_like as tl
>>> class Double(tl.autograd.NestedIOFunction):
...     def forward_extended(self, x):
...         return x * 2
...     def backward_extended(self, g):
...         return g * 2
>>> x = tl.ones(2, requires_grad=True)
>>> Double()(x).sum().backward()
>>> x.grad
tensor([2., 2.])
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .ctx_function import FunctionCtx  # noqa: F401 - (the node type the calls make)
from .function import Function

__all__ = ["NestedIOFunction"]


def _tensors(x: Any) -> list[Tensor]:
    """The tensors in a nest of tuples and lists, in order."""
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in _tensors(item)]
    return []


class _Call(Function):
    """The context-style Function one legacy call runs through."""

    @staticmethod
    def forward(ctx, owner, *inputs):
        ctx.owner = owner
        out = owner.forward_extended(*inputs)
        owner._nested_output = out
        if getattr(owner, "non_differentiable", None):
            ctx.mark_non_differentiable(*owner.non_differentiable)
        if getattr(owner, "dirty_tensors", None):
            ctx.mark_dirty(*owner.dirty_tensors)
        return out

    @staticmethod
    def backward(ctx, *grads):
        result = ctx.owner.backward_extended(*grads)
        result = result if isinstance(result, tuple) else (result,)
        return (None, *result)


class NestedIOFunction:
    """Subclass it and define ``forward_extended`` and ``backward_extended``; call an instance on tensors."""

    def __call__(self, *inputs: Any) -> Any:
        self._nested_input = inputs
        call = type(f"{type(self).__name__}", (_Call,), {})  # (the node is named after the user's class)
        return call.apply(self, *inputs)

    def forward(self, *args: Any) -> Any:
        """The shared forward: runs ``forward_extended`` on the inputs of the current call."""
        return self.forward_extended(*args)

    def backward(self, *gradients: Any) -> Any:
        """The shared backward: runs ``backward_extended``."""
        return self.backward_extended(*gradients)

    def save_for_backward(self, *args: Any) -> None:
        self.to_save = tuple(_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self) -> Any:
        return self._to_save_nested

    def mark_dirty(self, *args: Any, **kwargs: Any) -> None:
        self.dirty_tensors = tuple(_tensors((args, list(kwargs.values()))))

    def mark_non_differentiable(self, *args: Any, **kwargs: Any) -> None:
        self.non_differentiable = tuple(_tensors((args, list(kwargs.values()))))

    def forward_extended(self, *input: Any) -> None:
        """User defined forward."""
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> None:
        """User defined backward."""
        raise NotImplementedError
