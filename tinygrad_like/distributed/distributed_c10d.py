"""``torch.distributed``'s process groups and collectives for a world of one process.

``init_process_group`` reads the rank and world size as torch does (its arguments, or the ``RANK``, ``WORLD_SIZE``,
``MASTER_ADDR`` and ``MASTER_PORT`` environment variables that ``torchrun`` sets for the default ``env://``) and
accepts a world of size 1; a larger world is refused, since tinygrad_like runs in one process. The collectives then
do what torch's gloo backend does among one process: reductions and broadcasts leave the tensor as it is, gathers and
scatters copy the one rank's tensor, objects travel through pickle (so each receiver gets a copy). Sending to oneself
fails as in torch. Any backend name torch knows is accepted (``"gloo"``, ``"nccl"``...): one process needs no
transport.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import os
import pickle
import sys
import warnings
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlparse

from ..tensor import Tensor
from ..unsupported import DISTRIBUTED, unsupported_class, unsupported_function
from .constants import default_pg_timeout

__all__ = [
    "is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank", "get_world_size",
    "get_backend", "barrier", "monitored_barrier", "all_reduce", "all_reduce_coalesced", "reduce", "broadcast",
    "all_gather", "all_gather_coalesced", "all_gather_into_tensor", "all_gather_single", "gather", "scatter",
    "reduce_scatter", "reduce_scatter_tensor", "reduce_scatter_single", "all_to_all", "all_to_all_single",
    "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list", "send_object_list",
    "recv_object_list", "send", "recv", "isend", "irecv", "batch_isend_irecv", "P2POp", "ReduceOp", "reduce_op",
    "Work", "Future", "ProcessGroup", "Backend", "BackendConfig", "GroupMember", "group", "new_group", "new_subgroups",
    "new_subgroups_by_enumeration", "split_group", "shrink_group", "get_process_group_ranks", "get_group_rank",
    "get_global_rank", "get_pg_count", "get_node_local_rank", "get_backend_config", "get_default_backend_for_device",
    "is_backend_available", "is_gloo_available", "is_nccl_available", "is_mpi_available", "is_ucc_available",
    "is_xccl_available", "is_torchelastic_launched", "supports_complex", "DebugLevel", "get_debug_level",
    "set_debug_level", "set_debug_level_from_env", "record_comm", "breakpoint", "DistError", "DistBackendError",
    "DistNetworkError", "DistStoreError", "QueueEmptyError", "BuiltinCommHookType", "AllreduceOptions",
    "AllreduceCoalescedOptions", "AllToAllOptions", "BarrierOptions", "BroadcastOptions", "GatherOptions",
    "ReduceOptions", "ReduceScatterOptions", "ScatterOptions", "Reducer", "Logger", "GradBucket", "ProcessGroupGloo",
    "TCPStore", "FileStore", "rendezvous", "register_rendezvous_handler", "default_pg_timeout",
]

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."
_SELF_SEND = ("a process cannot send to or receive from itself, and in a world of one process (tinygrad_like's "
              "torch.distributed) rank 0 has no other peer (torch's gloo fails alike: 'Pair is not connected')")


# --- errors (torch's hierarchy: DistError is a RuntimeError) ---

class DistError(RuntimeError):
    """An error of torch.distributed."""


class DistBackendError(DistError):
    """An error of a communication backend."""


class DistNetworkError(DistError):
    """A network error."""


class DistStoreError(DistError):
    """An error of a key-value store (a key that never came, a timeout)."""


class QueueEmptyError(DistStoreError):
    """A store's queue had nothing to pop."""


# --- reductions, backends, options ---

class _RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


_RedOpType.__name__ = "RedOpType"
_RedOpType.__qualname__ = "ReduceOp.RedOpType"


