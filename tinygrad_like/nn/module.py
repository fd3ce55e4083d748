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

import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator
from typing import TypeVar

from .. import events, sites
from ..autograd import grad_mode
from ..creation import empty
from ..device import Device
from ..tensor import Tensor, TensorBase, _new

_TDestination = TypeVar("T_destination", bound=dict)
IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


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


class RemovableHandle:
    """Returned by ``register_*_hook``: ``handle.remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_key")
    _next = 0

    def __init__(self, hooks: dict):
        self._hooks = hooks
        RemovableHandle._next += 1
        self._key = RemovableHandle._next

    def remove(self) -> None:
        self._hooks.pop(self._key, None)


class _KwargsHook:
    """A forward (pre-)hook registered with ``with_kwargs`` or ``always_call``: the flags travel with it."""

    __slots__ = ("hook", "always_call", "with_kwargs")

    def __init__(self, hook: Callable, always_call: bool) -> None:
        self.hook, self.always_call, self.with_kwargs = hook, always_call, False


def _call_with_hooks(module: Module, args: tuple, kwargs: dict):
    """``forward`` between the forward pre-hooks and hooks (kept off the plain call's path), its inputs and outputs
    wrapped for the backward hooks if there are any."""
    if module._forward_pre_hooks:
        for hook in list(module._forward_pre_hooks.values()):
            if isinstance(hook, _KwargsHook):
                r = hook.hook(module, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {r}.")
                    args, kwargs = r
                continue
            r = hook(module, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
    backward = module.__dict__.get("_backward_hooks") or module.__dict__.get("_backward_pre_hooks")
    if backward and grad_mode.is_grad_enabled():
        args, state = _BackwardHookState.wrap_inputs(module, args)
    try:
        out = module.forward(*args, **kwargs)
    except Exception:
        for hook in list(module._forward_hooks.values()):
            if isinstance(hook, _KwargsHook) and hook.always_call:
                hook.hook(module, args, kwargs, None) if hook.with_kwargs else hook.hook(module, args, None)
        raise
    if module._forward_hooks:
        for hook in list(module._forward_hooks.values()):
            if isinstance(hook, _KwargsHook):
                r = hook.hook(module, args, kwargs, out) if hook.with_kwargs else hook.hook(module, args, out)
            else:
                r = hook(module, args, out)
            if r is not None:
                out = r
    if backward and grad_mode.is_grad_enabled():
        out = state.wrap_outputs(out)
    return out


class _BackwardHookState:
    """What one call's backward hooks need: the gradients of the module's outputs, then of its inputs. Inputs and
    outputs pass through a view each (a node of their own, as torch's ``BackwardHookFunction``), whose tensor hooks
    collect the gradients; the full backward hooks run when the last input gradient arrives, or at the outputs'
    when no input needs a gradient. A hook's replacement gradient is used for the last input (or output) only."""

    def __init__(self, module: Module, n_inputs: int) -> None:
        self.module = module
        self.grad_inputs: list = [None] * n_inputs
        self.input_pending = 0
        self.grad_outputs: list = []
        self.output_pending = 0

    @classmethod
    def wrap_inputs(cls, module: Module, args: tuple):
        state = cls(module, len(args))
        wrapped = list(args)
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and a.requires_grad:
                v = a.view(a.shape)
                v.register_hook(state._input_hook(i))
                wrapped[i] = v
                state.input_pending += 1
        return tuple(wrapped), state

    def _input_hook(self, i: int):
        def hook(g):
            self.grad_inputs[i] = g
            self.input_pending -= 1
            if self.input_pending == 0:
                new = self._run_full_hooks()
                if new is not None:
                    return new[i]
            return None
        return hook

    def _run_full_hooks(self):
        grad_input, grad_output = tuple(self.grad_inputs), tuple(self.grad_outputs)
        replaced = None
        for hook in list(self.module.__dict__.get("_backward_hooks", {}).values()):
            r = hook(self.module, grad_input if replaced is None else replaced, grad_output)
            if r is not None:
                replaced = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        return replaced

    def wrap_outputs(self, out):
        single = isinstance(out, Tensor)
        outs = [out] if single else list(out) if isinstance(out, (tuple, list)) else None
        if outs is None:
            return out
        self.grad_outputs = [None] * len(outs)
        for i, o in enumerate(outs):
            if isinstance(o, Tensor) and o.requires_grad:
                v = o.view(o.shape)
                v.register_hook(self._output_hook(i))
                outs[i] = v
                self.output_pending += 1
        return outs[0] if single else type(out)(outs)

    def _output_hook(self, i: int):
        def hook(g):
            self.grad_outputs[i] = g
            self.output_pending -= 1
            if self.output_pending:
                return None
            new = None
            for pre in list(self.module.__dict__.get("_backward_pre_hooks", {}).values()):
                r = pre(self.module, tuple(self.grad_outputs))
                if r is not None:
                    new = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                    self.grad_outputs = list(new)
            if self.input_pending == 0:  # no input needs a gradient: torch calls the hooks with None for them
                self._run_full_hooks()
            return None if new is None else new[i]
        return hook


class Module:
    """Base class of every layer and network: subclass it, assign children in ``__init__``, write ``forward``."""

    training: bool

    def __init__(self) -> None:
        d = self.__dict__
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["training"] = True

    def forward(self, *input):
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required \"forward\" function")

    def __call__(self, *args, **kwargs):
        if events.ORIGINS:  # graph nodes made inside get this module in their origin's scope
            ctx = sites.context  # (per thread; a tuple, so each node keeps the snapshot it saw for free)
            outer = ctx.scope
            ctx.scope = (*outer, self)
            try:  # (inline, not a helper: every frame here is one more for sites.origin() to walk past)
                if self._forward_pre_hooks or self._forward_hooks or "_backward_hooks" in self.__dict__:
                    return _call_with_hooks(self, args, kwargs)
                return self.forward(*args, **kwargs)
            finally:
                ctx.scope = outer
        if self._forward_pre_hooks or self._forward_hooks or "_backward_hooks" in self.__dict__:
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
            self._forget(name)
            params[name] = value
        elif isinstance(value, Module):
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

    def _convert(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace every parameter and buffer by ``fn(tensor)`` (dtype or device moves), keeping grads."""
        for m in self.modules():
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

    def type(self, dst_type) -> Module:
        """Cast every parameter and buffer to ``dst_type`` (a dtype or a legacy type name)."""
        return self._convert(lambda t: t.type(dst_type))

    def to_empty(self, *, device=None, recurse: bool = True) -> Module:
        """Fresh uninitialised storage of the same shapes for every parameter and buffer (on ``device``)."""
        return self._convert(lambda t: empty(*t.shape, dtype=t.dtype, device=device or t.device))

    def share_memory(self) -> Module:
        """A no-op returning the module: worker processes here share the parent's tensors as they are."""
        return self

    def compile(self, *args, **kwargs) -> None:
        """A no-op, as ``tl.compile``: the module runs eagerly."""

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted name ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path) if mod_path else self
        if name not in mod._buffers:
            raise AttributeError(f"{mod._get_name()} has no buffer `{name}`")
        return mod._buffers[name]

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted name ``target`` (its parent must exist)."""
        if not target:
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path) if parent_path else self
        if strict and name not in parent._modules:
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if not isinstance(module, Module):
            raise TypeError(f"`module` is not an nn.Module, found {type(module)}")
        parent.add_module(name, module)

    def get_extra_state(self):
        """torch's default: a module has no extra state unless it defines this."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state) -> None:
        """torch's default: a module has no extra state to restore unless it defines this."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def xpu(self, device=None) -> Module:
        """Refused, as in a torch build without Intel GPU support (tinygrad_like has none)."""
        raise AssertionError("Torch not compiled with XPU enabled (tinygrad_like runs on the CPU, or CUDA)")

    def ipu(self, device=None) -> Module:
        """Refused, as in a torch build without Graphcore IPU support."""
        raise RuntimeError("PyTorch is not linked with support for ipu devices (tinygrad_like runs on the CPU, or "
                           "CUDA)")

    def mtia(self, device=None) -> Module:
        """Refused, as in a torch build without Meta's MTIA accelerators."""
        raise AssertionError("Torch not compiled with MTIA enabled (tinygrad_like runs on the CPU, or CUDA)")

    dump_patches = False
    call_super_init = False
    T_destination = _TDestination

    # ---- hooks --------------------------------------------------------------------------------
    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with ``with_kwargs``) runs after
        ``forward``; a non-None return replaces the output. ``always_call``: it runs even if ``forward`` raised."""
        h = RemovableHandle(self._forward_hooks)
        self._forward_hooks[h._key] = _KwargsHook(hook, always_call) if with_kwargs or always_call else hook
        if with_kwargs:
            self._forward_hooks[h._key].with_kwargs = True
        if prepend:
            self._forward_hooks.move_to_end(h._key, last=False)
        return h

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-None return replaces the args. With
        ``with_kwargs``: ``hook(module, args, kwargs)``, returning None or a new ``(args, kwargs)``."""
        h = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[h._key] = _KwargsHook(hook, False) if with_kwargs else hook
        if with_kwargs:
            self._forward_pre_hooks[h._key].with_kwargs = True
        if prepend:
            self._forward_pre_hooks.move_to_end(h._key, last=False)
        return h

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients of this module's inputs are computed; a
        non-None return (a tuple like ``grad_input``) replaces them."""
        return self._add_backward_hook("_backward_hooks", hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients of this module's outputs are computed; a non-None
        return replaces them."""
        return self._add_backward_hook("_backward_pre_hooks", hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """torch's deprecated spelling: here the full backward hook (which is what torch recommends instead)."""
        warnings.warn("register_backward_hook is deprecated; it is the full backward hook here (torch's legacy one "
                      "saw the gradients of the last operation only). Use register_full_backward_hook.",
                      FutureWarning, stacklevel=2)
        return self._add_backward_hook("_backward_hooks", hook, False)

    def _add_backward_hook(self, store: str, hook: Callable, prepend: bool) -> RemovableHandle:
        d = self.__dict__
        d.setdefault("_backward_hooks", OrderedDict())  # (its presence routes calls through _call_with_hooks)
        hooks = d.setdefault(store, OrderedDict())
        h = RemovableHandle(hooks)
        hooks[h._key] = hook
        if prepend:
            hooks.move_to_end(h._key, last=False)
        return h

    # ---- state -------------------------------------------------------------------------------
    def state_dict(self, *args, destination: dict | None = None, prefix: str = "", keep_vars: bool = False) -> dict:
        """Parameters and persistent buffers by dotted name (detached, sharing storage, as PyTorch's). The
        positional form ``state_dict(destination, prefix, keep_vars)`` is torch's deprecated one, accepted."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict "
                          "for details.", FutureWarning, stacklevel=2)
            given = dict(zip(("destination", "prefix", "keep_vars"), args))
            destination = given.get("destination", destination)
            prefix = given.get("prefix", prefix)
            keep_vars = given.get("keep_vars", keep_vars)
        out = OrderedDict() if destination is None else destination
        visited = []
        for mod_prefix, m in self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
            hooks = m.__dict__.get("_state_dict_hooks")
            if hooks:
                visited.append((mod_prefix, m))
                for hook in list(hooks["pre"].values()):
                    hook(m, f"{mod_prefix}." if mod_prefix else "", keep_vars)
            for store in (m._parameters, m._buffers):
                for name, t in store.items():
                    if t is None or (store is m._buffers and name in m._non_persistent):
                        continue
                    key = f"{mod_prefix}.{name}" if mod_prefix else name
                    out[key] = t if keep_vars else t.detach()
        for mod_prefix, m in reversed(visited):  # (inner modules' post-hooks first, as torch's recursion)
            for hook in list(m.__dict__["_state_dict_hooks"]["post"].values()):
                r = hook(m, out, f"{mod_prefix}." if mod_prefix else "", {})
                if r is not None:
                    raise RuntimeError("state_dict post-hook must return None")
        return out

    def load_state_dict(self, state_dict: dict, strict: bool = True, assign: bool = False) -> IncompatibleKeys:
        """Copy values in by name. With ``strict`` every name must match; shapes and dtypes always must.
        ``assign=True`` makes the loaded tensors the module's own (parameters wrapping them), instead of copying.

        Nothing is written unless every check passes, so a failed load leaves the module as it was.
        """
        from ..io import check_state_dict  # (io imports this module: a module-level import would be a cycle)
        if not hasattr(state_dict, "items"):
            raise TypeError(f"expected a dict of name -> Tensor, got {type(state_dict).__name__}")
        own = self.state_dict(keep_vars=True)
        pre_hooked = [(p, m) for p, m in self.named_modules() if m.__dict__.get("_load_state_dict_hooks")]
        if pre_hooked:  # (hooks may rename or convert entries: they work on a copy, as torch's)
            state_dict = OrderedDict(state_dict)
            for mod_prefix, m in pre_hooked:
                for hook in list(m.__dict__["_load_state_dict_hooks"]["pre"].values()):
                    hook(m, state_dict, f"{mod_prefix}." if mod_prefix else "", {}, strict, [], [], [])
        for k, v in state_dict.items():
            if not isinstance(v, Tensor):
                raise TypeError(f"load_state_dict: entry {k!r} is a {type(v).__name__}, expected a Tensor")
        for k, t in own.items():  # a lazy module's uninitialized tensors take the shapes of what is loaded
            if k in state_dict and getattr(type(t), "cls_to_become", None) is not None:
                t.materialize(tuple(state_dict[k].shape))
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        what = f"state_dict for {type(self).__name__}"
        if strict:
            check_state_dict(own, state_dict, what=what)
        else:  # names may differ; the entries both sides have must still agree in shape and dtype
            common = [k for k in own if k in state_dict]
            check_state_dict({k: own[k] for k in common}, {k: state_dict[k] for k in common}, what=what)
        with grad_mode.no_grad():
            for k, t in own.items():
                if k not in state_dict:
                    continue
                if assign:
                    self._assign_entry(k, t, state_dict[k])
                else:
                    t.copy_(state_dict[k])
        result = IncompatibleKeys(missing, unexpected)
        for _, m in pre_hooked:
            for hook in list(m.__dict__["_load_state_dict_hooks"]["post"].values()):
                hook(m, result)
        return result

    def _assign_entry(self, key: str, current: Tensor, value: Tensor) -> None:
        mod_path, _, name = key.rpartition(".")
        owner = self.get_submodule(mod_path) if mod_path else self
        if name in owner._parameters:
            owner._parameters[name] = Parameter(value, current.requires_grad)
        else:
            owner._buffers[name] = value

    # state-dict hooks: the pre-hooks may rewrite what is saved or loaded (old checkpoints' names, formats)
    def _state_hooks(self, store: str, kind: str) -> OrderedDict:
        hooks = self.__dict__.setdefault(store, {"pre": OrderedDict(), "post": OrderedDict()})
        return hooks[kind]

    def _add_state_hook(self, store: str, kind: str, hook: Callable) -> RemovableHandle:
        hooks = self._state_hooks(store, kind)
        h = RemovableHandle(hooks)
        hooks[h._key] = hook
        return h

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before this module's entries are collected."""
        return self._add_state_hook("_state_dict_hooks", "pre", hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` may edit the collected ``state_dict`` in place."""
        return self._add_state_hook("_state_dict_hooks", "post", hook)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        may rewrite the entries before they are checked and loaded."""
        return self._add_state_hook("_load_state_dict_hooks", "pre", hook)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after loading; it may clear the missing / unexpected lists."""
        if "_load_state_dict_hooks" not in self.__dict__:
            self._state_hooks("_load_state_dict_hooks", "pre")
        return self._add_state_hook("_load_state_dict_hooks", "post", hook)

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
