"""The named tuples ops return, as ``torch.return_types``: ``values, indices = x.topk(3)`` or ``x.max(0).indices``.

>>> import tinygrad_like as tl
>>> r = tl.tensor([3.0, 1.0, 2.0]).topk(2)
>>> isinstance(r, tl.return_types.topk), r.indices.tolist()
(True, [0, 2])
"""

from __future__ import annotations

from .mixin.linalg import linalg_svd_result as linalg_svd
from .mixin.linalg import svd_result as svd
from .mixin.sorting import RETURN_TYPES
from .ops.reduce import _AMINMAX_RESULT as aminmax
from .ops.reduce import _MAX_RESULT as max  # noqa: A004 - torch's names
from .ops.reduce import _MIN_RESULT as min  # noqa: A004

topk = RETURN_TYPES["topk"]
sort = RETURN_TYPES["sort"]
kthvalue = RETURN_TYPES["kthvalue"]
median = RETURN_TYPES["median"]
nanmedian = RETURN_TYPES["nanmedian"]
mode = RETURN_TYPES["mode"]
cummax = RETURN_TYPES["cummax"]
cummin = RETURN_TYPES["cummin"]
histogram = RETURN_TYPES["histogram"]

__all__ = ["max", "min", "topk", "sort", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin", "histogram",
           "linalg_svd", "svd", "aminmax"]
