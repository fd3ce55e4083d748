"""``Module`` and ``Parameter``: the containers a network is built from, as in PyTorch.

A module keeps its parameters, buffers and child modules in three ordered dicts filled by
attribute assignment, so ``self.fc = Linear(2, 3)`` registers a child and ``named_parameters()``
walks the tree with dotted names. ``state_dict`` / ``load_state_dict`` move values by those names
and check every name, shape and dtype before writing anything.

>>> import tinygrad_like as tl
>>> net = tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.ReLU(), tl.nn.Linear(8, 2))
>>> [name for name, _ in net.named_parameters()]
['0.weight', '0.bias', '2.weight', '2.bias']
>>> net(tl.zeros(5, 4)).shape
tl.Size([5, 2])
"""

from __future__ import annotations

from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator
from typing import TypeVar

from .. import events, sites
from ..autograd import grad_mode
from ..creation import empty
from ..device import Device
from ..hook_handles import RemovableHandle
from ..tensor import Tensor, TensorBase, _new
from .backward_hooks import BackwardHook

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])
_EXTRA_STATE = "_extra_state"  # the state_dict key of a module's get_extra_state(), as in torch

_Scope, _new_scope = sites.Scope, tuple.__new__  # a module call's scope while scopes are recorded


class Parameter(Tensor):
    """A tensor that a ``Module`` registers as a learnable parameter (``requires_grad=True``).

    It shares storage with the tensor it wraps, as ``torch.nn.Parameter`` does.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data): expected a Tensor, got {type(data).__name__}")
        if requires_grad and not data.dtype.is_floating_point:
            raise RuntimeError(f"Only Tensors of floating point dtype can require gradients: got {data.dtype.name}; "
                               f"use Parameter(t.float()) or requires_grad=False")
        src = data.detach()
        p = _new(cls)
        for s in TensorBase.__slots__[:-1]:
            setattr(p, s, getattr(src, s))
        p.requires_grad = bool(requires_grad)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass  # all set in __new__ (Tensor.__init__ would build a new tensor)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Buffer(Tensor):
    """A tensor that, assigned to a Module attribute, registers as a buffer (``torch.nn.Buffer``): state that is not
    learned, in ``state_dict`` unless ``persistent=False``. It shares storage with the tensor it wraps."""

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(data): expected a Tensor, got {type(data).__name__}")
        src = data.detach()
        b = _new(cls if persistent else _NonPersistentBuffer)  # (tensors have no __dict__: the flag is the class)
        for s in TensorBase.__slots__[:-1]:
            setattr(b, s, getattr(src, s))
        b.requires_grad = data.requires_grad
        return b

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True):
        pass  # all set in __new__

    @property
    def persistent(self) -> bool:
        return not isinstance(self, _NonPersistentBuffer)


class _NonPersistentBuffer(Buffer):
    """A ``Buffer(..., persistent=False)``: registered, but left out of ``state_dict``."""

    __slots__ = ()


def _call_with_hooks(module: Module, args: tuple, kwargs: dict):
    """``forward`` between the forward pre-hooks and hooks (kept off the plain call's path), as torch calls them:
    hooks registered ``with_kwargs`` also see (and may replace) the keyword arguments, and hooks registered
    ``always_call`` run even when ``forward`` raised."""
    with_kwargs = module._hooks_with_kwargs
    backward_hook = None
    if (module._backward_hooks or module._backward_pre_hooks) and grad_mode.state.enabled:
        backward_hook = BackwardHook(module, list(module._backward_hooks.values()),
                                     list(module._backward_pre_hooks.values()))
    for key, hook in list(module._forward_pre_hooks.items()):
        if key in with_kwargs:
            r = hook(module, args, kwargs)
            if r is not None:
                if not (isinstance(r, tuple) and len(r) == 2):
                    raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {r!r}")
                args, kwargs = r
        else:
            r = hook(module, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
    if backward_hook is not None:
        args = backward_hook.setup_input_hook(args)
    try:
        out = module.forward(*args, **kwargs)
    except Exception:
        for key, hook in list(module._forward_hooks.items()):
            if key in module._hooks_always_called:
                try:
                    hook(module, args, kwargs, None) if key in with_kwargs else hook(module, args, None)
                except Exception:
                    pass  # (torch swallows these too: the forward's own error is the one to see)
        raise
    for key, hook in list(module._forward_hooks.items()):
        r = hook(module, args, kwargs, out) if key in with_kwargs else hook(module, args, out)
        if r is not None:
            out = r
    if backward_hook is not None:
        out = backward_hook.setup_output_hook(out)
    return out


def _add_hook(hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class Module:
    """Base class of every layer and network: subclass it, assign children in ``__init__``, write ``forward``."""

    training: bool
    call_super_init: bool = False  # (torch's flags, for code that reads them)
    dump_patches: bool = False
    T_destination = TypeVar("T_destination", bound=dict)

    def __init__(self) -> None:
        d = self.__dict__
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()  # full backward hooks: (module, grad_input, grad_output)
        d["_backward_pre_hooks"] = OrderedDict()  # (module, grad_output)
        d["_hooks_with_kwargs"] = set()  # keys of forward (pre-)hooks that take kwargs
        d["_hooks_always_called"] = set()  # keys of forward hooks that run even when forward raises
        d["_state_dict_hooks"] = OrderedDict()  # post-hooks: (module, state_dict, prefix, local_metadata)
        d["_state_dict_pre_hooks"] = OrderedDict()  # (module, prefix, keep_vars)
        d["_load_state_dict_pre_hooks"] = OrderedDict()  # (module, state_dict, prefix, metadata, strict, ...)
        d["_load_state_dict_post_hooks"] = OrderedDict()  # (module, incompatible_keys)
        d["training"] = True

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required \"forward\" function")

    def __call__(self, *args, **kwargs):
        if events.ORIGINS:  # graph nodes made inside get this module in their origin's scope
            ctx = sites.context  # (per thread; a tuple, so each node keeps the snapshot it saw for free)
            outer = ctx.scope
            ctx.scope = scope = _new_scope(_Scope, (*outer, self))  # (one per call: see sites.Scope)
            scope.up = outer
            try:  # (inline, not a helper: every frame here is one more for sites.origin() to walk past)
                if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks:
                    return _call_with_hooks(self, args, kwargs)
                return self.forward(*args, **kwargs)
            finally:
                ctx.scope = outer
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks:
            return _call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # ---- registration by attribute -----------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(f"cannot assign {name!r} before Module.__init__() call (call super().__init__() "
                                 f"first in {type(self).__name__}.__init__)")
        params, bufs, mods = d["_parameters"], d["_buffers"], d["_modules"]
        if isinstance(value, Parameter):
            if name not in params:  # (a replaced entry keeps its place, as in torch: Sequential indexes by it)
                self._forget(name)
            params[name] = value
        elif isinstance(value, Module):
            if name not in mods:
                self._forget(name)
            mods[name] = value
        elif isinstance(value, Buffer):
            self.register_buffer(name, value, value.persistent)
        elif name in params:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as parameter {name!r} (a Parameter or None "
                                f"is expected)")
            params[name] = None
        elif name in mods:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as child module {name!r} (a Module or None "
                                f"is expected)")
            mods[name] = None
        elif name in bufs:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} as buffer {name!r} (a Tensor or None is "
                                f"expected)")
            bufs[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        d = self.__dict__
        d.pop(name, None)
        for key in ("_parameters", "_buffers", "_modules"):
            d[key].pop(name, None)
        d["_non_persistent"].discard(name)

    def __getattr__(self, name: str):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            store = d.get(key)
            if store is not None and name in store:
                return store[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if name in d[key]:
                del d[key][name]
                d["_non_persistent"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        self._check_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign {type(param).__name__} as parameter {name!r} (wrap it in "
                            f"tl.nn.Parameter)")
        self._forget(name)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that is state but not learnable (running statistics); in ``state_dict`` if persistent."""
        self._check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign {type(tensor).__name__} as buffer {name!r} (a Tensor or None is "
                            f"expected)")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        self._check_name(name, "module")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    def _check_name(self, name, kind: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot register a {kind} before Module.__init__() call")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"{kind} name must be a non-empty string without '.', got {name!r}")

    # ---- walking the tree -------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, attr: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for name, v in getattr(m, attr).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs; a parameter shared by two layers is listed once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        mod = self
        for part in target.split(".") if target else ():
            if part not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no submodule {part!r} (looking up {target!r})")
            mod = mod._modules[part]
        return mod

    def get_buffer(self, target: str) -> Tensor:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"{type(mod).__name__} has no buffer {name!r} (looking up {target!r})")
        return mod._buffers[name]

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target`` (``"encoder.layers.0"``); with ``strict`` the place must
        already hold a module."""
        if not target:
            raise ValueError("set_submodule(): cannot set the module itself (target is empty)")
        if not isinstance(module, Module):
            raise ValueError(f"set_submodule(): {type(module).__name__} is not a Module")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and name not in parent._modules:
            raise AttributeError(f"{type(parent).__name__} has no submodule {name!r} (strict=True)")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter {name!r}")
        return mod._parameters[name]

    # ---- modes and bulk changes -------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean, got {type(mode).__name__}")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad = p.grad.detach().zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and on self, e.g. for custom initialisation."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _convert(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace every parameter and buffer by ``fn(tensor)`` (dtype or device moves), keeping grads."""
        for m in self.modules() if recurse else (self,):
            for name, p in m._parameters.items():
                if p is None:
                    continue
                new = fn(p.detach())
                if new is not p.detach():
                    q = Parameter(new, p.requires_grad)
                    if p.grad is not None:
                        q.grad = fn(p.grad)
                    m._parameters[name] = q
            for name, b in m._buffers.items():
                if b is not None:
                    m._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move/cast parameters and buffers (``.to(tl.float64)``, ``.to("cuda")``); integer buffers keep
        their dtype when casting, as in PyTorch."""
        def conv(t: Tensor) -> Tensor:
            out = t.to(*args, **kwargs) if t.dtype.is_floating_point else t.to(
                device=kwargs.get("device", _device_arg(args)))
            return out
        return self._convert(conv)

    def float(self) -> Module:
        return self._convert(lambda t: t.float() if t.dtype.is_floating_point else t)

    def double(self) -> Module:
        return self._convert(lambda t: t.double() if t.dtype.is_floating_point else t)

    def half(self) -> Module:
        return self._convert(lambda t: t.half() if t.dtype.is_floating_point else t)

    def bfloat16(self) -> Module:
        return self._convert(lambda t: t.bfloat16() if t.dtype.is_floating_point else t)

    def cpu(self) -> Module:
        return self._convert(lambda t: t.cpu())

    def cuda(self, device=None) -> Module:
        return self._convert(lambda t: t.cuda(device))

    def ipu(self, device=None) -> Module:
        raise RuntimeError("Module.ipu(): tinygrad_like has no IPU device (its devices are cpu, cuda and sim)")

    def xpu(self, device=None) -> Module:
        raise RuntimeError("Module.xpu(): tinygrad_like has no XPU device (its devices are cpu, cuda and sim)")

    def mtia(self, device=None) -> Module:
        raise RuntimeError("Module.mtia(): tinygrad_like has no MTIA device (its devices are cpu, cuda and sim)")

    def type(self, dst_type) -> Module:
        """Cast every parameter and buffer to ``dst_type`` (a dtype, or a legacy name like ``torch.DoubleTensor``)."""
        return self._convert(lambda t: t.type(dst_type))

    def share_memory(self) -> Module:
        """A no-op returning self: tensors here live in one process, so there is nothing to move into shared
        memory for worker processes (torch moves storages to shared memory for torch.multiprocessing)."""
        return self

    def to_empty(self, *, device=None, recurse: bool = True) -> Module:
        """Fresh, uninitialised parameters and buffers of the same shapes on ``device`` (after a meta-device
        construction in torch; here, any module)."""
        def fresh(t: Tensor) -> Tensor:
            return empty(*t.shape, dtype=t.dtype, device=device if device is not None else t.device)
        return self._convert(fresh, recurse)

    def compile(self, *args, **kwargs) -> None:
        """Like :func:`tinygrad_like.compile`, a documented no-op: the module keeps running op by op, which is what
        the views show."""

    # ---- hooks --------------------------------------------------------------------------------
    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with ``with_kwargs``) runs after
        ``forward``; a non-None return replaces the output. ``prepend`` runs it before the hooks already there;
        ``always_call`` runs it also when ``forward`` raises (with output None)."""
        h = _add_hook(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._hooks_with_kwargs.add(h.id)
        if always_call:
            self._hooks_always_called.add(h.id)
        return h

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-None return replaces the args. With
        ``with_kwargs``, ``hook(module, args, kwargs)`` returns None or ``(args, kwargs)``."""
        h = _add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._hooks_with_kwargs.add(h.id)
        return h

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients of the module's inputs are computed
        (grad_input: one entry per positional input, None where it needs none); a non-None return replaces
        grad_input. See :mod:`tinygrad_like.nn.backward_hooks`."""
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients of the module's outputs are known, before the
        module's own backward; a non-None return replaces grad_output."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """torch's deprecated form; here the same as :meth:`register_full_backward_hook` (torch's old hook saw the
        gradients of the module's last operation only, which was rarely what anyone meant)."""
        return self.register_full_backward_hook(hook)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before this module's entries go into a ``state_dict``."""
        return _add_hook(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after this module's entries went in; it may
        change ``state_dict`` in place."""
        return _add_hook(self._state_dict_hooks, hook, False)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        runs before ``load_state_dict`` reads this module's entries; it may change ``state_dict`` in place."""
        return _add_hook(self._load_state_dict_pre_hooks, hook, False)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict``; it may edit the two key lists."""
        return _add_hook(self._load_state_dict_post_hooks, hook, False)

    # ---- state a module keeps beyond tensors -----------------------------------------------------
    def get_extra_state(self):
        """Override (with :meth:`set_extra_state`) to keep any picklable object in ``state_dict`` under the key
        ``_extra_state``; the base class has none."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called: "
                           "override get_extra_state() and set_extra_state() together")

    def set_extra_state(self, state) -> None:
        """Receives what :meth:`get_extra_state` returned, from ``load_state_dict``."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called: "
                           "override get_extra_state() and set_extra_state() together")

    def _has_extra_state(self) -> bool:
        return type(self).get_extra_state is not Module.get_extra_state

    # ---- state -------------------------------------------------------------------------------
    def state_dict(self, *args, destination: dict | None = None, prefix: str = "", keep_vars: bool = False) -> dict:
        """Parameters and persistent buffers by dotted name (detached, sharing storage, as PyTorch's), and each
        module's extra state; the state-dict hooks of each module run around its entries."""
        if args:  # (torch's old positional form, state_dict(destination, prefix, keep_vars), still accepted)
            destination, prefix, keep_vars = (*args, *(destination, prefix, keep_vars)[len(args):])[:3]
        out = OrderedDict() if destination is None else destination
        self._save_state(out, prefix, keep_vars)
        return out

    def _save_state(self, out: dict, prefix: str, keep_vars: bool) -> None:
        """This module's entries, then its children's, between its state-dict hooks (torch's order)."""
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        for store in (self._parameters, self._buffers):
            for name, t in store.items():
                if t is None or (store is self._buffers and name in self._non_persistent):
                    continue
                out[prefix + name] = t if keep_vars else t.detach()
        if self._has_extra_state():
            out[prefix + _EXTRA_STATE] = self.get_extra_state()
        for name, child in self._modules.items():
            if child is not None:
                child._save_state(out, f"{prefix}{name}.", keep_vars)
        for hook in self._state_dict_hooks.values():
            hook(self, out, prefix, {})

    def load_state_dict(self, state_dict: dict, strict: bool = True, assign: bool = False) -> IncompatibleKeys:
        """Copy values in by name. With ``strict`` every name must match; shapes and dtypes always must. With
        ``assign`` the module takes the given tensors themselves instead of copying into its own (a parameter
        keeps its ``requires_grad``).

        Nothing is written unless every check passes, so a failed load leaves the module as it was.
        """
        from ..io import check_state_dict  # (io imports this module: a module-level import would be a cycle)
        if not hasattr(state_dict, "items"):
            raise TypeError(f"expected a dict of name -> Tensor, got {type(state_dict).__name__}")
        state_dict = OrderedDict(state_dict)  # (load pre-hooks may edit it: never the caller's dict)
        missing: list[str] = []
        unexpected: list[str] = []
        for mod_prefix, m in self.named_modules(remove_duplicate=False):
            for hook in m._load_state_dict_pre_hooks.values():
                hook(m, state_dict, f"{mod_prefix}." if mod_prefix else "", {}, strict, missing, unexpected, [])
        own = self.state_dict(keep_vars=True)
        extra = {k for k in own if k.rpartition(".")[2] == _EXTRA_STATE}
        for k, v in state_dict.items():
            if not isinstance(v, Tensor) and k not in extra:
                raise TypeError(f"load_state_dict: entry {k!r} is a {type(v).__name__}, expected a Tensor")
        for k, t in own.items():  # a lazy module's uninitialized tensors take the shapes of what is loaded
            if k in state_dict and getattr(type(t), "cls_to_become", None) is not None:
                t.materialize(tuple(state_dict[k].shape))
        missing += [k for k in own if k not in state_dict]
        unexpected += [k for k in state_dict if k not in own]
        what = f"state_dict for {type(self).__name__}"
        tensors = [k for k in own if k not in extra and k in state_dict]
        if strict:
            check_state_dict({k: own[k] for k in own if k not in extra},
                             {k: v for k, v in state_dict.items() if k not in extra}, what=what)
        else:  # names may differ; the entries both sides have must still agree in shape and dtype
            check_state_dict({k: own[k] for k in tensors}, {k: state_dict[k] for k in tensors}, what=what)
        with grad_mode.no_grad():
            for k in tensors:
                if assign:
                    self._assign(k, state_dict[k])
                else:
                    own[k].copy_(state_dict[k])
        for k in extra & state_dict.keys():
            self.get_submodule(k.rpartition(".")[0]).set_extra_state(state_dict[k])
        result = IncompatibleKeys(missing, unexpected)
        for m in self.modules():
            for hook in m._load_state_dict_post_hooks.values():
                hook(m, result)
        return result

    def _assign(self, key: str, value: Tensor) -> None:
        """``load_state_dict(assign=True)``: the module holds ``value`` itself under ``key``."""
        path, _, name = key.rpartition(".")
        m = self.get_submodule(path)
        if name in m._parameters:
            old = m._parameters[name]
            m._parameters[name] = value if isinstance(value, Parameter) else Parameter(value, old.requires_grad)
        else:
            m._buffers[name] = value

    # ---- printing -----------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr line (layer sizes and options)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            body = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                return main + lines[0] + ")"
            return main + "\n  " + "\n  ".join(lines) + "\n)"
        return main + ")"


def _device_arg(args):
    for a in args:
        if isinstance(a, (str, Device)):
            return a
    return None