class ReduceOp:
    """The reductions a collective can apply; ``ReduceOp.SUM`` ... are members of ``ReduceOp.RedOpType`` as in torch
    (in a world of one, each leaves the tensor as it is)."""

    RedOpType = _RedOpType
    SUM = _RedOpType.SUM
    AVG = _RedOpType.AVG
    PRODUCT = _RedOpType.PRODUCT
    MIN = _RedOpType.MIN
    MAX = _RedOpType.MAX
    BAND = _RedOpType.BAND
    BOR = _RedOpType.BOR
    BXOR = _RedOpType.BXOR
    PREMUL_SUM = _RedOpType.PREMUL_SUM
    UNUSED = _RedOpType.UNUSED

    def __init__(self, op: _RedOpType = _RedOpType.SUM):
        self.op = _RedOpType(op)

    def __eq__(self, other: object) -> bool:
        return self.op == (other.op if isinstance(other, ReduceOp) else other)

    def __hash__(self) -> int:
        return hash(self.op)


class _DeprecatedReduceOp:
    """``torch.distributed.reduce_op``: the old name of :class:`ReduceOp`, which warns on use."""

    def __getattr__(self, name: str) -> Any:
        warnings.warn("torch.distributed.reduce_op is deprecated, please use torch.distributed.ReduceOp instead",
                      FutureWarning, stacklevel=2)
        return getattr(ReduceOp, name)


reduce_op = _DeprecatedReduceOp()


def supports_complex(reduceOp: ReduceOp) -> bool:  # noqa: N803 - (torch's parameter name)
    """Whether a reduction is defined on complex tensors (not MAX, MIN, PRODUCT, BAND, BOR, BXOR), as torch says."""
    op = reduceOp.op if isinstance(reduceOp, ReduceOp) else reduceOp
    return op not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


class Backend(str):
    """A backend's name: ``Backend("GLOO") == "gloo"``; an unknown name is kept lowercased, as torch does."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    default_device_backend_map: dict[str, str] = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}
    backend_capability: dict[str, list[str]] = {GLOO: ["cpu", "cuda"], NCCL: ["cuda"], XCCL: ["xpu"],
                                                UCC: ["cpu", "cuda"], MPI: ["cpu", "cuda"], FAKE: ["cpu", "cuda"]}
    backend_type_map: dict[str, int] = {UNDEFINED: 0, GLOO: 1, NCCL: 2, UCC: 3, MPI: 4, XCCL: 5, FAKE: 6}

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {type(name).__name__}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        return str.__new__(cls, value if value != Backend.UNDEFINED else name.lower())

    @classmethod
    def register_backend(cls, name, func, extended_api: bool = False, devices: str | list[str] | None = None
                         ) -> None:
        """Register a third-party backend by name (one process never calls ``func``: it needs no transport)."""
        if hasattr(Backend, name.upper()):
            raise ValueError(f"{name.upper()} c10d backend already exist")
        setattr(Backend, name.upper(), name.lower())
        Backend.backend_list.append(name.lower())
        devices = [devices] if isinstance(devices, str) else devices or ["cpu", "cuda"]
        Backend.backend_capability[name.lower()] = list(devices)
        for device in devices:
            Backend.default_device_backend_map.setdefault(device, name.lower())


class BackendConfig:
    """Which backend serves which device: ``"cpu:gloo,cuda:nccl"``."""

    def __init__(self, backend: Backend):
        name = str(backend).lower()
        if name in ("", Backend.UNDEFINED):
            self.device_backend_map = {"cpu": Backend.GLOO, "cuda": Backend.NCCL}
        elif ":" in name:
            self.device_backend_map = {}
            for part in name.split(","):
                device, _, value = part.partition(":")
                self.device_backend_map[device.strip()] = Backend(value.strip())
        elif name in Backend.backend_capability:
            self.device_backend_map = {device: Backend(name) for device in Backend.backend_capability[name]}
        else:
            self.device_backend_map = {"cpu": Backend(name), "cuda": Backend(name)}

    def get_device_backend_map(self) -> dict[str, str]:
        return self.device_backend_map

    def __repr__(self) -> str:
        return ",".join(f"{device}:{backend}" for device, backend in self.device_backend_map.items())


class BuiltinCommHookType(enum.Enum):
    """DDP's built-in communication hooks."""

    ALLREDUCE = 1
    FP16_COMPRESS = 2


class DebugLevel(enum.Enum):
    """How much torch.distributed logs (``TORCH_DISTRIBUTED_DEBUG``)."""

    OFF = 0
    INFO = 1
    DETAIL = 2


