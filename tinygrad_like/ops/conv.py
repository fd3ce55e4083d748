"""Convolutions and patches: the graph nodes (the fused convolution and its two gradients, the transposed
convolution, im2col/col2im) and ``tl.nn.functional``'s ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``, ``unfold``,
``fold``.

Every convolution is a 2-D one underneath. A plain convolution (``groups=1``) is the one fused node
:class:`Conv2d` (im2col and one GEMM, the path the benchmarks time); a grouped or depthwise one is :class:`Im2Col`
followed by one batched matrix multiply over the groups. ``conv1d`` is a 2-D convolution of height 1; ``conv3d``
stacks the depth taps of each output slice as extra input channels and runs one 2-D convolution over all slices. A
transposed convolution is the input gradient of a convolution: :class:`ConvTranspose2d` for ``groups=1`` (the fused
kernel), else a batched matrix multiply followed by :class:`Col2Im`; ``conv_transpose3d`` folds the depth taps into
output channels of one 2-D transposed convolution and sums them into place with a 1-D col2im along depth.

The convolution's backward kernels run as nodes of their own (:class:`ConvInputGrad`, :class:`ConvWeightGrad`)
whose own ``backward`` is written with these same nodes: the formula ``loss.backward()`` runs is the one
``create_graph=True`` records and differentiates again.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> x = tl.ones(1, 4, 8)
>>> F.conv1d(x, tl.ones(4, 1, 3), groups=4, padding="same").shape
tl.Size([1, 4, 8])
>>> F.conv_transpose2d(tl.ones(1, 2, 3, 3), tl.ones(2, 5, 3, 3), stride=2, output_padding=1).shape
tl.Size([1, 5, 8, 8])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..autograd import grad_mode
from ..autograd.function import Function
from ._nn_args import _check_tensor_at, _is_int, _ntuple
from ._util import rounded
from .movement import pad as _constant_pad
from .movement import stack

if TYPE_CHECKING:  # (annotations only: the Tensor class sits above the ops)
    from ..tensor import Tensor

__all__ = ["conv_tbc", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "unfold", "fold"]


_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)


class Conv2d(Function):
    """A whole (groups=1) convolution as one node: one im2col, one GEMM, the bias added in place.

    The columns from forward are kept, so the weight's gradient needs no second im2col (a backend that convolves
    directly keeps what it needs to build them: the NumPy backend's small stride-1 convolutions)."""

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


class ConvTranspose2d(ConvInputGrad):
    """A transposed convolution (``groups=1``): ``col2im(weight^T @ x)``, the input gradient of the convolution
    whose weight is ``weight`` (in_channels, out_channels, KH, KW) and whose input has ``out_shape``, run as the same
    fused kernel. Its gradients are that convolution of the incoming gradient (for ``x``) and the convolution's
    weight gradient with ``x`` as the output gradient (for ``weight``), as :class:`ConvInputGrad`'s."""

    __slots__ = ()


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


# ---- argument helpers -----------------------------------------------------------------------------------
def _batched(x, nd: int, fn: str, what: str):
    """Accept (N, C, *spatial) or an unbatched (C, *spatial) input with ``nd`` spatial dims."""
    _check_tensor_at(x, fn)
    if x.ndim == nd + 1:
        return x.unsqueeze(0), True
    if x.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(x.shape)} ({what})")
    return x, False


def _out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


# ---- convolution ----------------------------------------------------------------------------------
_SHAPES = {1: "expected a 2-D (C, L) or 3-D (N, C, L) input", 2: "expected a 3-D (C, H, W) or 4-D (N, C, H, W) input",
           3: "expected a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) input"}


