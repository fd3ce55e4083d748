"""PyTorch's view of a graph node, beside ours: the questions torch's autograd tutorial and torchviz ask.

A node's class is named as torch's (``MulBackward0``: :mod:`.torch_nodes`) and ``name()`` gives that name;
``next_functions`` are torch's ``(node, input_nr)`` pairs, with an :class:`AccumulateGrad` per leaf;
``register_hook``/``register_prehook`` take torch's node hooks; ``metadata`` is the caller's dict. Everything here
is made on first access, so the op-dispatch path pays nothing for it. Also the saved-tensor hooks' packing
(``torch.autograd.graph.saved_tensors_hooks``) and the thread's running backward pass.

Our own node API (``next``, ``name`` as a string, ``saved_tensors``, ``attributes()``, ``saved_info()``: what the
views read) stays on :class:`~tinygrad_like.autograd.function.Function`.
"""

from __future__ import annotations

import threading
import weakref

from .._format import STYLE as _STYLE
from ..hook_handles import ListHandle
from ..tensor_base import TensorBase
from . import torch_nodes


class _Name(str):
    """A node's ``name``: our op's short name as a string (``'Mul'``, what the views show) that, called as
    torch's ``Node.name()``, gives torch's name (``'MulBackward0'``)."""

    __slots__ = ("torch",)

    def __new__(cls, ours: str, torch: str):
        s = super().__new__(cls, ours)
        s.torch = torch
        return s

    def __call__(self) -> str:
        return self.torch

    def __reduce__(self):
        return str, (str(self),)


class _Running(threading.local):
    state = None  # the backward pass (engine._Pass) this thread is running, or None


_running = _Running()

# saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks): a stack of (pack, unpack); empty almost always
_saved_hooks: list = []


class _Packed:
    """A saved tensor as a pack hook returned it, with the unpack hook that gives it back."""

    __slots__ = ("value", "unpack")

    def __init__(self, value, unpack):
        self.value, self.unpack = value, unpack


class _Packing:
    ever = False  # whether any tensor was ever packed: saved_tensors looks for packed ones only then


def _pack(tensors: tuple) -> tuple:
    _Packing.ever = True
    pack, unpack = _saved_hooks[-1]
    if pack is None:  # (disable_saved_tensors_hooks: refused with its message)
        raise RuntimeError(unpack)
    return tuple(None if t is None else _Packed(pack(t), unpack) for t in tensors)


def name_node_class(cls) -> None:
    """Give a new node class torch's name (called by ``Function.__init_subclass__``)."""
    # torch's name for this op's nodes (AddBackward0): the class's own name for the library's ops, so that
    # type(node).__name__ is torch's; ``name`` keeps our short name for the views. A user's own-style Function
    # keeps its class name.
    ours = cls.__name__
    cls._tl_base = ours
    library = cls.__module__.startswith("tinygrad_like.")
    theirs = torch_nodes.torch_name(ours) if library else f"{ours}Backward0"
    if "name" not in cls.__dict__:
        cls.name = _Name(ours, theirs)
    if library:
        cls.__name__ = theirs
    cls._builtin = library  # (set on every class: a user's subclass of one of our ops must not inherit True)
    if library:
        torch_nodes.install_saved(cls)  # (properties on the class: no __getattr__, which would slow every read)
        if ours in torch_nodes.VARIANTS:
            torch_nodes.install_variants(cls, _Name)


