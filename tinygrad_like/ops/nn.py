"""Graph nodes for the neural-network primitives: im2col/col2im, max-pool, layer norm, softmax
cross-entropy and dropout.

Each forward is one fused backend primitive. ``backward_fast`` is the fused backward primitive;
``backward`` says the same thing with Tensor ops so that ``create_graph=True`` can differentiate
it again (and so gradcheck tests both).
"""

from __future__ import annotations

from ..autograd import grad_mode
from ..autograd.function import Function
from . import _util

_grad = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class Linear(Function):
    """``x @ weight.T + bias`` as one node (PyTorch's addmm): no transposed-weight view in the graph, a
    weight gradient computed directly in (out, in) layout, and no work for inputs that need no gradient."""

    __slots__ = ("in_shape", "has_bias")

    def forward(self, x, weight, bias):
        be = x._dev.backend
        self.in_shape, self.has_bias = x.shape, bias is not None
        if _grad.enabled:  # x only for the weight's gradient, the weight only for x's (as torch's addmm)
            rx, rw = x.requires_grad, weight.requires_grad
            if rx or rw or self.has_bias and bias.requires_grad:
                self.save_for_backward(x if rw else None, weight if rx else None)
        x2 = x._x if x.ndim == 2 else be.reshape(x._x, (-1, x.shape[-1]))
        out = be.matmul(x2, be.swap_last(weight._x))
        if bias is not None:
            out = be.add(out, bias._x)
        return out if x.ndim == 2 else be.reshape(out, x.shape[:-1] + (weight.shape[0],))

    def backward(self, g):
        x, weight = self.saved_tensors
        g2 = g.reshape(-1, g.shape[-1]) if g.ndim != 2 else g
        gx = (g @ weight).reshape(self.in_shape) if weight is not None else None
        gw = g2.T @ (x.reshape(-1, x.shape[-1]) if x.ndim != 2 else x) if x is not None else None
        gb = g2.sum(0) if self.has_bias and self.next[2] is not None else None
        return gx, gw, gb

    def backward_fast(self, g):
        x, weight = self.saved_tensors
        be, dev = g._dev.backend, g._dev
        gx_ = g._x
        g2 = gx_ if g.ndim == 2 else be.reshape(gx_, (-1, g.shape[-1]))
        gx = gw = gb = None
        if weight is not None:
            gx = _util.wrap(be.reshape(be.matmul(g2, weight._x), self.in_shape), dev)
        if x is not None:
            x2 = x._x if x.ndim == 2 else be.reshape(x._x, (-1, x.shape[-1]))
            gw = _util.wrap(be.matmul(be.swap_last(g2), x2), dev)
        if self.has_bias and self.next[2] is not None:
            gb = _util.wrap(be.sum(g2, 0, False), dev)
        return gx, gw, gb


