"""Normalization modules beyond batch and layer norm: group, instance and RMS norm, as PyTorch's.

Group and instance norm normalize with the fused layer-norm node over a reshaped view (groups or instances
as rows), then apply the per-channel affine part.

>>> import tinygrad_like as tl
>>> tl.nn.GroupNorm(2, 4)
GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
"""

from __future__ import annotations

import warnings

from ..creation import empty, ones
from ..ops.normalization import cross_map_lrn2d as _cross_map_lrn2d
from ..tensor import Tensor
from . import functional as F
from . import init
from .layers import _BatchNorm
from .module import Module, Parameter

__all__ = ["GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "BatchNorm3d", "SyncBatchNorm",
           "LocalResponseNorm", "CrossMapLRN2d"]


class GroupNorm(Module):
    """Normalize (N, C, ...) over groups of ``num_channels // num_groups`` channels (and all spatial dims)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.use_bias = affine and bias
        if affine:
            self.weight = Parameter(empty(num_channels, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(empty(num_channels, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.use_bias}"


class _InstanceNorm(_BatchNorm):
    """Instance norm: batch norm's parameters and buffers (affine and running statistics off by default),
    statistics per sample and channel."""

    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        k = self._spatial
        if input.ndim not in (k + 1, k + 2):
            raise ValueError(f"expected {k + 1}D or {k + 2}D input (got {input.ndim}D input)")
        unbatched = input.ndim == k + 1
        fdim = 0 if unbatched else 1
        if input.shape[fdim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={fdim} to match num_features ({self.num_features}), "
                                 f"but got: {input.shape[fdim]}.")
            warnings.warn(f"input's size at dim={fdim} does not match num_features. You can silence this warning by "
                          f"not passing in num_features, which is not used because affine=False", stacklevel=2)
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or unbatched (C, L)."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or unbatched (C, H, W)."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or unbatched (C, D, H, W)."""

    _spatial = 3


class RMSNorm(Module):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"



class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W), per channel."""

    _expected_ndims = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics torch gathers over all processes of a process group. In one process (the only
    world here: ``torch.distributed`` runs worlds of size 1) that is the batch itself, so it is ``BatchNorm`` over
    (N, C, *) of any rank."""

    _expected_ndims = (2, 3, 4, 5)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with every ``BatchNorm*d`` replaced by a ``SyncBatchNorm`` holding the same parameters and
        buffers (the module itself if it is one)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, (_InstanceNorm, SyncBatchNorm)):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group)
            out.__dict__["_parameters"] = module._parameters.copy()
            out.__dict__["_buffers"] = module._buffers.copy()
            out.training = module.training
        for name, child in list(module.named_children()):
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class LocalResponseNorm(Module):
    """``F.local_response_norm``: each channel divided by a power of the squares of its ``size`` neighbours."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """The Lua-torch LRN across channels of (N, C, H, W): ``x * (k + alpha/size * sum x**2) ** -beta``, the sum over
    the channels torch's running-sum recursion picks (about ``size`` centred on each)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return _cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
