"""``tl.autograd.functional``: derivatives of a whole function, as ``torch.autograd.functional``.

``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``vhp``, ``hvp`` take ``func`` and ``inputs`` (a Tensor or a tuple
of Tensors) and return results shaped as PyTorch's: ``jacobian`` of a Tensor -> Tensor function is one tensor
of shape ``output.shape + input.shape``; with a tuple of inputs and/or outputs it is a tuple (of tuples,
``[output][input]``). The inputs are differentiated as fresh leaves (``detach().requires_grad_()``), so the
caller's tensors are untouched; results are detached unless ``create_graph=True``.

A Jacobian is built one output element at a time (one backward per row, reverse mode); ``vectorize=True`` is
accepted and computes the same rows (there is no vmap here). An output that does not depend on an input gives
zeros, or a RuntimeError with ``strict=True``.

>>> import tinygrad_like as tl
>>> from tinygrad_like.autograd.functional import jacobian, hessian
>>> jacobian(lambda x: x ** 2, tl.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
>>> hessian(lambda x: (x ** 3).sum(), tl.tensor([1.0, 2.0]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from __future__ import annotations

from ..creation import ones_like, zeros, zeros_like
from ..functions import stack
from ..tensor import Tensor
from . import grad_mode
from .api import grad as autograd_grad

__all__ = ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"]


def _as_tuple(x, arg: str, fn: str) -> tuple[bool, tuple]:
    if isinstance(x, Tensor):
        return False, (x,)
    if not isinstance(x, tuple):
        x = (x,) if not isinstance(x, list) else tuple(x)
    for i, e in enumerate(x):
        if not isinstance(e, Tensor):
            if arg == "outputs":
                raise TypeError(f"The outputs of the user-provided function given to {fn} must be either a Tensor "
                                f"or a tuple of Tensors but the given outputs of the user-provided function has "
                                f"type {type(e)}.")
            raise TypeError(f"The {arg} given to {fn} must be either a Tensor or a tuple of Tensors but the value "
                            f"at index {i} has type {type(e)}.")
    return True, x


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """Fresh leaves to differentiate: with ``create_graph`` an input that requires grad stays connected."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t) if hasattr(t, "view_as") else t * 1)
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _finish(t, create_graph: bool):
    if t is None:
        return None
    return t if create_graph else t.detach()


def _call(func, inputs: tuple, fn: str):
    with grad_mode.enable_grad():
        out = func(*inputs)
    return _as_tuple(out, "outputs", fn)


def _independent(i: int, j: int, what: str = "Output") -> RuntimeError:
    return RuntimeError(f"{what} {i} of the user-provided function is independent of input {j}. This is not "
                        f"allowed in strict mode.")


