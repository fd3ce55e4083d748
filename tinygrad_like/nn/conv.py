"""Convolution layers and patch extraction: ``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``,
``ConvTranspose2d``, ``ConvTranspose3d``, ``Unfold``, ``Fold``.

Constructor signatures, defaults, errors, parameter names and shapes are torch's (weight (out, in / groups, k...),
or (in, out / groups, k...) for the transposed ones), and so is the initialisation (kaiming-uniform with
a = sqrt(5), a uniform bias in +-1/sqrt(fan_in)), so a torch state dict loads as it is.

>>> import tinygrad_like as tl
>>> tl.nn.Conv1d(4, 8, 3, padding="same", padding_mode="reflect", groups=2)
Conv1d(4, 8, kernel_size=(3,), stride=(1,), padding=same, groups=2, padding_mode=reflect)
>>> tl.nn.ConvTranspose2d(8, 3, 4, stride=2, padding=1)(tl.zeros(1, 8, 5, 5)).shape
tl.Size([1, 3, 10, 10])
"""

from __future__ import annotations

import math

from ..creation import empty
from ..ops._nn_args import _ntuple
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module, Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Unfold", "Fold"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What torch's ``_ConvNd`` holds: the geometry as ``nd``-tuples, ``padding_mode``, ``weight`` and ``bias``."""

    _nd = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride, padding, dilation,
                 output_padding, groups: int, bias: bool, padding_mode: str, device=None, dtype=None) -> None:
        super().__init__()
        nd, name = self._nd, type(self).__name__
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got padding_mode="
                             f"'{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _ntuple(kernel_size, nd, "kernel_size", name)
        self.stride = _ntuple(stride, nd, "stride", name)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, nd, "padding", name)
        self.dilation = _ntuple(dilation, nd, "dilation", name)
        self.output_padding = _ntuple(output_padding, nd, "output_padding", name)
        self.padding_mode = padding_mode
        if padding == "same" and any(s != 1 for s in self.stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        if isinstance(self.padding, str):  # what F.pad takes for the non-zero padding modes (last dim first)
            rev = [0, 0] * nd
            if self.padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(nd - 1, -1, -1)):
                    total = d * (k - 1)
                    rev[2 * i], rev[2 * i + 1] = total // 2, total - total // 2
        else:
            rev = [p for p in reversed(self.padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = rev
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(empty(*shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's: kaiming-uniform (a = sqrt(5)) weight, U(+-1/sqrt(fan_in)) bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = init._fans(self.weight)[0]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        nd = self._nd
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    _functional = staticmethod(F.conv2d)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._functional(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return self._functional(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) or (C, L): weight (out_channels, in_channels // groups, K)."""

    _nd = 1
    _functional = staticmethod(F.conv1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, 0, groups, bias,
                         padding_mode, device, dtype)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) or (C, H, W): im2col, then one matrix multiply with the
    (OC, C*KH*KW) weight (grouped: one per group, batched)."""

    _nd = 2
    _functional = staticmethod(F.conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, 0, groups, bias,
                         padding_mode, device, dtype)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W): weight (OC, C // groups, KD, KH, KW)."""

    _nd = 3
    _functional = staticmethod(F.conv3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, 0, groups, bias,
                         padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                 dilation, padding_mode, device, dtype) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise TypeError(f"{type(self).__name__}: padding must be an int or a tuple of ints, not {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, groups,
                         bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size) -> tuple:
        """torch's: the output_padding that gives ``output_size`` (the module's own when None)."""
        nd = self._nd
        if output_size is None:
            return self.output_padding
        size = list(output_size)
        lead = 2 if input.ndim == nd + 2 else 1
        if len(size) == lead + nd:
            size = size[lead:]
        if len(size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must have {nd} or "
                             f"{lead + nd} elements (got {len(output_size)})")
        lo, hi = [], []
        for d in range(nd):
            m = ((input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
                 + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            lo.append(m)
            hi.append(m + self.stride[d] - 1)
        for s, a, b in zip(size, lo, hi):
            if s < a or s > b:
                raise ValueError(f"requested an output size of {size}, but valid sizes range from {lo} to {hi} (for "
                                 f"an input of {list(input.shape[lead:])})")
        return tuple(s - a for s, a in zip(size, lo))

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        op = self._output_padding(input, output_size)
        return self._functional(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                                self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution (the input gradient of ``Conv1d``): weight (in_channels, out_channels //
    groups, K); ``forward(input, output_size=None)`` picks the output_padding that gives ``output_size``."""

    _nd = 1
    _functional = staticmethod(F.conv_transpose1d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution (the input gradient of ``Conv2d``): weight (in_channels, out_channels //
    groups, KH, KW)."""

    _nd = 2
    _functional = staticmethod(F.conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution (the input gradient of ``Conv3d``): weight (in_channels, out_channels //
    groups, KD, KH, KW)."""

    _nd = 3
    _functional = staticmethod(F.conv_transpose3d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)


class Unfold(Module):
    """Sliding blocks as columns: (N, C, H, W) -> (N, C * KH * KW, L) (see ``F.unfold``)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """Columns summed back into an image: (N, C * KH * KW, L) -> (N, C, *output_size) (see ``F.fold``)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
