"""Graph nodes for the neural-network primitives: convolution, im2col/col2im and max-pool.

Each forward is one fused backend primitive. Where a fused backward kernel exists, it runs as a node of its own
(:class:`ConvInputGrad`, :class:`ConvWeightGrad`, :class:`MaxPool2dBackward`) whose own ``backward`` is written with
Tensor ops: the formula ``loss.backward()`` runs is the one ``create_graph=True`` records and differentiates again.
"""

from __future__ import annotations

from ..autograd import grad_mode
from ..autograd.function import Function
from ._util import rounded

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class Conv2d(Function):
    """A whole (groups=1) convolution as one node: one im2col, one GEMM, the bias added in place.

    The columns from forward are kept, so the weight's gradient needs no second im2col."""

    __slots__ = ("cols", "stride", "padding", "dilation", "has_bias")

    def forward(self, x, weight, bias, stride, padding, dilation):
        self.stride, self.padding, self.dilation, self.has_bias = stride, padding, dilation, bias is not None
        if _grad_mode.enabled:
            self.save_for_backward(x, weight)
        out, self.cols = x._dev.backend.conv2d(x._x, weight._x, None if bias is None else bias._x, stride, padding,
                                               dilation)
        return rounded(x, out)  # (bfloat16: the GEMM ran in float32)

    def backward(self, g):
        x, weight = self.saved_tensors
        nxt, geometry = self.next, (self.stride, self.padding, self.dilation)
        gx = ConvInputGrad.apply(g, weight, x.shape, *geometry) if nxt[0] is not None else None
        gw = ConvWeightGrad.apply(g, x, weight._x, self.cols, *geometry) if nxt[1] is not None else None
        gb = g.sum((0, 2, 3)) if self.has_bias and nxt[2] is not None else None
        return gx, gw, gb, None, None, None

    def release(self) -> None:
        super().release()
        self.cols = None


class ConvInputGrad(Function):
    """The input's gradient of a convolution, ``col2im(weight^T @ g)`` (a transposed convolution), as one fused
    kernel. It is bilinear in ``(g, weight)``: its own gradients are a convolution of ``gg`` and a weight
    gradient, so any order of derivative stays within these three nodes."""

    __slots__ = ("x_shape", "stride", "padding", "dilation")

    def forward(self, g, weight, x_shape, stride, padding, dilation):
        self.x_shape, self.stride, self.padding, self.dilation = x_shape, stride, padding, dilation
        if _grad_mode.enabled:
            self.save_for_backward(g, weight)
        return rounded(g, g._dev.backend.conv2d_backward(g._x, None, weight._x, x_shape, stride, padding, dilation,
                                                         True, False, False)[0])  # (bfloat16: GEMM in float32)

    def backward(self, gg):
        g, weight = self.saved_tensors
        geometry = (self.stride, self.padding, self.dilation)
        gg_out = Conv2d.apply(gg, weight, None, *geometry) if self.next[0] is not None else None
        gw = ConvWeightGrad.apply(g, gg, weight._x, None, *geometry) if self.next[1] is not None else None
        return gg_out, gw, None, None, None, None


class ConvWeightGrad(Function):
    """The weight's gradient of a convolution, ``sum over images of g @ cols^T`` with ``cols = im2col(x)``, as one
    fused kernel. ``cols`` are the columns the forward kept (None: computed here). ``weight`` is the weight's
    native array, read for its shape only."""

    __slots__ = ("x_shape", "stride", "padding", "dilation")

    def forward(self, g, x, weight, cols, stride, padding, dilation):
        self.x_shape, self.stride, self.padding, self.dilation = x.shape, stride, padding, dilation
        if _grad_mode.enabled:
            self.save_for_backward(g, x)
        be = g._dev.backend
        if cols is None:
            _, cols = be.conv2d(x._x, weight, None, stride, padding, dilation)
        return be.conv2d_backward(g._x, cols, weight, x.shape, stride, padding, dilation, False, True, False)[1]

    def backward(self, ggw):
        g, x = self.saved_tensors
        geometry = (self.stride, self.padding, self.dilation)
        gg_out = Conv2d.apply(x, ggw, None, *geometry) if self.next[0] is not None else None
        gx = ConvInputGrad.apply(g, ggw, self.x_shape, *geometry) if self.next[1] is not None else None
        return gg_out, gx, None, None, None, None, None


