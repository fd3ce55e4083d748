"""Graph nodes for the activations whose gradient convention is PyTorch's own, not the one a composition gives.

``hardtanh`` (and through it ``relu6``, ``hardsigmoid``, ``hardswish``) and ``threshold`` pass the gradient only
strictly inside their linear piece, as PyTorch's ``hardtanh_backward`` / ``threshold_backward`` do: at a boundary
the gradient is 0, where ``clamp`` would pass it. Each is one node; its backward is a select written with Tensor
ops, so ``create_graph=True`` differentiates it again (its derivative in ``x`` is zero almost everywhere).

``LeakyReluInplace`` and ``EluInplace`` are the ``inplace=True`` forms that, as torch's, keep their output rather
than their input (see the end of this file).
"""

from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ._util import in_float32, rounded
from .activation import LeakyReluBackward
from .elementwise import where


class Hardtanh(Function):
    """``clamp(x, min_val, max_val)`` with gradient ``g`` where ``min_val < x < max_val``, else 0."""

    __slots__ = ("lo", "hi")

    def forward(self, x, lo, hi):
        self.lo, self.hi = lo, hi
        self.save_for_backward(x)
        be = x._dev.backend
        return rounded(x, be.clip(in_float32(x), lo, hi))  # (NumPy's clip has no bfloat16 loop)

    def backward(self, g):
        (x,) = self.saved_tensors
        return where((x > self.lo) & (x < self.hi), g, 0.0), None, None


class Threshold(Function):
    """``x`` where ``x > threshold``, else ``value``; gradient ``g`` where ``x > threshold``, else 0."""

    __slots__ = ("threshold",)

    def forward(self, x, threshold, value):
        self.threshold = threshold
        self.save_for_backward(x)
        be = x._dev.backend
        return be.cast(be.where(be.gt(x._x, threshold), x._x, value), x.dtype)

    def backward(self, g):
        (x,) = self.saved_tensors
        return where(x > self.threshold, g, 0.0), None, None


_SIXTH_F32 = 0.1666666716337204  # float32(1/6): the constant torch's hardsigmoid_backward multiplies by, any dtype


class Hardsigmoid(Function):
    """``clamp(x + 3, 0, 6) / 6``; gradient ``g * float32(1/6)`` strictly inside (-3, 3), else 0: torch's kernel
    multiplies by 1/6 rounded to float32 even for float64, and this follows it, so the two agree to the bit."""

    __slots__ = ()

    def forward(self, x):
        self.save_for_backward(x)
        be = x._dev.backend
        return rounded(x, be.div(be.clip(be.add(in_float32(x), 3.0), 0.0, 6.0), 6.0))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (where((x > -3.0) & (x < 3.0), g * _SIXTH_F32, 0.0),)


class Celu(Function):
    """``x`` where positive, else ``alpha * (exp(x / alpha) - 1)``. Its gradient below 0 is torch's formula,
    ``alpha / a * exp(x / a)`` with ``a`` = alpha rounded to float32 (torch's autograd passes ``1.0 /
    alpha.toFloat()`` as the input scale), so float64 gradients agree with torch's to the bit, not only to 1e-8."""

    __slots__ = ("alpha",)

    def forward(self, x, alpha):
        self.alpha = alpha
        self.save_for_backward(x)
        be, xx = x._dev.backend, in_float32(x)
        neg = be.mul(be.sub(be.exp(be.mul(be.minimum(xx, 0), 1.0 / alpha)), 1), alpha)
        return rounded(x, be.where(be.gt(xx, 0), xx, neg))

    def backward(self, g):
        (x,) = self.saved_tensors
        a32 = float(np.float32(self.alpha))
        return where(x > 0, g, g * (self.alpha / a32) * (x.clamp(max=0) * (1.0 / a32)).exp()), None


# ---- the in-place forms that keep their output (``inplace=True``; written into the input by ``_inplace``) ------------
# torch's leaky_relu_, elu_, celu_, selu_ and rrelu_ (in eval) keep their *output*, which is the input tensor they
# overwrote, and read the gradient from it; so a later write to that tensor fails the backward, and a negative slope
# (which makes the output's sign differ from the input's) cannot be differentiated. These nodes do the same.
_NEGATIVE_SLOPE = ("In-place {op} backward calculation is triggered with a negative slope which is not supported. "
                   "This is caused by calling in-place forward function with a negative slope, please call "
                   "out-of-place version instead.")


class LeakyReluInplace(Function):
    """``leaky_relu(x, negative_slope)`` as ``inplace=True`` computes it: keeps its output ``y``; the gradient is
    ``g`` where ``y > 0``, else ``g * negative_slope`` (right for a slope >= 0 only: refused below 0, as torch)."""

    __slots__ = ("negative_slope",)
    save_output = True

    def forward(self, x, negative_slope):
        self.negative_slope = negative_slope
        be, xx = x._dev.backend, in_float32(x)
        return rounded(x, be.where(be.gt(xx, 0), xx, be.mul(xx, negative_slope)))

    def backward(self, g):
        (y,) = self.saved_tensors  # (first: a write since forward is the error to report, as torch)
        if self.negative_slope < 0:
            raise RuntimeError(_NEGATIVE_SLOPE.format(op="leakyReLu"))
        return LeakyReluBackward.apply(g, y, self.negative_slope), None


class EluInplace(Function):
    """``elu``, ``celu`` and ``selu`` as ``inplace=True`` computes them (torch's ``elu_`` family): ``scale * x``
    where positive, else ``alpha * scale * (exp(x * input_scale) - 1)``. Keeps its output ``y``; the gradient is
    ``g * scale`` where ``y > 0``, else ``g * input_scale * (y + alpha * scale)`` (right for alpha >= 0 only:
    refused below 0, as torch)."""

    __slots__ = ("alpha", "scale", "input_scale")
    save_output = True

    def forward(self, x, alpha, scale, input_scale):
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale
        be, xx = x._dev.backend, in_float32(x)
        neg = be.mul(be.sub(be.exp(be.mul(be.minimum(xx, 0), input_scale)), 1), alpha * scale)
        return rounded(x, be.where(be.gt(xx, 0), xx if scale == 1 else be.mul(xx, scale), neg))

    def backward(self, g):
        (y,) = self.saved_tensors
        if self.alpha < 0:
            raise RuntimeError(_NEGATIVE_SLOPE.format(op="elu"))
        return (where(y <= 0, g * self.input_scale * (y + self.alpha * self.scale), g * self.scale),
                None, None, None)