class Conv2d(Function):
    """A whole (groups=1) convolution as one node: one im2col, one GEMM, the bias added in place.

    ``backward_fast`` reuses the columns kept from forward; ``backward`` (for ``create_graph``)
    spells the same gradients with :class:`Im2Col` / :class:`Col2Im` and matmuls.
    """

    __slots__ = ("cols", "stride", "padding", "dilation", "has_bias")

    def forward(self, x, weight, bias, stride, padding, dilation):
        self.stride, self.padding, self.dilation, self.has_bias = stride, padding, dilation, bias is not None
        self.save_for_backward(x, weight)
        out, self.cols = x._dev.backend.conv2d(x._x, weight._x, None if bias is None else bias._x, stride, padding,
                                               dilation)
        return out

    def backward(self, g):
        x, weight = self.saved_tensors
        n, oc, oh, ow = g.shape
        kernel = weight.shape[2:]
        w2 = weight.reshape(oc, -1)
        g3 = g.reshape(n, oc, oh * ow)
        gx = gw = gb = None
        if self.next[0] is not None:
            gx = Col2Im.apply(w2.T @ g3, x.shape, kernel, self.stride, self.padding, self.dilation)
        if self.next[1] is not None:
            cols = Im2Col.apply(x, kernel, self.stride, self.padding, self.dilation)
            gw = (g3 @ cols.mT).sum(0).reshape(weight.shape)
        if self.has_bias and self.next[2] is not None:
            gb = g.sum((0, 2, 3))
        return gx, gw, gb, None, None, None

    def backward_fast(self, g):
        x, weight = self.saved_tensors
        dev = g._dev
        nxt = self.next
        gx, gw, gb = dev.backend.conv2d_backward(g._x, self.cols, weight._x, x.shape, self.stride, self.padding,
                                                 self.dilation, nxt[0] is not None, nxt[1] is not None,
                                                 self.has_bias and nxt[2] is not None)
        return (None if gx is None else _util.wrap(gx, dev), None if gw is None else _util.wrap(gw, dev),
                None if gb is None else _util.wrap(gb, dev), None, None, None)

    def release(self) -> None:
        super().release()
        self.cols = None


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

    def backward_fast(self, g):
        be = g._dev.backend
        return _util.wrap(be.col2im(g._x, self.in_shape, self.kernel, self.stride, self.padding, self.dilation),
                          g._dev), None, None, None, None


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

    __slots__ = ("in_shape", "kernel", "stride", "padding", "dilation", "state", "out")

    def forward(self, x, kernel, stride, padding, dilation):
        self.in_shape, self.kernel, self.stride, self.padding, self.dilation = (x.shape, kernel, stride, padding,
                                                                                dilation)
        be = x._dev.backend
        out, self.state = be.max_pool2d(x._x, kernel, stride, padding, dilation)
        if _grad.enabled and x.requires_grad:
            # Backward finds the winners from the input and the maxima: keep a private copy of the maxima (a
            # quarter of the input for 2x2 windows), as torch keeps its indices, so the output itself may be
            # written in place before backward.
            self.save_for_backward(x)
            self.out = _util.wrap(be.copy(out), x._dev)
        return out

    def backward(self, g):
        (x,) = self.saved_tensors
        out = self.out
        n, c, h, w = self.in_shape
        be = g._dev.backend
        idx = _util.wrap(be.max_pool2d_indices(x._x, out._x, self.kernel, self.stride, self.padding, self.dilation),
                         g._dev).flatten(2)
        flat = g.new_zeros(n, c, h * w).scatter_add(2, idx, g.flatten(2))
        return flat.reshape(self.in_shape), None, None, None, None

    def backward_fast(self, g):
        (x,) = self.saved_tensors
        out = self.out
        gx = g._dev.backend.max_pool2d_backward(g._x, x._x, out._x, self.state, self.kernel, self.stride,
                                                self.padding, self.dilation)
        return _util.wrap(gx, g._dev), None, None, None, None

    def release(self) -> None:
        super().release()
        self.state = self.out = None


class LayerNorm(Function):
    """Normalization over the trailing dims, then ``* weight + bias`` (either may be absent)."""

    __slots__ = ("axes", "eps", "xhat", "rstd", "has_weight", "has_bias")

    def forward(self, x, weight, bias, ndim, eps):
        be = x._dev.backend
        self.axes = tuple(range(x.ndim - ndim, x.ndim))
        self.eps = eps
        xhat, _, self.rstd = be.layer_norm(x._x, self.axes, eps)
        self.xhat = xhat
        self.has_weight, self.has_bias = weight is not None, bias is not None
        self.save_for_backward(x, weight) if weight is not None else self.save_for_backward(x)
        y = xhat
        if weight is not None:
            y = be.mul(y, weight._x)
        if bias is not None:
            y = be.add(y, bias._x)
        if y is xhat:  # no affine part: the output must not be the array backward keeps (an in-place op on it)
            y = be.copy(xhat)
        return y

    def _batch_axes(self, g):
        return tuple(range(g.ndim - len(self.axes)))

    def backward(self, g):
        saved = self.saved_tensors
        x = saved[0]
        mean = x.mean(self.axes, keepdim=True)
        xc = x - mean
        rstd = ((xc * xc).mean(self.axes, keepdim=True) + self.eps).rsqrt()
        xhat = xc * rstd
        gxh = g * saved[1] if self.has_weight else g
        gx = rstd * (gxh - gxh.mean(self.axes, keepdim=True) - xhat * (gxh * xhat).mean(self.axes, keepdim=True))
        batch = self._batch_axes(g)
        # (no batch dims: the weight's gradient is g * xhat itself; sum over () would sum everything)
        gw = ((g * xhat).sum(batch) if batch else g * xhat) if self.has_weight else None
        gb = (g.sum(batch) if batch else g) if self.has_bias else None
        return gx, gw, gb, None, None

    def backward_fast(self, g):
        saved = self.saved_tensors
        be, dev, gx_ = g._dev.backend, g._dev, g._x
        gxh = be.mul(gx_, saved[1]._x) if self.has_weight else gx_
        gx = be.layer_norm_backward(gxh, self.xhat, self.rstd, self.axes)
        batch = self._batch_axes(g)
        gw = _util.wrap(be.sum(be.mul(gx_, self.xhat), batch, False), dev) if self.has_weight else None
        gb = _util.wrap(be.sum(gx_, batch, False), dev) if self.has_bias else None
        return _util.wrap(gx, dev), gw, gb, None, None

    def release(self) -> None:
        super().release()
        self.xhat = self.rstd = None


