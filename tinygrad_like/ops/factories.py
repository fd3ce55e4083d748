"""Tensor methods that make a new tensor like an existing one: on its device, by default of its dtype
(``new_zeros``, ``new_ones``, ``new_full``, ``new_empty``, ``new_tensor``), as torch's ``Tensor.new_*``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes
from ..tensor_base import TensorBase, _made, _shape_args

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor


class FactoryMixin:
    """Tensor methods that make a new tensor on this one's device."""

    __slots__ = ()

    def _from_value(self, value) -> Tensor:
        """``value`` (a number or array) as a tensor on this one's device; numbers take this one's dtype."""
        from ..creation import tensor  # (creation sits above the ops: a module-level import would be a cycle)
        dt = self.dtype if isinstance(value, (int, float)) or (
            isinstance(value, np.ndarray) and self.dtype.is_floating_point) else None
        return tensor(value, dtype=dt, device=self._dev)

    def new_zeros(self, *size, dtype=None, requires_grad: bool = False) -> Tensor:
        dt = dtypes.to_dtype(dtype) if dtype is not None else self.dtype
        return _made(self._wrap(self._dev.backend.full(_shape_args(size), 0, dt), self._dev), requires_grad)

    def new_ones(self, *size, dtype=None, requires_grad: bool = False) -> Tensor:
        dt = dtypes.to_dtype(dtype) if dtype is not None else self.dtype
        return _made(self._wrap(self._dev.backend.full(_shape_args(size), 1, dt), self._dev), requires_grad)

    def new_full(self, size, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
        dt = dtypes.to_dtype(dtype) if dtype is not None else self.dtype
        return _made(self._wrap(self._dev.backend.full(_shape_args((size,)), dtypes.fill_value(fill_value, dt), dt),
                                self._dev), requires_grad)

    def new_tensor(self, data, dtype=None, requires_grad: bool = False) -> Tensor:
        from ..creation import tensor  # (creation sits above the ops: a module-level import would be a cycle)
        return tensor(data, dtype=dtype or self.dtype, device=self._dev, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        """A new tensor of ``size`` with this one's dtype and device unless given. Zero-filled here (torch leaves it
        uninitialized), so that results never depend on stale memory."""
        from ..creation import empty  # (creation sits above the ops: a module-level import would be a cycle)
        return empty(*size, dtype=self.dtype if dtype is None else dtype,
                     device=self._dev if device is None else device, requires_grad=requires_grad)

    def new_empty_strided(self, size, stride, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        """A new (zero-filled) tensor of ``size`` with the given strides, over a storage just large enough."""
        # (creation_extra sits above the ops: a module-level import would be a cycle)
        from ..creation_extra import empty_strided
        return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                             device=self._dev if device is None else device, requires_grad=requires_grad)

    def new(self, *args, **kwargs) -> Tensor:
        """The legacy constructor of this tensor's type: ``x.new(2, 3)`` (uninitialized: zeros here), ``x.new(data)``
        (a sequence), ``x.new(tensor)`` (the same data), or ``x.new()`` (empty)."""
        from ..creation import empty  # (creation sits above the ops: a module-level import would be a cycle)
        device = kwargs.pop("device", None) or self._dev
        if kwargs:
            raise TypeError(f"new() got unexpected keyword arguments {sorted(kwargs)}")
        if not args:
            return empty(0, dtype=self.dtype, device=device)
        if len(args) == 1 and isinstance(args[0], TensorBase):
            src = args[0]
            if src.dtype is not self.dtype:
                raise TypeError(f"expected {self.dtype.name} (got {src.dtype.name})")
            return src.detach()
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args) or (
                len(args) == 1 and type(args[0]).__name__ == "Size"):
            return empty(*args, dtype=self.dtype, device=device)
        if len(args) == 1:
            return self.new_tensor(args[0])
        raise TypeError(f"new(): expected sizes (ints), a sequence of data or a tensor, got {args!r}")
