"""Graph nodes for the neural-network primitives: linear, layer norm, softmax cross-entropy, dropout and
attention (convolution and pooling nodes are in ``ops/conv.py`` and ``ops/pooling.py``).

Each forward is one fused backend primitive. Where a fused backward kernel exists, it runs as a node of its own
(:class:`LayerNormBackward`, :class:`CrossEntropyBackward`) whose own ``backward`` is written with Tensor ops: the
formula ``loss.backward()`` runs is the one ``create_graph=True`` records and differentiates again.
"""

from __future__ import annotations

from ..autograd import grad_mode
from ..autograd.function import Function
from ._util import in_float32, rounded

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


class LayerNorm(Function):
    """Normalization over the trailing dims, then ``* weight + bias`` (either may be absent)."""

    __slots__ = ("axes", "eps", "xhat", "rstd", "has_weight", "has_bias")

    def forward(self, x, weight, bias, ndim, eps):
        be = x._dev.backend
        self.axes = tuple(range(x.ndim - ndim, x.ndim))
        self.eps = eps
        xhat, _, self.rstd = be.layer_norm(in_float32(x), self.axes, eps)
        self.xhat = xhat
        self.has_weight, self.has_bias = weight is not None, bias is not None
        self.save_for_backward(x, weight) if weight is not None else self.save_for_backward(x)
        y = xhat
        if weight is not None:
            y = be.mul(y, weight._x)
        if bias is not None:
            y = be.add(y, bias._x)
        if y is xhat and _grad_mode.enabled and x.requires_grad:  # no affine part: when a backward will read x-hat, the
            y = be.copy(xhat)  # output must not be that array (an in-place op on it); else nothing keeps it
        return rounded(x, y)  # (bfloat16: the statistics were computed in float32)

    def _statistics(self, x):
        """x-hat and 1/std as tensors for the formulas below: x-hat as forward kept it; or, when a graph of the
        backward is recorded (``create_graph``), both computed again with Tensor ops so that their dependence on
        ``x`` is recorded (the fused kernel itself always reads what forward kept: the same values)."""
        if not _grad_mode.enabled:
            return x._wrap(self.xhat, x._dev), None
        xc = x - x.mean(self.axes, keepdim=True)
        rstd = ((xc * xc).mean(self.axes, keepdim=True) + self.eps).rsqrt()
        return xc * rstd, rstd

    def backward(self, g):
        """The normalization's gradient (a fused node); the weight's ``g * xhat`` and the bias's ``g``, which the
        engine sums over the batch dims the weight and bias were broadcast over."""
        saved = self.saved_tensors
        xhat, rstd = self._statistics(saved[0])
        gxh = g * saved[1] if self.has_weight else g
        gx = LayerNormBackward.apply(gxh, xhat, rstd, self.axes, (self.xhat, self.rstd)) if self.next[0] is not None \
            else None
        gw = g * xhat if self.has_weight and self.next[1] is not None else None
        gb = g if self.has_bias and self.next[2] is not None else None
        return gx, gw, gb, None, None

    def release(self) -> None:
        super().release()
        self.xhat = self.rstd = None


class LayerNormBackward(Function):
    """``rstd * (g - mean(g) - xhat * mean(g * xhat))`` over the normalized axes: the gradient of the
    normalization itself (before any affine weight), as one fused kernel that reads the statistics the layer
    norm's forward kept (``kept``: its native x-hat and 1/std, held here too, since the layer norm's node lets them
    go when its backward is done). ``xhat`` and ``rstd`` are the same statistics as tensors, inputs only when a
    graph of this node is recorded (its own gradient, written with Tensor ops, reads them); else None."""

    __slots__ = ("axes", "kept")

    def forward(self, g, xhat, rstd, axes, kept):
        self.axes, self.kept = axes, kept
        if _grad_mode.enabled:
            self.save_for_backward(g, xhat, rstd)
        return g._dev.backend.layer_norm_backward(g._x, kept[0], kept[1], axes)

    def backward(self, gg):
        g, xhat, rstd = self.saved_tensors
        ax = self.axes
        m1, m2 = g.mean(ax, keepdim=True), (g * xhat).mean(ax, keepdim=True)
        # the map g -> gx is rstd times a symmetric projection: its adjoint is this same node
        gg_g = LayerNormBackward.apply(gg, xhat, rstd, ax, self.kept)
        gg_xhat = -rstd * (gg * m2 + g * (gg * xhat).mean(ax, keepdim=True))
        gg_rstd = (gg * (g - m1 - xhat * m2)).sum(ax, keepdim=True)
        return gg_g, gg_xhat, gg_rstd, None, None

    def release(self) -> None:
        super().release()
        self.kept = None


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
        # logits may be written in place after the loss. Only a graph of the backward (create_graph), or a backend
        # whose kept state is the logits themselves, reads the logits: those paths check their version by hand.
        self.save_for_backward()
        self.logits, self.logits_version = logits, logits._version
        return loss

    def _check_logits(self) -> None:
        logits = self.logits
        if logits._version != self.logits_version:
            from ..autograd.function import VersionMismatchError
            st = logits._storage
            raise VersionMismatchError(self, 0, logits, self.logits_version, st.version,
                                       st.bumps_since(self.logits_version))

    def backward(self, g):
        self.saved_tensors  # noqa: B018 - raises if freed by an earlier backward
        if _grad_mode.enabled or getattr(g._dev.backend, "cross_entropy_reads_logits", False):
            self._check_logits()
        return CrossEntropyBackward.apply(g, self.logits, self), None, None, None, None

    def release(self) -> None:
        super().release()
        self.logp = self.coef = self.coef_sum = self.logits = None


