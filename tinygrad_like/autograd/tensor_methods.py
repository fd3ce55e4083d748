"""Tensor methods that run backward: ``backward()`` and ``backward_steps()``."""

from __future__ import annotations

from .. import events, sites
from ..tensor_base import TensorBase
from . import engine


class AutogradMixin:
    """Tensor methods that run backward: ``backward()`` and ``backward_steps()``."""

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
            from ..autograd.api import backward
            backward(self, gradient, retain_graph, create_graph, inputs=inputs)
            return
        engine.run_backward((self,), (self._root_grad(gradient),), retain_graph, create_graph)