_debug_level = DebugLevel.OFF


def get_debug_level() -> DebugLevel:
    return _debug_level


def set_debug_level(level: DebugLevel) -> None:
    global _debug_level
    _debug_level = DebugLevel(level)


def set_debug_level_from_env() -> None:
    """Read ``TORCH_DISTRIBUTED_DEBUG`` (OFF, INFO or DETAIL), as torch does."""
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError(f"The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL, got {value!r}")
    set_debug_level(DebugLevel[value])


_NO_TIMEOUT = timedelta(milliseconds=-1)


class _Options:
    """Options of one collective (the backends' C++ structs): plain attributes with torch's defaults."""

    _fields: dict[str, Callable[[], Any]] = {}

    def __init__(self) -> None:
        self.asyncOp = True
        self.timeout = _NO_TIMEOUT
        for name, default in self._fields.items():
            setattr(self, name, default())


class AllreduceOptions(_Options):
    _fields = {"reduceOp": ReduceOp}


class AllreduceCoalescedOptions(AllreduceOptions):
    pass


class AllToAllOptions(_Options):
    pass


class BarrierOptions(_Options):
    _fields = {"device": lambda: None, "device_ids": list}


class BroadcastOptions(_Options):
    _fields = {"rootRank": int, "rootTensor": int}


class GatherOptions(_Options):
    _fields = {"rootRank": int}


class ScatterOptions(GatherOptions):
    pass


class ReduceOptions(_Options):
    _fields = {"reduceOp": ReduceOp, "rootRank": int, "rootTensor": int}


class ReduceScatterOptions(_Options):
    _fields = {"reduceOp": ReduceOp}


# DDP's C++ machinery and the multi-process transports: nothing to do among one process.
Reducer = unsupported_class("torch.distributed.Reducer", DISTRIBUTED)
Logger = unsupported_class("torch.distributed.Logger", DISTRIBUTED)
GradBucket = unsupported_class("torch.distributed.GradBucket", DISTRIBUTED)
ProcessGroupGloo = unsupported_class("torch.distributed.ProcessGroupGloo", DISTRIBUTED)
TCPStore = unsupported_class("torch.distributed.TCPStore", DISTRIBUTED)
FileStore = unsupported_class("torch.distributed.FileStore", DISTRIBUTED)
rendezvous = unsupported_function("torch.distributed.rendezvous", DISTRIBUTED)
register_rendezvous_handler = unsupported_function("torch.distributed.register_rendezvous_handler", DISTRIBUTED)


