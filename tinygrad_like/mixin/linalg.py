"""Tensor methods: mm/bmm/addmm, outer/dot, einsum, norms, distances, diagonals."""

from __future__ import annotations


class LinalgMixin:
    """Tensor methods: mm/bmm/addmm, outer/dot, einsum, norms, distances, diagonals."""

    __slots__ = ()
