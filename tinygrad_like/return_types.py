"""The named tuples ops return, as ``torch.return_types``: ``values, indices = x.topk(3)`` or ``x.max(0).indices``.

>>> import tinygrad_like as tl
>>> r = tl.tensor([3.0, 1.0, 2.0]).topk(2)
>>> isinstance(r, tl.return_types.topk), r.indices.tolist()
(True, [0, 2])
"""

from __future__ import annotations

from .ops.linalg import linalg_svd_result as linalg_svd
from .ops.linalg import svd_result as svd
from .ops.reduce import _AMINMAX_RESULT as aminmax
from .ops.reduce import _MAX_RESULT as max  # noqa: A004 - torch's names
from .ops.reduce import _MIN_RESULT as min  # noqa: A004
from .ops.scans import cummax_result as cummax
from .ops.scans import cummin_result as cummin
from .ops.sorting import kthvalue_result as kthvalue
from .ops.sorting import median_result as median
from .ops.sorting import mode_result as mode
from .ops.sorting import nanmedian_result as nanmedian
from .ops.sorting import sort_result as sort
from .ops.sorting import topk_result as topk
from .ops.statistics import histogram_result as histogram

__all__ = ["max", "min", "topk", "sort", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin", "histogram",
           "linalg_svd", "svd", "aminmax"]
