"""``torch.nn.modules.batchnorm``: where torch defines these modules (the classes are tinygrad_like's)."""

from ..layers import _BatchNorm

_NormBase = _BatchNorm  # (torch splits _NormBase from _BatchNorm; one class here)
