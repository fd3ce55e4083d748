"""``TensorBase``: what every tensor is (storage, layout, autograd metadata) and how a result becomes a tensor.

The Tensor API's methods live with their ops, one family per module of :mod:`tinygrad_like.ops`, combined by
:class:`tinygrad_like.tensor.Tensor`. This module imports no op, so the op modules and the autograd engine can
import it normally: ``isinstance(x, TensorBase)`` is how they recognize a tensor, and ``x._wrap(native, device)``
makes a new one (of the concrete class, which only :mod:`tinygrad_like.tensor` knows).
"""

from __future__ import annotations

import weakref
from operator import attrgetter as _attrgetter
from typing import TYPE_CHECKING

import numpy as np

from . import dtypes
from ._format import format_tensor
from .autograd import grad_mode
from .compat import Size
from .device import CPU, Device
from .dtypes import DType
from .layout import Layout, contiguous_strides, normalize_dim
from .storage import Storage

_tuple_new = tuple.__new__

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from .tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

_weakref = weakref.ref

_new = object.__new__


def _check_requires_grad(t: TensorBase, requires_grad: bool) -> None:
    """torch's rules for asking a tensor to require grad (``requires_grad_()``, the setter, the factories)."""
    if t.grad_fn is not None and not requires_grad:
        raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use "
                           "a computed variable in a subgraph that doesn't require differentiation use "
                           "var_no_grad = var.detach().")
    if requires_grad and not t.dtype.is_floating_point:
        raise RuntimeError(f"only Tensors of floating point dtype can require gradients (got {t.dtype.name})")


