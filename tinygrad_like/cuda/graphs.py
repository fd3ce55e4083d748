"""``tl.cuda.graphs`` (``torch.cuda.CUDAGraph`` and its helpers): names only, each a clear error.

A CUDA graph records a stream's kernel launches once and replays them; our CUDA backend launches each op eagerly
(which is what the views show) and keeps no capture stream. ``is_current_stream_capturing()`` is False.
"""

from __future__ import annotations

from ..unsupported import unsupported_class, unsupported_function
from ._base import with_params
from .streams import is_current_stream_capturing

__all__ = ["is_current_stream_capturing", "graph_pool_handle", "CUDAGraph", "graph", "make_graphed_callables"]

GRAPHS = ("CUDA graphs record a stream's kernel launches to replay them; tinygrad_like's CUDA backend launches each "
          "op eagerly and keeps no capture stream, so run the function itself")

CUDAGraph = with_params(unsupported_class("torch.cuda.graphs.CUDAGraph", GRAPHS), lambda keep_graph=False: None)
graph = with_params(unsupported_class("torch.cuda.graphs.graph", GRAPHS),
                    lambda cuda_graph, pool=None, stream=None, capture_error_mode="global", enable_annotations=False,
                    check_input_liveness=False: None)
graph_pool_handle = with_params(unsupported_function("torch.cuda.graphs.graph_pool_handle", GRAPHS), lambda: None)
make_graphed_callables = with_params(unsupported_function("torch.cuda.graphs.make_graphed_callables", GRAPHS),
                                     lambda callables, sample_args, num_warmup_iters=3, allow_unused_input=False,
                                     pool=None: None)
