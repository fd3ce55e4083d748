"""Graph nodes for the convolution family's additions (issue 17): the transposed convolution and the embedding
lookup whose gradient torch shapes (``padding_idx``, ``scale_grad_by_freq``).

Grouped, dilated, 1-D and 3-D convolutions, pooling with ``ceil_mode``, resampling, ``fold``/``unfold`` and
``embedding_bag`` are compositions of existing nodes (see ``tinygrad_like/nn/functional_*.py``); only these two
need a node of their own.
"""

from __future__ import annotations

from ..autograd import grad_mode
from ..autograd.function import Function
from .nn import ConvInputGrad

_grad_mode = grad_mode.state


class ConvTranspose2d(ConvInputGrad):
    """A transposed convolution (``groups=1``): ``col2im(weight^T @ x)``, the input gradient of the convolution
    whose weight is ``weight`` (in_channels, out_channels, KH, KW) and whose input has ``out_shape``, run as the same
    fused kernel. Its gradients are that convolution of the incoming gradient (for ``x``) and the convolution's
    weight gradient with ``x`` as the output gradient (for ``weight``), as :class:`ConvInputGrad`'s."""

    __slots__ = ()


class EmbeddingRows(Function):
    """Rows ``weight[idx]`` (shape ``idx.shape + (D,)``) with torch's embedding gradient: each position's gradient
    is added into its row, except at ``padding_idx`` (none), and divided by how often its index occurs in ``idx``
    when ``scale_grad_by_freq``. The backward is written with Tensor ops (``index_add``), so it differentiates
    again in the incoming gradient."""

    __slots__ = ("num", "padding_idx", "by_freq")

    def forward(self, weight, idx, padding_idx, by_freq):
        be = weight._dev.backend
        self.num, self.padding_idx, self.by_freq = weight.shape[0], padding_idx, by_freq
        if _grad_mode.enabled and weight.requires_grad:
            self.save_for_backward(idx)
        rows = be.index_select(weight._x, 0, be.reshape(idx._x, (-1,)))
        return be.reshape(rows, idx.shape + (weight.shape[1],))

    def backward(self, g):
        (idx,) = self.saved_tensors
        flat = idx.reshape(-1)
        g2 = g.reshape(-1, g.shape[-1])
        coef = None
        if self.padding_idx is not None:
            coef = (flat != self.padding_idx).to(g.dtype)
        if self.by_freq:
            ones = g.new_ones(flat.shape[0])
            counts = g.new_zeros(self.num).index_add(0, flat, ones)
            inv = 1.0 / counts.index_select(0, flat)
            coef = inv if coef is None else coef * inv
        if coef is not None:
            g2 = g2 * coef.unsqueeze(1)
        return g.new_zeros(self.num, g.shape[-1]).index_add(0, flat, g2), None, None, None