class TorchNodeAPI:
    """torch's node methods, a base of :class:`~tinygrad_like.autograd.function.Function`."""

    __slots__ = ()
    _builtin = False  # the library's own ops (not a user's Function): see saved_tensors
    _pick = None  # (torch_nodes.install_variants: moves a recorded node to its torch variant's class)

    @property
    def saved_tensors(self) -> tuple:
        """The saved tensors (see ``Function._read_saved``).

        Under the torch alias, a built-in op's node answers it only inside a backward pass: torch's built-in nodes
        have no ``saved_tensors`` (programs read ``_saved_*``; torchviz draws a node's saved tensors when it finds
        one), only the nodes of custom Functions do."""
        if _STYLE.torch and _running.state is None and type(self)._builtin:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'saved_tensors' (a built-in "
                                 f"node: read its _saved_* attributes)")
        return self._read_saved()

    @property
    def next_functions(self) -> tuple:
        """torch's edges: one ``(node, input_nr)`` pair per input of torch's op, in torch's order: the parent node,
        the :class:`AccumulateGrad` of a leaf that requires grad, or ``(None, 0)``. Made on first access (the
        engine walks ``next``, which holds the leaf tensors themselves)."""
        try:
            return self._nf
        except AttributeError:
            pass
        nf = self._nf = tuple(_edge_pair(self.next[i]) for i in torch_nodes.torch_slots(self))
        return nf

    @property
    def metadata(self) -> dict:
        """A dict of the caller's own, kept with the node (torch's ``Node.metadata``)."""
        try:
            return self._meta
        except AttributeError:
            self._meta = {}
            return self._meta

    def __dir__(self):
        # torch lists only the _saved_* attributes a node has: leave out those this node cannot answer
        out = []
        for name in super().__dir__():
            if name.startswith("_saved_"):
                try:
                    getattr(self, name)
                except AttributeError:
                    continue
                except RuntimeError:
                    pass  # (freed by backward: still listed, as torch lists it)
            out.append(name)
        return out

    def _sequence_nr(self) -> int:
        return self.seq

    def _register_tensor_hook(self, fn) -> None:
        """A hook of the output tensor (``y.register_hook``): ``fn(grad) -> grad or None``, before backward."""
        if self.hooks is None:
            self.hooks = []
        self.hooks.append(fn)

    def register_hook(self, fn):
        """torch's node hook: ``fn(grad_inputs, grad_outputs) -> grad_inputs or None``, run after this node's
        backward (``grad_inputs``: the gradients it computed, one per input; a tuple returned replaces them)."""
        hook = PostHook(fn)
        self._register_tensor_hook(hook)
        return ListHandle(self.hooks, hook)

    def register_prehook(self, fn):
        """torch's node pre-hook: ``fn(grad_outputs) -> grad_outputs or None``, run before this node's backward."""
        hook = PreHook(fn)
        self._register_tensor_hook(hook)
        return ListHandle(self.hooks, hook)

    def __repr__(self) -> str:
        # torch's repr; name() is the class's name, except for a user's own-style Function (its class keeps the
        # user's name, its node prints as <MyOpBackward0 ...>, as the tensor's grad_fn=<MyOpBackward0> says)
        name = self.name
        return f"<{name() if callable(name) else name} object at {id(self):#x}>"


def pack_saved(node, tensors: tuple) -> None:
    """``save_for_backward`` under ``saved_tensors_hooks``: the versions now, then each tensor through the pack
    hook."""
    node.saved_versions = tuple([-1 if t is None else t._version for t in tensors])
    node.saved = _pack(tensors)


def unpack_all(saved: tuple) -> tuple:
    """Saved tensors as the unpack hooks give them back (those saved under ``saved_tensors_hooks``)."""
    return tuple(t.unpack(t.value) if type(t) is _Packed else t for t in saved)


def current_pass():
    """The backward pass this thread is running, or None (read by ``register_multi_grad_hook``)."""
    return _running.state


def run_leaf_post_hooks(leaf, hooks: list, g) -> None:
    """A leaf's hooks that run after its ``.grad`` was updated: ``register_post_accumulate_grad_hook``'s
    ``fn(leaf)`` and ``AccumulateGrad.register_hook``'s ``fn((), (grad,))``."""
    for h in hooks:
        if type(h) is PostAccumulateHook:
            h.fn(leaf)
        elif type(h) is AccumulatePostHook:
            h.fn((), (g,))


