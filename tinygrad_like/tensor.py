"""``Tensor`` = storage + layout + autograd metadata, with a PyTorch-shaped API.

>>> import tinygrad_like as tl
>>> x = tl.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> y = (x @ x.T).relu().sum()
>>> y.backward()
>>> x.grad
tensor([[ 8., 12.],
        [ 8., 12.]])
>>> v = x.detach()[0]          # a view: same storage, same version counter
>>> v.storage is x.storage, v.stride(), x._version
(True, (1,), 0)
"""

from __future__ import annotations

import numpy as np

from . import dtypes, storage
from .autograd.tensor_methods import AutogradMixin
from .device import CPU, Device
from .ops.activation import ActivationMixin
from .ops.arithmetic import ArithmeticMixin
from .ops.bitwise import BitwiseMixin
from .ops.comparison import ComparisonMixin
from .ops.conversion import ConversionMixin
from .ops.decompositions import DecompositionsMixin
from .ops.division import DivisionMixin
from .ops.elementwise import ElementwiseMixin
from .ops.factories import FactoryMixin
from .ops.indexing import IndexingMixin
from .ops.inplace import InplaceMixin
from .ops.linalg import LinalgMixin
from .ops.movement import MovementMixin
from .ops.products import ProductsMixin
from .ops.properties import PropertiesMixin
from .ops.reduce import ReduceMixin, ReturnTypes
from .ops.rounding import RoundingMixin
from .ops.sampling import SamplingMixin
from .ops.scans import ScansMixin
from .ops.scatter import ScatterMixin
from .ops.shaping import ShapingMixin
from .ops.solvers import SolversMixin
from .ops.sorting import SortingMixin
from .ops.statistics import StatisticsMixin
from .ops.transcendental import TranscendentalMixin
from .storage import Storage
from .tensor_base import TensorBase, _new, _numel, _shape_args

_BY_NP = dtypes._BY_NP

__all__ = ["Tensor", "TensorBase", "ReturnTypes", "wrap_native", "_new", "_numel", "_shape_args"]


def wrap_native(r, dev: Device) -> Tensor:
    """A new tensor owning the native result ``r`` of a primitive (the hot path of every op)."""
    if dev is CPU:
        if type(r) is not np.ndarray:
            r = np.asarray(r)
        elif not r.flags.c_contiguous:
            r = np.ascontiguousarray(r)
        dt = _BY_NP.get(r.dtype)
        if dt is None:
            dt = dtypes.from_numpy(r.dtype)
        t = _new(Tensor)
        # the storage is made on first use (TensorBase._storage), unless a tool already watches storages
        t._st = Storage(dev, dt, r.size, r) if storage.eager[0] else None
        t._lay = None  # contiguous from offset 0: built on first use (see Tensor._layout)
        t._x = r
    else:
        buf, r = dev.backend.adopt(r)
        dt = dtypes.from_numpy(r.dtype)
        t = _new(Tensor)
        t._st = Storage(dev, dt, _numel(r.shape), None, buf)
        t._lay = None
        t._x = r
    t._dev = dev
    t.dtype = dt
    t._requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._hooks = None
    t._base = None
    return t


class Tensor(AutogradMixin, ConversionMixin, FactoryMixin, ElementwiseMixin, ComparisonMixin, ActivationMixin,
             IndexingMixin, InplaceMixin, MovementMixin, ReduceMixin, RoundingMixin, TranscendentalMixin,
             DivisionMixin, ArithmeticMixin, BitwiseMixin, SortingMixin, ScansMixin, StatisticsMixin, SamplingMixin,
             ProductsMixin, LinalgMixin, SolversMixin, DecompositionsMixin, ShapingMixin, ScatterMixin, PropertiesMixin,
             TensorBase):
    """An n-dimensional array with autograd. Create one with ``tl.tensor``, ``tl.zeros``, ...

    What a tensor *is* lives in :class:`~tinygrad_like.tensor_base.TensorBase`; its methods, by family, in
    the modules of :mod:`tinygrad_like.ops`."""

    __slots__ = ()
    __hash__ = object.__hash__  # identity, in C: tensors are dict keys in the backward engine (__eq__ is elementwise)

    def __init__(self, data, dtype=None, device=None, requires_grad: bool = False):
        from .creation import tensor  # (creation is a higher layer: a module-level import would be a cycle)
        t = tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        for s in TensorBase.__slots__[:-1]:  # (copies the storage slot as it is: made or not yet)
            setattr(self, s, getattr(t, s))

    _wrap = staticmethod(wrap_native)

    def _fresh(self) -> Tensor:
        return _new(Tensor)
