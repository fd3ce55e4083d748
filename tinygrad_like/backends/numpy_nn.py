"""The CPU backend's fused primitives for neural networks (mixed into ``NumpyBackend``).

Each one replaces a chain of small ops with one pass over the data, and each has a CUDA twin in
``kernel_src/``: im2col/col2im (convolution as one matrix multiply), max-pool with indices,
layer norm, softmax cross-entropy, dropout masks from the counter-based generator, and the Adam
update. Like every primitive they return fresh arrays, except the optimizer steps, which write
into the parameter and state arrays they are given (the caller bumps the versions).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided


def _windows(xp, kh: int, kw: int, stride: tuple, dilation: tuple, oh: int, ow: int):
    """A (N, C, OH, OW, KH, KW) strided view of the padded input ``xp``: every kernel window."""
    n, c = xp.shape[:2]
    s0, s1, s2, s3 = xp.strides
    return as_strided(xp, (n, c, oh, ow, kh, kw),
                      (s0, s1, s2 * stride[0], s3 * stride[1], s2 * dilation[0], s3 * dilation[1]), writeable=False)


def out_size(size: int, k: int, stride: int, padding: int, dilation: int) -> int:
    """Output length of a sliding window (PyTorch's formula, floor mode)."""
    return (size + 2 * padding - dilation * (k - 1) - 1) // stride + 1


def _pad(x, padding: tuple, value):
    ph, pw = padding
    if not ph and not pw:
        return x
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


def _sliding(x, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, fill):
    """Every kernel window of ``x`` padded with ``fill``: a (N, C, OH, OW, KH, KW) strided view."""
    h, w = x.shape[2:]
    oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
    ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
    return _windows(_pad(x, padding, fill), kernel[0], kernel[1], stride, dilation, oh, ow)


def _add_taps(c6, size: tuple, stride: tuple, padding: tuple, dilation: tuple):
    """The adjoint of taking windows: ``c6`` is (A, B, KH, KW, OH, OW); each tap's values are added back
    into the (A, B, H, W) pixels they were read from (padding cropped)."""
    a, b, kh, kw, oh, ow = c6.shape
    (h, w), (sh, sw), (ph, pw), (dh, dw) = size, stride, padding, dilation
    acc = np.zeros((a, b, h + 2 * ph, w + 2 * pw), c6.dtype)
    for i in range(kh):
        rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            acc[:, :, rows, j * dw: j * dw + sw * (ow - 1) + 1: sw] += c6[:, :, i, j]
    return acc[:, :, ph: ph + h, pw: pw + w]


class NumpyNNPrimitives:
    """Fused primitives; all static so the backend object stays stateless."""

    # ---- convolution as matrix multiply -------------------------------------------------------
    @staticmethod
    def im2col(x, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """(N, C, H, W) -> (N, C*KH*KW, OH*OW): one column per output position, one row per tap
        (the layout of the Im2Col graph node, which spells the convolution's double backward)."""
        win = _sliding(x, kernel, stride, padding, dilation, 0)
        n, c, oh, ow, kh, kw = win.shape
        return np.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kh * kw, oh * ow)

    @staticmethod
    def col2im(cols, shape: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """The adjoint of im2col: add every column entry back into the pixel it was read from."""
        n, c, h, w = shape
        oh = out_size(h, kernel[0], stride[0], padding[0], dilation[0])
        ow = out_size(w, kernel[1], stride[1], padding[1], dilation[1])
        c6 = cols.reshape(n, c, *kernel, oh, ow)
        return np.ascontiguousarray(_add_taps(c6, (h, w), stride, padding, dilation))

    @staticmethod
    def conv2d(x, weight, bias, stride: tuple, padding: tuple, dilation: tuple):
        """Convolution as one GEMM: (OC, C*KH*KW) @ cols (C*KH*KW, N*OH*OW). Returns (out, cols);
        the columns are kept by the graph node so backward needs no second im2col."""
        win = _sliding(x, weight.shape[2:], stride, padding, dilation, 0)
        n, c, oh, ow, kh, kw = win.shape
        oc = weight.shape[0]
        cols = np.ascontiguousarray(win.transpose(1, 4, 5, 0, 2, 3)).reshape(c * kh * kw, n * oh * ow)
        out = weight.reshape(oc, -1) @ cols
        if bias is not None:
            out += bias[:, None]
        return np.ascontiguousarray(out.reshape(oc, n, oh, ow).transpose(1, 0, 2, 3)), cols

    @staticmethod
    def conv2d_backward(g, cols, weight, x_shape, stride: tuple, padding: tuple, dilation: tuple,
                        need_x: bool, need_w: bool, need_b: bool):
        """Gradients of :meth:`conv2d` for the inputs that need one: (gx, gweight, gbias)."""
        n, oc, oh, ow = g.shape
        g2 = np.ascontiguousarray(g.transpose(1, 0, 2, 3)).reshape(oc, -1)  # (OC, N*OH*OW)
        gw = (g2 @ cols.T).reshape(weight.shape) if need_w else None
        gb = g2.sum(1) if need_b else None
        gx = None
        if need_x:
            c, kh, kw = weight.shape[1:]
            c6 = (weight.reshape(oc, -1).T @ g2).reshape(c, kh, kw, n, oh, ow).transpose(0, 3, 1, 2, 4, 5)
            # summed in the columns' (C, N) order, then one transposing copy to (N, C, H, W)
            gx = np.ascontiguousarray(_add_taps(c6, x_shape[2:], stride, padding, dilation).transpose(1, 0, 2, 3))
        return gx, gw, gb

    # ---- pooling ------------------------------------------------------------------------------
    @staticmethod
    def max_pool2d(x, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """Max over each window: a running ``maximum`` over the KH*KW taps (strided views, no copies)."""
        kh, kw = kernel
        win = _sliding(x, kernel, stride, padding, dilation, -np.inf)
        out = np.array(win[..., 0, 0])
        for i in range(kh):
            for j in range(kw):
                if i or j:
                    np.maximum(out, win[..., i, j], out=out)
        return out

    @staticmethod
    def _first_max_taps(x, out, kernel, stride, padding, dilation):
        """Yield (i, j, hit) per tap, ``hit`` marking windows whose first maximum is at that tap
        (PyTorch's rule for ties: the first in row-major window order wins). The last tap needs no
        comparison: it wins wherever no earlier one did."""
        kh, kw = kernel
        win = _windows(_pad(x, padding, -np.inf), kh, kw, stride, dilation, *out.shape[2:])
        taken = None
        last = (kh - 1, kw - 1)
        for i in range(kh):
            for j in range(kw):
                if (i, j) == last and taken is not None:
                    yield i, j, ~taken
                    return
                hit = win[..., i, j] == out
                if taken is None:
                    taken = hit.copy()
                else:
                    hit &= ~taken
                    taken |= hit
                yield i, j, hit

    @staticmethod
    def max_pool2d_indices(x, out, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """For ``return_indices``: the flat input index (h * W + w) of each window's maximum."""
        w_in = x.shape[3]
        oh, ow = out.shape[2:]
        idx = np.zeros(out.shape, np.int64)
        base_r = (np.arange(oh) * stride[0] - padding[0]).reshape(oh, 1)
        base_c = np.arange(ow) * stride[1] - padding[1]
        for i, j, hit in NumpyNNPrimitives._first_max_taps(x, out, kernel, stride, padding, dilation):
            flat = (base_r + i * dilation[0]) * w_in + base_c + j * dilation[1]
            np.copyto(idx, np.broadcast_to(flat, out.shape), where=hit)
        return idx

    @staticmethod
    def max_pool2d_backward(g, x, out, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple):
        """Send each output gradient to the input position its max came from (summing overlaps)."""
        n, c, h, w = x.shape
        ph, pw = padding
        dx = np.zeros((n, c, h + 2 * ph, w + 2 * pw), g.dtype)
        dwin = as_strided(dx, (n, c, *out.shape[2:], *kernel),
                          (dx.strides[0], dx.strides[1], dx.strides[2] * stride[0], dx.strides[3] * stride[1],
                           dx.strides[2] * dilation[0], dx.strides[3] * dilation[1]))
        disjoint = all(s_ >= d * (k - 1) + 1 for s_, d, k in zip(stride, dilation, kernel))
        for i, j, hit in NumpyNNPrimitives._first_max_taps(x, out, kernel, stride, padding, dilation):
            if disjoint:  # windows do not overlap: each tap writes its own pixels
                np.multiply(g, hit, out=dwin[..., i, j])
            else:
                dwin[..., i, j] += g * hit
        return np.ascontiguousarray(dx[:, :, ph: ph + h, pw: pw + w]) if ph or pw else dx

    # ---- normalization ------------------------------------------------------------------------
    @staticmethod
    def layer_norm(x, axes: tuple, eps: float):
        """Normalize over the trailing ``axes``: (y, mean, rstd), the last two kept for backward."""
        mean = x.mean(axis=axes, keepdims=True)
        xc = x - mean
        var = np.mean(xc * xc, axis=axes, keepdims=True)
        rstd = 1.0 / np.sqrt(var + eps)
        return xc * rstd, mean, rstd.astype(x.dtype, copy=False)

    @staticmethod
    def layer_norm_backward(g, xhat, rstd, axes: tuple):
        """Gradient of the normalization itself (before any affine weight), from x-hat and 1/std."""
        m = np.mean(g, axis=axes, keepdims=True)
        mx = np.mean(g * xhat, axis=axes, keepdims=True)
        return (g - m - xhat * mx) * rstd

    # ---- softmax cross-entropy ----------------------------------------------------------------
    @staticmethod
    def cross_entropy(logits, target, weight, ignore_index: int, smoothing: float):
        """Per-row loss for class indices, and the coefficients its backward needs.

        loss_i = sum_k a_ik * (-log p_ik) with a_ik = (1 - s) w[y_i] [k = y_i] + s/C w[k]
        (zero for rows whose target is ``ignore_index``). Returns (loss, log p, a, sum_k a_ik).
        """
        n, c = logits.shape
        m = logits.max(axis=1, keepdims=True)
        z = logits - m
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        keep = target != ignore_index
        safe = np.where(keep, target, 0)
        a = np.zeros((n, c), logits.dtype)
        wy = np.ones(n, logits.dtype) if weight is None else weight[safe]
        a[np.arange(n), safe] = (1.0 - smoothing) * wy
        if smoothing:
            a += (smoothing / c) * (np.ones(c, logits.dtype) if weight is None else weight)
        a *= keep[:, None]
        loss = -(a * logp).sum(axis=1)
        return loss.astype(logits.dtype, copy=False), logp, a, a.sum(axis=1)

    @staticmethod
    def cross_entropy_backward(g, logp, a, a_sum):
        """d loss_i / d logits_ic = p_ic * sum_k a_ik - a_ic, scaled by the incoming g_i."""
        return (np.exp(logp) * a_sum[:, None] - a) * g[:, None]

    # ---- dropout ------------------------------------------------------------------------------
    @staticmethod
    def dropout_mask(gen, shape: tuple, p: float, dtype):
        """Keep each element with probability 1 - p, scaled by 1/(1 - p); drawn from ``gen``."""
        keep = gen.np_generator().random(shape, dtype=np.float32) >= p
        return keep.astype(dtype.np) * np.asarray(1.0 / (1.0 - p), dtype.np)

    # ---- optimizer updates (in place) ---------------------------------------------------------
    @staticmethod
    def adam_step(param, grad, exp_avg, exp_avg_sq, step: int, lr: float, beta1: float, beta2: float,
                  eps: float, weight_decay: float, decoupled: bool, max_exp_avg_sq=None) -> None:
        """One Adam/AdamW update, written into ``param``, ``exp_avg`` and ``exp_avg_sq``.

        The arithmetic follows PyTorch's single-tensor Adam so results agree to float rounding.
        """
        if weight_decay:
            if decoupled:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        exp_avg += (grad - exp_avg) * (1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias1 = 1 - beta1 ** step
        bias2_sqrt = (1 - beta2 ** step) ** 0.5
        second = exp_avg_sq
        if max_exp_avg_sq is not None:  # AMSGrad keeps the running maximum of the second moment
            np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            second = max_exp_avg_sq
        denom = np.sqrt(second) / bias2_sqrt + eps
        param -= (lr / bias1) * exp_avg / denom
