"""``torch.nn.parallel``: ``DistributedDataParallel`` and ``DataParallel`` around a module, in one process.

Each wraps the module as ``.module`` (so the state dict's keys start with ``module.``, as torch's) and forwards
calls to it. With one process and one device there is nothing to replicate and no gradient to average.

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
from .module import Module

__all__ = ["DistributedDataParallel", "DataParallel"]


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