class CrossEntropyBackward(Function):
    """``g * (softmax(logits) * sum(a) - a)`` per row, as one fused kernel from what the loss's forward kept.
    Its inputs are the incoming gradient and the logits, so a graph of it reaches the logits' history."""

    __slots__ = ("coef", "coef_sum")

    def forward(self, g, logits, loss: CrossEntropy):
        be = g._dev.backend
        if _grad_mode.enabled:
            self.save_for_backward(g, logits)
            self.coef, self.coef_sum = be.cross_entropy_coefs(loss.logp, loss.coef, loss.coef_sum)
        return be.cross_entropy_backward(g._x, loss.logp, loss.coef, loss.coef_sum)

    def backward(self, gg):
        g, logits = self.saved_tensors
        dev = gg._dev
        coef, coef_sum = gg._wrap(self.coef, dev), gg._wrap(self.coef_sum, dev).unsqueeze(1)
        p = logits.softmax(1)
        gg_g = (gg * (p * coef_sum - coef)).sum(1)
        from .reduce import SoftmaxBackward
        gg_logits = SoftmaxBackward.apply(gg * g.unsqueeze(1) * coef_sum, p, 1)
        return gg_g, gg_logits, None


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
        return g * g._wrap(self.mask, g._dev), None, None

    def release(self) -> None:
        super().release()
        self.mask = None


class ScaledDotProductAttention(Function):
    """``softmax(q @ k^T * scale + mask) @ v`` as one node, through one fused primitive (``attention``): no dropout
    and no user mask; ``mask`` is None or the additive causal mask (0 / -inf), a native array (``causal``).

    The attention weights ``w`` are kept privately (as softmax keeps its output). The backward is written with Tensor
    ops: ``gv = w^T @ g``, ``gs = SoftmaxBackward(g * scale @ v^T, w)``, ``gq = gs @ k``, ``gk = gs^T @ q``; when a
    graph of it is recorded (``create_graph``), ``w`` is computed again with Tensor ops from ``q`` and ``k`` so that
    its dependence on them is recorded (the same values)."""

    __slots__ = ("scale", "causal", "mask", "w")

    def forward(self, q, k, v, scale, mask):
        self.scale, self.mask, self.causal = scale, mask, mask is not None
        out, w = q._dev.backend.attention(q._x, k._x, v._x, scale, mask)
        if _grad_mode.enabled:
            self.save_for_backward(q, k, v)
        self.w = w
        return out

    def _weights(self, q, k):
        if not _grad_mode.enabled:
            return q._wrap(self.w, q._dev)
        s = (q * self.scale) @ k.mT
        if self.mask is not None:
            s = s + q._wrap(q._dev.backend.copy(self.mask), q._dev)
        return s.softmax(-1)

    def backward(self, g):
        from .reduce import SoftmaxBackward

        q, k, v = self.saved_tensors
        w = self._weights(q, k)
        nq, nk, nv = self.next[:3]
        gv = w.mT @ g if nv is not None else None
        gq = gk = None
        if nq is not None or nk is not None:
            gs = SoftmaxBackward.apply((g * self.scale) @ v.mT, w, w.ndim - 1)
            gq = gs @ k if nq is not None else None
            gk = gs.mT @ q if nk is not None else None
        return gq, gk, gv, None, None

    def release(self) -> None:
        super().release()
        self.w = None
