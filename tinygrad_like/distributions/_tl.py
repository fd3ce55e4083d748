"""The namespace the distribution modules compute with: ``tl.<name>`` is ``tinygrad_like.<name>``, plus the few
functions the core lacks (special functions, a differentiable Cholesky factor, NumPy's samplers: see
:mod:`._special`) under torch's names.

The distribution modules follow PyTorch's ``torch.distributions`` (BSD-3-Clause, Copyright (c) Meta Platforms, Inc.
and affiliates) formula for formula, so that values, shapes, constraints and errors agree with torch's; they write
``tl.x`` where torch's write ``torch.x``.
"""

from __future__ import annotations

import math
import types
from numbers import Number
from typing import Any

import numpy as np

from ..compat import Size
from ..creation import arange, eye, tensor
from ..dtypes import finfo as _finfo
from ..dtypes import get_default_dtype
from ..layout import broadcast_shapes
from ..ops.linalg import _vector_norm as _norm
from ..tensor import Tensor
from . import _special

inf, nan = math.inf, math.nan
_Number = int | float | bool
_size = Size | list | tuple
_dtype = Any
Device = Any
SymInt = int
contiguous_format = None  # (every tensor here is contiguous-or-strided; the argument is accepted and ignored)

# the special functions and samplers the core lacks
lgamma, digamma, polygamma, mvlgamma, erfinv = (_special.lgamma, _special.digamma, _special.polygamma,
                                                _special.mvlgamma, _special.erfinv)
poisson, binomial, _standard_gamma = _special.poisson, _special.binomial, _special.standard_gamma


def _is_all_true(t: Tensor) -> Tensor:
    return t.all()


def _get_tracing_state() -> bool:
    return False  # (no tracer: every program runs eagerly)


def _infer_size(a, b) -> Size:
    return Size(broadcast_shapes(a, b))


_C = types.SimpleNamespace(_get_tracing_state=_get_tracing_state, _infer_size=_infer_size)
jit = types.SimpleNamespace(script_if_tracing=lambda fn: fn, is_scripting=lambda: False)


def _linalg_cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    """(L, info): info is 0 where A is positive-definite, else the order of the leading minor that is not."""

    host = _special._host(A)
    flat = host.reshape(-1, *host.shape[-2:])
    infos, factors = [], []
    for m in flat:
        try:
            factors.append(np.linalg.cholesky(m))
            infos.append(0)
        except np.linalg.LinAlgError:
            factors.append(np.zeros_like(m))
            infos.append(1)
    L = np.stack(factors).reshape(host.shape) if flat.size else host
    return types.SimpleNamespace(L=tensor(L, dtype=A.dtype), info=tensor(infos).reshape(host.shape[:-2]))


def _eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:

    return tensor(np.linalg.eigvalsh(_special._host(A), UPLO=UPLO), dtype=A.dtype)


def _cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """X with (L L^T) X = B."""
    if upper:
        L = L.mT
    return _special.solve_triangular(L.mT, _special.solve_triangular(L, B, upper=False), upper=True)


def _cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    return _cholesky_solve(eye(L.shape[-1], dtype=L.dtype).expand(L.shape), L, upper)


def _slogdet(A: Tensor):
    L = _special.cholesky(A)
    logabsdet = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return types.SimpleNamespace(sign=logabsdet.new_ones(logabsdet.shape), logabsdet=logabsdet)


def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    return _norm(x, ord, dim, keepdim, dtype=dtype)


linalg = types.SimpleNamespace(cholesky=_special.cholesky, cholesky_ex=_linalg_cholesky_ex,
                               solve_triangular=_special.solve_triangular, eigvalsh=_eigvalsh, slogdet=_slogdet,
                               norm=lambda x, *a, **k: _root().linalg.norm(x, *a, **k))
cholesky_solve, cholesky_inverse = _cholesky_solve, _cholesky_inverse


def _root():
    import tinygrad_like  # (the finished package, looked up on use: it imports this package at its end)
    return tinygrad_like


def finfo(dtype=None):
    return _finfo(dtype or get_default_dtype())


def range(start, end, step=1, *, dtype=None, device=None):  # noqa: A001 - torch's (deprecated) name
    return arange(start, end + step / 2, step, dtype=dtype, device=device)


def _special_ns():
    root = _root()

    def expm1(x):
        return x.expm1()

    def xlogy(x, y):
        return root.xlogy(x, y)

    return types.SimpleNamespace(gammainc=_special.gammainc, expm1=expm1, xlogy=xlogy)


def __getattr__(name: str):
    """Everything else is tinygrad_like's own (``tl.where``, ``tl.Size``, ``tl.distributions``...)."""
    if name == "special":
        return _special_ns()
    if name == "Number":
        return Number
    return getattr(_root(), name)
