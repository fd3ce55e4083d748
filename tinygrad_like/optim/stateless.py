"""``swap_in_optimizer_params_and_state``: run an optimizer, for a while, on other parameters and another state.

torch 2.13 added it (``torch.optim._stateless``) so a step can be traced on stand-in tensors without touching the
live optimizer; here it is the same context manager: inside it the optimizer's groups hold the supplied
parameters and hyperparameters and its state is the supplied ``state_dict()``-shaped state; on exit both are
restored. In-place edits of the supplied state's tensors stay in the caller's dict.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _prepare(optimizer: Optimizer, swapin_parameters: dict[str, Tensor],
             swapin_optim_state: dict[str, Any]) -> tuple[dict[Any, Any], list[tuple[dict, dict, list[Tensor]]]]:
    """Check the supplied state against the live optimizer (torch's checks and messages) and pair it up."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = swapin_optim_state.get("state")
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids "
                           f"to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
                           f"dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    flat = list(swapin_parameters.values())
    offset, seen, infos = 0, set(), []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups, strict=True)):
        if not isinstance(swapin_group, dict):
            raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
        ids = swapin_group.get("params")
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries "
                               f"keyed by packed parameter ids.")
        if len(group["params"]) != len(ids):
            raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the "
                               f"live optimizer param group.")
        swapin_only = [k for k in swapin_group if k not in group]
        live_only = [k for k in group if k not in swapin_group]
        if swapin_only or live_only:
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match "
                               f"the live optimizer group keys for group {idx}. Keys only in swap-in: "
                               f"{swapin_only}. Keys only in live: {live_only}.")
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               f"ordering.")
        infos.append((group, swapin_group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Inside the ``with``, ``optimizer`` steps ``swapin_parameters`` (in its groups' order) with
    ``swapin_optim_state`` (an ``optimizer.state_dict()``-shaped dict); on exit the live ones come back."""
    state, infos = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict[Tensor, Any] = defaultdict(dict)
        for live, swapin_group, params in infos:
            live["params"] = params
            for key, value in swapin_group.items():
                if key != "params":
                    live[key] = value
            for p, pid in zip(params, swapin_group["params"], strict=True):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
