"""The layers: thin ``Module`` wrappers that own parameters and call ``tl.nn.functional``.

Initialisations are PyTorch's defaults (kaiming-uniform with a = sqrt(5) for weights, a uniform
bias in +-1/sqrt(fan_in)), so a model built here trains like the same model built in torch.

>>> import tinygrad_like as tl
>>> tl.nn.Conv2d(1, 8, 3, padding=1)
Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
"""

from __future__ import annotations

import math

from ..creation import empty, ones, tensor, zeros
from ..dtypes import int64
from ..tensor import Tensor
from . import functional as F
from . import init
from .conv import Conv2d  # noqa: F401 - these layers live in nn/conv.py, nn/pooling.py and nn/sparse.py
from .module import Module, Parameter
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401
from .sparse import Embedding  # noqa: F401

__all__ = [
    "Identity", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "Flatten", "Unflatten",
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "BatchNorm1d",
    "BatchNorm2d", "LayerNorm", "Embedding", "ReLU", "LeakyReLU", "GELU", "SiLU",
    "Sigmoid", "Tanh", "Softplus", "ELU", "Softmax", "LogSoftmax",
]


def _reset_like_torch(weight: Parameter, bias: Parameter | None) -> None:
    """PyTorch's Linear/Conv default: kaiming_uniform(a=sqrt(5)) weight, U(+-1/sqrt(fan_in)) bias."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in = init._fans(weight)[0]
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


class Identity(Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ W.T + b`` with W of shape (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype, device=device))
        self.bias = Parameter(empty(out_features, dtype=dtype, device=device)) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_like_torch(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Dropout(Module):
    """Zeroes elements with probability ``p`` in training mode; the identity after ``.eval()``."""

    _fn = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zeroes whole channels of (N, C, L) or (C, L) inputs with probability ``p`` in training mode."""

    _fn = staticmethod(F.dropout1d)


class Dropout2d(Dropout):
    """Zeroes whole channels of (N, C, H, W) inputs with probability ``p`` in training mode."""

    _fn = staticmethod(F.dropout2d)


class Dropout3d(Dropout):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability ``p`` in training mode."""

    _fn = staticmethod(F.dropout3d)


class AlphaDropout(Dropout):
    """Dropout for SELU networks (keeps zero mean and unit variance), in training mode. As torch's, it computes out of
    place even with ``inplace=True`` (torch's module does not pass the flag on; ``F.alpha_dropout`` takes it)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """``AlphaDropout`` of whole channels, in training mode (out of place, as torch's, whatever ``inplace`` says)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)


class _BatchNorm(Module):
    _expected_ndims: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats, self.use_bias = affine, track_running_stats, affine and bias
        if affine:
            self.weight = Parameter(ones(num_features, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(zeros(num_features, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._expected_ndims:
            raise ValueError(f"{type(self).__name__}: expected {' or '.join(f'{d}D' for d in self._expected_ndims)} "
                             f"input, got shape {input.shape}")
        if input.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}({self.num_features}): input of shape {input.shape} has "
                             f"{input.shape[1]} channels in dim 1")
        momentum = 0.0 if self.momentum is None else self.momentum
        use_batch = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked.item())
        track = self.training and self.track_running_stats
        return F.batch_norm(input, self.running_mean if track or not self.training else None,
                            self.running_var if track or not self.training else None, self.weight, self.bias,
                            use_batch, momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.use_bias}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L)."""

    _expected_ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W), per channel."""

    _expected_ndims = (4,)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine, self.use_bias = eps, elementwise_affine, elementwise_affine and bias
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(zeros(*self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.use_bias}")



# ---- activations ---------------------------------------------------------------------------
class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return input.relu_() if self.inplace else input.relu()

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return input.gelu(self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return input.softplus(self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return input.softmax(_implicit_dim(self.dim, input))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input: Tensor) -> Tensor:
        return input.log_softmax(_implicit_dim(self.dim, input))


def _implicit_dim(dim, input) -> int:
    if dim is not None:
        return dim
    return 0 if input.ndim in (0, 1, 3) else 1  # PyTorch's legacy rule for dim=None
