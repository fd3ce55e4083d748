"""``tl.autograd.grad``: gradients of outputs with respect to chosen inputs, without touching ``.grad``."""

from __future__ import annotations

from ..creation import zeros_like
from ..functions import stack
from ..tensor import Tensor
from . import engine


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """Return d(outputs)/d(inputs) as a tuple (one entry per input), as ``torch.autograd.grad``.

    ``allow_unused`` (default: ``materialize_grads``) gives None for an input the outputs do not depend on,
    ``materialize_grads=True`` zeros instead. ``is_grads_batched=True`` treats the first dim of every
    ``grad_outputs`` entry as a batch: one backward per entry (a loop here, not vmap), results stacked.
    ``only_inputs`` is accepted and ignored, as in torch."""
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    single = isinstance(outputs, Tensor)
    outputs = (outputs,) if single else tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grad_outputs)} entries but there are {len(outputs)} outputs")
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs[{i}] must be a Tensor, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors (inputs[{i}], shape {t.shape}) does not "
                               f"require grad")
    roots = [o._root_grad(g) for o, g in zip(outputs, grad_outputs)]
    keys = [t.grad_fn if t.grad_fn is not None else t for t in inputs]
    capture = {k: None for k in keys}
    if retain_graph is None:
        retain_graph = create_graph
    engine.run_backward(outputs, roots, retain_graph, create_graph, capture=capture)
    result = []
    for i, k in enumerate(keys):
        g = capture[k]
        if g is None and not allow_unused:
            raise RuntimeError(f"One of the differentiated Tensors (inputs[{i}]) appears to not have been used "
                               f"in the graph. Set allow_unused=True if this is the desired behavior.")
        if g is None and materialize_grads:
            g = zeros_like(inputs[i])
        result.append(g)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    if grad_outputs is None:
        raise RuntimeError("is_grads_batched=True needs grad_outputs (a batch of gradients per output)")
    gos = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    n = gos[0].shape[0]
    rows = [grad(outputs, inputs, tuple(g[b] for g in gos), retain_graph=True if b < n - 1 else retain_graph,
                 create_graph=create_graph, allow_unused=allow_unused, materialize_grads=materialize_grads)
            for b in range(n)]
    return tuple(None if rows[0][i] is None else stack([r[i] for r in rows]) for i in range(len(rows[0])))


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables=None, inputs=None) -> None:
    """``torch.autograd.backward``: accumulate the gradients of ``tensors`` into the leaves' ``.grad`` (only
    into ``inputs``'s, when given)."""
    tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        roots = [o._root_grad(g) for o, g in zip(tensors, grad_tensors)]
        engine.run_backward(tensors, roots, retain_graph, create_graph)
        return
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    gs = grad(tensors, inputs, grad_tensors, retain_graph=retain_graph, create_graph=create_graph,
              allow_unused=True)
    for t, g in zip(inputs, gs):
        if g is not None:
            if not create_graph:
                g = g.detach()
            t.grad = g if t.grad is None else t.grad + g
