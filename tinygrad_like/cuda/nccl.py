"""``tl.cuda.nccl``: bindings to NVIDIA's NCCL, the collectives between GPUs, which tinygrad_like does not have: it
drives at most one GPU from one process. ``is_available(tensors)`` is False; the collectives are clear errors (a
program's collectives over processes go through ``torch.distributed``, which works for a world of one)."""

from __future__ import annotations

from typing import Any

from ..unsupported import unsupported_function
from ._base import with_params

__all__ = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"]

SUM = 0  # (NCCL's reduction codes, as torch.cuda.nccl names them)

NCCL = ("NCCL runs collectives between several GPUs; tinygrad_like drives at most one GPU from one process, so "
        "there is nothing to exchange (use torch.distributed, which works for a world of one)")


def is_available(tensors: Any) -> bool:
    """False: there is no NCCL here."""
    return False


version = with_params(unsupported_function("torch.cuda.nccl.version", NCCL), lambda: None)
unique_id = with_params(unsupported_function("torch.cuda.nccl.unique_id", NCCL), lambda: None)
init_rank = with_params(unsupported_function("torch.cuda.nccl.init_rank", NCCL), lambda num_ranks, uid, rank: None)
all_reduce = with_params(unsupported_function("torch.cuda.nccl.all_reduce", NCCL),
                         lambda inputs, outputs=None, op=SUM, streams=None, comms=None: None)
reduce = with_params(unsupported_function("torch.cuda.nccl.reduce", NCCL),
                     lambda inputs, output=None, root=0, op=SUM, streams=None, comms=None, *, outputs=None: None)
broadcast = with_params(unsupported_function("torch.cuda.nccl.broadcast", NCCL),
                        lambda inputs, root=0, streams=None, comms=None: None)
all_gather = with_params(unsupported_function("torch.cuda.nccl.all_gather", NCCL),
                         lambda inputs, outputs, streams=None, comms=None: None)
reduce_scatter = with_params(unsupported_function("torch.cuda.nccl.reduce_scatter", NCCL),
                             lambda inputs, outputs, op=SUM, streams=None, comms=None: None)
