"""Gradient checkpointing: trade compute for memory by re-running a segment during backward.

``checkpoint(fn, *inputs)`` runs ``fn`` without recording a graph, so none of its intermediate
activations are kept; backward runs ``fn`` again (with grad) and backpropagates through that
fresh graph. The default generator's state is saved before the first run and restored for the
second, so dropout draws the same mask both times and the gradients are exactly those of the
uncheckpointed model.

Like PyTorch's reentrant checkpoint, parameters used inside ``fn`` receive their gradients in
``.grad`` during ``backward()``; ``tl.autograd.grad`` cannot see through a checkpoint.

>>> import tinygrad_like as tl
>>> from tinygrad_like.utils.checkpoint import checkpoint
>>> lin = tl.nn.Linear(3, 3)
>>> x = tl.randn(2, 3, requires_grad=True)
>>> y = checkpoint(lambda t: tl.nn.functional.dropout(lin(t).relu(), 0.5), x)
>>> y.grad_fn.name
'Checkpoint'
>>> y.sum().backward(); x.grad.shape, lin.weight.grad.shape
(tl.Size([2, 3]), tl.Size([3, 3]))
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from .. import random as _random
from ..autograd import grad_mode
from ..autograd.function import Function
from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = ["checkpoint", "checkpoint_sequential"]


class Checkpoint(Function):
    """The node standing in for the whole segment: it keeps the inputs and the RNG state, nothing else.

    Its inputs are the segment's tensor arguments followed by the parameters of ``fn`` (when
    ``fn`` is a module), so the node is recorded even when only the parameters need gradients.
    """

    __slots__ = ("fn", "rng_state", "template", "n_params")

    def forward(self, first, fn, rng_state, template, n_params, *rest):
        self.fn, self.rng_state, self.template, self.n_params = fn, rng_state, template, n_params
        tensors = (first, *rest[:len(rest) - n_params])
        self.save_for_backward(*tensors)
        with grad_mode.no_grad():
            out = fn(*_fill(template, tensors))
        if not isinstance(out, Tensor):
            raise TypeError(f"checkpoint: the function must return one Tensor, got {type(out).__name__}")
        if any(out._storage is t._storage for t in tensors):  # a view of an input: storages must not alias
            return out._dev.backend.copy(out._x)
        return out._x

    def backward(self, g):
        inputs = [t.detach().requires_grad_(t.requires_grad and t.dtype.is_floating_point)
                  for t in self.saved_tensors]
        outer_state = _random.get_rng_state() if self.rng_state is not None else None
        try:
            if self.rng_state is not None:
                _random.set_rng_state(self.rng_state)  # the same dropout masks as the first run
            with grad_mode.enable_grad():
                out = self.fn(*_fill(self.template, inputs))
        finally:
            if outer_state is not None:
                _random.set_rng_state(outer_state)
        if out.requires_grad:
            out.backward(g.detach())  # parameters used inside fn accumulate into .grad here
        grads = [t.grad for t in inputs]
        return (grads[0], None, None, None, None, *grads[1:], *([None] * self.n_params))


def _fill(template: tuple, tensors) -> list:
    """The call's arguments: tensors put back into their places among the other arguments."""
    it = iter(tensors)
    return [next(it) if a is _TENSOR else a for a in template]


_TENSOR = object()


def _params(function) -> list:
    """Trainable parameters the segment uses that are not among its inputs: those of a module (or of
    the module behind a bound method), and of modules and tensors captured by a closure."""
    found: list = []
    candidates = [getattr(function, "__self__", function)]
    for cell in getattr(function, "__closure__", None) or ():
        try:
            candidates.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    seen = set()
    for obj in candidates:
        params = getattr(obj, "parameters", None)
        items = list(params()) if callable(params) else [obj] if isinstance(obj, Tensor) else []
        for p in items:
            if isinstance(p, Tensor) and p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                found.append(p)
    return found


def checkpoint(function: Callable[..., Tensor], *args, preserve_rng_state: bool = True,
               use_reentrant: bool | None = None) -> Tensor:
    """Run ``function(*args)`` now without keeping its activations; recompute them in backward.

    ``use_reentrant`` is accepted for PyTorch compatibility; the behaviour is the reentrant one.
    """
    if not callable(function):
        raise TypeError(f"checkpoint: expected a callable, got {type(function).__name__}")
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not tensors or not isinstance(args[0], Tensor):
        raise TypeError("checkpoint: the first input must be a Tensor (the activations flowing into the segment)")
    if not _grad_mode.enabled:
        return function(*args)
    state = _random.get_rng_state() if preserve_rng_state else None
    template = tuple(_TENSOR if isinstance(a, Tensor) else a for a in args)
    params = [p for p in _params(function) if not any(p is t for t in tensors)]
    if not params and not any(t.requires_grad for t in tensors):
        warnings.warn("checkpoint: none of the inputs requires grad and no parameters were found in the function "
                      "(a module, a bound method or a closure over them): its result will have no gradient",
                      stacklevel=2)
    return Checkpoint.apply(tensors[0], function, state, template, len(params), *tensors[1:], *params)


def checkpoint_sequential(functions, segments: int, input: Tensor, preserve_rng_state: bool = True) -> Tensor:
    """Split a ``Sequential`` (or list of modules) into ``segments`` chunks and checkpoint each but the last."""
    mods = list(functions)
    if not 1 <= segments <= max(len(mods), 1):
        raise ValueError(f"checkpoint_sequential: segments must be in [1, {len(mods)}], got {segments}")
    from ..nn import Sequential  # a module, so checkpoint() sees the chunk's parameters
    size = -(-len(mods) // segments)
    for start in range(0, len(mods), size):
        chunk = Sequential(*mods[start:start + size])
        if start + size >= len(mods):
            return chunk(input)
        input = checkpoint(chunk, input, preserve_rng_state=preserve_rng_state)
    return input
