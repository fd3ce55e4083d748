"""Activation functions computed elementwise: ``leaky_relu``, ``gelu``, ``silu``, ``softplus``, ``elu``.

(``relu``, ``tanh`` and ``sigmoid`` are in :mod:`.elementwise`, beside the arithmetic a learner follows first.)
Each refuses integer input as torch does, computes bfloat16 in float32 and rounds once, and has a fused backward
node where torch has one, so the formula a learner steps through is the one that runs.
"""

from __future__ import annotations

import math

from ..autograd import grad_mode
from ..autograd.function import Function
from ._util import as_wide, free_functions, need_float, rounded
from .elementwise import where
from .reduce import LogSoftmax, Softmax

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class LeakyRelu(Function):
    __slots__ = ("negative_slope",)

    def forward(self, x, negative_slope):
        need_float(x, "leaky_relu")
        self.negative_slope = negative_slope
        self.save_for_backward(x)
        be, xx = x._dev.backend, as_wide(x)  # integer input: computed in the default float, not float64
        return rounded(x, be.where(be.gt(xx, 0), xx, be.mul(xx, negative_slope)))

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
        be = g._dev.backend
        return be.where(be.gt(x._x, 0), g._x, be.mul(g._x, negative_slope))

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


class Silu(Function):
    __slots__ = ()

    def forward(self, x):
        need_float(x, "silu")
        self.save_for_backward(x)
        be, xx = x._dev.backend, as_wide(x)
        return rounded(x, be.mul(xx, be.sigmoid(xx)))

    def backward(self, g):
        (x,) = self.saved_tensors
        s = x.sigmoid()
        return (g * s * (1 + x * (1 - s)),)


class Softplus(Function):
    __slots__ = ("beta", "threshold")

    def forward(self, x, beta, threshold):
        need_float(x, "softplus")
        self.beta, self.threshold = beta, threshold
        self.save_for_backward(x)
        return rounded(x, x._dev.backend.softplus(as_wide(x), beta, threshold))

    def backward(self, g):
        (x,) = self.saved_tensors
        bx = x * self.beta
        return g * where(bx > self.threshold, 1.0, bx.sigmoid()), None, None


class Elu(Function):
    __slots__ = ("alpha",)

    def forward(self, x, alpha):
        need_float(x, "elu")
        self.alpha = alpha
        self.save_for_backward(x)
        be, xx = x._dev.backend, as_wide(x)
        return rounded(x, be.where(be.gt(xx, 0), xx, be.mul(be.sub(be.exp(be.minimum(xx, 0)), 1), alpha)))

    def backward(self, g):
        (x,) = self.saved_tensors
        return g * where(x > 0, 1.0, self.alpha * x.clamp(max=0).exp()), None


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


# ---- free functions ---------------------------------------------------------------------------------
__all__ = ["leaky_relu", "gelu", "silu", "softplus", "elu", "softmax", "log_softmax"]

leaky_relu, gelu, silu, softplus, elu, softmax, log_softmax = free_functions(ActivationMixin, *__all__)