class Im2Col(Function):
    """(N, C, H, W) -> (N, C*KH*KW, OH*OW): convolution becomes ``weight @ cols``."""

    __slots__ = ("in_shape", "kernel", "stride", "padding", "dilation")

    def forward(self, x, kernel, stride, padding, dilation):
        self.in_shape, self.kernel, self.stride, self.padding, self.dilation = (x.shape, kernel, stride, padding,
                                                                                dilation)
        return x._dev.backend.im2col(x._x, kernel, stride, padding, dilation)

    def backward(self, g):
        return Col2Im.apply(g, self.in_shape, self.kernel, self.stride, self.padding, self.dilation), None, None, \
            None, None


class Col2Im(Function):
    """The adjoint of :class:`Im2Col`: columns summed back into an image of ``shape``."""

    __slots__ = ("shape", "kernel", "stride", "padding", "dilation")

    def forward(self, cols, shape, kernel, stride, padding, dilation):
        self.shape, self.kernel, self.stride, self.padding, self.dilation = shape, kernel, stride, padding, dilation
        return cols._dev.backend.col2im(cols._x, shape, kernel, stride, padding, dilation)

    def backward(self, g):
        return Im2Col.apply(g, self.kernel, self.stride, self.padding, self.dilation), None, None, None, None, None


class MaxPool2d(Function):
    """Max over windows. Backward finds each window's (first) maximum again from the saved input
    and output, which is cheaper than keeping an index per output element, unless the backend kept
    a cheaper record of the winners (``state``, opaque here)."""

    __slots__ = ("kernel", "stride", "padding", "dilation", "state", "out")

    def forward(self, x, kernel, stride, padding, dilation):
        self.kernel, self.stride, self.padding, self.dilation = kernel, stride, padding, dilation
        be = x._dev.backend
        out, self.state = be.max_pool2d(x._x, kernel, stride, padding, dilation)
        if _grad_mode.enabled and x.requires_grad:
            # Backward finds the winners from the input and the maxima: keep a private copy of the maxima (a
            # quarter of the input for 2x2 windows), as torch keeps its indices, so the output itself may be
            # written in place before backward.
            self.save_for_backward(x)
            self.out = be.copy(out)
        return out

    def backward(self, g):
        (x,) = self.saved_tensors
        return MaxPool2dBackward.apply(g, x, self), None, None, None, None

    def release(self) -> None:
        super().release()
        self.state = self.out = None


class MaxPool2dBackward(Function):
    """Each output gradient sent to the input position its window's maximum came from (overlaps summed), as one
    fused kernel. Its own gradient picks ``gg`` at those positions; its derivative in ``x`` is zero (as in
    PyTorch: the winners are constant almost everywhere)."""

    __slots__ = ("kernel", "stride", "padding", "dilation", "out")

    def forward(self, g, x, pool: MaxPool2d):
        self.kernel, self.stride, self.padding, self.dilation = pool.kernel, pool.stride, pool.padding, pool.dilation
        self.out = pool.out
        if _grad_mode.enabled:
            self.save_for_backward(x)
        return g._dev.backend.max_pool2d_backward(g._x, x._x, pool.out, pool.state, pool.kernel, pool.stride,
                                                  pool.padding, pool.dilation)

    def backward(self, gg):
        (x,) = self.saved_tensors
        be = gg._dev.backend
        idx = gg._wrap(be.max_pool2d_indices(x._x, self.out, self.kernel, self.stride, self.padding,
                                               self.dilation), gg._dev)
        picked = gg.flatten(2).gather(2, idx.flatten(2)).reshape(idx.shape)
        return picked, gg.new_zeros(x.shape), None
