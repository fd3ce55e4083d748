"""``tl.cuda.graphs`` (``torch.cuda.CUDAGraph`` and its helpers): names only, each a clear error.

A CUDA graph records a stream's kernel launches once and replays them; our CUDA backend launches each op eagerly
(which is what the views show) and keeps no capture stream. ``is_current_stream_capturing()`` is False.
"""

from __future__ import annotations

from ..unsupported import unsupported_class, unsupported_function
from .streams import is_current_stream_capturing

__all__ = ["is_current_stream_capturing", "graph_pool_handle", "CUDAGraph", "graph", "make_graphed_callables"]

GRAPHS = ("CUDA graphs record a stream's kernel launches to replay them; tinygrad_like's CUDA backend launches each "
          "op eagerly and keeps no capture stream, so run the function itself")

CUDAGraph = unsupported_class("torch.cuda.graphs.CUDAGraph", GRAPHS)
graph = unsupported_class("torch.cuda.graphs.graph", GRAPHS)
graph_pool_handle = unsupported_function("torch.cuda.graphs.graph_pool_handle", GRAPHS)
make_graphed_callables = unsupported_function("torch.cuda.graphs.make_graphed_callables", GRAPHS)
