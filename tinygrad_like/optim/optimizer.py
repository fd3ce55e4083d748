"""The ``Optimizer`` base class: parameter groups, per-parameter state, ``zero_grad`` and checkpoints.

It follows ``torch.optim.Optimizer`` so PyTorch training loops run unchanged: the same constructor
(``params`` as tensors or as param-group dicts), the same attributes (``param_groups``, ``state``,
``defaults``) and the same ``state_dict()`` layout (``{"state": {index: {...}}, "param_groups":
[{..., "params": [indices]}]}``), so a checkpoint names parameters by position, not by identity.

Where this module is stricter than PyTorch, it is on purpose, to turn silent mistakes into errors:
a parameter that does not require grad, or that appears twice in one group, is refused; every
group's hyperparameters are validated, not only the constructor's; ``load_state_dict`` copies the
loaded state (PyTorch may alias it) and checks state shapes against the parameters.
"""

from __future__ import annotations

import functools
import numbers
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .. import sites
from ..autograd import grad_mode
from ..hook_handles import RemovableHandle
from ..tensor import Tensor

_PACKAGE = __name__.split(".")[0] + "."  # "tinygrad_like.": the optimizers defined inside the package

__all__ = ["Optimizer", "ParamsT", "OptimizerPreHook", "OptimizerPostHook", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook", "check_number", "check_betas", "check_impl_flags"]

#: What an optimizer accepts as ``params``: tensors, ``(name, tensor)`` pairs, or param-group dicts.
ParamsT = Iterable[Tensor] | Iterable[tuple[str, Tensor]] | Iterable[dict[str, Any]]


#: ``hook(optimizer, args, kwargs)`` run before every optimizer's step (may return ``(args, kwargs)``) and after it
OptimizerPreHook = Callable[["Optimizer", tuple, dict], tuple[tuple, dict] | None]
OptimizerPostHook = Callable[["Optimizer", tuple, dict], None]
_GLOBAL_STEP_PRE_HOOKS: OrderedDict[int, Callable] = OrderedDict()
_GLOBAL_STEP_POST_HOOKS: OrderedDict[int, Callable] = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs before the step of every optimizer; a non-None return is the new
    ``(args, kwargs)``."""
    return _add_hook(_GLOBAL_STEP_PRE_HOOKS, hook, False)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs after the step of every optimizer."""
    return _add_hook(_GLOBAL_STEP_POST_HOOKS, hook, False)


def _add_hook(hooks: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _wrap_step(step: Callable) -> Callable:
    """Run a subclass's ``step`` under ``no_grad`` and note that it ran (for the scheduler's order check).

    Installed by ``Optimizer.__init_subclass__`` so every optimizer, including user-written ones,
    updates its parameters without recording the graph, as PyTorch's optimizers do. It also names the
    optimizer in this thread's ``sites.context`` while ``step`` runs, so each in-place write records
    who made it (``Bump.optimizer``) and a stale-graph error can say "by SGD.step()".
    """
    if getattr(step, "_optimizer_step", False):
        return step

    @functools.wraps(step)
    def wrapper(*args, **kwargs):  # (args[0] is the optimizer; step hooks see and may replace all of args, as torch)
        self = args[0]
        pre = self.__dict__.get("_optimizer_step_pre_hooks")
        if pre or _GLOBAL_STEP_PRE_HOOKS:
            for hook in (*_GLOBAL_STEP_PRE_HOOKS.values(), *(pre or {}).values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), but got "
                                           f"{result}.")
                    args, kwargs = result
        self._opt_called = True
        ctx = sites.context
        outer, outer_site = ctx.optimizer, ctx.write_site
        ctx.optimizer = type(self).__name__
        sites.end_requested_lines()  # a training loop: lines a view asked for stop here (they cost a stack walk per op)
        if type(self).__module__.startswith(_PACKAGE):  # every write in our step() is the user's opt.step() line:
            ctx.write_site = sites.user_site()  # found once, not once per parameter (a user's own step keeps its lines)
        try:
            with grad_mode.no_grad():
                out = step(*args, **kwargs)
        finally:
            ctx.optimizer, ctx.write_site = outer, outer_site
        post = self.__dict__.get("_optimizer_step_post_hooks")
        if post or _GLOBAL_STEP_POST_HOOKS:
            for hook in (*_GLOBAL_STEP_POST_HOOKS.values(), *(post or {}).values()):
                hook(self, args, kwargs)
        return out

    wrapper._optimizer_step = True  # type: ignore[attr-defined]
    return wrapper


def _typename(x: Any) -> str:
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def check_number(name: str, value: Any, where: str = "") -> float:
    """``value`` as a real number, or a TypeError naming the hyperparameter (bools and tensors refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {_typename(value)}{where}"
                        + (" (tensor hyperparameters are not supported; pass a float)" if isinstance(value, Tensor)
                           else ""))
    return value


#: how torch's messages name a hyperparameter ("Invalid learning rate: -1"); the others are "<name> value"
_WORDS = {"lr": "learning rate", "eps": "epsilon value"}


def check_nonnegative(group: dict[str, Any], where: str, *names: str) -> None:
    """The named hyperparameters of ``group`` are numbers (checked first, all of them), each ``>= 0`` (NaN is not),
    or torch's error for the first that is not ("Invalid learning rate: -1")."""
    values = [check_number(name, group[name], where) for name in names]
    for name, value in zip(names, values):
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_WORDS.get(name, name + ' value')}: {value}{where}")


