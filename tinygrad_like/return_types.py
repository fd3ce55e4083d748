"""The named tuples ops return, as ``torch.return_types``: ``values, indices = x.topk(3)`` or ``x.max(0).indices``.

>>> import tinygrad_like as tl
>>> r = tl.tensor([3.0, 1.0, 2.0]).topk(2)
>>> isinstance(r, tl.return_types.topk), r.indices.tolist()
(True, [0, 2])
"""

from __future__ import annotations

from .ops.decompositions import geqrf_result as geqrf
from .ops.decompositions import linalg_eig_result as linalg_eig
from .ops.decompositions import linalg_eigh_result as linalg_eigh
from .ops.decompositions import linalg_lstsq_result as linalg_lstsq
from .ops.decompositions import linalg_qr_result as linalg_qr
from .ops.decompositions import qr_result as qr
from .ops.linalg import linalg_svd_result as linalg_svd
from .ops.linalg import svd_result as svd
from .ops.reduce import _AMINMAX_RESULT as aminmax
from .ops.reduce import _MAX_RESULT as max  # noqa: A004 - torch's names
from .ops.reduce import _MIN_RESULT as min  # noqa: A004
from .ops.scans import cummax_result as cummax
from .ops.scans import cummin_result as cummin
from .ops.solvers import linalg_cholesky_ex_result as linalg_cholesky_ex
from .ops.solvers import linalg_inv_ex_result as linalg_inv_ex
from .ops.solvers import linalg_ldl_factor_ex_result as linalg_ldl_factor_ex
from .ops.solvers import linalg_ldl_factor_result as linalg_ldl_factor
from .ops.solvers import linalg_lu_factor_ex_result as linalg_lu_factor_ex
from .ops.solvers import linalg_lu_factor_result as linalg_lu_factor
from .ops.solvers import linalg_lu_result as linalg_lu
from .ops.solvers import linalg_slogdet_result as linalg_slogdet
from .ops.solvers import linalg_solve_ex_result as linalg_solve_ex
from .ops.solvers import lu_unpack_result as lu_unpack
from .ops.solvers import slogdet_result as slogdet
from .ops.solvers import triangular_solve_result as triangular_solve
from .ops.sorting import kthvalue_result as kthvalue
from .ops.sorting import median_result as median
from .ops.sorting import mode_result as mode
from .ops.sorting import nanmedian_result as nanmedian
from .ops.sorting import sort_result as sort
from .ops.sorting import topk_result as topk
from .ops.statistics import histogram_result as histogram

__all__ = ["max", "min", "topk", "sort", "kthvalue", "median", "nanmedian", "mode", "cummax", "cummin", "histogram",
           "linalg_svd", "svd", "aminmax", "geqrf", "linalg_eig", "linalg_eigh", "linalg_lstsq", "linalg_qr", "qr",
           "linalg_cholesky_ex", "linalg_inv_ex", "linalg_ldl_factor", "linalg_ldl_factor_ex", "linalg_lu",
           "linalg_lu_factor", "linalg_lu_factor_ex", "linalg_slogdet", "linalg_solve_ex", "lu_unpack", "slogdet",
           "triangular_solve"]