class CrossEntropy(Function):
    """Per-row softmax cross-entropy of (N, C) logits against class indices, in one pass.

    Label smoothing, class weights and ``ignore_index`` are folded into per-row coefficients
    ``a`` so that the gradient is ``g * (softmax * sum(a) - a)``.
    """

    __slots__ = ("logp", "coef", "coef_sum", "ignore_index", "smoothing", "logits", "logits_version")

    def forward(self, logits, target, weight, ignore_index, smoothing):
        be = logits._dev.backend
        self.ignore_index, self.smoothing = ignore_index, smoothing
        loss, self.logp, self.coef, self.coef_sum = be.cross_entropy(
            logits._x, target._x, None if weight is None else weight._x, ignore_index, smoothing)
        # The gradient reads the log-probabilities kept privately (as torch keeps log_softmax's result), so the
        # logits may be written in place after the loss. Only a graph of the backward (create_graph) reads the
        # logits themselves: that path checks their version by hand.
        self.save_for_backward()
        self.logits, self.logits_version = logits, logits._storage.version
        return loss

    def _check_logits(self) -> None:
        logits = self.logits
        if logits._storage.version != self.logits_version:
            from ..autograd.function import VersionMismatchError
            st = logits._storage
            raise VersionMismatchError(self, 0, logits, self.logits_version, st.version,
                                       st.bumps_since(self.logits_version))

    def backward(self, g):
        self.saved_tensors  # noqa: B018 - raises if freed by an earlier backward
        self._check_logits()
        logits = self.logits
        dev = g._dev
        coef, coef_sum = dev.backend.cross_entropy_coefs(self.logp, self.coef, self.coef_sum)
        coef, coef_sum = _util.wrap(coef, dev), _util.wrap(coef_sum, dev)
        p = logits.softmax(1)
        return (p * coef_sum.unsqueeze(1) - coef) * g.unsqueeze(1), None, None, None, None

    def backward_fast(self, g):
        self.saved_tensors  # noqa: B018 - raises if freed by an earlier backward
        if getattr(g._dev.backend, "cross_entropy_reads_logits", False):
            self._check_logits()
        gx = g._dev.backend.cross_entropy_backward(g._x, self.logp, self.coef, self.coef_sum)
        return _util.wrap(gx, g._dev), None, None, None, None

    def release(self) -> None:
        super().release()
        self.logp = self.coef = self.coef_sum = self.logits = None


class Dropout(Function):
    """``x * mask`` with a mask drawn from the generator, scaled by 1/(1-p); the mask is kept."""

    __slots__ = ("mask", "p")

    def forward(self, x, p, generator):
        be = x._dev.backend
        self.p = p
        self.mask = be.dropout_mask(generator, x.shape, p, x.dtype)
        self.save_for_backward()  # nothing to version-check, but a second backward must still be refused
        return be.mul(x._x, self.mask)

    def backward(self, g):
        self.saved_tensors  # noqa: B018 - raises if an earlier backward freed the mask
        return g * _util.wrap(self.mask, g._dev), None, None

    def backward_fast(self, g):
        self.saved_tensors  # noqa: B018
        return _util.wrap(g._dev.backend.mul(g._x, self.mask), g._dev), None, None

    def release(self) -> None:
        super().release()
        self.mask = None
