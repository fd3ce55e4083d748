"""``torch.distributed`` for a world of one process: what a training script needs to run unchanged on one CPU.

``init_process_group`` reads the rank and world size as torch does (its arguments, or the ``RANK``, ``WORLD_SIZE``,
``MASTER_ADDR`` and ``MASTER_PORT`` environment variables that ``torchrun`` sets for the default ``env://``) and
accepts a world of size 1; a larger world is refused, since tinygrad_like runs in one process. The collectives
(``all_reduce``, ``broadcast``, ``all_gather`` ...) are then what they are among one process: the tensor as it is.
Any backend name torch knows is accepted (``"gloo"``, ``"nccl"``...): one process needs no transport.

>>> import tinygrad_like.distributed as dist
>>> dist.is_available(), dist.is_initialized()
(True, False)
"""

from __future__ import annotations

import enum
import os
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlparse

from .tensor import Tensor

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "get_backend", "barrier", "all_reduce", "reduce", "broadcast", "all_gather",
           "all_gather_object", "broadcast_object_list", "gather", "scatter", "ReduceOp", "Work",
           "is_gloo_available", "is_nccl_available", "is_mpi_available", "is_torchelastic_launched"]

_BACKENDS = ("gloo", "nccl", "mpi", "ucc", "xccl", "fake")
_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."
_group: dict[str, Any] | None = None  # the default process group: {"backend", "rank", "world_size"}, once made


class ReduceOp(enum.Enum):
    """The reductions a collective can apply (in a world of one, each leaves the tensor as it is)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class Work:
    """What a collective called with ``async_op=True`` returns: already complete."""

    def wait(self, timeout: timedelta | None = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True


def is_available() -> bool:
    """True, as torch's CPU build says: the package is there (for a world of one process)."""
    return True


def is_gloo_available() -> bool:
    return True


def is_nccl_available() -> bool:
    """False, as torch's CPU build says (``init_process_group("nccl")`` is accepted all the same: see the module)."""
    return False


def is_mpi_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    """True when run by ``torchrun`` (which sets ``TORCHELASTIC_RUN_ID``), as torch decides it."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has run (and :func:`destroy_process_group` has not since)."""
    return _group is not None


def _from_env(name: str) -> int | str:
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment variable {name} "
                         f"expected, but not set")
    return int(value) if name in ("RANK", "WORLD_SIZE") else value


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout: timedelta | None = None,
                       world_size: int = -1, rank: int = -1, store: Any | None = None, group_name: str = "",
                       pg_options: Any | None = None, device_id: Any | None = None, _ranks: list[int] | None = None
                       ) -> None:
    """Make the default process group of a world of one process (rank 0, world size 1); see the module."""
    global _group
    if _group is not None:
        raise ValueError("trying to initialize the default process group twice!")
    for part in (backend or "gloo").lower().split(","):  # ("gloo", "nccl", or "cpu:gloo,cuda:nccl")
        name = part.rpartition(":")[2]
        if name not in _BACKENDS:
            raise AssertionError(f"Unknown backend type {part!r}: expected one of {list(_BACKENDS)}")  # (torch's type)
    if store is None:
        method = init_method or "env://"
        query = {k: v[-1] for k, v in parse_qs(urlparse(method).query).items()}
        if rank == -1:
            rank = int(query["rank"]) if "rank" in query else _from_env("RANK") if method.startswith("env://") else -1
        if world_size == -1:
            world_size = (int(query["world_size"]) if "world_size" in query
                          else _from_env("WORLD_SIZE") if method.startswith("env://") else -1)
        if method.startswith("env://"):
            _from_env("MASTER_ADDR")
            _from_env("MASTER_PORT")
    if world_size == -1 or rank == -1:
        raise ValueError(f"init_process_group(init_method={init_method!r}) needs world_size and rank (give them as "
                         f"arguments, or use the default env:// with RANK and WORLD_SIZE set)")
    if world_size != 1:
        raise RuntimeError(f"init_process_group(world_size={world_size}): tinygrad_like runs in one process, so "
                           f"only a world of size 1 is supported. Run the program as one process (no torchrun, or "
                           f"torchrun --nproc_per_node=1), with WORLD_SIZE=1 and RANK=0.")
    if rank != 0:
        raise ValueError(f"init_process_group(rank={rank}): in a world of size 1 the only rank is 0")
    _group = {"backend": (backend or "gloo").lower(), "rank": 0, "world_size": 1}


def _default_group() -> dict[str, Any]:
    if _group is None:
        raise ValueError(_NOT_INITIALIZED)
    return _group


def destroy_process_group(group: Any | None = None) -> None:
    """Undo :func:`init_process_group`."""
    global _group
    if _group is None:
        raise AssertionError("Process group cannot be None: destroy_process_group() was called before "
                             "init_process_group() (or twice)")
    _group = None


def get_rank(group: Any | None = None) -> int:
    return _default_group()["rank"]


def get_world_size(group: Any | None = None) -> int:
    return _default_group()["world_size"]


def get_backend(group: Any | None = None) -> str:
    return _default_group()["backend"]


def _done(async_op: bool) -> Work | None:
    return Work() if async_op else None


def _check_tensor(fn: str, tensor: Any) -> None:
    _default_group()
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}() expects a tensor, got {type(tensor).__name__}")


def barrier(group: Any | None = None, async_op: bool = False, device_ids=None, timeout: timedelta | None = None):
    """Wait for every process: there is only this one."""
    _default_group()
    return _done(async_op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` across the world, in place: among one process it keeps its values, whatever ``op``."""
    _check_tensor("all_reduce", tensor)
    return _done(async_op)


def reduce(tensor: Tensor, dst: int | None = None, op=ReduceOp.SUM, group: Any | None = None, async_op: bool = False,
           group_dst: int | None = None):
    _check_tensor("reduce", tensor)
    return _done(async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: Any | None = None, async_op: bool = False,
              group_src: int | None = None):
    _check_tensor("broadcast", tensor)
    return _done(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fill ``tensor_list`` (one tensor per process: here one) with each process's ``tensor``."""
    _check_tensor("all_gather", tensor)
    if len(tensor_list) != 1:
        raise ValueError(f"all_gather(): tensor_list must hold world_size (1) tensors, got {len(tensor_list)}")
    tensor_list[0].copy_(tensor)
    return _done(async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None, group: Any | None = None,
           async_op: bool = False, group_dst: int | None = None):
    _check_tensor("gather", tensor)
    if gather_list is not None:
        all_gather(gather_list, tensor)
    return _done(async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: Any | None = None, async_op: bool = False, group_src: int | None = None):
    _check_tensor("scatter", tensor)
    if scatter_list is not None:
        if len(scatter_list) != 1:
            raise ValueError(f"scatter(): scatter_list must hold world_size (1) tensors, got {len(scatter_list)}")
        tensor.copy_(scatter_list[0])
    return _done(async_op)


def all_gather_object(object_list: list, obj: Any, group: Any | None = None) -> None:
    _default_group()
    object_list[0] = obj


def broadcast_object_list(object_list: list, src: int | None = None, group: Any | None = None, device=None,
                          group_src: int | None = None) -> None:
    _default_group()
