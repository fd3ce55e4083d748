"""``torch.nn.parallel``: ``DistributedDataParallel`` and ``DataParallel`` around a module, in one process, and the
functions ``DataParallel`` is made of (``scatter``, ``replicate``, ``parallel_apply``, ``gather``, ``data_parallel``).

Each wrapper holds the module as ``.module`` (so the state dict's keys start with ``module.``, as torch's) and
forwards calls to it. With one process and one device there is nothing to replicate and no gradient to average: the
functions split, run and join on the devices they are given, one after another (torch's refuse CPU tensors; these
run on whatever device a tensor is on, and move it only when asked for another).

>>> import tinygrad_like as tl
>>> net = tl.nn.parallel.DataParallel(tl.nn.Linear(2, 1))
>>> list(net.state_dict()), net(tl.ones(3, 2)).shape
(['module.weight', 'module.bias'], tl.Size([3, 1]))
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from .. import distributed
from ..ops.movement import cat
from ..tensor import Tensor
from .module import Module

__all__ = ["DistributedDataParallel", "DataParallel", "data_parallel", "scatter", "gather", "replicate",
           "parallel_apply"]


class DataParallel(Module):
    """``DataParallel(module)``: runs ``module`` on the one device there is (no split of the batch)."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """``DistributedDataParallel(module)`` in a world of one process: needs :func:`~tinygrad_like.distributed.\
init_process_group` first, as torch's; the forward is the module's, and there are no gradients to average."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None,
                 init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None,
                 device_mesh=None, skip_all_reduce_unused_params=False, bucket_cap_mb_list: list[int] | None = None,
                 batched_grad_copy=False, forward_sync_buffers: bool | None = None) -> None:
        super().__init__()
        distributed.get_world_size(process_group)  # (raises, as torch's, when there is no process group)
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Skip the gradients' all-reduce inside the block (gradient accumulation): there is none to skip."""
        previous, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


def _device_of(target: Any) -> Any:
    """A target as a device: an int is CUDA device ``i`` (as torch's), -1 the CPU, None "where it is"."""
    if target is None:
        return None
    if isinstance(target, int) and not isinstance(target, bool):
        return "cpu" if target < 0 else f"cuda:{target}"
    return target


def _move(t: Tensor, target: Any) -> Tensor:
    dev = _device_of(target)
    return t if dev is None or str(t.device) == str(dev) else t.to(dev)


def scatter(inputs, target_gpus, dim=0):
    """Split the tensors in ``inputs`` (nested in tuples, lists and dicts) into ``len(target_gpus)`` chunks along
    ``dim``, one per target; other objects are repeated. Returns one entry per target, as torch's."""
    targets = list(target_gpus)

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return tuple(_move(chunk, t) for chunk, t in zip(obj.chunk(len(targets), dim), targets))
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in targets]

    return scatter_map(inputs)


def gather(outputs: Any, target_device: Any, dim: int = 0) -> Any:
    """Join the per-device ``outputs`` (tensors, or tuples/dicts of them) along ``dim`` on ``target_device``."""
    def gather_map(outs):
        out = outs[0]
        if isinstance(out, Tensor):
            return cat([_move(o, target_device) for o in outs], dim) if out.dim() > 0 else \
                cat([_move(o, target_device).reshape(1) for o in outs], 0)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        return type(out)(map(gather_map, zip(*outs)))

    return gather_map(outputs)


def replicate(network: Module, devices: Sequence[Any], detach: bool = False) -> list[Module]:
    """One replica of ``network`` per device. Here each is ``network`` itself, on its own device (one process drives
    one device): its parameters are the replicas', so gradients reach them as through torch's broadcast copies."""
    if detach:
        raise NotImplementedError("replicate(detach=True): tinygrad_like's replicas are the module itself, which "
                                  "cannot be detached from its own parameters")
    return [network for _ in devices]


def parallel_apply(modules: Sequence[Module], inputs: Sequence[Any], kwargs_tup: Sequence[dict] | None = None,
                   devices: Sequence[Any] | None = None) -> list[Any]:
    """``[module(*input, **kwargs) for ...]``, one after another (torch runs them in threads, one per device)."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    kwargs_tup = kwargs_tup if kwargs_tup is not None else ({},) * len(modules)
    results = []
    for module, inp, kwargs in zip(modules, inputs, kwargs_tup):
        args = inp if isinstance(inp, (list, tuple)) else (inp,)
        results.append(module(*args, **kwargs))
    return results


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                  dim: int = 0, module_kwargs: Any | None = None) -> Any:
    """``DataParallel``'s forward as a function: on one device, ``module(*inputs, **module_kwargs)``; over several,
    scatter, apply and gather (one after another)."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,) if inputs is not None else ()
    if device_ids is None or len(device_ids) <= 1:
        return module(*inputs, **(module_kwargs or {}))
    scattered = scatter(inputs, device_ids, dim)
    scattered_kwargs = scatter(module_kwargs or {}, device_ids, dim) if module_kwargs else [{}] * len(scattered)
    outputs = parallel_apply(replicate(module, device_ids[:len(scattered)]), scattered, scattered_kwargs)
    return gather(outputs, device_ids[0] if output_device is None else output_device, dim)