def with_parameters(fn: Callable, names: str) -> Callable:
    """``fn`` (an unsupported name's ``*args, **kwargs`` function) answering ``inspect.signature`` with torch's
    parameter names (``"url, rank, world_size, **kwargs"``; all but ``*``-marked ones positional-or-keyword)."""
    kinds = {"**": inspect.Parameter.VAR_KEYWORD, "*": inspect.Parameter.VAR_POSITIONAL}
    params, keyword_only = [], False
    for name in (n.strip() for n in names.split(",")):
        stars = name[:len(name) - len(name.lstrip("*"))]
        if name == "*":
            keyword_only = True
            continue
        kind = kinds.get(stars, inspect.Parameter.KEYWORD_ONLY if keyword_only else
                         inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params.append(inspect.Parameter(name.lstrip("*"), kind))
    fn.__signature__ = inspect.Signature(params)
    return fn


with_parameters(rendezvous, "url, rank, world_size, **kwargs")
with_parameters(register_rendezvous_handler, "scheme, handler")


# --- completed work ---

class Future:
    """The result of a completed collective (``Work.get_future()``): ``wait()`` and ``value()`` give it at once."""

    def __init__(self, value: Any = None):
        self._value = value

    def done(self) -> bool:
        return True

    def wait(self) -> Any:
        return self._value

    def value(self) -> Any:
        return self._value

    def then(self, callback: Callable[[Future], Any]) -> Future:
        return Future(callback(self))

    def add_done_callback(self, callback: Callable[[Future], None]) -> None:
        callback(self)

    def set_result(self, result: Any) -> None:
        self._value = result


class Work:
    """What a collective called with ``async_op=True`` returns: already complete (there is no one to wait for)."""

    def __init__(self, result: list[Tensor] | None = None):
        self._result = result or []

    def wait(self, timeout: timedelta | None = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True

    def exception(self) -> None:
        return None

    def synchronize(self) -> None:
        return None

    def result(self) -> list[Tensor]:
        return self._result

    def source_rank(self) -> int:
        return 0

    def get_future(self) -> Future:
        return Future(self._result)

    def get_future_result(self) -> Future:
        return Future(None)


# --- process groups ---

class ProcessGroup:
    """A group of ranks of the world of one: its only member is rank 0."""

    def __init__(self, backend: str, name: str, desc: str):
        self._backend = backend
        self.group_name = name
        self.group_desc = desc
        self.bound_device_id = None

    def rank(self) -> int:
        return 0

    def size(self) -> int:
        return 1

    def name(self) -> str:
        return BackendConfig(Backend(self._backend)).get_device_backend_map().get("cpu", self._backend)

    def __repr__(self) -> str:
        return f"<ProcessGroup {self.group_name!r} of rank 0 in a world of 1 ({self._backend})>"


_world: dict[str, Any] = {"default": None, "groups": []}  # the default group, then every group made since


class _WorldMeta(type):
    @property
    def WORLD(cls) -> ProcessGroup | None:  # noqa: N802 - (torch's name)
        return _world["default"]


class group(metaclass=_WorldMeta):  # noqa: N801 - (torch's name)
    """``group.WORLD``: the default process group (None before :func:`init_process_group`)."""


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD`` (the default group) and ``GroupMember.NON_GROUP_MEMBER`` (-100), as torch has them."""

    NON_GROUP_MEMBER = -100


def _default_group() -> ProcessGroup:
    if _world["default"] is None:
        raise ValueError(_NOT_INITIALIZED)
    return _world["default"]


def _group(group: ProcessGroup | None) -> ProcessGroup:
    default = _default_group()
    if group is None:
        return default
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup (from new_group) or None, got {type(group).__name__}")
    if group not in _world["groups"]:
        raise ValueError("Invalid process group specified: it was destroyed, or made before the default group was")
    return group


def _rank_in(group: ProcessGroup | None, rank: int | None, what: str, required: bool = False) -> None:
    _group(group)
    if rank is None and required:  # (torch's reduce, broadcast, send and isend have no default peer)
        raise ValueError("Must specify global_rank or group_rank")
    if rank not in (None, 0):
        raise ValueError(f"{what} rank {rank} is not part of the group: in a world of one process the only rank is 0")


# --- availability ---

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


def is_ucc_available() -> bool:
    return False


def is_xccl_available() -> bool:
    return False


def is_backend_available(backend: str) -> bool:
    """Whether torch's CPU build has ``backend``: gloo, and any backend registered with ``Backend.register_backend``."""
    name = str(backend)  # (a name, not a compute backend, which the backend-protocol test reads attribute calls of)
    if name.lower() in (Backend.GLOO,):
        return True
    return hasattr(Backend, name.upper()) and name.lower() not in Backend.backend_type_map


def is_torchelastic_launched() -> bool:
    """True when run by ``torchrun`` (which sets ``TORCHELASTIC_RUN_ID``), as torch decides it."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has run (and :func:`destroy_process_group` has not since)."""
    return _world["default"] is not None


_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


def get_default_backend_for_device(device: Any) -> str:
    """The backend torch picks for a device type (``"cpu"`` -> gloo, ``"cuda"`` -> nccl)."""
    kind = str(getattr(device, "type", device)).split(":")[0]
    if kind not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{kind}")
    if kind not in Backend.default_device_backend_map:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return Backend.default_device_backend_map[kind]


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """``LOCAL_RANK`` (set by torchrun), else ``fallback_rank``; raises RuntimeError without either, as torch."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context and "
                       "want the code to run locally instead.")


# --- the default group ---

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
    if _world["default"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    for part in (backend or "gloo").lower().split(","):  # ("gloo", "nccl", or "cpu:gloo,cuda:nccl")
        name = part.rpartition(":")[2]
        if name not in Backend.backend_list or name == Backend.UNDEFINED:
            raise AssertionError(f"Unknown backend type {part!r}: expected one of {Backend.backend_list[1:]}")
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
    default = ProcessGroup((backend or "gloo").lower(), group_name or "0", "default_pg")
    _world["default"], _world["groups"] = default, [default]


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Undo :func:`init_process_group` (``group`` None or the default group), or forget one group of new_group's."""
    if _world["default"] is None:
        raise AssertionError("Process group cannot be None: destroy_process_group() was called before "
                             "init_process_group() (or twice)")
    if group is None or group is _world["default"]:
        _world["default"], _world["groups"] = None, []
    elif group in _world["groups"]:
        _world["groups"].remove(group)
    else:
        raise ValueError("Invalid process group specified")


def get_rank(group: ProcessGroup | None = None) -> int:
    return _group(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    return _group(group).size()


def get_backend(group: ProcessGroup | None = None) -> str:
    return str(Backend(_group(group)._backend))  # (a plain str, as torch returns)


def get_backend_config(group: ProcessGroup | None = None) -> str:
    """``"cpu:gloo,cuda:gloo"`` and alike: the device-to-backend map of the group's backend, as torch prints it."""
    return repr(BackendConfig(Backend(_group(group)._backend)))


def get_pg_count() -> int:
    """How many process groups exist (the default one and new_group's); 0 before init, as torch."""
    return len(_world["groups"])


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    _group(group)
    return [0]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    if _group(group) is _world["default"]:
        return global_rank  # (torch answers the world group without looking: a global rank is its own group rank)
    if global_rank != 0:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return 0


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    if _group(group) is _world["default"]:
        return group_rank  # (as get_group_rank)
    if group_rank != 0:
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return 0


def _make_group(ranks: list[int] | None, backend: str | None, desc: str | None) -> ProcessGroup:
    default = _default_group()
    ranks = [0] if ranks is None else list(ranks)
    if len(ranks) > 1:
        raise ValueError("the new group's world size should be less or equal to the world size set by "
                         "init_process_group")
    if any(r != 0 for r in ranks):
        raise ValueError(f"Rank {[r for r in ranks if r != 0][0]} is out of range. Valid ranks are 0 to 0 "
                         f"(world_size=1)")
    made = ProcessGroup((backend or default._backend).lower(), str(len(_world["groups"])), desc or "undefined")
    _world["groups"].append(made)
    return made


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization: bool = False,
              group_desc=None, device_id=None, sort_ranks: bool = True):
    """A process group of ``ranks`` (of the world of one: ``[0]`` or all)."""
    return _make_group(ranks, backend, group_desc)


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """Split the world into groups of ``group_size`` ranks: one group of 1; returns (this rank's, all of them)."""
    _default_group()
    if group_size is None:  # (torch's default is the number of CUDA devices; its CPU build says so)
        raise ValueError("Default group size only takes effect when CUDA is available.If your subgroup using a "
                         "backend that does not depend on CUDA,please pass in 'group_size' correctly.")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if group_size > 1:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size (1)")
    made = _make_group([0], backend, group_desc)
    return made, [made]


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """One group per list of ranks; returns (the group holding this rank, all of them)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    groups = [_make_group(ranks, backend, group_desc) for ranks in ranks_per_subgroup_list]
    mine = [g for g, ranks in zip(groups, ranks_per_subgroup_list, strict=True) if 0 in ranks]
    return (mine[0] if mine else None), groups


def split_group(parent_pg: ProcessGroup | None = None, split_ranks: list | None = None,
                timeout: timedelta | None = None, pg_options: Any | None = None, group_desc: str | None = None,
                backend: str | Backend | None = None) -> ProcessGroup | None:
    """Split ``parent_pg`` into groups of ``split_ranks``; returns the one holding this rank (None if none does)."""
    _group(parent_pg)
    if split_ranks is None or len(split_ranks) == 0:
        raise ValueError("split_ranks cannot be None or empty")
    mine = [ranks for ranks in split_ranks if 0 in ranks]
    return _make_group(mine[0], backend, group_desc) if mine else None


def shrink_group(ranks_to_exclude: list[int], group: ProcessGroup | None = None, shrink_flags: int = 0,
                 pg_options: Any | None = None) -> ProcessGroup:
    """A group without ``ranks_to_exclude``: excluding rank 0 would leave nobody, which torch refuses too."""
    source = _group(group)
    if not ranks_to_exclude:
        raise ValueError("ranks_to_exclude cannot be empty")
    if 0 in ranks_to_exclude:
        raise ValueError("Cannot exclude all ranks: rank 0 is the whole world of one process")
    raise ValueError(f"ranks_to_exclude {ranks_to_exclude} are not in the group {source}: its only rank is 0")


# --- collectives ---

def _done(async_op: bool, result: list[Tensor] | None = None) -> Work | None:
    return Work(result) if async_op else None


def _check_tensor(fn: str, tensor: Any, group: ProcessGroup | None = None) -> None:
    _group(group)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}() expects a tensor, got {type(tensor).__name__}")


def _check_op(op: Any, group: ProcessGroup | None) -> None:
    if op is ReduceOp.PREMUL_SUM:  # (torch takes it only as a ReduceOp carrying its factor)
        raise TypeError("ReduceOp.PREMUL_SUM needs its scale factor: it is a ReduceOp made by torch's "
                        "_make_nccl_premul_sum, not the bare ReduceOp.PREMUL_SUM")
    if isinstance(op, ReduceOp) and op.op == ReduceOp.PREMUL_SUM and _group(group)._backend == Backend.GLOO:
        raise RuntimeError("Cannot use ReduceOp.PREMUL_SUM with Gloo")


def _one_per_rank(fn: str, tensors: list, what: str) -> None:
    if len(tensors) != 1:
        raise ValueError(f"{fn}(): {what} must hold world_size (1) tensors, got {len(tensors)}")


def _copy_whole(fn: str, output: Tensor, source: Tensor) -> None:
    """``output`` takes ``source``'s elements in order (one rank's share is the whole tensor)."""
    if output.numel() != source.numel():
        raise RuntimeError(f"{fn}(): output has {output.numel()} elements, but a world of 1 gives it the input's "
                           f"{source.numel()} (output shape {tuple(output.shape)}, input {tuple(source.shape)})")
    output.copy_(source.reshape(tuple(output.shape)))


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids=None,
            timeout: timedelta | None = None):
    """Wait for every process: there is only this one."""
    _group(group)
    return _done(async_op)


def monitored_barrier(group: ProcessGroup | None = None, timeout=None, wait_all_ranks: bool = False):
    """A barrier that names the ranks that did not arrive: every rank (this one) has."""
    _group(group)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` across the world, in place: among one process it keeps its values, whatever ``op``."""
    _check_tensor("all_reduce", tensor, group)
    _check_op(op, group)
    return _done(async_op, [tensor])


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op: bool = False):
    for tensor in [tensors] if isinstance(tensors, Tensor) else tensors:
        _check_tensor("all_reduce_coalesced", tensor, group)
    _check_op(op, group)
    return _done(async_op, list(tensors) if not isinstance(tensors, Tensor) else [tensors])


