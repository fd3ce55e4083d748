"""Changing dtype or device: the ``Cast`` node, and the Tensor methods ``to``, ``float``, ``cpu``, ``cuda``..."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import dtypes, events
from ..autograd import grad_mode
from ..autograd.function import Function
from ..device import CPU, Device, get_device
from ..dtypes import DType
from ..tensor_base import TensorBase

if TYPE_CHECKING:  # (annotations only: the concrete class is built from these families)
    from ..tensor import Tensor

_grad_mode = grad_mode.state  # this thread's grad mode (per thread, as in torch)

# torch's legacy type names (``x.type()``, ``x.type('torch.LongTensor')``, ``torch.LongTensor``)
TYPE_NAMES = {dtypes.float32: "FloatTensor", dtypes.float64: "DoubleTensor", dtypes.float16: "HalfTensor",
              dtypes.bfloat16: "BFloat16Tensor", dtypes.int64: "LongTensor", dtypes.int32: "IntTensor",
              dtypes.int16: "ShortTensor", dtypes.int8: "CharTensor", dtypes.uint8: "ByteTensor",
              dtypes.bool_: "BoolTensor"}
_BY_TYPE_NAME = {name: dt for dt, name in TYPE_NAMES.items()}
_COMPLEX = "complex tensors are not supported by tinygrad_like: every tensor is real"


def type_name(dtype: DType, device_type: str = "cpu") -> str:
    """torch's legacy name of a tensor type: ``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``."""
    return f"torch.{'' if device_type == 'cpu' else device_type + '.'}{TYPE_NAMES[dtype]}"


def _parse_type_name(name: str) -> tuple[DType, str]:
    """``'torch.LongTensor'`` -> (int64, 'cpu'); ``'torch.cuda.FloatTensor'`` -> (float32, 'cuda')."""
    parts = name.split(".")
    if len(parts) in (2, 3) and parts[0] == "torch" and parts[-1] in _BY_TYPE_NAME:
        return _BY_TYPE_NAME[parts[-1]], "cpu" if len(parts) == 2 else parts[1]
    raise ValueError(f"invalid type: {name!r} (expected a legacy type name such as 'torch.LongTensor' or "
                     f"'torch.cuda.FloatTensor', or a dtype such as torch.int64)")


class Cast(Function):
    __slots__ = ("src_dtype",)

    def forward(self, x, dtype):
        self.src_dtype = x.dtype
        return x._dev.backend.cast(x._x, dtype)

    def backward(self, g):
        return g.to(self.src_dtype), None


def _rebuild_on_device(cls, host: TensorBase, device: Device, requires_grad: bool, grad) -> TensorBase:
    """The inverse of a device tensor's ``__reduce_ex__``: ``host`` copied to ``device``, as a ``cls`` (Parameter)."""
    t = host.to(device)
    t.__class__ = cls  # (subclasses such as Parameter add no slots)
    t._requires_grad = requires_grad
    t._grad = grad
    return t


class Angle(Function):
    """The argument of a real number: 0 for x >= 0, pi for x < 0, NaN for NaN; its gradient is 0 (torch's)."""

    __slots__ = ()

    def forward(self, x):
        a = np.asarray(x._host())
        a = a if x.dtype.is_floating_point else a.astype(dtypes.default_float.np)
        out = np.where(np.isnan(a), a, np.where(a < 0, np.pi, 0.0)).astype(a.dtype)
        return x._wrap(out, CPU) if x._dev is CPU else x._wrap(x._dev.backend.from_numpy(out), x._dev)

    def backward(self, g):
        return g * 0


