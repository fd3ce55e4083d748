"""``torch.distributed`` for a world of one process: what a training script needs to run unchanged on one CPU.

The process groups and collectives are in :mod:`.distributed_c10d` (see there: a world of size 1, whose collectives
do what torch's gloo backend does among one process). The key-value stores are in :mod:`.store`. The subpackages that
need several processes (``fsdp``, ``rpc``, ``elastic``, ``pipelining``, ``tensor``, ``checkpoint``...) import, and
each of their names is a clear error when used (:mod:`._submodules`).

>>> import tinygrad_like.distributed as dist
>>> dist.is_available(), dist.is_initialized()
(True, False)
"""

from __future__ import annotations

from . import _submodules, constants, distributed_c10d
from .constants import default_pg_timeout
from .distributed_c10d import *  # noqa: F403 - (torch.distributed's names are distributed_c10d's)
from .distributed_c10d import __all__ as _c10d_all
from .distributed_c10d import with_parameters
from .store import HashStore, PrefixStore, Store
from ..unsupported import DISTRIBUTED, unsupported_class, unsupported_function

# (a mesh of devices to shard tensors over (DTensor): a mesh of one device shards nothing, and DTensor is not here)
DeviceMesh = unsupported_class("torch.distributed.DeviceMesh", DISTRIBUTED)
with_parameters(DeviceMesh, "device_type, mesh, *, mesh_dim_names, backend_override, _init_backend, _rank, _layout, "
                            "_rank_map, _root_mesh")
init_device_mesh = with_parameters(unsupported_function("torch.distributed.init_device_mesh", DISTRIBUTED),
                                   "device_type, mesh_shape, *, mesh_dim_names, backend_override")

for _name in _submodules.NAMES:
    globals()[_name] = _submodules.module(f"{__name__}.{_name}")

__all__ = [*_c10d_all, "Store", "HashStore", "PrefixStore", "DeviceMesh", "init_device_mesh", "constants",
           "distributed_c10d", "default_pg_timeout", *_submodules.NAMES]