class PreHook:
    """A node pre-hook (torch's ``fn(grad_outputs)``) among a node's tensor hooks: called with the gradient as they
    are, it gives what replaces it (None: unchanged)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, g):
        r = self.fn((g,))
        return None if r is None else r[0]


class PostHook(PreHook):
    """A node hook (torch's ``fn(grad_inputs, grad_outputs)``), run after backward: a no-op among the pre-hooks."""

    __slots__ = ()

    def __call__(self, g):
        return None


class PostAccumulateHook(PostHook):
    """``Tensor.register_post_accumulate_grad_hook``'s ``fn(tensor)``, run after the leaf's ``.grad`` was updated."""

    __slots__ = ()


def run_post_hooks(node, hooks: list, grad_out, grads_in: tuple) -> tuple:
    """Run ``node``'s torch-style hooks after its backward: each sees torch's ``grad_inputs`` (one per torch input)
    and ``grad_outputs``; a tuple returned replaces the gradients."""
    slots = torch_nodes.torch_slots(node)
    for h in hooks:
        if type(h) is not PostHook:
            continue
        r = h.fn(tuple(grads_in[i] if i < len(grads_in) else None for i in slots), (grad_out,))
        if r is not None:
            r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
            if len(r) != len(slots):
                raise RuntimeError(f"hook '{getattr(h.fn, '__name__', h.fn)}' has returned an incorrect number of "
                                   f"values (got {len(r)}, but expected {len(slots)})")
            out = list(grads_in) if grads_in else [None] * len(node.next)
            for i, g in zip(slots, r):
                out[i] = g
            grads_in = tuple(out)
    return grads_in


class AccumulatePostHook(PostHook):
    """``AccumulateGrad.register_hook``'s ``fn(grad_inputs, grad_outputs)``: ``((), (grad,))`` after accumulation."""

    __slots__ = ()


class AccumulateGrad:
    """The node that accumulates a leaf's gradient into its ``.grad`` (torch's ``AccumulateGrad``), as
    ``next_functions`` shows it. One per leaf while a graph (or the caller) holds it, as torch caches it; the engine
    accumulates into the leaf itself, and hooks registered here join the leaf's."""

    __slots__ = ("variable", "_meta", "__weakref__")

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    next_functions = ()

    @property
    def metadata(self) -> dict:
        try:
            return self._meta
        except AttributeError:
            self._meta = {}
            return self._meta

    def _hooks(self) -> list:
        v = self.variable
        if v._hooks is None:
            v._hooks = []
        return v._hooks

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` after the gradient was accumulated (``grad_inputs`` is empty)."""
        hook = AccumulatePostHook(fn)
        self._hooks().append(hook)
        return ListHandle(self.variable._hooks, hook)

    def register_prehook(self, fn):
        """``fn(grad_outputs) -> grad_outputs or None`` before the gradient is accumulated."""
        hook = PreHook(fn)
        self._hooks().append(hook)
        return ListHandle(self.variable._hooks, hook)

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


_accumulators: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(leaf) -> its AccumulateGrad


def grad_accumulator(leaf) -> AccumulateGrad:
    """The leaf's :class:`AccumulateGrad`: the same object while anything holds it (it holds the leaf, so the id
    is not reused meanwhile)."""
    acc = _accumulators.get(id(leaf))
    if acc is None or acc.variable is not leaf:
        acc = _accumulators[id(leaf)] = AccumulateGrad(leaf)
    return acc


def _edge_pair(p) -> tuple:
    """torch's ``(node, input_nr)`` for one of our edges."""
    if p is None:
        return (None, 0)
    if not isinstance(p, TensorBase):  # (a node; a leaf tensor otherwise)
        owner = getattr(p, "owner", None)  # (the output node of a context-style Function with several outputs)
        if owner is not None and not isinstance(owner, TensorBase) and hasattr(p, "index"):
            return (owner, p.index)
        return (p, 0)
    return (grad_accumulator(p), 0)