class ConversionMixin:
    """Tensor methods that change dtype or device: ``to``, ``float``, ``cpu``, ``cuda``..."""

    __slots__ = ()

    def __reduce_ex__(self, protocol):
        """Pickling and ``copy.deepcopy``. A host tensor is saved as its slots are. A tensor in a device's own memory
        (``cuda``, ``sim``) is rebuilt on its device from a host copy of its values: a device buffer, and the arrays
        over it, cannot be pickled (torch also moves a CUDA tensor's storage through the host)."""
        if self._dev.is_host:
            return object.__reduce_ex__(self, protocol)
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment; use .detach() first (as in torch)")
        return _rebuild_on_device, (type(self), self.detach().cpu(), self._dev, self.requires_grad, self._grad)

    # ---- what a tensor tells about itself ----------------------------------------------------------
    def nelement(self) -> int:
        """The number of elements (``numel``)."""
        return self.numel()

    def ndimension(self) -> int:
        """The number of dims (``dim``)."""
        return self.ndim

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        """Always False: tinygrad_like has no complex dtypes."""
        return False

    def __format__(self, format_spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats as its Python number, any other as ``str`` (torch's rule, which a
        format spec then refuses with TypeError)."""
        from ..tensor import Tensor  # (tensor sits above the ops: a module-level import would be a cycle)
        if self.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    # ---- dtype and device conversion ---------------------------------------------------------
    # ---- complex numbers' questions, asked of a real tensor (torch's answers for real dtypes) ----------------------
    @property
    def real(self) -> Tensor:
        """A real tensor's real part: the tensor itself (assigning to it writes into the tensor, as torch's)."""
        return self

    @real.setter
    def real(self, value) -> None:
        self.copy_(value)

    @property
    def imag(self) -> Tensor:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")

    def conj(self) -> Tensor:
        """The complex conjugate: for a real tensor, the tensor itself (as torch's)."""
        return self

    def conj_physical(self) -> Tensor:
        """The conjugate, materialized: for a real tensor, the tensor itself (as torch's)."""
        return self

    def is_conj(self) -> bool:
        """False: a real tensor never carries a lazy conjugation."""
        return False

    def is_neg(self) -> bool:
        """False: a real tensor never carries a lazy negation."""
        return False

    def conj_physical_(self) -> Tensor:
        return self

    def resolve_conj(self) -> Tensor:
        return self

    def resolve_neg(self) -> Tensor:
        return self

    def angle(self) -> Tensor:
        """The argument: 0 for x >= 0 and pi for x < 0 (in the default float for integer tensors)."""
        return Angle.apply(self)

    def isreal(self) -> Tensor:
        """True everywhere: every element of a real tensor is real."""
        return self._wrap(self._dev.backend.full(self._x.shape, True, dtypes.bool_), self._dev)

    def cfloat(self) -> Tensor:
        raise NotImplementedError(f"cfloat(): {_COMPLEX}")

    def cdouble(self) -> Tensor:
        raise NotImplementedError(f"cdouble(): {_COMPLEX}")

    def chalf(self) -> Tensor:
        raise NotImplementedError(f"chalf(): {_COMPLEX}")

    def storage_type(self):
        """The legacy storage class of this tensor's dtype (``torch.FloatStorage``), a name only: see
        ``tinygrad_like.unsupported_names``."""
        from .. import unsupported_names  # (above the ops: asked only here)
        return getattr(unsupported_names, TYPE_NAMES[self.dtype].replace("Tensor", "Storage"))


    def to(self, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False) -> Tensor:
        """``.to(dtype)``, ``.to(device)``, ``.to(device, dtype)`` or ``.to(other_tensor)``.

        ``non_blocking`` is accepted as in PyTorch; every copy here completes before ``to`` returns."""
        for a in args:
            if isinstance(a, TensorBase):
                dtype, device = a.dtype, a._dev
            elif isinstance(a, DType) or a in (float, int, bool) or (isinstance(a, str) and a in dtypes._BY_NAME):
                dtype = a
            else:
                device = a
        out = self
        if device is not None:
            dev = get_device(device)
            if dev is not self._dev:
                out = ToDevice.apply(out, dev)
        if dtype is not None:
            dt = dtypes.to_dtype(dtype)
            if dt is not out.dtype:
                out = Cast.apply(out, dt)
        if copy and out is self:
            out = self.clone()
        return out

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """torch's ``Tensor.type``: without ``dtype``, the legacy type name (``'torch.FloatTensor'``); with one (a
        dtype, a name such as ``'torch.LongTensor'``, or a class such as ``torch.LongTensor``), this tensor cast to
        it (itself when it already is)."""
        if dtype is None:
            return type_name(self.dtype, self._dev.type)
        if isinstance(dtype, str):
            dt, device = _parse_type_name(dtype)
            return self.to(device=device, dtype=dt)
        if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), DType):  # (torch.LongTensor)
            return self.to(dtype.dtype)
        if not isinstance(dtype, DType):  # (torch refuses Python's float/int here, though .to() takes them)
            raise ValueError(f"invalid type: {getattr(dtype, '__name__', dtype)!r} (expected a dtype such as "
                             f"torch.int64, a name such as 'torch.LongTensor', or a class such as torch.LongTensor)")
        return self.to(dtype)

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def half(self):
        return self.to(dtypes.float16)

    def long(self):
        return self.to(dtypes.int64)

    def int(self):
        return self.to(dtypes.int32)

    def bool(self):
        return self.to(dtypes.bool_)

    def byte(self):
        return self.to(dtypes.uint8)

    def char(self):
        return self.to(dtypes.int8)

    def short(self):
        return self.to(dtypes.int16)

    def bfloat16(self):
        return self.to(dtypes.bfloat16)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False) -> Tensor:
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)


class ToDevice(Function):
    """Copy to another device; gradient copies back."""

    __slots__ = ("src",)
    returns_fresh = True

    def forward(self, x, dev):
        self.src = x._dev
        st = x._st
        kept = st is None or st.dev is None or st.host is not None  # (a host copy the storage had before)
        host = np.asarray(x._host(), order="C")  # keeps 0-d (ascontiguousarray would not)
        if dev is CPU:
            out = x._wrap(host.copy(), dev)
        else:
            t0 = events.now() if events.ACTIVE else 0.0
            out = x._wrap(dev.backend.from_numpy(host), dev)
            if events.ACTIVE:  # an upload into the new storage: a profile's memcpy lane and a memory timeline show it
                new = out._st
                events.emit(events.StorageStateChanged(new.id, new.residency, new.dirty, "h2d", new.nbytes,
                                                       events.now() - t0, events.now()))
        if not kept:  # the download was for this copy alone: the device storage keeps no second host copy
            st.drop_host()
        return out

    def backward(self, g):
        return g.to(self.src), None


def _input(input, fn: str):
    if not isinstance(input, TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def real(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "real").real


def imag(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "imag").imag


def conj(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "conj").conj()


def conj_physical(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "conj_physical").conj_physical()


def conj_physical_(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "conj_physical_").conj_physical_()


def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "resolve_conj").resolve_conj()


def resolve_neg(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "resolve_neg").resolve_neg()


def angle(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "angle").angle()


def isreal(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "isreal").isreal()


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002
    _input(input, "view_as_real")
    raise RuntimeError("view_as_real is only supported for complex tensors (tinygrad_like's tensors are all real)")


view_as_real_copy = view_as_real


def adjoint(input: Tensor) -> Tensor:  # noqa: A002
    return _input(input, "adjoint").adjoint()

__all__ = ["real", "imag", "conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg", "angle",
           "isreal", "view_as_real", "view_as_real_copy", "adjoint"]