def _grads(outs: tuple, inputs: tuple, grad_outputs: tuple, create_graph: bool) -> tuple:
    """d(outs)/d(inputs) against ``grad_outputs``, None where an input is unused (outputs that do not require
    grad contribute nothing)."""
    pairs = [(o, g) for o, g in zip(outs, grad_outputs) if o is not None and o.requires_grad and g is not None]
    if not pairs:
        return (None,) * len(inputs)
    return autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                 create_graph=create_graph, allow_unused=True)


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (see the module docstring for the shapes)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')

    tuple_in, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = _prepare(inputs, create_graph)
    tuple_out, outs = _call(func, inputs, "jacobian")
    result = []
    for i, o in enumerate(outs):
        rows: list[list] = [[] for _ in inputs]
        used = [False] * len(inputs)
        n = o.numel()
        for k in range(n):
            onehot = zeros(n, dtype=o.dtype, device=o.device)
            onehot[k] = 1.0
            gs = _grads((o,), inputs, (onehot.reshape(o.shape),), create_graph)
            for j, g in enumerate(gs):
                if g is not None:
                    used[j] = True
                rows[j].append(g)
        per_input = []
        for j, x in enumerate(inputs):
            if strict and n and not used[j]:
                raise _independent(i, j)
            filled = [zeros(x.shape, dtype=x.dtype, device=x.device) if g is None else g for g in rows[j]]
            jac = stack(filled).reshape(tuple(o.shape) + tuple(x.shape)) if n else \
                zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype, device=x.device)
            per_input.append(_finish(jac, create_graph))
        result.append(tuple(per_input))
    if not tuple_out and not tuple_in:
        return result[0][0]
    if not tuple_out:
        return result[0]
    if not tuple_in:
        return tuple(r[0] for r in result)
    return tuple(result)


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function with a single-element output: ``H[i][j] = d2 f / (d input_i d input_j)``."""
    tuple_in, tinputs = _as_tuple(inputs, "inputs", "hessian")

    def first(*xs):
        tuple_out, out = _as_tuple(func(*xs), "outputs", "hessian")
        if tuple_out:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        o = out[0].reshape(())
        xs_p = xs
        if not o.requires_grad:
            if strict:
                raise RuntimeError("The output of the user-provided function is independent of input 0. This is "
                                   "not allowed in strict mode.")
            return tuple(zeros_like(x) for x in xs_p)
        gs = autograd_grad(o, xs_p, retain_graph=True, create_graph=True, allow_unused=True)
        out_g = []
        for j, (g, x) in enumerate(zip(gs, xs_p)):
            if g is None:
                if strict:
                    raise _independent(0, j)
                g = zeros_like(x)
            out_g.append(g)
        return tuple(out_g)

    res = jacobian(first, tinputs if tuple_in else tinputs[0], create_graph=create_graph, strict=strict)
    if not tuple_in:
        return res[0] if isinstance(res, tuple) else res
    return res


def _check_v(v, inputs_like: tuple, tuple_like: bool, fn: str, what: str) -> tuple:
    _, vs = _as_tuple(v, "v", fn)
    if len(vs) != len(inputs_like):
        raise RuntimeError("The given v should contain a single Tensor." if not tuple_like else
                           f"v is a tuple of invalid length: should be {len(inputs_like)} but got {len(vs)}.")
    for i, (a, b) in enumerate(zip(vs, inputs_like)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"Entry {i} in v has invalid size: should be {tuple(b.shape)} but got "
                               f"{tuple(a.shape)}.")
    return vs


def _vector(v, like: tuple, tuple_like: bool, fn: str, what: str) -> tuple:
    """``v`` checked against ``like`` (the outputs for vjp, the inputs otherwise); None is allowed only for a single
    one-element tensor, and means 1."""
    if v is not None:
        return _check_v(v, like, tuple_like, fn, what)
    if len(like) != 1 or like[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor with "
                           "a single element." if what == "outputs" else
                           "The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")
    return (ones_like(like[0]),)


def _filled(gs: tuple, like: tuple, strict: bool, create_graph: bool) -> list:
    """Each product, zeros shaped as ``like`` where it is None (an unused input or output; an error in strict
    mode), detached unless ``create_graph``."""
    res = []
    for j, (g, x) in enumerate(zip(gs, like)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {j}. This "
                                   f"is not allowed in strict mode.")
            g = zeros_like(x)
        res.append(_finish(g, create_graph))
    return res


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: a vector-Jacobian product (``v`` may be omitted for a single-element output)."""
    tuple_in, inputs = _as_tuple(inputs, "inputs", "vjp")
    inputs = _prepare(inputs, create_graph)
    tuple_out, outs = _call(func, inputs, "vjp")
    vs = _vector(v, outs, tuple_out, "vjp", "outputs")
    res = _filled(_grads(outs, inputs, vs, create_graph), inputs, strict, create_graph)
    out = tuple(_finish(o, create_graph) for o in outs)
    return (out if tuple_out else out[0]), (tuple(res) if tuple_in else res[0])


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: a Jacobian-vector product, by the double-backward trick (as torch does)."""

    tuple_in, inputs = _as_tuple(inputs, "inputs", "jvp")
    inputs = _prepare(inputs, create_graph)
    vs = _vector(v, inputs, tuple_in, "jvp", "inputs")
    tuple_out, outs = _call(func, inputs, "jvp")
    with grad_mode.enable_grad():
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)  # J^T u is linear in u: its gradient is J v
        jv = _grads(_grads(outs, inputs, us, True), us, vs, create_graph)
    res = _filled(jv, outs, strict, create_graph)
    out = tuple(_finish(o, create_graph) for o in outs)
    return (out if tuple_out else out[0]), (tuple(res) if tuple_out else res[0])


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a function with a single-element output."""

    tuple_in, inputs = _as_tuple(inputs, "inputs", "vhp")
    inputs = _prepare(inputs, create_graph)
    vs = _vector(v, inputs, tuple_in, "vhp", "inputs")
    tuple_out, outs = _call(func, inputs, "vhp")
    if tuple_out or outs[0].numel() != 1:
        raise RuntimeError("The function given to vhp should return a single Tensor" if tuple_out else
                           "The Tensor returned by the function given to vhp should contain a single element")
    with grad_mode.enable_grad():
        h = _grads(_grads(outs, inputs, (ones_like(outs[0]),), True), inputs, vs, create_graph)
    res = _filled(h, inputs, strict, create_graph)
    return _finish(outs[0], create_graph), (tuple(res) if tuple_in else res[0])


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)``; the Hessian of a twice-differentiable function is symmetric, so this is ``vhp``."""
    return vhp(func, inputs, v, create_graph=create_graph, strict=strict)
