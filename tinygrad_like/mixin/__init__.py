"""The Tensor API in method families, one mixin class each (as tinygrad's ``mixin/``).

Each family imports :class:`~tinygrad_like.tensor_base.TensorBase` and the ops it needs normally;
:class:`tinygrad_like.tensor.Tensor` combines them. A mixin keeps no state of its own (``__slots__ = ()``).
"""

from .elementwise import ElementwiseMixin
from .indexing import IndexingMixin
from .linalg import LinalgMixin
from .movement import MovementMixin
from .shaping import ShapingMixin
from .sorting import SortingMixin

__all__ = ["ElementwiseMixin", "IndexingMixin", "LinalgMixin",
           "MovementMixin", "ShapingMixin", "SortingMixin"]
