"""Tensor methods: sampling, sorting, order statistics, products, scans, nan-aware reductions."""

from __future__ import annotations


class SortingMixin:
    """Tensor methods: sampling, sorting, order statistics, products, scans, nan-aware reductions."""

    __slots__ = ()
