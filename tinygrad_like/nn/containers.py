"""Containers: ``Sequential`` chains modules, ``ModuleList`` / ``ModuleDict`` hold them for your own forward.

>>> import tinygrad_like as tl
>>> blocks = tl.nn.ModuleList([tl.nn.Linear(2, 2) for _ in range(3)])
>>> len(blocks), len(list(blocks.parameters()))
(3, 6)
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from ..tensor import Tensor
from .module import Module, Parameter


class Container(Module):
    """torch's deprecated holder of named submodules (``Container(a=..., b=...)``): a Module with those children."""

    def __init__(self, **kwargs) -> None:
        super().__init__()
        warnings.warn("nn.Container is deprecated. All of it's functionality is now implemented in nn.Module. "
                      "Subclass that instead.", stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Calls its children in order, each on the previous one's output."""

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def _index(self, idx: int) -> int:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for {type(self).__name__} of length {n}")
        return idx % n

    def __getitem__(self, idx):
        mods = list(self._modules.items())
        if isinstance(idx, slice):
            return type(self)(OrderedDict(mods[idx]))
        return mods[self._index(idx)][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[self._index(idx)]
        self.add_module(key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        for k in (keys[idx] if isinstance(idx, slice) else [keys[self._index(idx)]]):
            del self._modules[k]
        self._renumber()

    def _renumber(self) -> None:
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules whose parameters the parent sees (a plain list would hide them)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, idx: int) -> int:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for ModuleList of length {n}")
        return idx % n

    def __getitem__(self, idx):
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return ModuleList(mods[idx])
        return mods[self._index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(self._index(idx)), module)

    def __delitem__(self, idx) -> None:
        mods = list(self._modules.values())
        del mods[idx if isinstance(idx, slice) else self._index(idx)]
        self._modules.clear()
        self.extend(mods)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        self.extend(mods)

    def __repr__(self) -> str:
        """Runs of identical children print once, as ``(0-5): 6 x Block(...)``, as in torch."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs = [[0, 0, reprs[0]]]
        for i, r in enumerate(reprs[1:], 1):
            if r == runs[-1][2]:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for start, end, r in runs:
            head = f"({start}): " if start == end else f"({start}-{end}): {end - start + 1} x "
            lines.append((head + r).replace("\n", "\n  "))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList has no forward: iterate over it in your own module's forward")


class ModuleDict(Module):
    """A dict of modules by name, registered as children."""

    def __init__(self, modules: dict | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def update(self, modules) -> None:
        for k, m in (modules.items() if hasattr(modules, "items") else modules):
            self[k] = m

    def pop(self, key: str) -> Module:
        m = self[key]
        del self[key]
        return m

    def clear(self) -> None:
        self._modules.clear()

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict has no forward: index it in your own module's forward")


def _as_parameter(value):
    """A plain tensor put in a parameter container becomes a Parameter, as in torch."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _param_line(key, p) -> str:
    if isinstance(p, Tensor):
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        size = "x".join(str(s) for s in p.shape)
        dev = f" ({p.device})" if p.device.type != "cpu" else ""
        return f"  ({key}): {kind} containing: [{p.dtype} of size {size}{dev}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of parameters registered on the module (a plain list would hide them from ``parameters()``)."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        self.__dict__["_size"] = 0
        if values is not None:
            self += values

    def _index(self, idx: int) -> int:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(self._index(idx)))

    def __setitem__(self, idx: int, param) -> None:
        self._set(str(self._index(idx)), param)

    def _set(self, name: str, value) -> None:
        value = _as_parameter(value)
        if isinstance(value, Tensor):
            self.register_parameter(name, value)
        else:
            self._forget(name)
            object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters) -> ParameterList:
        return self.extend(parameters)

    def append(self, value) -> ParameterList:
        n = len(self)
        self.__dict__["_size"] = n + 1
        self._set(str(n), value)
        return self

    def extend(self, values) -> ParameterList:
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for v in values:
            self.append(v)
        return self

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def extra_repr(self) -> str:
        return "\n".join(_param_line(i, p) for i, p in enumerate(self))

    def __repr__(self) -> str:
        body = self.extra_repr()
        return f"{type(self).__name__}(\n  " + body.replace("\n", "\n  ") + "\n)" if body else \
            f"{type(self).__name__}()"

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterList has no forward: use its parameters in your own module's forward")


class ParameterDict(Module):
    """A dict of parameters by name, registered on the module (ordered by insertion)."""

    def __init__(self, parameters=None) -> None:
        super().__init__()
        self.__dict__["_keys"] = {}
        if parameters is not None:
            self.update(parameters)

    def _set(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        value = _as_parameter(value)
        self._keys[key] = None
        if isinstance(value, Tensor):
            self.register_parameter(key, value)
        else:
            self._forget(key)
            object.__setattr__(self, key, value)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value) -> None:
        self._set(key, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        self._forget(key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default=None):
        return self[key] if key in self else default

    def pop(self, key: str):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        k = next(reversed(self._keys))
        return k, self.pop(k)

    def setdefault(self, key: str, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def fromkeys(self, keys, default=None) -> ParameterDict:
        return ParameterDict((k, default) for k in keys)

    def update(self, parameters) -> None:
        if isinstance(parameters, (OrderedDict, ParameterDict)) or (isinstance(parameters, dict)):
            items = parameters.items()
        elif hasattr(parameters, "__iter__") and not isinstance(parameters, (str, bytes)):
            items = []
            for j, kv in enumerate(parameters):
                if not hasattr(kv, "__len__") or len(kv) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(kv) if hasattr(kv, '__len__') else '?'}; 2 is required")
                items.append(kv)
        else:
            raise TypeError(f"ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            f"{type(parameters).__name__}")
        for k, v in items:
            self[k] = v

    def __or__(self, other) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p) for k, p in self.items())

    def __repr__(self) -> str:
        body = self.extra_repr()
        return f"{type(self).__name__}(\n  " + body.replace("\n", "\n  ") + "\n)" if body else \
            f"{type(self).__name__}()"

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ParameterDict has no forward: use its parameters in your own module's forward")