def _conv_checks(x, weight, bias, groups, nd: int, fn: str, transposed: bool = False) -> None:
    """torch's checks of a convolution's operands (x batched), with torch's wording plus the shapes involved."""
    _check_tensor_at(weight, fn, "weight")
    if weight.ndim != nd + 2:
        kind = "(in_channels, out_channels/groups, k...)" if transposed else "(out_channels, in_channels/groups, k...)"
        raise RuntimeError(f"{fn}: expected a {nd + 2}-D weight {kind}, got shape {weight.shape}")
    if not _is_int(groups):
        raise TypeError(f"{fn}(): argument 'groups' must be int, not {type(groups).__name__}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    c = x.shape[1]
    if transposed:
        if weight.shape[0] != c:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                               f"{list(x.shape)} to have {weight.shape[0]} channels, but got {c} channels instead")
        if c % groups:
            raise RuntimeError(f"Given groups={groups}, expected input channels {c} to be divisible by groups")
        oc = weight.shape[1] * groups
    else:
        oc = weight.shape[0]
        if oc % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size {list(weight.shape)} instead")
        if weight.shape[1] * groups != c:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                               f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {c} channels "
                               f"instead ({fn}: input of shape {x.shape} has {c} channels, but weight of shape "
                               f"{weight.shape} with groups={groups} expects {weight.shape[1] * groups} input "
                               f"channels)")
    if x.dtype is not weight.dtype:
        raise RuntimeError(f"{fn}: input dtype {x.dtype.name} and weight dtype {weight.dtype.name} must match; "
                           f"convert one with .to(dtype)")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: expected floating point input and weight, got {x.dtype.name}")
    if bias is not None:
        _check_tensor_at(bias, fn, "bias")
        if bias.shape != (oc,):
            raise RuntimeError(f"{fn}: bias of shape {bias.shape} should be ({oc},), one per output channel")
        if bias.dtype is not weight.dtype:
            raise RuntimeError(f"{fn}: bias dtype {bias.dtype.name} must match the weight's {weight.dtype.name}")
    if any(k < 1 for k in weight.shape[2:]):
        raise RuntimeError(f"{fn}: the kernel must be at least 1x1, got weight of shape {weight.shape}")