def reduce(tensor: Tensor, dst: int | None = None, op=ReduceOp.SUM, group: ProcessGroup | None = None,
           async_op: bool = False, group_dst: int | None = None):
    _check_tensor("reduce", tensor, group)
    _rank_in(group, dst if group_dst is None else group_dst, "destination", required=True)
    _check_op(op, group)
    return _done(async_op, [tensor])


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, async_op: bool = False,
              group_src: int | None = None):
    _check_tensor("broadcast", tensor, group)
    _rank_in(group, src if group_src is None else group_src, "source", required=True)
    return _done(async_op, [tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fill ``tensor_list`` (one tensor per process: here one) with each process's ``tensor``."""
    _check_tensor("all_gather", tensor, group)
    _one_per_rank("all_gather", tensor_list, "tensor_list")
    _copy_whole("all_gather", tensor_list[0], tensor)
    return _done(async_op, list(tensor_list))


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op: bool = False):
    """Gather each tensor of ``input_tensor_list`` into ``output_tensor_lists[rank]`` (one rank: the first)."""
    _one_per_rank("all_gather_coalesced", output_tensor_lists, "output_tensor_lists")
    if len(output_tensor_lists[0]) != len(input_tensor_list):
        raise RuntimeError(f"all_gather_coalesced(): {len(input_tensor_list)} inputs, but "
                           f"{len(output_tensor_lists[0])} outputs per rank")
    for output, source in zip(output_tensor_lists[0], input_tensor_list, strict=True):
        _check_tensor("all_gather_coalesced", source, group)
        _copy_whole("all_gather_coalesced", output, source)
    return _done(async_op, list(output_tensor_lists[0]))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """``output_tensor`` (the inputs of every rank concatenated along dim 0: here the input) takes them."""
    _check_tensor("all_gather_into_tensor", input_tensor, group)
    if tuple(output_tensor.shape) != tuple(input_tensor.shape):  # (gloo's rule: no stacked (world, ...) output)
        raise RuntimeError(f"all_gather_into_tensor(): invalid tensor size: expected {tuple(input_tensor.shape)} "
                           f"(world_size 1 times the input's first dimension), got {tuple(output_tensor.shape)}")
    _copy_whole("all_gather_into_tensor", output_tensor, input_tensor)
    return _done(async_op, [output_tensor])


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """The older name of :func:`all_gather_into_tensor`."""
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False, group_dst: int | None = None):
    _check_tensor("gather", tensor, group)
    _rank_in(group, dst if group_dst is None else group_dst, "destination")
    if gather_list is None:  # (this rank is always the destination)
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    _one_per_rank("gather", gather_list, "gather_list")
    _copy_whole("gather", gather_list[0], tensor)
    return _done(async_op, list(gather_list))


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False, group_src: int | None = None):
    _check_tensor("scatter", tensor, group)
    _rank_in(group, src if group_src is None else group_src, "source")
    if not scatter_list:  # (this rank is always the source)
        raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
    _one_per_rank("scatter", scatter_list, "scatter_list")
    _copy_whole("scatter", tensor, scatter_list[0])
    return _done(async_op, [tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce the inputs of every rank, and give rank ``i`` the ``i``-th: here ``output`` takes ``input_list[0]``."""
    _check_tensor("reduce_scatter", output, group)
    _check_op(op, group)
    _one_per_rank("reduce_scatter", input_list, "input_list")
    _copy_whole("reduce_scatter", output, input_list[0])
    return _done(async_op, [output])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):  # noqa: A002 - (torch's)
    """:func:`reduce_scatter` with the inputs as one tensor: here ``output`` takes ``input``."""
    _check_tensor("reduce_scatter_tensor", output, group)
    _check_tensor("reduce_scatter_tensor", input, group)
    _check_op(op, group)
    _copy_whole("reduce_scatter_tensor", output, input)
    return _done(async_op, [output])


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):  # noqa: A002 - (torch's)
    """The older name of :func:`reduce_scatter_tensor`."""
    return reduce_scatter_tensor(output, input, op, group, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """Rank ``i`` sends its ``j``-th input to rank ``j``: here the one output takes the one input."""
    _one_per_rank("all_to_all", output_tensor_list, "output_tensor_list")
    _one_per_rank("all_to_all", input_tensor_list, "input_tensor_list")
    _check_tensor("all_to_all", input_tensor_list[0], group)
    _copy_whole("all_to_all", output_tensor_list[0], input_tensor_list[0])
    return _done(async_op, list(output_tensor_list))


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,  # noqa: A002
                      async_op: bool = False):
    """:func:`all_to_all` on one tensor split along dim 0 (here one split: the whole tensor)."""
    _check_tensor("all_to_all_single", input, group)
    for sizes, what in ((output_split_sizes, output), (input_split_sizes, input)):
        if sizes is not None and len(sizes) and (len(sizes) != 1 or sizes[0] != what.shape[0]):
            raise RuntimeError(f"all_to_all_single(): split sizes {list(sizes)} do not split dim 0 "
                               f"({what.shape[0]}) among 1 rank")
    _copy_whole("all_to_all_single", output, input)
    return _done(async_op, [output])


# --- point to point: a process has no peer in a world of one ---

class P2POp:
    """One send or receive of :func:`batch_isend_irecv`."""

    def __init__(self, op: Callable, tensor: Tensor, peer: int | None = None, group: ProcessGroup | None = None,
                 tag: int = 0, group_peer: int | None = None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, \
            group_peer


def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    _check_tensor("send", tensor, group)
    _rank_in(group, dst if group_dst is None else group_dst, "destination", required=True)
    raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the current "
                     "process.")


def _no_peer(fn: str, tensor: Tensor, group: ProcessGroup | None, peer: int | None, what: str) -> None:
    _check_tensor(fn, tensor, group)
    _rank_in(group, peer, what, required=fn == "isend")
    raise RuntimeError(f"{fn}(): {_SELF_SEND}")


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:
    _no_peer("recv", tensor, group, src if group_src is None else group_src, "source")
    return 0  # (never reached)


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    _no_peer("isend", tensor, group, dst if group_dst is None else group_dst, "destination")
    return None  # (never reached)


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    _no_peer("irecv", tensor, group, src if group_src is None else group_src, "source")
    return None  # (never reached)


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    if not p2p_op_list:  # (torch's type: it looks at the first op)
        raise IndexError("batch_isend_irecv(): p2p_op_list is empty; give it at least one P2POp")
    if not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


# --- objects (pickled, as torch sends them: a receiver gets a copy) ---

def _copy(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj))


def all_gather_object(object_list, obj, group=None):
    _group(group)
    _one_per_rank("all_gather_object", object_list, "object_list")
    object_list[0] = _copy(obj)


def gather_object(obj: Any, object_gather_list: list[Any] | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None):
    _rank_in(group, dst if group_dst is None else group_dst, "destination")
    if object_gather_list is None:
        raise ValueError("Argument ``object_gather_list`` must be specified on destination rank.")
    _one_per_rank("gather_object", object_gather_list, "object_gather_list")
    object_gather_list[0] = _copy(obj)


def broadcast_object_list(object_list: list[Any], src: int | None = None, group: ProcessGroup | None = None,
                          device=None, group_src: int | None = None):
    """The source's list to every rank: this rank is the source, so the list stays as it is (as torch's)."""
    _rank_in(group, src if group_src is None else group_src, "source")


def scatter_object_list(scatter_object_output_list: list[Any], scatter_object_input_list: list[Any] | None = None,
                        src: int | None = None, group: ProcessGroup | None = None, group_src: int | None = None):
    _rank_in(group, src if group_src is None else group_src, "source")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    if scatter_object_input_list is None:
        raise ValueError("source rank must provide non-None scatter_object_input_list")
    _one_per_rank("scatter_object_list", scatter_object_input_list, "scatter_object_input_list")
    scatter_object_output_list[0] = _copy(scatter_object_input_list[0])


def send_object_list(object_list: list[Any], dst: int | None = None, group: ProcessGroup | None = None,
                     device=None, group_dst: int | None = None, use_batch: bool = False):
    _rank_in(group, dst if group_dst is None else group_dst, "destination")
    raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the current "
                     "process.")


def recv_object_list(object_list: list[Any], src: int | None = None, group: ProcessGroup | None = None,
                     device=None, group_src: int | None = None, use_batch: bool = False):
    _rank_in(group, src if group_src is None else group_src, "source")
    raise RuntimeError(f"recv_object_list(): {_SELF_SEND}")


# --- tools ---

@contextlib.contextmanager
def record_comm(name: str) -> Iterator[None]:
    """Name the collectives issued inside (for a profiler's view); there is no trace of them to name here."""
    yield


def breakpoint(rank: int = 0, skip: int = 0, timeout_s=3600):  # noqa: A001 - (torch's name)
    """Stop in pdb on ``rank`` (this process is rank 0), then wait for the others (none)."""
    if skip > 0:
        return
    if get_rank() == rank:
        import pdb  # (waits: only a breakpoint needs the debugger)
        pdb.Pdb().set_trace(sys._getframe(1))
    barrier()
