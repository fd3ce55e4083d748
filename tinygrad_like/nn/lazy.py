"""Lazy modules, as torch's: ``LazyLinear(10)`` learns its ``in_features`` from the first input it sees.

Until then its parameters are ``UninitializedParameter`` (and its running statistics ``UninitializedBuffer``): they
hold no values and cannot be used. A forward pre-hook infers the sizes at the first call, materializes them with
the layer's own initialisation, and turns the module into the ordinary class (``LazyLinear`` -> ``Linear``).
Optimizers must be built after that first call (or see the new parameters: they are the same objects).

>>> import tinygrad_like as tl
>>> m = tl.nn.LazyLinear(4)
>>> m(tl.ones(2, 3)).shape, type(m).__name__, m.weight.shape
(tl.Size([2, 4]), 'Linear', tl.Size([4, 3]))
"""

from __future__ import annotations

from ..autograd import grad_mode
from ..creation import empty, tensor
from ..dtypes import int64
from ..tensor import Tensor, TensorBase, _new
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers import BatchNorm1d, BatchNorm2d, Linear
from .module import Parameter
from .normalization import BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyModuleMixin", "LazyLinear", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class UninitializedTensorMixin:
    """What the uninitialized tensors share: ``materialize`` gives them a shape (and values), after which they are
    an ordinary Parameter / Tensor (the class changes, as torch's)."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.data = empty(*shape, device=device or self.device, dtype=dtype or self.dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    @property
    def shape(self):
        raise ValueError(f"Can't access the shape of an uninitialized parameter or buffer ({type(self).__name__}): "
                         f"run a first forward pass of its lazy module, or call materialize(shape)")


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (a lazy module's, until its first forward)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy norm layer's running statistics)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        src = empty(0, device=device, dtype=dtype)
        b = _new(cls)
        for s in TensorBase.__slots__[:-1]:
            setattr(b, s, getattr(src, s))
        b.requires_grad = requires_grad
        return b

    def __init__(self, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True) -> None:
        pass


def _is_uninitialized(t) -> bool:
    return isinstance(t, UninitializedTensorMixin)


class LazyModuleMixin:
    """Mixed in before a module class: infer the parameters' shapes at the first call (``initialize_parameters``),
    then become ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    def has_uninitialized_params(self) -> bool:
        stores = list(self._parameters.values()) + list(self._buffers.values())
        return any(_is_uninitialized(t) for t in stores)

    def initialize_parameters(self, *args, **kwargs) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    @staticmethod
    def _infer_parameters(module, args) -> None:
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module.__dict__["_initialize_hook"]
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def __repr__(self) -> str:
        if self.has_uninitialized_params():
            return f"{type(self).__name__}()"  # (the sizes are not known yet)
        return super().__repr__()


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False, device, dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args) -> None:
        if self.has_uninitialized_params():
            with grad_mode.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    def _make_lazy(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args) -> None:
        if not self.has_uninitialized_params():
            return
        nd = self._nd
        if input.ndim not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                               f"{self._get_name()}, but got input of size: {list(input.shape)}")
        self.in_channels = input.shape[0] if input.ndim == nd + 1 else input.shape[1]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with grad_mode.no_grad():
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _add_hook(self) -> None:
    """The first-call hook of ``LazyModuleMixin.__init__``, for the classes that call their base's ``__init__``
    directly (its positional order differs from the lazy class's)."""
    self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)


def _lazy_conv(base: type, transposed: bool) -> type:
    nd = base._nd

    if transposed:
        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                     bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
            base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                          padding_mode, device, dtype)
            _add_hook(self)
            self._make_lazy(out_channels, bias, device, dtype)
    else:
        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                     bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
            base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device,
                          dtype)
            _add_hook(self)
            self._make_lazy(out_channels, bias, device, dtype)

    name = f"Lazy{base.__name__}"
    doc = f"``{base.__name__}`` whose ``in_channels`` is read from its first input ({nd}-D)."
    return type(name, (_LazyConvXdMixin, base), {"__init__": __init__, "cls_to_become": base, "__doc__": doc,
                                                 "__module__": __name__, "__qualname__": name})


LazyConv1d = _lazy_conv(Conv1d, False)
LazyConv2d = _lazy_conv(Conv2d, False)
LazyConv3d = _lazy_conv(Conv3d, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, True)


class _LazyNormBase(LazyModuleMixin):
    _no_batch_dim: int | None = None

    def _make_lazy(self, affine: bool, track_running_stats: bool, bias: bool, device, dtype) -> None:
        self.affine, self.track_running_stats, self.use_bias = affine, track_running_stats, affine and bias
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            if self.track_running_stats:
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()
            if self.affine:
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def initialize_parameters(self, input: Tensor, *args) -> None:
        if not self.has_uninitialized_params():
            return
        unbatched = self._no_batch_dim is not None and input.ndim == self._no_batch_dim
        self.num_features = input.shape[0] if unbatched else input.shape[1]
        with grad_mode.no_grad():
            for t in (self._parameters.get("weight"), self._parameters.get("bias"), self._buffers.get("running_mean"),
                      self._buffers.get("running_var")):
                if t is not None and _is_uninitialized(t):
                    t.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base: type, no_batch_dim: int | None, instance: bool) -> type:
    def __init__(self, eps=1e-5, momentum=0.1, affine=not instance, track_running_stats=not instance, device=None,
                 dtype=None, *, bias=True) -> None:
        base.__init__(self, 0, eps, momentum, False, False, device, dtype)
        _add_hook(self)
        self._make_lazy(affine, track_running_stats, bias, device, dtype)

    name = f"Lazy{base.__name__}"
    doc = f"``{base.__name__}`` whose ``num_features`` is read from its first input."
    return type(name, (_LazyNormBase, base), {"__init__": __init__, "cls_to_become": base, "__doc__": doc,
                                              "_no_batch_dim": no_batch_dim, "__module__": __name__,
                                              "__qualname__": name})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, None, False)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, None, False)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, None, False)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, 2, True)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, 3, True)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, 4, True)
