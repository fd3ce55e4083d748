"""``torch.distributed.constants``: the default timeouts of a process group."""

from datetime import timedelta

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

default_pg_timeout = timedelta(minutes=30)  # (torch's default for every backend)
default_pg_nccl_timeout = None  # (torch sets it only in a build with NCCL; its CPU build, the one followed, has None)
