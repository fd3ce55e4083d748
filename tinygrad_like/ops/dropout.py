"""Dropout as functions: ``dropout`` (one fused :class:`Dropout` node whose mask comes from the seedable generator),
the channel-wise ``dropout1d`` / ``2d`` / ``3d``, and the SELU networks' ``alpha_dropout`` / ``feature_alpha_dropout``.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.functional as F
>>> F.dropout(tl.ones(2, 3), 0.5, training=False)
tensor([[1., 1., 1.],
        [1., 1., 1.]])
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

from ..autograd import grad_mode
from ..autograd.function import Function
from ._nn_args import _check_tensor, _write

if TYPE_CHECKING:  # (annotations only: the concrete class sits above the ops)
    from ..tensor import Tensor

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]


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


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False, *,
            generator=None) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p); identity when not training.

    The mask comes from the seedable generator, so ``tl.manual_seed`` (and gradient checkpointing,
    which restores the generator's state) reproduces it exactly.
    """
    _check_dropout(input, p, "dropout")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _write(input, "dropout_", _times_zero) if inplace else _times_zero(input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"dropout: expected a floating point input, got {input.dtype.name}")
    from ..random import default_generator  # (random sits above the ops in the layers)
    gen = generator or default_generator
    if inplace:
        return _write(input, "dropout_", lambda x: Dropout.apply(x, float(p), gen))
    return Dropout.apply(input, float(p), gen)


def _check_dropout(input, p: float, fn: str) -> None:
    _check_tensor(input, fn)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _times_zero(x: Tensor) -> Tensor:
    """``p == 1``: everything dropped, as torch computes it (a product, so NaN and inf give NaN; dtype kept)."""
    return x * 0


_ALPHA_DROPOUT = 1.7580993408473766  # -SELU's negative saturation, scale * alpha: what a dropped unit is set to


def _dropout_impl(input: Tensor, p: float, training: bool, inplace: bool, fn: str, *, feature: bool,
                  alpha: bool, batched: bool = True) -> Tensor:
    """torch's ``_dropout_impl``: one keep/drop draw per element, or per channel (``feature``: a (N, C, 1, ...)
    mask; ``batched=False``: a (C, 1, ...) one). Kept values are scaled by 1/(1-p); with ``alpha`` the result is
    ``a * (x * keep + s * (keep - 1)) + a * s * p`` (``s`` = SELU's saturation, ``a`` chosen so that a SELU
    network keeps zero mean and unit variance)."""
    _check_dropout(input, p, fn)
    if p == 0.0 or not training or input.numel() == 0:
        return input
    if p == 1.0:
        return _write(input, fn + "_", _times_zero) if inplace else _times_zero(input)
    if feature and input.ndim < 2:
        raise RuntimeError(f"{fn}: feature dropout requires at least 2 dimensions in the input (N, C, ...), got "
                           f"shape {input.shape}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: expected a floating point input, got {input.dtype.name}")
    shape = input.shape if not feature else (input.shape[:2] if batched else input.shape[:1])
    shape = tuple(shape) + (1,) * (input.ndim - len(shape))
    with grad_mode.no_grad():
        keep = input.new_empty(shape).bernoulli_(1 - p)
        if alpha:
            a = 1.0 / math.sqrt((_ALPHA_DROPOUT * _ALPHA_DROPOUT * p + 1) * (1 - p))
            shift = (keep - 1) * (_ALPHA_DROPOUT * a) + _ALPHA_DROPOUT * a * p
            scale = keep * a
        else:
            scale = keep / (1 - p)
    if not alpha:
        return _write(input, fn + "_", lambda x: x * scale) if inplace else input * scale
    if inplace:  # (two writes, as torch's input.mul_(noise).add_(b))
        return input.mul_(scale).add_(shift)
    return input * scale + shift


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input with probability ``p``; the rest scaled by 1/(1-p)."""
    _check_dropout(input, p, "dropout1d")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           f"dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           f"channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _dropout_impl(input, p, training, inplace, "dropout1d", feature=True, alpha=False,
                         batched=input.ndim == 3)


def _warn_unusual_rank(input: Tensor, spatial: int) -> None:
    """torch's deprecation warning for a ``dropout{spatial}d`` input that is neither batched nor unbatched."""
    fn, ranks = f"dropout{spatial}d", (spatial + 1, spatial + 2)
    if input.ndim not in ranks:
        warnings.warn(f"{fn}: Received a {input.ndim}-D input to {fn}, which is deprecated and will result in an "
                      f"error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that {fn} exists to provide channel-wise dropout on inputs with "
                      f"{spatial} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{ranks[0]}D or {ranks[1]}D inputs).", UserWarning, stacklevel=3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, H, W) input with probability ``p``; the rest scaled by 1/(1-p). A 3-D
    input is taken as (N, C, L), with torch's warning."""
    _check_dropout(input, p, "dropout2d")
    _warn_unusual_rank(input, 2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", UserWarning, stacklevel=2)
    return _dropout_impl(input, p, training, inplace, "dropout2d", feature=True, alpha=False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability ``p``; the rest scaled by
    1/(1-p)."""
    _check_dropout(input, p, "dropout3d")
    _warn_unusual_rank(input, 3)
    return _dropout_impl(input, p, training, inplace, "dropout3d", feature=True, alpha=False,
                         batched=input.ndim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped units take SELU's saturation value and the result is rescaled so that
    the mean and variance stay what they were (Klambauer et al.)."""
    return _dropout_impl(input, p, training, inplace, "alpha_dropout", feature=False, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels (dim 1 of an (N, C, ...) input)."""
    return _dropout_impl(input, p, training, inplace, "feature_alpha_dropout", feature=True, alpha=True)
