"""The Tensor API in method families, one mixin class each (as tinygrad's ``mixin/``).

Each family imports :class:`~tinygrad_like.tensor_base.TensorBase` and the ops it needs normally;
:class:`tinygrad_like.tensor.Tensor` combines them. A mixin keeps no state of its own (``__slots__ = ()``).
"""

from .math import MathMixin
from .reduce import ReduceMixin
