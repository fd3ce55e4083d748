"""Parametrizations, as ``torch.nn.utils.parametrize``: a module's tensor (``weight``) computed on every access by a
chain of small modules from the tensors actually stored (``parametrizations.weight.original``).

``register_parametrization(m, "weight", P())`` moves ``m.weight`` to ``m.parametrizations.weight.original`` and
turns ``weight`` into a property of a new subclass of ``m``'s class (``ParametrizedLinear``), as torch does; reading
it runs ``P()(original)``, assigning it runs ``P().right_inverse`` if the parametrization has one. Gradients flow to
``original``, which is what optimizers see in ``m.parameters()``.

>>> import tinygrad_like as tl
>>> import tinygrad_like.nn.utils.parametrize as P
>>> class Symmetric(tl.nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).transpose(-1, -2)
>>> m = P.register_parametrization(tl.nn.Linear(3, 3), "weight", Symmetric())
>>> bool((m.weight == m.weight.T).all()), type(m).__name__, P.type_before_parametrizations(m).__name__
(True, 'ParametrizedLinear', 'Linear')
"""

from __future__ import annotations

import contextlib

from ...autograd import grad_mode
from ...tensor import Tensor
from ..containers import ModuleDict, ModuleList
from ..module import Module, Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized", "remove_parametrizations",
           "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, at its first access, and reused (for a
    forward pass that reads a weight many times, as an RNN does)."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module: Module, name: str, x: Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _assign_into(dest: Tensor, src: Tensor) -> None:
    """Make ``dest`` hold ``src``'s value in place (keeping the object that optimizers hold), even if the shape
    changes, as torch's ``set_``."""
    with grad_mode.no_grad():
        if dest.shape == src.shape and dest.dtype == src.dtype:
            dest.copy_(src)
        else:
            dest.data = src.detach().clone()


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor, and the tensor(s) they are computed from: ``original`` (or
    ``original0``, ``original1``, ... when the first parametrization's ``right_inverse`` returns several)."""

    def __init__(self, modules, original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with grad_mode.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, (tuple, list)):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            _assign_into(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                                     f"tuple...). Got element {i} of the sequence with type {type(originali)}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali.detach().clone(), original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError(f"Registering a parametrization may not change the dtype of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if z.shape != original_shape:
                raise ValueError(f"Registering a parametrization may not change the shape of the tensor, unless "
                                 f"`unsafe` flag is enabled.\nunparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {z.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Store into the originals the value that makes the parametrized tensor equal ``value``."""
        with grad_mode.no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _assign_into(self.original, value)
            else:
                if not isinstance(value, (list, tuple)) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}")
                for i, tensor in enumerate(value):
                    _assign_into(getattr(self, f"original{i}"), tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    """Give ``module`` a class of its own (``Parametrized<Class>``), on which the properties are defined."""
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            if key not in _cache:
                _cache[key] = parametrization()
            return _cache[key]
        return parametrization()

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` (a Module) applied to the stored tensor;
    registering a second one on the same name chains it after the first. Returns ``module``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            if x.dtype != y.dtype or x.shape != y.shape:
                raise ValueError(f"Registering a parametrization may not change the shape or dtype of the tensor, "
                                 f"unless the `unsafe` flag is enabled: {y.shape} {y.dtype} -> {x.shape} {x.dtype}")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo ``register_parametrization`` on ``tensor_name``: the tensor becomes a plain parameter (or buffer) again,
    holding the current parametrized value (``leave_parametrized``) or the stored original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with grad_mode.no_grad():
                t = getattr(module, tensor_name)
            _assign_into(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)  # (with grad: whether an original requires grad decides Parameter or not)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """``module``'s class before ``register_parametrization`` replaced it with ``Parametrized<Class>``."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register ``from_module``'s parametrizations (all, or the one of ``tensor_name``) on ``to_module`` and copy
    their stored originals over; returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    if not isinstance(from_module.parametrizations, ModuleDict):
        raise AssertionError("from_module.parametrizations must be a ModuleDict")
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    if not hasattr(names, "__iter__"):
        raise AssertionError("tensor_name must be a string or None")
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach().clone()))
        for param_func in from_module.parametrizations[name]:
            register_parametrization(to_module, name, param_func)
        src = from_module.parametrizations[name]
        dst = to_module.parametrizations[name]
        if hasattr(src, "original"):
            _assign_into(dst.original, src.original)
        else:
            for i in range(src.ntensors):
                _assign_into(getattr(dst, f"original{i}"), getattr(src, f"original{i}"))
    return to_module