def _made(t: TensorBase, requires_grad: bool) -> TensorBase:
    """A tensor a factory just made, asked to require grad or not (checked as torch checks it)."""
    if requires_grad:
        _check_requires_grad(t, True)
        t._requires_grad = True
    return t


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _shape_args(size, allow_negative: bool = False, what: str = "size") -> tuple:
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` as PyTorch does. Sizes of new tensors must not be
    negative; a reshape or expand target may hold -1 (``allow_negative``), checked by the op itself."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:  # (the common case first: plain ints, no conversion)
        if type(n) is not int or n < 0:
            break
    else:
        return size if type(size) is tuple else tuple(size)
    for n in size:
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"{what} must be a sequence of ints, got {size!r}")
        if n < 0 and not allow_negative:
            raise RuntimeError(f"negative dimension {n} in size {tuple(size)}")
    return tuple(int(n) for n in size)


def _shape_args_neg(shape) -> tuple:
    """A reshape/view/expand target: as :func:`_shape_args`, -1 allowed."""
    return _shape_args(shape, allow_negative=True, what="shape")


class TensorBase:
    """An n-dimensional array with autograd: a storage, a layout over it, and the autograd metadata."""

    __slots__ = ("_st", "_lay", "_x", "_dev", "dtype", "_requires_grad", "_grad", "grad_fn", "_hooks",
                 "_base", "__weakref__")
    __array_priority__ = 1000  # numpy scalars/arrays defer to our reflected operators

    # ---- making tensors (the concrete class implements these two) ---------------------------
    @staticmethod
    def _wrap(native, dev: Device) -> TensorBase:
        """A new tensor owning ``native`` (a backend's array) on ``dev``."""
        raise NotImplementedError

    def _fresh(self) -> TensorBase:
        """An uninitialized tensor object of the concrete class (for views and detach)."""
        raise NotImplementedError

    # ---- metadata ----------------------------------------------------------------------------
    def _set_requires_grad(self, requires_grad: bool) -> None:
        if not isinstance(requires_grad, bool):  # (torch's words; 1, 1.0 and None are refused too)
            raise RuntimeError(f"requires_grad must be a bool, got {type(requires_grad).__name__}")
        if self.grad_fn is not None and requires_grad:  # (torch refuses any setting on a non-leaf, this one too)
            raise RuntimeError(f"you can only change requires_grad flags of leaf variables. This tensor is computed "
                               f"(by {self.grad_fn.name}) and requires grad already: leave the flag as it is")
        _check_requires_grad(self, requires_grad)
        self._requires_grad = bool(requires_grad)

    # Reads go straight to the slot (attrgetter is C); a user's write is checked as torch checks it. The core's own
    # writes, on tensors it has just made, set the slot ``_requires_grad`` itself (no Python call per op result).
    requires_grad = property(_attrgetter("_requires_grad"), _set_requires_grad,
                             doc="Whether autograd records operations on this tensor (floating point tensors only).")

    @property
    def _storage(self) -> Storage:
        """The storage, made on first use. A fresh op result on the host owns its array alone, so its
        :class:`Storage` (an object, an id and a registry entry: about a tenth of a small op) is only made when
        something asks: a view, an in-place write, a version check after a write, a tool listing storages. Until
        then the tensor is at version 0, which is what its storage starts at."""
        st = self._st
        if st is None:
            x = self._x
            st = self._st = Storage(self._dev, self.dtype, x.size, x, announce=False)
        return st

    @_storage.setter
    def _storage(self, st: Storage) -> None:
        self._st = st

    @property
    def _layout(self) -> Layout:
        """Shape, strides and offset in the storage. Fresh op results are contiguous from offset 0,
        so their Layout is only built when something asks (views, strides, widgets)."""
        lay = self._lay
        if lay is None:
            shape = self._x.shape
            lay = self._lay = Layout(shape, contiguous_strides(shape), 0)
        return lay

    @property
    def shape(self) -> Size:
        """The sizes as a ``tl.Size`` (torch's ``torch.Size``); the core's hot paths read ``_x.shape``, the tuple."""
        return _tuple_new(Size, self._x.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return _tuple_new(Size, self._x.shape)
        return self._x.shape[normalize_dim(dim, self.ndim)]

    @property
    def ndim(self) -> int:
        return self._x.ndim

    def dim(self) -> int:
        return self._x.ndim

    def numel(self) -> int:
        return _numel(self._x.shape)

    def stride(self, dim: int | None = None):
        st = self._layout.strides
        return st if dim is None else st[normalize_dim(dim, self.ndim)]

    def storage_offset(self) -> int:
        return self._layout.offset

    def is_contiguous(self) -> bool:
        return self._layout.is_contiguous()

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    @property
    def device(self) -> Device:
        return self._dev

    @property
    def is_cuda(self) -> bool:
        return self._dev.type == "cuda"

    @property
    def storage(self) -> Storage:
        """The :class:`Storage` shared by this tensor and all its views."""
        return self._storage

    @property
    def layout(self) -> Layout:
        return self._layout

    @property
    def _version(self) -> int:
        st = self._st
        return 0 if st is None else st.version

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def retains_grad(self) -> bool:
        node = self.grad_fn
        return bool(node is not None and node.retained and any(r() is self for r in node.retained))

    @property
    def data(self) -> Tensor:
        return self.detach()

    @data.setter
    def data(self, other: Tensor) -> None:
        self._st = other._storage  # (made now if need be: both tensors then share one storage and version counter)
        for s in ("_lay", "_x", "_dev", "dtype"):
            setattr(self, s, getattr(other, s))

    @property
    def T(self) -> Tensor:
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)

    __hash__ = object.__hash__  # identity, in C: tensors are dict keys in the backward engine

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    # ---- host access -------------------------------------------------------------------------
    def _host(self) -> np.ndarray:
        """A NumPy view of this tensor's elements on the host (downloading a device copy if needed)."""
        if self._dev.is_host:
            return self._x
        host = self._storage.host_array()
        v = CPU.backend.view(host, self._layout, self.dtype)
        v.flags.writeable = False
        return v

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The elements as NumPy; a CPU tensor shares memory (as in PyTorch). A bfloat16 tensor gives an array of
        ``ml_dtypes.bfloat16`` (where torch raises ``TypeError: Got unsupported ScalarType BFloat16``): NumPy has no
        bfloat16 of its own, and this keeps memory shared; ``.float().numpy()`` gives float32, as in torch."""
        if self.requires_grad and _grad_mode.enabled and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._host()

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar "
                               f"(shape {self.shape}); use .tolist() or index first")
        return self._host().reshape(()).item()

    def tolist(self):
        return self._host().tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous (shape "
                               f"{self.shape}); use .any() or .all()")
        return bool(self.item())

    def __array__(self, dtype=None, copy=None):
        a = self._host()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self) -> str:
        suffixes = []
        if self._dev is not CPU:
            suffixes.append(f"device='{self._dev}'")
        if self.grad_fn is not None:
            name = self.grad_fn.name  # torch's node name (name()), as the node's repr
            suffixes.append(f"grad_fn=<{name() if callable(name) else name}>")
        elif self.requires_grad:
            suffixes.append("requires_grad=True")
        return format_tensor(self._host(), self.dtype.name, suffixes, default_dtype=dtypes.default_float.name)

    def detach(self) -> Tensor:
        """Same storage and layout, cut from the graph (shares the version counter)."""
        t = self._fresh()
        t._st, t._lay, t._x, t._dev, t.dtype = self._storage, self._lay, self._x, self._dev, self.dtype
        t._requires_grad = False
        t._grad = t.grad_fn = t._hooks = None
        t._base = None  # shares storage (and version counter) but starts a history of its own
        return t

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self._requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f"{type(requires_grad).__name__}")
        _check_requires_grad(self, requires_grad)
        self._requires_grad = bool(requires_grad)
        return self

    def _view(self, layout: Layout, native=None) -> Tensor:
        """A view of this tensor's storage with ``layout``. ``native``: the backend's array for it, where the caller
        made it more cheaply from ``self._x`` (a permutation); else it is made from the storage's buffer."""
        t = self._fresh()
        st = self._storage
        t._st, t._lay, t._dev, t.dtype = st, layout, self._dev, self.dtype
        t._x = native if native is not None else self._dev.backend.view(st.host if st.dev is None else st.dev, layout,
                                                                         self.dtype)
        t._requires_grad = False
        t._grad = t.grad_fn = t._hooks = None
        t._base = base = self._base if self._base is not None else self
        # The storage remembers its views, so an in-place write to the base can give them its new history. A
        # leaf that requires grad (a parameter) never gets one (writing it with autograd is refused): skipped.
        if base.requires_grad and base.grad_fn is None:
            return t
        views = st.views
        if views is None:
            st.views = [_weakref(t)]
        else:
            views.append(_weakref(t))
            if len(views) >= 64 and not len(views) & (len(views) - 1):  # at 64, 128, 256...: drop dead ones
                st.views = [r for r in views if r() is not None]
        return t

    # ---- a new tensor like this one ------------------------------------------------------------
    def _full_like(self, value, dtype: DType | None = None) -> Tensor:
        """A new tensor of this one's shape and device, filled with ``value``."""
        return self._wrap(self._dev.backend.full(self._x.shape, value, dtype or self.dtype), self._dev)


def __getattr__(name: str):
    """Pickles of device tensors made before pickling moved to :mod:`.ops.conversion` name their rebuild function
    here: hand them the one that lives there now."""
    if name == "_rebuild_on_device":
        from .ops.conversion import _rebuild_on_device  # (the ops sit above this module: only for old pickles)
        return _rebuild_on_device
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