def _conv_geometry(padding, kernel: tuple, stride, dilation, nd: int, fn: str):
    """(stride, dilation, symmetric padding, extra end padding or None), each an ``nd``-tuple."""
    stride, dilation = _ntuple(stride, nd, "stride", fn), _ntuple(dilation, nd, "dilation", fn)
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    if isinstance(padding, str):
        if padding == "valid":
            return stride, dilation, (0,) * nd, None
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: {padding!r} (expected 'valid', 'same', an int or a tuple "
                               f"of {nd} ints)")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        left = tuple(t // 2 for t in total)
        extra = tuple(t - 2 * lo for t, lo in zip(total, left))
        return stride, dilation, left, (extra if any(extra) else None)
    pads = _ntuple(padding, nd, "padding", fn)
    if min(pads) < 0:
        raise RuntimeError("negative padding is not supported")
    return stride, dilation, pads, None


def _conv2d_core(x, weight, bias, stride: tuple, padding: tuple, dilation: tuple, groups: int):
    """A checked, batched 2-D convolution: the fused node for groups=1, else im2col and a batched GEMM."""
    if groups == 1:
        return Conv2d.apply(x, weight, bias, stride, padding, dilation)
    n, c, h, w = x.shape
    oc, cg, kh, kw = weight.shape
    oh, ow = (_out_size(h, kh, stride[0], padding[0], dilation[0]),
              _out_size(w, kw, stride[1], padding[1], dilation[1]))
    cols = Im2Col.apply(x, (kh, kw), stride, padding, dilation)  # (N, C*KH*KW, OH*OW), channel-major rows
    cols = cols.reshape(n, groups, cg * kh * kw, oh * ow)
    out = weight.reshape(groups, oc // groups, cg * kh * kw) @ cols  # (N, G, OC/G, OH*OW)
    out = out.reshape(n, oc, oh, ow)
    return out if bias is None else out + bias.reshape(oc, 1, 1)


def _too_small(fn: str, spatial, kernel, dilation, padded, out) -> RuntimeError:
    return RuntimeError(f"{fn}: Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                        f"size: ({' x '.join(str(d * (k - 1) + 1) for k, d in zip(kernel, dilation))}). Kernel size "
                        f"can't be greater than actual input size (the kernel {tuple(kernel)} with dilation "
                        f"{tuple(dilation)} is larger than the padded input {tuple(padded)}; output size would be "
                        f"{tuple(out)})")


def _conv(input, weight, bias, stride, padding, dilation, groups, nd: int, fn: str):
    x, unbatched = _batched(input, nd, fn, _SHAPES[nd])
    _conv_checks(x, weight, bias, groups, nd, fn)
    kernel = weight.shape[2:]
    stride, dilation, pads, extra = _conv_geometry(padding, kernel, stride, dilation, nd, fn)
    if extra is not None:  # 'same' with an even effective kernel: the extra pixel goes at the end, as torch's
        widths = []
        for e in reversed(extra):
            widths += [0, e]
        x = _constant_pad(x, tuple(widths))
    spatial = x.shape[2:]
    out_sp = [_out_size(s, k, st, p, d) for s, k, st, p, d in zip(spatial, kernel, stride, pads, dilation)]
    if min(out_sp) <= 0:
        raise _too_small(fn, spatial, kernel, dilation, [s + 2 * p for s, p in zip(spatial, pads)], out_sp)
    if nd == 2:
        out = _conv2d_core(x, weight, bias, stride, pads, dilation, groups)
    elif nd == 1:
        out = _conv2d_core(x.unsqueeze(2), weight.unsqueeze(2), bias, (1,) + stride, (0,) + pads,
                           (1,) + dilation, groups).squeeze(2)
    else:
        out = _conv3d(x, weight, bias, stride, pads, dilation, groups, out_sp[0])
    return out.squeeze(0) if unbatched else out


def _conv3d(x, weight, bias, stride, pads, dilation, groups, od: int):
    """Depth handled by stacking: output slice o reads input slices o*s + t*d (t < KD); those KD slices become
    KD times as many input channels of one 2-D convolution over all N*OD slices."""
    n, c, _, h, w = x.shape
    oc, cg, kd = weight.shape[:3]
    if pads[0]:
        x = _constant_pad(x, (0, 0, 0, 0, pads[0], pads[0]))
    sd, dd = stride[0], dilation[0]
    taps = [x[:, :, t * dd: t * dd + sd * (od - 1) + 1: sd] for t in range(kd)]
    xs = stack(taps, 2).reshape(n, groups, cg, kd, od, h, w)  # (N, G, C/G, KD, OD, H, W)
    xs = xs.permute(0, 4, 1, 3, 2, 5, 6).reshape(n * od, groups * kd * cg, h, w)
    ws = weight.permute(0, 2, 1, 3, 4).reshape(oc, kd * cg, *weight.shape[3:])  # (OC, KD*C/G, KH, KW)
    out = _conv2d_core(xs, ws, bias, stride[1:], pads[1:], dilation[1:], groups)  # (N*OD, OC, OH, OW)
    return out.reshape(n, od, *out.shape[1:]).transpose(1, 2)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """1-D cross-correlation over (N, C, L) or (C, L); ``weight`` is (out_channels, in_channels // groups, K).

    ``padding`` is an int, a 1-tuple, 'valid' or 'same' (stride 1)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-D cross-correlation (PyTorch's conv2d) over (N, C, H, W) or (C, H, W).

    ``weight`` is (out_channels, in_channels // groups, KH, KW); the result is (N, out_channels, OH, OW). With
    ``groups=1`` this is one fused node (im2col and one matrix multiply); grouped and depthwise convolutions are
    im2col and one batched matrix multiply over the groups."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """3-D cross-correlation over (N, C, D, H, W) or (C, D, H, W); ``weight`` is (OC, C // groups, KD, KH, KW)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


# ---- transposed convolution -----------------------------------------------------------------------------
def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd: int, fn: str):
    x, unbatched = _batched(input, nd, fn, _SHAPES[nd])
    _conv_checks(x, weight, bias, groups, nd, fn, transposed=True)
    if isinstance(padding, str):
        raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
    kernel = weight.shape[2:]
    stride, dilation = _ntuple(stride, nd, "stride", fn), _ntuple(dilation, nd, "dilation", fn)
    pads, opad = _ntuple(padding, nd, "padding", fn), _ntuple(output_padding, nd, "output_padding", fn)
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    if min(pads) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(opad) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if any(op >= s and op >= d for op, s, d in zip(opad, stride, dilation)):
        names = ("depth", "height", "width")[3 - nd:]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(
            f"output_padding_{n}: {v}" for n, v in zip(names, opad)) + " " + " ".join(
            f"stride_{n}: {v}" for n, v in zip(names, stride)) + " " + " ".join(
            f"dilation_{n}: {v}" for n, v in zip(names, dilation)))
    if nd == 1:
        x, weight = x.unsqueeze(2), weight.unsqueeze(2)
        kernel, stride, pads, opad, dilation = (1,) + kernel, (1,) + stride, (0,) + pads, (0,) + opad, (1,) + dilation
    spatial = x.shape[2:]
    out_sp = tuple((s - 1) * st - 2 * p + d * (k - 1) + op + 1
                   for s, st, p, d, k, op in zip(spatial, stride, pads, dilation, kernel, opad))
    if min(out_sp) <= 0:
        lo = int(nd == 1)
        raise RuntimeError(f"{fn}: the output size {out_sp[lo:]} is too small: input size {x.shape[2 + lo:]}, stride "
                           f"{stride[lo:]}, padding {pads[lo:]}, dilation {dilation[lo:]}, kernel {kernel[lo:]}, "
                           f"output_padding {opad[lo:]}")
    # the convolution whose input gradient this is maps out_sp back to as many positions as the input has, or more
    # when an output_padding reaches past a stride: the extra positions take zeros
    back = [_out_size(o, k, s, p, d) for o, k, s, p, d in zip(out_sp, kernel, stride, pads, dilation)]
    if tuple(back) != spatial:
        widths = []
        for b, s in zip(reversed(back), reversed(spatial)):
            widths += [0, b - s]
        x = _constant_pad(x, tuple(widths))
    if nd == 3:
        out = _conv_transpose3d(x, weight, out_sp, stride, pads, dilation, groups)
    else:
        out = _conv_transpose2d(x, weight, out_sp, stride, pads, dilation, groups)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * len(out_sp))
    if nd == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def _conv_transpose2d(x, weight, out_sp: tuple, stride, pads, dilation, groups: int):
    """The 2-D transposed convolution of a padded, checked input (no bias): the fused node for groups=1, else a
    batched matrix multiply per group and one col2im."""
    n, cin, h2, w2 = x.shape
    oc = weight.shape[1] * groups
    out_shape = (n, oc) + tuple(out_sp)
    if groups == 1:
        return ConvTranspose2d.apply(x, weight, out_shape, stride, pads, dilation)
    ocg, (kh, kw) = oc // groups, weight.shape[2:]
    wg = weight.reshape(groups, cin // groups, ocg * kh * kw).mT  # (G, OC/G*K, C/G)
    cols = (wg @ x.reshape(n, groups, cin // groups, h2 * w2)).reshape(n, oc * kh * kw, h2 * w2)
    return Col2Im.apply(cols, out_shape, (kh, kw), stride, pads, dilation)


def _conv_transpose3d(x, weight, out_sp: tuple, stride, pads, dilation, groups: int):
    """Depth by folding, the adjoint of ``_conv3d``'s stacking: each depth tap t of the kernel becomes extra output
    channels of one 2-D transposed convolution over all N*D input slices, giving slice i's contribution to output
    slice i*s - p + t*d; a 1-D col2im along depth (kernel (KD, 1)) then sums those contributions into place."""
    n, cin, d2, h2, w2 = x.shape
    ocg, kd = weight.shape[1], weight.shape[2]
    oc, (od, oh, ow) = ocg * groups, out_sp
    # (C_in, OC/G, KD, KH, KW) -> (C_in, KD*OC/G, KH, KW): within each group, channel t*OC/G + o
    wt = weight.transpose(1, 2).reshape(cin, kd * ocg, *weight.shape[3:])
    xs = x.transpose(1, 2).reshape(n * d2, cin, h2, w2)
    y = _conv_transpose2d(xs, wt, (oh, ow), stride[1:], pads[1:], dilation[1:], groups)  # (N*D, G*KD*OC/G, OH, OW)
    # columns for col2im over an (OD, 1) image with OC*OH*OW channels: row (channel, tap), one column per input slice
    cols = y.reshape(n, d2, groups, kd, ocg, oh, ow).permute(0, 2, 4, 5, 6, 3, 1).reshape(n, oc * oh * ow * kd, d2)
    out = Col2Im.apply(cols, (n, oc * oh * ow, od, 1), (kd, 1), (stride[0], 1), (pads[0], 0), (dilation[0], 1))
    return out.reshape(n, oc, oh, ow, od).permute(0, 1, 4, 2, 3)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The adjoint of ``conv1d`` in its input (a "deconvolution"): ``weight`` is (in_channels, out_channels //
    groups, K); the output length is (L - 1) * stride - 2 * padding + dilation * (K - 1) + output_padding + 1."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                           "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The adjoint of ``conv2d`` in its input: ``weight`` is (in_channels, out_channels // groups, KH, KW)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The adjoint of ``conv3d`` in its input: ``weight`` is (in_channels, out_channels // groups, KD, KH, KW)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                           "conv_transpose3d")


# ---- patches --------------------------------------------------------------------------------------------
def _patch_args(kernel_size, dilation, padding, stride, fn: str):
    k, d = _ntuple(kernel_size, 2, "kernel_size", fn), _ntuple(dilation, 2, "dilation", fn)
    p, s = _ntuple(padding, 2, "padding", fn), _ntuple(stride, 2, "stride", fn)
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} kernel_width: "
                           f"{k[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} dilation_width: "
                           f"{d[1]}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} stride_width: {s[1]}")
    return k, d, p, s


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding blocks of (N, C, H, W) (or (C, H, W)) as columns: (N, C * KH * KW, L), L the number of blocks
    (one im2col node; its gradient is :func:`fold`)."""
    _check_tensor_at(input, "unfold")
    if input.ndim not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    x = input.unsqueeze(0) if input.ndim == 3 else input
    k, d, p, s = _patch_args(kernel_size, dilation, padding, stride, "unfold")
    h, w = x.shape[2:]
    oh, ow = _out_size(h, k[0], s[0], p[0], d[0]), _out_size(w, k[1], s[1], p[1], d[1])
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={k}, dilation={d}, padding={p}, "
                           f"calculated shape of the array of sliding blocks as ({oh}, {ow}), but its components "
                           f"must be at least one.")
    out = Im2Col.apply(x, k, s, p, d)
    return out.squeeze(0) if input.ndim == 3 else out


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Columns (N, C * KH * KW, L) (or unbatched (C * KH * KW, L)) summed back into (N, C, *output_size): the
    adjoint of :func:`unfold` (overlapping blocks add up)."""
    _check_tensor_at(input, "fold")
    if input.ndim not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.ndim}D)")
    x = input.unsqueeze(0) if input.ndim == 2 else input
    size = _ntuple(output_size, 2, "output_size", "fold")
    k, d, p, s = _patch_args(kernel_size, dilation, padding, stride, "fold")
    if min(size) <= 0:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: output_size={size}")
    n, ck, length = x.shape
    kk = k[0] * k[1]
    if ck % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={ck} and kernel_size={k}")
    oh, ow = (_out_size(size[0], k[0], s[0], p[0], d[0]), _out_size(size[1], k[1], s[1], p[1], d[1]))
    if oh < 1 or ow < 1 or oh * ow != length:
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{oh} * {ow} = {oh * ow}, but got input.size(2)={length}.")
    out = Col2Im.apply(x, (n, ck // kk) + size, k, s, p, d)
    return out.squeeze(0) if input.ndim == 2 else out


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of a time-batch-channel (T, B, C_in) ``input`` with a (K, C_in, C_out) ``weight``: the
    layout of sequence models, returned as (T', B, C_out)."""
    _check_tensor_at(input, "conv_tbc")
    if input.ndim != 3 or weight.ndim != 3 or bias.ndim != 1:
        raise RuntimeError(f"conv_tbc: expected a 3-D input, a 3-D weight and a 1-D bias, got shapes "
                           f"{tuple(input.shape)}, {tuple(weight.shape)} and {tuple(bias.shape)}")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError(f"conv_tbc: input channels {input.shape[2]} != weight's {weight.shape[1]}")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
