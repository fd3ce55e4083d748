"""``tl.cuda.sparse``: the legacy sparse CUDA tensor types, as clear errors (every tensor here is dense)."""

from __future__ import annotations

from ..unsupported import SPARSE, unsupported_class

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor"]

(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor,
 ByteTensor) = (unsupported_class(f"torch.cuda.sparse.{name}", SPARSE) for name in __all__)
