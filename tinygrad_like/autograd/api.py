"""``tl.autograd.grad``: gradients of outputs with respect to chosen inputs, without touching ``.grad``."""

from __future__ import annotations

from . import engine


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool = False) -> tuple:
    """Return d(outputs)/d(inputs) as a tuple (one entry per input), as ``torch.autograd.grad``."""
    from ..tensor import Tensor
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
        result.append(g)
    return tuple(result)
