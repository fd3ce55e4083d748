"""``torch.autograd.graph``: the graph's node type, saved-tensor hooks, gradient edges and multi-tensor hooks.

* :class:`Node`: the abstract base of graph nodes; every node of ours (and each :class:`AccumulateGrad`) is one
  (``isinstance(z.grad_fn, Node)``), as in torch.
* :class:`saved_tensors_hooks` ``(pack_hook, unpack_hook)``: while active, every tensor an op saves for backward
  goes through ``pack_hook`` as it is saved, and comes back through ``unpack_hook`` when backward (or
  ``_saved_*``) reads it; :class:`save_on_cpu` (packs a copy on the CPU) and
  :func:`disable_saved_tensors_hooks` (refuses any) are built on it.
* :class:`GradientEdge` / :func:`get_gradient_edge`, :func:`increment_version`, :func:`register_multi_grad_hook`.

>>> import tinygrad_like as tl
>>> x = tl.ones(2, requires_grad=True)
>>> with saved_tensors_hooks(lambda t: t * 10, lambda t: t / 10):
...     y = x * x
>>> isinstance(y.grad_fn, Node), y.grad_fn._saved_self.tolist()
(True, [1.0, 1.0])
"""

from __future__ import annotations

import abc
import contextlib
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from ..hook_handles import RemovableHandle
from ..tensor_base import TensorBase
from ..unsupported import unsupported_function
from . import node_api as _node_api
from .function import Function
from .node_api import AccumulateGrad, grad_accumulator

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "register_multi_grad_hook", "increment_version",
           "allow_mutation_on_saved_tensors"]


class Node(abc.ABC):
    """The abstract base of autograd graph nodes: ``name()``, ``next_functions``, ``metadata``,
    ``register_hook`` and ``register_prehook`` (our :class:`~tinygrad_like.autograd.Function` nodes and
    :class:`AccumulateGrad` are its virtual subclasses)."""

    @abc.abstractmethod
    def name(self) -> str:
        ...

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple:
        ...

    @abc.abstractmethod
    def metadata(self) -> dict:
        ...

    @abc.abstractmethod
    def register_hook(self, fn: Callable) -> RemovableHandle:
        ...

    @abc.abstractmethod
    def register_prehook(self, fn: Callable) -> RemovableHandle:
        ...

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node and issubclass(subclass, (Function, AccumulateGrad)):
            return True
        return NotImplemented


class GradientEdge(NamedTuple):
    """An edge of the graph: a node and which of its outputs (``output_nr``)."""

    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge the gradient of ``tensor`` flows along: its ``grad_fn`` (or its ``AccumulateGrad``, for a leaf)."""
    if not isinstance(tensor, TensorBase):
        raise TypeError(f"get_gradient_edge(): expected a Tensor, got {type(tensor).__name__}")
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    node = tensor.grad_fn
    if node is None:
        return GradientEdge(grad_accumulator(tensor), 0)
    node, nr = _node_api._edge_pair(node)
    return GradientEdge(node, nr)


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """Context manager: pack each tensor saved for backward with ``pack_hook`` and unpack it with ``unpack_hook``
    when it is read (hooks nest: the innermost applies)."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> None:
        if _disabled.message is not None:
            raise RuntimeError(_disabled.message)
        _node_api._saved_hooks.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *args: object) -> None:
        _node_api._saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Saved tensors are kept as copies on the CPU and moved back to their device when backward reads them."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t):
            return (t.device, t.detach().to("cpu", copy=True))

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class _Disabled(threading.local):
    message: str | None = None


_disabled = _Disabled()


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Inside, using :class:`saved_tensors_hooks` (or saving a tensor under hooks already active) raises
    RuntimeError with ``error_message``."""
    prev = _disabled.message
    _disabled.message = error_message
    _node_api._saved_hooks.append((None, error_message))
    try:
        yield
    finally:
        _node_api._saved_hooks.pop()
        _disabled.message = prev


def increment_version(tensor: TensorBase | Iterable[TensorBase]) -> None:
    """Count an in-place write that autograd did not see (``tensor``'s version goes up by one)."""
    tensors = (tensor,) if isinstance(tensor, TensorBase) else tuple(tensor)
    for t in tensors:
        t._storage.bump("increment_version")


class _MultiHandle(RemovableHandle):
    def __init__(self, handles: list) -> None:
        super().__init__(None)
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors: Sequence[TensorBase], fn: Callable, *, mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once per backward for the gradients of ``tensors``.

    ``mode="all"``: ``fn(grads)`` with one entry per tensor (None for a tensor whose gradient was not computed),
    once the gradients of all of them that the pass reaches were computed. ``mode="any"``: ``fn(grad)`` with the
    first of them computed."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    state: dict = {"grads": [None] * len(tensors), "seen": 0, "fired": False, "pass": None}

    def pass_id():

        return _node_api.current_pass()

    def make(i):
        def hook(g):
            with lock:
                p = pass_id()
                if state["pass"] is not p:
                    state.update(grads=[None] * len(tensors), seen=0, fired=False)
                    state["pass"] = p
                if mode == "any":
                    if not state["fired"]:
                        state["fired"] = True
                        fn(g)
                    return None
                state["grads"][i] = g
                state["seen"] += 1
                expected = sum(1 for t in tensors if engine_reaches(t, p))
                if state["seen"] >= expected and not state["fired"]:
                    state["fired"] = True
                    fn(tuple(state["grads"]))
            return None

        return hook

    handles = [t.register_hook(make(i)) for i, t in enumerate(tensors) if t.requires_grad]
    return _MultiHandle(handles)


def engine_reaches(tensor, pass_state) -> bool:
    """Whether the running backward pass will compute ``tensor``'s gradient."""
    if pass_state is None:
        return True
    node = tensor.grad_fn
    if node is not None:
        return node in pass_state.nodes
    return tensor in pass_state.leaf_deps or tensor in pass_state.leaf_pending


# torch clones a saved tensor when it is written in place inside this context; the in-place ops here do not call
# back into the graph's saved tensors, so such writes are refused at backward (VersionMismatchError) instead
allow_mutation_on_saved_tensors = unsupported_function(
    "torch.autograd.graph.allow_mutation_on_saved_tensors",
    "in-place writes to tensors saved for backward are refused at backward here (VersionMismatchError, naming the "
    "write); clone() the tensor before writing to it instead")
