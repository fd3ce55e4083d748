"""Tensor methods of autograd: ``backward()``, ``backward_steps()``, ``.grad``, ``retain_grad()``, hooks."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from .. import events, sites
from ..hook_handles import ListHandle
from ..tensor_base import TensorBase

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor
from . import engine
from .node_api import PostAccumulateHook


class AutogradMixin:
    """Tensor methods of autograd: ``backward()``, ``backward_steps()``, ``.grad``, ``retain_grad()``, hooks."""

    __slots__ = ()

    def _root_grad(self, gradient):
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if gradient is None:
            if self.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs; this tensor has "
                                   f"shape {self.shape}: pass backward(gradient=...) of that shape, or reduce "
                                   f"first (e.g. .sum())")
            if events.ACTIVE:  # (its kernel is the pass's first: reported as backward, as the engine's are)
                return sites.as_backward(self._full_like, 1.0)
            return self._full_like(1.0)
        if not isinstance(gradient, TensorBase):
            gradient = self._from_value(gradient)
        if gradient.shape != self.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {gradient.shape} and "
                               f"output[0] has a shape of {self.shape}.")
        if gradient._dev is not self._dev:
            raise RuntimeError(f"backward: gradient is on {gradient._dev} but the tensor is on {self._dev}")
        return gradient

    def backward_steps(self, gradient=None, retain_graph: bool = False, create_graph: bool = False):
        """A generator running backward one node at a time; yields :class:`~engine.Step` records."""
        return engine.backward_steps((self,), (self._root_grad(gradient),), retain_graph or create_graph,
                                     create_graph)

    def backward(self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (the pass :meth:`backward_steps` steps through, run
        to the end at once); with ``inputs``, only into those tensors' ``.grad`` (as torch's)."""
        if retain_graph is None:
            retain_graph = create_graph
        if inputs is not None:
            # (autograd.api is a higher layer: a module-level import would be a cycle)
            from ..autograd.api import backward
            backward(self, gradient, retain_graph, create_graph, inputs=inputs)
            return
        engine.run_backward((self,), (self._root_grad(gradient),), retain_graph, create_graph)

    # ---- autograd ----------------------------------------------------------------------------
    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (None until a backward reaches this leaf, or after ``zero_grad``)."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        # as torch: a gradient of another shape, dtype or device is refused when assigned, not deep inside an
        # optimizer step later
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._x.shape != self._x.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                                   f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                                   f"the same size")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype '{value.dtype.name}' to a tensor "
                                   f"with dtype '{self.dtype.name}'. The gradient must have the tensor's dtype")
            if value._dev is not self._dev and str(value._dev) != str(self._dev):
                raise RuntimeError(f"assigned grad has data located on a different device: the tensor is on "
                                   f"{self._dev}, the gradient on {value._dev}")
        self._grad = value

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (its ``_base``), as torch's (torchviz reads it)."""
        return self._base is not None

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        node = self.grad_fn
        if node is None:
            return
        if node.retained is None:
            node.retained = []
        if not any(r() is self for r in node.retained):
            node.retained.append(weakref.ref(self))

    def register_hook(self, hook):
        """``hook(grad) -> Tensor or None`` runs when this tensor's gradient is computed; returns a
        ``torch.utils.hooks.RemovableHandle``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            self.grad_fn._register_tensor_hook(hook)
            hooks = self.grad_fn.hooks
        else:
            if self._hooks is None:
                self._hooks = []
            self._hooks.append(hook)
            hooks = self._hooks
        return ListHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after a backward accumulated this leaf's ``.grad`` (as torch's: leaves only)."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        entry = PostAccumulateHook(hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(entry)
        return ListHandle(self._hooks, entry)
