"""``torch.nn.parameter``: the tensor kinds a Module registers (``Parameter``, ``Buffer``) and the uninitialized
ones of lazy modules."""

from .lazy import UninitializedBuffer, UninitializedParameter, UninitializedTensorMixin
from .module import Buffer, Parameter

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "UninitializedTensorMixin",
           "is_lazy"]


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer (of a lazy module before its first call)."""
    return isinstance(param, UninitializedTensorMixin)