def check_betas(betas: Any, where: str = "") -> tuple[float, float]:
    """``(beta1, beta2)`` checked as torch does: a pair of numbers, each in ``[0, 1)``."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise TypeError(f"betas must be a pair (beta1, beta2), got {betas!r}{where}")
    for i, beta in enumerate(betas):
        if not 0.0 <= check_number(f"betas[{i}]", beta, where) < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}{where}")
    return betas[0], betas[1]


def check_impl_flags(group: dict[str, Any], where: str = "") -> None:
    """torch's implementation switches (``foreach``, ``fused``, ``capturable``, ``differentiable``).

    ``foreach``, ``fused`` and ``capturable`` choose how torch runs the same arithmetic (one kernel per
    tensor, per list, or per optimizer; CUDA-graph safe): here they are accepted and change nothing, after
    torch's own consistency checks. ``differentiable=True`` (a step recorded in the graph, for meta-learning)
    is refused: every step here runs under ``no_grad``.
    """
    fused, foreach = group.get("fused"), group.get("foreach")
    differentiable = group.get("differentiable", False)
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if differentiable:
        raise NotImplementedError(f"differentiable=True is not supported: optimizer steps run under no_grad and are "
                                  f"not recorded in the graph{where}")


def lerp_(t: Tensor, end: Tensor, weight: float) -> Tensor:
    """``t.lerp_(end, weight)`` in place with torch's rounding: ``t + w (end - t)`` for ``|w| < 0.5``, else
    ``end - (end - t)(1 - w)`` (exact at both ends)."""
    if abs(weight) < 0.5:
        return t.add_(end - t, alpha=weight)
    return t.copy_(end - (end - t) * (1 - weight))


class Optimizer:
    """Base class of all optimizers: holds ``param_groups`` and per-parameter ``state``.

    Subclasses pass their hyperparameters as ``defaults`` (filled into every group that does not set
    them), validate a group in ``_validate_group``, and implement ``step``; ``step`` runs under
    ``no_grad`` automatically.

    >>> import tinygrad_like as tl
    >>> w = tl.tensor([1.0, -2.0], requires_grad=True)
    >>> b = tl.tensor([0.5], requires_grad=True)
    >>> opt = tl.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    >>> [g["lr"] for g in opt.param_groups]
    [0.1, 0.5]
    >>> ((w * w).sum() + b.sum()).backward()
    >>> opt.step()
    >>> w, b
    (tensor([ 0.8000, -1.6000], requires_grad=True), tensor([0.], requires_grad=True))
    >>> opt.state_dict()["param_groups"][1]["params"]
    [1]
    """

    #: whether ``load_state_dict`` checks that each state tensor has its parameter's shape (not for LBFGS's flat
    #: vectors, nor Adafactor's factored row and column moments)
    _state_shaped_like_params = True
    OptimizerPreHook = OptimizerPreHook  # (torch names the hook types on the class too)
    OptimizerPostHook = OptimizerPostHook

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self._validate_group(self.defaults, "")
        if isinstance(params, Tensor):
            raise TypeError(f"params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)} (wrap a single tensor in a list: [t])")
        if isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _wrap_step(cls.__dict__["step"])  # type: ignore[method-assign]

    # ---- groups ------------------------------------------------------------------------------
    def _validate_group(self, group: dict[str, Any], where: str) -> None:
        """Raise ValueError/TypeError for bad hyperparameters in ``group`` (``where`` names the group)."""

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (e.g. unfreezing layers while fine-tuning)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_typename(param_group)}")
        if "params" not in param_group:
            raise ValueError("param_group must have a 'params' entry with the tensors to optimize")
        index = len(self.param_groups)
        where = f" (param group {index})"
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            params = [p[1] for p in params]
            group["param_names"] = names
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but param {i} of group {index} is "
                                f"{_typename(p)}")
            if not p.is_leaf:
                raise ValueError(f"can't optimize a non-leaf Tensor (param {i} of group {index}, shape "
                                 f"{tuple(p.shape)}, made by {p.grad_fn.name}); optimize the leaf it was "
                                 f"computed from, or .detach().requires_grad_() a copy")
            if not p.requires_grad:
                raise ValueError(f"optimizing a parameter that doesn't require gradients (param {i} of group "
                                 f"{index}, shape {tuple(p.shape)}); it would never change. Call "
                                 f".requires_grad_() on it, or pass only [p for p in params if p.requires_grad]")
        seen: dict[int, int] = {}
        for i, p in enumerate(params):
            if id(p) in seen:
                raise ValueError(f"optimizer got the same parameter twice in group {index} (params {seen[id(p)]} "
                                 f"and {i}, shape {tuple(p.shape)}); it would be updated twice per step")
            seen[id(p)] = i
        for g in self.param_groups:
            if ("param_names" in g) != ("param_names" in group):
                kind = "with names" if "param_names" in group else "without names"
                raise ValueError(f"all optimizer param groups should be with/without names. cannot add param "
                                 f"group {kind} to the optimizer")
            if any(id(q) in seen for q in g["params"]):
                raise ValueError("some parameters appear in more than one parameter group")
        group["params"] = params
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        self._validate_group(group, where)
        self.param_groups.append(group)

    # ---- gradients ---------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's ``.grad``: to ``None`` (default, frees memory) or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def _checked_grads(self) -> list[list[tuple[Tensor, Tensor]]]:
        """Per group, ``(param, grad)`` for the parameters that have a gradient: every one checked before
        ``step`` changes any parameter or any state, so a bad gradient leaves the model as it was.

        A gradient of the wrong shape, dtype or device (one put there by a hook, or an optimizer built over a
        model whose parameters were replaced) would otherwise broadcast or fail deep inside an update; name
        the parameter instead.
        """
        return [list(self._params_with_grad(gi)) for gi in range(len(self.param_groups))]

    def _params_with_grad(self, gi: int) -> Iterator[tuple[Tensor, Tensor]]:
        """``(param, grad)`` for group ``gi``'s parameters that have a gradient, after checking it fits."""
        for i, p in enumerate(self.param_groups[gi]["params"]):
            g = p.grad
            if g is None:
                continue
            what = f"{type(self).__name__}.step(): the gradient of param {i} in group {gi}"
            if not isinstance(g, Tensor):
                raise TypeError(f"{what} is a {_typename(g)}, not a Tensor")
            if g._x.shape != p._x.shape:
                raise RuntimeError(f"{what} has shape {tuple(g.shape)} but the parameter has shape {tuple(p.shape)}")
            if g.dtype is not p.dtype:
                raise RuntimeError(f"{what} has dtype {g.dtype.name} but the parameter has dtype {p.dtype.name}")
            if g.device != p.device:
                raise RuntimeError(f"{what} is on {g.device} but the parameter is on {p.device}")
            yield p, g

    @staticmethod
    def _run_closure(closure: Callable[[], Any] | None) -> Any:
        """Re-evaluate the loss (with grad on: ``step`` itself runs under ``no_grad``)."""
        if closure is None:
            return None
        with grad_mode.enable_grad():
            return closure()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters from their ``.grad``; returns ``closure()``'s loss if one is given."""
        raise NotImplementedError(f"{type(self).__name__}.step")

    @staticmethod
    def profile_hook_step(func: Callable) -> Callable:
        """torch's decorator of a ``step``: runs the step hooks around it (here ``step`` is wrapped so already:
        the same wrapper, under ``no_grad``)."""
        return _wrap_step(func)

    # ---- hooks -------------------------------------------------------------------------------
    def _hooks(self, name: str) -> OrderedDict:
        return self.__dict__.setdefault(name, OrderedDict())

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs before this optimizer's step; a non-None return is the new
        ``(args, kwargs)``."""
        return _add_hook(self._hooks("_optimizer_step_pre_hooks"), hook, False)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` runs after this optimizer's step."""
        return _add_hook(self._hooks("_optimizer_step_post_hooks"), hook, False)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` runs before ``state_dict()`` builds its dict."""
        return _add_hook(self._hooks("_optimizer_state_dict_pre_hooks"), hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs on the dict ``state_dict()`` built; a non-None return replaces it."""
        return _add_hook(self._hooks("_optimizer_state_dict_post_hooks"), hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer, state_dict)`` runs before ``load_state_dict``; a non-None return is loaded instead."""
        return _add_hook(self._hooks("_optimizer_load_state_dict_pre_hooks"), hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(optimizer)`` runs after ``load_state_dict``."""
        return _add_hook(self._hooks("_optimizer_load_state_dict_post_hooks"), hook, prepend)

    # ---- checkpoints -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``.

        Parameters are replaced by their position across all groups. As in PyTorch, the state's
        tensors are the optimizer's own (not copies): save or clone them before training on.
        """
        for hook in self.__dict__.get("_optimizer_state_dict_pre_hooks", {}).values():
            hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        out = {"state": state, "param_groups": groups}
        for hook in self.__dict__.get("_optimizer_state_dict_post_hooks", {}).values():
            result = hook(self, out)
            out = out if result is None else result
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict()`` returned, for an optimizer built over matching parameters.

        State tensors are copied (cast to each parameter's floating dtype and moved to its device),
        so the loaded optimizer never shares buffers with the one that saved them.
        """
        for hook in self.__dict__.get("_optimizer_load_state_dict_pre_hooks", {}).values():
            result = hook(self, state_dict)
            state_dict = state_dict if result is None else result
        with grad_mode.no_grad():
            self._load_state_dict(state_dict)
        for hook in self.__dict__.get("_optimizer_load_state_dict_post_hooks", {}).values():
            hook(self)

    def _load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("load_state_dict expects a dict with 'state' and 'param_groups', as returned by "
                             "Optimizer.state_dict()")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups "
                             f"({len(saved_groups)}, this optimizer has {len(self.param_groups)})")
        id_map: dict[Any, Tensor] = {}
        for gi, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(f"loaded state dict contains a parameter group that doesn't match the size of "
                                 f"optimizer's group (group {gi}: {len(saved['params'])} saved, "
                                 f"{len(group['params'])} here)")
            id_map.update(zip(saved["params"], group["params"]))

        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            k = int(key) if isinstance(key, str) and key.isdigit() else key  # keys that went through JSON
            p = id_map.get(k)
            if p is None:
                state[k] = _copy(value, None, None)
                continue
            for name, v in value.items():
                if (self._state_shaped_like_params and isinstance(v, Tensor) and name != "step" and v.ndim
                        and v.shape != p.shape):
                    raise ValueError(f"loaded state {name!r} of param {k} has shape {tuple(v.shape)} but the "
                                     f"parameter has shape {tuple(p.shape)}")
            state[p] = {name: _copy(v, p, name) for name, v in value.items()}

        groups = []
        for gi, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            new = {k: _copy(v, None, k) for k, v in saved.items() if k != "params"}
            new["params"] = group["params"]
            if "param_names" in group and "param_names" not in new:
                new["param_names"] = group["param_names"]
            self._validate_group(new, f" (param group {gi} of the loaded state dict)")
            groups.append(new)
        self.state = state
        self.param_groups = groups

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k not in ("params", "param_names")]
        return "\n".join(lines) + "\n)"


def _copy(value: Any, param: Tensor | None, key: str | None) -> Any:
    """A copy of a loaded state value: tensors cloned, floating ones cast to ``param``'s dtype and device."""
    if isinstance(value, Tensor):
        if key == "step" and param is not None and value.numel() == 1:
            return int(value.item())  # a step counter saved as a tensor (PyTorch's form): ours is an int
        out = value
        if param is not None:
            if key != "step" and value.dtype.is_floating_point and param.dtype.is_floating_point:
                out = out.to(param.dtype)
            out = out.to(param.device)
        return out.clone() if out is value else out
    if isinstance(value, dict):
        return {k: _copy(v, param, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v, param, None) for v in value)
    return value
