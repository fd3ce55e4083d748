"""The handle every ``register_*hook`` returns (torch's ``torch.utils.hooks.RemovableHandle``), at the bottom of the
layers so that modules, optimizers and autograd nodes can all return one (``tinygrad_like.utils.hooks`` re-exports
it under torch's name).

:class:`RemovableHandle` is torch's (hooks in a dict keyed by the handle's ``id``; ``extra_dict`` keys removed
with it; a context manager). The autograd hooks of tensors and graph nodes live in lists (the engine runs them in
order): their handles are :class:`ListHandle`, a ``RemovableHandle`` that takes the hook out of its list.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

__all__ = ["RemovableHandle", "ListHandle"]


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
