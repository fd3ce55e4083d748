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
>>> y = checkpoint(lambda t: tl.nn.functional.dropout(lin(t).relu(), 0.5), x, use_reentrant=False)
>>> y.grad_fn.name
'Checkpoint'
>>> y.sum().backward(); x.grad.shape, lin.weight.grad.shape
(tl.Size([2, 3]), tl.Size([3, 3]))
"""

from __future__ import annotations

import contextlib
import enum
import functools
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager

from .. import random as _random
from ..autograd import grad_mode
from ..autograd.function import Function
from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "get_device_states", "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts", "SAC_IGNORED_OPS", "GraphExecGroup"]


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
    candidates: list = []
    while isinstance(function, functools.partial) or hasattr(function, "__wrapped__"):
        if isinstance(function, functools.partial):  # keyword arguments checkpoint passes on: tensors among them
            candidates += [*function.args, *function.keywords.values()]
            function = function.func
        else:
            function = function.__wrapped__
    candidates.append(getattr(function, "__self__", function))
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


def checkpoint(function: Callable[..., Tensor], *args, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[ContextManager, ContextManager]] | None = None,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True, **kwargs) -> Tensor:
    """Run ``function(*args)`` now without keeping its activations; recompute them in backward.

    As torch: ``preserve_rng_state`` (default True) comes through ``kwargs``, ``use_reentrant=None`` warns, and
    other keyword arguments (passed on to ``function``), ``context_fn`` and ``debug`` need ``use_reentrant=False``.
    Both variants run the reentrant implementation here: parameters receive ``.grad`` in ``backward()``, and
    ``tl.autograd.grad`` cannot see through a checkpoint. ``context_fn``'s two contexts wrap the first run and the
    recomputation; ``determinism_check``, ``debug`` and ``early_stop`` are accepted and change nothing.
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant and (context_fn is not None and context_fn is not noop_context_fn or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if not callable(function):
        raise TypeError(f"checkpoint: expected a callable, got {type(function).__name__}")
    if context_fn is not None and context_fn is not noop_context_fn:
        function = _in_contexts(function, context_fn)
    if kwargs:
        function = functools.partial(function, **kwargs)
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


def _in_contexts(function, context_fn):
    """``function`` run inside ``context_fn()``'s first context the first time, its second one when recomputed."""
    calls = [0]

    def run(*args, **kwargs):
        forward_ctx, recompute_ctx = context_fn()
        with forward_ctx if calls[0] == 0 else recompute_ctx:
            calls[0] += 1
            return function(*args, **kwargs)

    run.__wrapped__ = function  # (so _params finds the parameters of the function inside)
    return run


def checkpoint_sequential(functions, segments: int, input: Tensor, use_reentrant: bool | None = None,
                          **kwargs) -> Tensor:
    """Split a ``Sequential`` (or list of modules) into ``segments`` chunks as torch does (``len // segments`` each,
    the rest in the last) and checkpoint each chunk but the last."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    mods = list(functions)
    if not 1 <= segments <= max(len(mods), 1):
        raise ValueError(f"checkpoint_sequential: segments must be in [1, {len(mods)}], got {segments}")
    from ..nn import Sequential  # a module, so checkpoint() sees the chunk's parameters
    size = len(mods) // segments
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(Sequential(*mods[start:end]), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return Sequential(*mods[end:])(input)


def noop_context_fn() -> tuple[ContextManager, ContextManager]:
    """The default ``context_fn``: two contexts that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointError(RuntimeError):
    """What torch raises when a recomputation differs from the first run (tensors saved differ)."""


class CheckpointFunction:
    """torch's reentrant checkpoint as an autograd Function: ``CheckpointFunction.apply(run_function,
    preserve_rng_state, *args)`` is ``checkpoint(run_function, *args, use_reentrant=True, ...)``."""

    @staticmethod
    def apply(run_function, preserve_rng_state: bool, *args) -> Tensor:
        return checkpoint(run_function, *args, use_reentrant=True, preserve_rng_state=preserve_rng_state)


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor detached, keeping its ``requires_grad``; other values pass through."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """Warn (as torch) when no input tensor requires grad: the checkpointed segment's gradients would be None."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


class DefaultDeviceType:
    """The device type whose RNG state checkpointing saves besides the CPU's ("cuda" unless set)."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args) -> tuple[list[int], list]:
    """The devices of the tensor arguments other than the CPU, and their RNG states: one generator serves every
    device in tinygrad_like (the CPU's, which checkpoint saves anyway), so there is none to add: ``([], [])``."""
    return [], []


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restore what :func:`get_device_states` returned: nothing to restore here (see there)."""


_checkpoint_debug_enabled: bool | None = None
_enable_checkpoint_early_stop: bool | None = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Context manager overriding checkpoint's ``debug`` flag (accepted; the reentrant checkpoint has no trace)."""
    global _checkpoint_debug_enabled
    prev, _checkpoint_debug_enabled = _checkpoint_debug_enabled, enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Context manager overriding checkpoint's ``early_stop`` (accepted: the recomputation here always runs the
    whole segment)."""
    global _enable_checkpoint_early_stop
    prev, _enable_checkpoint_early_stop = _enable_checkpoint_early_stop, enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function receives (``is_recompute``, ``op_output``)."""

    def __init__(self, *, is_recompute, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Whether a selective checkpoint saves an op's output or recomputes it."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


# torch lists aten ops selective checkpointing never caches; tinygrad_like has no aten op registry
SAC_IGNORED_OPS: set = set()


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation: bool = False):
    """The two contexts of a selective checkpoint (pass ``functools.partial(create_selective_checkpoint_contexts,
    policy)`` as ``context_fn``).

    tinygrad_like recomputes every op of a checkpointed segment, which torch's documentation calls equivalent to a
    policy that answers PREFER_RECOMPUTE for every op: the gradients are the same whatever the policy, only the
    memory saved differs, and the policy function is never called."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not callable(op):
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. ")
    elif not callable(policy_fn_or_list):
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return contextlib.nullcontext(), contextlib.nullcontext()


class GraphExecGroup:
    """Backward calls under one instance recompute each checkpointed region at most once (torch: only for
    use_reentrant=False). The reentrant checkpoint here recomputes once per backward anyway: a no-op context."""

    def __enter__(self) -> GraphExecGroup:
        return self

    def __exit__(self, *exc) -> None:
        return None
