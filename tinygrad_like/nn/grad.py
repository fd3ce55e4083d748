"""``torch.nn.grad``: the gradients of a convolution with respect to its input and to its weight, as functions
(for writing a custom convolution's backward). Each runs the convolution under autograd and takes the gradient,
so it is exactly the gradient the convolution's own backward computes."""

from __future__ import annotations

from ..autograd import grad_mode
from ..tensor import Tensor
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _input_grad(conv, input_size, weight, grad_output, stride, padding, dilation, groups) -> Tensor:
    from ..autograd.api import grad as _autograd_grad  # (autograd.api sits above nn in the layers)
    with grad_mode.enable_grad():
        x = weight.new_zeros(tuple(input_size)).requires_grad_()
        out = conv(x, weight.detach(), None, stride, padding, dilation, groups)
        if out.shape != grad_output.shape:
            raise RuntimeError(f"grad_output of shape {tuple(grad_output.shape)} does not match the convolution's "
                               f"output {tuple(out.shape)} for input size {tuple(input_size)}")
        return _autograd_grad(out, x, grad_output)[0]


def _weight_grad(conv, input, weight_size, grad_output, stride, padding, dilation, groups) -> Tensor:
    from ..autograd.api import grad as _autograd_grad  # (autograd.api sits above nn in the layers)
    with grad_mode.enable_grad():
        w = input.new_zeros(tuple(weight_size)).requires_grad_()
        out = conv(input.detach(), w, None, stride, padding, dilation, groups)
        if out.shape != grad_output.shape:
            raise RuntimeError(f"grad_output of shape {tuple(grad_output.shape)} does not match the convolution's "
                               f"output {tuple(out.shape)} for weight size {tuple(weight_size)}")
        return _autograd_grad(out, w, grad_output)[0]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv1d`` with respect to an input of ``input_size``."""
    return _input_grad(F.conv1d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv1d`` with respect to a weight of ``weight_size``."""
    return _weight_grad(F.conv1d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv2d`` with respect to an input of ``input_size``."""
    return _input_grad(F.conv2d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv2d`` with respect to a weight of ``weight_size``."""
    return _weight_grad(F.conv2d, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv3d`` with respect to an input of ``input_size``."""
    return _input_grad(F.conv3d, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """The gradient of ``conv3d`` with respect to a weight of ``weight_size``."""
    return _weight_grad(F.conv3d, input, weight_size, grad_output, stride, padding, dilation, groups)
