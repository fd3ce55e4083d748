"""Activation functions: their graph nodes, their Tensor methods, and ``tl.nn.functional``'s spelling of each.

``gelu``, ``silu``, ``softplus``, ``elu`` and ``leaky_relu`` are nodes of their own: each refuses integer input as
torch does, computes bfloat16 in float32 and rounds once, and has a fused backward node where torch has one, so the
formula a learner steps through is the one that runs (``relu``, ``tanh`` and ``sigmoid`` are in :mod:`.elementwise`,
beside the arithmetic a learner follows first; ``softmax``'s nodes are in :mod:`.reduce`).

``hardtanh`` (and through it ``relu6``, ``hardsigmoid``, ``hardswish``) and ``threshold`` pass the gradient only
strictly inside their linear piece, as PyTorch's ``hardtanh_backward`` / ``threshold_backward`` do: at a boundary
the gradient is 0, where ``clamp`` would pass it. Each is one node; its backward is a select written with Tensor
ops, so ``create_graph=True`` differentiates it again (its derivative in ``x`` is zero almost everywhere).
``LeakyReluInplace`` and ``EluInplace`` are the ``inplace=True`` forms that, as torch's, keep their output rather
than their input.

The functions (``F.relu``, ``F.hardtanh``, ``F.softmax``, ...) call the Tensor method of the same name or compose
Tensor ops; ``__all__`` lists them.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> F.hardtanh(tl.tensor([-2.0, 0.5, 3.0]))
tensor([-1.0000,  0.5000,  1.0000])
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends.chains import Chain, TensorSteps
from ._nn_args import _check_tensor, _write
from ._util import as_wide, in_float32, need_float, rounded
from .elementwise import where
from .reduce import LogSoftmax, Softmax

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

__all__ = [
    "relu", "relu_", "leaky_relu", "gelu", "silu", "sigmoid", "tanh", "softplus", "elu", "softmax", "log_softmax",
    "softmin", "hardtanh", "relu6", "hardsigmoid", "hardswish", "selu", "celu", "mish", "softsign", "logsigmoid",
    "tanhshrink", "softshrink", "hardshrink", "threshold", "glu", "prelu", "rrelu",
    "leaky_relu_", "elu_", "selu_", "celu_", "hardtanh_", "threshold_", "rrelu_", "gumbel_softmax",
]


# ---- graph nodes ----------------------------------------------------------------------------------
# formulas run as elementwise chains (backends/chains.py): one compiled pass on the CPU, the steps elsewhere
LEAKY_RELU = Chain("leaky_relu_fwd", "where(x > 0, x, x * slope)", params=("slope",))
LEAKY_RELU_GRAD = Chain("leaky_relu_bwd", "where(x > 0, g, g * slope)", inputs=("g", "x"), params=("slope",))
SILU = Chain("silu_fwd", "x * sigmoid(x)")
SILU_GRAD = Chain("silu_bwd", "g * sigmoid(x) * (1 + x * (1 - sigmoid(x)))", inputs=("g", "x"))
ELU = Chain("elu_fwd", "where(x > 0, x, (exp(minimum(x, 0)) - 1) * alpha)", params=("alpha",))
ELU_GRAD = Chain("elu_bwd", "where(x > 0, g, g * (alpha * exp(minimum(x, 0))))", inputs=("g", "x"),
                 params=("alpha",))
SOFTPLUS_GRAD = Chain("softplus_bwd", "where(x * beta > threshold, g, g * sigmoid(x * beta))", inputs=("g", "x"),
                      params=("beta", "threshold"))
MISH = Chain("mish_fwd", "x * tanh(softplus(x))")
MISH_GRAD = Chain("mish_bwd", "g * (tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x)) ** 2))",
                  inputs=("g", "x"))


class LeakyRelu(Function):
    __slots__ = ("negative_slope",)

    def forward(self, x, negative_slope):
        need_float(x, "leaky_relu")
        self.negative_slope = negative_slope
        self.save_for_backward(x)
        # (integer input: computed in the default float, not float64)
        return rounded(x, x._dev.backend.elementwise_chain(LEAKY_RELU, (as_wide(x),), (negative_slope,)))

    def backward(self, g):
        (x,) = self.saved_tensors
        return LeakyReluBackward.apply(g, x, self.negative_slope), None


class LeakyReluBackward(Function):
    """``g`` where ``x > 0``, else ``g * negative_slope`` (a node of its own, see TanhBackward). It scales ``g``
    itself: ``where(x > 0, 1.0, slope)`` would round the slope to float32 first. Zero derivative in ``x`` (zeros,
    as PyTorch's)."""

    __slots__ = ("negative_slope",)

    def forward(self, g, x, negative_slope):
        self.negative_slope = negative_slope
        if _grad_mode.enabled:
            self.save_for_backward(x)
        return g._dev.backend.elementwise_chain(LEAKY_RELU_GRAD, (g._x, x._x), (negative_slope,))

    def backward(self, gg):
        (x,) = self.saved_tensors
        return LeakyReluBackward.apply(gg, x, self.negative_slope), gg.new_zeros(x.shape), None


class Gelu(Function):
    """GELU, exact ``x * Phi(x)`` (``Phi`` the normal CDF, ``0.5 * (1 + erf(x / sqrt(2)))``) or with PyTorch's tanh
    approximation ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``, as one fused kernel. When a backward
    will follow, the kernel also returns a state for it (on the CPU ``gelu'(x)`` itself, computed from what forward
    has at hand), kept here privately."""

    __slots__ = ("approximate", "state")

    def forward(self, x, approximate):
        need_float(x, "gelu")
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate
        self.save_for_backward(x)
        y, self.state = x._dev.backend.gelu(x._x, approximate, _grad_mode.enabled and x.requires_grad)
        return y

    def backward(self, g):
        (x,) = self.saved_tensors
        return GeluBackward.apply(g, x, self.approximate, self.state), None

    def release(self) -> None:
        super().release()
        self.state = None


class GeluBackward(Function):
    """``g * gelu'(x)`` as one fused kernel, a node of its own (see TanhBackward):
    ``gelu'(x) = Phi(x) + x * phi(x)`` (``phi`` the normal density ``exp(-x**2 / 2) / sqrt(2 pi)``), or for the tanh
    form ``0.5 * (1 + t) + 0.5 * x * (1 - t**2) * k'(x)`` with ``t = tanh(k(x))``. It reads the state gelu's forward
    kept (``state``, held here too; None: computed from ``x``), so it computes no erf again; its own derivative
    below is written in ``x``."""

    __slots__ = ("approximate", "state")

    def forward(self, g, x, approximate, state):
        self.approximate, self.state = approximate, state
        if _grad_mode.enabled:
            self.save_for_backward(g, x)
        return g._dev.backend.gelu_backward(g._x, x._x, state, approximate)

    def backward(self, gg):
        """``gg * gelu'(x)`` for ``g`` (this same node) and ``gg * g * gelu''(x)`` for ``x``."""
        g, x = self.saved_tensors
        if self.approximate == "tanh":
            c, k = math.sqrt(2 / math.pi), 0.044715
            dk = c * (1 + 3 * k * x * x)  # k'(x) of the inner term k(x) = c * (x + k x^3)
            t = (c * (x + k * x * x * x)).tanh()
            d2 = (1 - t * t) * (dk + 0.5 * x * (6 * c * k * x - 2 * t * dk * dk))
        else:
            d2 = (2 - x * x) * (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
        return GeluBackward.apply(gg, x, self.approximate, self.state), gg * g * d2, None, None

    def release(self) -> None:
        super().release()
        self.state = None


class _ChainBackward(Function):
    """A backward formula of ``g`` and ``x`` that one elementwise chain computes (:attr:`chain`): a node of its own,
    as TanhBackward. Its own backward differentiates the same formula run again with Tensor ops, so higher
    derivatives exist without a second formula to keep in step."""

    __slots__ = ("params",)
    chain: Chain

    def forward(self, g, x, *params):
        self.params = params
        if _grad_mode.enabled:
            self.save_for_backward(g, x)
        return rounded(g, g._dev.backend.elementwise_chain(self.chain, (as_wide(g), as_wide(x)), params))

    def backward(self, gg):
        from ..autograd.api import grad  # (the autograd's user API sits above the ops)

        saved = self.saved_tensors
        recording = _grad_mode.enabled  # (create_graph: the gradients get a graph of their own too)
        with grad_mode.enable_grad():
            # each input through a view of its own, so that grad() gives the formula's partial derivative in it,
            # not a total one along paths through the other input (g may itself depend on x)
            inputs = [t.view_as(t) if t.requires_grad else t for t in saved]
            out = self.chain.run(TensorSteps, inputs, self.params)
        want = [t for t in inputs if t.requires_grad]
        grads = iter(grad(out, want, gg, create_graph=recording, allow_unused=True) if want else ())
        return (*(next(grads) if t.requires_grad else None for t in inputs), *(None,) * len(self.params))


class Silu(Function):
    """SiLU, ``x * sigmoid(x)``, one pass (:data:`SILU`); its backward is :class:`SiluBackward`."""

    __slots__ = ()

    def forward(self, x):
        need_float(x, "silu")
        self.save_for_backward(x)
        return rounded(x, x._dev.backend.elementwise_chain(SILU, (as_wide(x),)))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (SiluBackward.apply(g, x),)


class SiluBackward(_ChainBackward):
    """``g * s * (1 + x * (1 - s))`` with ``s = sigmoid(x)``, one pass (:data:`SILU_GRAD`)."""

    __slots__ = ()
    chain = SILU_GRAD


class Softplus(Function):
    __slots__ = ("beta", "threshold")

    def forward(self, x, beta, threshold):
        need_float(x, "softplus")
        self.beta, self.threshold = beta, threshold
        self.save_for_backward(x)
        return rounded(x, x._dev.backend.softplus(as_wide(x), beta, threshold))

    def backward(self, g):
        (x,) = self.saved_tensors
        return SoftplusBackward.apply(g, x, self.beta, self.threshold), None, None


class SoftplusBackward(_ChainBackward):
    """``g`` where ``beta * x > threshold``, else ``g * sigmoid(beta * x)``, one pass (:data:`SOFTPLUS_GRAD`)."""

    __slots__ = ()
    chain = SOFTPLUS_GRAD


class Mish(Function):
    """Mish, ``x * tanh(softplus(x))`` (softplus with torch's threshold 20), one pass (:data:`MISH`)."""

    __slots__ = ()

    def forward(self, x):
        need_float(x, "mish")
        self.save_for_backward(x)
        return rounded(x, x._dev.backend.elementwise_chain(MISH, (as_wide(x),)))

    def backward(self, g):
        (x,) = self.saved_tensors
        return (MishBackward.apply(g, x),)


class MishBackward(_ChainBackward):
    """``g * (t + x * sigmoid(x) * (1 - t**2))`` with ``t = tanh(softplus(x))``, torch's formula, one pass
    (:data:`MISH_GRAD`)."""

    __slots__ = ()
    chain = MISH_GRAD


class Elu(Function):
    __slots__ = ("alpha",)

    def forward(self, x, alpha):
        need_float(x, "elu")
        self.alpha = alpha
        self.save_for_backward(x)
        return rounded(x, x._dev.backend.elementwise_chain(ELU, (as_wide(x),), (alpha,)))

    def backward(self, g):
        (x,) = self.saved_tensors
        return EluBackward.apply(g, x, self.alpha), None


class EluBackward(_ChainBackward):
    """``g`` where ``x > 0``, else ``g * alpha * exp(x)``, one pass (:data:`ELU_GRAD`)."""

    __slots__ = ()
    chain = ELU_GRAD


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


class ActivationMixin:
    """Tensor methods for the activations above, and ``softmax``/``log_softmax``."""

    __slots__ = ()

    def leaky_relu(self, negative_slope: float = 0.01):
        return LeakyRelu.apply(self, negative_slope)

    def gelu(self, approximate: str = "none"):
        return Gelu.apply(self, approximate)

    def silu(self):
        return Silu.apply(self)

    def softplus(self, beta: float = 1.0, threshold: float = 20.0):
        return Softplus.apply(self, beta, threshold)

    def elu(self, alpha: float = 1.0):
        return Elu.apply(self, alpha)

    def softmax(self, dim: int):
        return Softmax.apply(self, dim)

    def log_softmax(self, dim: int):
        return LogSoftmax.apply(self, dim)

    def prelu(self, weight):
        return prelu(self, weight)

    def hardshrink(self, lambd: float = 0.5):
        return hardshrink(self, lambd)


# ---- the functions (the Tensor methods, in functional spelling) ------------------------------------------------------
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    """``relu`` written into ``input`` (a version bump), as ``torch.nn.functional.relu_``."""
    return input.relu_()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    if not inplace:
        return input.leaky_relu(negative_slope)
    _float_only(input, "leaky_relu")
    return _write(input, "leaky_relu_", lambda x: LeakyReluInplace.apply(x, negative_slope))


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``leaky_relu`` written into ``input``, as ``torch.nn.functional.leaky_relu_``."""
    return leaky_relu(input, negative_slope, True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return input.gelu(approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    if not inplace:
        return input.silu()
    _float_only(input, "silu")
    return _write(input, "silu_", lambda x: x.silu())


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return input.softplus(beta, threshold)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    if not inplace:
        return input.elu(alpha)
    _float_only(input, "elu")
    return _write(input, "elu_", lambda x: EluInplace.apply(x, alpha, 1.0, 1.0))


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``elu`` written into ``input``, as ``torch.nn.functional.elu_``."""
    return elu(input, alpha, True)


def _softmax_dim(input: Tensor, dim, fn: str) -> int:
    _check_tensor(input, fn)
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {fn} has been deprecated. Change the call to include dim=X "
                      f"as an argument.", UserWarning, stacklevel=3)
        return 0 if input.ndim in (0, 1, 3) else 1  # PyTorch's legacy rule for dim=None
    return dim


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    dim = _softmax_dim(input, dim, "softmax")
    return (input if dtype is None else input.to(dtype)).softmax(dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    dim = _softmax_dim(input, dim, "log_softmax")
    return (input if dtype is None else input.to(dtype)).log_softmax(dim)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-input, dim)``."""
    dim = _softmax_dim(input, dim, "softmin")
    return (-(input if dtype is None else input.to(dtype))).softmax(dim)


def _float_only(input, fn: str) -> None:
    _check_tensor(input, fn)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"{fn}: not implemented for {input.dtype.name} tensors (as in torch): expected a "
                                  f"floating point input; convert with .float() first")


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``clamp(input, min_val, max_val)``; the gradient is 1 strictly inside (min_val, max_val), else 0."""
    _check_tensor(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _write(input, "hardtanh_", lambda x: _hardtanh(x, min_val, max_val))
    return _hardtanh(input, min_val, max_val)


def _hardtanh(input: Tensor, min_val: float, max_val: float) -> Tensor:
    if not input.dtype.is_floating_point:
        return input.clamp(min_val, max_val).to(input.dtype)
    return Hardtanh.apply(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """``hardtanh`` written into ``input``, as ``torch.nn.functional.hardtanh_``."""
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, linear between."""
    _float_only(input, "hardsigmoid")
    return _write(input, "hardsigmoid_", Hardsigmoid.apply) if inplace else Hardsigmoid.apply(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (MobileNetV3)."""
    _float_only(input, "hardswish")
    return _write(input, "hardswish_", _hardswish) if inplace else _hardswish(input)


def _hardswish(x: Tensor) -> Tensor:
    return x * Hardtanh.apply(x + 3.0, 0.0, 6.0) / 6.0


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants of Klambauer et al."""
    _float_only(input, "selu")
    if inplace:
        return _write(input, "selu_", lambda x: EluInplace.apply(x, _SELU_ALPHA, _SELU_SCALE, 1.0))
    return input.elu(_SELU_ALPHA) * _SELU_SCALE


def selu_(input: Tensor) -> Tensor:
    """``selu`` written into ``input``, as ``torch.nn.functional.selu_``."""
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    _float_only(input, "celu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    if inplace:
        return _write(input, "celu_", lambda x: EluInplace.apply(x, float(alpha), 1.0, 1.0 / alpha))
    return Celu.apply(input, float(alpha))


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """``celu`` written into ``input``, as ``torch.nn.functional.celu_``."""
    return celu(input, alpha, True)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    _float_only(input, "mish")
    return _write(input, "mish_", _mish) if inplace else _mish(input)


def _mish(x: Tensor) -> Tensor:
    return Mish.apply(x)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: ``x`` where positive, else ``x * r``; in training ``r`` is drawn from U(lower, upper)
    for each element (from the seedable generator), in eval it is the mean slope ``(lower + upper) / 2``.
    (In training with ``inplace=True`` the node keeps the slopes, not its output: a later write to the result does
    not fail the backward here, where torch's, which keeps the output, refuses it.)"""
    _float_only(input, "rrelu")
    if lower > upper:
        raise RuntimeError(f"rrelu: lower bound should be less than or equal to the upper bound, got lower={lower} "
                           f"and upper={upper}")
    if not training:  # (as torch: leaky_relu with the mean slope, its in-place form keeping its output)
        slope = (lower + upper) / 2
        if inplace:
            return _write(input, "rrelu_", lambda x: LeakyReluInplace.apply(x, slope))
        return input.leaky_relu(slope)
    with grad_mode.no_grad():  # the slopes: 1 where x > 0 (x kept), r elsewhere; they are also the gradient
        noise = where(input > 0, 1.0, input.new_empty(input.shape).uniform_(lower, upper))
    return _write(input, "rrelu_", lambda x: x * noise) if inplace else input * noise


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """``rrelu`` written into ``input``, as ``torch.nn.functional.rrelu_``."""
    return rrelu(input, lower, upper, training, True)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    _check_tensor(input, "softsign")
    return input / (input.abs() + 1)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, computed stably."""
    _float_only(input, "log_sigmoid")
    return -(-input).softplus(1.0, 20.0)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    _check_tensor(input, "tanhshrink")
    return input - input.tanh()


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, 0 between."""
    _float_only(input, "softshrink")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, 0.0))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    _float_only(input, "hardshrink")
    return where((input > lambd) | (input < -lambd), input, 0.0)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``."""
    _check_tensor(input, "threshold")
    if inplace:
        return _write(input, "threshold_", lambda x: Threshold.apply(x, threshold, value))
    return Threshold.apply(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """``threshold`` written into ``input``, as ``torch.nn.functional.threshold_``."""
    _check_tensor(input, "threshold_")
    return _write(input, "threshold_", lambda x: Threshold.apply(x, threshold, value))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the second half."""
    _check_tensor(input, "glu")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + input.ndim if dim < 0 else dim
    if not 0 <= d < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {dim})")
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    a, b = input.narrow(d, 0, n // 2), input.narrow(d, n // 2, n // 2)
    return a * b.sigmoid()


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, else ``weight * x``; ``weight`` has one value, or one per channel (dim 1)."""
    _check_tensor(input, "prelu")
    _check_tensor(weight, "prelu", "weight")
    n = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    w = weight.reshape(()) if n == 1 else weight.reshape((channels,) + (1,) * (input.ndim - 2))
    return where(input > 0, input, w * input)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with g ~ Gumbel(0, 1) drawn from
    the seedable generator; ``hard=True`` returns the one-hot of its argmax with the soft sample's gradient
    (straight-through)."""
    _check_tensor(logits, "gumbel_softmax", "logits")
    with grad_mode.no_grad():
        gumbels = -logits.new_empty(logits.shape).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.detach().argmax(dim, keepdim=True)
    y_hard = logits.new_zeros(logits.shape).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
