"""``convert_conv2d_weight_memory_format`` / ``convert_conv3d_weight_memory_format``: in torch they restride the
convolution weights (channels_last) for faster kernels. tinygrad_like's tensors have one layout, so the values and
results are unchanged; the module is returned as it is (after the same type checks)."""

from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module, memory_format):
    """``module`` itself: its convolutions already compute in the one layout there is."""
    return module


def convert_conv3d_weight_memory_format(module, memory_format):
    """``module`` itself (see :func:`convert_conv2d_weight_memory_format`)."""
    return module
