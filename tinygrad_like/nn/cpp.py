"""``torch.nn.cpp``: wrappers that make modules of torch's C++ frontend look like Python modules. tinygrad_like has
no C++ frontend, so the names exist and raise when used."""

from ..unsupported import unsupported_class

_REASON = ("it wraps a module of PyTorch's C++ frontend (libtorch); tinygrad_like's modules are all Python: use "
           "them directly")

ModuleWrapper = unsupported_class("torch.nn.cpp.ModuleWrapper", _REASON)
OrderedDictWrapper = unsupported_class("torch.nn.cpp.OrderedDictWrapper", _REASON)

__all__ = ["ModuleWrapper", "OrderedDictWrapper"]
