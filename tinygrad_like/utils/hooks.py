"""``torch.utils.hooks``: the handle every ``register_*hook`` returns, and the helpers around hooks.

:class:`RemovableHandle` is torch's (hooks in a dict keyed by the handle's ``id``; ``extra_dict`` keys removed
with it; a context manager). The autograd hooks of tensors and graph nodes live in lists (the engine runs them in
order): their handles are :class:`ListHandle`, a ``RemovableHandle`` that takes the hook out of its list.

>>> import tinygrad_like as tl
>>> x = tl.ones(2, requires_grad=True)
>>> h = x.register_hook(lambda g: g * 2)
>>> isinstance(h, RemovableHandle)
True
"""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from typing import Any

from ..tensor_base import TensorBase

__all__ = ["RemovableHandle", "BackwardHook", "unserializable_hook", "warn_if_has_hooks"]


class RemovableHandle:
    """A handle which provides the capability to remove a hook.

    ``hooks_dict``: the hooks, indexed by hook ``id``; ``extra_dict``: a dict or list of dicts whose keys are
    deleted when the same key is removed from ``hooks_dict``."""

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict) if hooks_dict is not None else lambda: None
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref: tuple = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None and self.id in extra:
                del extra[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        self.hooks_dict_ref = weakref.ref(state[0] if state[0] is not None else OrderedDict())
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = () if len(state) < 3 or state[2] is None else tuple(weakref.ref(d) for d in state[2])

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, type: Any, value: Any, tb: Any) -> None:  # noqa: A002 - torch's parameter names
        self.remove()


class ListHandle(RemovableHandle):
    """The handle of a hook kept in a list (a tensor's or a graph node's autograd hooks)."""

    def __init__(self, hooks: list, hook) -> None:
        super().__init__(None)
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        hooks = self._hooks
        for i, h in enumerate(hooks):
            if h is self._hook:
                del hooks[i]
                return

    def __getstate__(self):
        return (None, self.id, ())

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        self._hooks, self._hook = [], None


def unserializable_hook(f):
    """Mark a function as an unserializable hook: no warning when a tensor holding it is serialized."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor) -> None:
    """Warn for each backward hook of ``tensor`` that serialization will drop (unless marked unserializable)."""
    for hook in _backward_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
                          "decorate the function with @torch.utils.hooks.unserializable_hook to suppress this "
                          "warning", stacklevel=2)


def _backward_hooks(tensor) -> list:
    hooks = getattr(tensor, "_backward_hooks", None)
    if isinstance(hooks, dict):
        return list(hooks.values())
    node = getattr(tensor, "grad_fn", None)
    own = getattr(tensor, "_hooks", None) if node is None else node.hooks
    return [getattr(h, "fn", h) for h in own or ()]


class BackwardHook:
    """A module's full backward hooks over one call (torch's helper for ``register_full_backward_hook``).

    ``setup_input_hook(args)`` and ``setup_output_hook(args)`` return the arguments (outputs) with hooks attached:
    when the outputs' gradients arrive, ``user_pre_hooks`` run as ``hook(module, grad_output)`` (a result replaces
    them); when the inputs' gradients are computed, ``user_hooks`` run as ``hook(module, grad_input,
    grad_output)`` (a result replaces ``grad_input``)."""

    def __init__(self, module, user_hooks, user_pre_hooks) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.n_inputs = -1
        self.input_tensors_index = None
        self._inputs: list = []

    def _apply_on_tensors(self, fn, args):
        is_tuple = isinstance(args, tuple)
        items = args if is_tuple else (args,)
        idx = [i for i, a in enumerate(items) if isinstance(a, TensorBase) and a.requires_grad]
        if not idx:
            return args
        out = list(items)
        for slot, i in enumerate(idx):
            out[i] = fn(items[i], slot, len(idx))
        return tuple(out) if is_tuple else out[0]

    def setup_output_hook(self, args):
        def attach(t, slot, n):
            t = t.view_as(t)
            grads = [None] * n
            self.n_outputs = n

            def hook(g, slot=slot):
                grads[slot] = g
                self.grad_outputs = tuple(grads)
                for pre in list(_values(self.user_pre_hooks)):
                    r = pre(self.module, self.grad_outputs)
                    if r is not None:
                        self.grad_outputs = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                return self.grad_outputs[slot]

            t.register_hook(hook)
            return t

        return self._apply_on_tensors(attach, args)

    def setup_input_hook(self, args):
        def attach(t, slot, n):
            t = t.view_as(t)
            grads = [None] * n
            self.n_inputs = n

            def hook(g, slot=slot):
                grads[slot] = g
                grad_input = tuple(grads)
                for user in list(_values(self.user_hooks)):
                    r = user(self.module, grad_input, self.grad_outputs)
                    if r is not None:
                        grad_input = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                return grad_input[slot]

            t.register_hook(hook)
            return t

        return self._apply_on_tensors(attach, args)


def _values(hooks):
    return hooks.values() if isinstance(hooks, dict) else hooks
