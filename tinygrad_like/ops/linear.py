"""Linear layers as functions: ``linear`` (one fused :class:`Linear` node, PyTorch's addmm) and ``bilinear``.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> F.linear(tl.ones(2, 3), tl.ones(4, 3), tl.zeros(4)).shape
tl.Size([2, 4])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..autograd import grad_mode
from ..autograd.function import Function
from ..layout import broadcast_shapes
from ._nn_args import _check_tensor
from ._util import rounded

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

__all__ = ["linear", "bilinear"]

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class Linear(Function):
    """``x @ weight.T + bias`` as one node (PyTorch's addmm): no transposed-weight view in the graph, a
    weight gradient computed directly in (out, in) layout, and no work for inputs that need no gradient."""

    __slots__ = ("has_bias",)

    def forward(self, x, weight, bias):
        be = x._dev.backend
        self.has_bias = bias is not None
        if _grad_mode.enabled:  # x only for the weight's gradient, the weight only for x's (as torch's addmm)
            rx, rw = x.requires_grad, weight.requires_grad
            if rx or rw or self.has_bias and bias.requires_grad:
                self.save_for_backward(x if rw else None, weight if rx else None)
        xs = x._x.shape
        x2 = x._x if len(xs) == 2 else be.reshape(x._x, (-1, xs[-1]))
        out = be.matmul(x2, be.swap_last(weight._x))
        if bias is not None:
            out = be.add(out, bias._x)
        out = rounded(x, out)  # (bfloat16: NumPy's product is float32, the bias added there: rounded once)
        return out if len(xs) == 2 else be.reshape(out, xs[:-1] + (weight._x.shape[0],))

    def backward(self, g):
        """``g @ weight`` for x, ``g^T @ x`` over all rows for the weight, ``g`` summed over rows for the bias."""
        x, weight = self.saved_tensors
        g2 = g if g.ndim == 2 else g.reshape(-1, g.shape[-1])
        gx = None if weight is None else g @ weight
        gw = None if x is None else g2.mT @ (x if x.ndim == 2 else x.reshape(-1, x.shape[-1]))
        gb = g2.sum(0) if self.has_bias and self.next[2] is not None else None
        return gx, gw, gb


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` with weight of shape (out_features, in_features); a 1-D weight (in_features,)
    gives ``input @ weight``, the last dim summed away, as torch. The bias is usually (out_features,); any bias that
    broadcasts to the output shape is added (torch refuses a few of those on its fused paths, e.g. a bias with a
    1-D weight and a 2-D input)."""
    _check_tensor(input, "linear")
    _check_tensor(weight, "linear", "weight")
    xs, ws = input._x.shape, weight._x.shape  # (the plain tuples: this runs once per layer per step)
    if not xs or not ws:
        raise RuntimeError(f"linear: both arguments need to be at least 1-D, but the input has shape {xs} and the "
                           f"weight {ws}")
    if len(ws) > 2:
        raise RuntimeError(f"linear: the weight must be 2-D (out_features, in_features) or 1-D (in_features,), got "
                           f"shape {ws}")
    if xs[-1] != ws[-1]:
        raise RuntimeError(f"linear: input of shape {xs} has {xs[-1]} features but weight of shape {ws} expects "
                           f"{ws[-1]} (the last dim of the input must equal in_features)")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"linear: expected the input and the weight to have the same dtype, but got "
                           f"{input.dtype.name} != {weight.dtype.name} (as torch; convert one with .to())")
    if len(ws) == 1:
        return _linear_1d(input, weight, bias)
    bs = None if bias is None else bias._x.shape
    if bs is not None and bs not in ((ws[0],), ()) and not _broadcasts_to(bs, xs[:-1] + ws[:1]):
        raise RuntimeError(f"linear: the bias has shape {bs} but the weight has {ws[0]} output features; expected "
                           f"a bias of shape ({ws[0]},) (or one that broadcasts to the output's {xs[:-1] + ws[:1]})")
    if bs is not None and (bias.dtype is not weight.dtype or bs != (ws[0],)):
        out = input @ weight.T  # the general path: promotion, broadcasting, and their errors
        return out if bias is None else out + bias
    if input.ndim == 1:
        return Linear.apply(input.unsqueeze(0), weight, bias).squeeze(0)
    return Linear.apply(input, weight, bias)


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """``shape`` broadcasts to ``target`` without changing it (what adding a bias may do to an output)."""
    try:
        return broadcast_shapes(target, shape) == tuple(target)
    except ValueError:
        return False


def _linear_1d(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``input @ weight`` (shape ``input.shape[:-1]``) plus a bias that broadcasts to that shape."""
    out = input @ weight
    if bias is None:
        return out
    _check_tensor(bias, "linear", "bias")
    if not _broadcasts_to(bias._x.shape, out._x.shape):
        raise RuntimeError(f"linear: with a 1-D weight the output has shape {out.shape}, and the bias of shape "
                           f"{bias.shape} does not broadcast to it; expected a bias of that shape or one that "
                           f"broadcasts to it (a single value: shape ())")
    return out + bias


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1 @ weight[o] @ input2 + bias[o]`` with weight (out, in1, in2)."""
    _check_tensor(input1, "bilinear", "input1")
    _check_tensor(input2, "bilinear", "input2")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out_features, in1_features, in2_features), got "
                           f"shape {list(weight.shape)}")
    o, i1, i2 = weight.shape
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    if input1.ndim == 0 or input1.shape[-1] != i1:
        got = input1.shape[-1] if input1.ndim else 0
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {got} but expected {i1}")
    if input2.ndim == 0 or input2.shape[-1] != i2:
        got = input2.shape[-1] if input2.ndim else 0
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {got} but expected {i2}")
    if bias is not None and bias.shape != (o,):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0] if bias.ndim else 0} "
                           f"but expected {o}")
    t = input1 @ weight.permute(1, 0, 2).reshape(i1, o * i2)  # (..., out * in2)
    out = (t.unflatten(-1, (o, i2)) * input2.unsqueeze(-2)).sum(-1)
    return out if bias is None else out + bias
