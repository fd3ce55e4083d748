"""The Tensor API in method families, one mixin class each (as tinygrad's ``mixin/``).

Each family imports :class:`~tinygrad_like.tensor_base.TensorBase` and the ops it needs normally;
:class:`tinygrad_like.tensor.Tensor` combines them. A mixin keeps no state of its own (``__slots__ = ()``).
"""

from .autograd import AutogradMixin
from .conversion import ConversionMixin
from .elementwise import ElementwiseMixin
from .indexing import IndexingMixin
from .inplace import InplaceMixin
from .math import MathMixin
from .movement import MovementMixin
from .reduce import ReduceMixin
from .shaping import ShapingMixin

__all__ = ["AutogradMixin", "ConversionMixin", "ElementwiseMixin", "IndexingMixin", "InplaceMixin",
           "MathMixin", "MovementMixin", "ReduceMixin", "ShapingMixin"]
