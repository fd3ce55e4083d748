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

from ..hook_handles import ListHandle, RemovableHandle  # noqa: F401 - torch.utils.hooks's names
from ..nn.backward_hooks import BackwardHook  # noqa: F401 - (the module hooks' machinery, torch's helper)

__all__ = ["RemovableHandle", "BackwardHook", "unserializable_hook", "warn_if_has_hooks"]


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


