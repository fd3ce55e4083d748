"""Module backward hooks: ``register_full_backward_hook`` and ``register_full_backward_pre_hook``, as torch runs them.

A module with such hooks wraps its call in two identity nodes, as torch's ``BackwardHook`` does: one on the tensor
inputs, one on the tensor outputs. When backward reaches the outputs' node it has the gradients of the module's
outputs (``grad_output``), which the pre-hooks may replace; when it reaches the inputs' node it has the gradients of
the module's inputs (``grad_input``: zeros for a tensor input that needs none, None for a non-tensor), and the hooks
see both and may replace ``grad_input``. Both nodes show in the
graph views as ``BackwardHookFunctionBackward``, as in torch's graph.

>>> import tinygrad_like as tl
>>> lin = tl.nn.Linear(2, 1)
>>> seen = []
>>> _ = lin.register_full_backward_hook(lambda m, gin, gout: seen.append((gin[0].shape, gout[0].shape)))
>>> lin(tl.ones(3, 2, requires_grad=True)).sum().backward()
>>> seen
[(tl.Size([3, 2]), tl.Size([3, 1]))]
"""

from __future__ import annotations

from collections.abc import Callable

from ..autograd.function import Function
from ..tensor import Tensor


class BackwardHookFunction(Function):
    """Identity on several tensors whose backward hands the gradients to ``on_backward`` (which may replace them)."""

    @staticmethod
    def forward(ctx, on_backward: Callable, *tensors: Tensor):
        ctx.on_backward = on_backward
        ctx.mark_non_differentiable(*(t for t in tensors if not t.requires_grad))  # (their hooks see zeros)
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        grads = ctx.on_backward(grads)
        return (None, *(g if need else None for g, need in zip(grads, ctx.needs_input_grad[1:])))


class BackwardHook:
    """One call of a module with backward hooks: wraps its inputs and outputs (torch's ``utils.hooks.BackwardHook``
    for modules)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        """``user_hooks``/``user_pre_hooks``: the hooks, in a list or (as torch passes them) a dict by handle id."""
        self.module = module
        self.user_hooks = list(user_hooks.values() if isinstance(user_hooks, dict) else user_hooks)
        self.user_pre_hooks = list(user_pre_hooks.values() if isinstance(user_pre_hooks, dict) else user_pre_hooks)
        self.n_inputs = 0
        self.input_positions: list[int] | None = None  # positions of the tensor inputs (None: none needs grad)
        self.grad_outputs: tuple | None = None

    @staticmethod
    def _wrap(args: tuple, on_backward: Callable) -> tuple[tuple, list[int] | None]:
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not any(args[i].requires_grad for i in positions):
            return args, None
        wrapped = BackwardHookFunction.apply(on_backward, *(args[i] for i in positions))
        wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
        out = list(args)
        for i, w in zip(positions, wrapped):
            out[i] = w
        return tuple(out), positions

    @staticmethod
    def _pack(positions: list[int], grads: tuple, n: int) -> tuple:
        full = [None] * n
        for i, g in zip(positions, grads):
            full[i] = g
        return tuple(full)

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        args, self.input_positions = self._wrap(args, self._input_backward)
        return args

    def setup_output_hook(self, out):
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        self.n_outputs = len(outs)
        wrapped, self.output_positions = self._wrap(outs, self._output_backward)
        return wrapped[0] if single else wrapped

    def _output_backward(self, grads: tuple) -> tuple:
        grad_outputs = self._pack(self.output_positions, grads, self.n_outputs)
        for hook in self.user_pre_hooks:
            result = hook(self.module, grad_outputs)
            if result is not None:
                result = result if isinstance(result, tuple) else (result,)
                if len(result) != len(grad_outputs):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                       f"{len(result)}, but expected {len(grad_outputs)}")
                grad_outputs = result
        self.grad_outputs = grad_outputs
        if self.input_positions is None:  # no input needs a gradient: the hooks run now, with grad_input all None
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                result = hook(self.module, grad_inputs, self.grad_outputs)
                if result is not None and not all(r is None for r in result):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
        return tuple(grad_outputs[i] for i in self.output_positions)

    def _input_backward(self, grads: tuple) -> tuple:
        grad_inputs = self._pack(self.input_positions, grads, self.n_inputs)
        for hook in self.user_hooks:
            result = hook(self.module, grad_inputs, self.grad_outputs)
            if result is not None:
                result = result if isinstance(result, tuple) else (result,)
                if len(result) != len(grad_inputs):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(result)}, "
                                       f"but expected {len(grad_inputs)}")
                grad_inputs = result
        return tuple(grad_inputs[i] for i in self.input_positions)
